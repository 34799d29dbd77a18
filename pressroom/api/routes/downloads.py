"""Signed downloads of finished outputs: a redirect to the bucket, or the file streamed."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from pressroom.api.deps import ServicesDep
from pressroom.api.openapi import pdf, problems, text
from pressroom.api.responses import PRIVATE_HEADERS, stream_pdf
from pressroom.errors import NotFound
from pressroom.jobs.model import JobState
from pressroom.labels import content_disposition, download_name
from pressroom.signing import binding, sidecar_binding
from pressroom.storage import sidecar_key
from pressroom.web.single import known_query

PRESIGN_TTL_S = 300.0
# a link carries exactly these two parameters: any other is refused, naming it
router = APIRouter(tags=["artifacts"], dependencies=[Depends(known_query)])
REDIRECT: dict[int | str, dict[str, Any]] = {
    307: {
        "description": "Fetch it from the bucket, on a link that lives minutes.",
        "headers": {"Location": {"schema": {"type": "string"}, "required": True}},
    }
}


@router.get(
    "/v1/artifacts/{job_id}",
    response_class=Response,
    responses={
        **pdf("The output PDF."),
        **REDIRECT,
        **problems(403, 404, 410, 503),
    },
)
async def download(
    job_id: str, services: ServicesDep, expires: str = "", signature: str = ""
) -> Response:
    job = await run_in_threadpool(lambda: services.store.queue.get(job_id))
    # the signature first, whatever became of the job: an unknown id, a deleted artifact and a
    # bad link all answer 403 to anyone without a good link (no probing for job ids)
    bound = binding(job.artifact_sha256, job.artifact_key) if job is not None else ""
    services.signer.verify(job_id, bound, expires, signature, now=services.clock())
    if job is None or job.state is not JobState.COMPLETE:
        raise NotFound("no such artifact")
    if job.artifact_key is None:
        raise NotFound("the artifact was deleted")  # by its tenant, or past retention
    name = download_name(services.labels.open(job.id, job.label), job.id, ".pdf")
    return await _send(services, job.artifact_key, name, "application/pdf")


async def _send(services: ServicesDep, key: str, filename: str, media_type: str) -> Response:
    """A stored file to the client: a redirect to the bucket, or streamed from here."""
    url = await run_in_threadpool(
        services.blobs.download_url,
        key,
        min(services.settings.link_ttl_s, PRESIGN_TTL_S),
        filename,
        media_type,
    )
    if url is not None:
        # S3: the client fetches straight from the bucket, on a link that lives minutes
        return RedirectResponse(url, status_code=307, headers=dict(PRIVATE_HEADERS))
    size = await run_in_threadpool(services.blobs.size, key)
    handle = await run_in_threadpool(services.blobs.open, key)
    headers = {"Content-Disposition": content_disposition(filename)}
    return stream_pdf(handle, size, headers, media_type=media_type)


@router.get(
    "/v1/artifacts/{job_id}/sidecar",
    response_class=Response,
    responses={
        **text(
            "text/plain",
            "The sidecar text: the output's text layer, a form feed between pages (UTF-8).",
        ),
        **REDIRECT,
        **problems(403, 404, 410, 503),
    },
)
async def download_sidecar(
    job_id: str, services: ServicesDep, expires: str = "", signature: str = ""
) -> Response:
    """The sidecar text of a complete job that asked for one, on its own signed link."""
    job = await run_in_threadpool(lambda: services.store.queue.get(job_id))
    bound = binding(job.artifact_sha256, job.artifact_key) if job is not None else ""
    services.signer.verify(job_id, sidecar_binding(bound), expires, signature, now=services.clock())
    if job is None or job.state is not JobState.COMPLETE or not job.order.sidecar:
        raise NotFound("no such sidecar text")
    if job.artifact_key is None:
        raise NotFound("the artifact was deleted")
    key = sidecar_key(job.artifact_key)
    if not await run_in_threadpool(services.blobs.exists, key):
        raise NotFound("no sidecar text was stored for this output")
    name = download_name(services.labels.open(job.id, job.label), job.id, ".txt")
    return await _send(services, key, name, "text/plain; charset=utf-8")
