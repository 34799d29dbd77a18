"""The worker's run of one job, start to end, through its public entry (``run_next``) on the
in-memory job store and a local blob folder: what a job ends as, what is stored and what is
kept, for a publish, a hold, a cancel, a retry and a dead letter. No database: the same paths
on SQLite and PostgreSQL are in ``tests/integration`` (``test_service``, ``test_cancel``)."""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path

import pytest

from pressroom.errors import StorageUnavailable
from pressroom.jobs.backoff import RetryPolicy
from pressroom.jobs.model import Job, JobState, Lane, NewJob
from pressroom.redact.policy import RedactionPolicy
from pressroom.service import Services
from pressroom.storage import artifact_key, source_key
from pressroom.storage.local import LocalBlobStore
from pressroom.synth import text_pdf
from pressroom.templates import registered_template
from pressroom.testing import FakeOcrEngine, memory_services
from pressroom.worker.publish import artifact_digest
from pressroom.worker.runner import JobRunner
from tests.conftest import FakeClock

LANES = (Lane.BULK, Lane.INTERACTIVE)
NO_JITTER = RetryPolicy(max_attempts=3, base_s=5, cap_s=60, uniform=lambda a, b: a)
ENGINE = FakeOcrEngine()


@pytest.fixture
def services(tmp_path: Path, clock: FakeClock) -> Services:
    return memory_services(tmp_path, clock=clock, retry=NO_JITTER)


def submit(services: Services, tmp_path: Path, *, stored: bool = True) -> Job:
    """A born-digital one-page PDF accepted for tenant acme: its source stored, then its row,
    as the intake does (``stored=False``: the row alone, its source lost)."""
    job_id = str(uuid.uuid4())
    pdf = text_pdf([["Quarterly report", "Ordinary words stay."]], tmp_path / f"{job_id}.pdf")
    key = source_key("acme", job_id)
    if stored:
        services.blobs.put_file(key, pdf)
    new = NewJob(
        id=job_id,
        tenant="acme",
        lane=Lane.BULK,
        source_key=key,
        source_sha256=hashlib.sha256(pdf.read_bytes()).hexdigest(),
        source_bytes=pdf.stat().st_size,
        kind="pdf",
        template="plain",
    )
    job, created = services.store.queue.insert(new, now=services.clock(), max_attempts=3)
    assert created
    return job


def current(services: Services, job: Job) -> Job:
    got = services.store.queue.get(job.id)
    assert got is not None
    return got


def expected_key(services: Services, job: Job) -> str:
    """Where a plain job's output is published: its tenant, its id and the digest of what
    makes the output (the source, the template, the engine)."""
    template = registered_template(job.template, services.settings.template_dirs)
    digest = artifact_digest(
        job.source_sha256, template.content_hash, RedactionPolicy(()), engine=ENGINE.name
    )
    return artifact_key(job.tenant, job.id, digest)


def stored_bytes(services: Services, key: str) -> bytes:
    with services.blobs.open(key) as fh:
        return fh.read()


def test_a_plain_job_is_published_under_its_digest_and_its_source_goes(
    services: Services, tmp_path: Path
) -> None:
    job = submit(services, tmp_path)
    runner = JobRunner(services, ENGINE, "w1")
    ran = runner.run_next(LANES)
    assert ran is not None and ran.id == job.id
    done = current(services, job)
    assert (done.state, done.reason, done.attempts, done.pages) == (JobState.COMPLETE, None, 1, 1)
    assert done.artifact_key == expected_key(services, job)
    body = stored_bytes(services, done.artifact_key)
    assert body.startswith(b"%PDF") and hashlib.sha256(body).hexdigest() == done.artifact_sha256
    assert done.result is not None and {"text_layer", "flattened", "notes"} <= set(done.result)
    # delivered: the source is deleted, from storage and from the row, and the lease is gone
    assert done.source_key is None and list(services.blobs.list("sources")) == []
    assert done.lease_owner is None and done.stage is None
    assert {"queue", "fetch", "process", "publish"} <= set(done.timings)
    assert runner.run_next(LANES) is None  # nothing else waits


