"""The queue itself: intake, a tenant's list, claims under a lease, a job's end (complete,
failed, held for review, cancelled), a human's review decision, redrive and the rescue of lapsed
leases. Over 500 lines: every write that changes a job's state lives here, so the conditions
that keep two ends of one job from both happening are read in one place."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from sqlalchemy import Connection, and_, case, func, or_, select, update

from pressroom.corrections import Corrections
from pressroom.errors import DuplicateRow, IdempotencyConflict, StoreUnavailable
from pressroom.jobs import claims
from pressroom.jobs.backoff import RetryPolicy
from pressroom.jobs.claims import decided, owned, record_decision
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
from pressroom.jobs.outbox import SqlOutbox
from pressroom.jobs.rows import load_job, to_job, to_jobs
from pressroom.jobs.schema import job_events, jobs, review_decisions, stage_timings, tasks
from pressroom.jobs.stats import SqlStats
from pressroom.jobs.transport import Database
from pressroom.orders import JobOrder


class SqlQueue:
    """Every method is one short transaction; a job's end writes its webhook and events in
    the same one."""

    def __init__(self, db: Database, outbox: SqlOutbox, stats: SqlStats) -> None:
        self.db = db
        self.outbox = outbox
        self.stats = stats

    # --- the API side ------------------------------------------------------------------------

    def insert(
        self,
        job: NewJob,
        *,
        now: float,
        max_attempts: int,
        check: Callable[[Connection], object] | None = None,
    ) -> tuple[Job, bool]:
        """Insert the job (or find the one its Idempotency-Key made). ``check`` runs first in
        the same transaction, serialised per lane and tenant, so admission's figures cannot be
        overtaken by another upload between the check and the insert."""
        row = {
            "id": job.id,
            "tenant": job.tenant,
            "lane": job.lane.value,
            "state": JobState.ACCEPTED.value,
            "attempts": 0,
            "max_attempts": max_attempts,
            "source_key": job.source_key,
            "source_sha256": job.source_sha256,
            "source_bytes": job.source_bytes,
            "kind": job.kind,
            "template": job.template,
            "title": job.title,
            "options": job.stored_order(),
            "idempotency_key": job.idempotency_key,
            "request_hash": job.request_hash,
            "created_at": now,
            "updated_at": now,
            "next_eligible_at": now,
            "deadline_at": now + job.deadline_s if job.deadline_s else None,
            "trace_id": job.trace_id,
            "parent_span_id": job.parent_span_id,
            "customer": job.customer,
            "pages_estimate": job.pages_estimate,
            "cost": job.cost,
            "label": job.label,
            "label_digest": job.label_digest,
        }
        try:
            with self.db.tx() as conn:
                if check is not None:
                    if self.db.is_postgres:  # SQLite: BEGIN IMMEDIATE already serialises writers
                        for name in (f"lane:{job.lane.value}", f"tenant:{job.tenant}"):
                            conn.execute(select(func.pg_advisory_xact_lock(func.hashtext(name))))
                    check(conn)
                conn.execute(jobs.insert().values(**row))
                claims.ensure_share(self.db, conn, job.lane.value, job.tenant)
                self.db.wake(conn, job.lane.value)
                return load_job(conn, job.id), True
        except DuplicateRow:
            if job.idempotency_key is None:
                raise
        with self.db.tx() as conn:
            existing = (
                conn.execute(
                    select(jobs).where(
                        jobs.c.tenant == job.tenant, jobs.c.idempotency_key == job.idempotency_key
                    )
                )
                .mappings()
                .first()
            )
            if existing is None:  # pragma: no cover - the unique row vanished between two reads
                raise StoreUnavailable("idempotency record disappeared; retry")
            if existing["request_hash"] != job.request_hash:
                raise IdempotencyConflict("this Idempotency-Key was used for a different request")
            return load_job(conn, str(existing["id"])), False

    def find_idempotent(self, tenant: str, key: str) -> bool:
        """Whether this tenant already used this Idempotency-Key (a replay is coming)."""
        with self.db.tx(read_only=True) as conn:
            return (
                conn.execute(
                    select(jobs.c.id).where(jobs.c.tenant == tenant, jobs.c.idempotency_key == key)
                ).first()
                is not None
            )

    def get(self, job_id: str, *, tenant: str | None = None) -> Job | None:
        with self.db.tx(read_only=True) as conn:
            query = select(jobs).where(jobs.c.id == job_id)
            if tenant is not None:
                query = query.where(jobs.c.tenant == tenant)
            row = conn.execute(query).mappings().first()
            return None if row is None else to_job(conn, row)

    # --- the worker side ---------------------------------------------------------------------

    def claim(
        self, lanes: tuple[Lane, ...], owner: str, *, now: float, lease_s: float
    ) -> Job | None:
        """The fair next whole job of the first lane that has one (``jobs.claims``)."""
        got = claims.claim(
            self.db, self.stats, lanes, owner, now=now, lease_s=lease_s, ranges=False
        )
        return None if got is None else got.job

    def heartbeat(self, job_id: str, owner: str, *, now: float, lease_s: float) -> bool:
        with self.db.tx() as conn:
            done = conn.execute(
                update(jobs)
                .where(owned(job_id, owner))
                .values(lease_expires_at=now + lease_s, updated_at=now)
            )
            return done.rowcount == 1

    def set_stage(self, job_id: str, owner: str, stage: str, *, now: float) -> bool:
        with self.db.tx() as conn:
            done = conn.execute(
                update(jobs).where(owned(job_id, owner)).values(stage=stage, updated_at=now)
            )
            return done.rowcount == 1

    def set_progress(self, job_id: str, owner: str, done: int, total: int) -> bool:
        """How far the owned job's attempt got; False once the lease is not ``owner``'s. The
        row's ``updated_at`` stays: it is not a heartbeat."""
        with self.db.tx() as conn:
            changed = conn.execute(
                update(jobs)
                .where(owned(job_id, owner))
                .values(progress_done=done, progress_total=total)
            )
            return changed.rowcount == 1

    def record_timing(
        self, job_id: str, attempt: int, stage: str, seconds: float, *, now: float
    ) -> None:
        with self.db.tx() as conn:
            conn.execute(
                stage_timings.insert().values(
                    job_id=job_id, attempt=attempt, stage=stage, seconds=seconds, recorded_at=now
                )
            )

    def record_scan(self, job_id: str, outcome: str, *, now: float) -> None:
        with self.db.tx() as conn:
            self.stats.event(conn, job_id, "scan", outcome, now)

    def scanned_clean(self, job_id: str) -> bool:
        with self.db.tx(read_only=True) as conn:
            clean = select(job_events.c.id).where(
                job_events.c.job_id == job_id,
                job_events.c.kind == "scan",
                job_events.c.reason == "clean",
            )
            return conn.execute(clean.limit(1)).first() is not None

    def _finish(
        self, job_id: str, owner: str, state: JobState, event: str, now: float, **values: Any
    ) -> bool:
        """End an owned job in ``state`` and queue its webhook, in one transaction; refused
        (False) once a cancel was requested, so the worker ends it cancelled instead."""
        with self.db.tx() as conn:
            done = conn.execute(
                update(jobs)
                .where(owned(job_id, owner), jobs.c.cancel_requested_at.is_(None))
                .values(
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
            )
            if done.rowcount == 1:
                self.outbox.enqueue(conn, job_id, event, now)
            return done.rowcount == 1

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
        with self.db.tx() as conn:
            # a job whose cancel was requested is not failed: the worker ends it cancelled
            row = conn.execute(
                select(jobs.c.attempts, jobs.c.max_attempts, jobs.c.reason).where(
                    owned(job_id, owner), jobs.c.cancel_requested_at.is_(None)
                )
            ).first()
            if row is None:
                return None
            decision = policy.decide(
                attempts=int(row[0]),
                max_attempts=int(row[1]),
                code=code,
                message=message,
                permanent=permanent,
                previous_reason=row[2],
            )
            done = conn.execute(
                update(jobs)
                .where(owned(job_id, owner), jobs.c.cancel_requested_at.is_(None))
                .values(**decided(decision, now))
            )
            if done.rowcount != 1:  # the rescuer took the job between our read and write
                return None
            return record_decision(conn, self.outbox, self.stats, job_id, decision, code, now)

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
        """Held for a human with the output at ``artifact_key`` and, for a redaction, its
        review ``sheet`` (pages, boxes, classes) and what became of the document."""
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
        """Jobs held for review, oldest first: a tenant's, or every tenant's (None). With
        ``rebuilding``, also the jobs a reviewer sent back with corrections that are not held
        again yet."""
        held = jobs.c.state == JobState.REVIEW.value
        if rebuilding:
            held = or_(held, and_(jobs.c.state.in_(UNFINISHED), jobs.c.review_sheet.is_not(None)))
        where = [held] if tenant is None else [jobs.c.tenant == tenant, held]
        with self.db.tx(read_only=True) as conn:
            rows = (
                conn.execute(select(jobs).where(*where).order_by(jobs.c.finished_at, jobs.c.id))
                .mappings()
                .all()
            )
            return to_jobs(conn, rows)

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
        """A reviewer's corrections: the held job goes back to the interactive lane to be
        rebuilt from its source with them (a person is waiting), and comes back to review.
        Its review sheet stays (the desk shows the job as rebuilding); the decision (who,
        when, how many boxes of each kind) is recorded with the change. False: the job is not
        in review with its source any more."""
        with self.db.tx() as conn:
            row = (
                conn.execute(
                    select(jobs.c.options, jobs.c.template).where(
                        jobs.c.id == job_id,
                        jobs.c.tenant == tenant,
                        jobs.c.state == JobState.REVIEW.value,
                        jobs.c.source_key.is_not(None),
                    )
                )
                .mappings()
                .first()
            )
            if row is None:
                return False
            # the rest of the order as it was (one this version cannot read is refused)
            order = JobOrder.from_json(row["options"], template=str(row["template"]))
            options = replace(order, corrections=Corrections.parse(corrections)).to_json()
            done = conn.execute(
                update(jobs)
                .where(
                    jobs.c.id == job_id,
                    jobs.c.tenant == tenant,
                    jobs.c.state == JobState.REVIEW.value,
                )
                .values(
                    lane=Lane.INTERACTIVE.value,
                    options=options,
                    **_fresh_round(now),
                    message="rebuilding with a reviewer's corrections",
                )
            )
            if done.rowcount != 1:
                return False
            claims.ensure_share(self.db, conn, Lane.INTERACTIVE.value, tenant)
            _review_decision(conn, job_id, tenant, key_id, "apply", now, counts)
            self.db.wake(conn, Lane.INTERACTIVE.value)
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
        """A human's decision on a held job: complete with the held output, or rejected. The
        decision row (who, when, what) is written only with the state change, in its
        transaction: a job decided meanwhile records nothing more."""
        values: dict[str, Any] = (
            {
                "state": JobState.COMPLETE.value,
                "artifact_key": artifact_key,
                "artifact_sha256": artifact_sha256,
                "message": "approved in review",
            }
            if approve
            else {
                "state": JobState.REJECTED.value,
                "reason": "REVIEW_REJECTED",
                "message": "rejected in review",
                "artifact_key": None,
                # a person said no: nothing will run it again, so the source goes now
                "source_key": None,
            }
        )
        with self.db.tx() as conn:
            done = conn.execute(
                update(jobs)
                .where(
                    jobs.c.id == job_id,
                    jobs.c.tenant == tenant,
                    jobs.c.state == JobState.REVIEW.value,
                )
                .values(updated_at=now, **values)
            )
            if done.rowcount != 1:
                return False
            _review_decision(
                conn, job_id, tenant, key_id, "approve" if approve else "reject", now, detail
            )
            return True

    def redrive(self, job_id: str, *, now: float, tenant: str | None = None) -> bool:
        """Send a dead-lettered job round again (an operator fixed the cause), attempts reset.

        Only ``rejected`` jobs that still have their source: a complete job (an approved review
        included) is never run again, so nothing can overwrite what was delivered or approved.
        """
        where = [
            jobs.c.id == job_id,
            jobs.c.state == JobState.REJECTED.value,
            jobs.c.source_key.is_not(None),
        ]
        if tenant is not None:
            where.append(jobs.c.tenant == tenant)
        with self.db.tx() as conn:
            sent = conn.execute(
                update(jobs)
                .where(*where)
                .values(**_fresh_round(now), message=None)
                .returning(jobs.c.lane, jobs.c.tenant)
            ).first()
            if sent is None:
                return False
            claims.ensure_share(self.db, conn, str(sent[0]), str(sent[1]))
            self.db.wake(conn, "any")
            return True

    def release(self, job_id: str, owner: str, *, now: float) -> bool:
        """Give a claimed job back untouched: its attempt and its fair-claiming charge too."""
        with self.db.tx() as conn:
            done = conn.execute(
                update(jobs)
                .where(owned(job_id, owner))
                .values(
                    state=JobState.RETRYING.value,
                    stage=None,
                    progress_done=None,
                    progress_total=None,
                    lease_owner=None,
                    lease_expires_at=None,
                    attempts=jobs.c.attempts - 1,
                    updated_at=now,
                    next_eligible_at=now,
                )
            )
            if done.rowcount == 1:
                job = load_job(conn, job_id)
                claims.refund(conn, job, job.cost or job.pages_estimate or 1)
                self.db.wake(conn, "any")
            return done.rowcount == 1

    def rescue_expired(self, *, now: float, policy: RetryPolicy) -> int:
        rescued = 0
        with self.db.tx() as conn:
            claims.tidy_shares(self.db, conn)
            expired = conn.execute(
                select(
                    jobs.c.id,
                    jobs.c.attempts,
                    jobs.c.max_attempts,
                    jobs.c.reason,
                    jobs.c.cancel_requested_at,
                ).where(jobs.c.state == JobState.RUNNING.value, jobs.c.lease_expires_at < now)
            ).all()
            for job_id, attempts, max_attempts, reason, cancel_at in expired:
                if cancel_at is not None:
                    # the tenant asked it to stop: a dead worker does not earn it another run
                    lapsed = and_(
                        jobs.c.id == job_id,
                        jobs.c.state == JobState.RUNNING.value,
                        jobs.c.lease_expires_at < now,
                    )
                    if self._end_cancelled(conn, str(job_id), lapsed, now):
                        rescued += 1
                    continue
                decision = policy.decide(
                    attempts=int(attempts),
                    max_attempts=int(max_attempts),
                    code="LEASE_EXPIRED",
                    message="the worker stopped answering; retried",
                    permanent=False,
                    previous_reason=reason,
                )
                done = conn.execute(
                    update(jobs)
                    .where(
                        jobs.c.id == job_id,
                        jobs.c.state == JobState.RUNNING.value,
                        jobs.c.lease_expires_at < now,
                    )
                    .values(**decided(decision, now))
                )
                if done.rowcount:
                    rescued += 1
                    record_decision(
                        conn, self.outbox, self.stats, str(job_id), decision, "LEASE_EXPIRED", now
                    )
        return rescued

    def set_verification(self, job_id: str, owner: str, decision: str) -> None:
        with self.db.tx() as conn:
            conn.execute(update(jobs).where(owned(job_id, owner)).values(verification=decision))

    def withhold_label(self, job_id: str, owner: str) -> None:
        with self.db.tx() as conn:
            conn.execute(
                update(jobs).where(owned(job_id, owner)).values(label=None, label_digest=None)
            )

    def delete_source_key(self, job_id: str) -> None:
        with self.db.tx() as conn:
            conn.execute(update(jobs).where(jobs.c.id == job_id).values(source_key=None))

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
        """Up to ``limit`` of the tenant's jobs, newest first by (created_at, id), from just
        past the keyset position ``after``: a job inserted meanwhile sorts before it, so pages
        neither repeat nor skip. ``created_after`` is inclusive, ``created_before`` not."""
        query = select(jobs).where(jobs.c.tenant == tenant)
        if after is not None:
            at, last_id = after
            query = query.where(
                or_(jobs.c.created_at < at, and_(jobs.c.created_at == at, jobs.c.id < last_id))
            )
        if state is not None:
            query = query.where(jobs.c.state == state.value)
        if lane is not None:
            query = query.where(jobs.c.lane == lane.value)
        if created_after is not None:
            query = query.where(jobs.c.created_at >= created_after)
        if created_before is not None:
            query = query.where(jobs.c.created_at < created_before)
        if label_digest is not None:
            query = query.where(jobs.c.label_digest == label_digest)
        query = query.order_by(jobs.c.created_at.desc(), jobs.c.id.desc()).limit(limit)
        with self.db.tx(read_only=True) as conn:
            return to_jobs(conn, conn.execute(query).mappings().all())

    def cancel(self, job_id: str, tenant: str, *, now: float) -> Cancellation | None:
        """A tenant's cancel, decided in one transaction holding the row, so a worker's end
        and the cancel cannot both happen: a waiting or held job ends ``CANCELLED`` now, a
        running one is marked to stop at its next stage boundary. None: not this tenant's."""
        with self.db.tx() as conn:
            query = select(jobs).where(jobs.c.id == job_id, jobs.c.tenant == tenant)
            if self.db.is_postgres:  # SQLite: BEGIN IMMEDIATE already holds every row
                query = query.with_for_update()
            row = conn.execute(query).mappings().first()
            if row is None:
                return None
            state = JobState(row["state"])
            if state.value in WAITING or state is JobState.REVIEW:
                # a held copy goes with the job; a waiting job has no artifact yet
                keys = (
                    row["source_key"],
                    row["artifact_key"] if state is JobState.REVIEW else None,
                )
                ended = self._end_cancelled(
                    conn, job_id, and_(jobs.c.id == job_id, jobs.c.state == state.value), now
                )
                assert ended, "the row is held by this transaction"
                return Cancellation(
                    "cancelled", load_job(conn, job_id), tuple(k for k in keys if k)
                )
            if state is JobState.RUNNING and row["stage"] == SPLIT and not row["lease_owner"]:
                # its page ranges wait or run under their own leases: it ends now, a running
                # range stops at its next page boundary, finding its task gone
                parts = conn.execute(
                    select(tasks.c.part_key).where(
                        tasks.c.job_id == job_id, tasks.c.part_key.is_not(None)
                    )
                ).scalars()
                # each part's page record goes with it (``storage.delete_output``)
                freed = (row["source_key"], *parts)
                ended = self._end_cancelled(
                    conn,
                    job_id,
                    and_(jobs.c.id == job_id, jobs.c.stage == SPLIT, jobs.c.lease_owner.is_(None)),
                    now,
                )
                assert ended, "the row is held by this transaction"
                return Cancellation(
                    "cancelled", load_job(conn, job_id), tuple(k for k in freed if k)
                )
            if state is JobState.RUNNING:
                if row["cancel_requested_at"] is not None:  # asked before: still stopping
                    return Cancellation("repeated", to_job(conn, row))
                conn.execute(
                    update(jobs)
                    .where(jobs.c.id == job_id, jobs.c.state == JobState.RUNNING.value)
                    .values(
                        cancel_requested_at=func.coalesce(jobs.c.cancel_requested_at, now),
                        updated_at=now,
                    )
                )
                return Cancellation("requested", load_job(conn, job_id))
            if state is JobState.REJECTED and row["reason"] == CANCELLED:
                return Cancellation("cancelled", to_job(conn, row))
            return Cancellation("finished", to_job(conn, row))

    def _end_cancelled(self, conn: Connection, job_id: str, where: Any, now: float) -> bool:
        """End the job ``CANCELLED`` under ``where``: its webhook (``job.rejected``) and a
        ``cancelled`` event in the same transaction; it holds no blob after this."""
        done = conn.execute(
            update(jobs)
            .where(where)
            .values(
                state=JobState.REJECTED.value,
                reason=CANCELLED,
                message="cancelled by the tenant",
                stage=None,
                lease_owner=None,
                lease_expires_at=None,
                source_key=None,
                artifact_key=None,
                cancel_requested_at=func.coalesce(jobs.c.cancel_requested_at, now),
                finished_at=now,
                updated_at=now,
            )
        )
        if done.rowcount != 1:
            return False
        conn.execute(tasks.delete().where(tasks.c.job_id == job_id))
        self.outbox.enqueue(conn, job_id, "job.rejected", now)
        self.stats.event(conn, job_id, "cancelled", CANCELLED, now)
        return True

    def delete_artifact_key(self, job_id: str, tenant: str, key: str, *, now: float) -> bool:
        """Forget a complete job's artifact early (its blob already deleted): the job keeps
        its record, without a link. False when the job no longer has that artifact."""
        with self.db.tx() as conn:
            done = conn.execute(
                update(jobs)
                .where(
                    jobs.c.id == job_id,
                    jobs.c.tenant == tenant,
                    jobs.c.state == JobState.COMPLETE.value,
                    jobs.c.artifact_key == key,
                )
                .values(artifact_key=None, updated_at=now)
            )
            return done.rowcount == 1

    # --- a cancel, as the worker meets it -----------------------------------------------------

    def cancel_requested(self, job_id: str) -> bool:
        """Whether the tenant asked this job to stop (read at every stage boundary)."""
        with self.db.tx(read_only=True) as conn:
            at = conn.execute(
                select(jobs.c.cancel_requested_at).where(jobs.c.id == job_id)
            ).scalar()
            return at is not None

    def end_cancelled(self, job_id: str, owner: str, *, now: float) -> bool:
        """End an owned job whose cancel was requested; False when the lease was lost or no
        cancel was asked for (then the job is not this worker's to end)."""
        with self.db.tx() as conn:
            mine = and_(owned(job_id, owner), jobs.c.cancel_requested_at.is_not(None))
            return self._end_cancelled(conn, job_id, mine, now)


def _fresh_round(now: float) -> dict[str, Any]:
    """A job sent round again (a redrive, a reviewer's corrections): waiting from ``now`` with
    its attempts reset and the same time allowance as the first time, from now — it must not
    die of the deadline it had days ago."""
    return {
        "state": JobState.ACCEPTED.value,
        "attempts": 0,
        "reason": None,
        "stage": None,
        "finished_at": None,
        "started_at": None,
        "artifact_key": None,
        "next_eligible_at": now,
        "updated_at": now,
        "progress_done": None,
        "progress_total": None,
        "deadline_at": case(
            (jobs.c.deadline_at.is_(None), None),
            else_=now + (jobs.c.deadline_at - jobs.c.created_at),
        ),
    }


def _review_decision(
    conn: Connection,
    job_id: str,
    tenant: str,
    key_id: str,
    action: str,
    now: float,
    detail: dict[str, Any] | None,
) -> None:
    """A reviewer's decision (who, when, what changed), written with the job's own change."""
    conn.execute(
        review_decisions.insert().values(
            job_id=job_id,
            tenant=tenant,
            key_id=key_id,
            action=action,
            at=now,
            detail=dict(detail or {}),
        )
    )
