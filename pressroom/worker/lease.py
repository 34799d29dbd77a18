"""A claimed job's lease while it runs: the heartbeat that renews it, the stage boundary and
the page-by-page stop check where a tenant's cancel ends the job, and the progress a running
job shows on its row. The ways a run stops short are here too (lease lost, cancelled, a
range taken back)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from pressroom import tracing
from pressroom.errors import TransientError
from pressroom.jobs.store import WorkerQueue
from pressroom.logs import bind_stage
from pressroom.service import Services
from pressroom.stages import Stage
from pressroom.worker.context import ClaimedJob


class LeaseLost(Exception):
    """This worker no longer holds the job's lease: stop without recording anything."""


class JobCancelled(Exception):
    """The tenant asked the job to stop: leave the stage boundary, end it ``CANCELLED``."""


class TaskStopped(Exception):
    """The range is not this worker's any more (its job was cancelled or ended, or its lease
    lapsed): stop at the page boundary, recording nothing."""


def stop_check(claim: ClaimedJob) -> Callable[[], None]:
    """What every loop over pages asks before a page (``pipeline.stop``): a cancel asked
    for ends the job there, not at the next stage."""

    def check() -> None:
        if claim.queue.cancel_requested(claim.job.id):
            raise JobCancelled

    return check


@contextmanager
def stage(claim: ClaimedJob, stage: Stage, carried: list[float] | None = None) -> Iterator[None]:
    """One of the runner's stages; before it starts, the boundary where a cancel stops
    the job (the pipeline's own stages run inside ``process``, uninterrupted).
    ``carried``: seconds spent on it elsewhere, added as the block fills them in (a split
    job's ranges: its ``process`` is every range's, what admission's per-page measure
    divides)."""
    job, queue = claim.job, claim.queue
    if queue.cancel_requested(job.id):
        raise JobCancelled
    name = stage.value
    queue.set_stage(job.id, claim.owner, name, now=claim.now())
    bind_stage(name)
    start = time.perf_counter()
    try:
        with tracing.span(name):
            yield
    finally:
        seconds = time.perf_counter() - start + sum(carried or ())
        queue.record_timing(job.id, job.attempts, name, seconds, now=claim.now())


def stopped(claim: ClaimedJob) -> Exception:
    """Why a change the store refused was refused: the tenant's cancel, else a lost lease."""
    return JobCancelled() if claim.queue.cancel_requested(claim.job.id) else LeaseLost()


class Heartbeat:
    """Renews a lease in the background while the stage runs: the job's, or with ``renew``
    a task's."""

    def __init__(
        self,
        services: Services,
        job_id: str,
        owner: str,
        renew: Callable[[], bool] | None = None,
    ) -> None:
        self.services = services
        self.job_id = job_id
        self.owner = owner
        self.renew = renew or self._renew_job
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _renew_job(self) -> bool:
        return self.services.store.queue.heartbeat(
            self.job_id,
            self.owner,
            now=self.services.clock(),
            lease_s=self.services.settings.lease_s,
        )

    def beat(self) -> bool:
        """One heartbeat: the lease renewed, and the worker's own row (admission counts
        workers heard from lately). False once the lease is not this worker's any more."""
        alive = self.renew()
        self.services.store.stats.worker_beat(self.owner, now=self.services.clock())
        return alive

    def _run(self) -> None:
        lease = self.services.settings.lease_s
        while not self._stop.wait(lease / 3):
            try:
                alive = self.beat()
            except TransientError:
                continue  # the store is down for a moment: the lease may still hold
            if not alive:
                self.lost = True
                return


class ProgressWriter:
    """The pipeline's page-by-page progress onto the job's row, for the desk to show: the
    first step at once, then at most one write a second (a fast document writes a few rows,
    not one per page), and the last step always. A store that is down for a moment costs a
    step shown, never the job."""

    def __init__(
        self,
        queue: WorkerQueue,
        job_id: str,
        owner: str,
        *,
        every_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.queue = queue
        self.job_id = job_id
        self.owner = owner
        self.every_s = every_s
        self.clock = clock
        self._last: float | None = None

    def __call__(self, done: int, total: int) -> None:
        now = self.clock()
        if done < total and self._last is not None and now - self._last < self.every_s:
            return
        self._last = now
        with contextlib.suppress(TransientError):
            self.queue.set_progress(self.job_id, self.owner, done, total)
