"""`pressroom backup`: everything a restore needs, in one step — the database copied online
(SQLite as ``db backup`` does, PostgreSQL by pg_dump), the blob store's files as stored (sealed
blobs stay sealed; on S3 listed, and copied with ``--s3``), the keys with ``--with-keys``, and
a manifest of every file's size and SHA-256 — into one new folder, or one tar whose blobs go
straight into it.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import secrets
import shutil
import stat
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

from pressroom.backup.files import (
    _CHUNK,
    BytesProgress,
    _copy_hashing,
    _durable,
    _durable_tree,
    _folders,
    _fsync_dir,
    _inside,
    _publish,
    _tick,
)
from pressroom.backup.manifest import (
    _OLD_MASTER,
    DB_ENTRY,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    PG_ENTRY,
    _blob_name,
    _Entry,
)
from pressroom.backup.postgres import _pg_dump, _postgresql
from pressroom.backup.sqlite import backup, database_path
from pressroom.errors import BadRequest, BlobNotFound, Conflict, NotFound
from pressroom.settings import Settings


@dataclass(frozen=True, slots=True)
class Bundle:
    """What ``backup_all`` wrote or ``restore_all`` put back: the schema revision, how many
    files and bytes (database, blobs and keys), how many blobs, which keys, how long it took."""

    revision: str
    files: int
    size: int
    blobs: int
    keys: tuple[str, ...]
    seconds: float
    listed: int = 0  # S3 objects recorded in the manifest but not copied (no --s3)
    upgraded_from: str | None = None
    kept_aside: Path | None = None  # restore --force: where the data dir it replaced went


def _blob_root(settings: Settings) -> Path | None:
    """The local blob folder the settings name; None for S3."""
    url = settings.storage_url
    if url.startswith("s3://"):
        return None
    return Path(url.removeprefix("file://")) if url else settings.data_dir / "blobs"


def _raw_s3(settings: Settings) -> Any:
    """The bucket as stored (sealed blobs stay sealed: a backup never needs the master key)."""
    from pressroom.storage.s3 import S3BlobStore

    return S3BlobStore.from_url(
        settings.storage_url, timeout_s=settings.storage_timeout_s, storage=settings.storage
    )


def backup_all(
    settings: Settings,
    dest: Path,
    *,
    with_keys: bool = False,
    s3: bool = False,
    progress: BytesProgress | None = None,
) -> Bundle:
    """Everything a restore needs, in one new folder ``dest`` (or one tar file when its name
    ends in ``.tar``): the database copied online (SQLite as ``backup`` does, PostgreSQL by
    ``pg_dump``), then the blob store's files as stored (sealed blobs stay sealed), the
    signing key, the default API key and the master keys with ``with_keys``, and
    ``manifest.json`` with every file's size and SHA-256 (a tar's last member: the blobs go
    straight into the tar, never staged). For S3 the manifest lists every object with its
    size and ETag; ``s3`` copies them too. Written under a temporary name beside ``dest`` and
    moved into place at the end: a failure leaves nothing, an existing ``dest`` is never
    replaced (``CONFLICT``)."""
    as_tar = dest.name.endswith(".tar")
    pg = _postgresql(settings)
    if pg is None:
        source = database_path(settings)
        if not source.is_file():
            raise NotFound(f"no SQLite database at {source}: nothing to back up")
    if os.path.lexists(dest):
        raise Conflict(f"{dest} exists: a backup never replaces one; name a new one")
    if not dest.parent.is_dir():
        raise NotFound(f"{dest.parent} is not a folder")
    root = _blob_root(settings)
    if root is not None and _inside(dest.parent, root):
        raise BadRequest(f"{dest} is inside the blob folder: name a place outside it")
    started = time.monotonic()
    token = secrets.token_hex(4)
    staging = dest.with_name(f".{dest.name}.staging-{token}")
    staging.mkdir(mode=0o700)
    partial = dest.with_name(f".{dest.name}.partial-{token}")  # the tar, while it is written
    sink: _Sink | None = None
    try:
        (staging / "database").mkdir(mode=0o700)
        db_entry = DB_ENTRY if pg is None else PG_ENTRY
        if pg is None:
            copied = backup(settings, staging / DB_ENTRY)
        else:
            copied = _pg_dump(pg, staging / PG_ENTRY)
        total = [copied.size]
        advance = _tick(progress, total)
        sink = _Sink(staging, _open_tar(partial) if as_tar else None, advance)
        if sink.tar is None:
            advance(copied.size)
            entries = [_Entry(db_entry, copied.size, _sha256_of(staging / db_entry))]
        else:  # into the tar, and out of the staged folder
            with (staging / db_entry).open("rb") as fh:
                entries = [sink.add(db_entry, fh, copied.size)]
            (staging / db_entry).unlink()
        # the files after the database: every blob the copy names was written before its
        # job's row, so it is here (docs/operations.md#backups-and-restore)
        listed: list[dict[str, object]] = []
        if root is not None:
            entries += _copy_local_blobs(root, sink, total)
        else:
            store = _raw_s3(settings)
            entries_s3, listed = _s3_objects(store, sink, total, copy=s3)
            entries += entries_s3
        keys = _copy_keys(settings, sink) if with_keys else []
        entries += keys
        manifest = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "pressroom": _version(),
            "schema_revision": copied.revision,
            "database": "sqlite" if pg is None else "postgresql",
            "store": "local" if root is not None else "s3",
            "files": [
                {"path": e.path, "size": e.size, "sha256": e.sha256}
                for e in sorted(entries, key=lambda e: e.path)
            ],
            "s3_objects": listed,
        }
        body = (json.dumps(manifest, indent=1) + "\n").encode()
        if sink.tar is not None:  # the manifest last: its sums are known once all is written
            sink.tar.addfile(_member(MANIFEST, len(body)), io.BytesIO(body))
            sink.tar.close()
            sink.tar.fileobj.close()
            _durable(partial)
            _publish(partial, dest)
        else:
            fd = os.open(staging / MANIFEST, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(body)
            _durable_tree(staging)
            if os.path.lexists(dest):
                raise Conflict(f"{dest} appeared while it was written: it was left as it is")
            staging.rename(dest)
            _fsync_dir(dest.parent)
    finally:
        if sink is not None and sink.tar is not None and sink.tar.fileobj is not None:
            sink.tar.fileobj.close()  # closed already when it was finished
        shutil.rmtree(staging, ignore_errors=True)
        partial.unlink(missing_ok=True)
    blobs = sum(1 for e in entries if e.path.startswith("blobs/"))
    return Bundle(
        copied.revision,
        len(entries),
        sum(e.size for e in entries),
        blobs,
        tuple(sorted(e.path.removeprefix("keys/") for e in keys)),
        time.monotonic() - started,
        listed=0 if s3 else len(listed),
    )


def _version() -> str:
    from pressroom import __version__

    return __version__


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _copy_local_blobs(root: Path, sink: _Sink, total: list[int]) -> list[_Entry]:
    """Every blob under ``root`` as stored, a half-written ``.incoming-*`` aside; a blob
    deleted while the copy runs (a source deleted on delivery) is skipped, as ``rsync``
    would."""
    from pressroom.storage.local import STAGING

    if not root.is_dir():
        return []
    found: list[tuple[str, int]] = []
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            if name.startswith(STAGING):
                continue
            try:
                info = path.lstat()
            except FileNotFoundError:
                continue
            if stat.S_ISREG(info.st_mode):
                found.append((path.relative_to(root).as_posix(), info.st_size))
    total[0] += sum(size for _, size in found)
    entries: list[_Entry] = []
    for key, _size in sorted(found):
        if not _blob_name(key):
            continue  # not a key Pressroom writes: not its file
        try:
            fd = os.open(root / key, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        with os.fdopen(fd, "rb") as src:  # open: a delete from now on does not matter
            entries.append(sink.add(f"blobs/{key}", src, os.fstat(fd).st_size))
    return entries


def _s3_objects(
    store: Any, sink: _Sink, total: list[int], *, copy: bool
) -> tuple[list[_Entry], list[dict[str, object]]]:
    """The bucket's objects under the prefix: each with its size and ETag for the manifest,
    and with ``copy`` each one's bytes into the backup (summed as copied)."""
    listed: list[dict[str, object]] = []
    entries: list[_Entry] = []
    keys = sorted(key for key, _ in store.list(""))
    for key in keys:
        if not _blob_name(key):
            continue
        try:
            head = store.client.head_object(Bucket=store.bucket, Key=store._key(key))
        except Exception:  # deleted since it was listed (a source on delivery): skipped
            continue
        listed.append(
            {"key": key, "size": int(head["ContentLength"]), "etag": str(head["ETag"]).strip('"')}
        )
    if copy:
        total[0] += sum(int(str(o["size"])) for o in listed)
        for obj in listed:
            key = str(obj["key"])
            try:
                src = store.open(key)
            except BlobNotFound:
                continue
            with src:
                entry = sink.add(f"blobs/{key}", src, int(str(obj["size"])))
            obj["sha256"] = entry.sha256
            entries.append(entry)
    return entries, listed


