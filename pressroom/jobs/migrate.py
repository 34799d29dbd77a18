"""Alembic, run from code: `pressroom db upgrade` and every `serve` start call this."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import InterfaceError, OperationalError

from pressroom.errors import StoreUnavailable

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(engine: Engine) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["engine"] = engine
    return cfg


def head_revision() -> str:
    """The schema revision this code was written for (its newest migration)."""
    from alembic.script import ScriptDirectory

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    head = ScriptDirectory.from_config(cfg).get_current_head()
    assert head is not None  # the package ships its migrations
    return head


def current_revision(conn: Connection) -> str | None:
    """The database's schema revision; None before any migration ran."""
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(conn).get_current_revision()


# one number for every Pressroom on a PostgreSQL server: "pressroo" in ASCII
MIGRATION_LOCK = 0x7072657373726F6F


def upgrade(engine: Engine) -> None:
    """Migrate to this code's head. On PostgreSQL under a session advisory lock: the API's
    replicas and the migration Job may start at once, and the second waits for the first and
    then finds nothing left to do (Alembic itself takes no lock). A database that does not
    answer is ``StoreUnavailable`` (one line, exit 75), not the driver's traceback."""
    try:
        _upgrade(engine)
    except (OperationalError, InterfaceError) as exc:
        cause = type(getattr(exc, "orig", None) or exc).__name__
        raise StoreUnavailable(f"the job store is unavailable ({cause})") from None


def _upgrade(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        command.upgrade(alembic_config(engine), "head")
        return
    with engine.connect() as holder:
        holder.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
        try:
            command.upgrade(alembic_config(engine), "head")
        finally:
            holder.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": MIGRATION_LOCK})
