"""The SQLite job store copied out and back in through SQLite's online backup API, which reads
one consistent snapshot while the service serves: `pressroom db backup` and `db restore`; and
the whole of what a restore needs — that database, the blob store's files, the keys when asked
and a manifest of SHA-256 sums — in one folder or tar: `pressroom backup` and `restore`.

A plain file copy of a live database in WAL mode is not a backup: committed transactions may
still sit in the ``-wal`` file, and a copy of the main file taken while a checkpoint writes
into it mixes two moments. The backup API reads the pages inside one read transaction, so the
copy is the database as of one commit. PostgreSQL has its own tools (``pg_dump -Fc``); these
functions refuse it with a pointer to the recipe in docs/operations.md.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import os
import secrets
import shutil
import sqlite3
import stat
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO, cast

from pressroom.errors import (
    BadConfig,
    BadRequest,
    BlobNotFound,
    Conflict,
    NotFound,
    UntrustedBackup,
)
from pressroom.settings import Settings, child_environment

SQLITE_MAGIC = b"SQLite format 3\x00"
PG_RECIPE = "docs/operations.md#backups-and-restore"
# pages copied a step (4 MiB at SQLite's default page size): progress between steps
STEP_PAGES = 1024
# a copy's own tables that say it is Pressroom's
_OWN_TABLES = {"alembic_version", "jobs"}
_SIDE_FILES = ("-wal", "-shm", "-journal")

Progress = Callable[[int, int], None]  # (pages copied, pages in all)


@dataclass(frozen=True, slots=True)
class Copied:
    """What a backup or restore copied: the schema revision, its size and how long it took."""

    revision: str
    pages: int
    size: int  # bytes of the file written
    seconds: float
    upgraded_from: str | None = None  # a restore of an older schema: the revision it had


def database_path(settings: Settings) -> Path:
    """The SQLite file the settings name; any other database is refused (``BAD_CONFIG``) with
    the documented recipe for it."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from pressroom.jobs.transport import sqlalchemy_url

    try:
        url = make_url(sqlalchemy_url(settings.db_url))
    except ArgumentError:
        raise BadConfig("PRESSROOM_DATABASE_URL is not a database URL") from None
    backend = url.get_backend_name()
    if backend == "postgresql":
        raise BadConfig(
            "the database is PostgreSQL: back it up with `pg_dump -Fc` and restore it with "
            f"`pg_restore` (the recipe: {PG_RECIPE}); this command copies SQLite only"
        )
    if backend != "sqlite":
        raise BadConfig(f"this command copies SQLite databases only, not {backend}")
    name = url.database or ""
    if not name or name == ":memory:" or name.startswith("file:"):
        raise BadConfig("PRESSROOM_DATABASE_URL names no SQLite file to copy")
    return Path(name)


def keep_also(settings: Settings) -> str:
    """What else a full restore needs, named from the settings (a bucket's URL without
    credentials; never a key's value): the end of the line a backup or restore ends with."""
    from pressroom.effective import scrub

    url = settings.storage_url
    if url.startswith("s3://"):
        blobs = f"the bucket {scrub(url)}"
    else:
        folder = Path(url.removeprefix("file://")) if url else settings.data_dir / "blobs"
        blobs = f"the blob folder {folder.resolve()}"
    if settings.signing_key:
        signing = "the link-signing key (PRESSROOM_SIGNING_KEY)"
    else:
        from pressroom.service import SECRET_FILE

        signing = f"the link-signing key {(settings.data_dir / SECRET_FILE).resolve()}"
    keep = [blobs, signing]
    storage = settings.storage
    if storage.master_key or storage.master_key_file:
        where = "PRESSROOM_MASTER_KEY" if storage.master_key else "PRESSROOM_MASTER_KEY_FILE"
        old = " and every key in PRESSROOM_MASTER_KEYS_OLD" if storage.master_keys_old else ""
        keep.append(f"the master key ({where}){old}: without it no blob can be read")
    return "; ".join(keep)


