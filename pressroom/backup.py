"""The SQLite job store copied out and back in through SQLite's online backup API, which reads
one consistent snapshot while the service serves: `pressroom db backup` and `db restore`.

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
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pressroom.errors import BadConfig, BadRequest, Conflict, NotFound, UntrustedBackup
from pressroom.settings import Settings

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
