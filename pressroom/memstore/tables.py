"""The memory store's tables: plain dicts and lists under one re-entrant lock, with the steps
several parts share — a row to a ``Job``, an event, a webhook queued with a job's end, and fair
claiming between tenants. Each row keeps the SQL table's column names, so each part reads like
the SQL adapter it stands in for (``jobs.queue``, ``jobs.claims``, ``jobs.tasks``)."""

from __future__ import annotations

import itertools
import secrets
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from pressroom.jobs.backoff import Decision
from pressroom.jobs.claims import DEFAULT_WEIGHT, Claimed
from pressroom.jobs.model import (
    SPLIT,
    TASK_RUNNING,
    TASK_WAITING,
    UNFINISHED,
    WAITING,
    Job,
    JobState,
    Lane,
    NewJob,
    ReviewDecision,
    Task,
)
from pressroom.jobs.outbox import rfc3339
from pressroom.orders import JobOrder

Row = dict[str, Any]


@dataclass
class Tables:
    """Every table of the SQL schema the ports read, as Python values; ``lock`` is the one
    transaction: each port method holds it from its first read to its last write."""

    lock: threading.RLock = field(default_factory=threading.RLock)
    jobs: dict[str, Row] = field(default_factory=dict)
    timings: list[Row] = field(default_factory=list)  # job_id, attempt, stage, seconds, at
    decisions: list[Row] = field(default_factory=list)  # in insert order, as their ids
    tasks: dict[tuple[str, int], Row] = field(default_factory=dict)
    events: list[Row] = field(default_factory=list)  # job_id, tenant, lane, kind, reason, at
    counters: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    deliveries: dict[str, Row] = field(default_factory=dict)
    secrets: dict[str, Row] = field(default_factory=dict)  # by tenant
    keys: dict[str, Row] = field(default_factory=dict)  # by key hash
    sessions: dict[str, Row] = field(default_factory=dict)
    customers: dict[tuple[str, str], Row] = field(default_factory=dict)
    allowed: dict[str, dict[str, float]] = field(default_factory=dict)  # tenant → name → at
    weights: dict[str, int] = field(default_factory=dict)
    workers: dict[str, Row] = field(default_factory=dict)
    shares: dict[tuple[str, str], float] = field(default_factory=dict)  # (lane, tenant) → vtime
    clocks: dict[str, float] = field(default_factory=dict)  # lane → the lane's clock
    ids: itertools.count[int] = field(default_factory=itertools.count)

    # --- rows to values ----------------------------------------------------------------------

    def job(self, job_id: str) -> Job:
        return self.to_jobs([self.jobs[job_id]])[0]

    def to_jobs(self, rows: list[Row]) -> list[Job]:
        return [self._to_job(row) for row in rows]

    def _to_job(self, row: Row) -> Job:
        timings: dict[str, float] = {}
        for t in self.timings:
            if t["job_id"] == row["id"]:
                timings[t["stage"]] = timings.get(t["stage"], 0.0) + t["seconds"]
        roles = {k["id"]: k["role"] for k in self.keys.values()}
        decisions = tuple(
            ReviewDecision(d["action"], float(d["at"]), d["key_id"], roles.get(d["key_id"]))
            for d in sorted(self.decisions, key=lambda d: (d["at"], d["seq"]))
            if d["job_id"] == row["id"]
        )
        done, total = row["progress_done"], row["progress_total"]
        return Job(
            id=row["id"],
            tenant=row["tenant"],
            lane=Lane(row["lane"]),
            state=JobState(row["state"]),
            stage=row["stage"],
            attempts=row["attempts"],
            max_attempts=row["max_attempts"],
            reason=row["reason"],
            message=row["message"],
            source_key=row["source_key"],
            source_sha256=row["source_sha256"],
            source_bytes=row["source_bytes"],
            kind=row["kind"],
            template=row["template"],
            title=row["title"],
            order=JobOrder.stored(row["options"], template=row["template"]),
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
            cost=row["cost"],
            review_sheet=dict(row["review_sheet"]) if row["review_sheet"] else None,
            result=dict(row["result"]) if row["result"] else None,
            label=row["label"],
            progress=(done, total) if done is not None and total is not None else None,
            timings={stage: round(s, 4) for stage, s in timings.items()},
            decisions=decisions,
        )

    # --- what a lease owns, and what every end writes -----------------------------------------

    def owned(self, job_id: str, owner: str) -> Row | None:
        """The job, running under this worker's lease (``claims.owned``)."""
        row = self.jobs.get(job_id)
        if row is None or row["lease_owner"] != owner or row["state"] != JobState.RUNNING:
            return None
        return row

    def event(self, job_id: str | None, kind: str, reason: str, now: float) -> None:
        """An event about a job (none when the job is gone), as ``SqlStats.event``."""
        row = self.jobs.get(job_id) if job_id is not None else None
        if row is not None:
            self.events.append(
                {
                    "job_id": job_id,
                    "tenant": row["tenant"],
                    "lane": row["lane"],
                    "kind": kind,
                    "reason": reason,
                    "at": now,
                }
            )

    def enqueue(self, job_id: str, event_type: str, now: float) -> None:
        """The job's webhook, queued with its end (``SqlOutbox.enqueue``)."""
        row = self.jobs.get(job_id)
        if row is None:
            return
        # an order this version cannot read sends nothing: its URL is not trusted either
        order = JobOrder.stored(row["options"], template=row["template"])
        url = order.webhook_url if order.refused is None else None
        if not url:
            return
        payload = {
            "type": event_type,
            "timestamp": rfc3339(now),
            "data": {
                "id": job_id,
                "state": row["state"],
                "reason": row["reason"],
                "pages": row["pages"],
                "artifact_sha256": row["artifact_sha256"] if row["state"] == "complete" else None,
            },
        }
        delivery = "msg_" + secrets.token_hex(12)
        self.deliveries[delivery] = {
            "id": delivery,
            "job_id": job_id,
            "tenant": row["tenant"],
            "url": url,
            "event": event_type,
            "payload": payload,
            "state": "pending",
            "attempts": 0,
            "next_attempt_at": now,
            "last_error": None,
            "created_at": now,
            "delivered_at": None,
            "lease_owner": None,
            "lease_expires_at": None,
        }

    def decided(self, row: Row, decision: Decision, now: float) -> None:
        """A failed attempt written on the job: retrying after the delay, or dead
        (``claims.decided``)."""
        row.update(
            state=(JobState.RETRYING if decision.retry else JobState.REJECTED).value,
            reason=decision.reason,
            message=decision.message,
            stage=None,
            progress_done=None,
            progress_total=None,
            lease_owner=None,
            lease_expires_at=None,
            updated_at=now,
        )
        if decision.retry:
            row["next_eligible_at"] = now + decision.delay_s
        else:
            row["finished_at"] = now

    def record_decision(self, job_id: str, decision: Decision, code: str, now: float) -> JobState:
        """A dead letter's webhook and event, or a retry's event (``claims.record_decision``)."""
        if decision.retry:
            self.event(job_id, "retry", code, now)
        else:
            self.enqueue(job_id, "job.rejected", now)
            self.event(job_id, "dead_letter", decision.reason, now)
        if code == "DEADLINE_EXCEEDED":
            self.event(job_id, "deadline_miss", code, now)
        return JobState.RETRYING if decision.retry else JobState.REJECTED

    def review_decision(
        self,
        job_id: str,
        tenant: str,
        key_id: str,
        action: str,
        now: float,
        detail: dict[str, Any] | None,
    ) -> None:
        """A reviewer's decision (who, when, what changed), with the job's own change."""
        self.decisions.append(
            {
                "seq": next(self.ids),
                "job_id": job_id,
                "tenant": tenant,
                "key_id": key_id,
                "action": action,
                "at": now,
                "detail": dict(detail or {}),
            }
        )

    def drop_tasks(self, job_id: str) -> None:
        for key in [k for k in self.tasks if k[0] == job_id]:
            del self.tasks[key]

    # --- fair claiming (``jobs.claims``: the same order, without SQL) -------------------------

    def ensure_share(self, lane: str, tenant: str) -> None:
        self.shares.setdefault((lane, tenant), self.clocks.get(lane, 0.0))

    def weight(self, tenant: str) -> int:
        return self.weights.get(tenant, DEFAULT_WEIGHT)

    def vtime(self, lane: str, tenant: str, clock: float) -> float:
        """The tenant's virtual time in the lane, never behind the lane's clock."""
        return max(self.shares.get((lane, tenant), clock), clock)

    def refund(self, row: Row, cost: int) -> None:
        key = (row["lane"], row["tenant"])
        if key in self.shares:
            self.shares[key] -= cost / self.weight(row["tenant"])

    def tidy_shares(self) -> None:
        for row in self.jobs.values():
            if row["state"] in WAITING:
                self.ensure_share(row["lane"], row["tenant"])
        busy = {(r["lane"], r["tenant"]) for r in self.jobs.values() if r["state"] in UNFINISHED}
        for key, vtime in list(self.shares.items()):
            if key not in busy and vtime <= self.clocks.get(key[0], 0.0):
                del self.shares[key]

    def claim(
        self,
        lanes: tuple[Lane, ...],
        owner: str,
        *,
        now: float,
        lease_s: float,
        whole: bool = True,
        ranges: bool = True,
    ) -> Claimed | None:
        """The fair next unit of the first of ``lanes`` that has one, under a lease, charged to
        its tenant (``claims.claim``): the least-served tenant's oldest job, or the best page
        range, a range first when their tenants tie."""
        with self.lock:
            for lane in lanes:
                clock = self.clocks.get(lane.value, 0.0)
                task = self._pick_task(lane.value, now, clock) if ranges else None
                job = self._pick_job(lane.value, now, clock) if whole else None
                pick = task if job is None or (task is not None and task[0] <= job[0]) else job
                if pick is None:
                    continue
                vtime, row, number, cost = pick
                self.shares[(lane.value, row["tenant"])] = vtime + cost / self.weight(row["tenant"])
                if vtime > clock:
                    self.clocks[lane.value] = vtime
                else:
                    self.clocks.setdefault(lane.value, vtime)
                if number is None:
                    self._take_job(row, owner, now, lease_s)
                    return Claimed(self.job(row["id"]))
                return Claimed(
                    self.job(row["id"]), self._take_task(row, number, owner, now, lease_s)
                )
        return None

    def _pick_job(self, lane: str, now: float, clock: float) -> tuple[float, Row, None, int] | None:
        eligible = [
            r
            for r in self.jobs.values()
            if r["lane"] == lane and r["state"] in WAITING and r["next_eligible_at"] <= now
        ]
        if not eligible:
            return None
        # the tenant first (least vtime, then its earliest eligible job, then its name), then
        # its oldest job: the order of ``claims._pick_job``
        heads: dict[str, float] = {}
        for r in eligible:
            heads[r["tenant"]] = min(
                heads.get(r["tenant"], r["next_eligible_at"]), r["next_eligible_at"]
            )
        tenant = min(heads, key=lambda t: (self.vtime(lane, t, clock), heads[t], t))
        row = min(
            (r for r in eligible if r["tenant"] == tenant),
            key=lambda r: (r["next_eligible_at"], r["created_at"], r["id"]),
        )
        cost = row["cost"] or row["pages_estimate"] or 1
        return self.vtime(lane, tenant, clock), row, None, int(cost)

    def _pick_task(self, lane: str, now: float, clock: float) -> tuple[float, Row, int, int] | None:
        best: tuple[tuple[float, float, str, int], Row, Row] | None = None
        for task in self.tasks.values():
            row = self.jobs.get(task["job_id"])
            if (
                row is None
                or row["lane"] != lane
                or row["state"] != JobState.RUNNING
                or row["stage"] != SPLIT
                or row["cancel_requested_at"] is not None
                or task["state"] != TASK_WAITING
                or task["next_eligible_at"] > now
            ):
                continue
            order = (
                self.vtime(lane, row["tenant"], clock),
                row["created_at"],
                row["id"],
                task["number"],
            )
            if best is None or order < best[0]:
                best = (order, row, task)
        if best is None:
            return None
        order, row, task = best
        return order[0], row, task["number"], max(1, task["end_page"] - task["first_page"])

    def _take_job(self, row: Row, owner: str, now: float, lease_s: float) -> None:
        row.update(
            state=JobState.RUNNING.value,
            lease_owner=owner,
            lease_expires_at=now + lease_s,
            attempts=row["attempts"] + 1,
            started_at=row["started_at"] if row["started_at"] is not None else now,
            updated_at=now,
            stage=None,
            progress_done=None,
            progress_total=None,
        )
        self.event(row["id"], "attempt", "CLAIMED", now)

    def _take_task(self, row: Row, number: int, owner: str, now: float, lease_s: float) -> Task:
        task = self.tasks[(row["id"], number)]
        task.update(
            state=TASK_RUNNING,
            lease_owner=owner,
            lease_expires_at=now + lease_s,
            attempts=task["attempts"] + 1,
            updated_at=now,
        )
        return Task(row["id"], number, task["first_page"], task["end_page"], task["attempts"])


