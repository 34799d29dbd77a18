"""Worker processes per lane, supervised: restarted when they die, recycled after N jobs."""

from __future__ import annotations

import contextlib
import errno
import logging
import multiprocessing as mp
import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.context import SpawnProcess
from pathlib import Path
from typing import Any

from pressroom.jobs.model import Lane
from pressroom.settings import Settings
from pressroom.worker import heartbeat

log = logging.getLogger("pressroom.pool")
POLL_S = 0.5
IDLE_WAIT_S = 2.0  # PostgreSQL: longest sleep between claims without a NOTIFY
RESCUE_EVERY_S = 5.0


def worker_main(
    lanes: tuple[str, ...],
    settings: Settings,
    stop: Any,
    max_jobs: int,
    current: Any = None,
) -> None:
    """The body of one worker process: claim, run, repeat; stop when told or after N jobs.
    ``current`` (shared with the supervisor) names the job being run, for the memory guard."""
    os.environ["OMP_THREAD_LIMIT"] = "1"
    os.umask(0o077)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor decides when we stop
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    from pressroom.engines.tesseract import TesseractEngine
    from pressroom.errors import TransientError
    from pressroom.logs import configure_logging, log_format
    from pressroom.scratch import sweep_stale
    from pressroom.service import open_services
    from pressroom.worker.runner import JobRunner

    configure_logging(fmt=log_format(settings.log_format))
    from pressroom import tracing

    tracing.configure(settings=settings.tracing)
    services = open_services(settings, migrate=False)
    settings.scratch_dir.mkdir(parents=True, exist_ok=True)
    sweep_stale(settings.scratch_dir)
    owner = f"{socket.gethostname()[:24]}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
    engine = TesseractEngine(languages=settings.languages, tessdata_prefix=settings.tessdata_prefix)
    runner = JobRunner(services, engine, owner)
    if current is not None:

        def running(job: Any) -> None:
            current.value = (
                f"{job.id} {owner} {job.deadline_at or 0}".encode() if job is not None else b""
            )

        runner.on_job = running
    claim_lanes = tuple(Lane(x) for x in lanes)
    # the supervisor that spawned us, as recorded at spawn: getppid() read only now would be
    # init's already when the supervisor was killed while this process was still starting
    spawner = mp.parent_process()
    parent = spawner.pid if spawner is not None and spawner.pid else os.getppid()
    try:
        _work(services, runner, claim_lanes, owner, stop, max_jobs, parent)
    finally:
        with contextlib.suppress(TransientError):
            services.store.stats.worker_gone(owner)
        tracing.shutdown()  # flushes spans still batched


def _work(
    services: Any,
    runner: Any,
    claim_lanes: tuple[Lane, ...],
    owner: str,
    stop: Any,
    max_jobs: int,
    parent: int,
) -> None:
    from pressroom.errors import TransientError
    from pressroom.languages import installed_languages

    done = 0
    last_rescue = 0.0
    lanes = tuple(lane.value for lane in claim_lanes)
    # reported with the heartbeat: the API refuses a job asking for another at the door
    languages = installed_languages(services.settings.tessdata_prefix)
    while not stop.is_set() and done < max_jobs:
        if os.getppid() != parent:  # the supervisor is gone (killed): do not linger as an orphan
            break
        try:
            if time.monotonic() - last_rescue > RESCUE_EVERY_S:
                services.store.queue.rescue_expired(now=services.clock(), policy=services.retry)
                services.store.tasks.rescue_expired(now=services.clock(), policy=services.retry)
                # admission divides the work ahead by the live workers it sees here
                services.store.stats.worker_seen(
                    owner, lanes, now=services.clock(), languages=languages
                )
                last_rescue = time.monotonic()
            job = runner.run_next(claim_lanes)
        except TransientError as exc:
            log.warning("store unavailable", extra={"code": exc.code})
            stop.wait(2.0)
            continue
        if job is None:
            if stop.is_set():
                break
            # PostgreSQL: LISTEN until a job arrives (or a backoff may have ended);
            # SQLite: a short poll
            services.store.db.wait_for_work(
                IDLE_WAIT_S if services.store.db.is_postgres else POLL_S
            )
        else:
            done += 1


