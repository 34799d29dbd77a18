"""Claiming work fairly between tenants, and the steps a job's claim and a page range's claim
share with their ends (what a lease owns, what a failed attempt writes). The queue
(``jobs.queue``) and the page-range tasks (``jobs.tasks``) both use these; neither reaches into
the other.

Fairness is weighted fair queueing by work units (start-time fair queueing). In each lane every
tenant has a virtual time, ``vtime``: the work units it was given there, each divided by its
weight (``pressroom tenants weight T N``; 1 when none is set). A claim takes, of the lane's
eligible units — whole jobs, and page ranges of split jobs — one of the tenant whose vtime is
least, oldest first, and charges it: its vtime grows by the unit's cost over its weight. With
equal weights that is round-robin by pages: while tenant A's worker reads A's first scan, B's
single job is claimed next, before A's second.

A tenant that had nothing waiting must not bank the time it was idle, or it would have the lane
to itself when it came back: each lane keeps a clock, the vtime the last claimed unit started
at, and a tenant behind the clock counts as at it.

A job's cost is its work units (``jobs.cost``: pages, plus a redaction's text size). A job that
splits into page ranges is refunded its whole cost when it splits; each range is charged its
pages as it is claimed, so a big document takes its turns range by range, between other
tenants' jobs.

One transaction claims (``FOR UPDATE SKIP LOCKED`` on PostgreSQL; SQLite's ``BEGIN
IMMEDIATE`` already serialises writers): the least-served tenant with a job waiting is chosen
from the lane's shares, then its oldest job in index order, under SKIP LOCKED — the fairness
is in an ORDER BY, not a loop; the best page range of the lane likewise (one statement: a lane
holds few). The job and the range are compared, a range first when their tenants tie (work
begun ends sooner), and the winner is charged in the same transaction. Every tenant with a job
waiting has its share row (``ensure_share``, written with the job, and ``tidy_shares``, with
each rescue of lapsed leases, for a row written by an older version or lost). When the chosen
tenant's jobs are all locked by other claimers that instant, or no tenant with a row has work,
the lane's eligible jobs are ordered whole instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    and_,
    bindparam,
    case,
    func,
    literal,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from pressroom.jobs.backoff import Decision
from pressroom.jobs.model import (
    SPLIT,
    TASK_RUNNING,
    TASK_WAITING,
    UNFINISHED,
    WAITING,
    Job,
    JobState,
    Lane,
    Task,
)
from pressroom.jobs.rows import load_job
from pressroom.jobs.schema import fair_shares, jobs, lane_clocks, tasks, tenant_weights
from pressroom.jobs.transport import Database

if TYPE_CHECKING:
    from pressroom.jobs.outbox import SqlOutbox
    from pressroom.jobs.stats import SqlStats

DEFAULT_WEIGHT = 1
MAX_WEIGHT = 1000


@dataclass(frozen=True, slots=True)
class Claimed:
    """What a claim took: a job (``task`` None), or one page range of the split ``job``."""

    job: Job
    task: Task | None = None


# --- what a lease owns, and what a failed attempt writes ----------------------------------------


def owned(job_id: str, owner: str) -> ColumnElement[bool]:
    """The job, running under this worker's lease."""
    return and_(
        jobs.c.id == job_id, jobs.c.lease_owner == owner, jobs.c.state == JobState.RUNNING.value
    )


def decided(decision: Decision, now: float) -> dict[str, Any]:
    """The job row's new values after a failed attempt: retrying after the delay, or dead."""
    values: dict[str, Any] = {
        "state": (JobState.RETRYING if decision.retry else JobState.REJECTED).value,
        "reason": decision.reason,
        "message": decision.message,
        "stage": None,
        "progress_done": None,  # the next attempt reports its own
        "progress_total": None,
        "lease_owner": None,
        "lease_expires_at": None,
        "updated_at": now,
    }
    if decision.retry:
        values["next_eligible_at"] = now + decision.delay_s
    else:
        values["finished_at"] = now
    return values


