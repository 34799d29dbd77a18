"""What only PostgreSQL does: LISTEN/NOTIFY wake-ups, and the same migrations as SQLite."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import inspect

from pressroom.errors import BadRequest, PermanentError, UnstorableValue
from pressroom.service import Services, open_services
from pressroom.settings import Settings
from tests.contract.test_job_store import new_job

pytestmark = pytest.mark.integration


@pytest.fixture
def pg_services(tmp_path: Path, pg_url: str) -> Iterator[Services]:
    settings = Settings(data_dir=tmp_path / "data", scratch_dir=tmp_path, database_url=pg_url)
    svc = open_services(settings)
    yield svc
    svc.store.db.close_listener()
    svc.store.db.engine.dispose()


def test_a_waiting_worker_is_woken_by_a_new_job_not_by_polling(pg_services: Services) -> None:
    store = pg_services.store
    store.db.wait_for_work(0.01)  # LISTEN is in place before the job arrives
    woke = threading.Event()

    def waiter() -> None:
        store.db.wait_for_work(60)
        woke.set()

    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.3)
    assert not woke.is_set()  # nothing arrived: still waiting, not spinning
    store.queue.insert(new_job(), now=0, max_attempts=4)
    assert woke.wait(30)  # long before its 60 s timeout: the NOTIFY woke it
    thread.join()


def test_migrations_build_the_same_tables_on_both_databases(
    tmp_path: Path, pg_services: Services
) -> None:
    lite = open_services(Settings(data_dir=tmp_path / "lite", scratch_dir=tmp_path))

    def shape(svc: Services) -> dict[str, list[str]]:
        found = inspect(svc.store.db.engine)
        return {
            t: sorted(c["name"] for c in found.get_columns(t))
            for t in found.get_table_names()
            if t != "alembic_version"
        }

    assert shape(lite) == shape(pg_services)
    lite.store.db.engine.dispose()


def test_db_upgrade_command_on_postgres(tmp_path: Path, pg_url: str) -> None:
    env = dict(os.environ, PRESSROOM_DATABASE_URL=pg_url, PRESSROOM_DATA_DIR=str(tmp_path))
    pressroom = Path(sys.executable).with_name("pressroom")
    for _ in range(2):  # twice: the second run finds nothing to do
        done = subprocess.run(
            [str(pressroom), "db", "upgrade"], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
    svc = open_services(dataclasses.replace(Settings(data_dir=tmp_path), database_url=pg_url))
    assert svc.store.stats.counts() == {}
    svc.store.db.engine.dispose()


def test_a_value_the_column_cannot_hold_is_the_stores_own_error_with_the_apis_code(
    pg_services: Services,
) -> None:
    store = pg_services.store
    job, _ = store.queue.insert(new_job(), now=0, max_attempts=4)
    claimed = store.queue.claim((job.lane,), "w1", now=1, lease_s=30)
    assert claimed is not None
    # PostgreSQL text cannot hold a NUL: inside a worker's transaction this is no bad request
    with pytest.raises(UnstorableValue) as caught:
        store.queue.set_stage(job.id, "w1", "ocr\x00", now=2)
    assert not isinstance(caught.value, BadRequest)
    assert (caught.value.code, caught.value.http_status) == ("BAD_REQUEST", 400)
    assert isinstance(caught.value, PermanentError)