def backup(settings: Settings, dest: Path, *, progress: Progress | None = None) -> Copied:
    """Copy the live SQLite database to ``dest`` (a new file, 0600, self-contained: no
    ``-wal`` beside it), from one read snapshot, while the service and its workers write.
    ``dest`` is written under a temporary name and linked into place, so it never exists
    half-written and an existing file is never replaced (``CONFLICT``)."""
    source = database_path(settings)
    if not source.is_file():
        raise NotFound(f"no SQLite database at {source}: nothing to back up")
    if os.path.lexists(dest):
        raise Conflict(f"{dest} exists: a backup never replaces a file; name a new one")
    if not dest.parent.is_dir():
        raise NotFound(f"{dest.parent} is not a folder")
    started = time.monotonic()
    with _staged(dest) as staged:
        with contextlib.closing(_open_read_only(source)) as src:
            src.execute("BEGIN")  # one snapshot: every step below reads the same commit
            revision = _revision(src, what="the database")
            with contextlib.closing(_connect(staged)) as out:
                pages = _copy(src, out, progress)
                # a single file: the copy keeps no WAL of its own
                out.execute("PRAGMA journal_mode=DELETE")
                _check(out, what="the copy")
            src.execute("COMMIT")
        _durable(staged)
        _publish(staged, dest)
    return Copied(revision, pages, dest.stat().st_size, time.monotonic() - started)


def restore(
    settings: Settings, src: Path, *, force: bool = False, progress: Progress | None = None
) -> Copied:
    """Make the settings' SQLite database a copy of ``src``, a backup ``backup`` wrote (or any
    Pressroom SQLite database). Refused: a file that is not one, or not a regular file (a FIFO
    is never waited on) (``BAD_REQUEST``), a schema newer than this code knows
    (``BAD_REQUEST``), a schema that is not what its own revision's migrations make — a
    trigger, view, table or index more, one changed or missing (``UNTRUSTED_BACKUP``, judged
    on the very snapshot that is copied, before any of it is copied or migrated) — an
    existing database without ``force`` (``CONFLICT``), one some process has open
    (``CONFLICT``). An older schema is upgraded on the copy before it goes in, so the database
    is never seen half-restored."""
    target = database_path(settings)
    _judge_source(src)
    existing = [p for p in (target, *_side_files(target)) if os.path.lexists(p)]
    if existing and not force:
        raise Conflict(
            f"a database exists at {target}: --force replaces it "
            "(stop the service and every worker first)"
        )
    if target.exists():
        with _exclusive(target):  # in use: said now, before any copying
            pass
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if target.parent.resolve() == settings.data_dir.resolve():
        from pressroom.service import tighten_data_dir

        tighten_data_dir(settings.data_dir)  # the data dir's one mode rule, as every command
    started = time.monotonic()
    with contextlib.closing(_open_read_only(src)) as source:
        source.execute("BEGIN")  # one snapshot: what is judged is what is copied
        revision = _revision(source, what=str(src))
        _judge_schema(source, revision)  # before a byte of it is written anywhere
        with _staged(target) as staged:
            with contextlib.closing(_connect(staged)) as out:
                pages = _copy(source, out, progress)
                out.execute("PRAGMA journal_mode=DELETE")
                _check(out, what=str(src))
            source.execute("COMMIT")
            upgraded_from = _upgrade(staged, revision)
            _durable(staged)
            if target.exists():
                _replace_in_place(staged, target)
            else:
                for side in _side_files(target):  # a database's leftovers, never replayed
                    with contextlib.suppress(FileNotFoundError):
                        side.unlink()
                _publish(staged, target)
    target.chmod(0o600)
    return Copied(
        _head() if upgraded_from else revision,
        pages,
        target.stat().st_size,
        time.monotonic() - started,
        upgraded_from,
    )


# -- the schema's version --------------------------------------------------------------------


def known_revisions() -> list[str]:
    """Every migration this code has, oldest first."""
    from alembic.script import ScriptDirectory

    from pressroom.jobs.migrate import MIGRATIONS

    script = ScriptDirectory(str(MIGRATIONS))
    return [r.revision for r in reversed(list(script.walk_revisions()))]


def _head() -> str:
    return known_revisions()[-1]


