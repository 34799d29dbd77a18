"""Keys (kept hashed, as in SQL), desk sessions, customers, template allow-lists and weights in
memory: ``jobs.tenancy.SqlTenancy`` step for step."""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING, Any

from pressroom.jobs.claims import DEFAULT_WEIGHT, MAX_WEIGHT
from pressroom.jobs.tenancy import KEY_USE_GRAIN_S, hash_key
from pressroom.keys import ROLES, KeyOwner
from pressroom.memstore.tables import Row, Tables
from pressroom.tenants import TENANT_RE

if TYPE_CHECKING:
    from sqlalchemy import Connection

_KEY_FIELDS = ("id", "tenant", "role", "created_at", "last_used_at", "expires_at", "revoked_at")


def _record(row: Row) -> dict[str, Any]:
    """A key's record as ``list_keys`` gives it: never the secret or its hash."""
    return {name: row[name] for name in _KEY_FIELDS}


class MemoryTenancy:
    def __init__(self, tables: Tables) -> None:
        self.t = tables

    # --- keys ------------------------------------------------------------------------------

    def create_key(self, tenant: str, *, now: float, role: str = "tenant") -> str:
        return self.new_key(tenant, now=now, role=role)[1]

    def new_key(
        self, tenant: str, *, now: float, role: str = "tenant", expires_at: float | None = None
    ) -> tuple[str, str]:
        if role not in ROLES:
            raise ValueError("role must be tenant, operator or reviewer")
        if not TENANT_RE.match(tenant):
            raise ValueError("a tenant name is 1-64 letters, digits, '.', '_' or '-'")
        if expires_at is not None and expires_at <= now:
            raise ValueError("the expiry is in the past")
        prefix = {"operator": "po_", "reviewer": "pv_"}.get(role, "pr_")
        key = prefix + secrets.token_urlsafe(32)
        key_id = "k_" + secrets.token_hex(6)
        with self.t.lock:
            self.t.keys[hash_key(key)] = {
                "key_hash": hash_key(key),
                "id": key_id,
                "tenant": tenant,
                "role": role,
                "created_at": now,
                "last_used_at": None,
                "expires_at": expires_at,
                "revoked_at": None,
                "seq": next(self.t.ids),
            }
        return key_id, key

    def key_info(self, key: str, *, now: float | None = None) -> KeyOwner | None:
        now = time.time() if now is None else now
        with self.t.lock:
            row = self.t.keys.get(hash_key(key))
            if row is None or row["revoked_at"] is not None:
                return None
            if row["expires_at"] is not None and row["expires_at"] <= now:
                return None
            if row["last_used_at"] is None or now - row["last_used_at"] > KEY_USE_GRAIN_S:
                row["last_used_at"] = now
            return KeyOwner(tenant=row["tenant"], role=row["role"], key_id=row["id"])

    def list_keys(self, tenant: str | None = None) -> list[dict[str, Any]]:
        with self.t.lock:
            rows = sorted(self.t.keys.values(), key=lambda r: (r["created_at"], r["id"]))
            return [_record(r) for r in rows if tenant is None or r["tenant"] == tenant]

    def key(self, key_id: str) -> dict[str, Any] | None:
        with self.t.lock:
            found = [r for r in self.t.keys.values() if r["id"] == key_id]
            return _record(found[0]) if found else None

    def revoke_key(self, id_or_key: str, *, now: float) -> str | None:
        with self.t.lock:
            if id_or_key.startswith("k_"):
                found = [r for r in self.t.keys.values() if r["id"] == id_or_key]
            else:
                found = [r for k, r in self.t.keys.items() if k == hash_key(id_or_key)]
            live = [r for r in found if r["revoked_at"] is None]
            if not live:
                return None
            for row in found:
                row["revoked_at"] = now
            return str(live[0]["id"])

    def tenant_for_key(self, key: str, *, now: float | None = None) -> str | None:
        info = self.key_info(key, now=now)
        return None if info is None or info.role != "tenant" else info.tenant

    def has_keys(self) -> bool:
        with self.t.lock:
            return bool(self.t.keys)

    def stored_key_hashes(self) -> list[str]:
        """What is kept of every key: its SHA-256, never the key (for the contract suite)."""
        with self.t.lock:
            return list(self.t.keys)

    # --- desk sessions ----------------------------------------------------------------------

    def open_session(self, key_id: str, *, now: float, expires: float) -> str:
        session_id = secrets.token_urlsafe(32)
        with self.t.lock:
            self.t.sessions[session_id] = {
                "key_id": key_id,
                "created_at": now,
                "expires_at": expires,
                "ended_at": None,
            }
        return session_id

    def session_live(self, session_id: str, key_id: str, *, now: float) -> bool:
        with self.t.lock:
            row = self.t.sessions.get(session_id)
            return (
                row is not None
                and row["key_id"] == key_id
                and row["ended_at"] is None
                and row["expires_at"] > now
            )

    def end_session(self, session_id: str, *, now: float) -> None:
        with self.t.lock:
            row = self.t.sessions.get(session_id)
            if row is not None and row["ended_at"] is None:
                row["ended_at"] = now

    def prune_sessions(self, *, before: float) -> int:
        with self.t.lock:
            gone = [s for s, row in self.t.sessions.items() if row["expires_at"] < before]
            for session_id in gone:
                del self.t.sessions[session_id]
            return len(gone)

    # --- customers -------------------------------------------------------------------------

    def set_customer(self, tenant: str, customer: str, *, status: str, now: float) -> None:
        if status not in ("active", "suspended"):
            raise ValueError("status must be active or suspended")
        with self.t.lock:
            row = self.t.customers.setdefault((tenant, customer), {"created_at": now})
            row.update(status=status, updated_at=now)

    def customer_status(self, tenant: str, customer: str) -> str | None:
        with self.t.lock:
            row = self.t.customers.get((tenant, customer))
            return None if row is None else str(row["status"])

    # --- template allow-lists --------------------------------------------------------------

    def allow_templates(self, tenant: str, names: list[str], *, now: float) -> None:
        with self.t.lock:
            have = self.t.allowed.setdefault(tenant, {})
            for name in sorted(set(names) - set(have)):
                have[name] = now

    def disallow_templates(self, tenant: str, names: list[str] | None) -> None:
        with self.t.lock:
            have = self.t.allowed.get(tenant, {})
            for name in list(have) if names is None else names:
                have.pop(name, None)
            if not have:
                self.t.allowed.pop(tenant, None)

    def allowed_templates(self, tenant: str) -> frozenset[str] | None:
        with self.t.lock:
            return frozenset(self.t.allowed.get(tenant, {})) or None

    def any_allow_list(self) -> bool:
        with self.t.lock:
            return any(self.t.allowed.values())

    # --- weights in fair claiming ----------------------------------------------------------

    def set_weight(self, tenant: str, weight: int, *, now: float) -> None:
        if not DEFAULT_WEIGHT <= weight <= MAX_WEIGHT:
            raise ValueError(f"a weight is a whole number from {DEFAULT_WEIGHT} to {MAX_WEIGHT}")
        with self.t.lock:
            self.t.weights.pop(tenant, None)
            if weight != DEFAULT_WEIGHT:
                self.t.weights[tenant] = weight

    def weights(self, conn: Connection | None = None) -> dict[str, int]:
        with self.t.lock:
            return dict(self.t.weights)
