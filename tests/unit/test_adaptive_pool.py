"""The adaptive pools' controller, driven by scripted signals (no process, no sleep): it grows
additively while jobs wait too long and memory has room, halves on memory pressure before the
OOM killer would act, holds in the band between, does not flap, and stays between its floor
and its ceiling. Also the memory readers' parsers and the settings that switch it on."""

from __future__ import annotations

from pathlib import Path

import pytest

from pressroom.errors import BadConfig
from pressroom.settings import VARIABLES, PoolSettings, Settings, markdown
from pressroom.worker.adaptive import (
    GROW_QUEUE_AGE,
    SHRINK_IDLE,
    SHRINK_MEMORY_LOW,
    SHRINK_MEMORY_PRESSURE,
    LaneController,
    Memory,
    MemoryReading,
    Observation,
    Thresholds,
    Tuning,
    judge_memory,
    lane_controller,
)
from pressroom.worker.pressure import ProcPressure, parse_meminfo, parse_psi, pressure_source

GIB = 1024**3
CALM = MemoryReading(some_avg10=0.0, full_avg10=0.0, available_bytes=8 * GIB, total_bytes=16 * GIB)
PRESSED = MemoryReading(some_avg10=35.0, full_avg10=4.0, available_bytes=GIB, total_bytes=16 * GIB)
# between the marks: PSI over a quarter of its high mark, under the mark itself
WARM = MemoryReading(some_avg10=5.0, full_avg10=0.0, available_bytes=8 * GIB, total_bytes=16 * GIB)
MARKS = Thresholds(psi_some_high=10.0, psi_full_high=2.0, available_low=0.10, room_bytes=GIB)


def controller(size: int = 2, floor: int = 1, ceiling: int = 8, **tuning: float) -> LaneController:
    knobs = {"queue_age_target_s": 30.0, "cooldown_s": 30.0, **tuning}
    return LaneController("bulk", floor, ceiling, size, Tuning(**knobs), MARKS)  # type: ignore[arg-type]


def run(
    control: LaneController, script: list[tuple[float, MemoryReading]], every: float = 5.0
) -> list[int]:
    """The size after each scripted (queue age, memory) observation, one every ``every`` s."""
    sizes = []
    for i, (age, memory) in enumerate(script):
        control.observe(Observation(age, memory, busy=control.size), now=i * every)
        sizes.append(control.size)
    return sizes


