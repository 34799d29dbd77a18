"""The FastAPI app: one handler table for Pressroom's errors, thin routes over the services."""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.concurrency import run_in_threadpool

from pressroom import __version__
from pressroom.api.uploads import receive_upload
from pressroom.errors import (
    BadRequest,
    NotFound,
    PressroomError,
    TooLarge,
    TransientError,
    Unauthorized,
)
from pressroom.jobs.model import Job, JobState, Lane, NewJob
from pressroom.pipeline.sniff import sniff_bytes
from pressroom.redact.engine import recognizers_for
from pressroom.redact.policy import parse_policy
from pressroom.scratch import job_scratch
from pressroom.service import Services
from pressroom.storage import source_key
from pressroom.templates import resolve_template

log = logging.getLogger("pressroom.api")
MAX_TITLE = 200


def _error(
    code: str, message: str, status: int, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )


def job_json(job: Job, services: Services, base_url: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": job.id,
        "state": job.state.value,
        "stage": job.stage,
        "lane": job.lane.value,
        "reason": job.reason,
        "message": job.message,
        "attempts": job.attempts,
        "pages": job.pages,
        "template": job.template,
        "timings": job.timings,
        "created_at": job.created_at,
        "finished_at": job.finished_at,
        "trace_id": job.trace_id,
        "artifact_url": None,
        "artifact_sha256": job.artifact_sha256,
    }
    if job.state is JobState.COMPLETE and job.artifact_key:
        expires, signature = services.signer.sign(job.id, job.artifact_key, now=services.clock())
        base = services.settings.public_url or base_url.rstrip("/")
        body["artifact_url"] = (
            f"{base}/v1/artifacts/{job.id}?expires={expires}&signature={signature}"
        )
    return body


async def tenant(request: Request, authorization: Annotated[str | None, Header()] = None) -> str:
    """The tenant whose API key is in the Authorization header; 401 otherwise."""
    if not authorization or not authorization.startswith("Bearer "):
        raise Unauthorized("send Authorization: Bearer <API key>")
    services: Services = request.app.state.services
    found = await run_in_threadpool(services.store.tenant_for_key, authorization[7:].strip())
    if found is None:
        raise Unauthorized("unknown or revoked API key")
    return found


Tenant = Annotated[str, Depends(tenant)]


