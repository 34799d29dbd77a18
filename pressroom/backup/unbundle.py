"""`pressroom restore`: a backup of `pressroom backup` put back as a fresh data dir — every
file copied into a new folder beside it while its size and SHA-256 are checked against the
manifest, the database judged (and an older one upgraded) as ``db restore`` does, the bucket
settled for S3 — and only then renamed into place. A data dir in use is refused; one with
files in it is moved aside with ``--force``, never deleted.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from pressroom.backup.bundle import Bundle, _blob_root, _raw_s3
from pressroom.backup.files import (
    BytesProgress,
    _copy_hashing,
    _durable_tree,
    _folders,
    _fsync_dir,
    _inside,
    _tick,
)
from pressroom.backup.manifest import (
    _MANIFEST_MAX,
    DB_ENTRY,
    KEY_ENTRIES,
    MANIFEST,
    PG_ENTRY,
    _backup_reader,
    _Entry,
    _entry_allowed,
    _judge_manifest,
    _parse_manifest,
    _shown,
)
from pressroom.backup.postgres import _judge_dump, _Pg, _pg_empty, _pg_restore, _postgresql
from pressroom.backup.sqlite import _exclusive, database_path, restore
from pressroom.errors import (
    BadConfig,
    BadRequest,
    BlobNotFound,
    Conflict,
    NotFound,
    UntrustedBackup,
)
from pressroom.settings import Settings


def restore_all(
    settings: Settings,
    src: Path,
    *,
    force: bool = False,
    progress: BytesProgress | None = None,
) -> Bundle:
    """Put a backup ``backup_all`` wrote (a folder or a ``.tar``) back as the settings' data
    dir: every file is copied into a new folder beside it while its size and SHA-256 are
    checked against the manifest — a file that differs, is missing, or is not in the manifest
    refuses the whole restore (``UNTRUSTED_BACKUP``) — then the database goes through
    ``restore``'s checks (its schema judged, an older one upgraded), and only then is the new
    folder renamed into place. A data dir (or blob folder) that is not empty is refused
    (``CONFLICT``) unless ``force``, which moves it aside (never deletes it), and never while
    a process has its database open. A failure leaves the target as it was."""
    from pressroom.storage.local import STAGING

    target = settings.data_dir
    pg = _postgresql(settings)
    db = target / "pressroom.db" if pg is not None else database_path(settings)
    if pg is None and db.resolve() != (target / "pressroom.db").resolve():
        raise BadConfig(
            "`pressroom restore` puts the database back into the data dir: unset "
            "PRESSROOM_DATABASE_URL (or use `db restore` for a database kept elsewhere)"
        )
    root = _blob_root(settings)
    outside = root is not None and not _inside(root, target)
    for folder in (target, *([root] if outside and root is not None else [])):
        if not _fresh(folder) and not force:
            raise Conflict(
                f"{folder} is not empty: a restore goes into a fresh data dir "
                "(--force moves the existing one aside; stop the service first)"
            )
    if pg is not None:
        _pg_empty(pg)  # a database with tables in it: said now, before any copying
    elif db.exists():
        with _exclusive(db):  # in use: said now, before any copying
            pass
    started = time.monotonic()
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    token = secrets.token_hex(4)
    staging = target.with_name(f".{target.name}.restoring-{token}")
    staging.mkdir(mode=0o700)
    blob_staging: Path | None = None
    if root is not None and outside:
        root.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        blob_staging = root.with_name(f".{root.name}.restoring-{token}")
        blob_staging.mkdir(mode=0o700)
    elif root is not None:
        blob_staging = staging / root.relative_to(target)
    else:  # S3: the blobs wait here until every check has passed
        blob_staging = staging / f"{STAGING}s3-{token}"
    try:
        with _backup_reader(src) as (first_manifest, members):
            manifest = first_manifest
            expected = _judge_manifest(manifest) if manifest is not None else None
            if expected is not None:
                _database_listed(expected, pg)
            total = [
                sum(e.size for e in expected.values())
                if expected is not None
                else src.stat().st_size  # a tar with its manifest last: about its size
            ]
            advance = _tick(progress, total)
            got: dict[str, tuple[int, str]] = {}
            backup_db = staging / f".backup-{token}.{'db' if pg is None else 'dump'}"
            for name, member in members:
                if name == MANIFEST and manifest is None:  # a tar's, last: judged below
                    manifest = _parse_manifest(member.read(_MANIFEST_MAX + 1))
                    expected = _judge_manifest(manifest)
                    continue
                if manifest is not None and first_manifest is None:
                    raise UntrustedBackup(
                        f"the backup holds {_shown(name)} after its manifest: nothing was restored"
                    )
                entry = expected.get(name) if expected is not None else None
                known = entry is not None if expected is not None else _entry_allowed(name)
                if name in got:
                    raise UntrustedBackup(
                        f"the backup holds {_shown(name)} twice: nothing was restored"
                    )
                if not known:
                    listing = (
                        "its manifest does not list" if expected is not None else "no backup holds"
                    )
                    raise UntrustedBackup(
                        f"the backup holds {_shown(name)}, which {listing}: nothing was restored"
                    )
                dest = _destination(name, staging, blob_staging, backup_db)
                _folders(dest.parent)
                limit = entry.size if entry is not None else None
                got[name] = _copy_hashing(member, dest, advance, limit=limit)
                if entry is not None:
                    _same(entry, *got[name])
            if expected is None or manifest is None:
                raise BadRequest(f"{src} is not a Pressroom backup (no manifest.json)")
            if first_manifest is None:  # what was copied, judged now that its manifest is read
                _database_listed(expected, pg)
                for name, (size, sha) in got.items():
                    if name not in expected:
                        raise UntrustedBackup(
                            f"the backup holds {_shown(name)}, which its manifest does not "
                            "list: nothing was restored"
                        )
                    _same(expected[name], size, sha)
            missing = sorted(expected.keys() - got.keys())
            if missing:
                more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
                raise UntrustedBackup(
                    f"the backup is incomplete: {missing[0]}{more} in its manifest is missing: "
                    "nothing was restored"
                )
        listed = manifest.get("s3_objects") or []
        copied_blobs = sum(1 for n in expected if n.startswith("blobs/"))
        if listed and not copied_blobs and root is not None:
            raise BadRequest(
                "the backup lists the bucket's objects but holds none (taken without --s3): "
                "restore it with the same PRESSROOM_STORAGE_URL, or back up with --s3"
            )
        if pg is None:
            staged = replace(settings, data_dir=staging, database_url="")
            copied = restore(staged, backup_db)
            backup_db.unlink()
        else:
            revision = _judge_dump(backup_db)  # before the bucket or the database is written
        if root is None:
            _settle_bucket(settings, blob_staging, listed if not copied_blobs else [])
            shutil.rmtree(blob_staging, ignore_errors=True)
        if pg is not None:
            copied = _pg_restore(pg, backup_db, revision)
            backup_db.unlink()
        _durable_tree(staging)
        if blob_staging is not None and outside:
            _durable_tree(blob_staging)
        aside = _move_in(staging, target, token)
        if root is not None and outside and blob_staging is not None:
            _move_in(blob_staging, root, token)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if outside and blob_staging is not None:
            shutil.rmtree(blob_staging, ignore_errors=True)
        raise
    keys = tuple(sorted(n.removeprefix("keys/") for n in expected if n.startswith("keys/")))
    return Bundle(
        copied.revision,
        len(expected),
        sum(e.size for e in expected.values()),
        copied_blobs,
        keys,
        time.monotonic() - started,
        listed=len(listed) if not copied_blobs else 0,
        upgraded_from=copied.upgraded_from,
        kept_aside=aside,
    )


def _database_listed(expected: dict[str, _Entry], pg: _Pg | None) -> None:
    """The manifest lists the database this Pressroom uses (SQLite's file, or a dump)."""
    if (DB_ENTRY if pg is None else PG_ENTRY) in expected:
        return
    if (PG_ENTRY if pg is None else DB_ENTRY) in expected:
        theirs, ours = ("PostgreSQL", "SQLite") if pg is None else ("SQLite", "PostgreSQL")
        raise BadRequest(
            f"the backup holds a {theirs} database and this Pressroom's is {ours}: "
            "restore it with PRESSROOM_DATABASE_URL as when it was taken"
        )
    raise UntrustedBackup("the backup's manifest lists no database: nothing was restored")


def _same(entry: _Entry, size: int, sha: str) -> None:
    if size != entry.size or sha != entry.sha256:
        what = "size" if size != entry.size else "SHA-256"
        raise UntrustedBackup(
            f"the backup is damaged or altered: {entry.path} differs from its manifest "
            f"({what}): nothing was restored"
        )


def _fresh(folder: Path) -> bool:
    """No such folder, or an empty one."""
    if not os.path.lexists(folder):
        return True
    if folder.is_symlink() or not folder.is_dir():
        raise Conflict(f"{folder} is not a folder: move it away, then restore")
    return not any(folder.iterdir())


def _move_in(staged: Path, final: Path, token: str) -> Path | None:
    """Rename the finished folder into place; an empty folder there is removed first, one with
    files in it (``--force``) renamed aside and returned."""
    aside: Path | None = None
    if os.path.lexists(final):
        if _fresh(final):
            final.rmdir()
        else:
            stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            aside = final.with_name(f"{final.name}.before-restore-{stamp}-{token}")
            final.rename(aside)
    staged.rename(final)
    _fsync_dir(final.parent)
    return aside


def _destination(name: str, staging: Path, blobs: Path, backup_db: Path) -> Path:
    if name in (DB_ENTRY, PG_ENTRY):
        return backup_db
    if name.startswith("blobs/"):
        return blobs / name.removeprefix("blobs/")
    if name in KEY_ENTRIES:
        return staging / KEY_ENTRIES[name]
    return staging / name.removeprefix("keys/")  # master-old-N.key


def _settle_bucket(settings: Settings, staged: Path, listed: list[Any]) -> None:
    """The bucket's side of a restore onto S3: the backup's blobs put back (an object already
    there is left as it is), or, for a backup that only listed them, every listed object
    checked present at its size (``NOT_FOUND`` naming how many are missing)."""
    store = _raw_s3(settings)
    if listed:
        missing = 0
        for obj in listed:
            try:
                if store.size(str(obj["key"])) != int(obj["size"]):
                    missing += 1
            except BlobNotFound:
                missing += 1
        if missing:
            raise NotFound(
                f"{missing} of the {len(listed)} objects the backup lists are not in the bucket "
                "at their size: put the bucket back first (or restore a backup taken with --s3)"
            )
        return
    if not staged.is_dir():
        return
    for path in sorted(staged.rglob("*")):
        if path.is_file():
            store.put_if_absent(path.relative_to(staged).as_posix(), path)