# --- memory ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reading", "verdict", "reason"),
    [
        (CALM, Memory.ROOMY, None),
        (PRESSED, Memory.PRESSED, SHRINK_MEMORY_PRESSURE),
        (WARM, Memory.TIGHT, None),
        # full stalls alone are pressure
        (MemoryReading(0.0, 2.5, 8 * GIB, 16 * GIB), Memory.PRESSED, SHRINK_MEMORY_PRESSURE),
        # no PSI on this kernel: available memory alone decides
        (MemoryReading(None, None, GIB, 16 * GIB), Memory.PRESSED, SHRINK_MEMORY_LOW),
        (MemoryReading(None, None, 2 * GIB, 16 * GIB), Memory.TIGHT, None),  # under 2 x 10 %
        (MemoryReading(None, None, 8 * GIB, 16 * GIB), Memory.ROOMY, None),
        # a quarter free, but less than one more worker would need: no growth
        (MemoryReading(0.0, 0.0, GIB // 2, 2 * GIB), Memory.TIGHT, None),
        # nothing known: no evidence of room, so no growth (and no shrink)
        (MemoryReading(), Memory.TIGHT, None),
    ],
)
def test_memory_is_judged_with_a_band_between_pressed_and_roomy(
    reading: MemoryReading, verdict: Memory, reason: str | None
) -> None:
    assert judge_memory(reading, MARKS) == (verdict, reason)


# --- the controller --------------------------------------------------------------------------


def test_grows_one_at_a_time_while_jobs_wait_too_long_and_memory_has_room() -> None:
    sizes = run(controller(size=2), [(120.0, CALM)] * 8)
    # a run of two observations before each step; one worker a step (additive)
    assert sizes == [2, 3, 3, 4, 4, 5, 5, 6]


def test_does_not_grow_past_its_ceiling() -> None:
    assert run(controller(size=3, ceiling=4), [(120.0, CALM)] * 8)[-1] == 4


def test_does_not_grow_when_jobs_wait_less_than_the_target() -> None:
    assert run(controller(size=2), [(10.0, CALM)] * 8) == [2] * 8


def test_does_not_grow_without_room_even_with_an_old_queue() -> None:
    assert run(controller(size=2), [(600.0, WARM)] * 8) == [2] * 8


def test_halves_on_memory_pressure_and_stops_at_the_floor() -> None:
    sizes = run(controller(size=8, floor=2), [(600.0, PRESSED)] * 8)
    # two pressed readings in a row before each cut; 8 -> 4 -> 2 (the floor), never under
    assert sizes == [8, 4, 4, 2, 2, 2, 2, 2]


def test_a_halving_that_would_land_under_a_floor_above_one_stops_at_the_floor() -> None:
    assert run(controller(size=5, floor=3), [(0.0, PRESSED)] * 4) == [5, 3, 3, 3]


def test_no_further_halving_while_the_workers_let_go_still_finish_their_jobs() -> None:
    control = controller(size=8)
    sizes = []
    for i, draining in enumerate([0, 0, 4, 4, 4, 4, 0, 0]):
        control.observe(Observation(0.0, PRESSED, busy=control.size, draining=draining), i * 5.0)
        sizes.append(control.size)
    # the first cut lets four go; only once they are gone does pressure cut again
    assert sizes == [8, 4, 4, 4, 4, 4, 2, 2]


def test_one_pressed_reading_alone_does_not_shrink_the_pool() -> None:
    script = [(0.0, PRESSED), (0.0, CALM)] * 4
    assert run(controller(size=4, idle_after=0), script) == [4] * 8


def test_shrinks_by_one_at_least_even_where_halving_rounds_to_the_same() -> None:
    control = controller(size=3, floor=1, shrink_factor=0.9)
    assert run(control, [(0.0, PRESSED)] * 2)[-1] == 2


def test_after_a_shrink_it_waits_out_the_cool_down_before_growing_again() -> None:
    control = controller(size=4, cooldown_s=30.0)
    script = [(600.0, PRESSED)] * 2 + [(600.0, CALM)] * 10
    sizes = run(control, script, every=5.0)
    assert sizes[:2] == [4, 2]  # cut at t=5
    # calm again from t=10, but no growth before t=35 (cool-down), then one a run of two
    assert sizes[2:8] == [2] * 6
    assert sizes[8:] == [3, 3, 4, 4]


def test_pressure_that_comes_and_goes_never_flaps_the_pool_upward() -> None:
    """Pressure every third reading: the pool halves on a run of two, and the cool-down after
    every cut keeps it from climbing back between bouts."""
    script = [(600.0, PRESSED), (600.0, PRESSED), (600.0, CALM)] * 6
    sizes = run(controller(size=8, floor=1, cooldown_s=30.0), script)
    assert sizes == sorted(sizes, reverse=True)  # only ever down
    assert sizes[-1] == 1


def test_an_idle_lane_steps_down_by_one_after_a_while_but_a_busy_one_does_not() -> None:
    idle = controller(size=4, floor=1, idle_after=3)
    sizes = []
    for i in range(7):
        idle.observe(Observation(0.0, CALM, busy=0), now=i * 5.0)
        sizes.append(idle.size)
    assert sizes == [4, 4, 3, 3, 3, 2, 2]
    busy = controller(size=4, floor=1, idle_after=3)
    for i in range(7):  # the queue is empty because every worker is running a job
        assert busy.observe(Observation(0.0, CALM, busy=4), now=i * 5.0) is None
    unknown = controller(size=4, floor=1, idle_after=3)
    for i in range(7):  # the store could not be read: not taken for idle
        assert unknown.observe(Observation(0.0, CALM, busy=None), now=i * 5.0) is None


def test_each_decision_names_its_lane_sizes_and_reason() -> None:
    control = controller(size=2)
    made = [
        control.observe(Observation(age, memory, busy=0), now=t)
        for t, (age, memory) in enumerate([(120.0, CALM)] * 2 + [(0.0, PRESSED)] * 2)
    ]
    grew, shrank = [d for d in made if d is not None]
    assert (grew.lane, grew.before, grew.after, grew.reason, grew.at) == (
        "bulk",
        2,
        3,
        GROW_QUEUE_AGE,
        1,
    )
    assert (shrank.before, shrank.after, shrank.reason) == (3, 1, SHRINK_MEMORY_PRESSURE)


def test_a_burst_then_pressure_then_calm_is_aimd() -> None:
    """Up by one while the burst waits, halved when memory presses, back up once it clears."""
    script = [(300.0, CALM)] * 6 + [(300.0, PRESSED)] * 2 + [(300.0, CALM)] * 12
    control = controller(size=1, floor=1, ceiling=6, cooldown_s=20.0)
    sizes, reasons = [], []
    for i, (age, memory) in enumerate(script):
        made = control.observe(Observation(age, memory, busy=control.size), now=i * 5.0)
        sizes.append(control.size)
        reasons += [made.reason] if made else []
    assert sizes == [1, 2, 2, 3, 3, 4, 4, 2, 2, 2, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6]
    assert reasons == [GROW_QUEUE_AGE] * 3 + [SHRINK_MEMORY_PRESSURE] + [GROW_QUEUE_AGE] * 4
    assert SHRINK_IDLE not in reasons  # idle never applies while jobs wait


def test_a_pool_needs_a_floor_of_one_at_least() -> None:
    with pytest.raises(ValueError, match="floor"):
        controller(size=1, floor=0)
    assert controller(size=20, floor=1, ceiling=6).size == 6  # started clamped


def test_a_lane_controller_is_made_from_the_settings() -> None:
    pools = PoolSettings(adaptive=True, bulk_min=2, bulk_max=0, interactive_max=3)
    bulk = lane_controller("bulk", 1, pools, room_bytes=GIB, cpus=8)
    assert (bulk.floor, bulk.ceiling, bulk.size) == (2, 8, 2)  # ceiling 0: the CPU count
    assert lane_controller("bulk", 12, pools, room_bytes=GIB, cpus=8).ceiling == 12
    interactive = lane_controller("interactive", 5, pools, room_bytes=GIB, cpus=8)
    assert (interactive.floor, interactive.ceiling, interactive.size) == (1, 3, 3)
    assert interactive.marks.room_bytes == GIB and interactive.marks.available_low == 0.10


# --- reading memory --------------------------------------------------------------------------

PSI = """some avg10=12.50 avg60=3.10 avg300=0.70 total=123456
full avg10=1.25 avg60=0.30 avg300=0.05 total=2345
"""
MEMINFO = """MemTotal:       16318412 kB
MemFree:         1033356 kB
MemAvailable:    8158952 kB
Buffers:          123456 kB
"""


def test_psi_and_meminfo_are_parsed() -> None:
    assert parse_psi(PSI) == (12.5, 1.25)
    assert parse_psi("some avg10=oops\n") == (None, None)
    assert parse_meminfo(MEMINFO) == (8158952 * 1024, 16318412 * 1024)


def test_a_cgroup_limit_caps_what_is_available(tmp_path: Path) -> None:
    (tmp_path / "memory.pressure").write_text(PSI)
    (tmp_path / "meminfo").write_text(MEMINFO)
    (tmp_path / "memory.max").write_text(f"{2 * GIB}\n")
    (tmp_path / "memory.current").write_text(f"{GIB + GIB // 2}\n")
    reading = ProcPressure(
        tmp_path / "memory.pressure", meminfo=tmp_path / "meminfo", cgroup=tmp_path
    ).read()
    assert reading == MemoryReading(12.5, 1.25, GIB // 2, 2 * GIB)
    # no limit ("max"), no PSI file: the host's meminfo alone
    (tmp_path / "memory.max").write_text("max\n")
    bare = ProcPressure(tmp_path / "absent", meminfo=tmp_path / "meminfo", cgroup=tmp_path).read()
    assert bare == MemoryReading(None, None, 8158952 * 1024, 16318412 * 1024)


def test_page_cache_the_kernel_can_reclaim_is_not_memory_in_use(tmp_path: Path) -> None:
    """The kubelet's working set: charged less inactive_file. 3.9 GiB charged of 4 GiB, 2.8
    GiB of it cold page cache (the sources and renders), is room, not a pool to halve."""
    (tmp_path / "meminfo").write_text(MEMINFO)
    (tmp_path / "memory.max").write_text(f"{4 * GIB}\n")
    (tmp_path / "memory.current").write_text(f"{39 * GIB // 10}\n")
    (tmp_path / "memory.stat").write_text(f"anon {GIB}\ninactive_file {28 * GIB // 10}\n")
    reading = ProcPressure(None, meminfo=tmp_path / "meminfo", cgroup=tmp_path).read()
    assert reading.available_bytes == 4 * GIB - (39 * GIB // 10 - 28 * GIB // 10)
    assert judge_memory(reading, MARKS)[0] is Memory.ROOMY


def test_a_cgroup_v1_memory_limit_caps_what_is_available(tmp_path: Path) -> None:
    """cgroup v1 (no ``0::`` line for memory): the memory controller's own folder and files."""
    group = tmp_path / "cg" / "memory" / "docker" / "abc"
    group.mkdir(parents=True)
    (group / "memory.limit_in_bytes").write_text(f"{2 * GIB}\n")
    (group / "memory.usage_in_bytes").write_text(f"{GIB + GIB // 2}\n")
    (group / "memory.stat").write_text(f"cache 9\ntotal_inactive_file {GIB // 2}\n")
    (tmp_path / "self").write_text(
        "12:memory:/docker/abc\n11:cpu,cpuacct:/docker/abc\n0::/system.slice/x\n"
    )
    (tmp_path / "meminfo").write_text(MEMINFO)
    source = pressure_source(self_cgroup=tmp_path / "self", root=tmp_path / "cg")
    assert source.cgroup == group
    reading = ProcPressure(None, meminfo=tmp_path / "meminfo", cgroup=source.cgroup).read()
    assert (reading.available_bytes, reading.total_bytes) == (GIB, 2 * GIB)
    # v1's "no limit" is a page-rounded 2**63: the host's own figures stand
    (group / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    bare = ProcPressure(None, meminfo=tmp_path / "meminfo", cgroup=group).read()
    assert bare == MemoryReading(None, None, 8158952 * 1024, 16318412 * 1024)


def test_a_v2_cgroup_not_mounted_here_is_the_mounts_root(tmp_path: Path) -> None:
    (tmp_path / "self").write_text("0::/kubepods/pod1/abc\n")
    (tmp_path / "cg").mkdir()
    assert pressure_source(self_cgroup=tmp_path / "self", root=tmp_path / "cg").cgroup == (
        tmp_path / "cg"
    )


def test_a_psi_file_that_is_not_text_reads_as_no_figure(tmp_path: Path) -> None:
    (tmp_path / "psi").write_bytes(b"some avg10=\xff\n")
    assert ProcPressure(tmp_path / "psi", meminfo=tmp_path / "absent").read() == MemoryReading()


def test_a_named_psi_file_is_the_one_read(tmp_path: Path) -> None:
    (tmp_path / "psi").write_text(PSI)
    assert pressure_source(str(tmp_path / "psi")).psi == tmp_path / "psi"


# --- settings --------------------------------------------------------------------------------


def test_the_pool_settings_are_read_and_checked() -> None:
    assert Settings.from_env({}).pools == PoolSettings()
    assert PoolSettings().adaptive is False
    read = Settings.from_env(
        {
            "PRESSROOM_POOL_ADAPTIVE": "on",
            "PRESSROOM_POOL_BULK_MIN": "2",
            "PRESSROOM_POOL_BULK_MAX": "6",
            "PRESSROOM_POOL_QUEUE_AGE_TARGET_SECONDS": "12",
            "PRESSROOM_POOL_PSI_SOME_HIGH": "20",
        }
    ).pools
    assert (read.adaptive, read.bulk_min, read.bulk_max, read.queue_age_target_s) == (
        True,
        2,
        6,
        12.0,
    )
    assert read.psi_some_high == 20.0
    with pytest.raises(BadConfig, match="PRESSROOM_POOL_BULK_MAX"):
        Settings.from_env({"PRESSROOM_POOL_BULK_MIN": "4", "PRESSROOM_POOL_BULK_MAX": "2"})
    with pytest.raises(BadConfig, match="PRESSROOM_POOL_INTERACTIVE_MIN"):
        Settings.from_env({"PRESSROOM_POOL_INTERACTIVE_MIN": "0"})
    with pytest.raises(BadConfig, match="PRESSROOM_POOL_MEMORY_LOW_PERCENT"):
        Settings.from_env({"PRESSROOM_POOL_MEMORY_LOW_PERCENT": "60"})


def test_every_pool_variable_is_on_the_configuration_page() -> None:
    page = markdown()
    names = [var.name for var in VARIABLES if var.field.startswith("pools.")]
    assert len(names) == 12
    assert [name for name in names if f"`{name}`" not in page] == []
