"""Each lane's pool size, decided from what the pool observes (AIMD with hysteresis): one more
worker while the lane's oldest waiting job is older than a target and memory has room, half as
many on memory pressure (before the kernel's OOM killer picks a worker, and a running job with
it), one fewer when the lane has sat idle a while.

Pure: no I/O and no clock of its own. The supervisor reads the signals (``pressure.py``, the
store's oldest waiting job), hands them in with the time, and acts on the decision; tests
script them. Hysteresis three ways, so one reading near a mark does not flap the pool: a band
between the marks where memory neither shrinks nor grows the pool, a run of observations
before acting, and a cool-down after a shrink before the pool may grow again.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from pressroom.settings import PoolSettings

# the reasons a pool changes size: stable codes, for logs, the metric and the dashboard
GROW_QUEUE_AGE = "GROW_QUEUE_AGE"
SHRINK_MEMORY_PRESSURE = "SHRINK_MEMORY_PRESSURE"  # PSI: tasks stalled waiting for memory
SHRINK_MEMORY_LOW = "SHRINK_MEMORY_LOW"  # available memory under its low share
SHRINK_IDLE = "SHRINK_IDLE"  # nothing waiting and a worker idle, for a while
REASONS = (GROW_QUEUE_AGE, SHRINK_MEMORY_PRESSURE, SHRINK_MEMORY_LOW, SHRINK_IDLE)


class Memory(enum.Enum):
    """What one memory reading allows."""

    PRESSED = "pressed"  # shrink (after a run of such readings)
    TIGHT = "tight"  # hold: neither grow nor shrink
    ROOMY = "roomy"  # the pool may grow


@dataclass(frozen=True, slots=True)
class MemoryReading:
    """One look at memory, the host's or the cgroup's; None where the source has no figure
    (no PSI on this kernel, no meminfo off Linux)."""

    some_avg10: float | None = None  # PSI: % of the last 10 s some task stalled on memory
    full_avg10: float | None = None  # PSI: % of it every non-idle task stalled at once
    available_bytes: int | None = None
    total_bytes: int | None = None


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Where memory turns PRESSED. ROOMY needs every figure well clear of its mark: PSI under
    a quarter of it, available memory over twice its low share and enough for one more worker
    at its memory limit. Between the two lies the band that holds the pool still."""

    psi_some_high: float = 10.0
    psi_full_high: float = 2.0
    available_low: float = 0.10  # a share of total memory
    room_bytes: int = 0  # growth needs this much available: one worker at its limit


def judge_memory(reading: MemoryReading, marks: Thresholds) -> tuple[Memory, str | None]:
    """PRESSED with the reason code of the signal that said so, ROOMY, or TIGHT. A reading
    with no figure at all is TIGHT: without evidence of room the pool does not grow."""
    some, full = reading.some_avg10, reading.full_avg10
    if (some is not None and some >= marks.psi_some_high) or (
        full is not None and full >= marks.psi_full_high
    ):
        return Memory.PRESSED, SHRINK_MEMORY_PRESSURE
    share = None
    if reading.available_bytes is not None and reading.total_bytes:
        share = reading.available_bytes / reading.total_bytes
        if share < marks.available_low:
            return Memory.PRESSED, SHRINK_MEMORY_LOW
    if some is None and share is None:
        return Memory.TIGHT, None
    calm_psi = (some is None or some < marks.psi_some_high / 4) and (
        full is None or full < marks.psi_full_high / 4
    )
    room = share is None or (
        share >= 2 * marks.available_low and (reading.available_bytes or 0) >= marks.room_bytes
    )
    return (Memory.ROOMY, None) if calm_psi and room else (Memory.TIGHT, None)


@dataclass(frozen=True, slots=True)
class Tuning:
    """How eagerly the pool moves. Growth is additive and needs a run of observations;
    a shrink is multiplicative and needs a shorter one (memory is the emergency)."""

    queue_age_target_s: float = 30.0
    grow_step: int = 1
    shrink_factor: float = 0.5
    grow_after: int = 2  # observations in a row that want and allow growth
    shrink_after: int = 2  # PRESSED readings in a row
    idle_after: int = 12  # idle observations in a row before one step down (0: never)
    cooldown_s: float = 30.0  # no growth this long after a shrink


