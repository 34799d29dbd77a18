"""The FastAPI app: one handler table for Pressroom's errors, thin routes over the services."""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import logging
import math
import re
import secrets
import time
import uuid
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Request
from fastapi.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.concurrency import run_in_threadpool

from pressroom import __version__, tracing
from pressroom.api.uploads import MAX_FORM_OVERHEAD, receive_upload
from pressroom.errors import (
    BadRequest,
    Conflict,
    Forbidden,
    NotFound,
    PressroomError,
    QuotaExceeded,
    Refused,
    TooLarge,
    TransientError,
    Unauthorized,
    UnknownTemplate,
)
from pressroom.jobs.admission import REFUSALS, TooBigForQuota, admit, count_pages
from pressroom.jobs.model import Job, JobState, Lane, NewJob
from pressroom.pipeline.sniff import sniff_bytes
from pressroom.redact.detect.detector import check_policy_classes
from pressroom.redact.policy import RedactionPolicy, parse_policy
from pressroom.scratch import job_scratch
from pressroom.service import Services
from pressroom.storage import TENANT_RE, source_key
from pressroom.templates import REGISTERED_NAME, registered_template

log = logging.getLogger("pressroom.api")
MAX_TITLE = 200
MAX_DEADLINE_S = 30 * 24 * 3600.0
MAX_IDEMPOTENCY_KEY = 255
PREFER_POLL_S = 0.25


def _error(
    code: str, message: str, status: int, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"code": code, "message": message}}, status_code=status, headers=headers
    )


def own_base_url(request: Request) -> str:
    """Where links point: ``PRESSROOM_PUBLIC_URL`` when set, else the address the client's
    socket reached — never the request's Host header, which the client writes."""
    settings = request.app.state.services.settings
    if settings.public_url:
        return str(settings.public_url)
    server = request.scope.get("server")
    if not server:
        return str(request.base_url).rstrip("/")
    host, port = str(server[0]), server[1]
    if ":" in host:
        host = f"[{host}]"
    scheme = request.url.scheme
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{host}" + ("" if port in (None, default) else f":{port}")


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
        "deadline_at": job.deadline_at,
        "customer": job.customer,
        "verification": job.verification,
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
    key = authorization[7:].strip()
    found = await run_in_threadpool(
        lambda: services.store.tenant_for_key(key, now=services.clock())
    )
    if found is None:
        raise Unauthorized("unknown, expired or revoked API key")
    return found


Tenant = Annotated[str, Depends(tenant)]


async def operator(request: Request, authorization: Annotated[str | None, Header()] = None) -> str:
    """An operator key (``pressroom keys create --operator``): 401 without a key, 403 with a
    tenant's."""
    if not authorization or not authorization.startswith("Bearer "):
        raise Unauthorized("send Authorization: Bearer <operator key>")
    services: Services = request.app.state.services
    key = authorization[7:].strip()
    found = await run_in_threadpool(lambda: services.store.key_info(key, now=services.clock()))
    if found is None:
        raise Unauthorized("unknown, expired or revoked API key")
    if found[1] != "operator":
        raise Forbidden("this needs an operator key")
    return found[0]


Operator = Annotated[str, Depends(operator)]


