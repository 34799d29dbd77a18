"""Every review decision recorded: which key decided, when, what changed; on the job and the
dashboard."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from pressroom.app import create_app
from pressroom.jobs.schema import review_decisions
from pressroom.service import Services
from pressroom.testing import FakeOcrEngine
from tests.integration.test_service import png_bytes, post, work

pytestmark = pytest.mark.integration
LEAKY = FakeOcrEngine(lines=("Account number: 12345678", "Ordinary words stay."))


@pytest.fixture
def desk(services: Services) -> tuple[TestClient, dict[str, str], str]:
    key_id, key = services.store.tenancy.new_key("acme", now=services.clock())
    client = TestClient(create_app(services), client=("127.0.0.1", 50000))
    return client, {"Authorization": f"Bearer {key}"}, key_id


def held_job(client: TestClient, headers: dict[str, str], services: Services, tmp_path: Any) -> str:
    job_id = str(post(client, headers, png_bytes(tmp_path), redact="account-number").json()["id"])
    work(services, LEAKY)
    assert client.get(f"/v1/jobs/{job_id}", headers=headers).json()["state"] == "review"
    return job_id


def rows(services: Services, job_id: str) -> list[dict[str, Any]]:
    with services.store.db.tx(read_only=True) as conn:
        found = conn.execute(
            select(review_decisions).where(review_decisions.c.job_id == job_id)
        ).mappings()
        return [dict(row) for row in found]


def test_an_approval_is_recorded_once_with_the_deciding_key_and_shown_on_the_job(
    desk: tuple[TestClient, dict[str, str], str], services: Services, tmp_path: Any
) -> None:
    client, headers, key_id = desk
    job_id = held_job(client, headers, services, tmp_path)
    assert client.get(f"/v1/jobs/{job_id}", headers=headers).json()["decisions"] == []
    decided_at = services.clock()
    approved = client.post(f"/v1/jobs/{job_id}/approve", headers=headers).json()
    assert approved["decisions"] == [
        {"action": "approve", "at": decided_at, "key_id": key_id, "role": "tenant"}
    ]
    [row] = rows(services, job_id)
    assert (row["tenant"], row["key_id"], row["action"]) == ("acme", key_id, "approve")
    # what changed: the published copy, by key and digest
    assert row["detail"]["artifact_sha256"] == approved["artifact_sha256"]
    assert row["detail"]["artifact_key"].startswith("artifacts/")
    # a second approve changes nothing and records nothing
    assert client.post(f"/v1/jobs/{job_id}/approve", headers=headers).status_code == 404
    assert client.post(f"/v1/jobs/{job_id}/reject", headers=headers).status_code == 404
    assert len(rows(services, job_id)) == 1
    shown = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert shown["decisions"] == approved["decisions"]
    listed = client.get("/v1/jobs", headers=headers).json()["jobs"]
    assert [j["decisions"] for j in listed if j["id"] == job_id] == [approved["decisions"]]


def test_a_rejection_is_recorded_with_the_held_digest_and_the_key_never_the_secret(
    desk: tuple[TestClient, dict[str, str], str], services: Services, tmp_path: Any
) -> None:
    client, headers, key_id = desk
    job_id = held_job(client, headers, services, tmp_path)
    held_key = services.store.queue.get(job_id)
    assert held_key is not None and held_key.artifact_key
    rejected = client.post(f"/v1/jobs/{job_id}/reject", headers=headers).json()
    assert [(d["action"], d["key_id"]) for d in rejected["decisions"]] == [("reject", key_id)]
    [row] = rows(services, job_id)
    assert row["detail"] == {"held_sha256": held_key.artifact_key.rsplit("/", 1)[1][:-4]}
    secret = headers["Authorization"].removeprefix("Bearer ")
    assert secret not in str(row)


def test_another_tenants_key_cannot_decide_and_records_nothing(
    desk: tuple[TestClient, dict[str, str], str], services: Services, tmp_path: Any
) -> None:
    client, headers, _ = desk
    job_id = held_job(client, headers, services, tmp_path)
    other = {"Authorization": f"Bearer {services.store.tenancy.create_key('globex', now=0)}"}
    for action in ("approve", "reject"):
        assert client.post(f"/v1/jobs/{job_id}/{action}", headers=other).status_code == 404
    assert rows(services, job_id) == []
    assert client.get(f"/v1/jobs/{job_id}", headers=headers).json()["state"] == "review"


def test_the_dashboard_lists_the_decision_with_its_key_and_no_document_data(
    desk: tuple[TestClient, dict[str, str], str], services: Services, tmp_path: Any
) -> None:
    client, headers, key_id = desk
    job_id = held_job(client, headers, services, tmp_path)
    assert client.post(f"/v1/jobs/{job_id}/reject", headers=headers).status_code == 200
    page = client.get("/dashboard").text
    section = page.split('id="decisions"', 1)[1].split("</section>", 1)[0]
    assert job_id in section and "reject" in section and key_id in section
    assert "12345678" not in page
