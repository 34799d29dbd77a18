"""Blobs as files under one folder: atomic writes, put-if-absent by hard link."""

from __future__ import annotations

import errno
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from pressroom.errors import BlobNotFound, StorageFull, StorageUnavailable
from pressroom.fsutil import staged_copy
from pressroom.storage import check_key

STAGING = ".incoming-"


def _write_failed(exc: OSError) -> Exception:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageFull("local storage is full")
    return StorageUnavailable(f"local storage write failed ({exc.errno})")


class LocalBlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    def _staged(self, key: str, path: Path) -> Path:
        """A private copy of ``path`` next to where ``key`` lives, ready to be linked in."""
        dest = self._path(key)
        dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        return staged_copy(path, dest.parent, STAGING)

    def put_file(self, key: str, path: Path) -> None:
        try:
            staged = self._staged(key, path)
            staged.replace(self._path(key))
        except OSError as exc:
            raise _write_failed(exc) from None

    def put_if_absent(self, key: str, path: Path) -> bool:
        try:
            staged = self._staged(key, path)
            try:
                os.link(staged, self._path(key))  # fails if the key exists: atomic
                return True
            except FileExistsError:
                return False
            finally:
                staged.unlink(missing_ok=True)
        except OSError as exc:
            raise _write_failed(exc) from None

    def open_versioned(self, key: str) -> tuple[BinaryIO, str]:
        """``open`` and the version read: the file's device and inode (a rename replaces it)."""
        fh = self.open(key)
        info = os.fstat(fh.fileno())
        return fh, f"{info.st_dev}:{info.st_ino}"

    def replace_if_version(self, key: str, path: Path, version: str) -> bool:
        """Put ``path`` at ``key`` only if ``key`` still holds the file ``version`` names;
        False when it was deleted or replaced meanwhile (nothing written). Not atomic: the
        check is a ``stat`` just before the rename, so a delete landing in the microseconds
        between them is still undone; one during the copy is not."""

        def same() -> bool:
            try:
                info = self._path(key).stat()
            except FileNotFoundError:
                return False
            return f"{info.st_dev}:{info.st_ino}" == version

        try:
            if not same():  # gone already: no staging copy made in its folder
                return False
            staged = self._staged(key, path)
            try:
                if not same():
                    return False
                staged.replace(self._path(key))
                return True
            finally:
                staged.unlink(missing_ok=True)
        except OSError as exc:
            raise _write_failed(exc) from None

    def get_to_path(self, key: str, dest: Path) -> None:
        try:
            with self.open(key) as src, dest.open("wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)
        except OSError as exc:
            raise StorageUnavailable(f"local storage read failed ({exc.errno})") from None

    def open(self, key: str) -> BinaryIO:
        try:
            return self._path(key).open("rb")
        except FileNotFoundError:
            raise BlobNotFound("no such blob") from None

    def size(self, key: str) -> int:
        try:
            return self._path(key).stat().st_size
        except FileNotFoundError:
            raise BlobNotFound("no such blob") from None

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def reachable(self) -> None:
        # a network mount that went away, or a folder made read-only under the service
        if not self.root.is_dir() or not os.access(self.root, os.W_OK | os.X_OK):
            raise StorageUnavailable("local storage folder is missing or not writable")

    def delete(self, key: str) -> None:
        path = self._path(key)
        path.unlink(missing_ok=True)
        # tidy the now-empty job folder; other keys keep theirs
        for parent in path.parents:
            if parent == self.root:
                break
            try:
                parent.rmdir()
            except OSError:
                break

    def list(self, prefix: str) -> Iterator[tuple[str, float]]:
        base = self.root / prefix if prefix else self.root
        if not base.exists():
            return
        for path in base.rglob("*"):
            if path.is_file() and not path.name.startswith(STAGING):
                yield path.relative_to(self.root).as_posix(), path.stat().st_mtime

    def sweep_staging(self, max_age_s: float) -> int:
        """Remove half-written copies (``.incoming-*``) a crash left behind; returns the count.
        A live write finishes in seconds, so anything older than ``max_age_s`` is debris."""
        removed = 0
        now = time.time()
        for path in self.root.rglob(STAGING + "*"):
            try:
                if path.is_file() and now - path.stat().st_mtime > max_age_s:
                    path.unlink()
                    removed += 1
            except OSError:
                continue
        return removed

    def download_url(
        self, key: str, ttl_s: float, filename: str, media_type: str = "application/pdf"
    ) -> str | None:
        return None  # a path on this host: the API streams it
