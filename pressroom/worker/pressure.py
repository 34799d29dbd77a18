"""Where the adaptive pools read memory pressure: Linux PSI (the pool's own cgroup v2
``memory.pressure`` when it has one, as in a container, else the host's
``/proc/pressure/memory``) and available memory (``MemAvailable``, capped by the cgroup's
``memory.max`` less ``memory.current`` where the cgroup has a limit: in a container the host's
free memory is not ours to use).

A source only reads files; the parsers are pure, and ``FixedPressure`` says whatever a test or
the benchmark tells it to, so the controller's signals can be scripted."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pressroom.worker.adaptive import MemoryReading

HOST_PSI = Path("/proc/pressure/memory")
MEMINFO = Path("/proc/meminfo")
CGROUP_ROOT = Path("/sys/fs/cgroup")


class PressureSource(Protocol):
    def read(self) -> MemoryReading:
        """One reading now; a figure the source cannot read is None (never an error)."""


def parse_psi(text: str) -> tuple[float | None, float | None]:
    """(some avg10, full avg10) from a PSI file; None for a line that is missing or odd."""
    found: dict[str, float] = {}
    for line in text.splitlines():
        kind, _, rest = line.partition(" ")
        for pair in rest.split():
            key, _, value = pair.partition("=")
            if key == "avg10":
                with contextlib.suppress(ValueError):
                    found[kind] = float(value)
    return found.get("some"), found.get("full")


def parse_meminfo(text: str) -> tuple[int | None, int | None]:
    """(MemAvailable, MemTotal) in bytes from /proc/meminfo."""
    found: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if key in ("MemAvailable", "MemTotal") and parts and parts[0].isdigit():
            found[key] = int(parts[0]) * 1024  # always kB
    return found.get("MemAvailable"), found.get("MemTotal")


def own_cgroup(self_cgroup: Path = Path("/proc/self/cgroup"), root: Path = CGROUP_ROOT) -> Path:
    """This process's cgroup v2 folder (``0::/path``), or the root when unknown."""
    try:
        for line in self_cgroup.read_text().splitlines():
            if line.startswith("0::"):
                return root / line[3:].strip().lstrip("/")
    except OSError:
        pass
    return root


def _text(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return path.read_text()
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class ProcPressure:
    """PSI from ``psi`` (None: none), available memory from ``meminfo`` capped by the cgroup
    folder's limit (``cgroup``; None: no cap)."""

    psi: Path | None
    meminfo: Path = MEMINFO
    cgroup: Path | None = None

    def read(self) -> MemoryReading:
        some = full = None
        psi = _text(self.psi)
        if psi is not None:
            some, full = parse_psi(psi)
        available, total = (None, None)
        info = _text(self.meminfo)
        if info is not None:
            available, total = parse_meminfo(info)
        limit = _text(self.cgroup / "memory.max") if self.cgroup else None
        used = _text(self.cgroup / "memory.current") if self.cgroup else None
        if limit and used and limit.strip().isdigit() and used.strip().isdigit():
            cap, current = int(limit), int(used)
            total = cap if total is None else min(total, cap)
            left = max(0, cap - current)
            available = left if available is None else min(available, left)
        return MemoryReading(some, full, available, total)


def pressure_source(psi_file: str = "") -> ProcPressure:
    """``psi_file`` when named; else the cgroup's own ``memory.pressure`` when readable (a
    container's), else the host's ``/proc/pressure/memory`` when readable, else no PSI (the
    pool then goes by available memory alone)."""
    group = own_cgroup()
    if psi_file:
        return ProcPressure(Path(psi_file), cgroup=group)
    for candidate in (group / "memory.pressure", HOST_PSI):
        if _text(candidate) is not None:
            return ProcPressure(candidate, cgroup=group)
    return ProcPressure(None, cgroup=group)


@dataclass
class FixedPressure:
    """A source that reads what it was last told (tests, the benchmark); thread-safe, as the
    supervisor reads it from its own thread."""

    reading: MemoryReading = field(default_factory=MemoryReading)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def set(self, reading: MemoryReading) -> None:
        with self._lock:
            self.reading = reading

    def read(self) -> MemoryReading:
        with self._lock:
            return self.reading
