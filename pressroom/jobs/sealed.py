"""The sealed columns, for ``pressroom keys rewrap``: every stored value sealed at rest (a job's
label and title, a tenant's webhook secrets) with what it is bound to, read in batches, and
replaced only if it is still what was read (a value rewritten meanwhile is left to the next run).

The store knows nothing of keys: it hands out the stored strings and writes back the ones the
caller re-wrapped."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sqlalchemy import Column, Table, select, update

from pressroom.jobs.schema import jobs, webhook_secrets
from pressroom.jobs.transport import Database

# (table, its key column, the sealed column, the purpose the value is sealed for)
SEALED: tuple[tuple[Table, str, str, str], ...] = (
    (jobs, "id", "label", "label"),
    (jobs, "id", "title", "title"),
    (webhook_secrets, "tenant", "secret", "webhook-secret"),
    (webhook_secrets, "tenant", "previous_secret", "webhook-secret"),
)
BATCH = 500


@dataclass(frozen=True, slots=True)
class SealedValue:
    """One stored value: where it is, what it is bound to (the job id or the tenant), why."""

    table: str
    column: str
    binding: str
    purpose: str
    stored: str


class SqlSealedColumns:
    def __init__(self, db: Database) -> None:
        self.db = db

    def values(self) -> Iterator[SealedValue]:
        """Every sealed value (``s1:``/``s2:``), a batch of rows per short transaction."""
        for table, key_name, column_name, purpose in SEALED:
            key: Column[str] = table.c[key_name]
            column: Column[str] = table.c[column_name]
            after = ""
            while True:
                with self.db.tx(read_only=True) as conn:
                    rows = conn.execute(
                        select(key, column)
                        .where(key > after, column.like("s%:%"))
                        .order_by(key)
                        .limit(BATCH)
                    ).all()
                for row in rows:
                    yield SealedValue(table.name, column_name, row[0], purpose, row[1])
                if len(rows) < BATCH:
                    break
                after = rows[-1][0]

    def replace(self, value: SealedValue, new: str) -> bool:
        """Write ``new`` where ``value`` was read, if it is still there unchanged."""
        table = {t.name: t for t, *_ in SEALED}[value.table]
        key_name = next(k for t, k, c, _ in SEALED if t is table and c == value.column)
        column = table.c[value.column]
        with self.db.tx() as conn:
            done = conn.execute(
                update(table)
                .where(table.c[key_name] == value.binding, column == value.stored)
                .values({value.column: new})
            )
        return bool(done.rowcount)