def create_app(services: Services) -> FastAPI:
    app = FastAPI(
        title="Pressroom", version=__version__, description="Scans in, searchable branded PDFs out."
    )
    app.state.services = services

    @app.exception_handler(PressroomError)
    async def _pressroom_error(_request: Request, exc: PressroomError) -> JSONResponse:
        headers = {"Retry-After": "5"} if isinstance(exc, TransientError) else None
        return _error(exc.code, exc.message, exc.http_status, headers)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        await run_in_threadpool(services.store.counts)
        return {"status": "ok", "version": __version__}

    @app.get("/metrics")
    async def metrics(
        request: Request, authorization: Annotated[str | None, Header()] = None
    ) -> Response:
        # Open on loopback (the embedded default); an operator key anywhere else.
        host = request.client.host if request.client else ""
        if host not in ("127.0.0.1", "::1", "localhost", "testclient"):
            await tenant(request, authorization)
        from pressroom.api.metrics import render_metrics

        body = await run_in_threadpool(render_metrics, services)
        return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")

    @app.post("/v1/jobs", status_code=202)
    async def submit(
        request: Request, who: Tenant, idempotency_key: Annotated[str | None, Header()] = None
    ) -> Response:
        declared = request.headers.get("content-length")
        if (
            declared
            and declared.isdigit()
            and int(declared) > services.settings.limits.max_bytes + 65536
        ):
            raise TooLarge(f"the upload exceeds {services.settings.limits.max_bytes:,} bytes")
        with job_scratch(services.settings.scratch_dir) as scratch:
            form = await receive_upload(
                request.headers.get("content-type", ""),
                request.stream(),
                scratch / "upload",
                max_bytes=services.settings.limits.max_bytes,
            )
            kind = sniff_bytes(form.head)
            fields = form.fields
            template_name = fields.get("template") or "plain"
            await run_in_threadpool(
                resolve_template, template_name, services.settings.template_dirs
            )
            try:
                lane = Lane(fields.get("lane") or "bulk")
            except ValueError:
                raise BadRequest("lane must be 'bulk' or 'interactive'") from None
            title = fields.get("title") or None
            if title is not None and len(title) > MAX_TITLE:
                raise BadRequest(f"title is longer than {MAX_TITLE} characters")
            deadline = _number(fields.get("deadline"), "deadline")
            policy = parse_policy(
                fields.get("redact"), fields.get("expires_at"), now=services.clock()
            )
            if not policy.empty:
                recognizers_for(policy)  # a class nothing can detect yet is refused here
            options: dict[str, Any] = policy.as_options() if not policy.empty else {}
            if fields.get("webhook_url"):
                from pressroom.notify.webhooks import check_url

                options["webhook_url"] = await run_in_threadpool(
                    lambda: check_url(
                        fields["webhook_url"], allow_private=services.settings.webhook_allow_private
                    )
                )
            canonical = json.dumps(
                {
                    "sha256": form.sha256,
                    "template": template_name,
                    "lane": lane.value,
                    "title": title,
                    "deadline": deadline,
                    "options": options,
                },
                sort_keys=True,
            )
            job_id = str(uuid.uuid4())
            key = source_key(who, job_id)
            new = NewJob(
                id=job_id,
                tenant=who,
                lane=lane,
                source_key=key,
                source_sha256=form.sha256,
                source_bytes=form.size,
                kind=kind.value,
                template=template_name,
                title=title,
                options=options,
                idempotency_key=idempotency_key,
                request_hash=hashlib.sha256(canonical.encode()).hexdigest(),
                deadline_s=deadline,
            )
            # The source first, then the row: there is never a job without its source. A
            # source without a row (a crash in between) is swept after an hour.
            assert form.path is not None
            await run_in_threadpool(services.blobs.put_file, key, form.path)
        try:
            job, created = await run_in_threadpool(
                lambda: services.store.insert(
                    new, now=services.clock(), max_attempts=services.settings.max_attempts
                )
            )
        except BaseException:
            await run_in_threadpool(services.blobs.delete, key)
            raise
        if not created:
            await run_in_threadpool(services.blobs.delete, key)
        log.info(
            "job accepted",
            extra={"job_id": job.id, "tenant": who, "bytes": form.size, "replay": not created},
        )
        body = job_json(job, services, str(request.base_url))
        return JSONResponse(body, status_code=202, headers={"Location": f"/v1/jobs/{job.id}"})

    @app.get("/v1/webhook-secret")
    async def webhook_secret(who: Tenant) -> dict[str, str]:
        """The secret that signs this tenant's webhooks (Standard Webhooks, whsec_...)."""
        secret = await run_in_threadpool(
            lambda: services.store.webhook_secret(who, now=services.clock())
        )
        return {"secret": secret}

    @app.get("/v1/review")
    async def review_queue(request: Request, who: Tenant) -> dict[str, Any]:
        """Jobs held for a human: why (codes and counts, never the values), since when."""
        held = await run_in_threadpool(services.store.in_review, who)
        return {"jobs": [job_json(job, services, str(request.base_url)) for job in held]}

    @app.get("/v1/jobs/{job_id}/held")
    async def held_copy(job_id: str, who: Tenant) -> Response:
        """The held output, for the tenant's reviewer (authenticated; no signed link)."""
        job = await run_in_threadpool(lambda: services.store.get(job_id, tenant=who))
        if job is None or job.state is not JobState.REVIEW or not job.artifact_key:
            raise NotFound("no held output for this job")
        data = await run_in_threadpool(_read_blob, services, job.artifact_key)
        return Response(data, media_type="application/pdf")

    @app.post("/v1/jobs/{job_id}/approve")
    async def approve(job_id: str, request: Request, who: Tenant) -> dict[str, Any]:
        job = await run_in_threadpool(lambda: services.store.get(job_id, tenant=who))
        if job is None or job.state is not JobState.REVIEW or not job.artifact_key:
            raise NotFound("no held output for this job")
        held = job.artifact_key
        published = held.replace("review/", "artifacts/", 1)
        await run_in_threadpool(_copy_blob, services, held, published)
        sha = held.rsplit("/", 1)[1].removesuffix(".pdf")
        ok = await run_in_threadpool(
            lambda: services.store.decide_review(
                job_id,
                who,
                approve=True,
                now=services.clock(),
                artifact_key=published,
                artifact_sha256=sha,
            )
        )
        if not ok:
            raise NotFound("the job is no longer in review")
        await run_in_threadpool(services.blobs.delete, held)
        if job.source_key:  # delivered: the source goes, and with it any way to run the job again
            await run_in_threadpool(services.blobs.delete, job.source_key)
            await run_in_threadpool(services.store.delete_source_key, job_id)
        done = await run_in_threadpool(lambda: services.store.get(job_id, tenant=who))
        assert done is not None
        return job_json(done, services, str(request.base_url))

    @app.post("/v1/jobs/{job_id}/reject")
    async def reject(job_id: str, request: Request, who: Tenant) -> dict[str, Any]:
        job = await run_in_threadpool(lambda: services.store.get(job_id, tenant=who))
        if job is None or job.state is not JobState.REVIEW:
            raise NotFound("no such job in review")
        ok = await run_in_threadpool(
            lambda: services.store.decide_review(job_id, who, approve=False, now=services.clock())
        )
        if not ok:
            raise NotFound("the job is no longer in review")
        if job.artifact_key:
            await run_in_threadpool(services.blobs.delete, job.artifact_key)
        done = await run_in_threadpool(lambda: services.store.get(job_id, tenant=who))
        assert done is not None
        return job_json(done, services, str(request.base_url))

    @app.get("/v1/jobs/{job_id}")
    async def show(job_id: str, request: Request, who: Tenant) -> dict[str, Any]:
        job = await run_in_threadpool(lambda: services.store.get(job_id, tenant=who))
        if job is None:
            raise NotFound("no such job")
        return job_json(job, services, str(request.base_url))

    @app.get("/v1/artifacts/{job_id}")
    async def download(job_id: str, expires: str = "", signature: str = "") -> Response:
        job = await run_in_threadpool(lambda: services.store.get(job_id))
        if job is None or job.artifact_key is None or job.state is not JobState.COMPLETE:
            # the same answer as a bad signature: no probing for job ids
            services.signer.verify(job_id, "", expires, signature, now=services.clock())
            raise NotFound("no such artifact")
        services.signer.verify(job_id, job.artifact_key, expires, signature, now=services.clock())
        key = job.artifact_key
        presign = getattr(services.blobs, "presign", None)
        if presign is not None:
            # S3: the client fetches straight from the bucket, on a link that lives minutes
            url = await run_in_threadpool(
                presign, key, min(services.settings.link_ttl_s, PRESIGN_TTL_S), f"{job.id}.pdf"
            )
            return RedirectResponse(url, status_code=307)
        size = await run_in_threadpool(services.blobs.size, key)
        handle = await run_in_threadpool(services.blobs.open, key)

        def chunks() -> Any:
            with handle:
                while block := handle.read(1 << 16):
                    yield block

        return StreamingResponse(
            chunks(),
            media_type="application/pdf",
            headers={
                "Content-Length": str(size),
                "Content-Disposition": f'attachment; filename="{job.id}.pdf"',
            },
        )

    return app


PRESIGN_TTL_S = 300.0


def _read_blob(services: Services, key: str) -> bytes:
    with services.blobs.open(key) as fh:
        return fh.read()


def _copy_blob(services: Services, src: str, dest: str) -> None:
    with job_scratch(services.settings.scratch_dir) as scratch:
        services.blobs.get_to_path(src, scratch / "copy")
        services.blobs.put_if_absent(dest, scratch / "copy")


def _number(raw: str | None, name: str) -> float | None:
    if raw is None or raw == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        raise BadRequest(f"{name} must be a number of seconds") from None
    if value <= 0:
        raise BadRequest(f"{name} must be positive")
    return value
