"""The files a backup writes and reads back: new files made exclusively (0600, never over one,
never through a link), copied with their SHA-256 summed on the way, made durable, and moved
into place without ever replacing a file; the progress of a copy in bytes.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from pressroom.errors import Conflict

_CHUNK = 1 << 20
BytesProgress = Callable[[int, int], None]  # (bytes done, bytes in all; 0: not known yet)


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None, timeout=30)


def _durable(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _publish(staged: Path, final: Path) -> None:
    """Link the finished file into place without ever replacing one (a hard link fails on an
    existing name, where a rename would overwrite it); the folder is made durable."""
    try:
        os.link(staged, final)
    except FileExistsError:
        raise Conflict(f"{final} appeared while it was written: it was left as it is") from None
    except OSError:  # a file system without hard links: rename, checked just before
        if os.path.lexists(final):
            raise Conflict(f"{final} appeared while it was written: it was left as it is") from None
        staged.rename(final)
    fd = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _durable_tree(_root: Path) -> None:
    """Every file and folder staged under ``_root`` on disk before it is renamed into place:
    one ``sync`` (a thousand blobs fsynced one by one took 11 s of a 13 s backup)."""
    os.sync()


def _folders(path: Path) -> None:
    """``path`` and every folder missing above it, each 0700 (``mkdir(parents=True)`` gives
    the parents the umask's mode)."""
    if not path.is_dir():
        _folders(path.parent)
        path.mkdir(mode=0o700, exist_ok=True)


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def _copy_hashing(
    src: BinaryIO, dest: Path, advance: Callable[[int], None], limit: int | None = None
) -> tuple[int, str]:
    """Copy ``src`` into a new 0600 file ``dest`` (never over one); returns its size and
    SHA-256. Not fsynced one by one: the whole staged folder is made durable at once
    (``_durable_tree``) before it is moved into place. ``limit``: read at most this many
    bytes (one more shows a longer file)."""
    digest = hashlib.sha256()
    size = 0
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as out:
        while True:
            want = _CHUNK if limit is None else min(_CHUNK, limit + 1 - size)
            if want <= 0:
                break
            chunk = src.read(want)
            if not chunk:
                break
            out.write(chunk)
            digest.update(chunk)
            size += len(chunk)
            advance(len(chunk))
    return size, digest.hexdigest()


def _tick(progress: BytesProgress | None, total: list[int]) -> Callable[[int], None]:
    done = [0]

    def advance(n: int) -> None:
        done[0] += n
        if progress is not None:
            progress(done[0], total[0])

    return advance
