"""The job store on SQLAlchemy Core: SQLite (WAL) on one machine, PostgreSQL when scaled out —
one ``Database`` and, over it, one part per concept (``store.queue.claim(...)``,
``store.tenancy.key_info(...)``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Engine

from pressroom.jobs.outbox import SqlOutbox
from pressroom.jobs.queue import SqlQueue
from pressroom.jobs.retention import SqlRetention
from pressroom.jobs.stats import SqlStats
from pressroom.jobs.tasks import SqlTasks
from pressroom.jobs.tenancy import SqlTenancy
from pressroom.jobs.transport import Database

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


class SqlJobStore:
    """Every part shares one ``Database``; a job's end writes the outbox and the events in the
    queue's own transaction."""

    def __init__(self, engine: Engine) -> None:
        self.db = Database(engine)
        self.outbox = SqlOutbox(self.db)
        self.stats = SqlStats(self.db)
        self.queue = SqlQueue(self.db, self.outbox, self.stats)
        self.tasks = SqlTasks(self.db, self.outbox, self.stats)
        self.tenancy = SqlTenancy(self.db)
        self.retention = SqlRetention(self.db, self.outbox, self.stats)


if TYPE_CHECKING:

    def _ports(
        store: SqlJobStore,
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
