"""Fixtures shared by every test folder."""

from __future__ import annotations

import itertools
import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from pressroom.service import Services, open_services
from pressroom.settings import Settings
from tests.s3server import S3Server, running_s3


class FakeClock:
    """Time that moves only when a test says so."""

    def __init__(self, start: float | None = None) -> None:
        # starts at the real time: file modification times must line up with it
        self.now = time.time() if start is None else start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


_counter = itertools.count()


@pytest.fixture
def services(tmp_path: Path, clock: FakeClock) -> Iterator[Services]:
    """Services on a fresh SQLite file and local blob folder, with a fake clock."""
    settings = Settings(data_dir=tmp_path / "data", scratch_dir=tmp_path / "scratch")
    settings.scratch_dir.mkdir()
    svc = open_services(settings)
    svc.clock = clock
    yield svc
    svc.store.db.engine.dispose()


PG_ADMIN_URL = os.environ.get(
    "PRESSROOM_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


def _pg_admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        conn.execute(sql)  # type: ignore[arg-type]  # our own literal SQL, never user input


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database on the machine's server (127.0.0.1:5432), dropped after.

    No skip when the server is down: ``make test`` starts it, and a missing database is a
    failure here, not a reason to test less."""
    name = f"pressroom_test_{uuid.uuid4().hex[:12]}"
    _pg_admin(f'CREATE DATABASE "{name}"')
    try:
        yield PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """moto's S3 server, one per test session; each test takes its own bucket."""
    with running_s3() as server:
        yield server
