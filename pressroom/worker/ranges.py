"""A big document's page ranges: the job split into them (any worker of the lane takes one),
one range read into its part, and the parts put together in page order into one checked
output by the worker that finished the last range."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path

from pressroom.errors import (
    BlobNotFound,
    PermanentError,
    ReviewRequired,
    StoreUnavailable,
    TransientError,
)
from pressroom.jobs.model import Job, JobState, Task
from pressroom.jobs.tasks import page_ranges
from pressroom.models import SourceKind
from pressroom.pipeline.assembly import assemble, page_records, read_page_records
from pressroom.pipeline.check import CheckedPage
from pressroom.pipeline.core import DocumentResult
from pressroom.pipeline.inspect import inspect_source
from pressroom.pipeline.ocr import OcrEngine
from pressroom.pipeline.plain import read_range
from pressroom.scratch import job_scratch
from pressroom.stages import Stage, StageTimer
from pressroom.storage import pages_key, part_key
from pressroom.worker.context import ClaimedJob, JobRun
from pressroom.worker.lease import Heartbeat, TaskStopped, stopped

log = logging.getLogger("pressroom.worker")


def split(run: JobRun, source: Path, timer: StageTimer) -> bool:
    """Whether the job was split: a document over the split size gets its page ranges
    and the job is released to them (any worker of the lane takes them)."""
    claim, job = run.claim, run.job
    split_pages = run.services.settings.split_pages
    if not split_pages:
        return False
    with timer.stage(Stage.INSPECT):
        pages = len(inspect_source(source, run.options.limits).pages)
    ranges = page_ranges(pages, split_pages)
    if not ranges:
        return False
    claim.record_stages(timer)
    if not claim.tasks.split(job, claim.owner, ranges, now=claim.now()):
        raise stopped(claim)
    log.info("job split", extra={"job_id": job.id, "pages": pages, "count": len(ranges)})
    return True


def run_range(
    claim: ClaimedJob,
    engine: OcrEngine,
    task: Task,
    before_read: Callable[[Path], None] | None = None,
) -> Job | None:
    """Read one page range of a split job into its part; the job to assemble when this was
    the last range done (None otherwise, and when the range failed or was taken back).
    ``before_read``: told the fetched source before anything reads it (the scan)."""
    services, job, owner = claim.services, claim.job, claim.owner
    lease = services.settings.lease_s
    deadline = claim.deadline()

    def renew() -> bool:
        return claim.tasks.heartbeat(task, owner, now=claim.now(), lease_s=lease)

    def boundary() -> None:
        # every page: the range is still this worker's (a cancel deletes it)
        if not renew():
            raise TaskStopped

    stored: list[str] = []
    try:
        with (
            Heartbeat(services, job.id, owner, renew=renew),
            job_scratch(services.settings.scratch_dir) as scratch,
        ):
            source = scratch / "source"
            claim.fetch(source)
            if before_read is not None:
                before_read(source)
            run = JobRun.open(claim, engine, scratch, deadline)
            key, pages = _read_one(run, task, source, boundary, stored)
        recorded, assembly = claim.tasks.done(task, owner, key, now=claim.now(), lease_s=lease)
        if not recorded:
            raise TaskStopped
        log.info("range done", extra={"job_id": job.id, "pages": pages})
        return assembly
    except TaskStopped:
        for blob in stored:
            services.blobs.delete(blob)
        log.info("range stopped", extra={"job_id": job.id})
    except (PermanentError, TransientError, ReviewRequired) as exc:
        _failed(claim, task, exc.code, exc.message, not isinstance(exc, TransientError))
    except Exception:
        log.exception("internal error", extra={"job_id": job.id})
        _failed(claim, task, "INTERNAL_ERROR", "an internal error stopped the job", True)
    return None


def _read_one(
    run: JobRun, task: Task, source: Path, boundary: Callable[[], None], stored: list[str]
) -> tuple[str, int]:
    """The range's pages read into its part, the part and its page records stored (their
    keys added to ``stored`` as they are); the part's key and how many pages it holds."""
    claim, job = run.claim, run.job
    blobs = run.services.blobs
    part = run.scratch / "part.pdf"
    timer = StageTimer()
    start = time.perf_counter()
    try:
        pages = read_range(
            source,
            part,
            run.options,
            run.ocr(),
            range(task.first_page, task.end_page),
            boundary=boundary,
            timer=timer,
        ).pages
    finally:
        claim.record_stages(timer)
    boundary()
    key = part_key(job.tenant, job.id, task.number)
    record = run.scratch / "pages.json"
    took = time.perf_counter() - start
    record.write_text(json.dumps({"seconds": took, "pages": page_records(pages)}))
    blobs.put_file(pages_key(job.tenant, job.id, task.number), record)
    stored.append(pages_key(job.tenant, job.id, task.number))
    blobs.put_file(key, part)
    stored.append(key)
    return key, len(pages)


def _failed(claim: ClaimedJob, task: Task, code: str, message: str, permanent: bool) -> None:
    job = claim.job
    state = claim.tasks.fail(
        task,
        claim.owner,
        code=code,
        message=message,
        permanent=permanent,
        now=claim.now(),
        policy=claim.services.retry,
    )
    if state is JobState.REJECTED:
        claim.drop_parts()
    log.info(
        "range failed",
        extra={"job_id": job.id, "code": code, "state": str(state)},
    )


def assemble_parts(run: JobRun, ranges_s: list[float]) -> tuple[Path, DocumentResult]:
    """A split job's parts, fetched in page order, made into one checked output;
    ``ranges_s`` gets the seconds each range took."""
    claim, job = run.claim, run.job
    blobs = run.services.blobs
    split_count, _done = claim.tasks.progress(job.id)
    parts: list[Path] = []
    pages: list[CheckedPage] = []
    try:
        for number in range(split_count):
            part = run.scratch / f"part{number:04d}.pdf"
            blobs.get_to_path(part_key(job.tenant, job.id, number), part)
            parts.append(part)
            with blobs.open(pages_key(job.tenant, job.id, number)) as fh:
                record = json.loads(fh.read())
            pages += read_page_records(record["pages"])
            ranges_s.append(float(record["seconds"]))
    except BlobNotFound:
        # a part went missing: the document is read again from the start next time
        claim.tasks.clear(job.id)
        raise StoreUnavailable("a page range's part is missing; the job is read again") from None
    built = run.scratch / "output.pdf"
    timer = StageTimer()
    try:
        result = assemble(
            parts,
            pages,
            built,
            run.options,
            run.ocr(),
            timer,
            source_sha256=job.source_sha256,
            kind=_source_kind(job.kind),
        )
    finally:
        claim.record_stages(timer)
    return built, result


def _source_kind(kind: str) -> SourceKind:
    try:
        return SourceKind(kind)
    except ValueError:
        return SourceKind.PDF
