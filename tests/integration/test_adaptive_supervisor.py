"""A real Supervisor with adaptive pools: real spawned worker processes (a trivial target that
holds a pretend job until told to stop), a real store with a job waiting, and a scripted
memory-pressure source. The pool grows while the job waits, shrinks when the source reports
pressure (the workers it lets go finish their job and exit on their own: none is killed),
and grows back once the pressure clears. Every wait is on the pool's reported size or its
processes, never a fixed sleep; each decision reaches /metrics and the dashboard. And a worker
sent SIGTERM while it waits on its stop event stops, and so can the pool."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pressroom.api.dashboard import render_dashboard, snapshot
from pressroom.api.metrics import render_metrics
from pressroom.app import create_app
from pressroom.jobs.model import Lane
from pressroom.service import open_services
from pressroom.settings import PoolSettings, Settings
from pressroom.worker import heartbeat
from pressroom.worker.adaptive import GROW_QUEUE_AGE, SHRINK_MEMORY_PRESSURE, MemoryReading
from pressroom.worker.pool import Supervisor
from pressroom.worker.pressure import FixedPressure
from tests.e2e.conftest import poll
from tests.integration.test_service import png_bytes, post

pytestmark = pytest.mark.integration

GIB = 1024**3
CALM = MemoryReading(some_avg10=0.0, full_avg10=0.0, available_bytes=8 * GIB, total_bytes=16 * GIB)
PRESSED = MemoryReading(some_avg10=40.0, full_avg10=5.0, available_bytes=GIB, total_bytes=16 * GIB)


def busy_worker(
    lanes: tuple[str, ...], settings: Settings, stop: Any, max_jobs: int, current: Any
) -> None:
    """Runs one pretend job until told to stop, then finishes it and leaves a note (a worker
    killed mid-job would leave none)."""
    current.value = f"pretend-{os.getpid()} busy:{os.getpid()} 0".encode()
    stop.wait(120)
    current.value = b""
    (settings.data_dir / f"finished-{os.getpid()}").write_text("0")


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_the_pool_shrinks_under_memory_pressure_and_grows_back_when_it_clears(
    tmp_path: Path,
) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        scratch_dir=tmp_path / "scratch",
        pools=PoolSettings(
            adaptive=True,
            bulk_min=1,
            bulk_max=4,
            queue_age_target_s=0.0,  # any waiting job is waiting too long
            interval_s=0.2,
            cooldown_s=1.0,
        ),
    )
    services = open_services(settings)
    client = TestClient(create_app(services), client=("127.0.0.1", 50000))
    key = services.store.tenancy.create_key("acme", now=services.clock())
    answer = post(client, {"Authorization": f"Bearer {key}"}, png_bytes(tmp_path))
    assert answer.status_code == 202, answer.text  # a job nobody here will claim: it waits
    pressure = FixedPressure(CALM)
    supervisor = Supervisor(
        settings,
        {Lane.BULK: 1},
        target=busy_worker,
        pressure=pressure,
        heartbeat_dir=tmp_path / "beats",
    )
    supervisor.start()
    try:
        # the job waits and memory has room: one worker more at a time, up to the ceiling
        assert poll(lambda: supervisor.sizes() == {"bulk": 4}, 60), supervisor.sizes()
        assert poll(lambda: len([p for p in supervisor.pids() if _alive(p)]) == 4, 60)
        before = set(supervisor.pids())

        pressure.set(PRESSED)
        # halved, then halved again: 4 -> 2 -> 1 (the floor), never under it
        assert poll(lambda: supervisor.sizes() == {"bulk": 1}, 60), supervisor.sizes()
        # the workers let go finished their job and left on their own
        assert poll(lambda: len(supervisor.pids()) == 1, 60), supervisor.pids()
        gone = before - set(supervisor.pids())
        assert len(gone) == 3
        assert poll(
            lambda: all((settings.data_dir / f"finished-{pid}").exists() for pid in gone), 30
        )
        assert not any(_alive(pid) for pid in gone)

        pressure.set(CALM)
        assert poll(lambda: supervisor.sizes() == {"bulk": 4}, 60), supervisor.sizes()
        assert poll(lambda: len([p for p in supervisor.pids() if _alive(p)]) == 4, 60)
        supervisor._beat()  # the health check's file says what the pool keeps now
        beats = heartbeat.read(tmp_path / "beats", socket.gethostname())
        assert [b.lanes["bulk"] for b in beats] == [(4, 4)]
    finally:
        supervisor.stop(10)

    reasons = [(d.before, d.after, d.reason) for d in supervisor.decisions]
    assert reasons == [
        (1, 2, GROW_QUEUE_AGE),
        (2, 3, GROW_QUEUE_AGE),
        (3, 4, GROW_QUEUE_AGE),
        (4, 2, SHRINK_MEMORY_PRESSURE),
        (2, 1, SHRINK_MEMORY_PRESSURE),
        (1, 2, GROW_QUEUE_AGE),
        (2, 3, GROW_QUEUE_AGE),
        (3, 4, GROW_QUEUE_AGE),
    ], reasons
    # every decision reached the store: the counter by reason, and the dashboard's worker card
    body = render_metrics(services).decode()
    counted = {
        line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
        for line in body.splitlines()
        if line.startswith("pressroom_pool_decisions_total")
    }
    grown = counted['pressroom_pool_decisions_total{lane="bulk",reason="GROW_QUEUE_AGE"}']
    shrunk = counted['pressroom_pool_decisions_total{lane="bulk",reason="SHRINK_MEMORY_PRESSURE"}']
    assert (grown, shrunk) == (6.0, 2.0), counted
    assert counted['pressroom_pool_decisions_total{lane="interactive",reason="SHRINK_IDLE"}'] == 0
    page = render_dashboard(snapshot(services))
    card = page[page.index('id="pool-decisions"') :]
    assert "SHRINK_MEMORY_PRESSURE</code></td><td>2" in card
    assert "GROW_QUEUE_AGE</code></td><td>6" in card


def waiting_worker(
    lanes: tuple[str, ...], settings: Settings, stop: Any, max_jobs: int, current: Any
) -> None:
    """Idle in ``stop.wait()`` (as a worker is while the store is down), with the real
    worker's SIGTERM handler."""
    from pressroom.worker.pool import stop_on_sigterm

    stop_on_sigterm(stop)
    (settings.data_dir / f"ready-{os.getpid()}").write_text("")
    while not stop.wait(0.5):
        pass


