"""Adaptive pool benchmark (not a test): one burst of jobs drained by a fixed pool and by an
adaptive one, side by side in one run, on a simulated small machine; the pool size over time.

    .venv-test/bin/python bench/adaptive_pool.py [--jobs 40] [--job-mib 96] [--job-s 1.5]
        [--heavy-every 3] [--heavy-mib 240] [--budget-mib 640] [--fixed 6]

Both pools are real Supervisors with real spawned worker processes. Each worker claims a job
file (its own queue folder per pool), holds ``--job-mib`` MiB resident for ``--job-s`` seconds
(a page being read; every ``--heavy-every``th job ``--heavy-mib``, growing in three steps as
its pages are read), and takes the next. The memory each pool's processes hold, measured
(their resident sizes), is judged against ``--budget-mib``, a small machine's memory: a
simulated PSI source says stalls begin at 70 % of it and reach 30 % of the time at 100 %
(Linux reports much the same shape as reclaim starts), and available memory is the budget less
what the processes hold. The adaptive pool steers by that source and by its queue's oldest job;
the fixed pool cannot, and the table counts the samples in which it held more than the budget,
where on such a machine the kernel's OOM killer would have killed a worker and its job. Midway
another program (``--neighbour-mib``, simulated: counted, not allocated) takes memory for a
while, as a neighbour on a shared host does.

No cgroup is made (these machines give no writable memory controller); decisions use the
supervisor's real code, intervals scaled down (0.5 s decisions, 1 s queue-age target, 3 s
cool-down) so a burst fits a minute.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pressroom.jobs.model import Lane
from pressroom.settings import PoolSettings, Settings
from pressroom.worker.adaptive import MemoryReading
from pressroom.worker.pool import Supervisor, resident_bytes

MIB = 1024 * 1024
SAMPLE_S = 0.5


def bench_worker(
    lanes: tuple[str, ...], settings: Settings, stop: Any, max_jobs: int, current: Any
) -> None:
    """Claim a job file by renaming it, hold its memory for its time, finish it; stop between
    jobs when told (a job in hand always runs to its end)."""
    queue, running, done = (settings.data_dir / name for name in ("queue", "running", "done"))
    while not stop.is_set():
        job = None
        for candidate in sorted(queue.iterdir()):
            mine = running / candidate.name
            try:
                candidate.rename(mine)
            except OSError:
                continue
            job = mine
            break
        if job is None:
            stop.wait(0.05)
            continue
        _created, mib, seconds = job.read_text().split()
        current.value = f"{job.name} bench:{os.getpid()} 0".encode()
        hogs = []
        for _step in range(3):  # a document's memory grows as its pages are read
            hog = bytearray(int(mib) * MIB // 3)
            for i in range(0, len(hog), 4096):  # touched: resident, not only reserved
                hog[i] = 1
            hogs.append(hog)
            time.sleep(float(seconds) / 3)
        del hogs, hog
        job.rename(done / job.name)
        current.value = b""


@dataclass
class SmallMachine:
    """A simulated PSI and available-memory source over the pool's measured resident size.
    Stalls are averaged as the kernel's avg10 is (an exponential average over 10 s), on the
    benchmark's scaled clock: over 1 s, as decisions come every 0.5 s instead of 5."""

    budget: int
    supervisor: Supervisor | None = None
    # another program on the machine holding ``neighbour`` bytes in [start, end) (monotonic)
    neighbour: int = 0
    neighbour_from: float = 0.0
    neighbour_until: float = 0.0
    tau_s: float = 1.0
    _avg: float = 0.0
    _at: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def used(self) -> int:
        assert self.supervisor is not None
        return sum(resident_bytes(pid) for pid in self.supervisor.pids())

    def others(self) -> int:
        now = time.monotonic()
        return self.neighbour if self.neighbour_from <= now < self.neighbour_until else 0

    def read(self) -> MemoryReading:
        used = self.used() + self.others()
        share = used / self.budget
        stalled = min(100.0, max(0.0, (share - 0.7) / 0.3 * 30.0))
        with self._lock:
            now = time.monotonic()
            weight = 1.0 if self._at is None else 1 - math.exp(-(now - self._at) / self.tau_s)
            self._avg += weight * (stalled - self._avg)
            self._at, some = now, self._avg
        return MemoryReading(
            some_avg10=some,
            full_avg10=some / 10,
            available_bytes=max(0, self.budget - used),
            total_bytes=self.budget,
        )


@dataclass
class Run:
    name: str
    data: Path
    machine: SmallMachine
    supervisor: Supervisor
    samples: list[tuple[float, int, int, int]] = field(default_factory=list)  # t, size, MiB, left
    drained_at: float | None = None

    def left(self) -> int:
        return sum(1 for _ in (self.data / "queue").iterdir())

    def done(self) -> int:
        return sum(1 for _ in (self.data / "done").iterdir())


