"""Webhook deliveries and signing secrets in memory: ``jobs.outbox.SqlOutbox`` step for step
(the deliveries themselves are queued by the job's end, ``Tables.enqueue``)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from pressroom.jobs.backoff import RetryPolicy
from pressroom.jobs.outbox import new_secret
from pressroom.memstore.tables import Tables


def _as_is(_tenant: str, value: str) -> str:
    return value


class MemoryOutbox:
    def __init__(self, tables: Tables) -> None:
        self.t = tables
        self.seal_secret: Callable[[str, str], str] = _as_is
        self.open_secret: Callable[[str, str], str] = _as_is

    def claim_deliveries(
        self,
        owner: str,
        *,
        now: float,
        lease_s: float,
        limit: int = 10,
        skip_tenants: Collection[str] = (),
    ) -> list[dict[str, Any]]:
        with self.t.lock:
            due = sorted(
                (
                    d
                    for d in self.t.deliveries.values()
                    if d["state"] == "pending"
                    and d["next_attempt_at"] <= now
                    and (d["lease_expires_at"] is None or d["lease_expires_at"] < now)
                    and d["tenant"] not in skip_tenants
                ),
                key=lambda d: d["next_attempt_at"],
            )[:limit]
            for d in due:
                d.update(
                    lease_owner=owner, lease_expires_at=now + lease_s, attempts=d["attempts"] + 1
                )
            return [dict(d) for d in due]

    def delivery_result(
        self,
        delivery_id: str,
        owner: str,
        *,
        ok: bool,
        error: str | None,
        now: float,
        policy: RetryPolicy,
    ) -> str:
        with self.t.lock:
            row = self.t.deliveries.get(delivery_id)
            if row is None or row["lease_owner"] != owner:
                return "lost"
            values: dict[str, Any]
            if ok:
                values = {"state": "delivered", "delivered_at": now, "last_error": None}
            elif policy.exhausted(row["attempts"]):
                values = {"state": "failed", "last_error": error}
            else:
                values = {
                    "next_attempt_at": now + policy.delay(row["attempts"]),
                    "last_error": error,
                }
            row.update(lease_owner=None, lease_expires_at=None, **values)
            return str(values.get("state", "pending"))

    def deliveries(self, job_id: str) -> list[dict[str, Any]]:
        with self.t.lock:
            return [dict(d) for d in self.t.deliveries.values() if d["job_id"] == job_id]

    def webhook_secret(self, tenant: str, *, now: float) -> str:
        with self.t.lock:
            row = self.t.secrets.get(tenant)
            if row is not None:
                return self.open_secret(tenant, row["secret"])
            secret = new_secret()
            self.t.secrets[tenant] = {
                "secret": self.seal_secret(tenant, secret),
                "created_at": now,
                "previous_secret": None,
                "previous_until": None,
            }
            return secret

    def signing_secrets(self, tenant: str, *, now: float) -> tuple[str, ...]:
        with self.t.lock:
            row = self.t.secrets.get(tenant)
            if row is None:
                return (self.webhook_secret(tenant, now=now),)
            current = self.open_secret(tenant, row["secret"])
            previous, until = row["previous_secret"], row["previous_until"]
            if previous is not None and until is not None and now < until:
                return current, self.open_secret(tenant, previous)
            return (current,)

    def rotate_webhook_secret(
        self, tenant: str, *, now: float, overlap_s: float
    ) -> tuple[str, float | None]:
        secret = new_secret()
        sealed = self.seal_secret(tenant, secret)
        with self.t.lock:
            row = self.t.secrets.get(tenant)
            if row is None:
                self.t.secrets[tenant] = {
                    "secret": sealed,
                    "created_at": now,
                    "previous_secret": None,
                    "previous_until": None,
                }
                return secret, None
            row.update(
                secret=sealed,
                created_at=now,
                previous_secret=row["secret"],
                previous_until=now + overlap_s,
            )
            return secret, now + overlap_s