@dataclass(frozen=True, slots=True)
class Observation:
    """What the supervisor saw of one lane at one decision."""

    queue_age_s: float  # the lane's oldest waiting job's age; 0 when none waits
    memory: MemoryReading
    busy: int | None = None  # workers running a job now (None: unknown, never idle)
    # workers let go by an earlier shrink still finishing their job: their memory is not
    # freed yet, so the pressure they cause is no reason to halve again
    draining: int = 0


@dataclass(frozen=True, slots=True)
class Decision:
    """A change of one lane's pool size: no job, tenant or document in it, only figures."""

    lane: str
    before: int
    after: int
    reason: str
    at: float


@dataclass
class LaneController:
    """One lane's size between ``floor`` and ``ceiling``; ``observe`` once per decision
    interval. The size starts where the supervisor started the pool (clamped)."""

    lane: str
    floor: int
    ceiling: int
    size: int
    tuning: Tuning
    marks: Thresholds
    _grow_run: int = 0
    _pressed_run: int = 0
    _idle_run: int = 0
    _shrunk_at: float = -math.inf

    def __post_init__(self) -> None:
        if not 1 <= self.floor <= self.ceiling:
            raise ValueError("a pool needs 1 <= floor <= ceiling")
        self.size = min(self.ceiling, max(self.floor, self.size))

    def observe(self, seen: Observation, now: float) -> Decision | None:
        """The change to make now, if any (its ``after`` is already the controller's size)."""
        memory, why = judge_memory(seen.memory, self.marks)
        if memory is Memory.PRESSED:
            self._grow_run = self._idle_run = 0
            self._pressed_run += 1
            if (
                self._pressed_run < self.tuning.shrink_after
                or self.size <= self.floor
                or seen.draining
            ):
                return None
            smaller = min(self.size - 1, math.floor(self.size * self.tuning.shrink_factor))
            self._shrunk_at = now
            return self._change(max(self.floor, smaller), why or SHRINK_MEMORY_PRESSURE, now)
        self._pressed_run = 0
        if seen.queue_age_s > self.tuning.queue_age_target_s:
            self._idle_run = 0
            cooling = now - self._shrunk_at < self.tuning.cooldown_s
            if memory is not Memory.ROOMY or cooling or self.size >= self.ceiling:
                self._grow_run = 0
                return None
            self._grow_run += 1
            if self._grow_run < self.tuning.grow_after:
                return None
            return self._change(
                min(self.ceiling, self.size + self.tuning.grow_step), GROW_QUEUE_AGE, now
            )
        self._grow_run = 0
        idle = seen.queue_age_s <= 0 and seen.busy is not None and seen.busy < self.size
        if not idle or not self.tuning.idle_after:
            self._idle_run = 0
            return None
        self._idle_run += 1
        if self._idle_run < self.tuning.idle_after or self.size <= self.floor:
            return None
        return self._change(self.size - 1, SHRINK_IDLE, now)

    def _change(self, after: int, reason: str, now: float) -> Decision:
        self._grow_run = self._pressed_run = self._idle_run = 0
        decision = Decision(self.lane, self.size, after, reason, now)
        self.size = after
        return decision


def lane_controller(
    lane: str, start: int, pools: PoolSettings, *, room_bytes: int, cpus: int
) -> LaneController:
    """A lane's controller as the settings say, starting at ``start`` workers (clamped): a
    ceiling of 0 is the count it starts with, or the CPU count if larger (OCR is CPU-bound:
    more processes than cores add memory, not pages)."""
    floor, ceiling = (
        (pools.bulk_min, pools.bulk_max)
        if lane == "bulk"
        else (pools.interactive_min, pools.interactive_max)
    )
    return LaneController(
        lane,
        floor,
        ceiling or max(start, cpus, floor),
        start,
        Tuning(queue_age_target_s=pools.queue_age_target_s, cooldown_s=pools.cooldown_s),
        Thresholds(
            psi_some_high=pools.psi_some_high,
            psi_full_high=pools.psi_full_high,
            available_low=pools.memory_low_percent / 100,
            room_bytes=room_bytes,
        ),
    )