def _copy_keys(settings: Settings, sink: _Sink) -> list[_Entry]:
    """The keys, each a 0600 file: the signing key (the file, or PRESSROOM_SIGNING_KEY's
    value), the default tenant's API key file, the master key and every older one."""
    from pressroom.service import KEY_FILE, SECRET_FILE

    found: dict[str, bytes] = {}
    if settings.signing_key:
        found["keys/signing.key"] = settings.signing_key.encode()
    elif (settings.data_dir / SECRET_FILE).is_file():
        found["keys/signing.key"] = (settings.data_dir / SECRET_FILE).read_bytes()
    if (settings.data_dir / KEY_FILE).is_file():
        found["keys/api-key"] = (settings.data_dir / KEY_FILE).read_bytes()
    from pressroom.storage.crypto import master_keys

    masters = master_keys(settings.storage)
    if masters is not None:
        current, old = masters
        found["keys/master.key"] = base64.b64encode(current) + b"\n"
        for n, key in enumerate(old, start=1):
            found[f"{_OLD_MASTER}{n}.key"] = base64.b64encode(key) + b"\n"
    return [sink.add(name, io.BytesIO(value), len(value)) for name, value in found.items()]


class _Hashing(io.RawIOBase):
    """A reader that sums what is read through it (and counts it for the progress)."""

    def __init__(self, raw: BinaryIO, advance: Callable[[int], None]) -> None:
        self.raw, self.advance = raw, advance
        self.digest = hashlib.sha256()
        self.size = 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        chunk = self.raw.read(n)
        self.digest.update(chunk)
        self.size += len(chunk)
        self.advance(len(chunk))
        return chunk

    def readinto(self, b: Any) -> int:
        chunk = self.read(len(b))
        b[: len(chunk)] = chunk
        return len(chunk)


def _member(name: str, size: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = size, 0o600, int(time.time())
    return info


def _open_tar(partial: Path) -> tarfile.TarFile:
    """A new 0600 file for the tar, opened for writing (uncompressed, PAX)."""
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    return tarfile.open(fileobj=os.fdopen(fd, "wb"), mode="w", format=tarfile.PAX_FORMAT)


class _Sink:
    """Where a backup's files go: under its staged folder, or, for a ``.tar``, straight into
    the tar (never staged: a tar of the blobs needs no second copy of them on disk)."""

    def __init__(
        self, staging: Path, tar: tarfile.TarFile | None, advance: Callable[[int], None]
    ) -> None:
        self.staging, self.tar, self.advance = staging, tar, advance

    def add(self, name: str, src: BinaryIO, size: int) -> _Entry:
        """``src``, ``size`` bytes long, under ``name``; its entry for the manifest."""
        if self.tar is None:
            dest = self.staging / name
            _folders(dest.parent)
            got, sha = _copy_hashing(src, dest, self.advance)
            return _Entry(name, got, sha)
        reader = _Hashing(src, self.advance)
        self.tar.addfile(_member(name, size), cast(BinaryIO, reader))  # short: OSError
        return _Entry(name, reader.size, reader.digest.hexdigest())