def test_a_worker_sent_sigterm_while_waiting_stops_and_the_pool_can_still_stop(
    tmp_path: Path,
) -> None:
    """systemd signals every process of the unit. A handler that set the stop event itself
    deadlocked a worker inside ``stop.wait()`` (the event's lock is its own), and the
    supervisor's stop then waited on that lock for ever."""
    import signal
    import threading

    settings = Settings(data_dir=tmp_path / "data", scratch_dir=tmp_path / "scratch")
    settings.data_dir.mkdir()
    supervisor = Supervisor(settings, {Lane.BULK: 2}, target=waiting_worker)
    supervisor.start()
    stopped = threading.Thread(target=supervisor.stop, args=(10,), daemon=True)
    try:
        first = supervisor.pids()
        ready = [settings.data_dir / f"ready-{pid}" for pid in first]
        assert poll(lambda: all(p.exists() for p in ready), 60)
        for pid in first:
            os.kill(pid, signal.SIGTERM)
        assert poll(lambda: not any(_alive(pid) for pid in first), 30), first
        # told to stop by the signal, they are not started again: a worker started now, with a
        # fresh stop event, would claim jobs while the service shuts down
        assert poll(lambda: supervisor.sizes() == {"bulk": 0}, 30), supervisor.sizes()
        assert sorted(p.name for p in settings.data_dir.glob("ready-*")) == sorted(
            p.name for p in ready
        )
    finally:
        stopped.start()
        stopped.join(60)
    assert not stopped.is_alive(), "the supervisor's stop hung"


class Flaky:
    """A pressure source whose first read raises (a wrong file, an odd kernel), then pressed."""

    def __init__(self) -> None:
        self.reads = 0

    def read(self) -> MemoryReading:
        self.reads += 1
        if self.reads == 1:
            raise ValueError("odd")
        return PRESSED


