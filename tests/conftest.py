"""Fixtures shared by every test folder."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pressroom.service import Services, open_services
from pressroom.settings import Settings


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
    svc.store.engine.dispose()
