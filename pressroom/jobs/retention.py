"""What is kept, and for how long, as the store sees it: which outputs, dead letters' sources
and unreviewed held copies have expired, and the old history that goes. The blobs are deleted
by ``pressroom.housekeeping``, which runs it all in a loop in ``serve``: the queue knows no
blobs."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update

from pressroom.jobs.model import UNFINISHED, JobState
from pressroom.jobs.outbox import SqlOutbox
from pressroom.jobs.schema import jobs, stage_timings, workers
from pressroom.jobs.stats import SqlStats
from pressroom.jobs.transport import Database


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
