"""Job rows to ``Job`` values, with every job's stage timings and review decisions read in one
query each."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, func, select

from pressroom.jobs.model import Job, JobState, Lane, ReviewDecision
from pressroom.jobs.schema import api_keys, jobs, review_decisions, stage_timings
from pressroom.orders import JobOrder


def load_job(conn: Connection, job_id: str) -> Job:
    row = conn.execute(select(jobs).where(jobs.c.id == job_id)).mappings().one()
    return to_job(conn, row)


def to_job(conn: Connection, row: Any) -> Job:
    return to_jobs(conn, [row])[0]


def to_jobs(conn: Connection, rows: Any) -> list[Job]:
    """Rows to jobs, with every job's stage timings, then its decisions, read in one query each
    (not one a job)."""
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
    decisions: dict[str, list[ReviewDecision]] = {job_id: [] for job_id in timings}
    if decisions:
        # the deciding key's role, from its record (a key's role never changes; an offline
        # desk's decisions have no key record: their role is unknown)
        for job_id, action, at, key_id, role in conn.execute(
            select(
                review_decisions.c.job_id,
                review_decisions.c.action,
                review_decisions.c.at,
                review_decisions.c.key_id,
                api_keys.c.role,
            )
            .select_from(
                review_decisions.outerjoin(api_keys, api_keys.c.id == review_decisions.c.key_id)
            )
            .where(review_decisions.c.job_id.in_(list(decisions)))
            .order_by(review_decisions.c.at, review_decisions.c.id)
        ).all():
            decisions[str(job_id)].append(
                ReviewDecision(str(action), float(at), str(key_id), str(role) if role else None)
            )
    return [
        _row_job(row, timings[str(row["id"])], tuple(decisions[str(row["id"])])) for row in rows
    ]


def _row_job(row: Any, timings: dict[str, float], decisions: tuple[ReviewDecision, ...]) -> Job:
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
        # the one place a row's order is read (a refusal travels with it: never raised here,
        # where one bad row would stop a claim or a list)
        order=JobOrder.stored(row["options"], template=str(row["template"])),
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
        progress=(
            (int(row["progress_done"]), int(row["progress_total"]))
            if row["progress_done"] is not None and row["progress_total"] is not None
            else None
        ),
        timings=timings,
        decisions=decisions,
    )
