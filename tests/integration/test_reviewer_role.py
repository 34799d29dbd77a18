"""A reviewer's key: the tenant's review routes and desk, and nothing else — refused 403 on every
other operation of the OpenAPI document, with real and made-up ids alike, before anything is
looked up or read."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.desk.gate import KeyGate
from pressroom.service import Services
from pressroom.testing import FakeOcrEngine
from tests.integration.test_openapi import OPEN_ROUTES, operations
from tests.integration.test_service import png_bytes, work

pytestmark = pytest.mark.integration

REVIEW_ROUTES = {
    ("GET", "/v1/review"),
    ("GET", "/v1/jobs/{job_id}/held"),
    ("GET", "/v1/jobs/{job_id}/review-sheet"),
    ("POST", "/v1/jobs/{job_id}/corrections"),
    ("POST", "/v1/jobs/{job_id}/approve"),
    ("POST", "/v1/jobs/{job_id}/reject"),
}
LEAK = ("Account number: 12345678", "Ordinary words stay.")


@pytest.fixture
def setup(services: Services, tmp_path: Path) -> tuple[TestClient, dict[str, str], str, str]:
    """A client off loopback (loopback-only routes ask for a key too), the tenant's key, its
    reviewer's key and one of the tenant's jobs held for review."""
    tenant = services.store.tenancy.create_key("acme", now=services.clock())
    reviewer = services.store.tenancy.create_key("acme", now=services.clock(), role="reviewer")
    client = TestClient(create_app(services), client=("203.0.113.9", 50000))
    done = client.post(
        "/v1/jobs",
        headers={"Authorization": f"Bearer {tenant}"},
        files={"file": ("x.png", io.BytesIO(png_bytes(tmp_path)))},
        data={"redact": "account-number"},
    )
    assert done.status_code == 202, done.text
    work(services, FakeOcrEngine(lines=LEAK))
    return client, {"Authorization": f"Bearer {tenant}"}, reviewer, done.json()["id"]


def test_a_reviewer_key_is_refused_on_every_other_operation(
    setup: tuple[TestClient, dict[str, str], str, str],
) -> None:
    client, _tenant, reviewer, job_id = setup
    headers = {"Authorization": f"Bearer {reviewer}"}
    checked = 0
    every = operations(client.app)
    others = [(m, p) for m, p, _o in every if (m, p) not in OPEN_ROUTES | REVIEW_ROUTES]
    assert len(every) == len(others) + len(OPEN_ROUTES) + len(REVIEW_ROUTES)  # all are known
    for method, path in others:
        for ident in (job_id, "00000000-0000-0000-0000-000000000000", "k_made_up"):
            url = re.sub(r"\{[^}]+\}", ident, path)
            answer = client.request(method, url, headers=headers, json={"x": 1})
            assert answer.status_code == 403, (method, path, answer.status_code, answer.text)
            assert answer.json()["code"] == "FORBIDDEN", (method, path)
            checked += 1
    assert checked == 3 * len(others) and len(others) >= 10  # each with three ids


def test_a_reviewer_key_reviews_and_the_decision_says_so(
    setup: tuple[TestClient, dict[str, str], str, str], services: Services
) -> None:
    client, tenant, reviewer, job_id = setup
    headers = {"Authorization": f"Bearer {reviewer}"}
    queue = client.get("/v1/review", headers=headers)
    assert queue.status_code == 200 and [j["id"] for j in queue.json()["jobs"]] == [job_id]
    assert client.get(f"/v1/jobs/{job_id}/held", headers=headers).status_code == 200
    assert client.get(f"/v1/jobs/{job_id}/review-sheet", headers=headers).status_code == 200
    done = client.post(f"/v1/jobs/{job_id}/approve", headers=headers)
    assert done.status_code == 200 and done.json()["state"] == "complete"
    (decision,) = done.json()["decisions"]
    assert decision["action"] == "approve" and decision["role"] == "reviewer"
    # the tenant's own key still does everything, the job's JSON included
    assert client.get(f"/v1/jobs/{job_id}", headers=tenant).status_code == 200
    # another tenant's reviewer sees nothing of acme's
    other = services.store.tenancy.create_key("globex", now=0, role="reviewer")
    assert (
        client.get(
            f"/v1/jobs/{job_id}/held", headers={"Authorization": f"Bearer {other}"}
        ).status_code
        == 404
    )


def test_a_reviewer_key_signs_in_at_the_desk_for_its_tenant(services: Services) -> None:
    key = services.store.tenancy.create_key("acme", now=services.clock(), role="reviewer")
    viewer = KeyGate(services).sign_in(key)
    assert viewer is not None and (viewer.tenant, viewer.role) == ("acme", "reviewer")
