"""PostgreSQL's side of `pressroom backup` and `restore`: pg_dump's snapshot (custom format,
without owners or grants), judged from pg_restore's table of contents before pg_restore puts it
back, in one transaction, into an empty database; an older schema is then upgraded. The
password stays out of the process list (``PGPASSWORD``).
"""

from __future__ import annotations

import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from pressroom.backup.files import _durable
from pressroom.backup.schema import _SHOWN, _head, _known, reference_schema
from pressroom.backup.sqlite import Copied
from pressroom.errors import BadConfig, BadRequest, Conflict, UntrustedBackup
from pressroom.settings import Settings, child_environment


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
