"""API keys over HTTP for an operator: the same ids, records and rules as ``pressroom keys``,
and an audit line for every change."""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.concurrency import run_in_threadpool

from pressroom.api.deps import Operator, ServicesDep
from pressroom.api.openapi import problems
from pressroom.errors import BadRequest, ExpiryPassed, NotFound
from pressroom.keys import EXPIRY_HELP, KEY_ID_RE, key_record, parse_expiry
from pressroom.tenants import TENANT_RE
from pressroom.web.single import known_query, no_body, refuse_unknown

router = APIRouter(tags=["keys"], dependencies=[Depends(known_query)])
audit = logging.getLogger("pressroom.audit")

_TENANT_HELP = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"


class KeyRecord(BaseModel):
    """A key as listed: never the secret or its hash. Times are epoch seconds."""

    id: str = Field(description="The key's id (`k_…`), as the CLI shows it.")
    tenant: str = Field(description="The tenant it acts for (an operator key's: a label).")
    role: Literal["tenant", "operator", "reviewer"]
    created_at: float
    last_used_at: float | None = Field(description="Last use, to the minute; null if never.")
    expires_at: float | None = Field(description="When it stops working; null: never.")
    revoked_at: float | None
    status: Literal["live", "expired", "revoked"]


class NewKeyRecord(KeyRecord):
    key: str = Field(description="The key itself: shown this once, stored only as a hash.")


class KeyList(BaseModel):
    keys: list[KeyRecord]


def _expiry_schema(schema: dict[str, Any]) -> None:
    """What the document promises for ``expires_at``: a duration or an RFC 3339 date-time (the
    service reads a bare date too, for people; the document names the exact forms)."""
    schema["anyOf"] = [
        {"type": "string", "pattern": r"^\d{1,6}[dhm]$"},
        {"type": "string", "format": "date-time"},
        {"type": "null"},
    ]


class NewKey(BaseModel):
    """What ``POST /v1/keys`` takes, and nothing else (``additionalProperties: false``)."""

    model_config = ConfigDict(extra="forbid")

    tenant: str = Field(description=f"The tenant: {_TENANT_HELP}.", pattern=TENANT_RE.pattern)
    role: Literal["tenant", "operator", "reviewer"] = "tenant"
    expires_at: str | None = Field(
        default=None,
        description=f"When the key stops working: {EXPIRY_HELP}; null: never.",
        json_schema_extra=_expiry_schema,
    )

    @model_validator(mode="before")
    @classmethod
    def _known_fields(cls, data: Any) -> Any:
        """An unknown field is 400 naming it (and the field it resembles), before the rest."""
        if isinstance(data, dict):
            refuse_unknown(data, cls.model_fields)
        return data


def _tenant(name: str) -> str:
    if not TENANT_RE.match(name):
        raise BadRequest(f"tenant: {_TENANT_HELP}")
    return name


@router.get("/v1/keys", responses={**problems(400, 401, 403, 503)})
async def list_keys(
    _op: Operator,
    services: ServicesDep,
    tenant: Annotated[
        str | None, Query(description="Only this tenant's keys.", pattern=TENANT_RE.pattern)
    ] = None,
) -> KeyList:
    """Every key (or one tenant's), oldest first, with its status."""
    if tenant is not None:
        _tenant(tenant)
    rows = await run_in_threadpool(services.store.tenancy.list_keys, tenant)
    now = services.clock()
    return KeyList(keys=[KeyRecord(**key_record(row, now=now)) for row in rows])


@router.post("/v1/keys", status_code=201, responses={**problems(400, 401, 403, 503)})
async def create_key(body: NewKey, _op: Operator, services: ServicesDep) -> NewKeyRecord:
    """A new key; the answer carries the key itself, the only time it is shown."""
    tenant = _tenant(body.tenant)
    now = services.clock()
    expires_at = None
    if body.expires_at is not None:
        try:
            expires_at = parse_expiry(body.expires_at, now=now)
        except ValueError:
            raise BadRequest(f"expires_at: give {EXPIRY_HELP}") from None
        if expires_at <= now:
            raise ExpiryPassed("expires_at is in the past: the key would never work")
    tenancy = services.store.tenancy
    key_id, key = await run_in_threadpool(
        lambda: tenancy.new_key(tenant, now=now, role=body.role, expires_at=expires_at)
    )
    row = await run_in_threadpool(tenancy.key, key_id)
    assert row is not None  # written just now; keys are never deleted
    audit.info("key created", extra={"key_id": key_id, "tenant": tenant, "role": body.role})
    return NewKeyRecord(**key_record(row, now=now), key=key)


@router.delete("/v1/keys/{key_id}", responses={**problems(401, 403, 404, 503)})
async def revoke_key(
    key_id: str, request: Request, _op: Operator, services: ServicesDep
) -> KeyRecord:
    """Revoke a key at once (every API host reads keys per request; an operator's own key
    stops at its next request). Revoking a revoked key answers its record again."""
    await no_body(request)
    if not KEY_ID_RE.match(key_id):
        raise NotFound("no key with that id (k_…)")
    now = services.clock()
    tenancy = services.store.tenancy
    revoked = await run_in_threadpool(lambda: tenancy.revoke_key(key_id, now=now))
    row = await run_in_threadpool(tenancy.key, key_id)
    if row is None:
        raise NotFound("no key with that id")
    if revoked is not None:
        audit.info(
            "key revoked", extra={"key_id": key_id, "tenant": row["tenant"], "role": row["role"]}
        )
    return KeyRecord(**key_record(row, now=now))