def _revision(conn: sqlite3.Connection, *, what: str) -> str:
    """The Alembic revision of a Pressroom database; anything else is ``BAD_REQUEST``."""
    try:
        tables = {
            str(row[0])
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if not tables >= _OWN_TABLES:
            raise BadRequest(f"{what} is a SQLite database but not Pressroom's (no job tables)")
        rows = conn.execute("SELECT version_num FROM alembic_version").fetchall()
    except sqlite3.DatabaseError:
        raise BadRequest(f"{what} is not a readable SQLite database") from None
    if len(rows) != 1:
        raise BadRequest(f"{what} has no single schema revision (alembic_version)")
    return str(rows[0][0])


def _known(revision: str) -> list[str]:
    """Every migration this code has; a revision not among them is newer: refused."""
    known = known_revisions()
    if revision not in known:
        raise BadRequest(
            f"the backup's schema revision {revision} is newer than this Pressroom knows "
            f"(its newest is {known[-1]}): restore it with the version that wrote it, or newer"
        )
    return known


def _upgrade(staged: Path, revision: str) -> str | None:
    """Bring a staged copy to this code's schema; returns the revision it had when it was
    older, None when current. A revision this code does not know is newer: refused."""
    known = _known(revision)
    if revision == known[-1]:
        return None
    from pressroom.jobs.migrate import upgrade
    from pressroom.jobs.transport import make_engine

    engine = make_engine(f"sqlite:///{staged.resolve()}")
    try:
        upgrade(engine)
    finally:
        engine.dispose()
    with contextlib.closing(_connect(staged)) as out:
        out.execute("PRAGMA journal_mode=DELETE")  # single file again for the move
    return revision


# -- the schema a backup may carry ----------------------------------------------------------

# Tables SQLite makes by itself (AUTOINCREMENT's counters, ANALYZE's statistics), exactly as it
# makes them: data for its own use, no behaviour. Any other object must be its revision's.
_SQLITE_OWN = {
    ("table", "sqlite_sequence"): "create table sqlite_sequence(name,seq)",
    ("table", "sqlite_stat1"): "create table sqlite_stat1(tbl,idx,stat)",
    ("table", "sqlite_stat4"): "create table sqlite_stat4(tbl,idx,neq,nlt,ndlt,sample)",
}
_SHOWN = 4  # objects named in a refusal; the rest are counted

Schema = dict[tuple[str, str], tuple[str, str]]  # (type, name) -> (table, SQL as compared)
_references: dict[str, Schema] = {}  # revision -> the schema its migrations make


def _judge_schema(conn: sqlite3.Connection, revision: str) -> None:
    """Refuse (``UNTRUSTED_BACKUP``) a database whose schema objects — tables, indexes,
    triggers, views — are not exactly those the migrations make at ``revision``: a trigger
    planted in a backup would run inside the service (one that set ``revoked_at`` back to
    NULL made ``keys revoke`` answer "revoked" while the key stayed live), and a migration run
    over a planted object could fire it. Compared by type, name, table and SQL (spacing,
    identifier quotes and keyword case aside)."""
    _known(revision)
    conn.execute("PRAGMA trusted_schema=OFF")  # nothing in its schema runs while it is read
    try:
        found = _schema_of(conn)
    except sqlite3.DatabaseError:
        raise BadRequest("the backup is not a readable SQLite database") from None
    expected = reference_schema(revision)
    wrong: list[str] = []
    for key in sorted(found.keys() | expected.keys()):
        kind, name = key
        have, want = found.get(key), expected.get(key)
        if have == want:
            continue
        if want is None and have is not None and _SQLITE_OWN.get(key) == have[1]:
            continue
        what = "extra" if want is None else "missing" if have is None else "changed"
        wrong.append(f"{what} {kind} {ascii(name)[:48]}")
    if wrong:
        shown = ", ".join(wrong[:_SHOWN])
        more = f" and {len(wrong) - _SHOWN} more" if len(wrong) > _SHOWN else ""
        raise UntrustedBackup(
            f"the backup's schema is not what revision {revision} makes ({shown}{more}): "
            "nothing was restored; restore a backup `pressroom db backup` wrote"
        )


def reference_schema(revision: str) -> Schema:
    """The schema objects the migrations make at ``revision``, from a scratch SQLite database
    migrated to it (once per revision in a process)."""
    if revision not in _references:
        from alembic import command

        from pressroom.jobs.migrate import alembic_config
        from pressroom.jobs.transport import make_engine

        with tempfile.TemporaryDirectory(prefix="pressroom-schema-") as scratch:
            db = Path(scratch) / "reference.db"
            engine = make_engine(f"sqlite:///{db}")
            try:
                command.upgrade(alembic_config(engine), revision)
            finally:
                engine.dispose()
            with contextlib.closing(_connect(db)) as conn:
                _references[revision] = _schema_of(conn)
    return _references[revision]


def _schema_of(conn: sqlite3.Connection) -> Schema:
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return {
        (str(kind), str(name)): (str(table), _comparable(sql if isinstance(sql, str) else ""))
        for kind, name, table, sql in rows
    }


def _comparable(sql: str) -> str:
    """SQL as compared: string literals kept as written; elsewhere identifier quotes dropped,
    case folded, runs of spaces made one and none left beside punctuation — what SQLite's own
    rewrites (a table renamed by a batch migration) and SQL's formatting vary."""
    out: list[str] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c == "'":  # a literal, '' inside it included
            j = i + 1
            while j < n:
                if sql[j] == "'":
                    if j + 1 < n and sql[j + 1] == "'":
                        j += 2
                        continue
                    break
                j += 1
            out.append(sql[i : j + 1])
            i = j + 1
            continue
        if c in '"`[]':
            i += 1
            continue
        if c.isspace():
            if out and out[-1] != " ":
                out.append(" ")
            i += 1
            continue
        if c in "(),;" and out and out[-1] == " ":
            out.pop()
        out.append(c.lower())
        if c in "(),;":
            while i + 1 < n and sql[i + 1].isspace():
                i += 1
        i += 1
    return "".join(out).strip()


# -- files -----------------------------------------------------------------------------------


def _judge_source(src: Path) -> None:
    """A regular file that starts as SQLite's do. A FIFO, a device or a socket is refused at
    once: it is opened without waiting (``O_NONBLOCK``) and judged by what was opened, never
    read from."""
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except FileNotFoundError:
        raise NotFound(f"{src} does not exist") from None
    except OSError as exc:
        raise BadRequest(f"{src} cannot be read ({exc.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise BadRequest(f"{src} is a folder, not a database file")
        if not stat.S_ISREG(mode):
            raise BadRequest(f"{src} is not a regular file (a FIFO, a device or a socket)")
        try:
            head = os.read(fd, len(SQLITE_MAGIC))
        except OSError as exc:
            raise BadRequest(f"{src} cannot be read ({exc.strerror})") from None
    finally:
        os.close(fd)
    if head != SQLITE_MAGIC:
        raise BadRequest(f"{src} is not a SQLite database")


def _side_files(db: Path) -> list[Path]:
    return [db.with_name(db.name + suffix) for suffix in _SIDE_FILES]


@contextlib.contextmanager
def _staged(final: Path) -> Iterator[Path]:
    """A new empty 0600 file beside ``final`` (same file system, so it links into place),
    removed with its journals unless it was moved."""
    staged = final.with_name(f".{final.name}.partial-{secrets.token_hex(4)}")
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    try:
        yield staged
    finally:
        for path in (staged, *_side_files(staged)):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None, timeout=30)


def _open_read_only(path: Path) -> sqlite3.Connection:
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        return sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30)
    except sqlite3.Error as exc:
        raise BadRequest(f"{path} cannot be opened as a database ({exc})") from None