def test_an_output_that_differs_from_the_one_stored_is_held_for_review_beside_it(
    services: Services, tmp_path: Path
) -> None:
    # an earlier attempt stored other bytes under this job's digest and died before recording
    # them: neither copy may win silently
    job = submit(services, tmp_path)
    first = expected_key(services, job)
    earlier = tmp_path / "earlier.pdf"
    earlier.write_bytes(b"%PDF-1.7\n% an earlier attempt's output\n")
    services.blobs.put_file(first, earlier)
    assert JobRunner(services, ENGINE, "w1").run_next(LANES) is not None
    held = current(services, job)
    assert (held.state, held.reason) == (JobState.REVIEW, "OUTPUT_CHANGED")
    assert held.artifact_key == first.removesuffix(".pdf") + ".v2.pdf"
    assert stored_bytes(services, first) == earlier.read_bytes()  # untouched
    assert stored_bytes(services, held.artifact_key).startswith(b"%PDF")
    # held, not delivered: the source stays for a reviewer's decision
    assert held.source_key is not None and services.blobs.exists(held.source_key)
    assert [j.id for j in services.store.queue.in_review("acme")] == [job.id]


def test_a_job_cancelled_while_it_runs_ends_cancelled_at_the_next_stage_and_keeps_nothing(
    services: Services, tmp_path: Path
) -> None:
    job = submit(services, tmp_path)
    asked: list[str] = []

    def cancel_once_claimed(claimed: Job | None) -> None:
        # the tenant's cancel arrives just after the claim, before the first stage
        if claimed is not None:
            cancel = services.store.queue.cancel(claimed.id, "acme", now=services.clock())
            assert cancel is not None
            asked.append(cancel.outcome)

    runner = JobRunner(services, ENGINE, "w1", on_job=cancel_once_claimed)
    assert runner.run_next(LANES) is not None
    assert asked == ["requested"]
    final = current(services, job)
    assert (final.state, final.reason) == (JobState.REJECTED, "CANCELLED")
    assert final.artifact_key is None and final.source_key is None
    assert list(services.blobs.list("")) == []  # no source, no artifact
    assert runner.run_next(LANES) is None


class FlakyBlobs(LocalBlobStore):
    """A local blob folder whose first ``failures`` fetches find the storage down."""

    def __init__(self, root: Path, failures: int) -> None:
        super().__init__(root)
        self.failures = failures

    def get_to_path(self, key: str, dest: Path) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise StorageUnavailable("the storage did not answer")
        super().get_to_path(key, dest)


def test_a_transient_failure_is_retried_after_its_backoff_and_then_published(
    services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    services.blobs = FlakyBlobs(tmp_path / "blobs", failures=1)
    job = submit(services, tmp_path)
    runner = JobRunner(services, ENGINE, "w1")
    assert runner.run_next(LANES) is not None
    waiting = current(services, job)
    assert (waiting.state, waiting.reason, waiting.attempts) == (
        JobState.RETRYING,
        "STORAGE_UNAVAILABLE",
        1,
    )
    assert waiting.next_eligible_at == clock() + NO_JITTER.base_s  # the first backoff
    assert waiting.lease_owner is None and services.blobs.exists(job.source_key or "")
    clock.advance(NO_JITTER.base_s - 1)
    assert runner.run_next(LANES) is None  # not yet
    clock.advance(1)
    assert runner.run_next(LANES) is not None
    done = current(services, job)
    assert (done.state, done.attempts) == (JobState.COMPLETE, 2)
    assert done.artifact_key == expected_key(services, job)


def test_a_transient_failure_every_time_is_dead_lettered_once_its_attempts_are_spent(
    services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    services.blobs = FlakyBlobs(tmp_path / "blobs", failures=99)
    job = submit(services, tmp_path)
    runner = JobRunner(services, ENGINE, "w1")
    for _ in range(NO_JITTER.max_attempts):
        assert runner.run_next(LANES) is not None
        clock.advance(NO_JITTER.cap_s)
    dead = current(services, job)
    assert (dead.state, dead.reason, dead.attempts) == (JobState.REJECTED, "RETRIES_EXHAUSTED", 3)
    # a dead letter keeps its source, for an operator's redrive
    assert dead.source_key is not None and services.blobs.exists(dead.source_key)
    assert runner.run_next(LANES) is None


def test_a_permanent_failure_is_dead_lettered_at_once_with_its_code(
    services: Services, tmp_path: Path
) -> None:
    job = submit(services, tmp_path, stored=False)  # the row without its source
    runner = JobRunner(services, ENGINE, "w1")
    assert runner.run_next(LANES) is not None
    dead = current(services, job)
    assert (dead.state, dead.reason, dead.attempts) == (JobState.REJECTED, "SOURCE_MISSING", 1)
    assert dead.artifact_key is None and list(services.blobs.list("artifacts")) == []
    counts = services.store.stats.event_counts()
    assert counts[("dead_letter", "bulk", "SOURCE_MISSING")] == 1
    assert runner.run_next(LANES) is None  # never tried again
