"""A tenant's say over a job after submitting it: cancel it, or delete its output early — the
decisions behind ``DELETE /v1/jobs/{id}`` and ``DELETE /v1/jobs/{id}/artifact``, without HTTP."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pressroom.errors import Conflict, NotFound
from pressroom.jobs.model import Job, JobState
from pressroom.jobs.store import Queue
from pressroom.service import Services
from pressroom.storage import BlobStore, delete_output


@dataclass(frozen=True, slots=True)
class JobControl:
    """Each method is blocking (the API runs it in a thread) and answers ``NotFound`` for a
    job that is not the tenant's."""

    queue: Queue
    blobs: BlobStore
    clock: Callable[[], float]

    @classmethod
    def of(cls, services: Services) -> JobControl:
        return cls(services.store.queue, services.blobs, services.clock)

    def cancel(self, job_id: str, tenant: str) -> tuple[Job, bool]:
        """Cancel the job: (the job as it is now, whether this call started a stop still under
        way). A waiting or held job ends ``CANCELLED`` at once and its blobs go; a running one
        stops at its next stage boundary (the worker ends it and deletes its blobs); a cancel
        asked before changes nothing. ``Conflict``: the job ended otherwise."""
        done = self.queue.cancel(job_id, tenant, now=self.clock())
        if done is None:
            raise NotFound("no such job")
        if done.outcome == "finished":
            raise Conflict(
                f"the job has already ended ({done.job.state}"
                + (f", {done.job.reason})" if done.job.reason else ")")
                + "; only an unfinished or held job can be cancelled"
            )
        # after the commit: a blob left by a failure here is swept as an orphan, never served
        for key in done.freed:
            delete_output(self.blobs, key)
        return done.job, done.outcome == "requested"

    def delete_artifact(self, job_id: str, tenant: str) -> Job:
        """Delete a complete job's output before its retention ends; the job keeps its record
        without a link. ``Conflict``: there is no output (not complete, or deleted already)."""
        job = self.queue.get(job_id, tenant=tenant)
        if job is None:
            raise NotFound("no such job")
        if job.state is not JobState.COMPLETE or job.artifact_key is None:
            raise Conflict("the job has no artifact to delete")
        # the blob first: a failure leaves the row pointing at it, and the delete can be retried
        delete_output(self.blobs, job.artifact_key)
        if not self.queue.delete_artifact_key(job_id, tenant, job.artifact_key, now=self.clock()):
            raise Conflict("the job has no artifact to delete")
        again = self.queue.get(job_id, tenant=tenant)
        assert again is not None
        return again
