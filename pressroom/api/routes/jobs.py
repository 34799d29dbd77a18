"""Jobs: submit an upload (streamed to scratch, then handed to intake), show one, and an
operator's redrive of a dead letter."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from pressroom import tracing
from pressroom.api.deps import IntakeDep, Operator, ServicesDep, Tenant
from pressroom.api.headers import parse_traceparent, prefer_wait
from pressroom.api.openapi import (
    IDEMPOTENCY_KEY,
    PREFER_WAIT,
    SUBMIT_BODY,
    SUBMIT_HEADERS,
    job,
    problems,
)
from pressroom.api.responses import job_json, own_base_url
from pressroom.api.uploads import MAX_FORM_OVERHEAD, receive_upload
from pressroom.errors import Conflict, NotFound, TooLarge
from pressroom.intake import Intake, Received
from pressroom.scratch import job_scratch
from pressroom.service import Services

log = logging.getLogger("pressroom.api")
PREFER_POLL_S = 0.25
router = APIRouter()


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
    when it finished within `Prefer: wait`."""
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
            idle_s=settings.body_timeout_s,
            deadline_s=settings.upload_deadline_s,
        )
        assert form.path is not None
        upload = Received(form.fields, form.path, form.size, form.sha256, form.head)
        accepted = await run_in_threadpool(intake.accept, ticket, upload, trace_id, span_id)
    job = accepted.job
    wait = prefer_wait(prefer)
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
    if wait is not None:
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
