"""Every error the API answers is an RFC 9457 problem (application/problem+json) with our code:
Pressroom's own refusals and the framework's alike."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.service import Services


@pytest.fixture
def client(services: Services) -> TestClient:
    return TestClient(create_app(services), client=("127.0.0.1", 50000))


def _problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    assert set(body) == {"type", "title", "status", "detail", "code"}
    assert (body["status"], body["code"]) == (status, code)
    assert body["type"] == "urn:pressroom:problem:" + code.lower().replace("_", "-")
    return body


def test_no_key_is_a_problem_with_a_bearer_challenge(client: TestClient) -> None:
    response = client.get("/v1/jobs/j1")
    _problem(response, 401, "UNAUTHORIZED")
    assert response.headers["www-authenticate"].startswith("Bearer")


def test_an_unknown_path_and_a_wrong_method_are_problems(
    client: TestClient, services: Services
) -> None:
    _problem(client.get("/v1/nowhere"), 404, "NOT_FOUND")
    key = services.store.tenancy.create_key("acme", now=services.clock())
    response = client.put("/v1/jobs/j1", headers={"Authorization": f"Bearer {key}"})
    _problem(response, 405, "METHOD_NOT_ALLOWED")
    assert "GET" in response.headers["allow"]


def test_our_refusals_keep_their_code_and_say_what_happened(
    client: TestClient, services: Services
) -> None:
    key = services.store.tenancy.create_key("acme", now=services.clock())
    body = _problem(
        client.get("/v1/jobs/nope", headers={"Authorization": f"Bearer {key}"}),
        404,
        "NOT_FOUND",
    )
    assert body["title"] == "Not found" and body["detail"]
    empty = client.post(
        "/v1/jobs",
        headers={"Authorization": f"Bearer {key}"},
        files={"file": ("upload", b"")},
    )
    _problem(empty, 415, "BAD_MIME")