def _copy(src: sqlite3.Connection, out: sqlite3.Connection, progress: Progress | None) -> int:
    pages = [0]

    def step(_status: int, remaining: int, total: int) -> None:
        pages[0] = total
        if progress is not None:
            progress(total - remaining, total)

    try:
        src.backup(out, pages=STEP_PAGES, progress=step)
    except sqlite3.DatabaseError as exc:
        raise BadRequest(f"the database could not be copied ({exc})") from None
    return pages[0]


def _check(conn: sqlite3.Connection, *, what: str) -> None:
    try:
        verdict = conn.execute("PRAGMA quick_check").fetchone()
    except sqlite3.DatabaseError:
        verdict = None
    if verdict is None or verdict[0] != "ok":
        raise BadRequest(f"{what} fails SQLite's integrity check")


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


@contextlib.contextmanager
def _exclusive(target: Path) -> Iterator[sqlite3.Connection]:
    """A connection holding the database's exclusive lock, or ``CONFLICT`` at once while any
    other connection, idle or busy, has the database open (in WAL mode each open connection
    keeps a shared hold the exclusive lock must wait for)."""
    conn = sqlite3.connect(target, isolation_level=None, timeout=0)
    try:
        try:
            conn.execute("PRAGMA locking_mode=EXCLUSIVE")
            conn.execute("BEGIN EXCLUSIVE")
            conn.execute("COMMIT")  # the lock stays: exclusive mode keeps it until close
        except sqlite3.OperationalError:
            raise Conflict(
                f"the database at {target} is in use: stop the service and every worker, "
                "then restore"
            ) from None
        except sqlite3.DatabaseError:
            raise BadRequest(
                f"{target} is not a SQLite database: move it away, then restore"
            ) from None
        yield conn
    finally:
        conn.close()