def record_decision(
    conn: Connection,
    outbox: SqlOutbox,
    stats: SqlStats,
    job_id: str,
    decision: Decision,
    code: str,
    now: float,
) -> JobState:
    """What follows a failed attempt, the same on every path: a dead letter's webhook and
    event, or a retry's event; a deadline miss is counted either way."""
    if decision.retry:
        stats.event(conn, job_id, "retry", code, now)
    else:
        outbox.enqueue(conn, job_id, "job.rejected", now)
        stats.event(conn, job_id, "dead_letter", decision.reason, now)
    if code == "DEADLINE_EXCEEDED":
        stats.event(conn, job_id, "deadline_miss", code, now)
    return JobState.RETRYING if decision.retry else JobState.REJECTED


# --- fair claiming ------------------------------------------------------------------------------


def waiting() -> ColumnElement[bool]:
    """A job waiting its turn, with the states written into the SQL (not bound), so that both
    databases can use the partial index of waiting jobs (``ix_jobs_fair``)."""
    return jobs.c.state.in_(
        bindparam("waiting", list(WAITING), expanding=True, literal_execute=True)
    )


def job_cost() -> ColumnElement[Any]:
    """A job's work units: its charged cost, else its estimated pages, at least 1."""
    return func.coalesce(jobs.c.cost, jobs.c.pages_estimate, 1)


def _weight() -> ColumnElement[Any]:
    return func.coalesce(tenant_weights.c.weight, DEFAULT_WEIGHT)


def _vtime(clock: float) -> ColumnElement[Any]:
    """The tenant's virtual time in the lane, never behind the lane's clock."""
    raw = func.coalesce(fair_shares.c.vtime, clock)
    return case((raw < clock, literal(clock)), else_=raw)


def _with_shares(base: Any) -> Any:
    """``base`` (a join that has ``jobs``) with the job's tenant's share and weight."""
    return base.outerjoin(
        fair_shares, and_(fair_shares.c.lane == jobs.c.lane, fair_shares.c.tenant == jobs.c.tenant)
    ).outerjoin(tenant_weights, tenant_weights.c.tenant == jobs.c.tenant)


def lane_clock(conn: Connection, lane: str) -> float:
    clock = conn.execute(select(lane_clocks.c.clock).where(lane_clocks.c.lane == lane)).scalar()
    return float(clock or 0.0)


@dataclass(frozen=True, slots=True)
class _Pick:
    job_id: str
    number: int | None  # the range's number; None: the whole job
    tenant: str
    vtime: float
    weight: int
    cost: int


def _pick_job(db: Database, conn: Connection, lane: str, now: float, clock: float) -> _Pick | None:
    """The least-served tenant's oldest eligible job. The tenant is chosen first, from the
    lane's shares (one probe of the waiting jobs' index each), then its oldest job in index
    order, so a claim never sorts the lane's waiting jobs. When that finds nothing (every job
    of that tenant locked by other claimers this instant, or a tenant without a share row),
    the whole lane is ordered instead."""
    head = (
        select(func.min(jobs.c.next_eligible_at))
        .where(
            jobs.c.lane == fair_shares.c.lane,
            jobs.c.tenant == fair_shares.c.tenant,
            waiting(),
            jobs.c.next_eligible_at <= now,
        )
        .scalar_subquery()
    )
    turn = conn.execute(
        select(fair_shares.c.tenant, _vtime(clock))
        .where(fair_shares.c.lane == lane, head.is_not(None))
        .order_by(_vtime(clock), head, fair_shares.c.tenant)
        .limit(1)
    ).first()
    if turn is not None:
        tenant, vtime = str(turn[0]), float(turn[1])
        pick = (
            select(jobs.c.id, job_cost())
            .where(
                jobs.c.lane == lane,
                jobs.c.tenant == tenant,
                waiting(),
                jobs.c.next_eligible_at <= now,
            )
            .order_by(jobs.c.next_eligible_at, jobs.c.created_at, jobs.c.id)
            .limit(1)
        )
        if db.is_postgres:
            pick = pick.with_for_update(skip_locked=True)
        row = conn.execute(pick).first()
        if row is not None:
            weight = conn.execute(
                select(tenant_weights.c.weight).where(tenant_weights.c.tenant == tenant)
            ).scalar()
            cost = int(row[1])
            return _Pick(str(row[0]), None, tenant, vtime, int(weight or DEFAULT_WEIGHT), cost)
    return _lane_order_job(db, conn, lane, now, clock)


