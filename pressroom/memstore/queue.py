"""The queue in memory: ``jobs.queue.SqlQueue`` step for step — every method one hold of the
tables' lock, so two ends of one job cannot both happen here either."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pressroom.corrections import Corrections
from pressroom.errors import DuplicateRow, IdempotencyConflict
from pressroom.jobs.backoff import RetryPolicy
from pressroom.jobs.model import (
    CANCELLED,
    SPLIT,
    UNFINISHED,
    WAITING,
    Cancellation,
    Job,
    JobState,
    Lane,
    NewJob,
)
from pressroom.memstore.tables import Row, Tables, fresh_round, new_row
from pressroom.orders import JobOrder

if TYPE_CHECKING:
    from sqlalchemy import Connection

# what ``check`` (admission) is handed for its connection: none, its figures are read under
# the lock the insert holds
_NO_CONNECTION: Any = None


class MemoryQueue:
    def __init__(self, tables: Tables) -> None:
        self.t = tables

    # --- the API side ------------------------------------------------------------------------

    def insert(
        self,
        job: NewJob,
        *,
        now: float,
        max_attempts: int,
        check: Callable[[Connection], object] | None = None,
    ) -> tuple[Job, bool]:
        """As ``SqlQueue.insert``: ``check`` first, then the row; a key already used by the
        tenant replays its job (or is a conflict), a job id already taken is ``DuplicateRow``."""
        with self.t.lock:
            if check is not None:
                check(_NO_CONNECTION)
            if job.idempotency_key is not None:
                for row in self.t.jobs.values():
                    if (row["tenant"], row["idempotency_key"]) == (job.tenant, job.idempotency_key):
                        if row["request_hash"] != job.request_hash:
                            raise IdempotencyConflict(
                                "this Idempotency-Key was used for a different request"
                            )
                        return self.t.job(row["id"]), False
            if job.id in self.t.jobs:
                raise DuplicateRow("a job with this id exists")
            self.t.jobs[job.id] = new_row(job, now=now, max_attempts=max_attempts)
            self.t.ensure_share(job.lane.value, job.tenant)
            return self.t.job(job.id), True

    def find_idempotent(self, tenant: str, key: str) -> bool:
        with self.t.lock:
            return any(
                (r["tenant"], r["idempotency_key"]) == (tenant, key) for r in self.t.jobs.values()
            )

    def get(self, job_id: str, *, tenant: str | None = None) -> Job | None:
        with self.t.lock:
            row = self.t.jobs.get(job_id)
            if row is None or (tenant is not None and row["tenant"] != tenant):
                return None
            return self.t.job(job_id)

    # --- the worker side ---------------------------------------------------------------------

    def claim(
        self, lanes: tuple[Lane, ...], owner: str, *, now: float, lease_s: float
    ) -> Job | None:
        got = self.t.claim(lanes, owner, now=now, lease_s=lease_s, ranges=False)
        return None if got is None else got.job

    def _update_owned(self, job_id: str, owner: str, **values: Any) -> bool:
        with self.t.lock:
            row = self.t.owned(job_id, owner)
            if row is not None:
                row.update(values)
            return row is not None

    def heartbeat(self, job_id: str, owner: str, *, now: float, lease_s: float) -> bool:
        return self._update_owned(job_id, owner, lease_expires_at=now + lease_s, updated_at=now)

    def set_stage(self, job_id: str, owner: str, stage: str, *, now: float) -> bool:
        return self._update_owned(job_id, owner, stage=stage, updated_at=now)

    def set_progress(self, job_id: str, owner: str, done: int, total: int) -> bool:
        return self._update_owned(job_id, owner, progress_done=done, progress_total=total)

    def record_timing(
        self, job_id: str, attempt: int, stage: str, seconds: float, *, now: float
    ) -> None:
        with self.t.lock:
            self.t.timings.append(
                {
                    "job_id": job_id,
                    "attempt": attempt,
                    "stage": stage,
                    "seconds": seconds,
                    "recorded_at": now,
                }
            )

    def record_scan(self, job_id: str, outcome: str, *, now: float) -> None:
        with self.t.lock:
            self.t.event(job_id, "scan", outcome, now)

    def scanned_clean(self, job_id: str) -> bool:
        with self.t.lock:
            return any(
                (e["job_id"], e["kind"], e["reason"]) == (job_id, "scan", "clean")
                for e in self.t.events
            )

    def _finish(
        self, job_id: str, owner: str, state: JobState, event: str, now: float, **values: Any
    ) -> bool:
        """End an owned job whose cancel was not asked for, with its webhook."""
        with self.t.lock:
            row = self.t.owned(job_id, owner)
            if row is None or row["cancel_requested_at"] is not None:
                return False
            row.update(
                state=state.value,
                stage=None,
                progress_done=None,
                progress_total=None,
                finished_at=now,
                updated_at=now,
                lease_owner=None,
                lease_expires_at=None,
                **values,
            )
            self.t.enqueue(job_id, event, now)
            return True

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
    ) -> bool:
        return self._finish(
            job_id,
            owner,
            JobState.COMPLETE,
            "job.completed",
            now,
            artifact_key=artifact_key,
            artifact_sha256=artifact_sha256,
            pages=pages,
            reason=None,
            message=None,
            result=result,
        )

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
        with self.t.lock:
            row = self.t.owned(job_id, owner)
            if row is None or row["cancel_requested_at"] is not None:
                return None
            decision = policy.decide(
                attempts=row["attempts"],
                max_attempts=row["max_attempts"],
                code=code,
                message=message,
                permanent=permanent,
                previous_reason=row["reason"],
            )
            self.t.decided(row, decision, now)
            return self.t.record_decision(job_id, decision, code, now)

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
        return self._finish(
            job_id,
            owner,
            JobState.REVIEW,
            "job.review",
            now,
            reason=code,
            message=message,
            artifact_key=artifact_key,
            review_sheet=sheet,
            result=result,
        )

    def in_review(self, tenant: str | None, *, rebuilding: bool = False) -> list[Job]:
        def held(row: Row) -> bool:
            if row["state"] == JobState.REVIEW:
                return True
            return rebuilding and row["state"] in UNFINISHED and row["review_sheet"] is not None

        with self.t.lock:
            rows = [
                r
                for r in self.t.jobs.values()
                if held(r) and (tenant is None or r["tenant"] == tenant)
            ]
            # SQL sorts NULL first on SQLite, last on PostgreSQL: a rebuilding job has no
            # finish time; here it comes after the held ones, as on PostgreSQL
            rows.sort(key=lambda r: (r["finished_at"] is None, r["finished_at"] or 0.0, r["id"]))
            return self.t.to_jobs(rows)

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
        with self.t.lock:
            row = self.t.jobs.get(job_id)
            if (
                row is None
                or row["tenant"] != tenant
                or row["state"] != JobState.REVIEW
                or row["source_key"] is None
            ):
                return False
            # the rest of the order as it was (one this version cannot read is refused)
            order = JobOrder.from_json(row["options"], template=row["template"])
            row.update(
                lane=Lane.INTERACTIVE.value,
                options=replace(order, corrections=Corrections.parse(corrections)).to_json(),
                message="rebuilding with a reviewer's corrections",
            )
            fresh_round(row, now)
            self.t.ensure_share(Lane.INTERACTIVE.value, tenant)
            self.t.review_decision(job_id, tenant, key_id, "apply", now, counts)
            return True

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
        with self.t.lock:
            row = self.t.jobs.get(job_id)
            if row is None or row["tenant"] != tenant or row["state"] != JobState.REVIEW:
                return False
            if approve:
                row.update(
                    state=JobState.COMPLETE.value,
                    artifact_key=artifact_key,
                    artifact_sha256=artifact_sha256,
                    message="approved in review",
                )
            else:
                row.update(
                    state=JobState.REJECTED.value,
                    reason="REVIEW_REJECTED",
                    message="rejected in review",
                    artifact_key=None,
                    source_key=None,
                )
            row["updated_at"] = now
            action = "approve" if approve else "reject"
            self.t.review_decision(job_id, tenant, key_id, action, now, detail)
            return True

    def redrive(self, job_id: str, *, now: float, tenant: str | None = None) -> bool:
        with self.t.lock:
            row = self.t.jobs.get(job_id)
            if (
                row is None
                or row["state"] != JobState.REJECTED
                or row["source_key"] is None
                or (tenant is not None and row["tenant"] != tenant)
            ):
                return False
            fresh_round(row, now)
            row["message"] = None
            self.t.ensure_share(row["lane"], row["tenant"])
            return True

    def release(self, job_id: str, owner: str, *, now: float) -> bool:
        with self.t.lock:
            row = self.t.owned(job_id, owner)
            if row is None:
                return False
            row.update(
                state=JobState.RETRYING.value,
                stage=None,
                progress_done=None,
                progress_total=None,
                lease_owner=None,
                lease_expires_at=None,
                attempts=row["attempts"] - 1,
                updated_at=now,
                next_eligible_at=now,
            )
            self.t.refund(row, row["cost"] or row["pages_estimate"] or 1)
            return True

    def rescue_expired(self, *, now: float, policy: RetryPolicy) -> int:
        rescued = 0
        with self.t.lock:
            self.t.tidy_shares()
            for row in list(self.t.jobs.values()):
                if row["state"] != JobState.RUNNING or row["lease_expires_at"] is None:
                    continue
                if row["lease_expires_at"] >= now:
                    continue
                if row["cancel_requested_at"] is not None:
                    # the tenant asked it to stop: a dead worker does not earn it another run
                    self._end_cancelled(row, now)
                    rescued += 1
                    continue
                decision = policy.decide(
                    attempts=row["attempts"],
                    max_attempts=row["max_attempts"],
                    code="LEASE_EXPIRED",
                    message="the worker stopped answering; retried",
                    permanent=False,
                    previous_reason=row["reason"],
                )
                self.t.decided(row, decision, now)
                self.t.record_decision(row["id"], decision, "LEASE_EXPIRED", now)
                rescued += 1
        return rescued

    def set_verification(self, job_id: str, owner: str, decision: str) -> None:
        self._update_owned(job_id, owner, verification=decision)

    def withhold_label(self, job_id: str, owner: str) -> None:
        self._update_owned(job_id, owner, label=None, label_digest=None)

    def delete_source_key(self, job_id: str) -> None:
        with self.t.lock:
            if job_id in self.t.jobs:
                self.t.jobs[job_id]["source_key"] = None

    # --- a tenant's list, cancel and early delete ---------------------------------------------

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
        label_digest: str | None = None,
    ) -> list[Job]:
        def wanted(r: Row) -> bool:
            return (
                r["tenant"] == tenant
                and (after is None or (r["created_at"], r["id"]) < after)
                and (state is None or r["state"] == state)
                and (lane is None or r["lane"] == lane)
                and (created_after is None or r["created_at"] >= created_after)
                and (created_before is None or r["created_at"] < created_before)
                and (label_digest is None or r["label_digest"] == label_digest)
            )

        with self.t.lock:
            rows = sorted(
                (r for r in self.t.jobs.values() if wanted(r)),
                key=lambda r: (r["created_at"], r["id"]),
                reverse=True,
            )
            return self.t.to_jobs(rows[:limit])

    def cancel(self, job_id: str, tenant: str, *, now: float) -> Cancellation | None:
        with self.t.lock:
            row = self.t.jobs.get(job_id)
            if row is None or row["tenant"] != tenant:
                return None
            state = JobState(row["state"])
            if state.value in WAITING or state is JobState.REVIEW:
                keys = (
                    row["source_key"],
                    row["artifact_key"] if state is JobState.REVIEW else None,
                )
                self._end_cancelled(row, now)
                return Cancellation("cancelled", self.t.job(job_id), tuple(k for k in keys if k))
            if state is JobState.RUNNING and row["stage"] == SPLIT and not row["lease_owner"]:
                parts = [
                    t["part_key"]
                    for t in self.t.tasks.values()
                    if t["job_id"] == job_id and t["part_key"] is not None
                ]
                # each part's page record goes with it (``storage.delete_output``)
                freed = (row["source_key"], *parts)
                self._end_cancelled(row, now)
                return Cancellation("cancelled", self.t.job(job_id), tuple(k for k in freed if k))
            if state is JobState.RUNNING:
                if row["cancel_requested_at"] is not None:
                    return Cancellation("repeated", self.t.job(job_id))
                row.update(cancel_requested_at=now, updated_at=now)
                return Cancellation("requested", self.t.job(job_id))
            if state is JobState.REJECTED and row["reason"] == CANCELLED:
                return Cancellation("cancelled", self.t.job(job_id))
            return Cancellation("finished", self.t.job(job_id))

    def _end_cancelled(self, row: Row, now: float) -> None:
        """End the job ``CANCELLED`` with its webhook and event; it holds no blob after."""
        row.update(
            state=JobState.REJECTED.value,
            reason=CANCELLED,
            message="cancelled by the tenant",
            stage=None,
            lease_owner=None,
            lease_expires_at=None,
            source_key=None,
            artifact_key=None,
            finished_at=now,
            updated_at=now,
        )
        if row["cancel_requested_at"] is None:
            row["cancel_requested_at"] = now
        self.t.drop_tasks(row["id"])
        self.t.enqueue(row["id"], "job.rejected", now)
        self.t.event(row["id"], "cancelled", CANCELLED, now)

    def delete_artifact_key(self, job_id: str, tenant: str, key: str, *, now: float) -> bool:
        with self.t.lock:
            row = self.t.jobs.get(job_id)
            if (
                row is None
                or row["tenant"] != tenant
                or row["state"] != JobState.COMPLETE
                or row["artifact_key"] != key
            ):
                return False
            row.update(artifact_key=None, updated_at=now)
            return True

    # --- a cancel, as the worker meets it -----------------------------------------------------

    def cancel_requested(self, job_id: str) -> bool:
        with self.t.lock:
            row = self.t.jobs.get(job_id)
            return row is not None and row["cancel_requested_at"] is not None

    def end_cancelled(self, job_id: str, owner: str, *, now: float) -> bool:
        with self.t.lock:
            row = self.t.owned(job_id, owner)
            if row is None or row["cancel_requested_at"] is None:
                return False
            self._end_cancelled(row, now)
            return True
