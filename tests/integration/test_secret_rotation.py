"""Webhook-secret rotation with an overlap: the new secret signs at once, the old one beside it
(a second signature) until the overlap ends, so receivers holding either secret verify every
delivery across the change; deliveries are signed when sent, not when queued."""

from __future__ import annotations

import hmac
import json
import logging
import uuid
from collections.abc import Iterator
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.jobs.model import Lane, NewJob
from pressroom.logs import formatter
from pressroom.notify.webhooks import deliver_due, signature
from pressroom.orders import JobOrder
from pressroom.service import Services
from tests.conftest import FakeClock
from tests.hookservers import Receiver, receiving

pytestmark = pytest.mark.integration

DAY = 86400.0


@pytest.fixture
def hooks(services: Services) -> Services:
    services.settings = replace(services.settings, webhook_allow_private=True)
    return services


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving() as r:
        yield r


@pytest.fixture
def client(hooks: Services) -> TestClient:
    return TestClient(create_app(hooks))


def bearer(services: Services, tenant: str = "acme") -> dict[str, str]:
    return {"Authorization": f"Bearer {services.store.tenancy.create_key(tenant, now=0)}"}


def queue_webhook(services: Services, url: str, tenant: str = "acme") -> None:
    """A job's final notice in the outbox, as the queue writes it with the job's end."""
    job_id = str(uuid.uuid4())
    new = NewJob(
        id=job_id,
        tenant=tenant,
        lane=Lane.BULK,
        source_key=f"sources/{tenant}/{job_id}/source",
        source_sha256="ab" * 32,
        source_bytes=10,
        kind="pdf",
        template="plain",
        order=JobOrder(webhook_url=url),
    )
    services.store.queue.insert(new, now=services.clock(), max_attempts=4)
    with services.store.db.tx() as conn:
        services.store.outbox.enqueue(conn, job_id, "job.completed", services.clock())


def sent(services: Services, receiver: Receiver) -> tuple[dict[str, str], bytes]:
    """Deliver what is due; the last request the receiver got."""
    before = len(receiver.received)
    assert deliver_due(services, "w") >= 1
    assert len(receiver.received) > before
    return receiver.received[-1]


def verifies(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """A Standard Webhooks receiver holding one secret: any one signature that matches."""
    expected = signature(secret, headers["webhook-id"], int(headers["webhook-timestamp"]), body)
    return any(hmac.compare_digest(expected, s) for s in headers["webhook-signature"].split(" "))


def rotate(client: TestClient, headers: dict[str, str]) -> dict[str, object]:
    response = client.post("/v1/webhook-secret/rotate", headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


def test_the_old_secret_signs_beside_the_new_one_until_the_overlap_ends(
    hooks: Services, client: TestClient, receiver: Receiver, clock: FakeClock
) -> None:
    headers = bearer(hooks)
    old = client.get("/v1/webhook-secret", headers=headers).json()["secret"]
    queue_webhook(hooks, receiver.url)  # queued before the rotation: signed when sent

    rotated = rotate(client, headers)
    new = str(rotated["secret"])
    assert new.startswith("whsec_") and new != old
    assert rotated["previous_until"] == clock() + DAY  # the default overlap
    assert client.get("/v1/webhook-secret", headers=headers).json()["secret"] == new

    head, body = sent(hooks, receiver)
    first, second = head["webhook-signature"].split(" ")
    stamp = int(head["webhook-timestamp"])
    assert first == signature(new, head["webhook-id"], stamp, body)  # the new secret's first
    assert second == signature(old, head["webhook-id"], stamp, body)
    assert verifies(old, head, body) and verifies(new, head, body)

    clock.advance(DAY - 1)
    queue_webhook(hooks, receiver.url)
    head, body = sent(hooks, receiver)
    assert verifies(old, head, body) and verifies(new, head, body)

    clock.advance(1)  # the overlap is over: one signature, the new secret's
    queue_webhook(hooks, receiver.url)
    head, body = sent(hooks, receiver)
    assert " " not in head["webhook-signature"]
    assert verifies(new, head, body) and not verifies(old, head, body)


def test_a_second_rotation_inside_the_overlap_replaces_the_previous_secret(
    hooks: Services, client: TestClient, receiver: Receiver, clock: FakeClock
) -> None:
    headers = bearer(hooks)
    first = client.get("/v1/webhook-secret", headers=headers).json()["secret"]
    second = str(rotate(client, headers)["secret"])
    clock.advance(3600)
    again = rotate(client, headers)
    third = str(again["secret"])
    assert again["previous_until"] == clock() + DAY  # a fresh overlap, for the second secret

    queue_webhook(hooks, receiver.url)
    head, body = sent(hooks, receiver)
    assert len(head["webhook-signature"].split(" ")) == 2
    assert verifies(third, head, body) and verifies(second, head, body)
    assert not verifies(first, head, body)


def test_with_no_overlap_the_old_secret_stops_at_once(
    hooks: Services, client: TestClient, receiver: Receiver, clock: FakeClock
) -> None:
    hooks.settings = replace(
        hooks.settings, webhooks=replace(hooks.settings.webhooks, secret_overlap_s=0.0)
    )
    headers = bearer(hooks)
    old = client.get("/v1/webhook-secret", headers=headers).json()["secret"]
    rotated = rotate(client, headers)
    assert rotated["previous_until"] == clock()
    queue_webhook(hooks, receiver.url)
    head, body = sent(hooks, receiver)
    assert " " not in head["webhook-signature"]
    assert verifies(str(rotated["secret"]), head, body) and not verifies(old, head, body)


def test_a_first_rotation_has_no_old_secret_and_touches_no_other_tenant(
    hooks: Services, client: TestClient, receiver: Receiver
) -> None:
    globex = bearer(hooks, "globex")
    theirs = client.get("/v1/webhook-secret", headers=globex).json()["secret"]
    rotated = rotate(client, bearer(hooks))  # acme never had a secret
    assert rotated["previous_until"] is None
    queue_webhook(hooks, receiver.url)
    head, body = sent(hooks, receiver)
    assert " " not in head["webhook-signature"] and verifies(str(rotated["secret"]), head, body)
    assert client.get("/v1/webhook-secret", headers=globex).json()["secret"] == theirs


def test_rotation_needs_a_tenant_key_and_is_audited_without_the_secret(
    hooks: Services, client: TestClient
) -> None:
    refused = client.post("/v1/webhook-secret/rotate")
    assert refused.status_code == 401 and refused.json()["code"] == "UNAUTHORIZED"
    operator = hooks.store.tenancy.create_key("ops", now=0, role="operator")
    as_operator = client.post(
        "/v1/webhook-secret/rotate", headers={"Authorization": f"Bearer {operator}"}
    )
    assert as_operator.status_code == 401  # an operator key is not a tenant's

    lines: list[str] = []
    handler = logging.Handler()
    handler.setFormatter(formatter())
    handler.emit = lambda record: lines.append(handler.format(record))  # type: ignore[method-assign]
    logger = logging.getLogger("pressroom.audit")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        secret = str(rotate(client, bearer(hooks))["secret"])
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    (line,) = (json.loads(x) for x in lines)
    assert line["event"] == "webhook secret rotated" and line["tenant"] == "acme"
    assert secret not in lines[0] and secret.removeprefix("whsec_") not in lines[0]
