"""The job database itself: engines, transactions, the one place driver errors become ours,
LISTEN/NOTIFY and the shared clock. Job operations live above it (queue, outbox, ...)."""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event, func, select
from sqlalchemy.exc import (
    DataError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    SQLAlchemyError,
)
from sqlalchemy.exc import TimeoutError as PoolTimeout

from pressroom.errors import DuplicateRow, StoreUnavailable, UnstorableValue

CHANNEL = "pressroom_jobs"


def sqlalchemy_url(url: str) -> str:
    """``postgresql://…`` (what operators write) means psycopg 3 here, not psycopg2."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def make_engine(url: str) -> Engine:
    """An engine with the settings each database needs to serve as a queue."""
    url = sqlalchemy_url(url)
    if url.startswith("sqlite"):
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False, "timeout": 30},
            hide_parameters=True,  # error texts must never carry titles, ids or URLs
        )

        @event.listens_for(engine, "connect")
        def _sqlite_connect(dbapi: Any, _record: Any) -> None:
            dbapi.isolation_level = None  # let SQLAlchemy's begin below decide
            cursor = dbapi.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=30000")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Connection) -> None:
            # Take the write lock up front: a deferred transaction that later writes can fail
            # with SQLITE_BUSY instead of waiting its turn. Reads (marked) take no lock: WAL
            # readers never wait for the writer, nor make it wait.
            if conn.get_execution_options().get("pressroom_read_only"):
                conn.exec_driver_sql("BEGIN")
            else:
                conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=5,
        max_overflow=10,
        hide_parameters=True,
        # an unreachable host fails in seconds (a transient error), not after the OS's minutes
        connect_args={"connect_timeout": 5},
    )


class DatabaseClock:
    """PostgreSQL's clock, read once a minute and carried forward on this host's monotonic
    clock: every host times leases and deadlines alike, and a jump of one host's wall clock
    cannot make every lease look expired (which would run every job twice)."""

    def __init__(self, engine: Engine, resync_s: float = 60.0) -> None:
        self.engine = engine
        self.resync_s = resync_s
        self._offset = time.time() - time.monotonic()
        self._synced = -math.inf

    def _sync(self) -> None:
        try:
            with self.engine.connect() as conn:
                before = time.monotonic()
                db_now = float(
                    conn.execute(select(func.extract("epoch", func.clock_timestamp()))).scalar_one()
                )
                after = time.monotonic()
        except SQLAlchemyError:
            # keep the last offset and try again at the next resync, not at every call: an
            # unreachable database must not cost each caller a connect attempt
            self._synced = time.monotonic()
            return
        self._offset = db_now - (before + after) / 2
        self._synced = after

    def __call__(self) -> float:
        if time.monotonic() - self._synced > self.resync_s:
            self._sync()
        return time.monotonic() + self._offset


class Database:
    """One SQLAlchemy engine, and the only code that sees the driver's exceptions."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.is_postgres = engine.dialect.name == "postgresql"
        self._listener: Any = None  # PostgreSQL: one LISTEN connection per process, made lazily

    @contextmanager
    def tx(self, *, read_only: bool = False) -> Iterator[Connection]:
        """One short transaction; the driver's errors leave it as ours."""
        try:
            with self.engine.connect() as raw:
                conn = raw.execution_options(pressroom_read_only=True) if read_only else raw
                with conn.begin():
                    yield conn
        except (OperationalError, InterfaceError, PoolTimeout) as exc:
            cause = type(getattr(exc, "orig", None) or exc).__name__
            raise StoreUnavailable(f"the job store is unavailable ({cause})") from None
        except DataError:
            raise UnstorableValue("a field is too long or holds characters it may not") from None
        except IntegrityError as exc:
            raise DuplicateRow(type(getattr(exc, "orig", None) or exc).__name__) from exc

    @contextmanager
    def on(self, conn: Connection | None, *, read_only: bool = False) -> Iterator[Connection]:
        """The caller's transaction when it passes one (admission inside the insert), else a
        new one."""
        if conn is not None:
            yield conn
        else:
            with self.tx(read_only=read_only) as fresh:
                yield fresh

    def read(self) -> contextlib.AbstractContextManager[Connection]:
        """A read-only transaction (no write lock on SQLite)."""
        return self.tx(read_only=True)

    def wake(self, conn: Connection, lane: str) -> None:
        """Tell waiting workers (PostgreSQL: NOTIFY, delivered at commit; SQLite: they poll)."""
        if self.is_postgres:
            conn.execute(select(func.pg_notify(CHANNEL, lane)))

    def wait_for_work(self, timeout: float) -> None:
        """Block until a job may be waiting or ``timeout`` passes.

        PostgreSQL: LISTEN, woken by the NOTIFY sent when a job is accepted or sent round again
        (no busy polling; the timeout still catches retries whose backoff ends). SQLite: sleep.
        """
        if not self.is_postgres:
            time.sleep(timeout)
            return
        try:
            if self._listener is None:
                import psycopg

                url = self.engine.url.set(drivername="postgresql")
                self._listener = psycopg.connect(
                    url.render_as_string(hide_password=False), autocommit=True
                )
                self._listener.execute(f"LISTEN {CHANNEL}")
            for _note in self._listener.notifies(timeout=timeout, stop_after=1):
                break
        except Exception as exc:  # the database went away: reconnect next time
            self.close_listener()
            time.sleep(min(timeout, 1.0))
            if (
                not isinstance(exc, OSError | SQLAlchemyError)
                and "psycopg" not in type(exc).__module__
            ):
                raise

    def close_listener(self) -> None:
        if self._listener is not None:
            with contextlib.suppress(Exception):
                self._listener.close()
            self._listener = None

    def clock(self) -> Callable[[], float]:
        """The clock leases and deadlines are measured on: the database's (PostgreSQL, shared
        by every host); SQLite lives on one host, whose clock it is."""
        return DatabaseClock(self.engine) if self.is_postgres else time.time
