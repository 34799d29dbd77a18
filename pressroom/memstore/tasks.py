"""A big document's page ranges in memory: ``jobs.tasks.SqlTasks`` step for step."""

from __future__ import annotations

from pressroom.jobs.backoff import Decision, RetryPolicy
from pressroom.jobs.claims import Claimed
from pressroom.jobs.model import (
    SPLIT,
    TASK_DONE,
    TASK_RUNNING,
    TASK_WAITING,
    Job,
    JobState,
    Lane,
    Task,
)
from pressroom.memstore.tables import Row, Tables


class MemoryTasks:
    def __init__(self, tables: Tables) -> None:
        self.t = tables

    def _split_job(self, job_id: str) -> Row | None:
        """The job with its tasks out: no owner, no cancel asked."""
        row = self.t.jobs.get(job_id)
        if (
            row is None
            or row["state"] != JobState.RUNNING
            or row["stage"] != SPLIT
            or row["lease_owner"] is not None
            or row["cancel_requested_at"] is not None
        ):
            return None
        return row

    def _released(self, job: Job, owner: str, now: float) -> bool:
        row = self.t.owned(job.id, owner)
        if row is None or row["cancel_requested_at"] is not None:
            return False
        row.update(stage=SPLIT, lease_owner=None, lease_expires_at=None, updated_at=now)
        self.t.refund(row, job.cost or job.pages_estimate or 1)
        return True

    def split(self, job: Job, owner: str, ranges: list[tuple[int, int]], *, now: float) -> bool:
        with self.t.lock:
            if not self._released(job, owner, now):
                return False
            self.t.drop_tasks(job.id)
            for n, (first, end) in enumerate(ranges):
                self.t.tasks[(job.id, n)] = {
                    "job_id": job.id,
                    "number": n,
                    "first_page": first,
                    "end_page": end,
                    "state": TASK_WAITING,
                    "attempts": 0,
                    "reason": None,
                    "next_eligible_at": now,
                    "lease_owner": None,
                    "lease_expires_at": None,
                    "part_key": None,
                    "updated_at": now,
                }
            return True

    def resume(self, job: Job, owner: str, *, now: float) -> bool:
        with self.t.lock:
            return self._released(job, owner, now)

    def progress(self, job_id: str) -> tuple[int, int]:
        with self.t.lock:
            mine = [t for t in self.t.tasks.values() if t["job_id"] == job_id]
            return len(mine), sum(t["state"] == TASK_DONE for t in mine)

    def claim(
        self, lanes: tuple[Lane, ...], owner: str, *, now: float, lease_s: float
    ) -> tuple[Task, Job] | None:
        got = self.t.claim(lanes, owner, now=now, lease_s=lease_s, whole=False)
        if got is None or got.task is None:
            return None
        return got.task, got.job

    def claim_next(
        self, lanes: tuple[Lane, ...], owner: str, *, now: float, lease_s: float
    ) -> Claimed | None:
        return self.t.claim(lanes, owner, now=now, lease_s=lease_s)

    def _owned(self, task: Task, owner: str) -> Row | None:
        row = self.t.tasks.get((task.job_id, task.number))
        if row is None or row["state"] != TASK_RUNNING or row["lease_owner"] != owner:
            return None
        return row

    def heartbeat(self, task: Task, owner: str, *, now: float, lease_s: float) -> bool:
        with self.t.lock:
            row = self._owned(task, owner)
            if row is not None:
                row.update(lease_expires_at=now + lease_s, updated_at=now)
            return row is not None

    def done(
        self, task: Task, owner: str, key: str, *, now: float, lease_s: float
    ) -> tuple[bool, Job | None]:
        with self.t.lock:
            row = self._owned(task, owner)
            if row is None:
                return False, None
            row.update(
                state=TASK_DONE,
                part_key=key,
                lease_owner=None,
                lease_expires_at=None,
                updated_at=now,
            )
            if any(
                t["job_id"] == task.job_id and t["state"] != TASK_DONE
                for t in self.t.tasks.values()
            ):
                return True, None
            job = self._split_job(task.job_id)
            if job is None:
                return True, None
            job.update(
                stage=None, lease_owner=owner, lease_expires_at=now + lease_s, updated_at=now
            )
            return True, self.t.job(task.job_id)

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
    ) -> JobState | None:
        with self.t.lock:
            row = self._owned(task, owner)
            job = self.t.jobs.get(task.job_id)
            if row is None or job is None:
                return None
            decision = policy.decide(
                attempts=task.attempts,
                max_attempts=job["max_attempts"],
                code=code,
                message=message,
                permanent=permanent,
                previous_reason=row["reason"],
            )
            return self._decide(task, row, decision, code, now)

    def _decide(
        self, task: Task, row: Row, decision: Decision, code: str, now: float
    ) -> JobState | None:
        if decision.retry:
            row.update(
                state=TASK_WAITING,
                reason=code,
                lease_owner=None,
                lease_expires_at=None,
                next_eligible_at=now + decision.delay_s,
                updated_at=now,
            )
            return JobState.RETRYING
        job = self._split_job(task.job_id)
        if job is not None:
            self.t.decided(job, decision, now)
        self.t.drop_tasks(task.job_id)
        if job is None:
            return None
        return self.t.record_decision(task.job_id, decision, code, now)

    def clear(self, job_id: str) -> None:
        with self.t.lock:
            self.t.drop_tasks(job_id)

    def rescue_expired(self, *, now: float, policy: RetryPolicy) -> int:
        rescued = 0
        with self.t.lock:
            for row in list(self.t.tasks.values()):
                job = self.t.jobs.get(row["job_id"])
                lapsed = row["lease_expires_at"] is not None and row["lease_expires_at"] < now
                if job is None or row["state"] != TASK_RUNNING or not lapsed:
                    continue
                if (row["job_id"], row["number"]) not in self.t.tasks:
                    continue  # its job ended with an earlier range's rescue
                task = Task(
                    row["job_id"],
                    row["number"],
                    row["first_page"],
                    row["end_page"],
                    row["attempts"],
                )
                decision = policy.decide(
                    attempts=task.attempts,
                    max_attempts=job["max_attempts"],
                    code="LEASE_EXPIRED",
                    message="the worker stopped answering; the range is read again",
                    permanent=False,
                    previous_reason=row["reason"],
                )
                if self._decide(task, row, decision, "LEASE_EXPIRED", now):
                    rescued += 1
        return rescued
