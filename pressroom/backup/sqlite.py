"""`pressroom db backup` and `db restore`: the SQLite job store copied out and back in through
SQLite's online backup API, which reads one consistent snapshot while the service serves.

A plain file copy of a live database in WAL mode is not a backup: committed transactions may
still sit in the ``-wal`` file, and a copy of the main file taken while a checkpoint writes
into it mixes two moments. The backup API reads the pages inside one read transaction, so the
copy is the database as of one commit. PostgreSQL has its own tools (``pg_dump -Fc``); these
functions refuse it with a pointer to the recipe in docs/operations.md.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pressroom.backup.files import _connect, _durable, _publish
from pressroom.backup.schema import _head, _judge_schema, _revision, _upgrade
from pressroom.errors import BadConfig, BadRequest, Conflict, NotFound
from pressroom.settings import Settings

SQLITE_MAGIC = b"SQLite format 3\x00"
PG_RECIPE = "docs/operations.md#backups-and-restore"
# pages copied a step (4 MiB at SQLite's default page size): progress between steps
STEP_PAGES = 1024
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
