"""The schema a SQLite backup carries: its Alembic revision (one this code knows; an older one
is upgraded on the copy, a newer one refused), and its objects — tables, indexes, triggers,
views — judged against those its revision's migrations make in a scratch database, so that
nothing planted in a backup runs inside the service.
"""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
from pathlib import Path

from pressroom.backup.files import _connect
from pressroom.errors import BadRequest, UntrustedBackup

# a copy's own tables that say it is Pressroom's
_OWN_TABLES = {"alembic_version", "jobs"}


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
