"""A tenant's review queue: jobs held for a human, their held copies, approve and reject."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from pressroom.api.deps import Caller, ReviewsDep, ServicesDep, Tenant
from pressroom.api.openapi import job, json_body, pdf, problems
from pressroom.api.responses import job_json, own_base_url, stream_pdf

router = APIRouter()


@router.get(
    "/v1/review",
    response_model=None,
    responses={**json_body("JobList", "Jobs held for review."), **problems(401, 503)},
)
async def review_queue(request: Request, who: Tenant, services: ServicesDep) -> dict[str, Any]:
    """Jobs held for a human: why (codes and counts, never the values), since when."""
    held = await run_in_threadpool(services.store.queue.in_review, who)
    return {"jobs": [job_json(job, services, own_base_url(request)) for job in held]}


@router.get(
    "/v1/jobs/{job_id}/held",
    response_class=Response,
    responses={**pdf("The held copy."), **problems(401, 404, 503)},
)
async def held_copy(job_id: str, who: Tenant, reviews: ReviewsDep) -> Response:
    """The held output, for the tenant's reviewer (authenticated; no signed link)."""
    handle, size = await run_in_threadpool(reviews.open_held, job_id, who)
    return stream_pdf(handle, size)


@router.post(
    "/v1/jobs/{job_id}/approve",
    response_model=None,
    responses={**job(200), **problems(401, 404, 503)},
)
async def approve(
    job_id: str, request: Request, who: Caller, reviews: ReviewsDep, services: ServicesDep
) -> dict[str, Any]:
    done = await run_in_threadpool(lambda: reviews.approve(job_id, who.tenant, key_id=who.key_id))
    return job_json(done, services, own_base_url(request))


@router.post(
    "/v1/jobs/{job_id}/reject",
    response_model=None,
    responses={**job(200), **problems(401, 404, 503)},
)
async def reject(
    job_id: str, request: Request, who: Caller, reviews: ReviewsDep, services: ServicesDep
) -> dict[str, Any]:
    done = await run_in_threadpool(lambda: reviews.reject(job_id, who.tenant, key_id=who.key_id))
    return job_json(done, services, own_base_url(request))
