"""Human review of held outputs: open the held copy, approve it (publish under its artifact key)
or reject it — the decisions behind the review routes, without HTTP."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pressroom.corrections import Corrections, ReviewSheet
from pressroom.errors import BadRequest, Conflict, NotFound
from pressroom.jobs.model import UNFINISHED, Job, JobState
from pressroom.jobs.store import Queue
from pressroom.scratch import job_scratch
from pressroom.service import Services
from pressroom.storage import (
    BlobStore,
    artifact_key,
    delete_output,
    is_artifact_key,
    named_digest,
    sidecar_key,
    stored_sha256,
)

REBUILDING = "a rebuild with corrections is running; wait for it to finish"


def rebuilding(job: Job) -> bool:
    """A held job a reviewer sent back with corrections, not held again yet: it keeps its
    review sheet while it waits for a worker and runs."""
    return job.state.value in UNFINISHED and job.review_sheet is not None


def held_digest(held_key: str) -> str:
    """The output's SHA-256, which its held key (``review_key``) is named by."""
    return named_digest(held_key)


def published_key(tenant: str, job_id: str, held_key: str) -> str:
    """Where an approved copy goes: the artifact key a complete job's output would have had."""
    return artifact_key(tenant, job_id, held_digest(held_key))


@dataclass(frozen=True, slots=True)
class Reviews:
    """A tenant's reviewer deciding held jobs; each method is blocking (the API runs it in a
    thread) and answers ``NotFound`` for a job that is not theirs or not in review."""

    queue: Queue
    blobs: BlobStore
    scratch_dir: Path
    clock: Callable[[], float]

    @classmethod
    def of(cls, services: Services) -> Reviews:
        return cls(
            services.store.queue, services.blobs, services.settings.scratch_dir, services.clock
        )

    def _held(self, job_id: str, tenant: str) -> tuple[Job, str]:
        job = self.queue.get(job_id, tenant=tenant)
        if job is None or job.state is not JobState.REVIEW or not job.artifact_key:
            raise NotFound("no held output for this job")
        return job, job.artifact_key

    def _not_rebuilding(self, job_id: str, tenant: str) -> None:
        """``Conflict`` for a job a reviewer's Apply sent back that is not held again yet."""
        job = self.queue.get(job_id, tenant=tenant)
        if job is not None and rebuilding(job):
            raise Conflict(REBUILDING)

    def open_held(self, job_id: str, tenant: str) -> tuple[BinaryIO, int]:
        """The held output's open handle and size, to be streamed to the reviewer."""
        _, key = self._held(job_id, tenant)
        size = self.blobs.size(key)
        return self.blobs.open(key), size

    def approve(self, job_id: str, tenant: str, *, key_id: str) -> Job:
        """Publish the held copy under an artifact key of its own; the job completes, and its
        source, delivered now, goes. A changed output (``OUTPUT_CHANGED``) is held under its
        versioned artifact key already: that key is published as it is, and the copy stored
        before it stays untouched. ``key_id`` (the deciding key's ``k_…``) is recorded."""
        job, held = self._held(job_id, tenant)
        in_place = is_artifact_key(held)
        if in_place:
            published, sha = held, stored_sha256(self.blobs, held)
        else:
            published, sha = published_key(job.tenant, job.id, held), held_digest(held)
            self._copy(held, published)
        if job.order.sidecar and not self.blobs.exists(sidecar_key(published)):
            # before the job completes: a failure here leaves it in review, to approve again
            self._sidecar(job, published)
        ok = self.queue.decide_review(
            job_id,
            tenant,
            approve=True,
            now=self.clock(),
            key_id=key_id,
            detail={"artifact_key": published, "artifact_sha256": sha},
            artifact_key=published,
            artifact_sha256=sha,
        )
        if not ok:
            if not in_place:  # expired or decided meanwhile: the copy made for publishing goes
                self.blobs.delete(published)
                self.blobs.delete(sidecar_key(published))
            raise NotFound("the job is no longer in review")
        if not in_place:
            self.blobs.delete(held)
        if job.source_key:  # delivered: the source goes, and with it any way to run the job again
            self.blobs.delete(job.source_key)
            self.queue.delete_source_key(job_id)
        return self._now(job_id, tenant)

    def apply(self, job_id: str, tenant: str, corrections: Corrections, *, key_id: str) -> Job:
        """A reviewer's corrections (the whole set): the job is rebuilt from its source through
        the redaction path with them, by a worker of the interactive lane, and held again —
        ``CORRECTED`` when every check passes, the check's reason when one does not. The copy
        held now goes; ``key_id`` and how many boxes of each kind are recorded. A correction
        naming a page the held copy does not have, or a box outside its page, is
        ``BadRequest`` first, and nothing changes. A second Apply while the rebuild of the
        first is waiting or running is ``Conflict``: the first stands, never lost."""
        self._not_rebuilding(job_id, tenant)
        job, held = self._held(job_id, tenant)
        if not job.source_key or not job.order.redacts:
            raise Conflict(
                "this held job cannot be rebuilt: it is not a redaction, or its source is gone"
            )
        # judged against the held copy's pages before anything changes: a page past the end
        # or a box off its page is 400, and the held copy and its review stay as they are
        if job.review_sheet is not None:
            ReviewSheet.parse(job.review_sheet).check(corrections)
        elif job.pages:
            _within_pages(corrections, job.pages)
        ok = self.queue.reopen_for_corrections(
            job_id,
            tenant,
            corrections=corrections.as_json(),
            counts=corrections.counts(),
            now=self.clock(),
            key_id=key_id,
        )
        if not ok:  # decided, or another Apply reopened it, since it was read
            now = self.queue.get(job_id, tenant=tenant)
            if now is not None and rebuilding(now):
                raise Conflict(REBUILDING)
            raise NotFound("the job is no longer in review")
        if not is_artifact_key(held):  # a reviewer-only copy: the rebuild makes the next one
            self.blobs.delete(held)
        return self._now(job_id, tenant)

    def reject(self, job_id: str, tenant: str, *, key_id: str) -> Job:
        """The job ends rejected; the held copy and the source go. ``key_id`` is recorded."""
        job = self.queue.get(job_id, tenant=tenant)
        if job is None or job.state is not JobState.REVIEW:
            raise NotFound("no such job in review")
        # what was held, by its digest: the copy itself goes, so the record names it
        held: dict[str, str] = {}
        if job.artifact_key:  # a changed output is held under its artifact key: hash it
            in_place = is_artifact_key(job.artifact_key)
            digest = (
                stored_sha256(self.blobs, job.artifact_key)
                if in_place
                else held_digest(job.artifact_key)
            )
            held = {"held_sha256": digest}
        ok = self.queue.decide_review(
            job_id, tenant, approve=False, now=self.clock(), key_id=key_id, detail=held
        )
        if not ok:
            raise NotFound("the job is no longer in review")
        for key in (job.artifact_key, job.source_key):
            if key:
                delete_output(self.blobs, key)
        return self._now(job_id, tenant)

    def _sidecar(self, job: Job, published: str) -> None:
        """The published copy's sidecar text, read from it where its review sheet says each
        page lies (the held copy had none: it was not delivered)."""
        # imported here: the API process loads no PDF library until a sidecar is made
        from pressroom.pipeline.sidecar import held_sidecar

        if job.review_sheet is None:
            return
        sheet = ReviewSheet.parse(job.review_sheet)
        with job_scratch(self.scratch_dir) as scratch:
            copy = scratch / "published.pdf"
            self.blobs.get_to_path(published, copy)
            text = scratch / "published.txt"
            text.write_text(held_sidecar(copy, sheet), encoding="utf-8")
            self.blobs.put_file(sidecar_key(published), text)

    def _copy(self, src: str, dest: str) -> None:
        with job_scratch(self.scratch_dir) as scratch:
            self.blobs.get_to_path(src, scratch / "copy")
            self.blobs.put_if_absent(dest, scratch / "copy")

    def _now(self, job_id: str, tenant: str) -> Job:
        done = self.queue.get(job_id, tenant=tenant)
        assert done is not None
        return done


def _within_pages(corrections: Corrections, pages: int) -> None:
    """A held copy without a review sheet: only its page count to judge by."""
    for name, areas in corrections.as_json().items():
        for i, area in enumerate(areas):
            if not 1 <= area["page"] <= pages:
                raise BadRequest(
                    f"corrections.{name}[{i}]: page {area['page']} is not in the document "
                    f"({pages} page(s))"
                )
