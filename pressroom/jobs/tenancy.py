"""Who may use the service and for whom: API keys (stored hashed), each tenant's customers,
its template allow-list, and its weight in fair claiming."""

from __future__ import annotations

import contextlib
import hashlib
import secrets
import time
from typing import Any

from sqlalchemy import Connection, func, or_, select, update

from pressroom.errors import DuplicateRow, TransientError
from pressroom.jobs.claims import DEFAULT_WEIGHT, MAX_WEIGHT
from pressroom.jobs.schema import (
    api_keys,
    customers,
    desk_sessions,
    template_allow,
    tenant_weights,
)
from pressroom.jobs.transport import Database
from pressroom.keys import ROLES, KeyOwner
from pressroom.tenants import TENANT_RE

# last-use times are this coarse: a write at most once a minute per key
KEY_USE_GRAIN_S = 60.0


# what a key's record shows: never the secret or its hash
_KEY_FIELDS = (
    api_keys.c.id,
    api_keys.c.tenant,
    api_keys.c.role,
    api_keys.c.created_at,
    api_keys.c.last_used_at,
    api_keys.c.expires_at,
    api_keys.c.revoked_at,
)


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class SqlTenancy:
    def __init__(self, db: Database) -> None:
        self.db = db

    # --- keys ------------------------------------------------------------------------------

    def create_key(self, tenant: str, *, now: float, role: str = "tenant") -> str:
        """A new key that never expires; the key alone (see ``new_key``)."""
        return self.new_key(tenant, now=now, role=role)[1]

    def new_key(
        self,
        tenant: str,
        *,
        now: float,
        role: str = "tenant",
        expires_at: float | None = None,
    ) -> tuple[str, str]:
        """A new API key (stored hashed): ``(id, key)``. The id names the key in lists and
        revocations; the key itself is shown once. ``role="operator"``: redrive, metrics and
        dashboard for every tenant; its ``tenant`` is only a label. ``role="reviewer"``: the
        tenant's review desk and review API, nothing else."""
        if role not in ROLES:
            raise ValueError("role must be tenant, operator or reviewer")
        if not TENANT_RE.match(tenant):
            raise ValueError("a tenant name is 1-64 letters, digits, '.', '_' or '-'")
        if expires_at is not None and expires_at <= now:
            raise ValueError("the expiry is in the past")
        prefix = {"operator": "po_", "reviewer": "pv_"}.get(role, "pr_")
        key = prefix + secrets.token_urlsafe(32)
        key_id = "k_" + secrets.token_hex(6)
        with self.db.tx() as conn:
            conn.execute(
                api_keys.insert().values(
                    key_hash=hash_key(key),
                    id=key_id,
                    tenant=tenant,
                    created_at=now,
                    role=role,
                    expires_at=expires_at,
                )
            )
        return key_id, key

    def key_info(self, key: str, *, now: float | None = None) -> KeyOwner | None:
        """The owner (tenant, role, key id) of a live key: not revoked, not expired. Records
        its last use (at most once a minute, so a busy client does not turn every request into
        a write)."""
        now = time.time() if now is None else now
        digest = hash_key(key)
        with self.db.tx(read_only=True) as conn:
            row = conn.execute(
                select(
                    api_keys.c.tenant,
                    api_keys.c.role,
                    api_keys.c.expires_at,
                    api_keys.c.last_used_at,
                    api_keys.c.id,
                ).where(api_keys.c.key_hash == digest, api_keys.c.revoked_at.is_(None))
            ).first()
        if row is None or (row[2] is not None and float(row[2]) <= now):
            return None
        if row[3] is None or now - float(row[3]) > KEY_USE_GRAIN_S:
            with contextlib.suppress(TransientError), self.db.tx() as conn:
                conn.execute(
                    update(api_keys)
                    .where(
                        api_keys.c.key_hash == digest,
                        or_(
                            api_keys.c.last_used_at.is_(None),
                            api_keys.c.last_used_at < now - KEY_USE_GRAIN_S,
                        ),
                    )
                    .values(last_used_at=now)
                )
        return KeyOwner(tenant=str(row[0]), role=str(row[1]), key_id=str(row[4]))

    def list_keys(self, tenant: str | None = None) -> list[dict[str, Any]]:
        """Every key's id, tenant, role and dates (never the secret or its hash)."""
        query = select(*_KEY_FIELDS).order_by(api_keys.c.created_at, api_keys.c.id)
        if tenant is not None:
            query = query.where(api_keys.c.tenant == tenant)
        with self.db.tx(read_only=True) as conn:
            return [dict(row) for row in conn.execute(query).mappings().all()]

    def key(self, key_id: str) -> dict[str, Any] | None:
        """One key's record by id, as ``list_keys`` gives it, revoked or not."""
        with self.db.tx(read_only=True) as conn:
            row = (
                conn.execute(select(*_KEY_FIELDS).where(api_keys.c.id == key_id)).mappings().first()
            )
        return None if row is None else dict(row)

    # --- desk sessions ----------------------------------------------------------------------

    def open_session(self, key_id: str, *, now: float, expires: float) -> str:
        """A new desk session for a key; its id (random, never derived) goes in the cookie."""
        session_id = secrets.token_urlsafe(32)
        with self.db.tx() as conn:
            conn.execute(
                desk_sessions.insert().values(
                    id=session_id, key_id=key_id, created_at=now, expires_at=expires
                )
            )
        return session_id

    def session_live(self, session_id: str, key_id: str, *, now: float) -> bool:
        """Whether a session is still good: opened for that key, not ended, not expired."""
        with self.db.tx(read_only=True) as conn:
            row = conn.execute(
                select(desk_sessions.c.id).where(
                    desk_sessions.c.id == session_id,
                    desk_sessions.c.key_id == key_id,
                    desk_sessions.c.ended_at.is_(None),
                    desk_sessions.c.expires_at > now,
                )
            ).first()
        return row is not None

    def end_session(self, session_id: str, *, now: float) -> None:
        with self.db.tx() as conn:
            conn.execute(
                update(desk_sessions)
                .where(desk_sessions.c.id == session_id, desk_sessions.c.ended_at.is_(None))
                .values(ended_at=now)
            )

    def prune_sessions(self, *, before: float) -> int:
        """Forget sessions that expired before ``before``."""
        with self.db.tx() as conn:
            return int(
                conn.execute(
                    desk_sessions.delete().where(desk_sessions.c.expires_at < before)
                ).rowcount
            )

    def revoke_key(self, id_or_key: str, *, now: float) -> str | None:
        """Revoke by id or by the key itself; returns the id, None when there is no such live
        key. Every API host reads keys from this table per request, so it holds at once."""
        match = (
            api_keys.c.id == id_or_key
            if id_or_key.startswith("k_")
            else api_keys.c.key_hash == hash_key(id_or_key)
        )
        with self.db.tx() as conn:
            row = conn.execute(
                select(api_keys.c.id).where(match, api_keys.c.revoked_at.is_(None))
            ).first()
            if row is None:
                return None
            conn.execute(update(api_keys).where(match).values(revoked_at=now))
            return str(row[0])

    def tenant_for_key(self, key: str, *, now: float | None = None) -> str | None:
        info = self.key_info(key, now=now)
        return None if info is None or info.role != "tenant" else info.tenant

    def has_keys(self) -> bool:
        with self.db.tx(read_only=True) as conn:
            return conn.execute(select(func.count()).select_from(api_keys)).scalar_one() > 0

    # --- customers -------------------------------------------------------------------------

    def set_customer(self, tenant: str, customer: str, *, status: str, now: float) -> None:
        """Create the customer or change its status (active | suspended)."""
        if status not in ("active", "suspended"):
            raise ValueError("status must be active or suspended")
        try:
            self._set_customer(tenant, customer, status, now)
        except DuplicateRow:  # created by someone else between our update and insert
            self._set_customer(tenant, customer, status, now)

    def _set_customer(self, tenant: str, customer: str, status: str, now: float) -> None:
        with self.db.tx() as conn:
            done = conn.execute(
                update(customers)
                .where(customers.c.tenant == tenant, customers.c.customer == customer)
                .values(status=status, updated_at=now)
            )
            if done.rowcount == 0:
                conn.execute(
                    customers.insert().values(
                        tenant=tenant,
                        customer=customer,
                        status=status,
                        created_at=now,
                        updated_at=now,
                    )
                )

    def customer_status(self, tenant: str, customer: str) -> str | None:
        with self.db.tx(read_only=True) as conn:
            row = conn.execute(
                select(customers.c.status).where(
                    customers.c.tenant == tenant, customers.c.customer == customer
                )
            ).first()
        return None if row is None else str(row[0])

    # --- template allow-lists --------------------------------------------------------------

    def allow_templates(self, tenant: str, names: list[str], *, now: float) -> None:
        with self.db.tx() as conn:
            have = set(
                conn.execute(
                    select(template_allow.c.template).where(template_allow.c.tenant == tenant)
                ).scalars()
            )
            for name in sorted(set(names) - have):
                conn.execute(
                    template_allow.insert().values(tenant=tenant, template=name, created_at=now)
                )

    def disallow_templates(self, tenant: str, names: list[str] | None) -> None:
        """Take names off a tenant's list; ``None`` drops the list (every template allowed)."""
        where = [template_allow.c.tenant == tenant]
        if names is not None:
            where.append(template_allow.c.template.in_(names))
        with self.db.tx() as conn:
            conn.execute(template_allow.delete().where(*where))

    def allowed_templates(self, tenant: str) -> frozenset[str] | None:
        """The templates a tenant may use; ``None`` while it has no list (all allowed)."""
        with self.db.tx(read_only=True) as conn:
            names = frozenset(
                str(x)
                for x in conn.execute(
                    select(template_allow.c.template).where(template_allow.c.tenant == tenant)
                ).scalars()
            )
        return names or None

    def any_allow_list(self) -> bool:
        """Whether any tenant has an allow-list (the template policy's trigger)."""
        with self.db.tx(read_only=True) as conn:
            return conn.execute(select(template_allow.c.tenant).limit(1)).first() is not None

    # --- weights in fair claiming (``jobs.claims``) ----------------------------------------

    def set_weight(self, tenant: str, weight: int, *, now: float) -> None:
        """A tenant's weight in every lane: a tenant of weight N is given N times the work of
        a tenant of weight 1 while both have work waiting. 1 is the default (no row)."""
        if not DEFAULT_WEIGHT <= weight <= MAX_WEIGHT:
            raise ValueError(f"a weight is a whole number from {DEFAULT_WEIGHT} to {MAX_WEIGHT}")
        with self.db.tx() as conn:
            conn.execute(tenant_weights.delete().where(tenant_weights.c.tenant == tenant))
            if weight != DEFAULT_WEIGHT:
                conn.execute(
                    tenant_weights.insert().values(tenant=tenant, weight=weight, updated_at=now)
                )

    def weights(self, conn: Connection | None = None) -> dict[str, int]:
        """Every tenant whose weight is not the default; ``conn``: inside that transaction."""
        with self.db.on(conn, read_only=True) as conn:
            rows = conn.execute(select(tenant_weights.c.tenant, tenant_weights.c.weight)).all()
        return {str(t): int(w) for t, w in rows}
