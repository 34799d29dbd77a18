"""Where the adaptive pools read memory pressure: Linux PSI (the pool's own cgroup v2
``memory.pressure`` when it has one, as in a container, else the host's
``/proc/pressure/memory``) and available memory (``MemAvailable``, capped by the cgroup's
limit less its working set where the cgroup has a limit: in a container the host's free memory
is not ours to use). The working set is what the kubelet evicts on: the memory charged less the
inactive page cache, which the kernel reclaims before it runs short (the sources and renders
the workers read and write would otherwise read as memory in use). cgroup v2 reads
``memory.max``, ``memory.current`` and ``memory.stat``'s ``inactive_file``; v1's memory
controller ``memory.limit_in_bytes``, ``memory.usage_in_bytes`` and ``total_inactive_file``.

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


SELF_CGROUP = Path("/proc/self/cgroup")


def own_cgroup(self_cgroup: Path = SELF_CGROUP, root: Path = CGROUP_ROOT) -> Path:
    """This process's memory cgroup folder: cgroup v1's memory controller (``N:memory:/path``,
    under ``root/memory``) where it has one, else v2's (``0::/path``), else the root. A path
    not mounted here (a container without its own cgroup namespace) falls back to the
    controller's root, which is then the container's own."""
    text = _text(self_cgroup) or ""
    v2 = None
    for line in text.splitlines():
        _number, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if "memory" in controllers.split(","):
            return _mounted(root / "memory", path)
        if not controllers and line.startswith("0::"):
            v2 = path
    return root if v2 is None else _mounted(root, v2)


def _mounted(base: Path, path: str) -> Path:
    folder = base / path.strip().lstrip("/")
    return folder if folder.is_dir() else base


def _stat(text: str | None, key: str) -> int:
    """One figure of a cgroup's ``memory.stat`` (0 when absent or odd)."""
    for line in (text or "").splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return 0


def cgroup_memory(folder: Path) -> tuple[int, int] | None:
    """(limit, working set) in bytes of a cgroup v2 or v1 memory folder; None when it has no
    limit or its files cannot be read."""
    for limit_file, usage_file, inactive in (
        ("memory.max", "memory.current", "inactive_file"),
        ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"),
    ):
        limit, used = _text(folder / limit_file), _text(folder / usage_file)
        if limit is None or used is None:
            continue
        if not (limit.strip().isdigit() and used.strip().isdigit()):
            return None  # v2's "max": no limit
        cache = _stat(_text(folder / "memory.stat"), inactive)
        return int(limit), max(0, int(used) - cache)
    return None


def _text(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return path.read_text()
    except (OSError, ValueError):  # ValueError: not UTF-8 (a wrong file named)
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
        group = cgroup_memory(self.cgroup) if self.cgroup else None
        if group is not None:
            cap, current = group  # v1's "no limit" is a huge figure: the host's total wins
            total = cap if total is None else min(total, cap)
            left = max(0, cap - current)
            available = left if available is None else min(available, left)
        return MemoryReading(some, full, available, total)


def pressure_source(
    psi_file: str = "", *, self_cgroup: Path = SELF_CGROUP, root: Path = CGROUP_ROOT
) -> ProcPressure:
    """``psi_file`` when named; else the cgroup's own ``memory.pressure`` when readable (a
    container's), else the host's ``/proc/pressure/memory`` when readable, else no PSI (the
    pool then goes by available memory alone)."""
    group = own_cgroup(self_cgroup, root)
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
