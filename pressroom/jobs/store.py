"""The job store's ports, one narrow Protocol per concept, so each caller asks only for what it
uses (the worker for the queue, the delivery pool for the outbox, admission for its figures).
``SqlJobStore`` composes the SQL adapter of each; a fake can implement just one."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from pressroom.jobs.backoff import RetryPolicy
from pressroom.jobs.model import Cancellation, Job, JobState, Lane, NewJob, Task
from pressroom.keys import KeyOwner

if TYPE_CHECKING:
    from sqlalchemy import Connection

    from pressroom.jobs.claims import Claimed
    from pressroom.jobs.stats import RecentWork, TenantLoad, WorkerSeen


class Queue(Protocol):
    """What the API needs: intake, reads and a tenant's list, a cancel, an early delete, a
    reviewer's decision, an operator's redrive."""

    def insert(
        self,
        job: NewJob,
        *,
        now: float,
        max_attempts: int,
        check: Callable[[Connection], object] | None = None,
    ) -> tuple[Job, bool]:
        """Insert a job; with an Idempotency-Key already used for the same request, return the
        job it made and False. A different request under the same key is a conflict.
        ``check`` (admission) runs first in the same transaction."""

    def find_idempotent(self, tenant: str, key: str) -> bool: ...

    def get(self, job_id: str, *, tenant: str | None = None) -> Job | None: ...

    def in_review(self, tenant: str | None, *, rebuilding: bool = False) -> list[Job]:
        """Held jobs, oldest first: a tenant's or (None) every tenant's; ``rebuilding`` adds
        those sent back with a reviewer's corrections and not held again yet."""

    def reopen_for_corrections(
        self,
        job_id: str,
        tenant: str,
        *,
        corrections: dict[str, Any],
        counts: dict[str, int],
        now: float,
        key_id: str,
    ) -> bool:
        """A held job with its source back to the interactive lane with ``corrections`` in
        its options, the decision ``apply`` recorded with it; False when it is not held."""

    def decide_review(
        self,
        job_id: str,
        tenant: str,
        *,
        approve: bool,
        now: float,
        key_id: str,
        detail: dict[str, Any] | None = None,
        artifact_key: str | None = None,
        artifact_sha256: str | None = None,
    ) -> bool:
        """The state change and its decision row (who, when, what), in one transaction; a
        job no longer in review changes nothing and records nothing."""

    def redrive(self, job_id: str, *, now: float, tenant: str | None = None) -> bool:
        """A rejected job with its source back to ``accepted``; never a complete one."""

    def delete_source_key(self, job_id: str) -> None: ...

    def list_jobs(
        self,
        tenant: str,
        *,
        limit: int,
        after: tuple[float, str] | None = None,
        state: JobState | None = None,
        lane: Lane | None = None,
        created_after: float | None = None,
        created_before: float | None = None,
    ) -> list[Job]:
        """The tenant's jobs newest first by (created_at, id), past the keyset ``after``."""

    def cancel(self, job_id: str, tenant: str, *, now: float) -> Cancellation | None:
        """End a waiting or held job ``CANCELLED``, or mark a running one to stop; None for a
        job that is not this tenant's."""

    def delete_artifact_key(self, job_id: str, tenant: str, key: str, *, now: float) -> bool:
        """Forget a complete job's artifact (its blob deleted first); False when it has none."""


class WorkerQueue(Protocol):
    """What a worker needs: a job under a lease, and its end."""

    def claim(
        self, lanes: tuple[Lane, ...], owner: str, *, now: float, lease_s: float
    ) -> Job | None:
        """Take the fair next eligible job of the first lane that has one, under a lease:
        the least-served tenant's oldest (``jobs.claims``)."""

    def heartbeat(self, job_id: str, owner: str, *, now: float, lease_s: float) -> bool:
        """Renew a lease; False when it was lost (the job is someone else's now)."""

    def set_stage(self, job_id: str, owner: str, stage: str, *, now: float) -> bool: ...

    def set_progress(self, job_id: str, owner: str, done: int, total: int) -> bool:
        """How far the owned job's attempt got (steps done of steps in all, as the pipeline
        reports them); False once the lease is not ``owner``'s."""

    def record_timing(
        self, job_id: str, attempt: int, stage: str, seconds: float, *, now: float
    ) -> None: ...

    def record_scan(self, job_id: str, outcome: str, *, now: float) -> None:
        """One malware scan of the job's source ended as ``outcome`` (``scanning.OUTCOMES``):
        counted for /metrics, as retries and dead letters are."""

    def scanned_clean(self, job_id: str) -> bool:
        """Whether a scan of the job's source recorded (``record_scan``) ended clean. Events
        are pruned after 30 days: a job older than that reads as never scanned."""

    def set_verification(self, job_id: str, owner: str, decision: str) -> None: ...

    def withhold_label(self, job_id: str, owner: str) -> None:
        """The owned job's label and its digest gone: it carries a value the job's redaction
        removes. The job shows no label from then on, and its download is named by its id."""

    def complete(
        self,
        job_id: str,
        owner: str,
        *,
        artifact_key: str,
        artifact_sha256: str,
        pages: int,
        now: float,
        result: dict[str, Any] | None = None,
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
        sheet: dict[str, Any] | None = None,
        result: dict[str, Any] | None = None,
    ) -> bool:
        """Hold the job for a human (state review), with a redaction's review sheet and
        what became of the document (``result``: counts only)."""

    def release(self, job_id: str, owner: str, *, now: float) -> bool:
        """Give a claimed job back untouched (graceful shutdown): no attempt is spent."""

    def rescue_expired(self, *, now: float, policy: RetryPolicy) -> int:
        """Return jobs whose lease expired (a dead worker) to retrying; counts as an attempt."""

    def delete_source_key(self, job_id: str) -> None: ...

    def cancel_requested(self, job_id: str) -> bool:
        """Whether the tenant asked this job to stop; read at every stage boundary."""

    def end_cancelled(self, job_id: str, owner: str, *, now: float) -> bool:
        """End an owned job ``CANCELLED`` once its cancel was requested; the ends above
        (complete, hold, fail) refuse such a job, so exactly one end happens."""


