"""What the store knows about its own traffic: events and the running totals beside them, live
workers, admission figures, and the counts and timings behind /metrics and the dashboard, as
plain values.

Over 500 lines: four read models of one concept, the store's own traffic (events, workers,
admission figures, metrics); cut apart they would share every table and helper."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, case, func, literal, select, union_all, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from pressroom.jobs.model import UNFINISHED, WAITING, JobState
from pressroom.jobs.schema import (
    counters,
    job_events,
    jobs,
    review_decisions,
    stage_timings,
    tasks,
    tenant_weights,
    workers,
)
from pressroom.jobs.transport import Database
from pressroom.stages import Stage


@dataclass(frozen=True, slots=True)
class TenantLoad:
    """A tenant's work in one lane, as admission weighs it."""

    waiting: int  # jobs waiting their turn
    units: int  # work units waiting or running
    weight: int  # its weight in fair claiming
    running: int = 0  # of its units, those running now (they cannot be interrupted)


@dataclass(frozen=True, slots=True)
class HeldJob:
    """A job waiting for a reviewer, as the dashboard lists it."""

    id: str
    tenant: str
    reason: str | None
    finished_at: float | None
    label: str | None = None  # as stored (sealed when encryption is on): Labels.open reads it


@dataclass(frozen=True, slots=True)
class DeadLetter:
    id: str
    tenant: str
    lane: str
    reason: str | None
    finished_at: float | None
    label: str | None = None  # as stored
    source_kept: bool = True  # a redrive needs the source (retention may have dropped it)


@dataclass(frozen=True, slots=True)
class WorkerSeen:
    """A worker process as the dashboard lists it: where it runs, what it claims, when it was
    last heard from, and the job (and stage) it holds a lease on, if any."""

    owner: str  # host:pid:tag
    lanes: tuple[str, ...]
    seen_at: float
    job_id: str | None = None
    stage: str | None = None  # the job's stage; "pages a-b" for a page range it runs

    @property
    def host(self) -> str:
        return self.owner.rsplit(":", 2)[0] if self.owner.count(":") >= 2 else self.owner

    @property
    def pid(self) -> str:
        parts = self.owner.rsplit(":", 2)
        return parts[1] if len(parts) == 3 else "-"


@dataclass(frozen=True, slots=True)
class DecisionMade:
    """A reviewer's decision as the dashboard lists it: no document data."""

    job_id: str
    action: str
    key_id: str
    at: float


@dataclass(frozen=True, slots=True)
class RecentWork:
    """One consistent read for the dashboard: stage timings and finished pages since a time,
    the oldest held jobs and the newest dead letters."""

    timings: list[tuple[str, float]]  # (stage, seconds)
    finished: list[tuple[float, int]]  # (finished_at, pages)
    review: list[HeldJob]
    review_total: int
    dead: list[DeadLetter]
    decisions: list[DecisionMade] = field(default_factory=list)  # newest first