def loopback_peer(request: Request, trusted_proxies: tuple[str, ...]) -> bool:
    """Whether the socket peer is this host. Addresses only, never names: a client is not
    "localhost" because a header or a test says so. With trusted proxies every request may
    carry a forwarded address in its place, so none counts as local."""
    if trusted_proxies:
        return False
    client = request.scope.get("client")
    if not client:
        return False
    try:
        address = ipaddress.ip_address(client[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # a dual-stack socket's view of an IPv4 peer
    return address.is_loopback


async def operator_off_loopback(
    request: Request, authorization: Annotated[str | None, Header()] = None
) -> None:
    """Open on loopback (the embedded default); an operator key from anywhere else."""
    services: Services = request.app.state.services
    if not loopback_peer(request, services.settings.trusted_proxies):
        await operator(request, authorization)


_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$")
_CUSTOMER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@:-]{0,127}$")
MAX_PREFER_WAIT_S = 60.0


def parse_traceparent(value: str | None) -> tuple[str, str | None]:
    """(trace id, parent span id) from a W3C ``traceparent``; a new trace when absent or invalid."""
    match = _TRACEPARENT.match((value or "").strip().lower())
    if match and set(match.group(1)) != {"0"} and set(match.group(2)) != {"0"}:
        return match.group(1), match.group(2)
    return secrets.token_hex(16), None


def prefer_wait(value: str | None) -> float | None:
    """Seconds from ``Prefer: wait=N`` (RFC 7240), capped; None when not asked."""
    for part in (value or "").split(","):
        for token in part.split(";"):
            name, _, number = token.strip().partition("=")
            if name.strip().lower() == "wait":
                try:
                    return min(max(float(number.strip().strip('"')), 0.0), MAX_PREFER_WAIT_S)
                except ValueError:
                    return None
    return None


def create_app(services: Services) -> FastAPI:
    app = FastAPI(
        title="Pressroom", version=__version__, description="Scans in, searchable branded PDFs out."
    )
    app.state.services = services

    @app.exception_handler(PressroomError)
    async def _pressroom_error(_request: Request, exc: PressroomError) -> JSONResponse:
        headers = None
        if isinstance(exc, Refused):
            headers = {"Retry-After": str(exc.retry_after)}
        elif isinstance(exc, TransientError):
            headers = {"Retry-After": "30" if exc.code == "STORAGE_FULL" else "5"}
            log.warning("request refused for now", extra={"code": exc.code})
        return _error(exc.code, exc.message, exc.http_status, headers)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        await run_in_threadpool(services.store.counts)
        return {"status": "ok", "version": __version__}

    @app.get("/metrics", dependencies=[Depends(operator_off_loopback)])
    async def metrics() -> Response:
        from pressroom.api.metrics import render_metrics

        body = await run_in_threadpool(render_metrics, services)
        return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")

    @app.get(
        "/dashboard", response_class=HTMLResponse, dependencies=[Depends(operator_off_loopback)]
    )
    async def dashboard() -> HTMLResponse:
        from pressroom.api.dashboard import render_dashboard, snapshot

        snap = await run_in_threadpool(snapshot, services)
        return HTMLResponse(render_dashboard(snap))

    @app.post("/v1/jobs", status_code=202)
    async def submit(
        request: Request,
        who: Tenant,
        idempotency_key: Annotated[str | None, Header()] = None,
        traceparent: Annotated[str | None, Header()] = None,
        prefer: Annotated[str | None, Header()] = None,
    ) -> Response:
        trace_id, incoming_span = parse_traceparent(traceparent)
        with tracing.accept_span(trace_id, incoming_span) as span_id:
            return await _accept(request, who, idempotency_key, prefer, trace_id, span_id)

    async def _accept(
        request: Request,
        who: str,
        idempotency_key: str | None,
        prefer: str | None,
        trace_id: str,
        span_id: str,
    ) -> Response:
        settings = services.settings
        declared = request.headers.get("content-length")
        declared_bytes = int(declared) if declared and declared.isdigit() else None
        if declared_bytes is not None and declared_bytes > settings.limits.max_bytes + 65536:
            raise TooLarge(f"the upload exceeds {settings.limits.max_bytes:,} bytes")
        allowed = await run_in_threadpool(services.store.allowed_templates, who)
        started = await run_in_threadpool(services.clock)
        known = idempotency_key is not None and await run_in_threadpool(
            services.store.find_idempotent, who, idempotency_key
        )
        if not known:  # a retry of an accepted upload adds nothing: never refused for quota
            # over quota already (or certainly after this body): refused before reading a byte
            least = max(0, (declared_bytes or 0) - MAX_FORM_OVERHEAD)
            await run_in_threadpool(lambda: _check_quota(services, who, least))

        def early(fields: dict[str, str]) -> None:
            # on the event loop, inside the multipart parser: pure checks only, no I/O
            _check_fields(fields, settings, allowed, idempotency_key, started, load=False)

        def check(fields: dict[str, str]) -> _Fields:
            return _check_fields(fields, settings, allowed, idempotency_key, started)

        with job_scratch(settings.scratch_dir) as scratch:
            form = await receive_upload(
                request.headers.get("content-type", ""),
                request.stream(),
                scratch / "upload",
                max_bytes=settings.limits.max_bytes,
                before_file=early,
                idle_s=settings.body_timeout_s,
                deadline_s=settings.upload_deadline_s,
            )
            kind = sniff_bytes(form.head)
            fields = form.fields
            checked = await run_in_threadpool(check, fields)
            template_name, lane, title = checked.template, checked.lane, checked.title
            deadline, customer, policy = checked.deadline, checked.customer, checked.policy
            if not policy.empty:
                check_policy_classes(policy.classes)  # refused here, nothing loaded
            options: dict[str, Any] = policy.as_options() if not policy.empty else {}
            if checked.keep_pixels:
                options["keep_pixels"] = True
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
                    "customer": customer,
                    "options": options,
                },
                sort_keys=True,
            )
            assert form.path is not None
            upload_path = form.path
            pages = await run_in_threadpool(count_pages, upload_path, kind.value)
            deadline_s = deadline or services.admission.default_deadline(lane, pages)
            now = services.clock()
            # known before the body: a replay (asked once); else asked again, since a racing
            # upload with the same key may have been accepted while this body arrived
            replay = known or (
                idempotency_key is not None
                and await run_in_threadpool(services.store.find_idempotent, who, idempotency_key)
            )
            if not replay:  # a replay was admitted the first time; it adds no work
                await run_in_threadpool(lambda: _check_quota(services, who, form.size))
                await run_in_threadpool(
                    lambda: admit(
                        services.store,
                        services.admission,
                        tenant=who,
                        lane=lane,
                        pages=pages,
                        deadline_s=deadline_s,
                        now=now,
                    )
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
                deadline_s=deadline_s,
                trace_id=trace_id,
                parent_span_id=span_id,
                customer=customer,
                pages_estimate=pages,
            )
            # The source first, then the row: there is never a job without its source. A
            # source without a row (a crash in between) is swept after an hour.
            await run_in_threadpool(services.blobs.put_file, key, upload_path)

        def admit_again(conn: Any) -> None:
            # the same rules, in the insert's own transaction: an upload that raced this one
            # past the first check cannot take us over a quota or a deadline
            _check_quota(services, who, form.size, conn=conn)
            admit(
                services.store,
                services.admission,
                tenant=who,
                lane=lane,
                pages=pages,
                deadline_s=deadline_s,
                now=services.clock(),
                conn=conn,
                record=False,
            )

        try:
            job, created = await run_in_threadpool(
                lambda: services.store.insert(
                    new,
                    now=services.clock(),
                    max_attempts=services.settings.max_attempts,
                    check=None if replay else admit_again,
                )
            )
        except REFUSALS as refusal:
            code = refusal.code
            await run_in_threadpool(services.blobs.delete, key)
            await run_in_threadpool(
                lambda: services.store.record_refusal(who, lane.value, code, now=services.clock())
            )
            raise
        except TransientError:
            # the commit may have gone through before the connection dropped: keep the source
            # (a retry with the Idempotency-Key finds the job; an orphan is swept in an hour)
            raise
        except BaseException:
            await run_in_threadpool(services.blobs.delete, key)
            raise
        if not created:
            await run_in_threadpool(services.blobs.delete, key)
        log.info(
            "job accepted",
            extra={"job_id": job.id, "tenant": who, "bytes": form.size, "replay": not created},
        )
        wait = prefer_wait(prefer)
        if wait:
            # RFC 7240: a tiny interactive job may finish while the client waits
            end = time.monotonic() + wait
            while not job.state.terminal and time.monotonic() < end:
                if await request.is_disconnected():
                    break
                await asyncio.sleep(min(PREFER_POLL_S, max(0.0, end - time.monotonic())))
                found = await run_in_threadpool(services.store.get, job.id)
                job = found or job
        body = job_json(job, services, own_base_url(request))
        headers = {"Location": f"/v1/jobs/{job.id}"}
        if wait is not None:
            headers["Preference-Applied"] = f"wait={wait:g}"
        if job.state.terminal:
            return JSONResponse(body, status_code=200, headers=headers)
        return JSONResponse(body, status_code=202, headers=headers)

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
        return {"jobs": [job_json(job, services, own_base_url(request)) for job in held]}

    @app.get("/v1/jobs/{job_id}/held")
    async def held_copy(job_id: str, who: Tenant) -> Response:
        """The held output, for the tenant's reviewer (authenticated; no signed link)."""
        job = await run_in_threadpool(lambda: services.store.get(job_id, tenant=who))
        if job is None or job.state is not JobState.REVIEW or not job.artifact_key:
            raise NotFound("no held output for this job")
        data = await run_in_threadpool(_read_blob, services, job.artifact_key)
        return Response(data, media_type="application/pdf", headers=dict(PRIVATE_HEADERS))

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
        if not ok:  # expired or decided meanwhile: the copy made for publishing must not stay
            await run_in_threadpool(services.blobs.delete, published)
            raise NotFound("the job is no longer in review")
        await run_in_threadpool(services.blobs.delete, held)
        if job.source_key:  # delivered: the source goes, and with it any way to run the job again
            await run_in_threadpool(services.blobs.delete, job.source_key)
            await run_in_threadpool(services.store.delete_source_key, job_id)
        done = await run_in_threadpool(lambda: services.store.get(job_id, tenant=who))
        assert done is not None
        return job_json(done, services, own_base_url(request))

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
        for key in (job.artifact_key, job.source_key):
            if key:
                await run_in_threadpool(services.blobs.delete, key)
        done = await run_in_threadpool(lambda: services.store.get(job_id, tenant=who))
        assert done is not None
        return job_json(done, services, own_base_url(request))

    @app.post("/v1/jobs/{job_id}/retry")
    async def redrive(job_id: str, request: Request, _op: Operator) -> dict[str, Any]:
        """An operator sends a dead-lettered job round again after fixing its cause."""
        job = await run_in_threadpool(lambda: services.store.get(job_id))
        if job is None:
            raise NotFound("no such job")
        done = await run_in_threadpool(lambda: services.store.redrive(job_id, now=services.clock()))
        if not done:
            raise Conflict(
                f"only a rejected job whose source is still kept can be retried (it is {job.state})"
            )
        log.info("job redriven", extra={"job_id": job_id, "tenant": job.tenant})
        again = await run_in_threadpool(lambda: services.store.get(job_id))
        assert again is not None
        return job_json(again, services, own_base_url(request))

    @app.post("/v1/customers", status_code=201)
    async def set_customer(request: Request, _op: Operator) -> dict[str, str]:
        """``{"tenant", "id", "status": "active"|"suspended"}``: create or change a customer."""
        try:
            body = await request.json()
            tenant_name, customer_id = str(body["tenant"]), str(body["id"])
            status = str(body.get("status", "active"))
        except (ValueError, KeyError, TypeError):
            raise BadRequest('send JSON {"tenant": ..., "id": ..., "status": ...}') from None
        if (
            not _CUSTOMER.match(customer_id)
            or not TENANT_RE.match(tenant_name)
            or status not in ("active", "suspended")
        ):
            raise BadRequest("bad customer id or status (active | suspended)")
        await run_in_threadpool(
            lambda: services.store.set_customer(
                tenant_name, customer_id, status=status, now=services.clock()
            )
        )
        return {"tenant": tenant_name, "id": customer_id, "status": status}

    @app.get("/v1/jobs/{job_id}")
    async def show(job_id: str, request: Request, who: Tenant) -> dict[str, Any]:
        job = await run_in_threadpool(lambda: services.store.get(job_id, tenant=who))
        if job is None:
            raise NotFound("no such job")
        return job_json(job, services, own_base_url(request))

    @app.get("/v1/artifacts/{job_id}")
    async def download(job_id: str, expires: str = "", signature: str = "") -> Response:
        job = await run_in_threadpool(lambda: services.store.get(job_id))
        if job is None or job.artifact_key is None or job.state is not JobState.COMPLETE:
            # the same answer as a bad signature: no probing for job ids
            services.signer.verify(job_id, "", expires, signature, now=services.clock())
            raise NotFound("no such artifact")
        services.signer.verify(job_id, job.artifact_key, expires, signature, now=services.clock())
        key = job.artifact_key
        url = await run_in_threadpool(
            services.blobs.download_url,
            key,
            min(services.settings.link_ttl_s, PRESIGN_TTL_S),
            f"{job.id}.pdf",
        )
        if url is not None:
            # S3: the client fetches straight from the bucket, on a link that lives minutes
            return RedirectResponse(url, status_code=307, headers=dict(PRIVATE_HEADERS))
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
                **PRIVATE_HEADERS,
            },
        )

    return app


