"""What is kept, and for how long: expired outputs, dead letters' sources, unreviewed held
copies, old history and orphan blobs go; ``housekeeping`` runs it all, in a loop in ``serve``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import select, update

from pressroom.errors import PressroomError
from pressroom.jobs.model import UNFINISHED, JobState
from pressroom.jobs.outbox import SqlOutbox
from pressroom.jobs.schema import jobs, stage_timings, workers
from pressroom.jobs.stats import SqlStats
from pressroom.jobs.store import Retention
from pressroom.jobs.transport import Database
from pressroom.storage import BlobStore, delete_output

ORPHAN_AGE_S = 3600.0
HISTORY_S = 30 * 24 * 3600.0  # job events and stage timings behind metrics and the dashboard


class SqlRetention:
    def __init__(self, db: Database, outbox: SqlOutbox, stats: SqlStats) -> None:
        self.db = db
        self.outbox = outbox
        self.stats = stats

    def _finished_before(
        self, state: JobState, column: Any, before: float
    ) -> list[tuple[str, str]]:
        with self.db.tx(read_only=True) as conn:
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
        with self.db.tx(read_only=True) as conn:
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
        with self.db.tx() as conn:
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
            self.outbox.enqueue(conn, job_id, "job.rejected", now)
            self.stats.event(conn, job_id, "dead_letter", "REVIEW_EXPIRED", now)
            return row[0], row[1]

    def prune_history(self, *, before: float) -> int:
        """Drop job events (folded into the running totals first), stage timings and worker
        rows older than ``before``; returns rows removed."""
        with self.db.tx() as conn:
            gone = self.stats.fold_events(conn, before=before)
            gone += conn.execute(
                stage_timings.delete().where(stage_timings.c.recorded_at < before)
            ).rowcount
            gone += conn.execute(workers.delete().where(workers.c.seen_at < before)).rowcount
        return int(gone)

    def held_keys(self, job_id: str) -> tuple[str | None, str | None] | None:
        """(source, artifact) keys a job still holds; None when there is no such job."""
        with self.db.tx(read_only=True) as conn:
            row = conn.execute(
                select(jobs.c.source_key, jobs.c.artifact_key).where(jobs.c.id == job_id)
            ).first()
        return None if row is None else (row[0], row[1])

    def forget_source(self, job_id: str) -> None:
        with self.db.tx() as conn:
            conn.execute(update(jobs).where(jobs.c.id == job_id).values(source_key=None))

    def forget_artifact(self, job_id: str) -> None:
        with self.db.tx() as conn:
            conn.execute(update(jobs).where(jobs.c.id == job_id).values(artifact_key=None))

    def unfinished(self, job_id: str) -> bool:
        """Whether the job is still waiting or running (its page ranges' parts are in use)."""
        with self.db.tx(read_only=True) as conn:
            state = conn.execute(select(jobs.c.state).where(jobs.c.id == job_id)).scalar()
        return state in UNFINISHED


def housekeeping(
    retention: Retention,
    blobs: BlobStore,
    *,
    clock: Callable[[], float],
    retention_s: float,
    review_retention_s: float,
    prune_sessions: Callable[..., int] | None = None,
) -> dict[str, int]:
    """Delete expired artifacts, sources kept for dead letters past the retention window,
    orphan sources (a crash between blob and row), old events and timings, and desk sessions
    a day past their end."""
    now = clock()
    if prune_sessions is not None:
        prune_sessions(before=now - 86400.0)
    removed = {"artifacts": 0, "orphans": 0, "dead_sources": 0, "expired_reviews": 0}
    for job_id in retention.expired_reviews(before=now - review_retention_s):
        keys = retention.expire_review(job_id, now=clock())
        for key in keys or ():
            if key:
                delete_output(blobs, key)
        removed["expired_reviews"] += keys is not None
    before = now - retention_s
    for job_id, key in retention.expired_rejected_sources(before=before):
        # a dead letter keeps its source for a redrive, but not forever: it holds personal data
        blobs.delete(key)
        retention.forget_source(job_id)
        removed["dead_sources"] += 1
    retention.prune_history(before=now - HISTORY_S)
    for job_id, key in retention.expired_artifacts(before=now - retention_s):
        delete_output(blobs, key)
        retention.forget_artifact(job_id)
        removed["artifacts"] += 1
    for prefix in ("sources", "review"):
        for key, mtime in list(blobs.list(prefix)):
            if now - mtime < ORPHAN_AGE_S:
                continue
            parts = key.split("/")
            held = retention.held_keys(parts[2]) if len(parts) == 4 else None
            if held is None or key not in held:
                blobs.delete(key)
                removed["orphans"] += 1
    for key, mtime in list(blobs.list("scratch")):
        # a page range's part outlives its job only when the job's end missed it (a worker
        # stopped by the supervisor, a lapsed cancel): gone an hour on
        parts = key.split("/")
        if now - mtime < ORPHAN_AGE_S or (len(parts) == 5 and retention.unfinished(parts[2])):
            continue
        blobs.delete(key)
        removed["orphans"] += 1
    removed["staging"] = sweep_staging(blobs, ORPHAN_AGE_S)
    return removed


def sweep_staging(blobs: object, max_age_s: float) -> int:
    """Half-written local copies a crash left (S3 writes are atomic and leave none); through
    wrappers (encryption) to the store that writes the files."""
    while blobs is not None:
        sweep = getattr(blobs, "sweep_staging", None)
        if callable(sweep):
            return int(sweep(max_age_s))
        blobs = getattr(blobs, "inner", None)
    return 0


def start_housekeeping(run: Callable[[], object], every_s: float = 300.0) -> threading.Event:
    """Call ``run`` (a bound ``housekeeping``) in a background thread every ``every_s`` until
    the returned event is set."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_s):
            try:
                run()
            except PressroomError:
                continue

    threading.Thread(target=loop, name="housekeeping", daemon=True).start()
    return stop