class SqlStats:
    def __init__(self, db: Database) -> None:
        self.db = db

    # --- events ----------------------------------------------------------------------------

    def event(self, conn: Connection, job_id: str, kind: str, reason: str, now: float) -> None:
        """An event about a job, inside the caller's transaction (it is part of the change).
        Only a row is added: no counter row is updated here, so claims and ends never queue
        on a hot row (the totals fold pruned events in, ``fold_events``)."""
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
        with self.db.tx() as conn:
            conn.execute(
                job_events.insert().values(
                    job_id=None, tenant=tenant, lane=lane, kind="refused", reason=reason, at=now
                )
            )

    def record_pool_decision(self, lane: str, reason: str, *, now: float) -> None:
        """An adaptive pool changed size (no job, no tenant): counted for metrics."""
        with self.db.tx() as conn:
            conn.execute(
                job_events.insert().values(
                    job_id=None, tenant="", lane=lane, kind="pool", reason=reason, at=now
                )
            )

    def fold_events(self, conn: Connection, *, before: float) -> int:
        """Delete the events older than ``before`` and add exactly those to the running totals,
        in the caller's transaction: the rows the delete returns are the rows counted, so two
        hosts pruning at once neither lose nor double an event. Returns the events folded."""
        gone = conn.execute(
            job_events.delete()
            .where(job_events.c.at < before)
            .returning(job_events.c.kind, job_events.c.lane, job_events.c.reason)
        ).all()
        folded = Counter((str(k), str(lane), str(r)) for k, lane, r in gone)
        insert = postgresql_insert if self.db.is_postgres else sqlite_insert
        # a fixed order: two folds at once take the counter rows' locks in the same order
        for (kind, lane, reason), n in sorted(folded.items()):
            statement = insert(counters).values(kind=kind, lane=lane, reason=reason, value=n)
            conn.execute(
                statement.on_conflict_do_update(
                    index_elements=[counters.c.kind, counters.c.lane, counters.c.reason],
                    set_={"value": counters.c.value + statement.excluded.value},
                )
            )
        return len(gone)

    def counter_totals(self) -> dict[tuple[str, str, str], int]:
        """(kind, lane, reason) → every such event ever counted: the folded totals plus the
        events still kept, read in ONE statement (one snapshot), so a prune committing in
        between cannot make a total dip. They never go down, as Prometheus expects."""
        kept = select(
            job_events.c.kind,
            job_events.c.lane,
            job_events.c.reason,
            func.count().label("n"),
        ).group_by(job_events.c.kind, job_events.c.lane, job_events.c.reason)
        folded = select(
            counters.c.kind, counters.c.lane, counters.c.reason, counters.c.value.label("n")
        )
        both = union_all(kept, folded).subquery()
        with self.db.tx(read_only=True) as conn:
            rows = conn.execute(
                select(both.c.kind, both.c.lane, both.c.reason, func.sum(both.c.n)).group_by(
                    both.c.kind, both.c.lane, both.c.reason
                )
            ).all()
        return {(str(k), str(lane), str(r)): int(n) for k, lane, r, n in rows}

    def event_counts(self, *, since: float = 0.0) -> dict[tuple[str, str, str], int]:
        """(kind, lane, reason) → count of the events kept (30 days) at or after ``since``: for
        recent figures; totals come from ``counter_totals``."""
        with self.db.tx(read_only=True) as conn:
            rows = conn.execute(
                select(job_events.c.kind, job_events.c.lane, job_events.c.reason, func.count())
                .where(job_events.c.at >= since)
                .group_by(job_events.c.kind, job_events.c.lane, job_events.c.reason)
            ).all()
        return {(str(k), str(lane), str(r)): int(n) for k, lane, r, n in rows}

    # --- workers ---------------------------------------------------------------------------

    def worker_seen(
        self,
        owner: str,
        lanes: tuple[str, ...],
        *,
        now: float,
        languages: tuple[str, ...] | None = None,
    ) -> None:
        """A worker is alive; ``languages``: the OCR languages it has installed (None leaves
        what it reported before)."""
        values: dict[str, object] = {"seen_at": now}
        if languages is not None:
            values["languages"] = "+".join(languages)[:255]
        with self.db.tx() as conn:
            done = conn.execute(update(workers).where(workers.c.owner == owner).values(**values))
            if done.rowcount == 0:
                conn.execute(workers.insert().values(owner=owner, lanes=",".join(lanes), **values))

    def worker_languages(
        self, lane: str, *, now: float, within_s: float = 300.0
    ) -> tuple[str, ...] | None:
        """The OCR languages every live worker of ``lane`` that reported any has installed
        (what a job there can ask for wherever it lands); None when none reported."""
        with self.db.tx(read_only=True) as conn:
            rows = conn.execute(
                select(workers.c.lanes, workers.c.languages).where(
                    workers.c.seen_at >= now - within_s, workers.c.languages.is_not(None)
                )
            ).all()
        sets = [
            set(str(langs).split("+")) for lanes, langs in rows if lane in str(lanes).split(",")
        ]
        if not sets:
            return None
        return tuple(sorted(set.intersection(*sets)))

    def worker_beat(self, owner: str, *, now: float) -> None:
        """A worker busy with a long job is still alive: its lease heartbeat says so here too
        (a row only refreshed between jobs went stale during any job longer than admission's
        window, which then counted one worker fewer). Never recreates a row that is gone."""
        with self.db.tx() as conn:
            conn.execute(update(workers).where(workers.c.owner == owner).values(seen_at=now))

    def worker_gone(self, owner: str) -> None:
        with self.db.tx() as conn:
            conn.execute(workers.delete().where(workers.c.owner == owner))

    def worker_list(self, *, now: float, within_s: float = 300.0) -> list[WorkerSeen]:
        """Workers heard from in the last ``within_s`` seconds, newest first, each with the
        job or page range it holds a live lease on."""
        with self.db.tx(read_only=True) as conn:
            rows = conn.execute(
                select(workers.c.owner, workers.c.lanes, workers.c.seen_at)
                .where(workers.c.seen_at >= now - within_s)
                .order_by(workers.c.seen_at.desc(), workers.c.owner)
            ).all()
            owners = [str(r[0]) for r in rows]
            held: dict[str, tuple[str, str | None]] = {}
            if owners:
                for job_id, owner, stage in conn.execute(
                    select(jobs.c.id, jobs.c.lease_owner, jobs.c.stage).where(
                        jobs.c.state == JobState.RUNNING.value,
                        jobs.c.lease_owner.in_(owners),
                        jobs.c.lease_expires_at >= now,
                    )
                ).all():
                    held[str(owner)] = (str(job_id), None if stage is None else str(stage))
                for job_id, owner, start, end in conn.execute(
                    select(
                        tasks.c.job_id, tasks.c.lease_owner, tasks.c.first_page, tasks.c.end_page
                    ).where(
                        tasks.c.state == "running",
                        tasks.c.lease_owner.in_(owners),
                        tasks.c.lease_expires_at >= now,
                    )
                ).all():
                    held[str(owner)] = (str(job_id), f"pages {int(start) + 1}-{int(end)}")
        return [
            WorkerSeen(
                str(owner),
                tuple(x for x in str(lanes).split(",") if x),
                float(seen),
                *held.get(str(owner), (None, None)),
            )
            for owner, lanes, seen in rows
        ]

    def live_workers(
        self, *, now: float, within_s: float = 30.0, conn: Connection | None = None
    ) -> dict[str, int]:
        """Worker processes seen in the last ``within_s`` seconds, per lane."""
        with self.db.on(conn, read_only=True) as conn:
            rows = conn.execute(
                select(workers.c.lanes).where(workers.c.seen_at >= now - within_s)
            ).all()
        counts: dict[str, int] = {}
        for (lanes,) in rows:
            for lane in str(lanes).split(","):
                counts[lane] = counts.get(lane, 0) + 1
        return counts

    # --- admission figures -----------------------------------------------------------------

    def lane_load(
        self, lane: str, tenant: str, *, conn: Connection | None = None
    ) -> dict[str, TenantLoad]:
        """Per tenant with unfinished work in ``lane``: its jobs waiting, its work units
        waiting or running (``jobs.cost``, else the page estimate, else 1) and its weight in
        fair claiming; ``tenant`` is always in it, with nothing if it has nothing there."""
        with self.db.on(conn, read_only=True) as conn:
            rows = conn.execute(
                select(
                    jobs.c.tenant,
                    func.count().filter(jobs.c.state.in_(WAITING)),
                    func.sum(func.coalesce(jobs.c.cost, jobs.c.pages_estimate, 1)),
                    func.sum(func.coalesce(jobs.c.cost, jobs.c.pages_estimate, 1)).filter(
                        jobs.c.state == JobState.RUNNING.value
                    ),
                    func.max(tenant_weights.c.weight),
                )
                .select_from(
                    jobs.outerjoin(tenant_weights, tenant_weights.c.tenant == jobs.c.tenant)
                )
                .where(jobs.c.lane == lane, jobs.c.state.in_(UNFINISHED))
                .group_by(jobs.c.tenant)
            ).all()
            load = {
                str(t): TenantLoad(int(waiting), int(units or 0), int(weight or 1), int(run or 0))
                for t, waiting, units, run, weight in rows
            }
            if tenant not in load:
                weight = conn.execute(
                    select(tenant_weights.c.weight).where(tenant_weights.c.tenant == tenant)
                ).scalar()
                load[tenant] = TenantLoad(0, 0, int(weight or 1))
        return load

    def tenant_load(
        self, tenant: str, *, since: float, conn: Connection | None = None
    ) -> tuple[int, int, float | None]:
        """(jobs not yet finished, pages accepted since ``since``, oldest accept in that window)."""
        with self.db.on(conn, read_only=True) as conn:
            active = conn.execute(
                select(func.count()).where(jobs.c.tenant == tenant, jobs.c.state.in_(UNFINISHED))
            ).scalar_one()
            pages, oldest = conn.execute(
                select(
                    func.coalesce(func.sum(func.coalesce(jobs.c.pages_estimate, 1)), 0),
                    func.min(jobs.c.created_at),
                ).where(jobs.c.tenant == tenant, jobs.c.created_at >= since)
            ).one()
        return int(active), int(pages), None if oldest is None else float(oldest)

    def tenant_bytes(
        self, tenant: str, *, since: float, conn: Connection | None = None
    ) -> tuple[int, int]:
        """(bytes of this tenant's sources still held, bytes of sources accepted since
        ``since``): what the per-tenant byte quotas count. ``conn``: inside that transaction."""
        with self.db.on(conn, read_only=True) as conn:
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

    def seconds_per_page(
        self, *, since: float, conn: Connection | None = None
    ) -> tuple[float, int] | None:
        """Measured worker seconds per page (the ``process`` stage) of jobs completed since
        ``since``, with the page count it rests on; None when nothing finished."""
        with self.db.on(conn, read_only=True) as conn:
            row = conn.execute(
                select(func.sum(stage_timings.c.seconds), func.sum(jobs.c.pages))
                .select_from(stage_timings.join(jobs, stage_timings.c.job_id == jobs.c.id))
                .where(
                    stage_timings.c.stage == Stage.PROCESS.value,
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

    # --- for operators, metrics and the dashboard ------------------------------------------

    def counts(self) -> dict[tuple[str, str], int]:
        with self.db.tx(read_only=True) as conn:
            rows = conn.execute(
                select(jobs.c.lane, jobs.c.state, func.count()).group_by(jobs.c.lane, jobs.c.state)
            ).all()
        return {(str(lane), str(state)): int(n) for lane, state, n in rows}

    def oldest_waiting(self, *, now: float) -> dict[str, float]:
        """Per lane, how long the oldest job a worker could claim now has been claimable: one
        backing off after a failure is no work for a new worker until its backoff ends."""
        since = case(
            (jobs.c.next_eligible_at > jobs.c.created_at, jobs.c.next_eligible_at),
            else_=jobs.c.created_at,
        )
        with self.db.tx(read_only=True) as conn:
            rows = conn.execute(
                select(jobs.c.lane, func.min(since))
                .where(jobs.c.state.in_(WAITING), jobs.c.next_eligible_at <= now)
                .group_by(jobs.c.lane)
            ).all()
        return {str(lane): now - float(oldest) for lane, oldest in rows if oldest is not None}

    def oldest_by_state(self, *, now: float) -> dict[tuple[str, str], float]:
        """Age of the oldest job per (lane, state) among those not finished."""
        with self.db.tx(read_only=True) as conn:
            rows = conn.execute(
                select(jobs.c.lane, jobs.c.state, func.min(jobs.c.created_at))
                .where(jobs.c.state.in_(UNFINISHED))
                .group_by(jobs.c.lane, jobs.c.state)
            ).all()
        return {(str(a), str(b)): now - float(c) for a, b, c in rows if c is not None}

    def stage_histograms(
        self, buckets: Sequence[float], stages: tuple[str, ...] | None = None
    ) -> list[tuple[str, list[int], int, float]]:
        """Per stage: cumulative bucket counts, count and sum — aggregated in the database, so
        a scrape costs one grouped query whatever the number of rows."""
        columns = [func.sum(case((stage_timings.c.seconds <= b, 1), else_=0)) for b in buckets]
        query = select(
            stage_timings.c.stage, func.count(), func.sum(stage_timings.c.seconds), *columns
        ).group_by(stage_timings.c.stage)
        if stages is not None:
            query = query.where(stage_timings.c.stage.in_(stages))
        with self.db.tx(read_only=True) as conn:
            rows = conn.execute(query.order_by(stage_timings.c.stage)).all()
        return [
            (str(row[0]), [int(n or 0) for n in row[3:]], int(row[1]), float(row[2] or 0))
            for row in rows
        ]

    def recent_work(
        self,
        *,
        since: float,
        review_limit: int = 20,
        dead_limit: int = 10,
        decision_limit: int = 10,
    ) -> RecentWork:
        with self.db.tx(read_only=True) as conn:
            timings = conn.execute(
                select(stage_timings.c.stage, stage_timings.c.seconds).where(
                    stage_timings.c.recorded_at >= since
                )
            ).all()
            finished = conn.execute(
                select(jobs.c.finished_at, jobs.c.pages).where(
                    jobs.c.state == JobState.COMPLETE.value, jobs.c.finished_at >= since
                )
            ).all()
            review = conn.execute(
                select(jobs.c.id, jobs.c.tenant, jobs.c.reason, jobs.c.finished_at, jobs.c.label)
                .where(jobs.c.state == JobState.REVIEW.value)
                .order_by(jobs.c.finished_at)
                .limit(review_limit)
            ).all()
            dead = conn.execute(
                select(
                    jobs.c.id,
                    jobs.c.tenant,
                    jobs.c.lane,
                    jobs.c.reason,
                    jobs.c.finished_at,
                    jobs.c.label,
                    jobs.c.source_key.is_not(None),
                )
                .where(jobs.c.state == JobState.REJECTED.value)
                .order_by(jobs.c.finished_at.desc())
                .limit(dead_limit)
            ).all()
            review_total = conn.execute(
                select(func.count()).where(jobs.c.state == JobState.REVIEW.value)
            ).scalar_one()
            decisions = conn.execute(
                select(
                    review_decisions.c.job_id,
                    review_decisions.c.action,
                    review_decisions.c.key_id,
                    review_decisions.c.at,
                )
                .order_by(review_decisions.c.at.desc(), review_decisions.c.id.desc())
                .limit(decision_limit)
            ).all()
        return RecentWork(
            timings=[(str(stage), float(seconds)) for stage, seconds in timings],
            finished=[(float(at), int(pages or 0)) for at, pages in finished],
            review=[HeldJob(str(r[0]), str(r[1]), r[2], _float(r[3]), r[4]) for r in review],
            review_total=int(review_total),
            dead=[
                DeadLetter(str(r[0]), str(r[1]), str(r[2]), r[3], _float(r[4]), r[5], bool(r[6]))
                for r in dead
            ],
            decisions=[
                DecisionMade(str(r[0]), str(r[1]), str(r[2]), float(r[3])) for r in decisions
            ],
        )


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
