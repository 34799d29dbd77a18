"""What a `pressroom backup` holds and how it is read: the names a backup may hold (the
database, blobs under keys Pressroom writes, the keys), its ``manifest.json`` of sizes and
SHA-256 sums, judged, and its members read one by one from a folder or a tar stream — nothing
followed or extracted by name. A refusal names a stray file by its folder and kind only.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

from pressroom.errors import BadRequest, NotFound, UntrustedBackup

MANIFEST = "manifest.json"
FORMAT = "pressroom-backup"
FORMAT_VERSION = 1
DB_ENTRY = "database/pressroom.db"
PG_ENTRY = "database/pressroom.dump"  # PostgreSQL: pg_dump's custom format
# the keys a backup may carry (``--with-keys``), by their name in it: where each goes back
KEY_ENTRIES = {
    "keys/signing.key": "signing.key",
    "keys/api-key": "api-key",
    "keys/master.key": "master.key",
}
_OLD_MASTER = "keys/master-old-"  # keys/master-old-1.key, -2, …: older master keys
_MANIFEST_MAX = 256 << 20


@dataclass(slots=True)
class _Entry:
    path: str  # its name in the backup, with forward slashes
    size: int
    sha256: str


def _blob_name(key: str) -> bool:
    from pressroom.storage import check_key

    try:
        check_key(key)
    except ValueError:
        return False
    return True


def _entry_allowed(name: str) -> bool:
    """A name a backup may hold: the database, a blob under a key Pressroom would write, or
    one of the keys. Anything else (a path out of the folder, a link's name) is not ours."""
    if name in (DB_ENTRY, PG_ENTRY) or name in KEY_ENTRIES:
        return True
    if name.startswith(_OLD_MASTER) and name.endswith(".key"):
        return name[len(_OLD_MASTER) : -len(".key")].isdigit()
    return name.startswith("blobs/") and _blob_name(name.removeprefix("blobs/"))


def _shown(name: str) -> str:
    """A file of a backup as a refusal names it: in full when it is a name Pressroom writes
    (ids and digests); otherwise only its folder and kind, since a stray file's name may be a
    document's."""
    plain, _, kind = name.partition(" (")
    if _entry_allowed(plain):
        return name
    folder = plain.split("/", 1)[0] if "/" in plain else ""
    where = f" in {ascii(folder)[1:-1][:32]}/" if folder else " at its top"
    return f"a file{where}{' (' + kind if kind else ''}"


def _judge_manifest(manifest: object) -> dict[str, _Entry]:
    """The files a manifest lists, each judged: a name a backup may hold, a size, a SHA-256;
    one that is not a Pressroom backup's manifest is ``BAD_REQUEST``, one naming what no
    backup holds ``UNTRUSTED_BACKUP``."""
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BadRequest("not a Pressroom backup (no manifest.json of `pressroom backup`)")
    version = manifest.get("version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise BadRequest(
            f"the backup's format {version!r} is newer than this Pressroom reads: restore it "
            "with the version that wrote it, or newer"
        )
    files = manifest.get("files")
    if not isinstance(files, list):
        raise BadRequest("the backup's manifest lists no files")
    expected: dict[str, _Entry] = {}
    for item in files:
        if not isinstance(item, dict):
            raise BadRequest("the backup's manifest is malformed")
        name, size, sha = item.get("path"), item.get("size"), item.get("sha256")
        if (
            not isinstance(name, str)
            or not isinstance(size, int)
            or size < 0
            or not isinstance(sha, str)
            or len(sha) != 64
        ):
            raise BadRequest("the backup's manifest is malformed")
        if not _entry_allowed(name) or name in expected:
            raise UntrustedBackup(
                f"the backup's manifest names {_shown(name)}, which no backup holds: "
                "nothing was restored"
            )
        expected[name] = _Entry(name, size, sha.lower())
    listed = manifest.get("s3_objects", [])
    if not isinstance(listed, list) or not all(
        isinstance(o, dict)
        and isinstance(o.get("key"), str)
        and _blob_name(str(o.get("key")))
        and isinstance(o.get("size"), int)
        for o in listed
    ):
        raise BadRequest("the backup's manifest is malformed (s3_objects)")
    return expected


@contextlib.contextmanager
def _backup_reader(
    src: Path,
) -> Iterator[tuple[dict[str, Any] | None, Iterator[tuple[str, BinaryIO]]]]:
    """The manifest and then every file of a backup folder or tar, by its name in the backup.
    A tar that does not begin with its manifest (``backup`` writes it last, once its sums are
    known) gives None, and its manifest comes among the files, under its name. A link, a
    device or anything but a regular file is yielded under its name so that the caller
    refuses it (no manifest lists one); nothing is followed or extracted by name."""
    try:
        info = src.lstat()
    except FileNotFoundError:
        raise NotFound(f"{src} does not exist") from None
    if stat.S_ISDIR(info.st_mode):
        yield _read_manifest(src / MANIFEST), _folder_members(src)
        return
    if not stat.S_ISREG(info.st_mode):
        raise BadRequest(f"{src} is not a backup folder or a .tar file")
    try:
        # a stream: members in the order they were written; closed by the `with` below
        tar = tarfile.open(src, mode="r|")  # noqa: SIM115
    except (tarfile.TarError, OSError):
        raise BadRequest(f"{src} is not a backup folder or a .tar file") from None
    with tar:
        try:
            first = tar.next()
            if first is None:
                raise BadRequest(f"{src} is not a Pressroom backup (an empty tar)")
            manifest = None
            if first.name == MANIFEST and first.isreg():
                fh = tar.extractfile(first)
                assert fh is not None
                manifest = _parse_manifest(fh.read(_MANIFEST_MAX + 1))
        except tarfile.TarError:
            raise BadRequest(f"{src} is not a readable tar file") from None
        yield manifest, _tar_members(tar, None if manifest is not None else first)


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise BadRequest("not a Pressroom backup (no manifest.json)") from None
    except OSError:
        raise BadRequest("the backup's manifest.json cannot be read") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise BadRequest("the backup's manifest.json is not a regular file")
        return _parse_manifest(fh.read(_MANIFEST_MAX + 1))


def _parse_manifest(raw: bytes) -> dict[str, Any]:
    if len(raw) > _MANIFEST_MAX:
        raise BadRequest("the backup's manifest.json is too large")
    try:
        manifest = json.loads(raw)
    except ValueError:
        raise BadRequest("the backup's manifest.json is not JSON") from None
    if not isinstance(manifest, dict):
        raise BadRequest("not a Pressroom backup (its manifest is no JSON object)")
    return manifest


class _Refused(io.RawIOBase):
    """What a member that is no regular file reads as: nothing (its name is refused first)."""

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        return 0


def _folder_members(root: Path) -> Iterator[tuple[str, BinaryIO]]:
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        for name in sorted(dirs):  # a link to a folder is a member, never walked into
            if (here / name).is_symlink():
                yield (here / name).relative_to(root).as_posix(), cast(BinaryIO, _Refused())
        for name in sorted(names):
            rel = (here / name).relative_to(root).as_posix()
            if rel == MANIFEST:
                continue
            try:
                fd = os.open(
                    here / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
                )
            except OSError:  # a link: refused by name
                yield f"{rel} (a link)", cast(BinaryIO, _Refused())
                continue
            with os.fdopen(fd, "rb") as fh:
                if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                    yield f"{rel} (not a regular file)", cast(BinaryIO, _Refused())
                    continue
                yield rel, cast(BinaryIO, fh)


def _tar_members(
    tar: tarfile.TarFile, first: tarfile.TarInfo | None
) -> Iterator[tuple[str, BinaryIO]]:
    """The tar's members from ``first`` (None: from the next one; a manifest read already is
    not read again)."""
    member: tarfile.TarInfo | None = first
    try:
        if member is None:
            member = tar.next()
        while member is not None:
            if member.isdir():
                member = tar.next()
                continue
            if not member.isreg():
                yield f"{member.name} (not a regular file)", cast(BinaryIO, _Refused())
            else:
                fh = tar.extractfile(member)
                assert fh is not None
                yield member.name, cast(BinaryIO, fh)
            member = tar.next()
    except tarfile.TarError:
        raise UntrustedBackup("the backup's tar file is damaged: nothing was restored") from None
