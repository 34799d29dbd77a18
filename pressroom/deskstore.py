"""The desk over the service's job store and blob store: held jobs, their sheets and pages, and
the decisions (``review.Reviews``) — the same rules as the JSON review routes."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from pressroom.corrections import Corrections, ReviewSheet, burned_counts, total_counts
from pressroom.deskport import (
    Approved,
    DeadItem,
    Decision,
    HeldDetail,
    HeldItem,
    Viewer,
    Which,
)
from pressroom.engines import pdfium
from pressroom.errors import Conflict, Forbidden, NotFound
from pressroom.jobs.model import Job, JobState
from pressroom.models import SourceKind
from pressroom.review import REBUILDING, Reviews, rebuilding
from pressroom.scratch import job_scratch
from pressroom.service import Services
from pressroom.signing import binding

log = logging.getLogger(__name__)

# Rendered pages, by the stored object they come from (held copies are named by their content,
# a job's source never changes): a reviewer paging back and forth, or zooming back out,
# renders each picture once. Bounded by bytes (a 4,000-pixel picture is megabytes).
_CACHE_BYTES = 96 << 20
_cache: OrderedDict[tuple[str, int, str, int], bytes] = OrderedDict()
_cache_lock = threading.Lock()


def _cached(key: tuple[str, int, str, int], make: Callable[[], bytes]) -> bytes:
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    png = make()
    with _cache_lock:
        _cache[key] = png
        held = sum(len(v) for v in _cache.values())
        while held > _CACHE_BYTES and len(_cache) > 1:
            _, dropped = _cache.popitem(last=False)
            held -= len(dropped)
    return png


class ServiceDesk:
    """A tenant's reviewer sees the tenant's held jobs; an operator (``viewer.tenant`` None)
    sees every tenant's. Anything else is ``NotFound``, the same as a job that does not exist."""

    title = "Pressroom review"

    def __init__(self, services: Services) -> None:
        self.services = services
        self.reviews = Reviews.of(services)

    def held(self, viewer: Viewer) -> list[HeldItem]:
        jobs = self.services.store.queue.in_review(viewer.tenant, rebuilding=True)
        return [self._item(job) for job in jobs]

    def detail(self, viewer: Viewer, item_id: str) -> HeldDetail:
        job = self._job(viewer, item_id)
        sheet = _sheet(job)
        return HeldDetail(
            self._item(job),
            sheet,
            can_apply=(
                job.state is JobState.REVIEW
                and bool(job.source_key)
                and job.order.redacts
                and sheet is not None
            ),
            decisions=tuple(Decision(d.action, d.at, d.key_id, d.role) for d in job.decisions),
        )

    def page_image(
        self,
        viewer: Viewer,
        item_id: str,
        page: int,
        which: Which,
        width_px: int,
        aligned: bool = False,
    ) -> bytes:
        job = self._job(viewer, item_id)
        sheet = _sheet(job)
        pages = len(sheet.pages) if sheet is not None else (job.pages or 0)
        if not 1 <= page <= pages:
            raise NotFound("no such page")
        key = job.source_key if which == "source" else job.artifact_key
        if job.state is not JobState.REVIEW or not key:
            raise NotFound("no such page")
        sheet_page = sheet.pages[page - 1] if sheet is not None else None

        def make() -> bytes:
            from pressroom.pipeline import (
                pictures as render,  # Pillow and PDFium: only when a page is drawn
            )

            with job_scratch(self.services.settings.scratch_dir) as scratch:
                path = scratch / "file"
                self.services.blobs.get_to_path(key, path)
                if which == "source":
                    return render.source_page_png(
                        path, SourceKind(job.kind), page - 1, sheet_page, width_px
                    )
                frame = sheet_page if aligned else None
                index = page - 1 + _cover(path, pages)
                return render.output_page_png(path, index, width_px, frame)

        view = f"{which}-sheet" if aligned and sheet_page is not None else which
        return _cached((key, page, view, width_px), make)

    def apply(self, viewer: Viewer, item_id: str, corrections: Corrections) -> None:
        job = self._job(viewer, item_id)
        self.reviews.apply(job.id, job.tenant, corrections, key_id=viewer.key_id)

    def approve(self, viewer: Viewer, item_id: str) -> Approved:
        job = self._decidable(viewer, item_id)
        done = self.reviews.approve(job.id, job.tenant, key_id=viewer.key_id)
        assert done.artifact_key is not None
        expires, signature = self.services.signer.sign(
            done.id, binding(done.artifact_sha256, done.artifact_key), now=self.services.clock()
        )
        base = self.services.settings.public_url.rstrip("/")
        return Approved(
            "The job is complete and its output published; the link below is signed and "
            "short-lived (GET /v1/jobs/{id} gives a fresh one).",
            f"{base}/v1/artifacts/{done.id}?expires={expires}&signature={signature}",
        )

    def reject(self, viewer: Viewer, item_id: str) -> None:
        job = self._decidable(viewer, item_id)
        self.reviews.reject(job.id, job.tenant, key_id=viewer.key_id)

    # --- an operator's redrive (DeadLetters) ---------------------------------------------------

    def dead_letter(self, viewer: Viewer, item_id: str) -> DeadItem:
        job = self._dead(viewer, item_id)
        return DeadItem(
            id=job.id,
            tenant=job.tenant,
            lane=job.lane.value,
            label=self.services.labels.open(job.id, job.label),
            reason_code=job.reason or "",
            attempts=job.attempts,
            failed_at=job.finished_at,
        )

    def redrive(self, viewer: Viewer, item_id: str) -> None:
        job = self._dead(viewer, item_id)
        if not self.services.store.queue.redrive(job.id, now=self.services.clock()):
            raise Conflict("the job can no longer be redriven (it changed, or its source is gone)")
        log.info("job redriven", extra={"job_id": job.id, "tenant": job.tenant})

    def _dead(self, viewer: Viewer, item_id: str) -> Job:
        if viewer.role != "operator" or viewer.tenant is not None:
            raise Forbidden("only an operator's key may redrive a job")
        job = self.services.store.queue.get(item_id)
        if job is None or job.state is not JobState.REJECTED or job.source_key is None:
            raise NotFound("no such dead-lettered job whose source is still kept")
        return job

    def _decidable(self, viewer: Viewer, item_id: str) -> Job:
        """A job to approve or reject: one being rebuilt is refused with the reason (the desk
        shows it; the JSON routes answer 404 for it, as for any job not in review)."""
        job = self._job(viewer, item_id)
        if rebuilding(job):
            raise Conflict(f"{REBUILDING}: the copy you would decide on is about to be replaced")
        return job

    def _job(self, viewer: Viewer, item_id: str) -> Job:
        job = self.services.store.queue.get(item_id, tenant=viewer.tenant)
        if job is None or not (job.state is JobState.REVIEW or rebuilding(job)):
            raise NotFound("no such job in review")
        return job

    def _item(self, job: Job) -> HeldItem:
        sheet = _sheet(job)
        counts: dict[str, int] = {}
        for f in sheet.findings if sheet is not None else ():
            counts[f.kind] = counts.get(f.kind, 0) + 1
        held = job.state is JobState.REVIEW
        since = job.finished_at if held else job.updated_at
        # the copy held now is the last Apply's outcome: it was held after that Apply
        applied = [d.at for d in job.decisions if d.action == "apply"]
        rebuilt_at = (
            job.finished_at
            if held and applied and job.finished_at is not None and job.finished_at >= applied[-1]
            else None
        )
        return HeldItem(
            id=job.id,
            tenant=job.tenant,
            reason_code=(job.reason or "") if held else "REBUILDING",
            reason=(job.message or "") if held else "rebuilding with a reviewer's corrections",
            counts=counts,
            burned=total_counts(burned_counts(sheet)) if sheet is not None else None,
            pages=len(sheet.pages) if sheet is not None else job.pages,
            held_since=since,
            deadline=(
                since + self.services.settings.review_retention_s
                if held and since is not None
                else None
            ),
            state="review" if held else "rebuilding",
            # the worker's, while its attempt runs (a retry waiting shows none)
            progress=job.progress if job.state is JobState.RUNNING else None,
            rebuilt_at=rebuilt_at,
            label=self.services.labels.open(job.id, job.label),
            title=self.services.labels.open(job.id, job.title, purpose="title"),
        )


def _sheet(job: Job) -> ReviewSheet | None:
    return ReviewSheet.parse(job.review_sheet) if job.review_sheet else None


def _cover(path: Path, content_pages: int) -> int:
    """Pages in front of the content (a template's cover): the output's pages beyond the
    content's."""
    with pdfium.RecyclingDocument(path) as doc:
        return max(0, len(doc) - content_pages)