def _lane_order_job(
    db: Database, conn: Connection, lane: str, now: float, clock: float
) -> _Pick | None:
    """The fair next job by ordering every eligible job of the lane (the slow path)."""
    vtime = _vtime(clock)
    pick = (
        select(jobs.c.id, jobs.c.tenant, vtime, _weight(), job_cost())
        .select_from(_with_shares(jobs))
        .where(jobs.c.lane == lane, waiting(), jobs.c.next_eligible_at <= now)
        .order_by(vtime, jobs.c.next_eligible_at, jobs.c.created_at, jobs.c.id)
        .limit(1)
    )
    if db.is_postgres:
        pick = pick.with_for_update(skip_locked=True, of=jobs)
    row = conn.execute(pick).first()
    if row is None:
        return None
    return _Pick(str(row[0]), None, str(row[1]), float(row[2]), int(row[3]), int(row[4]))


def ensure_share(db: Database, conn: Connection, lane: str, tenant: str) -> None:
    """The tenant has a share row in the lane (at the lane's clock when new): a job is about
    to wait there."""
    insert = postgresql_insert if db.is_postgres else sqlite_insert
    clock = select(lane_clocks.c.clock).where(lane_clocks.c.lane == lane).scalar_subquery()
    conn.execute(
        insert(fair_shares)
        .values(lane=lane, tenant=tenant, vtime=func.coalesce(clock, 0.0))
        .on_conflict_do_nothing(index_elements=[fair_shares.c.lane, fair_shares.c.tenant])
    )


def _pick_task(db: Database, conn: Connection, lane: str, now: float, clock: float) -> _Pick | None:
    vtime = _vtime(clock)
    pick = (
        select(
            tasks.c.job_id,
            tasks.c.number,
            jobs.c.tenant,
            vtime,
            _weight(),
            tasks.c.end_page - tasks.c.first_page,
        )
        .select_from(_with_shares(tasks.join(jobs, jobs.c.id == tasks.c.job_id)))
        .where(
            jobs.c.lane == lane,
            jobs.c.state == JobState.RUNNING.value,
            jobs.c.stage == SPLIT,
            jobs.c.cancel_requested_at.is_(None),
            tasks.c.state == TASK_WAITING,
            tasks.c.next_eligible_at <= now,
        )
        .order_by(vtime, jobs.c.created_at, jobs.c.id, tasks.c.number)
        .limit(1)
    )
    if db.is_postgres:
        pick = pick.with_for_update(skip_locked=True, of=tasks)
    row = conn.execute(pick).first()
    if row is None:
        return None
    return _Pick(
        str(row[0]), int(row[1]), str(row[2]), float(row[3]), int(row[4]), max(1, int(row[5]))
    )


def _charge(db: Database, conn: Connection, lane: str, pick: _Pick, clock: float) -> None:
    """The tenant's vtime moves past the unit it was given; the lane's clock to where that
    unit started (it never goes back)."""
    insert = postgresql_insert if db.is_postgres else sqlite_insert
    step = pick.cost / pick.weight
    share = insert(fair_shares).values(lane=lane, tenant=pick.tenant, vtime=pick.vtime + step)
    behind = fair_shares.c.vtime < clock
    conn.execute(
        share.on_conflict_do_update(
            index_elements=[fair_shares.c.lane, fair_shares.c.tenant],
            set_={"vtime": case((behind, clock), else_=fair_shares.c.vtime) + step},
        )
    )
    # the clock's row is written only when it moves forward (an ON CONFLICT update would lock
    # it for every claim of the lane, even when its WHERE is false)
    moved = conn.execute(
        update(lane_clocks)
        .where(lane_clocks.c.lane == lane, lane_clocks.c.clock < pick.vtime)
        .values(clock=pick.vtime)
    )
    if moved.rowcount == 0:
        conn.execute(
            insert(lane_clocks)
            .values(lane=lane, clock=pick.vtime)
            .on_conflict_do_nothing(index_elements=[lane_clocks.c.lane])
        )


