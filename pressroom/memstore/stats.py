"""Events, counters, workers and figures in memory (``jobs.stats.SqlStats``), and what
housekeeping may forget (``jobs.retention.SqlRetention``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pressroom.jobs.model import UNFINISHED, WAITING, JobState
from pressroom.jobs.stats import (
    DeadLetter,
    DecisionMade,
    HeldJob,
    RecentWork,
    TenantLoad,
    WorkerSeen,
)
from pressroom.memstore.tables import Row, Tables
from pressroom.stages import Stage

if TYPE_CHECKING:
    from sqlalchemy import Connection


def _cost(row: Row) -> int:
    return int(row["cost"] or row["pages_estimate"] or 1)


class MemoryStats:
    """``conn`` arguments are accepted and unused: every read here holds the tables' lock,
    the insert's own among them."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    # --- events ----------------------------------------------------------------------------

    def event(self, job_id: str | None, kind: str, reason: str, now: float) -> None:
        """An event about a job; nothing when the job is gone."""
        with self.t.lock:
            self.t.event(job_id, kind, reason, now)

    def record_refusal(self, tenant: str, lane: str, reason: str, *, now: float) -> None:
        with self.t.lock:
            self.t.events.append(
                {
                    "job_id": None,
                    "tenant": tenant,
                    "lane": lane,
                    "kind": "refused",
                    "reason": reason,
                    "at": now,
                }
            )

    def record_pool_decision(self, lane: str, reason: str, *, now: float) -> None:
        with self.t.lock:
            self.t.events.append(
                {
                    "job_id": None,
                    "tenant": "",
                    "lane": lane,
                    "kind": "pool",
                    "reason": reason,
                    "at": now,
                }
            )

    def fold_events(self, *, before: float) -> int:
        """Drop the events older than ``before`` into the running totals."""
        with self.t.lock:
            gone = [e for e in self.t.events if e["at"] < before]
            self.t.events[:] = [e for e in self.t.events if e["at"] >= before]
            self.t.counters.update((e["kind"], e["lane"], e["reason"]) for e in gone)
            return len(gone)

    def counter_totals(self) -> dict[tuple[str, str, str], int]:
        with self.t.lock:
            totals = Counter(self.t.counters)
            totals.update((e["kind"], e["lane"], e["reason"]) for e in self.t.events)
            return dict(totals)

    def event_counts(self, *, since: float = 0.0) -> dict[tuple[str, str, str], int]:
        with self.t.lock:
            return dict(
                Counter(
                    (e["kind"], e["lane"], e["reason"]) for e in self.t.events if e["at"] >= since
                )
            )

    # --- workers ---------------------------------------------------------------------------

    def worker_seen(
        self,
        owner: str,
        lanes: tuple[str, ...],
        *,
        now: float,
        languages: tuple[str, ...] | None = None,
    ) -> None:
        with self.t.lock:
            row = self.t.workers.setdefault(
                owner, {"owner": owner, "lanes": ",".join(lanes), "languages": None}
            )
            row["seen_at"] = now
            if languages is not None:
                row["languages"] = "+".join(languages)[:255]

    def worker_languages(
        self, lane: str, *, now: float, within_s: float = 300.0
    ) -> tuple[str, ...] | None:
        with self.t.lock:
            sets = [
                set(w["languages"].split("+"))
                for w in self.t.workers.values()
                if w["seen_at"] >= now - within_s
                and w["languages"] is not None
                and lane in w["lanes"].split(",")
            ]
        return tuple(sorted(set.intersection(*sets))) if sets else None

    def worker_beat(self, owner: str, *, now: float) -> None:
        with self.t.lock:
            if owner in self.t.workers:
                self.t.workers[owner]["seen_at"] = now

    def worker_gone(self, owner: str) -> None:
        with self.t.lock:
            self.t.workers.pop(owner, None)

    def worker_list(self, *, now: float, within_s: float = 300.0) -> list[WorkerSeen]:
        with self.t.lock:
            rows = sorted(
                (w for w in self.t.workers.values() if w["seen_at"] >= now - within_s),
                key=lambda w: (-w["seen_at"], w["owner"]),
            )
            held: dict[str, tuple[str | None, str | None]] = {}
            for job in self.t.jobs.values():
                if job["state"] == JobState.RUNNING and (job["lease_expires_at"] or -1) >= now:
                    held[job["lease_owner"]] = (job["id"], job["stage"])
            for task in self.t.tasks.values():
                if task["state"] == "running" and (task["lease_expires_at"] or -1) >= now:
                    pages = f"pages {task['first_page'] + 1}-{task['end_page']}"
                    held[task["lease_owner"]] = (task["job_id"], pages)
            return [
                WorkerSeen(
                    w["owner"],
                    tuple(x for x in w["lanes"].split(",") if x),
                    float(w["seen_at"]),
                    *held.get(w["owner"], (None, None)),
                )
                for w in rows
            ]

    def live_workers(
        self, *, now: float, within_s: float = 30.0, conn: Connection | None = None
    ) -> dict[str, int]:
        counts: dict[str, int] = {}
        with self.t.lock:
            for w in self.t.workers.values():
                if w["seen_at"] >= now - within_s:
                    for lane in w["lanes"].split(","):
                        counts[lane] = counts.get(lane, 0) + 1
        return counts

    # --- admission figures -----------------------------------------------------------------

    def lane_load(
        self, lane: str, tenant: str, *, conn: Connection | None = None
    ) -> dict[str, TenantLoad]:
        with self.t.lock:
            load: dict[str, TenantLoad] = {}
            for r in self.t.jobs.values():
                if r["lane"] != lane or r["state"] not in UNFINISHED:
                    continue
                had = load.get(r["tenant"], TenantLoad(0, 0, self.t.weight(r["tenant"]), 0))
                load[r["tenant"]] = TenantLoad(
                    had.waiting + (r["state"] in WAITING),
                    had.units + _cost(r),
                    had.weight,
                    had.running + (_cost(r) if r["state"] == JobState.RUNNING else 0),
                )
            load.setdefault(tenant, TenantLoad(0, 0, self.t.weight(tenant)))
            return load

    def tenant_load(
        self, tenant: str, *, since: float, conn: Connection | None = None
    ) -> tuple[int, int, float | None]:
        with self.t.lock:
            mine = [r for r in self.t.jobs.values() if r["tenant"] == tenant]
            active = sum(r["state"] in UNFINISHED for r in mine)
            recent = [r for r in mine if r["created_at"] >= since]
            pages = sum(int(r["pages_estimate"] or 1) for r in recent)
            oldest = min((float(r["created_at"]) for r in recent), default=None)
            return active, pages, oldest

    def tenant_bytes(
        self, tenant: str, *, since: float, conn: Connection | None = None
    ) -> tuple[int, int]:
        with self.t.lock:
            mine = [r for r in self.t.jobs.values() if r["tenant"] == tenant]
            held = sum(r["source_bytes"] for r in mine if r["source_key"] is not None)
            recent = sum(r["source_bytes"] for r in mine if r["created_at"] >= since)
            return int(held), int(recent)

    def seconds_per_page(
        self, *, since: float, conn: Connection | None = None
    ) -> tuple[float, int] | None:
        seconds, pages = 0.0, 0
        with self.t.lock:
            for t in self.t.timings:
                job = self.t.jobs.get(t["job_id"])
                if (
                    job is not None
                    and t["stage"] == Stage.PROCESS.value
                    and job["state"] == JobState.COMPLETE
                    and job["finished_at"] is not None
                    and job["finished_at"] >= since
                    and (job["pages"] or 0) > 0
                    and t["attempt"] == job["attempts"]
                ):
                    seconds += t["seconds"]
                    pages += int(job["pages"])  # once per timing row, as the SQL join sums
        if not seconds or not pages:
            return None
        return seconds / pages, pages

    # --- for operators, metrics and the dashboard ------------------------------------------

    def counts(self) -> dict[tuple[str, str], int]:
        with self.t.lock:
            return dict(Counter((r["lane"], r["state"]) for r in self.t.jobs.values()))

    def oldest_waiting(self, *, now: float) -> dict[str, float]:
        oldest: dict[str, float] = {}
        with self.t.lock:
            for r in self.t.jobs.values():
                if r["state"] in WAITING and r["next_eligible_at"] <= now:
                    since = max(r["created_at"], r["next_eligible_at"])  # claimable since
                    oldest[r["lane"]] = min(oldest.get(r["lane"], since), since)
        return {lane: now - float(at) for lane, at in oldest.items()}

    def oldest_by_state(self, *, now: float) -> dict[tuple[str, str], float]:
        oldest: dict[tuple[str, str], float] = {}
        with self.t.lock:
            for r in self.t.jobs.values():
                if r["state"] in UNFINISHED:
                    key = (r["lane"], r["state"])
                    oldest[key] = min(oldest.get(key, r["created_at"]), r["created_at"])
        return {key: now - float(at) for key, at in oldest.items()}

    def stage_histograms(
        self, buckets: Sequence[float], stages: tuple[str, ...] | None = None
    ) -> list[tuple[str, list[int], int, float]]:
        by_stage: dict[str, list[float]] = {}
        with self.t.lock:
            for t in self.t.timings:
                if stages is None or t["stage"] in stages:
                    by_stage.setdefault(t["stage"], []).append(t["seconds"])
        return [
            (stage, [sum(s <= b for s in seen) for b in buckets], len(seen), float(sum(seen)))
            for stage, seen in sorted(by_stage.items())
        ]

    def recent_work(
        self,
        *,
        since: float,
        review_limit: int = 20,
        dead_limit: int = 10,
        decision_limit: int = 10,
    ) -> RecentWork:
        with self.t.lock:
            rows = list(self.t.jobs.values())
            held = sorted(
                (r for r in rows if r["state"] == JobState.REVIEW),
                key=lambda r: r["finished_at"] or 0.0,
            )
            dead = sorted(
                (r for r in rows if r["state"] == JobState.REJECTED),
                key=lambda r: r["finished_at"] or 0.0,
                reverse=True,
            )
            decisions = sorted(self.t.decisions, key=lambda d: (d["at"], d["seq"]), reverse=True)
            return RecentWork(
                timings=[
                    (t["stage"], float(t["seconds"]))
                    for t in self.t.timings
                    if t["recorded_at"] >= since
                ],
                finished=[
                    (float(r["finished_at"]), int(r["pages"] or 0))
                    for r in rows
                    if r["state"] == JobState.COMPLETE
                    and r["finished_at"] is not None
                    and r["finished_at"] >= since
                ],
                review=[
                    HeldJob(r["id"], r["tenant"], r["reason"], r["finished_at"], r["label"])
                    for r in held[:review_limit]
                ],
                review_total=len(held),
                dead=[
                    DeadLetter(
                        r["id"],
                        r["tenant"],
                        r["lane"],
                        r["reason"],
                        r["finished_at"],
                        r["label"],
                        r["source_key"] is not None,
                    )
                    for r in dead[:dead_limit]
                ],
                decisions=[
                    DecisionMade(d["job_id"], d["action"], d["key_id"], float(d["at"]))
                    for d in decisions[:decision_limit]
                ],
            )