def new_row(job: NewJob, *, now: float, max_attempts: int) -> Row:
    """An accepted job's row, every column of the SQL table's ``jobs`` by name."""
    return {
        "id": job.id,
        "tenant": job.tenant,
        "lane": job.lane.value,
        "state": JobState.ACCEPTED.value,
        "stage": None,
        "attempts": 0,
        "max_attempts": max_attempts,
        "reason": None,
        "message": None,
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
        "started_at": None,
        "finished_at": None,
        "lease_owner": None,
        "lease_expires_at": None,
        "artifact_key": None,
        "artifact_sha256": None,
        "pages": None,
        "deadline_at": now + job.deadline_s if job.deadline_s else None,
        "trace_id": job.trace_id,
        "customer": job.customer,
        "verification": None,
        "pages_estimate": job.pages_estimate,
        "parent_span_id": job.parent_span_id,
        "cancel_requested_at": None,
        "review_sheet": None,
        "cost": job.cost,
        "result": None,
        "label": job.label,
        "label_digest": job.label_digest,
        "progress_done": None,
        "progress_total": None,
    }


def fresh_round(row: Row, now: float) -> None:
    """Sent round again (a redrive, a reviewer's corrections): attempts reset, the same time
    allowance as the first time, from now (``queue._fresh_round``)."""
    deadline = row["deadline_at"]
    row.update(
        state=JobState.ACCEPTED.value,
        attempts=0,
        reason=None,
        stage=None,
        finished_at=None,
        started_at=None,
        artifact_key=None,
        next_eligible_at=now,
        updated_at=now,
        progress_done=None,
        progress_total=None,
        deadline_at=None if deadline is None else now + (deadline - row["created_at"]),
    )