def refund(conn: Connection, job: Job, cost: int) -> None:
    """Give back ``cost`` units charged for ``job`` (it split: its ranges are charged as they
    are claimed instead)."""
    weight = conn.execute(
        select(tenant_weights.c.weight).where(tenant_weights.c.tenant == job.tenant)
    ).scalar()
    conn.execute(
        update(fair_shares)
        .where(fair_shares.c.lane == job.lane.value, fair_shares.c.tenant == job.tenant)
        .values(vtime=fair_shares.c.vtime - cost / int(weight or DEFAULT_WEIGHT))
    )


def tidy_shares(db: Database, conn: Connection) -> None:
    """Housekeeping, with the rescue of lapsed leases: every tenant with a job waiting gets
    its share row (one written by an older version, or lost, would otherwise leave its jobs
    to the slow path, behind every other tenant's), and a share row with nothing unfinished
    behind it and no credit over the clock goes (a new one starts at the clock, the same)."""
    insert = postgresql_insert if db.is_postgres else sqlite_insert
    clock = select(lane_clocks.c.clock).where(lane_clocks.c.lane == jobs.c.lane).scalar_subquery()
    missing = (
        select(jobs.c.lane, jobs.c.tenant, func.coalesce(func.max(clock), 0.0))
        .where(waiting())
        .group_by(jobs.c.lane, jobs.c.tenant)
    )
    conn.execute(
        insert(fair_shares)
        .from_select(["lane", "tenant", "vtime"], missing)
        .on_conflict_do_nothing(index_elements=[fair_shares.c.lane, fair_shares.c.tenant])
    )
    unfinished = (
        select(jobs.c.id)
        .where(
            jobs.c.lane == fair_shares.c.lane,
            jobs.c.tenant == fair_shares.c.tenant,
            jobs.c.state.in_(UNFINISHED),
        )
        .exists()
    )
    behind = fair_shares.c.vtime <= func.coalesce(
        select(lane_clocks.c.clock)
        .where(lane_clocks.c.lane == fair_shares.c.lane)
        .scalar_subquery(),
        0.0,
    )
    conn.execute(fair_shares.delete().where(~unfinished, behind))


def _take_job(
    conn: Connection, stats: SqlStats, job_id: str, owner: str, now: float, lease_s: float
) -> None:
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
            # an attempt before this one (lost its lease, rescued) said how far it got: not
            # this one
            progress_done=None,
            progress_total=None,
        )
    )
    stats.event(conn, job_id, "attempt", "CLAIMED", now)


def _take_task(
    conn: Connection, job_id: str, number: int, owner: str, now: float, lease_s: float
) -> Task:
    mine = and_(tasks.c.job_id == job_id, tasks.c.number == number, tasks.c.state == TASK_WAITING)
    conn.execute(
        update(tasks)
        .where(mine)
        .values(
            state=TASK_RUNNING,
            lease_owner=owner,
            lease_expires_at=now + lease_s,
            attempts=tasks.c.attempts + 1,
            updated_at=now,
        )
    )
    got = conn.execute(
        select(tasks.c.first_page, tasks.c.end_page, tasks.c.attempts).where(
            tasks.c.job_id == job_id, tasks.c.number == number
        )
    ).one()
    return Task(job_id, number, int(got[0]), int(got[1]), int(got[2]))


def claim(
    db: Database,
    stats: SqlStats,
    lanes: tuple[Lane, ...],
    owner: str,
    *,
    now: float,
    lease_s: float,
    whole: bool = True,
    ranges: bool = True,
) -> Claimed | None:
    """The fair next unit of the first of ``lanes`` that has one, under a lease, charged to
    its tenant: ``whole`` jobs, page ``ranges`` of split jobs, or both (a worker asks both)."""
    with db.tx() as conn:
        for lane in lanes:
            clock = lane_clock(conn, lane.value)
            task = _pick_task(db, conn, lane.value, now, clock) if ranges else None
            job = _pick_job(db, conn, lane.value, now, clock) if whole else None
            pick = task if job is None or (task is not None and task.vtime <= job.vtime) else job
            if pick is None:
                continue
            _charge(db, conn, lane.value, pick, clock)
            if pick.number is None:
                _take_job(conn, stats, pick.job_id, owner, now, lease_s)
                return Claimed(load_job(conn, pick.job_id))
            taken = _take_task(conn, pick.job_id, pick.number, owner, now, lease_s)
            return Claimed(load_job(conn, pick.job_id), taken)
    return None
