"""Private per-job scratch space: 0700 folders, removed in ``finally``, stale ones swept."""

from __future__ import annotations

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
    folder = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def sweep_stale(base: Path, max_age_s: float = 3600.0) -> int:
    """Remove scratch folders older than ``max_age_s`` left by killed workers; returns the count."""
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
            if now - entry.stat().st_mtime > max_age_s:
                shutil.rmtree(entry, ignore_errors=True)
                removed += 1
        except OSError:
            continue
    return removed