def _replace_in_place(staged: Path, target: Path) -> None:
    """Copy ``staged`` over a database some process might have open, through SQLite: under
    the database's exclusive lock, every page in one transaction, so a crash leaves the old
    database or the new one, and no process reads a mixture."""
    with _exclusive(target) as conn, contextlib.closing(_connect(staged)) as src:
        try:
            src.backup(conn, pages=-1)
        except sqlite3.DatabaseError as exc:
            raise BadRequest(f"the database could not be replaced ({exc})") from None


# -- everything in one step: `pressroom backup` and `pressroom restore` ----------------------

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
_CHUNK = 1 << 20

BytesProgress = Callable[[int, int], None]  # (bytes done, bytes in all; 0: not known yet)


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


@dataclass(slots=True)
class _Entry:
    path: str  # its name in the backup, with forward slashes
    size: int
    sha256: str


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


def _folders(path: Path) -> None:
    """``path`` and every folder missing above it, each 0700 (``mkdir(parents=True)`` gives
    the parents the umask's mode)."""
    if not path.is_dir():
        _folders(path.parent)
        path.mkdir(mode=0o700, exist_ok=True)


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


def _inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


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


_MANIFEST_MAX = 256 << 20


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


# -- PostgreSQL: pg_dump's snapshot, judged before pg_restore puts it back -------------------


@dataclass(frozen=True, slots=True)
class _Pg:
    url: str  # a libpq URL without the password (it stays out of the process list)
    engine_url: str  # PRESSROOM_DATABASE_URL as the service uses it
    env: dict[str, str]  # PGPASSWORD, when the URL had one


