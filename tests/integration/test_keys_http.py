"""Keys over HTTP with an operator key: the CLI's ids and records, never a secret listed, revoked
at once (an operator's own key too), every refusal a problem, every change an audit line."""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.cli import main
from pressroom.logs import formatter
from pressroom.service import Services
from tests.conftest import FakeClock

pytestmark = pytest.mark.integration

FIELDS = {
    "id",
    "tenant",
    "role",
    "created_at",
    "last_used_at",
    "expires_at",
    "revoked_at",
    "status",
}


class Lines(logging.Handler):
    """Audit lines as the service writes them (through the allow-list)."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(formatter())
        self.lines: list[dict[str, object]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(json.loads(self.format(record)))


@pytest.fixture
def audit() -> Iterator[Lines]:
    handler = Lines()
    logger = logging.getLogger("pressroom.audit")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


@pytest.fixture
def client(services: Services) -> TestClient:
    return TestClient(create_app(services))


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture
def op(services: Services) -> dict[str, str]:
    return bearer(services.store.tenancy.create_key("ops", now=services.clock(), role="operator"))


def problem(response: Any, status: int, code: str) -> dict[str, object]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, object] = response.json()
    assert body["code"] == code and body["status"] == status
    return body


def test_an_operator_lists_keys_with_the_clis_fields_and_never_a_secret(
    client: TestClient, services: Services, op: dict[str, str], clock: FakeClock
) -> None:
    tenancy = services.store.tenancy
    acme_id, acme_key = tenancy.new_key("acme", now=clock())
    globex_id, _ = tenancy.new_key("globex", now=clock(), expires_at=clock() + 60)
    tenancy.revoke_key(tenancy.new_key("acme", now=clock())[0], now=clock())
    clock.advance(120)

    listed = client.get("/v1/keys", headers=op)
    assert listed.status_code == 200
    keys = listed.json()["keys"]
    assert all(set(k) == FIELDS for k in keys)
    assert acme_key not in listed.text and acme_key[3:] not in listed.text
    by_id = {k["id"]: k for k in keys}
    assert by_id[acme_id]["status"] == "live" and by_id[acme_id]["role"] == "tenant"
    assert by_id[globex_id]["status"] == "expired"
    assert sorted(k["status"] for k in keys if k["tenant"] == "acme") == ["live", "revoked"]
    assert {k["id"] for k in keys} == {row["id"] for row in tenancy.list_keys()}

    only = client.get("/v1/keys", params={"tenant": "globex"}, headers=op).json()["keys"]
    assert [k["id"] for k in only] == [globex_id]
    problem(client.get("/v1/keys", params={"tenant": "../x"}, headers=op), 400, "BAD_REQUEST")


def test_a_tenant_key_is_forbidden_and_no_key_is_unauthorized(
    client: TestClient, services: Services
) -> None:
    tenant = bearer(services.store.tenancy.create_key("acme", now=services.clock()))
    for method, path, body in (
        ("GET", "/v1/keys", None),
        ("POST", "/v1/keys", {"tenant": "acme"}),
        ("DELETE", "/v1/keys/k_0123456789ab", None),
    ):
        problem(client.request(method, path, headers=tenant, json=body), 403, "FORBIDDEN")
        missing = client.request(method, path, json=body)
        problem(missing, 401, "UNAUTHORIZED")
        assert missing.headers["www-authenticate"].startswith("Bearer")
    assert len(services.store.tenancy.list_keys()) == 1  # nothing was made


def test_a_created_key_is_shown_once_works_and_is_the_clis_key(
    client: TestClient,
    services: Services,
    op: dict[str, str],
    clock: FakeClock,
    audit: Lines,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = client.post("/v1/keys", headers=op, json={"tenant": "acme", "expires_at": "90d"})
    assert made.status_code == 201
    body = made.json()
    assert set(body) == FIELDS | {"key"} and body["id"].startswith("k_")
    assert body["status"] == "live" and body["role"] == "tenant"
    assert body["expires_at"] == pytest.approx(clock() + 90 * 86400)
    assert client.get("/v1/webhook-secret", headers=bearer(body["key"])).status_code == 200

    listed = client.get("/v1/keys", headers=op).json()["keys"]
    assert body["key"] not in json.dumps(listed)
    assert {k["id"]: k["last_used_at"] for k in listed}[body["id"]] == clock()

    operator = client.post(
        "/v1/keys",
        headers=op,
        json={"tenant": "ops2", "role": "operator", "expires_at": "2099-01-31T18:00:00Z"},
    ).json()
    assert (
        operator["role"] == "operator"
        and operator["expires_at"] == dt.datetime(2099, 1, 31, 18, tzinfo=dt.UTC).timestamp()
    )
    assert client.get("/v1/keys", headers=bearer(operator["key"])).status_code == 200

    line = next(x for x in audit.lines if x["event"] == "key created")
    assert line == {**line, "key_id": body["id"], "tenant": "acme", "role": "tenant"}
    assert body["key"] not in json.dumps(audit.lines)

    # the CLI sees the same ids (its database is the services' data dir)
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(services.settings.data_dir))
    assert main(["keys", "list", "--tenant", "acme"]) == 0
    assert body["id"] in capsys.readouterr().out


@pytest.mark.parametrize(
    "body",
    [
        {"tenant": "../etc"},
        {"tenant": ""},
        {"tenant": "acme", "role": "admin"},
        {"tenant": "acme", "expires_at": "soon"},
        {"role": "tenant"},
        [],
    ],
)
def test_a_bad_new_key_is_a_bad_request_and_makes_nothing(
    client: TestClient, services: Services, op: dict[str, str], body: object
) -> None:
    problem(client.post("/v1/keys", headers=op, json=body), 400, "BAD_REQUEST")
    assert len(services.store.tenancy.list_keys()) == 1  # the operator's own


def test_a_new_key_that_has_already_expired_is_refused_and_makes_nothing(
    client: TestClient, services: Services, op: dict[str, str]
) -> None:
    problem(
        client.post("/v1/keys", headers=op, json={"tenant": "acme", "expires_at": "2001-01-01"}),
        400,
        "EXPIRED",
    )
    assert len(services.store.tenancy.list_keys()) == 1  # the operator's own


def test_revoking_holds_at_once_repeats_and_names_unknown_ids(
    client: TestClient, services: Services, op: dict[str, str], audit: Lines
) -> None:
    key_id, key = services.store.tenancy.new_key("acme", now=services.clock())
    assert client.get("/v1/webhook-secret", headers=bearer(key)).status_code == 200

    revoked = client.delete(f"/v1/keys/{key_id}", headers=op)
    assert revoked.status_code == 200
    assert revoked.json()["status"] == "revoked" and revoked.json()["id"] == key_id
    assert revoked.json()["revoked_at"] == services.clock()
    problem(client.get("/v1/webhook-secret", headers=bearer(key)), 401, "UNAUTHORIZED")
    again = client.delete(f"/v1/keys/{key_id}", headers=op)
    assert again.status_code == 200 and again.json() == revoked.json()
    assert [x["key_id"] for x in audit.lines if x["event"] == "key revoked"] == [key_id]
    assert {"tenant": "acme", "role": "tenant"}.items() <= audit.lines[-1].items()

    problem(client.delete("/v1/keys/k_ffffffffffff", headers=op), 404, "NOT_FOUND")
    # a key's value is never taken in a URL (it would be logged): only ids
    _other_id, other = services.store.tenancy.new_key("acme", now=services.clock())
    problem(client.delete(f"/v1/keys/{other}", headers=op), 404, "NOT_FOUND")
    assert client.get("/v1/webhook-secret", headers=bearer(other)).status_code == 200


def test_an_operator_may_revoke_its_own_key_which_stops_at_the_next_request(
    client: TestClient, services: Services, op: dict[str, str]
) -> None:
    (own,) = client.get("/v1/keys", headers=op).json()["keys"]
    assert client.delete(f"/v1/keys/{own['id']}", headers=op).status_code == 200
    problem(client.get("/v1/keys", headers=op), 401, "UNAUTHORIZED")
