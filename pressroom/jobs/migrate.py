"""Alembic, run from code: `pressroom db upgrade` and every `serve` start call this."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine

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


def upgrade(engine: Engine) -> None:
    command.upgrade(alembic_config(engine), "head")