class Tasks(Protocol):
    """A big document's page ranges (``jobs.tasks``): claimed, renewed and ended like jobs,
    but never jobs."""

    def split(self, job: Job, owner: str, ranges: list[tuple[int, int]], *, now: float) -> bool:
        """Insert the ranges and release the owned job to them, in one transaction."""

    def resume(self, job: Job, owner: str, *, now: float) -> bool: ...

    def progress(self, job_id: str) -> tuple[int, int]: ...

    def claim(
        self, lanes: tuple[Lane, ...], owner: str, *, now: float, lease_s: float
    ) -> tuple[Task, Job] | None: ...

    def claim_next(
        self, lanes: tuple[Lane, ...], owner: str, *, now: float, lease_s: float
    ) -> Claimed | None:
        """A worker's next unit, a whole job or a range, whichever tenant's fair turn it is."""

    def heartbeat(self, task: Task, owner: str, *, now: float, lease_s: float) -> bool: ...

    def done(
        self, task: Task, owner: str, key: str, *, now: float, lease_s: float
    ) -> tuple[bool, Job | None]:
        """Record a range's part; the job, leased to the caller, when it was the last."""

    def fail(
        self,
        task: Task,
        owner: str,
        *,
        code: str,
        message: str,
        permanent: bool,
        now: float,
        policy: RetryPolicy,
    ) -> JobState | None: ...

    def clear(self, job_id: str) -> None: ...

    def rescue_expired(self, *, now: float, policy: RetryPolicy) -> int: ...


class Outbox(Protocol):
    """Webhook deliveries the queue wrote with each job's final state."""

    def claim_deliveries(
        self,
        owner: str,
        *,
        now: float,
        lease_s: float,
        limit: int = 10,
        skip_tenants: Collection[str] = (),
    ) -> list[dict[str, Any]]: ...

    def delivery_result(
        self,
        delivery_id: str,
        owner: str,
        *,
        ok: bool,
        error: str | None,
        now: float,
        policy: RetryPolicy,
    ) -> str: ...

    def deliveries(self, job_id: str) -> list[dict[str, Any]]: ...

    def webhook_secret(self, tenant: str, *, now: float) -> str:
        """The tenant's current signing secret, made on first use."""

    def signing_secrets(self, tenant: str, *, now: float) -> tuple[str, ...]:
        """Every secret that signs a delivery sent at ``now``: the current one first, then the
        one a rotation replaced while its overlap lasts."""

    def rotate_webhook_secret(
        self, tenant: str, *, now: float, overlap_s: float
    ) -> tuple[str, float | None]:
        """A new current secret, and until when the one it replaces still signs (None when the
        tenant had none). A rotation inside the overlap drops the older previous secret."""


class Customers(Protocol):
    def customer_status(self, tenant: str, customer: str) -> str | None:
        """``active``, ``suspended``, or None for a customer the tenant never registered."""


