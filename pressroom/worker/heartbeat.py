"""A worker pool's heartbeat file: its supervisor rewrites it every few seconds and
``pressroom worker --check`` reads it, so a container's health check needs no network and no
database."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

# how often a supervisor rewrites its file, and when a reader stops believing it: several missed
# beats, so one slow disk write is not a failed health check
BEAT_EVERY_S = 5.0
STALE_AFTER_S = 30.0
SUFFIX = ".heartbeat"


@dataclass(frozen=True, slots=True)
class Beat:
    """What one supervisor said at ``at`` (epoch seconds): per lane, its live worker processes
    and how many it keeps."""

    host: str
    pid: int
    at: float
    lanes: Mapping[str, tuple[int, int]]

    def to_json(self) -> str:
        lanes = {lane: list(counts) for lane, counts in sorted(self.lanes.items())}
        return json.dumps({"host": self.host, "pid": self.pid, "at": self.at, "lanes": lanes})

    @classmethod
    def from_json(cls, text: str) -> Beat | None:
        """The beat in ``text``, or None when it is not one (half written, edited, foreign)."""
        try:
            doc = json.loads(text)
            lanes = {str(k): (int(v[0]), int(v[1])) for k, v in dict(doc["lanes"]).items()}
            return cls(str(doc["host"]), int(doc["pid"]), float(doc["at"]), lanes)
        except (ValueError, TypeError, KeyError, IndexError):
            return None


def folder(data_dir: Path) -> Path:
    """Where the supervisors of one data dir keep their files."""
    return data_dir / "heartbeats"


def _safe(host: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "_", host)[:64] or "host"


def path_for(where: Path, host: str, pid: int) -> Path:
    """One file per supervisor: the host in its name, as containers sharing a volume may all
    be pid 1."""
    return where / f"{_safe(host)}-{pid}{SUFFIX}"


def write(where: Path, beat: Beat) -> None:
    """Replace the supervisor's file at once (a reader never sees half of it)."""
    where.mkdir(parents=True, exist_ok=True)
    target = path_for(where, beat.host, beat.pid)
    partial = target.with_name(f".{target.name}.tmp")
    partial.write_text(beat.to_json())
    partial.replace(target)


def remove(where: Path, host: str, pid: int) -> None:
    with contextlib.suppress(FileNotFoundError):
        path_for(where, host, pid).unlink()


def read(where: Path, host: str) -> list[Beat]:
    """The beats of ``host``'s supervisors (other hosts' files on a shared volume are not
    ours to judge)."""
    try:
        paths = [p for p in where.iterdir() if p.name.endswith(SUFFIX)]
    except OSError:
        return []
    beats = []
    for path in paths:
        with contextlib.suppress(OSError):
            beat = Beat.from_json(path.read_text())
            if beat is not None and beat.host == host:
                beats.append(beat)
    return beats


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


@dataclass(frozen=True, slots=True)
class Verdict:
    healthy: bool
    line: str


def judge(
    beats: Iterable[Beat],
    *,
    now: float,
    lane: str | None = None,
    alive: Callable[[int], bool] = process_alive,
    stale_after_s: float = STALE_AFTER_S,
) -> Verdict:
    """Healthy when one supervisor (of ``lane``, or of any lane) runs, beat within
    ``stale_after_s`` and has a live worker process in each of its lanes (``lane`` only, when
    named). Otherwise the one line that says why not, for the most hopeful candidate."""
    what = f"{lane} worker pool" if lane else "worker pool"
    candidates = [b for b in beats if lane is None or lane in b.lanes]
    if not candidates:
        return Verdict(False, f"no {what} has a heartbeat on this host")
    reasons = []
    for beat in sorted(candidates, key=lambda b: b.at, reverse=True):
        age = now - beat.at
        lanes = {lane: beat.lanes[lane]} if lane else dict(beat.lanes)
        empty = sorted(name for name, (live, _kept) in lanes.items() if live < 1)
        if not alive(beat.pid):
            reasons.append(f"the {what} (pid {beat.pid}) is gone")
        elif age > stale_after_s:
            reasons.append(
                f"the {what}'s heartbeat is {age:.0f} s old (stale after {stale_after_s:.0f} s)"
            )
        elif empty:
            reasons.append(f"the {what} has no live worker in: {', '.join(empty)}")
        else:
            running = ", ".join(
                f"{live}/{kept} {name}" for name, (live, kept) in sorted(lanes.items())
            )
            return Verdict(
                True, f"ok: {running} worker(s) alive, heartbeat {max(age, 0):.0f} s old"
            )
    return Verdict(False, reasons[0])