PRESIGN_TTL_S = 300.0
# documents hold personal data: no cache keeps a copy, no browser guesses another type
PRIVATE_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}


@dataclass(frozen=True, slots=True)
class _Fields:
    template: str
    lane: Lane
    title: str | None
    deadline: float | None
    customer: str | None
    policy: RedactionPolicy
    keep_pixels: bool


def _check_fields(
    fields: dict[str, str],
    settings: Any,
    allowed: frozenset[str] | None,
    idempotency_key: str | None,
    now: float,
    *,
    load: bool = True,
) -> _Fields:
    """Every small field judged, without touching the network; called before the file is
    written (on the fields sent ahead of it, ``load=False``: no file is read) and again on all
    of them (the template loaded too)."""
    template_name = fields.get("template") or "plain"
    if not REGISTERED_NAME.match(template_name):
        raise UnknownTemplate("template must be a registered template's name (a-z, 0-9, _ and -)")
    if allowed is not None and template_name not in allowed:
        # the same answer as for a name that does not exist: another tenant's brand is private
        # (checked before loading anything, so a broken brand of theirs says nothing either)
        raise UnknownTemplate("unknown template")
    if load:
        registered_template(template_name, settings.template_dirs)
    try:
        lane = Lane(fields.get("lane") or "bulk")
    except ValueError:
        raise BadRequest("lane must be 'bulk' or 'interactive'") from None
    title = fields.get("title") or None
    if title is not None and (len(title) > MAX_TITLE or "\x00" in title):
        raise BadRequest(f"title must be at most {MAX_TITLE} printable characters")
    if idempotency_key is not None and (
        not idempotency_key.strip() or len(idempotency_key) > MAX_IDEMPOTENCY_KEY
    ):
        raise BadRequest(f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY} characters")
    deadline = _number(fields.get("deadline"), "deadline")
    customer = fields.get("customer") or None
    if customer is not None and not _CUSTOMER.match(customer):
        raise BadRequest("customer must be an id of letters, digits and ._@:- (≤ 128)")
    policy = parse_policy(fields.get("redact"), fields.get("expires_at"), now=now)
    keep_pixels = _flag(fields.get("keep_pixels"), "keep_pixels")
    url = fields.get("webhook_url")
    if url and (len(url) > 2048 or not url.startswith(("https://", "http://"))):
        raise BadRequest("webhook_url must be an http(s) URL of at most 2048 characters")
    return _Fields(template_name, lane, title, deadline, customer, policy, keep_pixels)