def _postgresql(settings: Settings) -> _Pg | None:
    """The PostgreSQL database the settings name, None for SQLite; ``BAD_CONFIG`` when its
    tools (``pg_dump``, ``pg_restore``) are not installed."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from pressroom.jobs.transport import sqlalchemy_url

    try:
        url = make_url(sqlalchemy_url(settings.db_url))
    except ArgumentError:
        raise BadConfig("PRESSROOM_DATABASE_URL is not a database URL") from None
    if url.get_backend_name() != "postgresql":
        return None
    if not (shutil.which("pg_dump") and shutil.which("pg_restore")):
        raise BadConfig(
            "the database is PostgreSQL and pg_dump/pg_restore are not installed "
            "(Debian: postgresql-client, of the server's major version or newer)"
        )
    plain = url.set(drivername="postgresql", password=None)
    env = {"PGPASSWORD": str(url.password)} if url.password else {}
    return _Pg(plain.render_as_string(hide_password=False), settings.db_url, env)


def _pg_tool(pg: _Pg, *args: str) -> str:
    """Run pg_dump or pg_restore; its output, or ``BAD_CONFIG`` with its last line of
    complaint (it names the server, never the password: that goes in the environment)."""
    import subprocess

    done = subprocess.run(
        list(args), env=child_environment(pg.env), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        lines = [x for x in done.stderr.splitlines() if x.strip()]
        said = lines[-1].strip()[:240] if lines else "no message"
        raise BadConfig(f"{args[0]} failed (exit {done.returncode}): {said}")
    return done.stdout


def _pg_dump(pg: _Pg, dest: Path) -> Copied:
    """One consistent snapshot of the live database (pg_dump's own transaction), custom
    format, without owners or grants, into a new 0600 file."""
    started = time.monotonic()
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.close(fd)
    _pg_tool(pg, "pg_dump", "-Fc", "--no-owner", "--no-privileges", "-d", pg.url, "-f", str(dest))
    _durable(dest)
    revision = _dump_revision(pg, dest)
    return Copied(revision, 0, dest.stat().st_size, time.monotonic() - started)


def _dump_revision(pg: _Pg, dump: Path) -> str:
    """The schema revision inside a dump: its ``alembic_version`` row, read by pg_restore."""
    text = _pg_tool(
        pg, "pg_restore", "--data-only", "--table=alembic_version", "-f", "-", str(dump)
    )
    rows: list[str] = []
    inside = False
    for line in text.splitlines():
        if line.startswith("COPY ") and "alembic_version" in line:
            inside = True
        elif inside and line == "\\.":
            break
        elif inside:
            rows.append(line.strip())
    if len(rows) != 1 or not rows[0]:
        raise BadRequest("the dump has no single schema revision (alembic_version)")
    return rows[0]


# what a dump of Pressroom's schema holds: tables, their data, sequences, defaults,
# constraints and indexes; a function, trigger, view, rule, policy, extension… is refused
_DUMP_KINDS = (
    "TABLE DATA",
    "TABLE",
    "SEQUENCE OWNED BY",
    "SEQUENCE SET",
    "SEQUENCE",
    "DEFAULT",
    "FK CONSTRAINT",
    "CONSTRAINT",
    "INDEX",
)


def _judge_dump(dump: Path) -> str:
    """Refuse (``UNTRUSTED_BACKUP``) a dump holding anything a Pressroom database does not: a
    kind of object other than tables, their data, sequences, defaults, constraints and
    indexes (a function or trigger would run inside the service), a schema other than
    ``public``, a table its revision's migrations do not make. Read from pg_restore's table
    of contents, before anything is restored. Returns the dump's revision."""
    pg = _Pg("", "", {})
    revision = _dump_revision(pg, dump)
    _known(revision)
    tables = {name for kind, name in reference_schema(revision) if kind == "table"}
    wrong: list[str] = []
    for line in _pg_tool(pg, "pg_restore", "--list", str(dump)).splitlines():
        if not line.strip() or line.startswith(";"):
            continue
        parts = line.split(" ", 3)  # "214; 1259 16388 TABLE public alembic_version owner"
        rest = parts[3] if len(parts) == 4 else line
        kind = next((k for k in _DUMP_KINDS if rest.startswith(k + " ")), None)
        if kind is None:
            wrong.append(" ".join(rest.split()[:3]))
            continue
        words = rest[len(kind) + 1 :].split()
        if not words or words[0] != "public":
            wrong.append(f"{kind} in schema {ascii(words[0] if words else '')[:32]}")
        elif kind in ("TABLE", "TABLE DATA") and (len(words) < 2 or words[1] not in tables):
            wrong.append(f"{kind} {ascii(words[1] if len(words) > 1 else '')[:48]}")
    if wrong:
        shown = ", ".join(wrong[:_SHOWN])
        more = f" and {len(wrong) - _SHOWN} more" if len(wrong) > _SHOWN else ""
        raise UntrustedBackup(
            f"the backup's dump holds what revision {revision} does not make ({shown}{more}): "
            "nothing was restored"
        )
    return revision


def _pg_empty(pg: _Pg) -> None:
    """``CONFLICT`` unless the database holds no tables, views or sequences of its own: a
    restore goes into a new empty database (``createdb``), never over one in use."""
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    from pressroom.jobs.transport import make_engine

    engine = make_engine(pg.engine_url)
    try:
        with engine.connect() as conn:
            count = conn.execute(
                text(
                    "SELECT count(*) FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n "
                    "ON n.oid = c.relnamespace WHERE n.nspname NOT IN "
                    "('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'"
                )
            ).scalar_one()
    except SQLAlchemyError:
        raise BadConfig(
            "the PostgreSQL database cannot be reached (PRESSROOM_DATABASE_URL)"
        ) from None
    finally:
        engine.dispose()
    if count:
        raise Conflict(
            "the PostgreSQL database is not empty: restore into a new empty database "
            "(createdb) and point PRESSROOM_DATABASE_URL at it (--force does not apply)"
        )


def _pg_restore(pg: _Pg, dump: Path, revision: str) -> Copied:
    """pg_restore in one transaction (all of it or nothing) into the empty database, then an
    older schema upgraded by the migrations."""
    started = time.monotonic()
    _pg_empty(pg)
    _pg_tool(
        pg,
        "pg_restore",
        "--no-owner",
        "--no-privileges",
        "--exit-on-error",
        "--single-transaction",
        "-d",
        pg.url,
        str(dump),
    )
    upgraded_from = None
    if revision != _head():
        from pressroom.jobs.migrate import upgrade
        from pressroom.jobs.transport import make_engine

        engine = make_engine(pg.engine_url)
        try:
            upgrade(engine)
        finally:
            engine.dispose()
        upgraded_from = revision
    return Copied(
        _head() if upgraded_from else revision,
        0,
        dump.stat().st_size,
        time.monotonic() - started,
        upgraded_from,
    )
