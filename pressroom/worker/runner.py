"""The worker's job runner: one job, start to end — claim → verify → fetch → the pipeline →
publish → record — under a heartbeat, stopping at a stage boundary when its tenant cancels it.
The document itself is the pipeline's business; publishing is ``publish``, a big document's
page ranges ``ranges``, the lease ``lease``, and what a claimed job is while it runs
``context``."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from pressroom import tracing
from pressroom.errors import (
    PermanentError,
    PressroomError,
    ReviewRequired,
    ScannerUnavailable,
    TransientError,
    UnauthorizedCustomer,
)
from pressroom.jobs.model import Job, JobState, Lane, Task
from pressroom.jobs.store import Tasks, WorkerQueue
from pressroom.logs import bind_job
from pressroom.outcomes import Held
from pressroom.pipeline.core import remaining
from pressroom.pipeline.ocr import OcrEngine
from pressroom.pipeline.stop import stop_when
from pressroom.processing import Processing
from pressroom.scanning import scan_file
from pressroom.scratch import job_scratch
from pressroom.service import Services
from pressroom.stages import Stage, StageTimer
from pressroom.worker.context import ClaimedJob, JobRun
from pressroom.worker.lease import (
    Heartbeat,
    JobCancelled,
    LeaseLost,
    ProgressWriter,
    stage,
    stop_check,
    stopped,
)
from pressroom.worker.publish import held_anyway, hold, publish
from pressroom.worker.ranges import assemble_parts, run_range, split

log = logging.getLogger("pressroom.worker")


def scan(claim: ClaimedJob, source: Path, *, unless_scanned: bool = False) -> None:
    """The ``scan`` stage: the fetched source through the malware scanner, each outcome
    counted. ``unless_scanned``: a page range's (and so its assembly's, which reads only the
    ranges' parts) — its job was scanned whole before it was split, so the range scans only
    when no clean scan of the job is recorded: a job split by a worker without a scanner,
    its ranges read after the fleet was given one."""
    services, job = claim.services, claim.job
    scanner = services.scanner
    if scanner is None:
        if services.settings.scanner.kind != "none":
            # configured but never opened (a Services built by hand): fail closed
            raise ScannerUnavailable("PRESSROOM_SCANNER names a scanner this worker lacks")
        return
    if unless_scanned and claim.queue.scanned_clean(job.id):
        return
    with stage(claim, Stage.SCAN):
        scan_file(
            scanner, source, lambda said: claim.queue.record_scan(job.id, said, now=claim.now())
        )


# How an attempt that raised one of our errors ends: whether a retry cannot help, and the
# line logged (with the state the queue recorded, for an attempt that may be retried). A
# bug of ours (any other exception) ends as a permanent INTERNAL_ERROR.
OUTCOMES: dict[type[PressroomError], tuple[bool, str, bool]] = {
    PermanentError: (True, "job rejected", False),
    TransientError: (False, "job attempt failed", True),
}


@dataclass
class JobRunner:
    services: Services
    engine: OcrEngine
    owner: str
    # told each job as it starts and None as it ends (the supervisor's memory and deadline guard)
    on_job: Callable[[Job | None], None] | None = None

    @property
    def queue(self) -> WorkerQueue:
        """All of the store a job's run needs."""
        return self.services.store.queue

    @property
    def tasks(self) -> Tasks:
        """A split job's page ranges."""
        return self.services.store.tasks

    def run_next(self, lanes: tuple[Lane, ...]) -> Job | None:
        """Claim and run the next unit, a page range of a split job or a whole job, in its
        tenant's fair turn (``jobs.claims``); None when neither was waiting."""
        claimed = self.tasks.claim_next(
            lanes, self.owner, now=self.services.clock(), lease_s=self.services.settings.lease_s
        )
        if claimed is None:
            return None
        if self.on_job is not None:
            self.on_job(claimed.job)  # the memory guard watches a range like a job
        try:
            if claimed.task is not None:
                self.run_task(claimed.task, claimed.job)
            else:
                self.run(claimed.job)
        finally:
            if self.on_job is not None:
                self.on_job(None)
        return claimed.job

    @contextmanager
    def _scratch(self, claim: ClaimedJob) -> Iterator[Path]:
        """The job's private scratch; its lifetime is recorded (a metric with an SLA)."""
        job = claim.job
        start = time.perf_counter()
        try:
            with job_scratch(self.services.settings.scratch_dir) as scratch:
                yield scratch
        finally:
            with contextlib.suppress(TransientError):
                self.queue.record_timing(
                    job.id,
                    job.attempts,
                    Stage.SCRATCH.value,
                    time.perf_counter() - start,
                    now=claim.now(),
                )

    def run(self, job: Job, *, assembling: bool = False) -> None:
        """Run a claimed job; ``assembling``: a split job whose last range this worker just
        finished (it waited for its ranges, not in the queue)."""
        with (
            bind_job(
                job_id=job.id,
                tenant=job.tenant,
                lane=job.lane.value,
                stage=None,
                trace_id=job.trace_id,
            ),
            tracing.job_span(
                job.id,
                job.trace_id,
                job.parent_span_id,
                **{"pressroom.lane": job.lane.value, "pressroom.attempt": job.attempts},
            ),
        ):
            self._run(ClaimedJob(self.services, self.owner, job), assembling)

    def _run(self, claim: ClaimedJob, assembling: bool = False) -> None:
        job, queue = claim.job, claim.queue
        # from when this attempt could start (accepted, or its backoff ended) to now, the claim
        if not assembling:
            wait = claim.now() - job.next_eligible_at
            queue.record_timing(
                job.id, job.attempts, Stage.QUEUE.value, max(wait, 0.0), now=claim.now()
            )
        deadline = claim.deadline()
        try:
            with (
                Heartbeat(self.services, job.id, self.owner) as heartbeat,
                self._scratch(claim) as scratch,
            ):
                self._stages(claim, heartbeat, scratch, deadline)
        except LeaseLost:
            log.warning("lease lost; the job was left to its new owner", extra={"job_id": job.id})
        except JobCancelled:
            claim.cancel()
        except ReviewRequired as exc:
            now = claim.now()
            if not queue.hold(job.id, self.owner, code=exc.code, message=exc.message, now=now):
                claim.cancel()
                return
            log.info("job held for review", extra={"job_id": job.id, "code": exc.code})
        except (PermanentError, TransientError) as exc:
            outcome = next(o for kind, o in OUTCOMES.items() if isinstance(exc, kind))
            self._failed(claim, exc.code, exc.message, *outcome)
        except Exception:
            # A bug of ours: retrying cannot help. The traceback names the job id only.
            log.exception("internal error", extra={"job_id": job.id})
            self._failed(claim, "INTERNAL_ERROR", "an internal error stopped the job", True)

    def _failed(
        self,
        claim: ClaimedJob,
        code: str,
        message: str,
        permanent: bool,
        event: str | None = None,
        with_state: bool = False,
    ) -> None:
        """The attempt recorded as failed (dead, or to be retried after its backoff); a job
        whose tenant cancelled it meanwhile ends cancelled instead."""
        job = claim.job
        state = claim.queue.fail(
            job.id,
            self.owner,
            code=code,
            message=message,
            permanent=permanent,
            now=claim.now(),
            policy=self.services.retry,
        )
        if state is None and claim.cancel():
            return
        if state is JobState.REJECTED:
            claim.drop_parts()
        if event is not None:
            extra: dict[str, object] = {"job_id": job.id, "code": code}
            if with_state:
                extra["state"] = str(state)
            log.info(event, extra=extra)

    def _stages(
        self, claim: ClaimedJob, heartbeat: Heartbeat, scratch: Path, deadline: float | None
    ) -> None:
        """The runner's stages of one attempt, from verify to publish (or to the split of a
        big document, or the assembly of its ranges)."""
        services, job, queue = self.services, claim.job, claim.queue
        if job.source_key is None:
            raise PermanentError("the source was already deleted", code="CORRUPT")
        split_count, done = claim.tasks.progress(job.id)
        if split_count and done < split_count:
            # its ranges are still out (the lease of its assembly lapsed early)
            if not claim.tasks.resume(job, self.owner, now=claim.now()):
                raise stopped(claim)
            return
        if split_count:
            ranges_s: list[float] = []
            with stage(claim, Stage.PROCESS, carried=ranges_s), stop_when(stop_check(claim)):
                run = JobRun.open(claim, self.engine, scratch, deadline)
                built, result = assemble_parts(run, ranges_s)
            if heartbeat.lost:
                raise LeaseLost
            publish(run, built, result)
            return
        with stage(claim, Stage.VERIFY):
            try:
                decision = services.verifier.verify(
                    job.tenant, job.customer, timeout=remaining(deadline)
                )
            except UnauthorizedCustomer:
                queue.set_verification(job.id, self.owner, "denied")
                raise
            queue.set_verification(job.id, self.owner, decision)
        source = scratch / "source"
        with stage(claim, Stage.FETCH):
            claim.fetch(source)
        scan(claim, source)  # before anything reads it: the split, the pipeline
        remaining(deadline)
        run = JobRun.open(claim, self.engine, scratch, deadline)
        processing = Processing(run.policy)
        built = scratch / "output.pdf"
        timer = StageTimer()
        if not processing.redacts and split(run, source, timer):
            return
        with stage(claim, Stage.PROCESS), stop_when(stop_check(claim)):
            outcome = processing(
                source,
                built,
                run.options,
                run.ocr(),
                timer=timer,
                # a rebuild with a reviewer's corrections: they watch it at the desk
                progress=(
                    ProgressWriter(queue, job.id, self.owner)
                    if run.options.corrections is not None
                    else None
                ),
            )
            if isinstance(outcome, Held):
                # a job held for review shows where its time went, like any other
                claim.record_stages(timer)
                if not processing.holds_output:
                    raise outcome.reason  # a plain output's doubt: held, with nothing to judge
                hold(run, outcome, built)
                return
        result = outcome
        claim.record_stages(timer)
        if heartbeat.lost:
            # another worker has the job now (our lease lapsed): leave it to them
            raise LeaseLost
        held = held_anyway(run, processing, result)
        if held is not None:
            hold(run, held, built)
            return
        publish(run, built, result)

    def run_task(self, task: Task, job: Job) -> None:
        """Read one page range of a split job into its part; the worker whose range is the
        last one done assembles and publishes the job."""
        with bind_job(
            job_id=job.id, tenant=job.tenant, lane=job.lane.value, stage=None, trace_id=None
        ):
            claim = ClaimedJob(self.services, self.owner, job)
            checked = partial(scan, claim, unless_scanned=True)
            assembly = run_range(claim, self.engine, task, before_read=checked)
        if assembly is not None:
            self.run(assembly, assembling=True)
