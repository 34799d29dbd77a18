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
