"""What one claimed job is while a worker runs it: the claim (the job, this worker, what it
may record on the job's row) and, once its order is read and its template loaded, the run
(``JobRun``) that publish, hold, split, read-range and assemble all take — so none of them
calls back into the runner, and the template that built the bytes is the one their digest
names. The lease's side of a claim (heartbeat, stage boundary, stop check) is ``lease``."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pressroom.errors import BlobNotFound, PermanentError
from pressroom.jobs.model import Job
from pressroom.jobs.store import Tasks, WorkerQueue
from pressroom.orders import JobOrder
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.ocr import OcrEngine, engine_for
from pressroom.redact.policy import RedactionPolicy
from pressroom.service import Services
from pressroom.stages import StageTimer
from pressroom.storage import parts_prefix
from pressroom.templates import Template, registered_template


@dataclass(frozen=True, slots=True)
class ClaimedJob:
    """A job this worker holds the lease of: what it may record on the job's row and blobs,
    before anything of the job is read."""

    services: Services
    owner: str
    job: Job

    @property
    def queue(self) -> WorkerQueue:
        """All of the store a job's run needs."""
        return self.services.store.queue

    @property
    def tasks(self) -> Tasks:
        """A split job's page ranges."""
        return self.services.store.tasks

    def now(self) -> float:
        return self.services.clock()

    def deadline(self) -> float | None:
        """The job's deadline on this process's monotonic clock (None: it has none)."""
        if self.job.deadline_at is None:
            return None
        return time.monotonic() + (self.job.deadline_at - self.now())

    def fetch(self, source: Path) -> None:
        """The job's source, from storage to ``source``."""
        if self.job.source_key is None:
            raise PermanentError("the source was already deleted", code="CORRUPT")
        try:
            self.services.blobs.get_to_path(self.job.source_key, source)
        except BlobNotFound:
            raise PermanentError(
                "the job's source is missing from storage", code="SOURCE_MISSING"
            ) from None

    def record_stages(self, timer: StageTimer) -> None:
        """The pipeline's stage timings, stored under this attempt."""
        for stage, seconds in timer.totals.items():
            self.queue.record_timing(self.job.id, self.job.attempts, stage, seconds, now=self.now())

    def drop_parts(self) -> None:
        """A job's tasks and their parts, gone (it completed, failed or was cancelled)."""
        job = self.job
        self.tasks.clear(job.id)
        for key, _at in list(self.services.blobs.list(parts_prefix(job.tenant, job.id))):
            with contextlib.suppress(BlobNotFound):
                self.services.blobs.delete(key)

    def cancel(self, *made: str) -> bool:
        """End the job ``CANCELLED`` when its tenant asked (every other end is refused for such
        a job), deleting its source and whatever this attempt stored (``made``); the scratch
        is already gone with its ``with``. False: no cancel was asked, or the lease was lost."""
        if not self.queue.end_cancelled(self.job.id, self.owner, now=self.now()):
            return False
        for key in (self.job.source_key, *made):
            if key:
                self.services.blobs.delete(key)
        self.drop_parts()
        return True


@dataclass(frozen=True, slots=True)
class JobRun:
    """One claimed job (or one page range of it) with its order read once: the template
    loaded once, the pipeline's options and the redaction policy made once, under this
    worker's settings and keys. Publish names this template, the one that built the bytes."""

    claim: ClaimedJob
    engine: OcrEngine
    order: JobOrder
    template: Template
    options: JobOptions
    policy: RedactionPolicy
    deadline: float | None
    scratch: Path

    @classmethod
    def open(
        cls, claim: ClaimedJob, engine: OcrEngine, scratch: Path, deadline: float | None
    ) -> JobRun:
        """The run of ``claim``: its order (one this version cannot read is refused, never
        guessed) and its template, loaded here and nowhere else."""
        services, job = claim.services, claim.job
        order = job.order.check()
        template = registered_template(order.template, services.settings.template_dirs)
        labels = services.labels
        options = JobOptions.of(
            order,
            template,
            services.settings,
            # as stored: sealed with the master key when encryption is on
            title=labels.open(job.id, job.title, purpose="title"),
            # checked by a redaction like the title (never drawn): one that carries a value
            # the redaction removes holds the job, and is withheld (``publish.hold``)
            label=labels.open(job.id, job.label),
            when=datetime.fromtimestamp(job.created_at, UTC),
            deadline=deadline,
        )
        policy = RedactionPolicy(order.redact, order.expires_at)
        return cls(claim, engine, order, template, options, policy, deadline, scratch)

    @property
    def job(self) -> Job:
        return self.claim.job

    @property
    def services(self) -> Services:
        return self.claim.services

    def ocr(self) -> OcrEngine:
        """The OCR engine for the job's languages."""
        return engine_for(self.engine, self.options.languages)
