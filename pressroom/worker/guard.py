"""The supervisor's memory guard and deadline stop, the parts that need no process handle: a
worker's resident size, and the store's record of a job whose worker was stopped. Kept apart
from ``pool.py`` (which kills the worker) so the pool stays readable."""

from __future__ import annotations

import errno
import logging
import os
from typing import Any

from pressroom.settings import Settings

log = logging.getLogger("pressroom.pool")

PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
# the guard's tick: reading a worker's resident size is a few microseconds, and a bomb can
# allocate hundreds of megabytes between two ticks
MEMORY_TICK_S = 0.05
# a job stuck inside one call is stopped this long after its deadline (the stages' own checks
# end the usual overrun first, with the job's state written properly)
DEADLINE_GRACE_S = 30.0


def error_code(exc: BaseException) -> str:
    """A stable code for a log line: the errno's name, else the exception's class name (never
    its message, which may hold a path)."""
    number = exc.errno if isinstance(exc, OSError) else None
    return errno.errorcode.get(number or 0, type(exc).__name__)


def resident_bytes(pid: int) -> int:
    """Resident memory of a process (Linux /proc; 0 when unknown or gone). Resident, not
    address space: Tesseract, NumPy and the NER model reserve far more than they touch."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:  # noqa: PTH123  (procfs, read per tick)
            return int(fh.read().split()[1]) * PAGE_BYTES
    except (OSError, ValueError, IndexError):
        return 0


def record_stop(settings: Settings, services: Any, job_id: str, owner: str, code: str) -> Any:
    """End the attempt of a job whose worker was stopped with ``code``: MEMORY_LIMIT is
    retried once, in case something else crowded it, and is permanent the second time;
    DEADLINE_EXCEEDED is permanent. ``services`` is the guard's own (opened here the first
    time; returned to be kept)."""
    if code == "MEMORY_LIMIT":
        message = (
            "the worker passed its memory limit of "
            f"{settings.worker_memory_limit_bytes // (1024 * 1024)} MiB"
        )
    else:
        message = "the job ran past its deadline inside one step; the worker was stopped"
    try:
        if services is None:
            from pressroom.service import open_services

            services = open_services(settings, migrate=False)
        queue = services.store.queue
        job = queue.get(job_id)
        failed = queue.fail(
            job_id,
            owner,
            code=code,
            message=message,
            permanent=code == "DEADLINE_EXCEEDED",  # MEMORY_LIMIT: the policy's rule
            now=services.clock(),
            policy=services.retry,
        )
        # its tenant cancelled it while it was stuck: it ends CANCELLED now, its source with
        # it, not when the lease lapses (fail refuses a job whose cancel was asked)
        cancelled = failed is None and queue.end_cancelled(job_id, owner, now=services.clock())
        if cancelled and job is not None and job.source_key:
            services.blobs.delete(job.source_key)
    except Exception:  # the lease lapses and the rescuer retries it instead
        log.warning("could not record the stop", extra={"job_id": job_id, "code": code})
    return services
