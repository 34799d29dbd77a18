"""The contract suites run against every adapter: SQLite, PostgreSQL and memory
(``pressroom.memstore``, for unit tests) for the job store."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from pressroom.service import Services, open_services
from pressroom.settings import Settings
from pressroom.testing import memory_services
from tests.conftest import FakeClock


@pytest.fixture(params=["sqlite", "postgresql", "memory"])
def services(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock
) -> Iterator[Services]:
    if request.param == "memory":
        yield memory_services(tmp_path, clock=clock)
        return
    settings = Settings(data_dir=tmp_path / "data", scratch_dir=tmp_path / "scratch")
    if request.param == "postgresql":
        url = request.getfixturevalue("pg_url")
        settings = dataclasses.replace(settings, database_url=url)
    settings.scratch_dir.mkdir()
    svc = open_services(settings)
    svc.clock = clock
    yield svc
    svc.store.db.close_listener()
    svc.store.db.engine.dispose()
