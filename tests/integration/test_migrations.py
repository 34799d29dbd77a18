"""The migrations and the one schema agree, and an upgrade keeps what the counters have counted."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from sqlalchemy import create_engine, inspect, text

from pressroom.jobs.migrate import alembic_config, upgrade
from pressroom.jobs.schema import metadata
from pressroom.jobs.sql import SqlJobStore


def test_the_migrations_build_the_schema_the_code_uses(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'm.db'}")
    upgrade(engine)
    found = inspect(engine)
    migrated = {
        t: sorted(c["name"] for c in found.get_columns(t))
        for t in found.get_table_names()
        if t != "alembic_version"
    }
    declared = {t.name: sorted(c.name for c in t.columns) for t in metadata.sorted_tables}
    assert migrated == declared
    engine.dispose()


def test_an_upgrade_keeps_what_the_counters_have_counted(tmp_path: Path) -> None:
    """Events recorded before the counters table existed still count, once, and still count
    after they are pruned."""
    engine = create_engine(f"sqlite:///{tmp_path / 'm.db'}")
    command.upgrade(alembic_config(engine), "0004")
    with engine.begin() as conn:
        for reason in ("CORRUPT", "CORRUPT", "ENCRYPTED"):
            conn.execute(
                text(
                    "INSERT INTO job_events (job_id, tenant, lane, kind, reason, at) "
                    "VALUES (NULL, 'acme', 'bulk', 'dead_letter', :reason, 1.0)"
                ),
                {"reason": reason},
            )
    upgrade(engine)
    store = SqlJobStore(engine)
    totals = {("dead_letter", "bulk", "CORRUPT"): 2, ("dead_letter", "bulk", "ENCRYPTED"): 1}
    assert store.stats.counter_totals() == totals
    assert store.retention.prune_history(before=10.0) == 3
    assert store.stats.event_counts() == {}
    assert store.stats.counter_totals() == totals
    engine.dispose()


def test_migrations_started_at_once_on_postgresql_run_one_after_the_other(pg_url: str) -> None:
    """The API's replicas and the migration Job start together on a fresh database: each
    upgrade waits for the advisory lock, so all end at the head and none fails."""
    import threading

    from pressroom.jobs.migrate import current_revision, head_revision
    from pressroom.jobs.transport import make_engine

    engines = [make_engine(pg_url) for _ in range(4)]
    errors: list[BaseException] = []
    start = threading.Barrier(len(engines))

    def migrate(engine: object) -> None:
        start.wait()
        try:
            upgrade(engine)  # type: ignore[arg-type]
        except BaseException as exc:  # collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=migrate, args=(e,)) for e in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    try:
        assert errors == []
        with engines[0].connect() as conn:
            assert current_revision(conn) == head_revision()
            locks = conn.execute(text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"))
            assert locks.scalar_one() == 0  # released
    finally:
        for engine in engines:
            engine.dispose()
