"""A tenant's review queue: jobs held for a human, their held copies and review sheets,
corrections (the desk's, over the API), approve and reject."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from pressroom.api.deps import ReviewCaller, Reviewer, ReviewsDep, ServicesDep
from pressroom.api.openapi import (
    CORRECTIONS_BODY,
    CORRECTIONS_SCHEMA,
    job,
    json_body,
    pdf,
    problems,
)
from pressroom.api.responses import job_json, own_base_url, stream_pdf
from pressroom.corrections import Corrections
from pressroom.errors import NotFound
from pressroom.jobs.model import JobState
from pressroom.web.single import known_query, no_body, read_json, refuse_unknown_keys

router = APIRouter(tags=["review"], dependencies=[Depends(known_query)])


@router.get(
    "/v1/review",
    response_model=None,
    responses={**json_body("JobList", "Jobs held for review."), **problems(401, 503)},
)
async def review_queue(request: Request, who: Reviewer, services: ServicesDep) -> dict[str, Any]:
    """Jobs held for a human: why (codes and counts, never the values), since when."""
    held = await run_in_threadpool(services.store.queue.in_review, who)
    return {"jobs": [job_json(job, services, own_base_url(request)) for job in held]}


@router.get(
    "/v1/jobs/{job_id}/held",
    response_class=Response,
    responses={**pdf("The held copy."), **problems(401, 404, 503)},
)
async def held_copy(job_id: str, who: Reviewer, reviews: ReviewsDep) -> Response:
    """The held output, for the tenant's reviewer (authenticated; no signed link)."""
    handle, size = await run_in_threadpool(reviews.open_held, job_id, who)
    return stream_pdf(handle, size)


@router.post(
    "/v1/jobs/{job_id}/approve",
    response_model=None,
    responses={**job(200), **problems(401, 404, 503)},
)
async def approve(
    job_id: str, request: Request, who: ReviewCaller, reviews: ReviewsDep, services: ServicesDep
) -> dict[str, Any]:
    await no_body(request)
    done = await run_in_threadpool(lambda: reviews.approve(job_id, who.tenant, key_id=who.key_id))
    return job_json(done, services, own_base_url(request))


@router.post(
    "/v1/jobs/{job_id}/reject",
    response_model=None,
    responses={**job(200), **problems(401, 404, 503)},
)
async def reject(
    job_id: str, request: Request, who: ReviewCaller, reviews: ReviewsDep, services: ServicesDep
) -> dict[str, Any]:
    await no_body(request)
    done = await run_in_threadpool(lambda: reviews.reject(job_id, who.tenant, key_id=who.key_id))
    return job_json(done, services, own_base_url(request))


@router.get(
    "/v1/jobs/{job_id}/review-sheet",
    response_model=None,
    responses={
        **json_body("ReviewSheet", "The held redaction's sheet, as the desk has it."),
        **problems(401, 404, 503),
    },
)
async def review_sheet(job_id: str, who: Reviewer, services: ServicesDep) -> dict[str, Any]:
    """Pages (upright size, turn, level, where each lies on its output page), every finding
    (page, class, box in points from the top-left of the upright page, doubt) and the
    corrections applied: no value, no context."""
    job = await run_in_threadpool(lambda: services.store.queue.get(job_id, tenant=who))
    if job is None or job.state is not JobState.REVIEW or job.review_sheet is None:
        raise NotFound("no held redaction with a review sheet for this job")
    return dict(job.review_sheet)


@router.post(
    "/v1/jobs/{job_id}/corrections",
    status_code=202,
    response_model=None,
    responses={**job(202), **problems(400, 401, 404, 409, 503)},
    openapi_extra=CORRECTIONS_BODY,
)
async def corrections(
    job_id: str, request: Request, who: ReviewCaller, reviews: ReviewsDep, services: ServicesDep
) -> dict[str, Any]:
    """A reviewer's whole set of corrections, as the desk sends them (boxes in points from the
    top-left of the upright page): the job is rebuilt with them and held again for approval
    (``CORRECTED`` when every check passes). Judged as the desk judges them; a key given twice
    is refused before this reads the body, a key the schema does not declare as it is read."""
    body = await read_json(request, "corrections")
    refuse_unknown_keys(body, CORRECTIONS_SCHEMA, "corrections")
    fixes = Corrections.parse(body)
    done = await run_in_threadpool(
        lambda: reviews.apply(job_id, who.tenant, fixes, key_id=who.key_id)
    )
    return job_json(done, services, own_base_url(request))
