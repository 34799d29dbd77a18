"""The job store port: what the API and the workers need from the queue, nothing more."""

from __future__ import annotations

from typing import Protocol

from pressroom.errors import PressroomError
from pressroom.jobs.backoff import RetryPolicy
from pressroom.jobs.model import Job, JobState, Lane, NewJob


class IdempotencyConflict(PressroomError):
    """The same Idempotency-Key was used before with a different request."""

    code = "IDEMPOTENCY_CONFLICT"
    http_status = 422
    exit_code = 2


class JobStore(Protocol):
    def insert(self, job: NewJob, *, now: float, max_attempts: int) -> tuple[Job, bool]:
        """Insert a job; with an Idempotency-Key already used for the same request, return the
        job it made and False. A different request under the same key is a conflict."""

    def get(self, job_id: str, *, tenant: str | None = None) -> Job | None: ...

    def claim(
        self, lanes: tuple[Lane, ...], owner: str, *, now: float, lease_s: float
    ) -> Job | None:
        """Take the oldest eligible job of the first lane that has one, under a lease."""

    def heartbeat(self, job_id: str, owner: str, *, now: float, lease_s: float) -> bool:
        """Renew a lease; False when it was lost (the job is someone else's now)."""

    def set_stage(self, job_id: str, owner: str, stage: str, *, now: float) -> bool: ...

    def record_timing(
        self, job_id: str, attempt: int, stage: str, seconds: float, *, now: float
    ) -> None: ...

    def complete(
        self,
        job_id: str,
        owner: str,
        *,
        artifact_key: str,
        artifact_sha256: str,
        pages: int,
        now: float,
    ) -> bool: ...

    def fail(
        self,
        job_id: str,
        owner: str,
        *,
        code: str,
        message: str,
        permanent: bool,
        now: float,
        policy: RetryPolicy,
    ) -> JobState | None:
        """Record a failed attempt: dead-letter it, or schedule the retry with backoff."""

    def hold(
        self,
        job_id: str,
        owner: str,
        *,
        code: str,
        message: str,
        now: float,
        artifact_key: str | None = None,
    ) -> bool:
        """Hold the job for a human (state review)."""

    def redrive(self, job_id: str, *, now: float, tenant: str | None = None) -> bool:
        """A rejected job with its source back to ``accepted``; never a complete one."""

    def release(self, job_id: str, owner: str, *, now: float) -> bool:
        """Give a claimed job back untouched (graceful shutdown): no attempt is spent."""

    def rescue_expired(self, *, now: float, policy: RetryPolicy) -> int:
        """Return jobs whose lease expired (a dead worker) to retrying; counts as an attempt."""

    def counts(self) -> dict[tuple[str, str], int]: ...

    def oldest_waiting(self, *, now: float) -> dict[str, float]: ...
