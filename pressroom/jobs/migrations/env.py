"""Alembic environment: the engine comes from the caller, never from a config file."""

from __future__ import annotations

from alembic import context

from pressroom.jobs.schema import metadata

engine = context.config.attributes["engine"]
with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
