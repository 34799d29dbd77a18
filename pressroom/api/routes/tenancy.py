"""A tenant's own settings (its webhook secret, and rotating it) and an operator's customers of
a tenant."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool

from pressroom.api.deps import Operator, ServicesDep, Tenant
from pressroom.api.openapi import CUSTOMER_BODY, CUSTOMER_SCHEMA, json_body, problems
from pressroom.errors import BadRequest
from pressroom.intake import CUSTOMER_RE
from pressroom.storage import TENANT_RE
from pressroom.web.single import known_query, no_body, read_json, refuse_unknown_keys

router = APIRouter(dependencies=[Depends(known_query)])
audit = logging.getLogger("pressroom.audit")


@router.get(
    "/v1/webhook-secret",
    tags=["webhooks"],
    responses={
        200: {
            "description": "The secret (whsec_...).",
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "required": ["secret"],
                        "properties": {"secret": {"type": "string"}},
                    }
                }
            },
        },
        **problems(401, 503),
    },
)
async def webhook_secret(who: Tenant, services: ServicesDep) -> dict[str, str]:
    """The secret that signs this tenant's webhooks (Standard Webhooks, whsec_...)."""
    secret = await run_in_threadpool(
        lambda: services.store.outbox.webhook_secret(who, now=services.clock())
    )
    return {"secret": secret}


class SecretRotation(BaseModel):
    """A rotated webhook secret."""

    secret: str = Field(description="The new secret (whsec_...); it signs from now on.")
    previous_until: float | None = Field(
        description="Until when (epoch seconds) the old secret still signs beside the new one; "
        "null when there was no old secret."
    )


@router.post(
    "/v1/webhook-secret/rotate",
    tags=["webhooks"],
    responses={**problems(401, 503)},
)
async def rotate_webhook_secret(
    request: Request, who: Tenant, services: ServicesDep
) -> SecretRotation:
    """A new signing secret. Until ``previous_until`` every webhook carries two signatures,
    the new secret's first; a second rotation inside that window ends the oldest at once."""
    await no_body(request)
    now = services.clock()
    overlap_s = services.settings.webhooks.secret_overlap_s
    secret, until = await run_in_threadpool(
        lambda: services.store.outbox.rotate_webhook_secret(who, now=now, overlap_s=overlap_s)
    )
    audit.info("webhook secret rotated", extra={"tenant": who})
    return SecretRotation(secret=secret, previous_until=until)


@router.post(
    "/v1/customers",
    tags=["customers"],
    status_code=201,
    response_model=None,
    responses={**json_body("Customer", "Created or changed.", 201), **problems(400, 401, 403, 503)},
    openapi_extra=CUSTOMER_BODY,
)
async def set_customer(request: Request, _op: Operator, services: ServicesDep) -> dict[str, str]:
    """``{"tenant", "id", "status": "active"|"suspended"}``: create or change a customer."""
    body = await read_json(request, "customer")
    refuse_unknown_keys(body, CUSTOMER_SCHEMA, "customer")
    try:
        tenant_name, customer_id = str(body["tenant"]), str(body["id"])
        status = str(body.get("status", "active"))
    except (ValueError, KeyError, TypeError):
        raise BadRequest('send JSON {"tenant": ..., "id": ..., "status": ...}') from None
    if (
        not CUSTOMER_RE.match(customer_id)
        or not TENANT_RE.match(tenant_name)
        or status not in ("active", "suspended")
    ):
        raise BadRequest("bad customer id or status (active | suspended)")
    await run_in_threadpool(
        lambda: services.store.tenancy.set_customer(
            tenant_name, customer_id, status=status, now=services.clock()
        )
    )
    return {"tenant": tenant_name, "id": customer_id, "status": status}