class MemoryRetention:
    def __init__(self, tables: Tables, stats: MemoryStats) -> None:
        self.t = tables
        self.stats = stats

    def _finished_before(
        self, state: JobState, column: str, before: float
    ) -> list[tuple[str, str]]:
        with self.t.lock:
            return [
                (r["id"], r[column])
                for r in self.t.jobs.values()
                if r["state"] == state
                and r["finished_at"] is not None
                and r["finished_at"] < before
                and r[column] is not None
            ]

    def expired_artifacts(self, *, before: float) -> list[tuple[str, str]]:
        return self._finished_before(JobState.COMPLETE, "artifact_key", before)

    def expired_rejected_sources(self, *, before: float) -> list[tuple[str, str]]:
        return self._finished_before(JobState.REJECTED, "source_key", before)

    def expired_reviews(self, *, before: float) -> list[str]:
        with self.t.lock:
            return [
                r["id"]
                for r in self.t.jobs.values()
                if r["state"] == JobState.REVIEW
                and r["finished_at"] is not None
                and r["finished_at"] < before
            ]

    def expire_review(self, job_id: str, *, now: float) -> tuple[str | None, str | None] | None:
        with self.t.lock:
            row = self.t.jobs.get(job_id)
            if row is None or row["state"] != JobState.REVIEW:
                return None
            keys = row["artifact_key"], row["source_key"]
            row.update(
                state=JobState.REJECTED.value,
                reason="REVIEW_EXPIRED",
                message="nobody reviewed the held copy within the retention window",
                artifact_key=None,
                source_key=None,
                updated_at=now,
                finished_at=now,
            )
            self.t.enqueue(job_id, "job.rejected", now)
            self.t.event(job_id, "dead_letter", "REVIEW_EXPIRED", now)
            return keys

    def prune_history(self, *, before: float) -> int:
        with self.t.lock:
            gone = self.stats.fold_events(before=before)
            kept = [t for t in self.t.timings if t["recorded_at"] >= before]
            gone += len(self.t.timings) - len(kept)
            self.t.timings[:] = kept
            old = [o for o, w in self.t.workers.items() if w["seen_at"] < before]
            for owner in old:
                del self.t.workers[owner]
            return gone + len(old)

    def held_keys(self, job_id: str) -> tuple[str | None, str | None] | None:
        with self.t.lock:
            row = self.t.jobs.get(job_id)
            return None if row is None else (row["source_key"], row["artifact_key"])

    def forget_source(self, job_id: str) -> None:
        self._forget(job_id, "source_key")

    def forget_artifact(self, job_id: str) -> None:
        self._forget(job_id, "artifact_key")

    def _forget(self, job_id: str, column: str) -> None:
        with self.t.lock:
            if job_id in self.t.jobs:
                self.t.jobs[job_id][column] = None

    def unfinished(self, job_id: str) -> bool:
        with self.t.lock:
            row = self.t.jobs.get(job_id)
            return row is not None and row["state"] in UNFINISHED
