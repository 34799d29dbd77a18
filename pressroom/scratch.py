"""Private per-job scratch space: 0700 folders, removed in ``finally``, stale ones swept, and
what they hold right now (for /metrics and the dashboard)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PREFIX = "pressroom-job-"


@contextmanager
def job_scratch(base: Path | None = None) -> Iterator[Path]:
    if base is not None:
        base.mkdir(parents=True, exist_ok=True)
    # mkdtemp makes the folder 0700; entry points set umask 077 so files inside are 0600.
    # the owner's pid in the name: a sweep can tell a dead process's leftovers at once
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _owner(name: str) -> str:
    """``gone``, ``alive`` or ``unknown`` for the process a folder's name says made it."""
    pid_text = name[len(PREFIX) :].split("-", 1)[0]
    if not pid_text.isdigit():
        return "unknown"
    if int(pid_text) == os.getpid():
        return "alive"
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return "gone"
    except PermissionError:  # alive, someone else's
        return "alive"
    return "alive"


def sweep_stale(base: Path, max_age_s: float = 3600.0) -> int:
    """Remove scratch folders left by killed processes (the pid in their name is gone; folders
    without one, after ``max_age_s``); returns the count."""
    removed = 0
    now = time.time()
    try:
        entries = list(base.iterdir())
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.startswith(PREFIX) or not entry.is_dir() or entry.is_symlink():
            continue
        try:
            owner = _owner(entry.name)
            # a live owner's folder is never taken from under it, however long its job runs
            # (the scratch age metric and alert watch for ones that linger); age decides only
            # for folders that name no process
            if owner == "gone" or (owner == "unknown" and now - entry.stat().st_mtime > max_age_s):
                shutil.rmtree(entry, ignore_errors=True)
                removed += 1
        except OSError:
            continue
    return removed


def scratch_usage(base: Path) -> tuple[int, int]:
    """Bytes and folder count of live job scratch folders."""
    total, folders, _oldest = scratch_state(base, now=0.0)
    return total, folders


def scratch_state(base: Path, *, now: float) -> tuple[int, int, float]:
    """Bytes, folder count, and the age of the oldest live job scratch folder."""
    total = folders = 0
    oldest = 0.0
    try:
        entries = list(base.iterdir())
    except OSError:
        return 0, 0, 0.0
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        folders += 1
        with contextlib.suppress(OSError):
            oldest = max(oldest, now - entry.stat().st_mtime) if now else 0.0
        for path in entry.rglob("*"):
            try:
                if path.is_file():
                    total += path.stat().st_size
            except OSError:
                continue
    return total, folders, oldest


def scratch_disk(base: Path) -> tuple[int, int]:
    """(free, total) bytes of the file system holding scratch."""
    try:
        usage = shutil.disk_usage(base)
    except OSError:
        return 0, 0
    return usage.free, usage.total