def make_run(name: str, root: Path, args: argparse.Namespace, adaptive: bool) -> Run:
    data = root / name
    (data / "queue").mkdir(parents=True)
    (data / "done").mkdir()
    (data / "running").mkdir()
    now = time.time()
    for n in range(args.jobs):
        mib = args.heavy_mib if args.heavy_every and n % args.heavy_every == 0 else args.job_mib
        (data / "queue" / f"job{n:04d}").write_text(f"{now} {mib} {args.job_s}")
    pools = PoolSettings(
        adaptive=adaptive,
        bulk_min=1,
        bulk_max=args.fixed,
        queue_age_target_s=1.0,
        interval_s=0.5,
        cooldown_s=3.0,
    )
    settings = Settings(
        data_dir=data,
        scratch_dir=root / "scratch",
        pools=pools,
        # the guard's limit is also the room a pool must see free before it grows
        worker_memory_limit_bytes=(max(args.job_mib, args.heavy_mib) + 64) * MIB,
    )
    if adaptive:
        from pressroom.service import open_services  # the store its decisions are counted in

        open_services(settings).store.db.engine.dispose()
    begin = time.monotonic() + args.neighbour_at
    machine = SmallMachine(
        args.budget_mib * MIB, None, args.neighbour_mib * MIB, begin, begin + args.neighbour_s
    )

    def queue_age() -> dict[str, float]:
        ages = []
        for job in (data / "queue").iterdir():
            try:  # a worker may take it between the listing and the read
                ages.append(float(job.read_text().split()[0]))
            except OSError:
                continue
        return {"bulk": time.time() - min(ages) if ages else 0.0}

    supervisor = Supervisor(
        settings,
        {Lane.BULK: 2 if adaptive else args.fixed},
        target=bench_worker,
        pressure=machine,
        queue_age=queue_age,
    )
    machine.supervisor = supervisor
    return Run(name, data, machine, supervisor)


def mean_size(run: Run) -> float:
    """The pool's mean size over the samples until its burst was drained."""
    end = run.drained_at if run.drained_at is not None else float("inf")
    sizes = [size for t, size, _used, _left in run.samples if t <= end]
    return sum(sizes) / max(1, len(sizes))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--job-mib", type=int, default=96)
    parser.add_argument("--job-s", type=float, default=1.5)
    parser.add_argument("--heavy-every", type=int, default=3, help="every Nth job is heavy")
    parser.add_argument("--heavy-mib", type=int, default=240)
    parser.add_argument("--neighbour-mib", type=int, default=256, help="another program's")
    parser.add_argument("--neighbour-at", type=float, default=6.0, help="seconds in")
    parser.add_argument("--neighbour-s", type=float, default=6.0, help="for how long")
    parser.add_argument("--budget-mib", type=int, default=640)
    parser.add_argument("--fixed", type=int, default=6, help="the fixed pool, and the ceiling")
    parser.add_argument("--tail-s", type=float, default=8.0, help="watched after the burst")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="adaptive-bench-"))
    runs = [make_run("fixed", root, args, False), make_run("adaptive", root, args, True)]
    print(
        f"burst: {args.jobs} jobs of {args.job_mib} MiB (1 in {args.heavy_every}: "
        f"{args.heavy_mib} MiB) x {args.job_s} s; machine: "
        f"{args.budget_mib} MiB; fixed pool {args.fixed}; adaptive 2 -> [1, {args.fixed}]"
    )
    print(f"cpu: {os.cpu_count()} cores; decisions every 0.5 s; sample every {SAMPLE_S} s")
    print(
        f"another program holds {args.neighbour_mib} MiB from {args.neighbour_at:g} s for "
        f"{args.neighbour_s:g} s; MiB: the pool's workers' resident memory plus it"
    )
    print("'!': more than the machine has (the OOM killer would act)\n")
    start = time.monotonic()
    for run in runs:
        run.supervisor.start()
    header = "  t s | fixed: size  MiB  left | adaptive: size  MiB  left  psi | decision"
    print(header)
    print("-" * len(header))
    seen = 0
    try:
        while True:
            t = time.monotonic() - start
            row = []
            for run in runs:
                size = run.supervisor.sizes()["bulk"]
                used = (run.machine.used() + run.machine.others()) // MIB
                left = run.left()
                run.samples.append((t, size, used, left))
                if run.drained_at is None and run.done() == args.jobs:
                    run.drained_at = t
                over = "!" if used > args.budget_mib else " "
                row.append(f"{size:4d} {used:5d}{over} {left:4d}")
            adaptive = runs[1]
            psi = adaptive.machine.read().some_avg10 or 0.0
            new = list(adaptive.supervisor.decisions)[seen:]
            seen += len(new)
            said = ", ".join(f"{d.before}->{d.after} {d.reason}" for d in new)
            print(f"{t:5.1f} |       {row[0]} |          {row[1]} {psi:4.0f} | {said}", flush=True)
            if (
                all(r.drained_at is not None for r in runs)
                and t > max(r.drained_at or 0 for r in runs) + args.tail_s
            ):
                break
            if t > 180:
                print("gave up after 180 s")
                break
            time.sleep(SAMPLE_S)
    finally:
        for run in runs:
            run.supervisor.stop(30)

    print("\n                          fixed   adaptive")
    for label, pick in (
        ("burst drained after, s", lambda r: f"{r.drained_at or float('nan'):.1f}"),
        ("peak memory, MiB", lambda r: str(max(s[2] for s in r.samples))),
        (
            f"samples over {args.budget_mib} MiB (OOM)",
            lambda r: f"{sum(s[2] > args.budget_mib for s in r.samples)}/{len(r.samples)}",
        ),
        ("largest pool", lambda r: str(max(s[1] for s in r.samples))),
        ("mean pool while draining", lambda r: f"{mean_size(r):.2f}"),
    ):
        print(f"{label:>34}  {pick(runs[0]):>6}  {pick(runs[1]):>9}")
    reasons = Counter(d.reason for d in runs[1].supervisor.decisions)
    print("adaptive decisions:", ", ".join(f"{r} {n}" for r, n in sorted(reasons.items())))


if __name__ == "__main__":
    main()
