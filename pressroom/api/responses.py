"""What the API's answers look like: a job as JSON with its signed link, and a
stored PDF streamed with the headers personal data needs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from fastapi import Request
from fastapi.responses import StreamingResponse

from pressroom.hints import for_api
from pressroom.jobs.model import Job, JobState
from pressroom.service import Services
from pressroom.signing import artifact_links

# documents hold personal data: no cache keeps a copy, no browser guesses another type
PRIVATE_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
CHUNK_BYTES = 1 << 16


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
    order = job.order
    body: dict[str, Any] = {
        "id": job.id,
        "state": job.state.value,
        "stage": job.stage,
        "lane": job.lane.value,
        "reason": job.reason,
        # a refusal's words, with the upload fields that would change it where there are any
        "message": job.message if job.message is None else for_api(job.reason, job.message),
        "attempts": job.attempts,
        "pages": job.pages,
        "template": job.template,
        # what the client asked for, echoed: its label and title, the classes to redact
        "label": services.labels.open(job.id, job.label),
        "title": services.labels.open(job.id, job.title, purpose="title"),
        "redact": list(order.redact),
        "timings": job.timings,
        "decisions": [
            {"action": d.action, "at": d.at, "key_id": d.key_id, "role": d.role}
            for d in job.decisions
        ],
        "created_at": job.created_at,
        "finished_at": job.finished_at,
        "trace_id": job.trace_id,
        "deadline_at": job.deadline_at,
        "customer": job.customer,
        "verification": job.verification,
        "artifact_url": None,
        "artifact_sha256": job.artifact_sha256,
        "output_type": order.output_type or "pdf",
        "sidecar": bool(order.sidecar),
        "allow_no_text": order.allow_no_text,
        "optimize": order.optimize,
        "ocr": order.ocr,
        # the OCR languages it is read with (a job from before they were per job: this
        # process's setting, the rule of ``JobOrder.languages_or``)
        "languages": "+".join(order.languages_or(services.settings.languages)),
        "sidecar_url": None,
        # what became of the document (null until it is known)
        "text_layer": (job.result or {}).get("text_layer"),
        "flattened": (job.result or {}).get("flattened"),
        "notes": (job.result or {}).get("notes"),
        "dropped": (job.result or {}).get("dropped"),
        "warnings": (job.result or {}).get("warnings"),
    }
    if order.refused is not None and job.reason is None:
        # a stored order this version cannot read: its fields above are defaults, not what
        # was asked; the job says why it will not run (the worker rejects it with this code)
        body["reason"], body["message"] = order.refused
    if job.state is JobState.COMPLETE and job.artifact_key:
        body["artifact_url"], body["sidecar_url"] = artifact_links(
            services.signer,
            job.id,
            job.artifact_sha256,
            job.artifact_key,
            services.settings.public_url or base_url.rstrip("/"),
            sidecar=bool(order.sidecar),
            now=services.clock(),
        )
    return body


def stream_pdf(
    handle: BinaryIO,
    size: int,
    headers: dict[str, str] | None = None,
    media_type: str = "application/pdf",
) -> StreamingResponse:
    """A stored PDF (or its sidecar text) sent in blocks from its open handle (closed when
    sent): never whole in memory, however large the document."""

    def chunks() -> Iterator[bytes]:
        with handle:
            while block := handle.read(CHUNK_BYTES):
                yield block

    return StreamingResponse(
        chunks(),
        media_type=media_type,
        headers={"Content-Length": str(size), **(headers or {}), **PRIVATE_HEADERS},
    )