@dataclass
class _Slot:
    lanes: tuple[str, ...]
    process: SpawnProcess | None = None
    restarts: int = 0
    current: Any = None  # "job_id owner" of the job the worker runs now, b"" between jobs


def resident_bytes(pid: int) -> int:
    """Resident memory of a process (Linux /proc; 0 when unknown or gone). Resident, not
    address space: Tesseract, NumPy and the NER model reserve far more than they touch."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:  # noqa: PTH123  (procfs, read per tick)
            return int(fh.read().split()[1]) * PAGE_BYTES
    except (OSError, ValueError, IndexError):
        return 0


PAGE_BYTES = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
# the guard's tick: reading a worker's resident size is a few microseconds, and a bomb can
# allocate hundreds of megabytes between two ticks
MEMORY_TICK_S = 0.05
# a job stuck inside one call is stopped this long after its deadline (the stages' own checks
# end the usual overrun first, with the job's state written properly)
DEADLINE_GRACE_S = 30.0


@dataclass
class Supervisor:
    """Keeps ``pools`` worker processes alive per lane until ``stop()``."""

    settings: Settings
    pools: dict[Lane, int]
    max_jobs: int = 200
    target: Any = worker_main  # what each worker process runs (tests give a misbehaving one)
    deadline_grace_s: float = DEADLINE_GRACE_S
    # where to keep this pool's heartbeat file for `pressroom worker --check` (None: no file)
    heartbeat_dir: Path | None = None
    clock: Callable[[], float] = time.time  # the heartbeat's wall clock
    _ctx: Any = field(default_factory=lambda: mp.get_context("spawn"))
    _slots: list[_Slot] = field(default_factory=list)
    _thread: threading.Thread | None = None
    _stopping: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._stop_event = self._ctx.Event()
        self._services: Any = None
        self._beat_failed = False
        for lane, count in self.pools.items():
            self._slots += [
                _Slot((lane.value,), current=self._ctx.Array("c", 160, lock=False))
                for _ in range(count)
            ]

    def _spawn(self, slot: _Slot) -> None:
        slot.current.value = b""
        slot.process = self._ctx.Process(
            target=self.target,
            args=(slot.lanes, self.settings, self._stop_event, self.max_jobs, slot.current),
            name=f"pressroom-worker-{slot.lanes[0]}",
            daemon=False,
        )
        slot.process.start()

    def start(self) -> None:
        for slot in self._slots:
            self._spawn(slot)
        self._beat()  # at once: a health check right after start sees the pool
        self._thread = threading.Thread(target=self._watch, name="supervisor", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        """Rewrite the heartbeat file: per lane, the worker processes alive now."""
        if self.heartbeat_dir is None:
            return
        lanes: dict[str, tuple[int, int]] = {}
        for slot in self._slots:
            live, kept = lanes.get(slot.lanes[0], (0, 0))
            up = slot.process is not None and slot.process.is_alive()
            lanes[slot.lanes[0]] = (live + up, kept + 1)
        beat = heartbeat.Beat(socket.gethostname(), os.getpid(), self.clock(), lanes)
        try:
            heartbeat.write(self.heartbeat_dir, beat)
        except OSError as exc:  # the health check will say so; the workers go on
            if not self._beat_failed:
                log.warning(
                    "heartbeat not written",
                    extra={"code": errno.errorcode.get(exc.errno or 0, "OSError")},
                )
            self._beat_failed = True
        else:
            self._beat_failed = False

    def _watch(self) -> None:
        last_restart_check = 0.0
        last_beat = time.monotonic()
        while not self._stopping.wait(MEMORY_TICK_S):
            if time.monotonic() - last_beat >= heartbeat.BEAT_EVERY_S:
                self._beat()
                last_beat = time.monotonic()
            limit = self.settings.worker_memory_limit_bytes
            for slot in self._slots:
                pid = slot.process.pid if slot.process is not None else None
                if not pid or not slot.process.is_alive():  # type: ignore[union-attr]
                    continue
                if limit and resident_bytes(pid) > limit:
                    self._stop_job(slot, "MEMORY_LIMIT")
                elif self._overdue(slot):
                    self._stop_job(slot, "DEADLINE_EXCEEDED")
            if time.monotonic() - last_restart_check < 1.0:
                continue
            last_restart_check = time.monotonic()
            for slot in self._slots:
                if slot.process is not None and not slot.process.is_alive():
                    code = slot.process.exitcode
                    slot.process.close()
                    if code != 0:
                        log.warning(
                            "worker died; restarting",
                            extra={"lane": slot.lanes[0], "exit_code": code},
                        )
                    slot.restarts += 1
                    self._spawn(slot)

    def _running(self, slot: _Slot) -> tuple[str, str, float] | None:
        """(job id, owner, deadline or 0) of the job the slot's worker runs now."""
        parts = slot.current.value.decode(errors="replace").split()
        if len(parts) != 3:
            return None
        try:
            return parts[0], parts[1], float(parts[2])
        except ValueError:
            return None

    def _overdue(self, slot: _Slot) -> bool:
        """Past its deadline by the grace: the worker is stuck inside one call (a PDFium load
        or render, a recognition) that the stage checks between pages cannot interrupt."""
        running = self._running(slot)
        return running is not None and 0 < running[2] < time.time() - self.deadline_grace_s

    def _stop_job(self, slot: _Slot, code: str) -> None:
        """Stop a worker at once (nothing it could still do is worth the host or the lane) and
        end its job's attempt with ``code``: MEMORY_LIMIT is retried once, in case something
        else crowded it, and is permanent the second time; DEADLINE_EXCEEDED is permanent."""
        assert slot.process is not None
        running = self._running(slot)
        slot.process.kill()
        slot.process.join(5.0)
        slot.current.value = b""
        log.warning(
            "worker stopped",
            extra={
                "lane": slot.lanes[0],
                "job_id": running[0] if running else None,
                "code": code,
                "bytes": self.settings.worker_memory_limit_bytes,
            },
        )
        if running is None:
            return
        job_id, owner, _deadline = running
        if code == "MEMORY_LIMIT":
            message = (
                "the worker passed its memory limit of "
                f"{self.settings.worker_memory_limit_bytes // (1024 * 1024)} MiB"
            )
        else:
            message = "the job ran past its deadline inside one step; the worker was stopped"
        try:
            if self._services is None:
                from pressroom.service import open_services

                self._services = open_services(self.settings, migrate=False)
            services = self._services
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
            # its tenant cancelled it while it was stuck: it ends CANCELLED now, its source
            # with it, not when the lease lapses (fail refuses a job whose cancel was asked)
            cancelled = failed is None and queue.end_cancelled(job_id, owner, now=services.clock())
            if cancelled and job is not None and job.source_key:
                services.blobs.delete(job.source_key)
        except Exception:  # the lease lapses and the rescuer retries it instead
            log.warning("could not record the stop", extra={"job_id": job_id, "code": code})

    def pids(self) -> list[int]:
        return [s.process.pid for s in self._slots if s.process is not None and s.process.pid]

    def stop(self, timeout: float = 60.0) -> None:
        """Stop claiming, let running jobs finish (up to ``timeout``), then end the rest."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        if self.heartbeat_dir is not None:  # a stopping pool is no longer a healthy one
            heartbeat.remove(self.heartbeat_dir, socket.gethostname(), os.getpid())
        if self._services is not None:  # opened by the memory guard
            self._services.store.db.engine.dispose()
        self._stop_event.set()
        deadline = time.monotonic() + timeout
        for slot in self._slots:
            if slot.process is not None:
                slot.process.join(max(0.0, deadline - time.monotonic()))
                if slot.process.is_alive():
                    slot.process.kill()  # its lease expires and the job is retried
                    slot.process.join()
