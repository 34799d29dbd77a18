"""The worker's job runner: one job, start to end — claim → verify → fetch → the pipeline →
publish → record — under a heartbeat, stopping at a stage boundary when its tenant cancels it.
The document itself is the pipeline's business."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pressroom import ENGINE_VERSION, tracing
from pressroom.corrections import Corrections, ReviewSheet, corrected_reason
from pressroom.errors import (
    BlobNotFound,
    Corrected,
    OutputChanged,
    PermanentError,
    ReviewRequested,
    ReviewRequired,
    StoreUnavailable,
    TransientError,
    UnauthorizedCustomer,
)
from pressroom.jobs.model import Job, JobState, Lane, Task
from pressroom.jobs.store import Tasks, WorkerQueue
from pressroom.jobs.tasks import page_ranges
from pressroom.labels import Labels
from pressroom.logs import bind_job, bind_stage
from pressroom.models import SourceKind
from pressroom.pipeline.check import CheckedPage
from pressroom.pipeline.core import (
    DocumentResult,
    JobOptions,
    assemble,
    page_records,
    read_page_records,
    remaining,
)
from pressroom.pipeline.inspect import file_sha256, inspect_source
from pressroom.pipeline.ocr import OcrEngine, engine_for
from pressroom.pipeline.ocrmode import ocr_mode
from pressroom.pipeline.plain import read_range
from pressroom.pipeline.sidecar import sidecar_path, sidecar_text
from pressroom.pipeline.stop import stop_when
from pressroom.processing import Processing
from pressroom.redact.detect.ner import model_identity
from pressroom.redact.policy import RedactionPolicy
from pressroom.scratch import job_scratch
from pressroom.service import Services
from pressroom.settings import Limits, RedactionSettings
from pressroom.stages import Stage, StageTimer
from pressroom.storage import (
    artifact_key,
    pages_key,
    part_key,
    parts_prefix,
    review_key,
    sidecar_key,
    versioned_artifact_key,
)
from pressroom.templates import Template, registered_template

log = logging.getLogger("pressroom.worker")


def artifact_digest(
    source_sha256: str,
    template_hash: str,
    policy: RedactionPolicy,
    *,
    engine: str,
    detector: str = "",
    keep_pixels: bool = False,
    output: tuple[str, ...] = (),
) -> str:
    """What makes an output: the source, the template's content, the policy, whether pixels are
    kept, our engine and the OCR engine's version, the detector (its model and the operator's
    recognisers) when something is redacted — and nothing else on the job (a webhook URL or a
    policy's expiry changes no byte of it). Another version is another key, so a retry after an
    upgrade is a new output rather than a changed one."""
    parts: list[object] = [source_sha256, template_hash, list(policy.classes), ENGINE_VERSION]
    if keep_pixels:  # appended only when set: digests of earlier jobs stay what they were
        parts.append("keep-pixels")
    parts += output  # the kind of output asked for (output_digest): none for a plain PDF
    parts.append(engine)
    if detector:
        parts.append(detector)
    material = json.dumps(parts)
    return hashlib.sha256(material.encode()).hexdigest()


def output_digest(options: JobOptions) -> tuple[str, ...]:
    """What of the kind of output asked for changes the artifact: PDF/A, a sidecar text, a
    document without text allowed, an optimisation level (each named only when asked, so the
    digests of jobs that ask for none stay what they were)."""
    asked = options.output_choices()
    out = ["output-type=pdfa"] if asked["output_type"] == "pdfa" else []
    out += [name.replace("_", "-") for name in ("sidecar", "allow_no_text") if asked[name]]
    out += [f"optimize={asked['optimize']}"] if asked["optimize"] else []
    # the languages read with: another set is another text layer (English alone, the default
    # since the start, is not named, so earlier digests stay what they were)
    if options.languages not in ((), ("eng",)):
        out.append("languages=" + "+".join(options.languages))
    if options.ocr != "skip":  # another reading of pages that carry text
        out.append(f"ocr={options.ocr}")
    return tuple(out)


def detector_identity(policy: RedactionPolicy, redaction: RedactionSettings) -> str:
    """The detector a redaction policy runs (model and operator recognisers); "" for none."""
    if not policy.classes:
        return ""
    return json.dumps([model_identity(redaction.ner_model), list(redaction.recognizers)])


def _job_options(
    job: Job,
    template: Template,
    limits: Limits,
    redaction: RedactionSettings,
    deadline: float | None,
    default_langs: tuple[str, ...] = ("eng",),
    *,
    labels: Labels,
) -> tuple[JobOptions, RedactionPolicy]:
    """The job's stored options (an untyped dict) read once, here at the edge, into the typed
    values the pipeline takes."""
    raw = job.options
    # as the intake stored them; a job accepted before languages were per job: the setting's
    languages = tuple(str(raw["languages"]).split("+")) if raw.get("languages") else default_langs
    options = JobOptions(
        template=template,
        # as stored: sealed with the master key when encryption is on
        title=labels.open(job.id, job.title, purpose="title"),
        # checked by a redaction like the title (never drawn): one that carries a value the
        # redaction removes holds the job, and is withheld (``JobRunner._hold``)
        label=labels.open(job.id, job.label),
        when=datetime.fromtimestamp(job.created_at, UTC),
        limits=limits,
        deadline=deadline,
        keep_pixels=bool(raw.get("keep_pixels")),
        redaction=redaction,
        # the kind of output, as the intake stored it (the template's defaults made explicit)
        output_type=str(raw.get("output_type") or "pdf"),
        sidecar=bool(raw.get("sidecar")),
        allow_no_text=bool(raw.get("allow_no_text")),
        optimize=int(raw.get("optimize") or 0),
        languages=languages,
        ocr=ocr_mode(str(raw.get("ocr") or "skip")),
        # a reviewer's corrections (stored by the desk's Apply; checked when they were sent)
        corrections=Corrections.parse(raw["corrections"]) if raw.get("corrections") else None,
    )
    return options, RedactionPolicy(tuple(raw.get("redact") or ()), raw.get("expires_at"))


def _held_anyway(
    job: Job, options: JobOptions, processing: Processing, result: DocumentResult
) -> ReviewRequired | None:
    """A checked redaction that still goes to a person: a rebuild with a reviewer's corrections
    goes back to that reviewer, and a job that asked for review always is reviewed."""
    if not processing.redacts:
        return None
    if options.corrections is not None:
        return Corrected(
            corrected_reason(
                options.corrections,
                sum(result.redacted.values()),
                result.overridden,
                sheet=result.sheet,  # what is burned, counted as the desk counts it
            )
        )
    if job.options.get("review") == "always":
        return ReviewRequested("every check passed; the job asked for a person to approve it")
    return None


def _source_kind(kind: str) -> SourceKind:
    try:
        return SourceKind(kind)
    except ValueError:
        return SourceKind.PDF


class LeaseLost(Exception):
    """This worker no longer holds the job's lease: stop without recording anything."""


class JobCancelled(Exception):
    """The tenant asked the job to stop: leave the stage boundary, end it ``CANCELLED``."""


class Heartbeat:
    """Renews a lease in the background while the stage runs: the job's, or with ``renew``
    a task's."""

    def __init__(
        self,
        services: Services,
        job_id: str,
        owner: str,
        renew: Callable[[], bool] | None = None,
    ) -> None:
        self.services = services
        self.job_id = job_id
        self.owner = owner
        self.renew = renew or self._renew_job
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _renew_job(self) -> bool:
        return self.services.store.queue.heartbeat(
            self.job_id,
            self.owner,
            now=self.services.clock(),
            lease_s=self.services.settings.lease_s,
        )

    def beat(self) -> bool:
        """One heartbeat: the lease renewed, and the worker's own row (admission counts
        workers heard from lately). False once the lease is not this worker's any more."""
        alive = self.renew()
        self.services.store.stats.worker_beat(self.owner, now=self.services.clock())
        return alive

    def _run(self) -> None:
        lease = self.services.settings.lease_s
        while not self._stop.wait(lease / 3):
            try:
                alive = self.beat()
            except TransientError:
                continue  # the store is down for a moment: the lease may still hold
            if not alive:
                self.lost = True
                return


class ProgressWriter:
    """The pipeline's page-by-page progress onto the job's row, for the desk to show: the
    first step at once, then at most one write a second (a fast document writes a few rows,
    not one per page), and the last step always. A store that is down for a moment costs a
    step shown, never the job."""

    def __init__(
        self,
        queue: WorkerQueue,
        job_id: str,
        owner: str,
        *,
        every_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.queue = queue
        self.job_id = job_id
        self.owner = owner
        self.every_s = every_s
        self.clock = clock
        self._last: float | None = None

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if done < total and self._last is not None and now - self._last < self.every_s:
            return
        self._last = now
        with contextlib.suppress(TransientError):
            self.queue.set_progress(self.job_id, self.owner, done, total)


class TaskStopped(Exception):
    """The range is not this worker's any more (its job was cancelled or ended, or its lease
    lapsed): stop at the page boundary, recording nothing."""


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

    def _stop_check(self, job: Job) -> Callable[[], None]:
        """What every loop over pages asks before a page (``pipeline.stop``): a cancel asked
        for ends the job there, not at the next stage."""

        def check() -> None:
            if self.queue.cancel_requested(job.id):
                raise JobCancelled

        return check

    @contextmanager
    def _stage(self, job: Job, stage: Stage, carried: list[float] | None = None) -> Iterator[None]:
        """One of the runner's stages; before it starts, the boundary where a cancel stops
        the job (the pipeline's own stages run inside ``process``, uninterrupted).
        ``carried``: seconds spent on it elsewhere, added as the block fills them in (a split
        job's ranges: its ``process`` is every range's, what admission's per-page measure
        divides)."""
        if self.queue.cancel_requested(job.id):
            raise JobCancelled
        name = stage.value
        self.queue.set_stage(job.id, self.owner, name, now=self.services.clock())
        bind_stage(name)
        start = time.perf_counter()
        try:
            with tracing.span(name):
                yield
        finally:
            seconds = time.perf_counter() - start + sum(carried or ())
            self.queue.record_timing(job.id, job.attempts, name, seconds, now=self.services.clock())

    @contextmanager
    def _scratch(self, job: Job) -> Iterator[Path]:
        """The job's private scratch; its lifetime is recorded (a metric with an SLA)."""
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
                    now=self.services.clock(),
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
            self._run(job, assembling)

    def _run(self, job: Job, assembling: bool = False) -> None:
        services = self.services
        queue = self.queue
        now = services.clock
        # from when this attempt could start (accepted, or its backoff ended) to now, the claim
        if not assembling:
            wait = now() - job.next_eligible_at
            queue.record_timing(job.id, job.attempts, Stage.QUEUE.value, max(wait, 0.0), now=now())
        deadline = None
        if job.deadline_at is not None:
            deadline = time.monotonic() + (job.deadline_at - now())
        try:
            with (
                Heartbeat(services, job.id, self.owner) as heartbeat,
                self._scratch(job) as scratch,
            ):
                if job.source_key is None:
                    raise PermanentError("the source was already deleted", code="CORRUPT")
                split, done = self.tasks.progress(job.id)
                if split and done < split:
                    # its ranges are still out (the lease of its assembly lapsed early)
                    if not self.tasks.resume(job, self.owner, now=now()):
                        raise JobCancelled if queue.cancel_requested(job.id) else LeaseLost
                    return
                if split:
                    ranges_s: list[float] = []
                    with (
                        self._stage(job, Stage.PROCESS, carried=ranges_s),
                        stop_when(self._stop_check(job)),
                    ):
                        built, result = self._assemble(job, scratch, ranges_s)
                    if heartbeat.lost:
                        raise LeaseLost
                    self._publish(job, built, result)
                    return
                with self._stage(job, Stage.VERIFY):
                    try:
                        decision = services.verifier.verify(
                            job.tenant, job.customer, timeout=remaining(deadline)
                        )
                    except UnauthorizedCustomer:
                        queue.set_verification(job.id, self.owner, "denied")
                        raise
                    queue.set_verification(job.id, self.owner, decision)
                source = scratch / "source"
                with self._stage(job, Stage.FETCH):
                    try:
                        services.blobs.get_to_path(job.source_key, source)
                    except BlobNotFound:
                        raise PermanentError(
                            "the job's source is missing from storage", code="SOURCE_MISSING"
                        ) from None
                remaining(deadline)
                template = registered_template(job.template, services.settings.template_dirs)
                options, policy = self._options(job, template, deadline)
                processing = Processing(policy)
                built = scratch / "output.pdf"
                timer = StageTimer()
                if not processing.redacts and self._split(job, source, options, timer):
                    return
                with self._stage(job, Stage.PROCESS), stop_when(self._stop_check(job)):
                    try:
                        result = processing(
                            source,
                            built,
                            options,
                            engine_for(self.engine, options.languages),
                            timer=timer,
                            # a rebuild with a reviewer's corrections: they watch it at the desk
                            progress=(
                                ProgressWriter(queue, job.id, self.owner)
                                if options.corrections is not None
                                else None
                            ),
                        )
                    except ReviewRequired as exc:
                        # a job held for review shows where its time went, like any other
                        self._record_stages(job, timer)
                        if not processing.holds_output:
                            raise
                        self._hold(job, exc, built)
                        return
                self._record_stages(job, timer)
                if heartbeat.lost:
                    # another worker has the job now (our lease lapsed): leave it to them
                    raise LeaseLost
                held = _held_anyway(job, options, processing, result)
                if held is not None:
                    held.sheet = result.sheet
                    self._hold(job, held, built)
                    return
                self._publish(job, built, result)
                return
        except LeaseLost:
            log.warning("lease lost; the job was left to its new owner", extra={"job_id": job.id})
        except JobCancelled:
            self._cancel(job)
        except PermanentError as exc:
            state = queue.fail(
                job.id,
                self.owner,
                code=exc.code,
                message=exc.message,
                permanent=True,
                now=now(),
                policy=services.retry,
            )
            if state is None and self._cancel(job):
                return
            if state is JobState.REJECTED:
                self._drop_parts(job)
            log.info("job rejected", extra={"job_id": job.id, "code": exc.code})
        except ReviewRequired as exc:
            if not queue.hold(job.id, self.owner, code=exc.code, message=exc.message, now=now()):
                self._cancel(job)
                return
            log.info("job held for review", extra={"job_id": job.id, "code": exc.code})
        except TransientError as exc:
            state = queue.fail(
                job.id,
                self.owner,
                code=exc.code,
                message=exc.message,
                permanent=False,
                now=now(),
                policy=services.retry,
            )
            if state is None and self._cancel(job):
                return
            if state is JobState.REJECTED:
                self._drop_parts(job)
            log.info(
                "job attempt failed",
                extra={"job_id": job.id, "code": exc.code, "state": str(state)},
            )
        except Exception:
            # A bug of ours: retrying cannot help. The traceback names the job id only.
            log.exception("internal error", extra={"job_id": job.id})
            if (
                queue.fail(
                    job.id,
                    self.owner,
                    code="INTERNAL_ERROR",
                    message="an internal error stopped the job",
                    permanent=True,
                    now=now(),
                    policy=services.retry,
                )
                is None
            ):
                self._cancel(job)
            else:
                self._drop_parts(job)

    def _cancel(self, job: Job, *made: str) -> bool:
        """End the job ``CANCELLED`` when its tenant asked (every other end is refused for such
        a job), deleting its source and whatever this attempt stored (``made``); the scratch
        is already gone with its ``with``. False: no cancel was asked, or the lease was lost."""
        if not self.queue.end_cancelled(job.id, self.owner, now=self.services.clock()):
            return False
        for key in (job.source_key, *made):
            if key:
                self.services.blobs.delete(key)
        self._drop_parts(job)
        log.info("job cancelled", extra={"job_id": job.id, "code": "CANCELLED"})
        return True

    def _options(
        self, job: Job, template: Template, deadline: float | None
    ) -> tuple[JobOptions, RedactionPolicy]:
        """The job's options under this worker's settings and keys."""
        settings = self.services.settings
        return _job_options(
            job,
            template,
            settings.limits,
            settings.redaction,
            deadline,
            settings.languages,
            labels=self.services.labels,
        )

    def _publish(self, job: Job, built: Path, result: DocumentResult) -> None:
        """Store the checked output under its digest's key (put-if-absent: a retry that made
        other bytes is held apart for a human) and complete the job."""
        services, queue, now = self.services, self.queue, self.services.clock
        settings = services.settings
        template = registered_template(job.template, settings.template_dirs)
        options, policy = self._options(job, template, None)
        digest = artifact_digest(
            job.source_sha256,
            template.content_hash,
            policy,
            engine=self.engine.name,
            detector=detector_identity(policy, settings.redaction),
            keep_pixels=options.keep_pixels,
            output=output_digest(options),
        )
        key = artifact_key(job.tenant, job.id, digest)
        text: Path | None = None
        if options.wants_sidecar:
            text = sidecar_path(built)
            if not text.exists():  # a split job's assembled output: read it back now
                offset = result.output_pages - result.pages
                text.write_text(sidecar_text(built, result.layouts, offset), encoding="utf-8")
        with self._stage(job, Stage.PUBLISH):
            written = services.blobs.put_if_absent(key, built)
            if not written and self._stored_sha(key) != result.output_sha256:
                # an earlier attempt stored other bytes under this digest: neither
                # copy may win silently, so the new one is kept apart for a human
                changed = self._store_version(job, digest, built, result.output_sha256)
                if text is not None:  # beside the copy it belongs to, never over another's
                    services.blobs.put_file(sidecar_key(changed), text)
                self._hold(
                    job,
                    OutputChanged("a retry made an output that differs from the stored one"),
                    built,
                    key=changed,
                )
                return
            if text is not None:
                # these very bytes are stored: their text goes beside them, before the job
                # completes (a complete job's sidecar link always finds its text)
                services.blobs.put_file(sidecar_key(key), text)
            if queue.complete(
                job.id,
                self.owner,
                artifact_key=key,
                artifact_sha256=result.output_sha256,
                pages=result.pages,
                now=now(),
                result={
                    "text_layer": result.text_layer,
                    "flattened": result.flattened,
                    "notes": result.notes,
                    # the source's carriers a redaction left out (kinds, never their text)
                    "dropped": list(result.dropped),
                    # what the output check found that delivers all the same (page numbers and
                    # shares, never text)
                    "warnings": list(result.warnings),
                },
            ):
                if job.source_key:
                    services.blobs.delete(job.source_key)
                queue.delete_source_key(job.id)
                self._drop_parts(job)
            elif self._cancel(job, key):
                return
        log.info(
            "job complete",
            extra={"job_id": job.id, "pages": result.pages, "attempt": job.attempts},
        )

    # --- a big document's page ranges ----------------------------------------------------

    def _split(self, job: Job, source: Path, options: JobOptions, timer: StageTimer) -> bool:
        """Whether the job was split: a document over the split size gets its page ranges
        and the job is released to them (any worker of the lane takes them)."""
        split_pages = self.services.settings.split_pages
        if not split_pages:
            return False
        with timer.stage(Stage.INSPECT):
            pages = len(inspect_source(source, options.limits).pages)
        ranges = page_ranges(pages, split_pages)
        if not ranges:
            return False
        self._record_stages(job, timer)
        if not self.tasks.split(job, self.owner, ranges, now=self.services.clock()):
            raise JobCancelled if self.queue.cancel_requested(job.id) else LeaseLost
        log.info("job split", extra={"job_id": job.id, "pages": pages, "count": len(ranges)})
        return True

    def run_task(self, task: Task, job: Job) -> None:
        """Read one page range of a split job into its part; the worker whose range is the
        last one done assembles and publishes the job."""
        with bind_job(
            job_id=job.id, tenant=job.tenant, lane=job.lane.value, stage=None, trace_id=None
        ):
            assembly = self._run_task(task, job)
        if assembly is not None:
            self.run(assembly, assembling=True)

    def _run_task(self, task: Task, job: Job) -> Job | None:
        services, now = self.services, self.services.clock
        lease = services.settings.lease_s
        deadline = None
        if job.deadline_at is not None:
            deadline = time.monotonic() + (job.deadline_at - now())

        def renew() -> bool:
            return self.tasks.heartbeat(task, self.owner, now=now(), lease_s=lease)

        def boundary() -> None:
            # every page: the range is still this worker's (a cancel deletes it)
            if not renew():
                raise TaskStopped

        stored: list[str] = []
        try:
            with (
                Heartbeat(services, job.id, self.owner, renew=renew),
                job_scratch(services.settings.scratch_dir) as scratch,
            ):
                if job.source_key is None:
                    raise PermanentError("the source was already deleted", code="CORRUPT")
                source = scratch / "source"
                try:
                    services.blobs.get_to_path(job.source_key, source)
                except BlobNotFound:
                    raise PermanentError(
                        "the job's source is missing from storage", code="SOURCE_MISSING"
                    ) from None
                template = registered_template(job.template, services.settings.template_dirs)
                options, _policy = self._options(job, template, deadline)
                part = scratch / "part.pdf"
                timer = StageTimer()
                start = time.perf_counter()
                try:
                    pages = read_range(
                        source,
                        part,
                        options,
                        engine_for(self.engine, options.languages),
                        range(task.first_page, task.end_page),
                        boundary=boundary,
                        timer=timer,
                    ).pages
                finally:
                    self._record_stages(job, timer)
                boundary()
                key = part_key(job.tenant, job.id, task.number)
                record = scratch / "pages.json"
                took = time.perf_counter() - start
                record.write_text(json.dumps({"seconds": took, "pages": page_records(pages)}))
                services.blobs.put_file(pages_key(job.tenant, job.id, task.number), record)
                stored.append(pages_key(job.tenant, job.id, task.number))
                services.blobs.put_file(key, part)
                stored.append(key)
            recorded, assembly = self.tasks.done(task, self.owner, key, now=now(), lease_s=lease)
            if not recorded:
                raise TaskStopped
            log.info("range done", extra={"job_id": job.id, "pages": len(pages)})
            return assembly
        except TaskStopped:
            for blob in stored:
                services.blobs.delete(blob)
            log.info("range stopped", extra={"job_id": job.id})
        except (PermanentError, TransientError, ReviewRequired) as exc:
            self._task_failed(task, job, exc.code, exc.message, not isinstance(exc, TransientError))
        except Exception:
            log.exception("internal error", extra={"job_id": job.id})
            self._task_failed(
                task, job, "INTERNAL_ERROR", "an internal error stopped the job", True
            )
        return None

    def _task_failed(self, task: Task, job: Job, code: str, message: str, permanent: bool) -> None:
        state = self.tasks.fail(
            task,
            self.owner,
            code=code,
            message=message,
            permanent=permanent,
            now=self.services.clock(),
            policy=self.services.retry,
        )
        if state is JobState.REJECTED:
            self._drop_parts(job)
        log.info(
            "range failed",
            extra={"job_id": job.id, "code": code, "state": str(state)},
        )

    def _assemble(
        self, job: Job, scratch: Path, ranges_s: list[float]
    ) -> tuple[Path, DocumentResult]:
        """A split job's parts, fetched in page order, made into one checked output;
        ``ranges_s`` gets the seconds each range took."""
        services = self.services
        settings = services.settings
        template = registered_template(job.template, settings.template_dirs)
        deadline = None
        if job.deadline_at is not None:
            deadline = time.monotonic() + (job.deadline_at - services.clock())
        options, _policy = self._options(job, template, deadline)
        split, _done = self.tasks.progress(job.id)
        parts: list[Path] = []
        pages: list[CheckedPage] = []
        try:
            for number in range(split):
                part = scratch / f"part{number:04d}.pdf"
                services.blobs.get_to_path(part_key(job.tenant, job.id, number), part)
                parts.append(part)
                with services.blobs.open(pages_key(job.tenant, job.id, number)) as fh:
                    record = json.loads(fh.read())
                pages += read_page_records(record["pages"])
                ranges_s.append(float(record["seconds"]))
        except BlobNotFound:
            # a part went missing: the document is read again from the start next time
            self.tasks.clear(job.id)
            raise StoreUnavailable(
                "a page range's part is missing; the job is read again"
            ) from None
        built = scratch / "output.pdf"
        timer = StageTimer()
        try:
            result = assemble(
                parts,
                pages,
                built,
                options,
                engine_for(self.engine, options.languages),
                timer,
                source_sha256=job.source_sha256,
                kind=_source_kind(job.kind),
            )
        finally:
            self._record_stages(job, timer)
        return built, result

    def _drop_parts(self, job: Job) -> None:
        """A job's tasks and their parts, gone (it completed, failed or was cancelled)."""
        self.tasks.clear(job.id)
        prefix = parts_prefix(job.tenant, job.id)
        for key, _at in list(self.services.blobs.list(prefix)):
            with contextlib.suppress(BlobNotFound):
                self.services.blobs.delete(key)

    def _record_stages(self, job: Job, timer: StageTimer) -> None:
        """The pipeline's stage timings, stored under this attempt."""
        for stage, seconds in timer.totals.items():
            self.queue.record_timing(
                job.id, job.attempts, stage, seconds, now=self.services.clock()
            )

    def _hold(self, job: Job, exc: ReviewRequired, built: Path, *, key: str | None = None) -> None:
        """Keep the doubtful output privately for a reviewer (no link is ever made for it);
        ``key``: where it is already stored (a changed output's versioned key)."""
        if key is None and built.exists():
            key = review_key(job.tenant, job.id, file_sha256(built))
            self.services.blobs.put_file(key, built)
        if self._label_carries(job, exc):
            # before the hold is seen: the job never shows the value as its name again, and
            # an approved copy downloads as ID.pdf
            self.queue.withhold_label(job.id, self.owner)
            log.info("label withheld", extra={"job_id": job.id})
        sheet = exc.sheet.as_json() if isinstance(exc.sheet, ReviewSheet) else None
        if not self.queue.hold(
            job.id,
            self.owner,
            code=exc.code,
            message=exc.message,
            now=self.services.clock(),
            artifact_key=key,
            sheet=sheet,
            result=exc.result,
        ):
            self._cancel(job, *([key] if key else []))
            return
        log.info("job held for review", extra={"job_id": job.id, "code": exc.code})

    def _label_carries(self, job: Job, exc: ReviewRequired) -> bool:
        """Whether a held redaction's label carries a value it found (the engine's label
        check, or any finding's value in it)."""
        if job.label is None:
            return False
        from pressroom.redact.leaks import LABEL_HELD, carries_value  # a redaction's module

        if exc.message == LABEL_HELD:
            return True
        values = [str(f.value) for f in exc.findings if isinstance(getattr(f, "value", None), str)]
        return carries_value(self.services.labels.open(job.id, job.label), values)

    def _store_version(self, job: Job, digest: str, built: Path, sha: str) -> str:
        """The new output under the first free versioned key (v2, v3, …), never over another
        blob; a version already holding these very bytes (an earlier attempt's) is reused."""
        version = 2
        while True:
            key = versioned_artifact_key(job.tenant, job.id, digest, version)
            if self.services.blobs.put_if_absent(key, built) or self._stored_sha(key) == sha:
                return key
            version += 1

    def _stored_sha(self, key: str) -> str:
        digest = hashlib.sha256()
        with self.services.blobs.open(key) as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
