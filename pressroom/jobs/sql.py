"""The job store on SQLAlchemy Core: SQLite (WAL) on one machine, PostgreSQL when scaled out."""

from __future__ import annotations

import contextlib
import hashlib
import math
import secrets
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    and_,
    case,
    create_engine,
    event,
    func,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.exc import (
    DataError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    SQLAlchemyError,
)
from sqlalchemy.exc import TimeoutError as PoolTimeout

from pressroom.errors import BadRequest, TransientError
from pressroom.jobs.backoff import Decision, RetryPolicy
from pressroom.jobs.model import Job, JobState, Lane, NewJob
from pressroom.jobs.schema import (
    api_keys,
    customers,
    job_events,
    jobs,
    stage_timings,
    template_allow,
    webhook_deliveries,
    webhook_secrets,
    workers,
)
from pressroom.jobs.store import IdempotencyConflict

WAITING = (JobState.ACCEPTED.value, JobState.RETRYING.value)


class StoreUnavailable(TransientError):
    code = "STORE_UNAVAILABLE"


CHANNEL = "pressroom_jobs"


def sqlalchemy_url(url: str) -> str:
    """``postgresql://…`` (what operators write) means psycopg 3 here, not psycopg2."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def make_engine(url: str) -> Engine:
    """An engine with the settings each database needs to serve as a queue."""
    url = sqlalchemy_url(url)
    if url.startswith("sqlite"):
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            hide_parameters=True,  # error texts must never carry titles, ids or URLs
        )

        @event.listens_for(engine, "connect")
        def _sqlite_connect(dbapi: Any, _record: Any) -> None:
            dbapi.isolation_level = None  # let SQLAlchemy's begin below decide
            cursor = dbapi.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Connection) -> None:
            # Take the write lock up front: a deferred transaction that later writes can fail
            # with SQLITE_BUSY instead of waiting its turn. Reads (marked) take no lock: WAL
            # readers never wait for the writer, nor make it wait.
            if conn.get_execution_options().get("pressroom_read_only"):
                conn.exec_driver_sql("BEGIN")
            else:
                conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=5,
        max_overflow=10,
        hide_parameters=True,
        # an unreachable host fails in seconds (a transient error), not after the OS's minutes
        connect_args={"connect_timeout": 5},
    )


# last-use times are this coarse: a write at most once a minute per key
KEY_USE_GRAIN_S = 60.0


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class DatabaseClock:
    """PostgreSQL's clock, read once a minute and carried forward on this host's monotonic
    clock: every host times leases and deadlines alike, and a jump of one host's wall clock
    cannot make every lease look expired (which would run every job twice)."""

    def __init__(self, engine: Engine, resync_s: float = 60.0) -> None:
        self.engine = engine
        self.resync_s = resync_s
        self._offset = time.time() - time.monotonic()
        self._synced = -math.inf

    def _sync(self) -> None:
        try:
            with self.engine.connect() as conn:
                before = time.monotonic()
                db_now = float(
                    conn.execute(select(func.extract("epoch", func.clock_timestamp()))).scalar_one()
                )
                after = time.monotonic()
        except SQLAlchemyError:
            # keep the last offset and try again at the next resync, not at every call: an
            # unreachable database must not cost each caller a connect attempt
            self._synced = time.monotonic()
            return
        self._offset = db_now - (before + after) / 2
        self._synced = after

    def __call__(self) -> float:
        if time.monotonic() - self._synced > self.resync_s:
            self._sync()
        return time.monotonic() + self._offset


class SqlJobStore:
    """``JobStore`` over one SQLAlchemy engine. Every method is one short transaction."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.is_postgres = engine.dialect.name == "postgresql"
        self._listener: Any = None  # PostgreSQL: one LISTEN connection per process, made lazily

    def _wake(self, conn: Connection, lane: str) -> None:
        """Tell waiting workers (PostgreSQL: NOTIFY, delivered at commit; SQLite: they poll)."""
        if self.is_postgres:
            conn.execute(select(func.pg_notify(CHANNEL, lane)))

    def wait_for_work(self, timeout: float) -> None:
        """Block until a job may be waiting or ``timeout`` passes.

        PostgreSQL: LISTEN, woken by the NOTIFY sent when a job is accepted or sent round again
        (no busy polling; the timeout still catches retries whose backoff ends). SQLite: sleep.
        """
        if not self.is_postgres:
            time.sleep(timeout)
            return
        try:
            if self._listener is None:
                import psycopg

                url = self.engine.url.set(drivername="postgresql")
                self._listener = psycopg.connect(
                    url.render_as_string(hide_password=False), autocommit=True
                )
                self._listener.execute(f"LISTEN {CHANNEL}")
            for _note in self._listener.notifies(timeout=timeout, stop_after=1):
                break
        except Exception as exc:  # the database went away: reconnect next time
            self.close_listener()
            time.sleep(min(timeout, 1.0))
            if (
                not isinstance(exc, OSError | SQLAlchemyError)
                and "psycopg" not in type(exc).__module__
            ):
                raise

    def close_listener(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(Exception):
                self._listener.close()
            self._listener = None

    @contextmanager
    def _tx(self, *, read_only: bool = False) -> Iterator[Connection]:
        try:
            with self.engine.connect() as raw:
                conn = raw.execution_options(pressroom_read_only=True) if read_only else raw
                with conn.begin():
                    yield conn
        except IdempotencyConflict:
            raise
        except (OperationalError, InterfaceError, PoolTimeout) as exc:
            cause = type(getattr(exc, "orig", None) or exc).__name__
            raise StoreUnavailable(f"the job store is unavailable ({cause})") from None
        except DataError:
            # a value the column cannot hold (too long, a NUL): the request's fault
            raise BadRequest("a field is too long or holds characters it may not") from None

    @contextmanager
    def _on(self, conn: Connection | None, *, read_only: bool = False) -> Iterator[Connection]:
        """The caller's transaction when it passes one (admission inside the insert), else a
        new one."""
        if conn is not None:
            yield conn
        else:
            with self._tx(read_only=read_only) as fresh:
                yield fresh

    def read(self) -> Any:
        """A read-only transaction (no write lock on SQLite), for metrics and the dashboard."""
        return self._tx(read_only=True)

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
            "options": job.options,
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
        }
        try:
            with self._tx() as conn:
                if check is not None:
                    if self.is_postgres:  # SQLite: BEGIN IMMEDIATE already serialises writers
                        for name in (f"lane:{job.lane.value}", f"tenant:{job.tenant}"):
                            conn.execute(select(func.pg_advisory_xact_lock(func.hashtext(name))))
                    check(conn)
                conn.execute(jobs.insert().values(**row))
                self._wake(conn, job.lane.value)
                return self._load(conn, job.id), True
        except IntegrityError:
            if job.idempotency_key is None:
                raise
        with self._tx() as conn:
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
            return self._load(conn, str(existing["id"])), False

    def find_idempotent(self, tenant: str, key: str) -> bool:
        """Whether this tenant already used this Idempotency-Key (a replay is coming)."""
        with self._tx(read_only=True) as conn:
            return (
                conn.execute(
                    select(jobs.c.id).where(jobs.c.tenant == tenant, jobs.c.idempotency_key == key)
                ).first()
                is not None
            )

    def get(self, job_id: str, *, tenant: str | None = None) -> Job | None:
        with self._tx(read_only=True) as conn:
            query = select(jobs).where(jobs.c.id == job_id)
            if tenant is not None:
                query = query.where(jobs.c.tenant == tenant)
            row = conn.execute(query).mappings().first()
            return None if row is None else self._job(conn, row)

    # --- the worker side ---------------------------------------------------------------------

    def claim(
        self, lanes: tuple[Lane, ...], owner: str, *, now: float, lease_s: float
    ) -> Job | None:
        with self._tx() as conn:
            for lane in lanes:
                pick = (
                    select(jobs.c.id)
                    .where(
                        jobs.c.lane == lane.value,
                        jobs.c.state.in_(WAITING),
                        jobs.c.next_eligible_at <= now,
                    )
                    .order_by(jobs.c.next_eligible_at, jobs.c.created_at)
                    .limit(1)
                )
                if self.is_postgres:
                    pick = pick.with_for_update(skip_locked=True)
                job_id = conn.execute(pick).scalar()
                if job_id is None:
                    continue
                conn.execute(
                    update(jobs)
                    .where(jobs.c.id == job_id, jobs.c.state.in_(WAITING))
                    .values(
                        state=JobState.RUNNING.value,
                        lease_owner=owner,
                        lease_expires_at=now + lease_s,
                        attempts=jobs.c.attempts + 1,
                        started_at=func.coalesce(jobs.c.started_at, now),
                        updated_at=now,
                        stage=None,
                    )
                )
                self._event(conn, str(job_id), "attempt", "CLAIMED", now)
                return self._load(conn, str(job_id))
        return None

    def _owned(self, job_id: str, owner: str) -> Any:
        return and_(
            jobs.c.id == job_id, jobs.c.lease_owner == owner, jobs.c.state == JobState.RUNNING.value
        )

    def heartbeat(self, job_id: str, owner: str, *, now: float, lease_s: float) -> bool:
        with self._tx() as conn:
            done = conn.execute(
                update(jobs)
                .where(self._owned(job_id, owner))
                .values(lease_expires_at=now + lease_s, updated_at=now)
            )
            return done.rowcount == 1

    def set_stage(self, job_id: str, owner: str, stage: str, *, now: float) -> bool:
        with self._tx() as conn:
            done = conn.execute(
                update(jobs).where(self._owned(job_id, owner)).values(stage=stage, updated_at=now)
            )
            return done.rowcount == 1

    def record_timing(
        self, job_id: str, attempt: int, stage: str, seconds: float, *, now: float
    ) -> None:
        with self._tx() as conn:
            conn.execute(
                stage_timings.insert().values(
                    job_id=job_id, attempt=attempt, stage=stage, seconds=seconds, recorded_at=now
                )
            )

    def _finish(
        self, job_id: str, owner: str, state: JobState, event: str, now: float, **values: Any
    ) -> bool:
        """End an owned job in ``state`` and queue its webhook, in one transaction."""
        with self._tx() as conn:
            done = conn.execute(
                update(jobs)
                .where(self._owned(job_id, owner))
                .values(
                    state=state.value,
                    stage=None,
                    finished_at=now,
                    updated_at=now,
                    lease_owner=None,
                    lease_expires_at=None,
                    **values,
                )
            )
            if done.rowcount == 1:
                self._enqueue_webhook(conn, job_id, event, now)
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
        with self._tx() as conn:
            row = conn.execute(
                select(jobs.c.attempts, jobs.c.max_attempts, jobs.c.reason).where(
                    self._owned(job_id, owner)
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
                .where(self._owned(job_id, owner))
                .values(**self._decided(decision, now))
            )
            if done.rowcount != 1:  # the rescuer took the job between our read and write
                return None
            return self._record_decision(conn, job_id, decision, code, now)

    @staticmethod
    def _decided(decision: Decision, now: float) -> dict[str, Any]:
        """The job row's new values after a failed attempt: retrying after the delay, or dead."""
        values: dict[str, Any] = {
            "state": (JobState.RETRYING if decision.retry else JobState.REJECTED).value,
            "reason": decision.reason,
            "message": decision.message,
            "stage": None,
            "lease_owner": None,
            "lease_expires_at": None,
            "updated_at": now,
        }
        if decision.retry:
            values["next_eligible_at"] = now + decision.delay_s
        else:
            values["finished_at"] = now
        return values

    def _record_decision(
        self, conn: Connection, job_id: str, decision: Decision, code: str, now: float
    ) -> JobState:
        """What follows a failed attempt, the same on every path: a dead letter's webhook and
        event, or a retry's event; a deadline miss is counted either way."""
        if decision.retry:
            self._event(conn, job_id, "retry", code, now)
        else:
            self._enqueue_webhook(conn, job_id, "job.rejected", now)
            self._event(conn, job_id, "dead_letter", decision.reason, now)
        if code == "DEADLINE_EXCEEDED":
            self._event(conn, job_id, "deadline_miss", code, now)
        return JobState.RETRYING if decision.retry else JobState.REJECTED

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
        return self._finish(
            job_id,
            owner,
            JobState.REVIEW,
            "job.review",
            now,
            reason=code,
            message=message,
            artifact_key=artifact_key,
        )

    def in_review(self, tenant: str) -> list[Job]:
        with self._tx(read_only=True) as conn:
            rows = (
                conn.execute(
                    select(jobs)
                    .where(jobs.c.tenant == tenant, jobs.c.state == JobState.REVIEW.value)
                    .order_by(jobs.c.finished_at)
                )
                .mappings()
                .all()
            )
            return self._jobs(conn, rows)

    def decide_review(
        self,
        job_id: str,
        tenant: str,
        *,
        approve: bool,
        now: float,
        artifact_key: str | None = None,
        artifact_sha256: str | None = None,
    ) -> bool:
        """A human's decision on a held job: complete with the held output, or rejected."""
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
        with self._tx() as conn:
            done = conn.execute(
                update(jobs)
                .where(
                    jobs.c.id == job_id,
                    jobs.c.tenant == tenant,
                    jobs.c.state == JobState.REVIEW.value,
                )
                .values(updated_at=now, **values)
            )
            return done.rowcount == 1

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
        with self._tx() as conn:
            done = conn.execute(
                update(jobs)
                .where(*where)
                .values(
                    state=JobState.ACCEPTED.value,
                    attempts=0,
                    reason=None,
                    message=None,
                    stage=None,
                    finished_at=None,
                    started_at=None,
                    artifact_key=None,
                    next_eligible_at=now,
                    updated_at=now,
                    # the same time allowance as the first time, from now: a redriven job
                    # must not die of the deadline it had days ago
                    deadline_at=case(
                        (jobs.c.deadline_at.is_(None), None),
                        else_=now + (jobs.c.deadline_at - jobs.c.created_at),
                    ),
                )
            )
            if done.rowcount == 1:
                self._wake(conn, "any")
            return done.rowcount == 1

    def release(self, job_id: str, owner: str, *, now: float) -> bool:
        with self._tx() as conn:
            done = conn.execute(
                update(jobs)
                .where(self._owned(job_id, owner))
                .values(
                    state=JobState.RETRYING.value,
                    stage=None,
                    lease_owner=None,
                    lease_expires_at=None,
                    attempts=jobs.c.attempts - 1,
                    updated_at=now,
                    next_eligible_at=now,
                )
            )
            if done.rowcount == 1:
                self._wake(conn, "any")
            return done.rowcount == 1

    def rescue_expired(self, *, now: float, policy: RetryPolicy) -> int:
        rescued = 0
        with self._tx() as conn:
            expired = conn.execute(
                select(jobs.c.id, jobs.c.attempts, jobs.c.max_attempts, jobs.c.reason).where(
                    jobs.c.state == JobState.RUNNING.value, jobs.c.lease_expires_at < now
                )
            ).all()
            for job_id, attempts, max_attempts, reason in expired:
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
                    .values(**self._decided(decision, now))
                )
                if done.rowcount:
                    rescued += 1
                    self._record_decision(conn, str(job_id), decision, "LEASE_EXPIRED", now)
        return rescued

    # --- customers and verification ----------------------------------------------------------

    def set_customer(self, tenant: str, customer: str, *, status: str, now: float) -> None:
        """Create the customer or change its status (active | suspended)."""
        if status not in ("active", "suspended"):
            raise ValueError("status must be active or suspended")
        try:
            self._set_customer(tenant, customer, status, now)
        except IntegrityError:  # created by someone else between our update and insert
            self._set_customer(tenant, customer, status, now)

    def _set_customer(self, tenant: str, customer: str, status: str, now: float) -> None:
        with self._tx() as conn:
            done = conn.execute(
                update(customers)
                .where(customers.c.tenant == tenant, customers.c.customer == customer)
                .values(status=status, updated_at=now)
            )
            if done.rowcount == 0:
                conn.execute(
                    customers.insert().values(
                        tenant=tenant,
                        customer=customer,
                        status=status,
                        created_at=now,
                        updated_at=now,
                    )
                )

    def customer_status(self, tenant: str, customer: str) -> str | None:
        with self._tx(read_only=True) as conn:
            row = conn.execute(
                select(customers.c.status).where(
                    customers.c.tenant == tenant, customers.c.customer == customer
                )
            ).first()
        return None if row is None else str(row[0])

    def set_verification(self, job_id: str, owner: str, decision: str) -> None:
        with self._tx() as conn:
            conn.execute(
                update(jobs).where(self._owned(job_id, owner)).values(verification=decision)
            )

    # --- events, workers, admission --------------------------------------------------------------

    def _event(self, conn: Connection, job_id: str, kind: str, reason: str, now: float) -> None:
        conn.execute(
            job_events.insert().from_select(
                ["job_id", "tenant", "lane", "kind", "reason", "at"],
                select(
                    jobs.c.id,
                    jobs.c.tenant,
                    jobs.c.lane,
                    literal(kind),
                    literal(reason),
                    literal(now),
                ).where(jobs.c.id == job_id),
            )
        )

    def record_refusal(self, tenant: str, lane: str, reason: str, *, now: float) -> None:
        """An upload refused at the door (no job row): counted for metrics."""
        with self._tx() as conn:
            conn.execute(
                job_events.insert().values(
                    job_id=None, tenant=tenant, lane=lane, kind="refused", reason=reason, at=now
                )
            )

    def event_counts(self, *, since: float = 0.0) -> dict[tuple[str, str, str], int]:
        """(kind, lane, reason) → count of events at or after ``since``."""
        with self._tx(read_only=True) as conn:
            rows = conn.execute(
                select(job_events.c.kind, job_events.c.lane, job_events.c.reason, func.count())
                .where(job_events.c.at >= since)
                .group_by(job_events.c.kind, job_events.c.lane, job_events.c.reason)
            ).all()
        return {(str(k), str(lane), str(r)): int(n) for k, lane, r, n in rows}

    def worker_seen(self, owner: str, lanes: tuple[str, ...], *, now: float) -> None:
        with self._tx() as conn:
            done = conn.execute(update(workers).where(workers.c.owner == owner).values(seen_at=now))
            if done.rowcount == 0:
                conn.execute(
                    workers.insert().values(owner=owner, lanes=",".join(lanes), seen_at=now)
                )

    def worker_gone(self, owner: str) -> None:
        with self._tx() as conn:
            conn.execute(workers.delete().where(workers.c.owner == owner))

    def live_workers(
        self, *, now: float, within_s: float = 30.0, conn: Connection | None = None
    ) -> dict[str, int]:
        """Worker processes seen in the last ``within_s`` seconds, per lane."""
        with self._on(conn, read_only=True) as conn:
            rows = conn.execute(
                select(workers.c.lanes).where(workers.c.seen_at >= now - within_s)
            ).all()
        counts: dict[str, int] = {}
        for (lanes,) in rows:
            for lane in str(lanes).split(","):
                counts[lane] = counts.get(lane, 0) + 1
        return counts

    def pages_ahead(self, lane: str, *, conn: Connection | None = None) -> int:
        """Pages waiting or running in ``lane`` (estimates; 1 where none is known)."""
        with self._on(conn, read_only=True) as conn:
            return int(
                conn.execute(
                    select(
                        func.coalesce(func.sum(func.coalesce(jobs.c.pages_estimate, 1)), 0)
                    ).where(
                        jobs.c.lane == lane,
                        jobs.c.state.in_((*WAITING, JobState.RUNNING.value)),
                    )
                ).scalar_one()
            )

    def jobs_waiting(self, lane: str, *, conn: Connection | None = None) -> int:
        with self._on(conn, read_only=True) as conn:
            return int(
                conn.execute(
                    select(func.count()).where(jobs.c.lane == lane, jobs.c.state.in_(WAITING))
                ).scalar_one()
            )

    def tenant_load(
        self, tenant: str, *, since: float, conn: Connection | None = None
    ) -> tuple[int, int, float | None]:
        """(jobs not yet finished, pages accepted since ``since``, oldest accept in that window)."""
        with self._on(conn, read_only=True) as conn:
            active = conn.execute(
                select(func.count()).where(
                    jobs.c.tenant == tenant,
                    jobs.c.state.in_((*WAITING, JobState.RUNNING.value)),
                )
            ).scalar_one()
            pages, oldest = conn.execute(
                select(
                    func.coalesce(func.sum(func.coalesce(jobs.c.pages_estimate, 1)), 0),
                    func.min(jobs.c.created_at),
                ).where(jobs.c.tenant == tenant, jobs.c.created_at >= since)
            ).one()
        return int(active), int(pages), None if oldest is None else float(oldest)

    def seconds_per_page(
        self, *, since: float, conn: Connection | None = None
    ) -> tuple[float, int] | None:
        """Measured worker seconds per page (the ``process`` stage) of jobs completed since
        ``since``, with the page count it rests on; None when nothing finished."""
        with self._on(conn, read_only=True) as conn:
            row = conn.execute(
                select(func.sum(stage_timings.c.seconds), func.sum(jobs.c.pages))
                .select_from(stage_timings.join(jobs, stage_timings.c.job_id == jobs.c.id))
                .where(
                    stage_timings.c.stage == "process",
                    jobs.c.state == JobState.COMPLETE.value,
                    jobs.c.finished_at >= since,
                    jobs.c.pages > 0,
                    stage_timings.c.attempt == jobs.c.attempts,
                )
            ).one()
        seconds, pages = row
        if not seconds or not pages:
            return None
        return float(seconds) / float(pages), int(pages)

    # --- for operators and metrics -------------------------------------------------------------

    def counts(self) -> dict[tuple[str, str], int]:
        with self._tx(read_only=True) as conn:
            rows = conn.execute(
                select(jobs.c.lane, jobs.c.state, func.count()).group_by(jobs.c.lane, jobs.c.state)
            ).all()
        return {(str(lane), str(state)): int(n) for lane, state, n in rows}

    def oldest_waiting(self, *, now: float) -> dict[str, float]:
        with self._tx(read_only=True) as conn:
            rows = conn.execute(
                select(jobs.c.lane, func.min(jobs.c.created_at))
                .where(
                    or_(
                        jobs.c.state == JobState.ACCEPTED.value,
                        jobs.c.state == JobState.RETRYING.value,
                    )
                )
                .group_by(jobs.c.lane)
            ).all()
        return {str(lane): now - float(oldest) for lane, oldest in rows if oldest is not None}

    def oldest_by_state(self, *, now: float) -> dict[tuple[str, str], float]:
        """Age of the oldest job per (lane, state) among those not finished."""
        with self._tx(read_only=True) as conn:
            rows = conn.execute(
                select(jobs.c.lane, jobs.c.state, func.min(jobs.c.created_at))
                .where(jobs.c.state.in_((*WAITING, JobState.RUNNING.value)))
                .group_by(jobs.c.lane, jobs.c.state)
            ).all()
        return {(str(a), str(b)): now - float(c) for a, b, c in rows if c is not None}

    def delete_source_key(self, job_id: str) -> None:
        with self._tx() as conn:
            conn.execute(update(jobs).where(jobs.c.id == job_id).values(source_key=None))

    def _finished_before(
        self, state: JobState, column: Any, before: float
    ) -> list[tuple[str, str]]:
        with self._tx(read_only=True) as conn:
            rows = conn.execute(
                select(jobs.c.id, column).where(
                    jobs.c.state == state.value, jobs.c.finished_at < before, column.is_not(None)
                )
            ).all()
        return [(str(a), str(b)) for a, b in rows]

    def expired_artifacts(self, *, before: float) -> list[tuple[str, str]]:
        """Artifacts of jobs completed before ``before``."""
        return self._finished_before(JobState.COMPLETE, jobs.c.artifact_key, before)

    def expired_rejected_sources(self, *, before: float) -> list[tuple[str, str]]:
        """Sources kept for a redrive of jobs dead-lettered before ``before``."""
        return self._finished_before(JobState.REJECTED, jobs.c.source_key, before)

    def expired_reviews(self, *, before: float) -> list[str]:
        """Jobs held for review since before ``before``: nobody decided in time."""
        with self._tx(read_only=True) as conn:
            rows = conn.execute(
                select(jobs.c.id).where(
                    jobs.c.state == JobState.REVIEW.value, jobs.c.finished_at < before
                )
            ).all()
        return [str(r[0]) for r in rows]

    def expire_review(self, job_id: str, *, now: float) -> tuple[str | None, str | None] | None:
        """End a held job ``REVIEW_EXPIRED`` (webhook and dead-letter event with it); returns
        the (held copy, source) keys for the caller to delete, None when a reviewer decided
        first."""
        with self._tx() as conn:
            row = conn.execute(
                select(jobs.c.artifact_key, jobs.c.source_key).where(
                    jobs.c.id == job_id, jobs.c.state == JobState.REVIEW.value
                )
            ).first()
            if row is None:
                return None
            done = conn.execute(
                update(jobs)
                .where(jobs.c.id == job_id, jobs.c.state == JobState.REVIEW.value)
                .values(
                    state=JobState.REJECTED.value,
                    reason="REVIEW_EXPIRED",
                    message="nobody reviewed the held copy within the retention window",
                    artifact_key=None,
                    source_key=None,
                    updated_at=now,
                    finished_at=now,
                )
            )
            if done.rowcount != 1:
                return None
            self._enqueue_webhook(conn, job_id, "job.rejected", now)
            self._event(conn, job_id, "dead_letter", "REVIEW_EXPIRED", now)
            return row[0], row[1]

    def tenant_bytes(
        self, tenant: str, *, since: float, conn: Connection | None = None
    ) -> tuple[int, int]:
        """(bytes of this tenant's sources still held, bytes of sources accepted since
        ``since``): what the per-tenant byte quotas count. ``conn``: inside that transaction."""
        with contextlib.ExitStack() as stack:
            if conn is None:
                conn = stack.enter_context(self._tx(read_only=True))
            held = conn.execute(
                select(func.coalesce(func.sum(jobs.c.source_bytes), 0)).where(
                    jobs.c.tenant == tenant, jobs.c.source_key.is_not(None)
                )
            ).scalar_one()
            recent = conn.execute(
                select(func.coalesce(func.sum(jobs.c.source_bytes), 0)).where(
                    jobs.c.tenant == tenant, jobs.c.created_at >= since
                )
            ).scalar_one()
        return int(held), int(recent)

    def prune_history(self, *, before: float) -> int:
        """Drop job events, stage timings and worker rows older than ``before``; returns rows
        removed."""
        with self._tx() as conn:
            gone = conn.execute(job_events.delete().where(job_events.c.at < before)).rowcount
            gone += conn.execute(
                stage_timings.delete().where(stage_timings.c.recorded_at < before)
            ).rowcount
            gone += conn.execute(workers.delete().where(workers.c.seen_at < before)).rowcount
        return int(gone)

    def forget_artifact(self, job_id: str) -> None:
        with self._tx() as conn:
            conn.execute(update(jobs).where(jobs.c.id == job_id).values(artifact_key=None))

    # --- webhooks: an outbox written in the same transaction as the final state -------------

    def _enqueue_webhook(self, conn: Connection, job_id: str, event_type: str, now: float) -> None:
        row = conn.execute(
            select(jobs.c.tenant, jobs.c.options, jobs.c.state, jobs.c.reason, jobs.c.pages).where(
                jobs.c.id == job_id
            )
        ).first()
        if row is None:
            return
        url = (row.options or {}).get("webhook_url")
        if not url:
            return
        payload = {
            "type": event_type,
            "timestamp": now,
            "data": {"id": job_id, "state": row.state, "reason": row.reason, "pages": row.pages},
        }
        conn.execute(
            webhook_deliveries.insert().values(
                id="msg_" + secrets.token_hex(12),
                job_id=job_id,
                tenant=row.tenant,
                url=url,
                event=event_type,
                payload=payload,
                state="pending",
                attempts=0,
                next_attempt_at=now,
                created_at=now,
            )
        )

    def claim_deliveries(
        self,
        owner: str,
        *,
        now: float,
        lease_s: float,
        limit: int = 10,
        skip_tenants: Collection[str] = (),
    ) -> list[dict[str, Any]]:
        """Lease up to ``limit`` due deliveries, oldest first, none of ``skip_tenants`` (those
        already at their share of this process's senders: one tenant's burst to a slow
        endpoint must not fill every sender while other tenants' deliveries wait)."""
        with self._tx() as conn:
            pick = (
                select(webhook_deliveries.c.id)
                .where(
                    webhook_deliveries.c.state == "pending",
                    webhook_deliveries.c.next_attempt_at <= now,
                    or_(
                        webhook_deliveries.c.lease_expires_at.is_(None),
                        webhook_deliveries.c.lease_expires_at < now,
                    ),
                )
                .order_by(webhook_deliveries.c.next_attempt_at)
                .limit(limit)
            )
            if skip_tenants:
                pick = pick.where(webhook_deliveries.c.tenant.not_in(sorted(skip_tenants)))
            if self.is_postgres:
                pick = pick.with_for_update(skip_locked=True)
            ids = [str(x) for x in conn.execute(pick).scalars()]
            if not ids:
                return []
            conn.execute(
                update(webhook_deliveries)
                .where(webhook_deliveries.c.id.in_(ids))
                .values(
                    lease_owner=owner,
                    lease_expires_at=now + lease_s,
                    attempts=webhook_deliveries.c.attempts + 1,
                )
            )
            rows = (
                conn.execute(select(webhook_deliveries).where(webhook_deliveries.c.id.in_(ids)))
                .mappings()
                .all()
            )
            return [dict(r) for r in rows]

    def delivery_result(
        self,
        delivery_id: str,
        owner: str,
        *,
        ok: bool,
        error: str | None,
        now: float,
        policy: RetryPolicy,
    ) -> str:
        with self._tx() as conn:
            row = conn.execute(
                select(webhook_deliveries.c.attempts).where(
                    webhook_deliveries.c.id == delivery_id,
                    webhook_deliveries.c.lease_owner == owner,
                )
            ).first()
            if row is None:
                return "lost"
            if ok:
                values: dict[str, Any] = {
                    "state": "delivered",
                    "delivered_at": now,
                    "last_error": None,
                }
            elif policy.exhausted(int(row[0])):
                values = {"state": "failed", "last_error": error}
            else:
                values = {"next_attempt_at": now + policy.delay(int(row[0])), "last_error": error}
            conn.execute(
                update(webhook_deliveries)
                .where(webhook_deliveries.c.id == delivery_id)
                .values(lease_owner=None, lease_expires_at=None, **values)
            )
            return str(values.get("state", "pending"))

    def deliveries(self, job_id: str) -> list[dict[str, Any]]:
        with self._tx(read_only=True) as conn:
            rows = (
                conn.execute(
                    select(webhook_deliveries).where(webhook_deliveries.c.job_id == job_id)
                )
                .mappings()
                .all()
            )
        return [dict(r) for r in rows]

    def webhook_secret(self, tenant: str, *, now: float) -> str:
        """The tenant's signing secret (``whsec_`` + base64), made on first use."""
        try:
            return self._webhook_secret(tenant, now)
        except IntegrityError:  # two first uses at once: the other one's secret stands
            return self._webhook_secret(tenant, now)

    def _webhook_secret(self, tenant: str, now: float) -> str:
        import base64

        with self._tx() as conn:
            row = conn.execute(
                select(webhook_secrets.c.secret).where(webhook_secrets.c.tenant == tenant)
            ).first()
            if row is not None:
                return str(row[0])
            secret = "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
            conn.execute(
                webhook_secrets.insert().values(tenant=tenant, secret=secret, created_at=now)
            )
            return secret

    # --- keys --------------------------------------------------------------------------------

    def create_key(self, tenant: str, *, now: float, role: str = "tenant") -> str:
        """A new key that never expires; the key alone (see ``new_key``)."""
        return self.new_key(tenant, now=now, role=role)[1]

    def new_key(
        self,
        tenant: str,
        *,
        now: float,
        role: str = "tenant",
        expires_at: float | None = None,
    ) -> tuple[str, str]:
        """A new API key (stored hashed): ``(id, key)``. The id names the key in lists and
        revocations; the key itself is shown once. ``role="operator"``: redrive, metrics and
        dashboard for every tenant; its ``tenant`` is only a label."""
        from pressroom.storage import TENANT_RE

        if role not in ("tenant", "operator"):
            raise ValueError("role must be tenant or operator")
        if not TENANT_RE.match(tenant):
            raise ValueError("a tenant name is 1-64 letters, digits, '.', '_' or '-'")
        if expires_at is not None and expires_at <= now:
            raise ValueError("the expiry is in the past")
        key = ("po_" if role == "operator" else "pr_") + secrets.token_urlsafe(32)
        key_id = "k_" + secrets.token_hex(6)
        with self._tx() as conn:
            conn.execute(
                api_keys.insert().values(
                    key_hash=hash_key(key),
                    id=key_id,
                    tenant=tenant,
                    created_at=now,
                    role=role,
                    expires_at=expires_at,
                )
            )
        return key_id, key

    def key_info(self, key: str, *, now: float | None = None) -> tuple[str, str] | None:
        """(tenant, role) of a live key: not revoked, not expired. Records its last use (at
        most once a minute, so a busy client does not turn every request into a write)."""
        now = time.time() if now is None else now
        digest = hash_key(key)
        with self._tx(read_only=True) as conn:
            row = conn.execute(
                select(
                    api_keys.c.tenant,
                    api_keys.c.role,
                    api_keys.c.expires_at,
                    api_keys.c.last_used_at,
                ).where(api_keys.c.key_hash == digest, api_keys.c.revoked_at.is_(None))
            ).first()
        if row is None or (row[2] is not None and float(row[2]) <= now):
            return None
        if row[3] is None or now - float(row[3]) > KEY_USE_GRAIN_S:
            with contextlib.suppress(TransientError), self._tx() as conn:
                conn.execute(
                    update(api_keys)
                    .where(
                        api_keys.c.key_hash == digest,
                        or_(
                            api_keys.c.last_used_at.is_(None),
                            api_keys.c.last_used_at < now - KEY_USE_GRAIN_S,
                        ),
                    )
                    .values(last_used_at=now)
                )
        return str(row[0]), str(row[1])

    def list_keys(self, tenant: str | None = None) -> list[dict[str, Any]]:
        """Every key's id, tenant, role and dates (never the secret or its hash)."""
        query = select(
            api_keys.c.id,
            api_keys.c.tenant,
            api_keys.c.role,
            api_keys.c.created_at,
            api_keys.c.last_used_at,
            api_keys.c.expires_at,
            api_keys.c.revoked_at,
        ).order_by(api_keys.c.created_at, api_keys.c.id)
        if tenant is not None:
            query = query.where(api_keys.c.tenant == tenant)
        with self._tx(read_only=True) as conn:
            return [dict(row) for row in conn.execute(query).mappings().all()]

    def revoke_key(self, id_or_key: str, *, now: float) -> str | None:
        """Revoke by id or by the key itself; returns the id, None when there is no such live
        key. Every API host reads keys from this table per request, so it holds at once."""
        match = (
            api_keys.c.id == id_or_key
            if id_or_key.startswith("k_")
            else api_keys.c.key_hash == hash_key(id_or_key)
        )
        with self._tx() as conn:
            row = conn.execute(
                select(api_keys.c.id).where(match, api_keys.c.revoked_at.is_(None))
            ).first()
            if row is None:
                return None
            conn.execute(update(api_keys).where(match).values(revoked_at=now))
            return str(row[0])

    def tenant_for_key(self, key: str, *, now: float | None = None) -> str | None:
        info = self.key_info(key, now=now)
        return None if info is None or info[1] != "tenant" else info[0]

    def has_keys(self) -> bool:
        with self._tx(read_only=True) as conn:
            return conn.execute(select(func.count()).select_from(api_keys)).scalar_one() > 0

    def clock(self) -> Callable[[], float]:
        """The clock leases and deadlines are measured on: the database's (PostgreSQL, shared
        by every host); SQLite lives on one host, whose clock it is."""
        return DatabaseClock(self.engine) if self.is_postgres else time.time

    # --- template allow-lists ------------------------------------------------------------------

    def allow_templates(self, tenant: str, names: list[str], *, now: float) -> None:
        with self._tx() as conn:
            have = set(
                conn.execute(
                    select(template_allow.c.template).where(template_allow.c.tenant == tenant)
                ).scalars()
            )
            for name in sorted(set(names) - have):
                conn.execute(
                    template_allow.insert().values(tenant=tenant, template=name, created_at=now)
                )

    def disallow_templates(self, tenant: str, names: list[str] | None) -> None:
        """Take names off a tenant's list; ``None`` drops the list (every template allowed)."""
        where = [template_allow.c.tenant == tenant]
        if names is not None:
            where.append(template_allow.c.template.in_(names))
        with self._tx() as conn:
            conn.execute(template_allow.delete().where(*where))

    def allowed_templates(self, tenant: str) -> frozenset[str] | None:
        """The templates a tenant may use; ``None`` while it has no list (all allowed)."""
        with self._tx(read_only=True) as conn:
            names = frozenset(
                str(x)
                for x in conn.execute(
                    select(template_allow.c.template).where(template_allow.c.tenant == tenant)
                ).scalars()
            )
        return names or None

    # --- rows to values ----------------------------------------------------------------------

    def _load(self, conn: Connection, job_id: str) -> Job:
        row = conn.execute(select(jobs).where(jobs.c.id == job_id)).mappings().one()
        return self._job(conn, row)

    def _job(self, conn: Connection, row: Any) -> Job:
        return self._jobs(conn, [row])[0]

    def _jobs(self, conn: Connection, rows: Any) -> list[Job]:
        """Rows to jobs, with every job's stage timings read in one query (not one a job)."""
        timings: dict[str, dict[str, float]] = {str(row["id"]): {} for row in rows}
        if timings:
            for job_id, stage, seconds in conn.execute(
                select(
                    stage_timings.c.job_id,
                    stage_timings.c.stage,
                    func.sum(stage_timings.c.seconds),
                )
                .where(stage_timings.c.job_id.in_(list(timings)))
                .group_by(stage_timings.c.job_id, stage_timings.c.stage)
            ).all():
                timings[str(job_id)][str(stage)] = round(float(seconds), 4)
        return [self._row_job(row, timings[str(row["id"])]) for row in rows]

    @staticmethod
    def _row_job(row: Any, timings: dict[str, float]) -> Job:
        return Job(
            id=str(row["id"]),
            tenant=str(row["tenant"]),
            lane=Lane(row["lane"]),
            state=JobState(row["state"]),
            stage=row["stage"],
            attempts=int(row["attempts"]),
            max_attempts=int(row["max_attempts"]),
            reason=row["reason"],
            message=row["message"],
            source_key=row["source_key"],
            source_sha256=str(row["source_sha256"]),
            source_bytes=int(row["source_bytes"]),
            kind=str(row["kind"]),
            template=str(row["template"]),
            title=row["title"],
            options=dict(row["options"] or {}),
            idempotency_key=row["idempotency_key"],
            request_hash=row["request_hash"],
            created_at=float(row["created_at"]),
            updated_at=float(row["updated_at"]),
            next_eligible_at=float(row["next_eligible_at"]),
            started_at=row["started_at"],
            finished_at=row["finished_at"],
            lease_owner=row["lease_owner"],
            lease_expires_at=row["lease_expires_at"],
            artifact_key=row["artifact_key"],
            artifact_sha256=row["artifact_sha256"],
            pages=row["pages"],
            deadline_at=row["deadline_at"],
            trace_id=row["trace_id"],
            customer=row["customer"],
            verification=row["verification"],
            pages_estimate=row["pages_estimate"],
            parent_span_id=row["parent_span_id"],
            timings=timings,
        )


__all__ = ["SQLAlchemyError", "SqlJobStore", "StoreUnavailable", "hash_key", "make_engine"]
