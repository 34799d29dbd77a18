"""Jobs: submit an upload (streamed to scratch, then handed to intake), list and show a
tenant's jobs, cancel one or delete its output early, and an operator's redrive of a dead
letter."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from pressroom import tracing
from pressroom.api.deps import IntakeDep, Operator, ServicesDep, Tenant
from pressroom.api.headers import parse_traceparent, prefer_wait, prefers_async
from pressroom.api.openapi import (
    IDEMPOTENCY_KEY,
    PREFER_WAIT,
    SUBMIT_BODY,
    SUBMIT_HEADERS,
    job,
    json_body,
    problems,
)
from pressroom.api.paging import decode_cursor, encode_cursor, rfc3339
from pressroom.api.responses import job_json, own_base_url
from pressroom.api.uploads import MAX_FORM_OVERHEAD, receive_upload
from pressroom.control import JobControl
from pressroom.errors import Conflict, NotFound, TooLarge
from pressroom.intake import SUBMIT_FIELDS, Intake, Received
from pressroom.jobs.model import JobState, Lane
from pressroom.labels import LABEL_PATTERN, MAX_LABEL, parse_label
from pressroom.scratch import job_scratch
from pressroom.service import Services
from pressroom.web.single import known_query, no_body

log = logging.getLogger("pressroom.api")
PREFER_POLL_S = 0.25
LIST_LIMIT = 50
LIST_MAX = 500
router = APIRouter(tags=["jobs"], dependencies=[Depends(known_query)])


@router.post(
    "/v1/jobs",
    status_code=202,
    response_class=JSONResponse,
    responses={
        **job(202, description="Accepted; poll the job.", headers=SUBMIT_HEADERS),
        **job(
            200,
            description="Finished while the client waited (Prefer: wait).",
            headers=SUBMIT_HEADERS,
        ),
        **problems(400, 401, 408, 413, 415, 422, 429, 503),
    },
    openapi_extra=SUBMIT_BODY,
)
async def submit(
    request: Request,
    who: Tenant,
    intake: IntakeDep,
    services: ServicesDep,
    idempotency_key: Annotated[str | None, Header(**IDEMPOTENCY_KEY)] = None,
    traceparent: Annotated[str | None, Header(description="W3C trace context.")] = None,
    prefer: Annotated[str | None, Header(description=PREFER_WAIT)] = None,
) -> Response:
    """Submit a scan (multipart/form-data, `file` last): answered 202 with the job, or 200
    when it finished within `Prefer: wait`. A field this form does not declare is refused
    400 `BAD_REQUEST` naming it (and the field it resembles: `redaction` → `redact`); no job
    is made."""
    trace_id, incoming_span = parse_traceparent(traceparent)
    with tracing.accept_span(trace_id, incoming_span) as span_id:
        return await _accept(
            request, who, intake, services, idempotency_key, prefer, trace_id, span_id
        )


async def _accept(
    request: Request,
    who: str,
    intake: Intake,
    services: Services,
    idempotency_key: str | None,
    prefer: str | None,
    trace_id: str,
    span_id: str,
) -> Response:
    settings = intake.settings
    declared = request.headers.get("content-length")
    declared_bytes = int(declared) if declared and declared.isdigit() else None
    if declared_bytes is not None and declared_bytes > settings.limits.max_bytes + 65536:
        raise TooLarge(f"the upload exceeds {settings.limits.max_bytes:,} bytes")
    # the least the file can be, whatever the form around it
    least = max(0, (declared_bytes or 0) - MAX_FORM_OVERHEAD)
    ticket = await run_in_threadpool(intake.open, who, idempotency_key, least)
    with job_scratch(settings.scratch_dir) as scratch:
        form = await receive_upload(
            request.headers.get("content-type", ""),
            request.stream(),
            scratch / "upload",
            max_bytes=settings.limits.max_bytes,
            # on the event loop, inside the multipart parser: pure checks only
            before_file=lambda fields: intake.precheck(ticket, fields),
            known=SUBMIT_FIELDS,
            idle_s=settings.body_timeout_s,
            deadline_s=settings.upload_deadline_s,
        )
        assert form.path is not None
        upload = Received(form.fields, form.path, form.size, form.sha256, form.head)
        accepted = await run_in_threadpool(intake.accept, ticket, upload, trace_id, span_id)
    job = accepted.job
    respond_async = prefers_async(prefer)
    wait = None if respond_async else prefer_wait(prefer)
    if wait:
        # RFC 7240: a tiny interactive job may finish while the client waits
        end = time.monotonic() + wait
        while not job.state.terminal and time.monotonic() < end:
            if await request.is_disconnected():
                break
            await asyncio.sleep(min(PREFER_POLL_S, max(0.0, end - time.monotonic())))
            found = await run_in_threadpool(services.store.queue.get, job.id)
            job = found or job
    body = job_json(job, services, own_base_url(request))
    headers = {"Location": f"/v1/jobs/{job.id}"}
    if respond_async:
        headers["Preference-Applied"] = "respond-async"
    elif wait is not None:
        headers["Preference-Applied"] = f"wait={wait:g}"
    if job.state.terminal:
        return JSONResponse(body, status_code=200, headers=headers)
    return JSONResponse(body, status_code=202, headers=headers)


@router.post(
    "/v1/jobs/{job_id}/retry",
    response_model=None,
    responses={**job(200), **problems(401, 403, 404, 409, 503)},
)
async def redrive(
    job_id: str, request: Request, _op: Operator, services: ServicesDep
) -> dict[str, Any]:
    """An operator sends a dead-lettered job round again after fixing its cause."""
    await no_body(request)
    job = await run_in_threadpool(lambda: services.store.queue.get(job_id))
    if job is None:
        raise NotFound("no such job")
    done = await run_in_threadpool(
        lambda: services.store.queue.redrive(job_id, now=services.clock())
    )
    if not done:
        raise Conflict(
            f"only a rejected job whose source is still kept can be retried (it is {job.state})"
        )
    log.info("job redriven", extra={"job_id": job_id, "tenant": job.tenant})
    again = await run_in_threadpool(lambda: services.store.queue.get(job_id))
    assert again is not None
    return job_json(again, services, own_base_url(request))


@router.get(
    "/v1/jobs/{job_id}", response_model=None, responses={**job(200), **problems(401, 404, 503)}
)
async def show(job_id: str, request: Request, who: Tenant, services: ServicesDep) -> dict[str, Any]:
    job = await run_in_threadpool(lambda: services.store.queue.get(job_id, tenant=who))
    if job is None:
        raise NotFound("no such job")
    return job_json(job, services, own_base_url(request))


LIST_PAGE = json_body("JobList", "A page of the caller's jobs, newest first.", 200)
LIST_PAGE[200]["headers"] = {
    "Link": {
        "description": 'The next page, `<URL>; rel="next"`; absent on the last page.',
        "schema": {"type": "string"},
    }
}


@router.get(
    "/v1/jobs",
    response_class=JSONResponse,
    response_model=None,
    responses={
        **LIST_PAGE,
        **problems(400, 401, 503),
    },
)
async def list_jobs(
    request: Request,
    who: Tenant,
    services: ServicesDep,
    limit: Annotated[int, Query(ge=1, le=LIST_MAX, description="jobs per page")] = LIST_LIMIT,
    cursor: Annotated[str | None, Query(description="from the previous page's next")] = None,
    state: Annotated[JobState | None, Query(description="only jobs in this state")] = None,
    lane: Annotated[Lane | None, Query(description="only jobs of this lane")] = None,
    created_after: Annotated[
        str | None,
        Query(
            description="RFC 3339; jobs created at or after it",
            json_schema_extra={"format": "date-time"},
        ),
    ] = None,
    created_before: Annotated[
        str | None,
        Query(
            description="RFC 3339; jobs created before it",
            json_schema_extra={"format": "date-time"},
        ),
    ] = None,
    label: Annotated[
        str | None,
        Query(
            description="only jobs given exactly this label",
            max_length=MAX_LABEL,
            pattern=LABEL_PATTERN,
        ),
    ] = None,
) -> JSONResponse:
    """The caller's jobs, newest first, a page at a time: ``next`` (and a ``Link`` header
    with ``rel="next"``) names the following page, null on the last one."""
    secret = services.signer.secret
    after = decode_cursor(secret, cursor) if cursor is not None else None
    since = rfc3339("created_after", created_after)
    until = rfc3339("created_before", created_before)
    wanted = parse_label(label)
    digest = services.labels.digest(who, wanted) if wanted is not None else None
    # one more than asked: whether a next page exists, without a count
    found = await run_in_threadpool(
        lambda: services.store.queue.list_jobs(
            who,
            limit=limit + 1,
            after=after,
            state=state,
            lane=lane,
            created_after=since,
            created_before=until,
            label_digest=digest,
        )
    )
    page = found[:limit]
    base = own_base_url(request)
    body: dict[str, Any] = {"jobs": [job_json(job, services, base) for job in page], "next": None}
    headers = {}
    if len(found) > limit:
        last = page[-1]
        params = {
            key: value
            for key, value in request.query_params.items()
            if key in ("limit", "state", "lane", "created_after", "created_before", "label")
        }
        params["cursor"] = encode_cursor(secret, last.created_at, last.id)
        body["next"] = f"{base}/v1/jobs?{urlencode(params)}"
        headers["Link"] = f'<{body["next"]}>; rel="next"'
    return JSONResponse(body, headers=headers)


@router.delete(
    "/v1/jobs/{job_id}",
    response_class=JSONResponse,
    response_model=None,
    responses={
        **job(200, description="The job, ended CANCELLED (or as it is now, for a repeat)."),
        **job(202, description="The job, running: it stops before its next page or stage."),
        **problems(401, 404, 409, 503),
    },
)
async def cancel(job_id: str, request: Request, who: Tenant, services: ServicesDep) -> JSONResponse:
    """Cancel a job: 200 with the job ended ``CANCELLED`` (it was waiting or held for
    review), 202 while a running job stops before its next page or stage, 200 with the job as it
    is now for a repeated cancel, 409 for a job that ended otherwise."""
    await no_body(request)
    job, stopping = await run_in_threadpool(JobControl.of(services).cancel, job_id, who)
    log.info("job cancel", extra={"job_id": job_id, "tenant": who, "state": job.state.value})
    return JSONResponse(
        job_json(job, services, own_base_url(request)), status_code=202 if stopping else 200
    )


@router.delete(
    "/v1/jobs/{job_id}/artifact",
    response_model=None,
    responses={**job(200, description="The job, its output gone."), **problems(401, 404, 409, 503)},
)
async def delete_artifact(
    job_id: str, request: Request, who: Tenant, services: ServicesDep
) -> dict[str, Any]:
    """Delete a complete job's output now rather than at the end of retention: the job stays,
    without ``artifact_url``; its links answer 404. 409 when there is no output."""
    await no_body(request)
    job = await run_in_threadpool(JobControl.of(services).delete_artifact, job_id, who)
    log.info("artifact deleted early", extra={"job_id": job_id, "tenant": who})
    return job_json(job, services, own_base_url(request))