def test_a_round_that_raises_neither_ends_the_pool_thread_nor_leaves_its_size_adrift(
    tmp_path: Path,
) -> None:
    """A spawn refused (EAGAIN under pids.max, EMFILE) or a reading that raises is logged and
    the next round runs: the adapt thread is what shrinks the pool under memory pressure. The
    controller's size stays the workers the pool really keeps."""
    import errno
    import math
    import threading

    pools = PoolSettings(
        adaptive=True, bulk_min=1, bulk_max=4, queue_age_target_s=0, interval_s=0.05, cooldown_s=0
    )
    settings = Settings(data_dir=tmp_path / "data", scratch_dir=tmp_path / "scratch", pools=pools)
    pressure = FixedPressure(CALM)
    supervisor = Supervisor(settings, {Lane.BULK: 2}, pressure=pressure, queue_age=dict)
    supervisor._ages = (math.inf, {"bulk": 100.0})  # an old queue, believed every round
    refused = []

    def spawn(slot: Any) -> None:
        refused.append(slot)
        raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")

    supervisor._spawn = spawn  # type: ignore[method-assign]
    supervisor.decide(now=0.0)
    supervisor.decide(now=1.0)  # the second round in a row that wants growth: a spawn, refused
    assert refused
    assert supervisor.controllers["bulk"].size == supervisor.sizes()["bulk"] == 2
    # the watch thread's restart of a worker whose spawn is refused leaves the slot to retry
    slot = supervisor._all()[0]
    supervisor._restart(slot)
    assert slot in supervisor._all() and slot.process is None
    supervisor.pressure = Flaky()
    thread = threading.Thread(target=supervisor._adapt, daemon=True)
    thread.start()
    try:
        assert poll(lambda: SHRINK_MEMORY_PRESSURE in (d.reason for d in supervisor.decisions), 30)
        assert thread.is_alive()
    finally:
        supervisor._stopping.set()
        thread.join(30)
    assert supervisor.controllers["bulk"].size == supervisor.sizes()["bulk"] == 1


def test_a_shrink_lets_idle_workers_go_before_busy_ones(tmp_path: Path) -> None:
    """An idle worker stops at once; a busy one would hold its memory until its job ends."""
    pools = PoolSettings(adaptive=True, bulk_min=1, bulk_max=4, interval_s=0.05)
    settings = Settings(data_dir=tmp_path / "data", scratch_dir=tmp_path / "scratch", pools=pools)
    supervisor = Supervisor(settings, {Lane.BULK: 4}, pressure=FixedPressure(PRESSED))
    slots = supervisor._all()
    for n in (0, 1, 2):  # three busy, the idle one last
        slots[n].current.value = f"job-{n} owner-{n} 0".encode()
    supervisor.decide(now=0.0)
    supervisor.decide(now=1.0)  # two pressed rounds: 4 -> 2, the idle one first
    assert [s.draining for s in slots] == [True, False, False, True]


def test_once_halted_for_a_shutdown_no_worker_is_started_or_added(tmp_path: Path) -> None:
    """serve and worker halt the pool first when SIGTERM comes: the workers got it too, and
    neither a restart nor a growth round may start one while the rest of the process stops."""
    import math

    pools = PoolSettings(adaptive=True, bulk_min=1, bulk_max=4, queue_age_target_s=0)
    settings = Settings(data_dir=tmp_path / "data", scratch_dir=tmp_path / "scratch", pools=pools)
    supervisor = Supervisor(settings, {Lane.BULK: 1}, pressure=FixedPressure(CALM))
    supervisor._ages = (math.inf, {"bulk": 100.0})
    started: list[Any] = []
    supervisor._spawn = started.append  # type: ignore[method-assign]
    supervisor.halt()
    for now in range(4):
        supervisor.decide(now=float(now))
    supervisor._restart(supervisor._all()[0])  # a slot whose worker is gone
    assert started == []
    assert supervisor.sizes() == {"bulk": 1}
