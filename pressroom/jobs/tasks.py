"""Page-range tasks: one big document spread over every worker of its lane.

A task is a range of a job's pages, not a job: it never shows in a tenant's list, the job
counts or the job's attempts. The database is the one source of truth, claimed with the
queue's own discipline (PostgreSQL ``FOR UPDATE SKIP LOCKED``; SQLite ``BEGIN IMMEDIATE``).

The job, as it goes (``state`` / ``stage`` / lease):

- ``running`` / — / the first claimer's: it inspects the source; a document over
  ``PRESSROOM_SPLIT_PAGES`` pages (not a redaction: its leak checks and re-detection read the
  whole document) gets its tasks, and in the same transaction the job is **released**:
- ``running`` / ``split`` / no owner: its tasks wait for any worker of its lane, which claims
  them in their tenant's fair turn between other tenants' jobs (``jobs.claims``: the job's
  cost is refunded as it splits, each range charged its pages). The job's lease is not held,
  so the rescuer leaves it alone; each task has its own lease.
- A task: ``waiting`` → ``running`` (claimed under a lease; attempts + 1) → ``done`` (its part,
  the range's pages with their text layer, stored under ``storage.parts_prefix``). A failure sends
  it back to ``waiting`` after the retry policy's backoff — only that range is read again; a
  permanent failure, or its attempts spent, ends the job ``rejected``. A lapsed task lease is
  a failed attempt (``LEASE_EXPIRED``).
- The worker whose task is the last one done takes the job's lease in the same transaction:
  ``running`` / (stages) / its own — it assembles the parts in page order, adds the cover and
  metadata, checks the output once and publishes, as for a whole document. If that attempt
  fails transiently the job is retried as any job is; its next claimer finds every task done
  and assembles again from the stored parts.
- A cancel of a ``split`` job ends it ``CANCELLED`` at once and deletes its tasks; a task
  running meanwhile finds its row gone at its next page boundary and stops, deleting its part.
- Tasks and parts are deleted when the job completes, is rejected or is cancelled.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import ColumnElement, Connection, and_, delete, func, select, update

from pressroom.jobs import claims
from pressroom.jobs.backoff import Decision, RetryPolicy
from pressroom.jobs.claims import decided, owned, record_decision, refund
from pressroom.jobs.model import SPLIT, Job, JobState, Lane, Task
from pressroom.jobs.model import TASK_DONE as DONE
from pressroom.jobs.model import TASK_RUNNING as RUNNING
from pressroom.jobs.model import TASK_WAITING as WAITING
from pressroom.jobs.rows import load_job
from pressroom.jobs.schema import jobs, tasks
from pressroom.jobs.transport import Database

if TYPE_CHECKING:
    from pressroom.jobs.outbox import SqlOutbox
    from pressroom.jobs.stats import SqlStats


def page_ranges(pages: int, split_pages: int) -> list[tuple[int, int]]:
    """The ranges (first, end) a document of ``pages`` pages is read in: none when it is not
    over ``split_pages`` (or splitting is off), else ranges of at most half ``split_pages``
    pages, as even as they can be."""
    if split_pages <= 0 or pages <= split_pages:
        return []
    size = max(1, split_pages // 2)
    count = -(-pages // size)
    bounds = [round(i * pages / count) for i in range(count + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(count)]


def _split_job(job_id: str) -> ColumnElement[bool]:
    """The job with its tasks out: no owner, no cancel asked."""
    return and_(
        jobs.c.id == job_id,
        jobs.c.state == JobState.RUNNING.value,
        jobs.c.stage == SPLIT,
        jobs.c.lease_owner.is_(None),
        jobs.c.cancel_requested_at.is_(None),
    )


def drop_tasks(conn: Connection, job_id: str) -> None:
    conn.execute(delete(tasks).where(tasks.c.job_id == job_id))


class SqlTasks:
    """Every method is one short transaction over the tasks and their job's row."""

    def __init__(self, db: Database, outbox: SqlOutbox, stats: SqlStats) -> None:
        self.db = db
        self.outbox = outbox
        self.stats = stats

    def _released(self, conn: Connection, job: Job, owner: str, now: float) -> bool:
        """The owned job handed to its ranges; the cost its claim was charged is given back,
        since each range is charged as it is claimed (``jobs.claims``)."""
        done = conn.execute(
            update(jobs)
            .where(owned(job.id, owner), jobs.c.cancel_requested_at.is_(None))
            .values(stage=SPLIT, lease_owner=None, lease_expires_at=None, updated_at=now)
        )
        if done.rowcount != 1:
            return False
        refund(conn, job, job.cost or job.pages_estimate or 1)
        return True

    def split(self, job: Job, owner: str, ranges: list[tuple[int, int]], *, now: float) -> bool:
        """Insert the job's tasks and release the job, in one transaction. False: the job is
        not this worker's any more, or its cancel was asked (nothing is inserted)."""
        with self.db.tx() as conn:
            if not self._released(conn, job, owner, now):
                return False
            drop_tasks(conn, job.id)
            conn.execute(
                tasks.insert(),
                [
                    {
                        "job_id": job.id,
                        "number": n,
                        "first_page": first,
                        "end_page": end,
                        "state": WAITING,
                        "attempts": 0,
                        "next_eligible_at": now,
                        "updated_at": now,
                    }
                    for n, (first, end) in enumerate(ranges)
                ],
            )
            self.db.wake(conn, job.lane.value)
            return True

    def resume(self, job: Job, owner: str, *, now: float) -> bool:
        """A claimed job whose tasks are still out (its assembly's attempt was lost): released
        to them again."""
        with self.db.tx() as conn:
            return self._released(conn, job, owner, now)

    def progress(self, job_id: str) -> tuple[int, int]:
        """(tasks, tasks done) of a job; (0, 0) for a job read whole."""
        with self.db.tx(read_only=True) as conn:
            row = conn.execute(
                select(func.count(), func.count().filter(tasks.c.state == DONE)).where(
                    tasks.c.job_id == job_id
                )
            ).first()
            return (int(row[0]), int(row[1])) if row else (0, 0)

    def claim(
        self, lanes: tuple[Lane, ...], owner: str, *, now: float, lease_s: float
    ) -> tuple[Task, Job] | None:
        """The fair next waiting range of a split job of these lanes (``jobs.claims``), under
        a lease."""
        got = claims.claim(self.db, self.stats, lanes, owner, now=now, lease_s=lease_s, whole=False)
        if got is None or got.task is None:
            return None
        return got.task, got.job

    def claim_next(
        self, lanes: tuple[Lane, ...], owner: str, *, now: float, lease_s: float
    ) -> claims.Claimed | None:
        """What a worker takes: the fair next unit of the first lane that has one, a whole
        job or a page range of a split one, whichever tenant's turn it is."""
        return claims.claim(self.db, self.stats, lanes, owner, now=now, lease_s=lease_s)

    def _owned(self, task: Task, owner: str) -> ColumnElement[bool]:
        return and_(
            tasks.c.job_id == task.job_id,
            tasks.c.number == task.number,
            tasks.c.state == RUNNING,
            tasks.c.lease_owner == owner,
        )

    def heartbeat(self, task: Task, owner: str, *, now: float, lease_s: float) -> bool:
        """Renew the task's lease; False once it is not this worker's (rescued, or its job
        cancelled or ended)."""
        with self.db.tx() as conn:
            done = conn.execute(
                update(tasks)
                .where(self._owned(task, owner))
                .values(lease_expires_at=now + lease_s, updated_at=now)
            )
            return done.rowcount == 1

    def done(
        self, task: Task, owner: str, key: str, *, now: float, lease_s: float
    ) -> tuple[bool, Job | None]:
        """Record the task's part. (recorded, job): False when the task is not this worker's
        any more (its part is for the caller to delete); the job, leased to this worker, when
        this was the last range to finish: the caller assembles it."""
        with self.db.tx() as conn:
            if self.db.is_postgres:
                # two ranges ending at once: each must see the other's end, so exactly one of
                # them finds none left (SQLite: BEGIN IMMEDIATE already serialises writers)
                conn.execute(select(jobs.c.id).where(jobs.c.id == task.job_id).with_for_update())
            marked = conn.execute(
                update(tasks)
                .where(self._owned(task, owner))
                .values(
                    state=DONE,
                    part_key=key,
                    lease_owner=None,
                    lease_expires_at=None,
                    updated_at=now,
                )
            )
            if marked.rowcount != 1:
                return False, None
            left = conn.execute(
                select(func.count()).where(tasks.c.job_id == task.job_id, tasks.c.state != DONE)
            ).scalar()
            if left:
                return True, None
            taken = conn.execute(
                update(jobs)
                .where(_split_job(task.job_id))
                .values(
                    stage=None, lease_owner=owner, lease_expires_at=now + lease_s, updated_at=now
                )
            )
            return True, load_job(conn, task.job_id) if taken.rowcount == 1 else None

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
        """A failed range: ``RETRYING`` (the range alone, after the policy's backoff),
        ``REJECTED`` (the job ends: a permanent failure, or the range's attempts spent), or
        None when the task is not this worker's any more."""
        with self.db.tx() as conn:
            row = conn.execute(
                select(jobs.c.max_attempts, tasks.c.reason)
                .join(jobs, jobs.c.id == tasks.c.job_id)
                .where(self._owned(task, owner))
            ).first()
            if row is None:
                return None
            decision = policy.decide(
                attempts=task.attempts,
                max_attempts=int(row[0]),
                code=code,
                message=message,
                permanent=permanent,
                previous_reason=row[1],
            )
            return self._decide(conn, task, self._owned(task, owner), decision, code, now)

    def _decide(
        self,
        conn: Connection,
        task: Task,
        where: ColumnElement[bool],
        decision: Decision,
        code: str,
        now: float,
    ) -> JobState | None:
        if decision.retry:
            done = conn.execute(
                update(tasks)
                .where(where)
                .values(
                    state=WAITING,
                    reason=code,
                    lease_owner=None,
                    lease_expires_at=None,
                    next_eligible_at=now + decision.delay_s,
                    updated_at=now,
                )
            )
            if done.rowcount == 1:
                self.db.wake(conn, "any")
            return JobState.RETRYING if done.rowcount == 1 else None
        ended = conn.execute(
            update(jobs).where(_split_job(task.job_id)).values(**decided(decision, now))
        )
        drop_tasks(conn, task.job_id)
        if ended.rowcount != 1:
            return None
        record_decision(conn, self.outbox, self.stats, task.job_id, decision, code, now)
        return JobState.REJECTED

    def clear(self, job_id: str) -> None:
        """Forget a job's tasks (it ended, or is read whole again)."""
        with self.db.tx() as conn:
            drop_tasks(conn, job_id)

    def rescue_expired(self, *, now: float, policy: RetryPolicy) -> int:
        """Tasks whose worker stopped answering: a failed attempt of that range alone."""
        rescued = 0
        with self.db.tx() as conn:
            lapsed = conn.execute(
                select(
                    tasks.c.job_id,
                    tasks.c.number,
                    tasks.c.first_page,
                    tasks.c.end_page,
                    tasks.c.attempts,
                    tasks.c.reason,
                    jobs.c.max_attempts,
                )
                .join(jobs, jobs.c.id == tasks.c.job_id)
                .where(tasks.c.state == RUNNING, tasks.c.lease_expires_at < now)
            ).all()
            for job_id, number, first, end, attempts, reason, max_attempts in lapsed:
                task = Task(str(job_id), int(number), int(first), int(end), int(attempts))
                decision = policy.decide(
                    attempts=task.attempts,
                    max_attempts=int(max_attempts),
                    code="LEASE_EXPIRED",
                    message="the worker stopped answering; the range is read again",
                    permanent=False,
                    previous_reason=reason,
                )
                where = and_(
                    tasks.c.job_id == task.job_id,
                    tasks.c.number == task.number,
                    tasks.c.state == RUNNING,
                    tasks.c.lease_expires_at < now,
                )
                if self._decide(conn, task, where, decision, "LEASE_EXPIRED", now):
                    rescued += 1
        return rescued
