"""The job store in memory, for tests only: every port of ``jobs.store`` over Python dicts under
one lock, as procrastinate ships ``InMemoryConnector``. It passes the same contract suite as
SQLite and PostgreSQL (``tests/contract/test_job_store.py``), so a unit test of the worker or
the intake can run on it in milliseconds; the real stores stay in every integration test.
Nothing is kept when the process ends, and one process is its only user."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pressroom.memstore.outbox import MemoryOutbox
from pressroom.memstore.queue import MemoryQueue
from pressroom.memstore.stats import MemoryRetention, MemoryStats
from pressroom.memstore.tables import Tables
from pressroom.memstore.tasks import MemoryTasks
from pressroom.memstore.tenancy import MemoryTenancy

if TYPE_CHECKING:
    from pressroom.jobs.store import (
        Outbox,
        Queue,
        Retention,
        Stats,
        Tasks,
        Tenancy,
        WorkerQueue,
    )

__all__ = ["MemoryJobStore"]


class MemoryJobStore:
    """The parts ``SqlJobStore`` has, by the same names, over one set of ``tables``."""

    def __init__(self) -> None:
        self.tables = Tables()
        self.outbox = MemoryOutbox(self.tables)
        self.stats = MemoryStats(self.tables)
        self.queue = MemoryQueue(self.tables)
        self.tasks = MemoryTasks(self.tables)
        self.tenancy = MemoryTenancy(self.tables)
        self.retention = MemoryRetention(self.tables, self.stats)


if TYPE_CHECKING:

    def _ports(
        store: MemoryJobStore,
    ) -> tuple[Queue, WorkerQueue, Outbox, Tenancy, Stats, Retention, Tasks]:
        """mypy's proof that each part implements its port."""
        return (
            store.queue,
            store.queue,
            store.outbox,
            store.tenancy,
            store.stats,
            store.retention,
            store.tasks,
        )
