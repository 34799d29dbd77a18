"""Worker processes per lane, supervised: restarted when they die, recycled after N jobs, and
(``PRESSROOM_POOL_ADAPTIVE``) grown and shrunk by the lane's controller (``adaptive.py``): a
new worker for growth, and for a shrink a worker told to stop after its current job (a running
job is never killed to shrink a pool; only the memory guard and the deadline kill)."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import logging
import math
import multiprocessing as mp
import os
import signal
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from multiprocessing.context import SpawnProcess
from pathlib import Path
from typing import Any

from pressroom.jobs.model import Lane
from pressroom.settings import Settings
from pressroom.worker import heartbeat
from pressroom.worker.adaptive import Decision, LaneController, Observation, lane_controller
from pressroom.worker.guard import (
    DEADLINE_GRACE_S,
    MEMORY_TICK_S,
    error_code,
    record_stop,
    resident_bytes,
)
from pressroom.worker.pressure import PressureSource, pressure_source

log = logging.getLogger("pressroom.pool")
POLL_S = 0.5
IDLE_WAIT_S = 2.0  # PostgreSQL: longest sleep between claims without a NOTIFY
RESCUE_EVERY_S = 5.0


def stop_on_sigterm(stop: Any) -> None:
    """SIGTERM (systemd signals every process of the unit) stops the worker after its job. The
    event is set from a thread: set in the handler itself, it would wait for the lock that
    this very process holds inside ``stop.wait()``, and neither it nor the supervisor could
    ever set the event again."""
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=stop.set, daemon=True).start())


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
    stop_on_sigterm(stop)
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
    stop: Any = None  # this worker's own stop event: set, it stops after its current job
    draining: bool = False  # told to stop by a shrink: not restarted, gone once it exits


@dataclass
class Supervisor:
    """Keeps ``pools`` worker processes alive per lane until ``stop()``; with adaptive pools
    on, ``pools`` is where each lane starts (clamped between its floor and ceiling)."""

    settings: Settings
    pools: dict[Lane, int]
    max_jobs: int = 200
    target: Any = worker_main  # what each worker process runs (tests give a misbehaving one)
    deadline_grace_s: float = DEADLINE_GRACE_S
    # where to keep this pool's heartbeat file for `pressroom worker --check` (None: no file)
    heartbeat_dir: Path | None = None
    clock: Callable[[], float] = time.time  # the heartbeat's wall clock
    # adaptive pools' signals (None: PSI and /proc/meminfo, the store); tests script them
    pressure: PressureSource | None = None
    queue_age: Callable[[], Mapping[str, float]] | None = None
    _ctx: Any = field(default_factory=lambda: mp.get_context("spawn"))
    _slots: list[_Slot] = field(default_factory=list)
    _thread: threading.Thread | None = None
    _stopping: threading.Event = field(default_factory=threading.Event)
    _halted: threading.Event = field(default_factory=threading.Event)  # see ``halt``

    def __post_init__(self) -> None:
        self._services: Any = None
        self._beat_failed = False
        self._lock = threading.Lock()  # the slot list: the watch and the adapt threads change it
        self._helpers: list[threading.Thread] = []
        # the pools' store work has its own thread and connection (``_pool_store``)
        self._pool_services: Any = None
        self._ages: tuple[float, dict[str, float]] = (-math.inf, {})
        self._unrecorded: deque[Decision] = deque(maxlen=256)
        self.decisions: deque[Decision] = deque(maxlen=256)  # newest last
        self.controllers: dict[str, LaneController] = {}
        pools = self.settings.pools
        for lane, count in self.pools.items():
            if pools.adaptive:
                control = lane_controller(
                    lane.value,
                    count,
                    pools,
                    room_bytes=self.settings.worker_memory_limit_bytes,
                    cpus=os.cpu_count() or 1,
                )
                self.controllers[lane.value] = control
                count = control.size
            self._slots += [self._slot(lane.value) for _ in range(count)]
        if self.controllers and self.pressure is None:
            self.pressure = pressure_source(pools.psi_file)

    def _slot(self, lane: str) -> _Slot:
        return _Slot((lane,), current=self._ctx.Array("c", 160, lock=False), stop=self._ctx.Event())

    def _spawn(self, slot: _Slot) -> None:
        """Start the slot's worker; the slot has a process only once it started (a spawn that
        fails, EAGAIN under pids.max or EMFILE, leaves it without one, tried again later)."""
        slot.current.value = b""
        process = self._ctx.Process(
            target=self.target,
            args=(slot.lanes, self.settings, slot.stop, self.max_jobs, slot.current),
            name=f"pressroom-worker-{slot.lanes[0]}",
            daemon=False,
        )
        process.start()
        slot.process = process

    def _all(self) -> list[_Slot]:
        with self._lock:
            return list(self._slots)

    def start(self) -> None:
        for slot in self._slots:
            self._spawn(slot)
        self._beat()  # at once: a health check right after start sees the pool
        self._thread = threading.Thread(target=self._watch, name="supervisor", daemon=True)
        self._thread.start()
        if self.controllers:
            for run, name in ((self._adapt, "pool-adapt"), (self._pool_store, "pool-store")):
                self._helpers.append(threading.Thread(target=run, name=name, daemon=True))
                self._helpers[-1].start()

    def sizes(self) -> dict[str, int]:
        """Per lane, the workers the pool keeps now (those told to stop not counted)."""
        counts = {lane.value: 0 for lane in self.pools}
        for slot in self._all():
            if not slot.draining:
                counts[slot.lanes[0]] = counts.get(slot.lanes[0], 0) + 1
        return counts

    def _beat(self) -> None:
        """Rewrite the heartbeat file: per lane, the worker processes alive now of those the
        pool keeps, and how many it keeps (a worker stopping after a shrink is in neither)."""
        if self.heartbeat_dir is None:
            return
        lanes: dict[str, tuple[int, int]] = {lane.value: (0, 0) for lane in self.pools}
        for slot in self._all():
            if slot.draining:
                continue
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
            slots = self._all()
            for slot in slots:
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
            for slot in slots:
                self._restart(slot)

    def _restart(self, slot: _Slot) -> None:
        """Start an exited slot's worker again unless it was told to stop: by a shrink, or by
        its own event (systemd's SIGTERM to a stopping unit: one started now would claim jobs
        in the shutdown). One that exited 0 holds no lock of its event, so reading it is safe;
        one killed gets a fresh event. A refused spawn is logged and tried again next check:
        this thread also runs the memory guard and must outlive it."""
        code, told = None, False
        if slot.process is not None:
            if slot.process.is_alive():
                return
            code = slot.process.exitcode
            slot.process.close()
            slot.process = None
            told = code == 0 and slot.stop.is_set()
        with self._lock:  # a shrink marks its workers under this lock too
            gone = slot.draining or told
            if gone:
                self._slots.remove(slot)
            elif code is not None:
                slot.stop = self._ctx.Event()
        if gone:
            log.info("worker stopped", extra={"lane": slot.lanes[0], "exit_code": code})
            return
        if code:
            log.warning("worker died; restarting", extra={"lane": slot.lanes[0], "exit_code": code})
        slot.restarts += code is not None
        if self._halted.is_set():
            return
        try:
            self._spawn(slot)
        except Exception as exc:
            log.warning(
                "worker not started", extra={"lane": slot.lanes[0], "code": error_code(exc)}
            )

    # --- adaptive pools --------------------------------------------------------------------

    def _adapt(self) -> None:
        """A round that raises (a pressure file that reads oddly, a spawn refused) is logged and
        the next one runs: this thread is what shrinks the pool under memory pressure."""
        while not self._stopping.wait(self.settings.pools.interval_s):
            try:
                self.decide(now=time.monotonic())
            except Exception as exc:
                log.warning("pool round failed", extra={"code": error_code(exc)})

    def decide(self, *, now: float) -> list[Decision]:
        """One round: each lane's controller sees its signals, and its decision is carried out
        at once (a new worker, or one told to stop after its current job). Queue ages older
        than three rounds are not believed: no growth on them, and no idle step down."""
        assert self.pressure is not None
        memory = self.pressure.read()
        at, ages = self._ages
        known = now - at <= 3 * self.settings.pools.interval_s
        made = []
        for lane, control in self.controllers.items():
            kept = [s for s in self._all() if s.lanes[0] == lane and not s.draining]
            control.size = len(kept)  # the workers kept, whatever an earlier round managed
            busy = sum(self._running(s) is not None for s in kept) if known else None
            gone = [s for s in self._all() if s.lanes[0] == lane and s.draining]
            draining = sum(s.process is not None and s.process.is_alive() for s in gone)
            seen = Observation(ages.get(lane, 0.0) if known else 0.0, memory, busy, draining)
            decision = control.observe(seen, now)
            if decision is not None:
                self._resize(decision, kept)
                made.append(decision)
        return made

    def _pool_store(self) -> None:
        """Read the lanes' oldest waiting jobs, and count the decisions made, every round (and
        once more as the pool stops), on its own thread and connection: a slow or absent store
        delays growth, never the memory guard nor a shrink under pressure."""
        while True:
            last = self._stopping.is_set()
            try:
                if self.queue_age is not None:
                    self._ages = (time.monotonic(), dict(self.queue_age()))
                if self._pool_services is None:
                    from pressroom.service import open_services

                    self._pool_services = open_services(self.settings, migrate=False)
                stats, clock = self._pool_services.store.stats, self._pool_services.clock
                if self.queue_age is None:
                    self._ages = (time.monotonic(), stats.oldest_waiting(now=clock()))
                while self._unrecorded:
                    made = self._unrecorded[0]
                    stats.record_pool_decision(made.lane, made.reason, now=clock())
                    self._unrecorded.popleft()
            except Exception as exc:  # tried again next round; the pool goes on meanwhile
                log.warning("pool figures unavailable", extra={"code": getattr(exc, "code", None)})
            if last:
                return
            self._stopping.wait(self.settings.pools.interval_s)

    def _resize(self, decision: Decision, kept: list[_Slot]) -> None:
        if self._stopping.is_set() or self._halted.is_set():
            return
        if decision.after > decision.before:
            grown = 0
            try:
                for _ in range(decision.after - decision.before):
                    slot = self._slot(decision.lane)
                    self._spawn(slot)
                    with self._lock:
                        self._slots.append(slot)
                    grown += 1
            except Exception as exc:  # the size is what started; the next round may try again
                self.controllers[decision.lane].size = decision.before + grown
                log.warning(
                    "worker not started", extra={"lane": decision.lane, "code": error_code(exc)}
                )
                if not grown:
                    return
                decision = dataclasses.replace(decision, after=decision.before + grown)
        else:
            # idle workers first: they stop at once; a busy one finishes its job first
            kept.sort(key=lambda s: self._running(s) is not None)
            with self._lock:
                events = []
                for slot in kept[: decision.before - decision.after]:
                    slot.draining = True
                    events.append(slot.stop)
            for event in events:  # outside the lock: the memory guard never waits on it
                event.set()
        self.decisions.append(decision)
        self._unrecorded.append(decision)  # counted in the store by the pool-store thread
        log.info(
            "pool resized",
            extra={
                "lane": decision.lane,
                "from_size": decision.before,
                "to_size": decision.after,
                "code": decision.reason,
            },
        )

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
        end its job's attempt with ``code`` (``guard.record_stop``)."""
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
        self._services = record_stop(self.settings, self._services, job_id, owner, code)

    def pids(self) -> list[int]:
        return [s.process.pid for s in self._all() if s.process is not None and s.process.pid]

    def halt(self) -> None:
        """A shutdown began (SIGTERM): no worker is started or restarted from now on, while
        the rest of the process stops; the memory guard runs on until ``stop``."""
        self._halted.set()

    def stop(self, timeout: float = 60.0) -> None:
        """Stop claiming, let running jobs finish (up to ``timeout``), then end the rest."""
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
        for helper in self._helpers:  # the store thread may be inside a slow call: not waited
            helper.join(5.0)
        if self.heartbeat_dir is not None:  # a stopping pool is no longer a healthy one
            heartbeat.remove(self.heartbeat_dir, socket.gethostname(), os.getpid())
        for services in (self._services, self._pool_services):  # the guard's, the pools'
            if services is not None:
                services.store.db.engine.dispose()
        slots = self._all()
        for slot in slots:
            slot.stop.set()
        deadline = time.monotonic() + timeout
        for slot in slots:
            if slot.process is not None:
                slot.process.join(max(0.0, deadline - time.monotonic()))
                if slot.process.is_alive():
                    slot.process.kill()  # its lease expires and the job is retried
                    slot.process.join()
