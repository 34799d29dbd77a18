"""Atomic file placement: a durable private copy beside the destination, then one rename."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def staged_copy(src: Path, folder: Path, prefix: str) -> Path:
    """A fsynced copy of ``src`` in ``folder`` (0600, named ``prefix…``), ready to be moved in."""
    fd, name = tempfile.mkstemp(prefix=prefix, dir=folder)
    try:
        with os.fdopen(fd, "wb") as out, src.open("rb") as fh:
            shutil.copyfileobj(fh, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


def place_copy(src: Path, dest: Path, *, mode: int, prefix: str = ".pressroom-") -> None:
    """A copy of ``src`` moved into place at ``dest`` with ``mode``, atomically: readers see all
    of it or nothing, and a failure leaves no staged file behind."""
    tmp = staged_copy(src, dest.parent, prefix)
    try:
        tmp.chmod(mode)
        tmp.replace(dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