class Tenancy(Customers, Protocol):
    """Keys, customers and template allow-lists."""

    def new_key(
        self, tenant: str, *, now: float, role: str = "tenant", expires_at: float | None = None
    ) -> tuple[str, str]: ...

    def create_key(self, tenant: str, *, now: float, role: str = "tenant") -> str: ...

    def key_info(self, key: str, *, now: float | None = None) -> KeyOwner | None: ...

    def tenant_for_key(self, key: str, *, now: float | None = None) -> str | None: ...

    def list_keys(self, tenant: str | None = None) -> list[dict[str, Any]]: ...

    def key(self, key_id: str) -> dict[str, Any] | None:
        """One key's record by id (``k_…``), revoked or not; never the secret."""

    def revoke_key(self, id_or_key: str, *, now: float) -> str | None: ...

    def has_keys(self) -> bool: ...

    def set_customer(self, tenant: str, customer: str, *, status: str, now: float) -> None: ...

    def allow_templates(self, tenant: str, names: list[str], *, now: float) -> None: ...

    def disallow_templates(self, tenant: str, names: list[str] | None) -> None: ...

    def allowed_templates(self, tenant: str) -> frozenset[str] | None: ...

    def any_allow_list(self) -> bool:
        """Whether any tenant has an allow-list."""

    def set_weight(self, tenant: str, weight: int, *, now: float) -> None:
        """A tenant's weight in fair claiming (1 to 1000; 1 is the default)."""

    def weights(self, conn: Connection | None = None) -> dict[str, int]: ...

    def open_session(self, key_id: str, *, now: float, expires: float) -> str:
        """A desk session for a key: its random id, for the signed cookie."""

    def session_live(self, session_id: str, key_id: str, *, now: float) -> bool: ...

    def end_session(self, session_id: str, *, now: float) -> None: ...

    def prune_sessions(self, *, before: float) -> int: ...


class AdmissionFigures(Protocol):
    """What admission weighs an upload against; ``conn``: inside the insert's transaction."""

    def seconds_per_page(
        self, *, since: float, conn: Connection | None = None
    ) -> tuple[float, int] | None: ...

    def live_workers(
        self, *, now: float, within_s: float = 30.0, conn: Connection | None = None
    ) -> dict[str, int]: ...

    def worker_languages(
        self, lane: str, *, now: float, within_s: float = 300.0
    ) -> tuple[str, ...] | None:
        """The OCR languages every live worker of the lane reported; None: none reported."""

    def lane_load(
        self, lane: str, tenant: str, *, conn: Connection | None = None
    ) -> dict[str, TenantLoad]:
        """Per tenant with unfinished work in the lane (``tenant`` always): jobs waiting,
        units unfinished, weight."""

    def tenant_load(
        self, tenant: str, *, since: float, conn: Connection | None = None
    ) -> tuple[int, int, float | None]: ...

    def tenant_bytes(
        self, tenant: str, *, since: float, conn: Connection | None = None
    ) -> tuple[int, int]: ...

    def record_refusal(self, tenant: str, lane: str, reason: str, *, now: float) -> None: ...


class Stats(AdmissionFigures, Protocol):
    """Counts, events and timings for metrics, the dashboard and operators."""

    def event_counts(self, *, since: float = 0.0) -> dict[tuple[str, str, str], int]:
        """Events kept (they are pruned) since a time: for recent figures, not totals."""

    def counter_totals(self) -> dict[tuple[str, str, str], int]:
        """Running totals per (kind, lane, reason) that never go down, pruning or not."""

    def record_pool_decision(self, lane: str, reason: str, *, now: float) -> None:
        """An adaptive worker pool changed size (kind ``pool``), for metrics."""

    def worker_seen(
        self,
        owner: str,
        lanes: tuple[str, ...],
        *,
        now: float,
        languages: tuple[str, ...] | None = None,
    ) -> None: ...

    def worker_beat(self, owner: str, *, now: float) -> None:
        """A busy worker's lease heartbeat refreshes its row (never recreates one)."""

    def worker_gone(self, owner: str) -> None: ...

    def worker_list(self, *, now: float, within_s: float = 300.0) -> list[WorkerSeen]: ...

    def counts(self) -> dict[tuple[str, str], int]: ...

    def oldest_waiting(self, *, now: float) -> dict[str, float]: ...

    def oldest_by_state(self, *, now: float) -> dict[tuple[str, str], float]: ...

    def stage_histograms(
        self, buckets: Sequence[float], stages: tuple[str, ...] | None = None
    ) -> list[tuple[str, list[int], int, float]]: ...

    def recent_work(
        self,
        *,
        since: float,
        review_limit: int = 20,
        dead_limit: int = 10,
        decision_limit: int = 10,
    ) -> RecentWork: ...


class Retention(Protocol):
    """What housekeeping may forget, and when."""

    def expired_artifacts(self, *, before: float) -> list[tuple[str, str]]: ...

    def expired_rejected_sources(self, *, before: float) -> list[tuple[str, str]]: ...

    def expired_reviews(self, *, before: float) -> list[str]: ...

    def expire_review(self, job_id: str, *, now: float) -> tuple[str | None, str | None] | None: ...

    def prune_history(self, *, before: float) -> int: ...

    def held_keys(self, job_id: str) -> tuple[str | None, str | None] | None: ...

    def forget_source(self, job_id: str) -> None: ...

    def forget_artifact(self, job_id: str) -> None: ...

    def unfinished(self, job_id: str) -> bool:
        """Whether the job still waits or runs (its page ranges' parts are in use)."""
