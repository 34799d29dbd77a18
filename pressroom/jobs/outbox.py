"""The webhook outbox: a delivery row written in the same transaction as a job's final state,
then leased, sent and settled by the delivery pool; and each tenant's signing secret."""

from __future__ import annotations

import base64
import secrets
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, or_, select, update

from pressroom.errors import DuplicateRow
from pressroom.jobs.backoff import RetryPolicy
from pressroom.jobs.schema import jobs, webhook_deliveries, webhook_secrets
from pressroom.jobs.transport import Database
from pressroom.orders import JobOrder


def rfc3339(epoch: float) -> str:
    """``2026-12-06T02:30:00.123Z``: UTC, milliseconds."""
    return (
        datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


def _as_is(_tenant: str, value: str) -> str:
    return value


class SqlOutbox:
    def __init__(self, db: Database) -> None:
        self.db = db
        # how a secret is kept at rest, by tenant: as is, or sealed with the master key
        # (``service.open_services`` sets both when encryption is on; ``open_secret`` fails
        # closed: a secret it cannot open is never replaced by a guess)
        self.seal_secret: Callable[[str, str], str] = _as_is
        self.open_secret: Callable[[str, str], str] = _as_is

    def enqueue(self, conn: Connection, job_id: str, event_type: str, now: float) -> None:
        """Queue the job's webhook inside the caller's transaction (the one that ends the job),
        so a final state and its notice are written together or not at all."""
        row = conn.execute(
            select(
                jobs.c.tenant,
                jobs.c.options.label("stored_order"),
                jobs.c.template,
                jobs.c.state,
                jobs.c.reason,
                jobs.c.pages,
                jobs.c.artifact_sha256,
            ).where(jobs.c.id == job_id)
        ).first()
        if row is None:
            return
        # an order this version cannot read sends nothing: its URL is not trusted either
        order = JobOrder.stored(row.stored_order, template=str(row.template))
        url = order.webhook_url if order.refused is None else None
        if not url:
            return
        # Standard Webhooks' payload: an RFC 3339 timestamp; the output's digest here, its
        # signed link added at each send (fresh, short-lived, never stored: notify.webhooks)
        payload = {
            "type": event_type,
            "timestamp": rfc3339(now),
            "data": {
                "id": job_id,
                "state": row.state,
                "reason": row.reason,
                "pages": row.pages,
                "artifact_sha256": row.artifact_sha256 if row.state == "complete" else None,
            },
        }
        conn.execute(
            webhook_deliveries.insert().values(
                id="msg_" + secrets.token_hex(12),
                job_id=job_id,
                tenant=row.tenant,
                url=url,
                event=event_type,
                payload=payload,
                state="pending",
                attempts=0,
                next_attempt_at=now,
                created_at=now,
            )
        )

    def claim_deliveries(
        self,
        owner: str,
        *,
        now: float,
        lease_s: float,
        limit: int = 10,
        skip_tenants: Collection[str] = (),
    ) -> list[dict[str, Any]]:
        """Lease up to ``limit`` due deliveries, oldest first, none of ``skip_tenants`` (those
        already at their share of this process's senders: one tenant's burst to a slow
        endpoint must not fill every sender while other tenants' deliveries wait)."""
        with self.db.tx() as conn:
            pick = (
                select(webhook_deliveries.c.id)
                .where(
                    webhook_deliveries.c.state == "pending",
                    webhook_deliveries.c.next_attempt_at <= now,
                    or_(
                        webhook_deliveries.c.lease_expires_at.is_(None),
                        webhook_deliveries.c.lease_expires_at < now,
                    ),
                )
                .order_by(webhook_deliveries.c.next_attempt_at)
                .limit(limit)
            )
            if skip_tenants:
                pick = pick.where(webhook_deliveries.c.tenant.not_in(sorted(skip_tenants)))
            if self.db.is_postgres:
                pick = pick.with_for_update(skip_locked=True)
            ids = [str(x) for x in conn.execute(pick).scalars()]
            if not ids:
                return []
            conn.execute(
                update(webhook_deliveries)
                .where(webhook_deliveries.c.id.in_(ids))
                .values(
                    lease_owner=owner,
                    lease_expires_at=now + lease_s,
                    attempts=webhook_deliveries.c.attempts + 1,
                )
            )
            rows = (
                conn.execute(select(webhook_deliveries).where(webhook_deliveries.c.id.in_(ids)))
                .mappings()
                .all()
            )
            return [dict(r) for r in rows]

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
        with self.db.tx() as conn:
            row = conn.execute(
                select(webhook_deliveries.c.attempts).where(
                    webhook_deliveries.c.id == delivery_id,
                    webhook_deliveries.c.lease_owner == owner,
                )
            ).first()
            if row is None:
                return "lost"
            if ok:
                values: dict[str, Any] = {
                    "state": "delivered",
                    "delivered_at": now,
                    "last_error": None,
                }
            elif policy.exhausted(int(row[0])):
                values = {"state": "failed", "last_error": error}
            else:
                values = {"next_attempt_at": now + policy.delay(int(row[0])), "last_error": error}
            conn.execute(
                update(webhook_deliveries)
                .where(webhook_deliveries.c.id == delivery_id)
                .values(lease_owner=None, lease_expires_at=None, **values)
            )
            return str(values.get("state", "pending"))

    def deliveries(self, job_id: str) -> list[dict[str, Any]]:
        with self.db.tx(read_only=True) as conn:
            rows = (
                conn.execute(
                    select(webhook_deliveries).where(webhook_deliveries.c.job_id == job_id)
                )
                .mappings()
                .all()
            )
        return [dict(r) for r in rows]

    def webhook_secret(self, tenant: str, *, now: float) -> str:
        """The tenant's signing secret (``whsec_`` + base64), made on first use."""
        try:
            return self._webhook_secret(tenant, now)
        except DuplicateRow:  # two first uses at once: the other one's secret stands
            return self._webhook_secret(tenant, now)

    def _webhook_secret(self, tenant: str, now: float) -> str:
        with self.db.tx() as conn:
            row = conn.execute(
                select(webhook_secrets.c.secret).where(webhook_secrets.c.tenant == tenant)
            ).first()
            if row is not None:
                return self.open_secret(tenant, str(row[0]))
            secret = new_secret()
            conn.execute(
                webhook_secrets.insert().values(
                    tenant=tenant, secret=self.seal_secret(tenant, secret), created_at=now
                )
            )
            return secret

    def signing_secrets(self, tenant: str, *, now: float) -> tuple[str, ...]:
        """The current secret, then the one a rotation replaced while ``now`` is inside its
        overlap: a receiver that still holds the old secret verifies either signature."""
        with self.db.tx(read_only=True) as conn:
            row = conn.execute(
                select(
                    webhook_secrets.c.secret,
                    webhook_secrets.c.previous_secret,
                    webhook_secrets.c.previous_until,
                ).where(webhook_secrets.c.tenant == tenant)
            ).first()
        if row is None:
            return (self.webhook_secret(tenant, now=now),)
        current, previous, until = row
        if previous is not None and until is not None and now < float(until):
            return (self.open_secret(tenant, str(current)), self.open_secret(tenant, str(previous)))
        return (self.open_secret(tenant, str(current)),)

    def rotate_webhook_secret(
        self, tenant: str, *, now: float, overlap_s: float
    ) -> tuple[str, float | None]:
        """A new secret, and until when the replaced one still signs (None: there was none).
        The replaced secret becomes the previous one, so a second rotation inside the overlap
        ends the older secret's overlap at once. Written as a compare-and-swap on the current
        secret: two rotations at once both stand, one after the other, and neither's secret
        is lost."""
        secret = new_secret()
        while True:
            try:
                done = self._rotate(tenant, secret, now, now + overlap_s)
            except DuplicateRow:  # a first use made the tenant's secret meanwhile: rotate it
                continue
            if done is not None:
                return secret, done[0]

    def _rotate(
        self, tenant: str, secret: str, now: float, until: float
    ) -> tuple[float | None] | None:
        """``(previous_until,)``, or None when another rotation changed the row first."""
        with self.db.tx() as conn:
            row = conn.execute(
                select(webhook_secrets.c.secret).where(webhook_secrets.c.tenant == tenant)
            ).first()
            sealed = self.seal_secret(tenant, secret)
            if row is None:
                conn.execute(
                    webhook_secrets.insert().values(tenant=tenant, secret=sealed, created_at=now)
                )
                return (None,)
            # compared and kept as stored: the replaced secret stays sealed as it was
            swapped = conn.execute(
                update(webhook_secrets)
                .where(webhook_secrets.c.tenant == tenant, webhook_secrets.c.secret == row[0])
                .values(secret=sealed, created_at=now, previous_secret=row[0], previous_until=until)
            )
            return (until,) if swapped.rowcount == 1 else None


def new_secret() -> str:
    """A Standard Webhooks secret: ``whsec_`` and 32 random bytes in base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(32)).decode()