def _check_quota(services: Services, tenant: str, incoming: int, conn: Any = None) -> None:
    """Per-tenant byte quotas: sources still held, and bytes accepted in the last hour. With
    ``conn``, inside the insert's transaction (serialised per tenant with admission's)."""
    settings = services.settings
    if not settings.tenant_max_stored_bytes and not settings.tenant_max_bytes_per_hour:
        return
    for cap, what in (
        (settings.tenant_max_stored_bytes, "stored sources"),
        (settings.tenant_max_bytes_per_hour, "uploads in an hour"),
    ):
        if cap and incoming > cap:  # waiting cannot help: refused for good, no Retry-After
            raise TooBigForQuota(f"{incoming:,} bytes; this tenant's {what} may not pass {cap:,}")
    now = services.clock()
    held, last_hour = services.store.tenant_bytes(tenant, since=now - 3600.0, conn=conn)
    if settings.tenant_max_stored_bytes and held + incoming > settings.tenant_max_stored_bytes:
        raise QuotaExceeded(
            f"this tenant's stored sources would pass {settings.tenant_max_stored_bytes:,} bytes",
            retry_after=3600.0,
        )
    if settings.tenant_max_bytes_per_hour and (
        last_hour + incoming > settings.tenant_max_bytes_per_hour
    ):
        raise QuotaExceeded(
            f"this tenant's uploads would pass {settings.tenant_max_bytes_per_hour:,} bytes "
            "in an hour",
            retry_after=600.0,
        )


def _read_blob(services: Services, key: str) -> bytes:
    with services.blobs.open(key) as fh:
        return fh.read()


def _copy_blob(services: Services, src: str, dest: str) -> None:
    with job_scratch(services.settings.scratch_dir) as scratch:
        services.blobs.get_to_path(src, scratch / "copy")
        services.blobs.put_if_absent(dest, scratch / "copy")


def _flag(raw: str | None, name: str) -> bool:
    """A boolean form field: absent, ``true`` or ``false``; anything else is refused."""
    if raw is None or raw == "false":
        return False
    if raw == "true":
        return True
    raise BadRequest(f"{name} must be 'true' or 'false'")


def _number(raw: str | None, name: str) -> float | None:
    if raw is None or raw == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        raise BadRequest(f"{name} must be a number of seconds") from None
    if not math.isfinite(value) or value <= 0 or value > MAX_DEADLINE_S:
        raise BadRequest(f"{name} must be between 0 and {MAX_DEADLINE_S:.0f} seconds")
    return value
