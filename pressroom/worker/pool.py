"""Worker processes per lane, supervised: restarted when they die, recycled after N jobs."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import os
import signal
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from multiprocessing.context import SpawnProcess
from typing import Any

from pressroom.jobs.model import Lane
from pressroom.settings import Settings

log = logging.getLogger("pressroom.pool")
POLL_S = 0.5
IDLE_WAIT_S = 2.0  # PostgreSQL: longest sleep between claims without a NOTIFY
RESCUE_EVERY_S = 5.0


def worker_main(lanes: tuple[str, ...], settings: Settings, stop: Any, max_jobs: int) -> None:
    """The body of one worker process: claim, run, repeat; stop when told or after N jobs."""
    os.environ["OMP_THREAD_LIMIT"] = "1"
    os.umask(0o077)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the supervisor decides when we stop
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    from pressroom.engines.tesseract import TesseractEngine
    from pressroom.errors import TransientError
    from pressroom.logs import configure_logging
    from pressroom.scratch import sweep_stale
    from pressroom.service import open_services
    from pressroom.worker.runner import JobRunner

    configure_logging()
    from pressroom import tracing

    tracing.configure()
    services = open_services(settings, migrate=False)
    settings.scratch_dir.mkdir(parents=True, exist_ok=True)
    sweep_stale(settings.scratch_dir)
    owner = f"{socket.gethostname()[:24]}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
    runner = JobRunner(services, TesseractEngine(languages=settings.languages), owner)
    claim_lanes = tuple(Lane(x) for x in lanes)
    parent = os.getppid()
    try:
        _work(services, runner, claim_lanes, owner, stop, max_jobs, parent)
    finally:
        with contextlib.suppress(TransientError):
            services.store.worker_gone(owner)
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
    from pressroom.notify.webhooks import deliver_due

    done = 0
    last_rescue = 0.0
    lanes = tuple(lane.value for lane in claim_lanes)
    while not stop.is_set() and done < max_jobs:
        if os.getppid() != parent:  # the supervisor is gone (killed): do not linger as an orphan
            break
        try:
            if time.monotonic() - last_rescue > RESCUE_EVERY_S:
                services.store.rescue_expired(now=services.clock(), policy=services.retry)
                # admission divides the work ahead by the live workers it sees here
                services.store.worker_seen(owner, lanes, now=services.clock())
                last_rescue = time.monotonic()
            job = runner.run_next(claim_lanes)
            deliver_due(services, owner)
        except TransientError as exc:
            log.warning("store unavailable", extra={"code": exc.code})
            stop.wait(2.0)
            continue
        if job is None:
            if stop.is_set():
                break
            # PostgreSQL: LISTEN until a job arrives (or a backoff may have ended);
            # SQLite: a short poll
            services.store.wait_for_work(IDLE_WAIT_S if services.store.is_postgres else POLL_S)
        else:
            done += 1


@dataclass
class _Slot:
    lanes: tuple[str, ...]
    process: SpawnProcess | None = None
    restarts: int = 0


@dataclass
class Supervisor:
    """Keeps ``pools`` worker processes alive per lane until ``stop()``."""

    settings: Settings
    pools: dict[Lane, int]
    max_jobs: int = 200
    _ctx: Any = field(default_factory=lambda: mp.get_context("spawn"))
    _slots: list[_Slot] = field(default_factory=list)
    _thread: threading.Thread | None = None
    _stopping: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self._stop_event = self._ctx.Event()
        for lane, count in self.pools.items():
            self._slots += [_Slot((lane.value,)) for _ in range(count)]

    def _spawn(self, slot: _Slot) -> None:
        slot.process = self._ctx.Process(
            target=worker_main,
            args=(slot.lanes, self.settings, self._stop_event, self.max_jobs),
            name=f"pressroom-worker-{slot.lanes[0]}",
            daemon=False,
        )
        slot.process.start()

    def start(self) -> None:
        for slot in self._slots:
            self._spawn(slot)
        self._thread = threading.Thread(target=self._watch, name="supervisor", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stopping.wait(1.0):
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

    def pids(self) -> list[int]:
        return [s.process.pid for s in self._slots if s.process is not None and s.process.pid]

    def stop(self, timeout: float = 60.0) -> None:
        """Stop claiming, let running jobs finish (up to ``timeout``), then end the rest."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        self._stop_event.set()
        deadline = time.monotonic() + timeout
        for slot in self._slots:
            if slot.process is not None:
                slot.process.join(max(0.0, deadline - time.monotonic()))
                if slot.process.is_alive():
                    slot.process.kill()  # its lease expires and the job is retried
                    slot.process.join()
