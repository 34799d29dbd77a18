"""GET /v1/jobs: the caller's jobs newest first, a page at a time through ``next`` (and the
Link header), stable while jobs arrive; filters; another tenant's jobs never show."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.jobs.model import Lane, NewJob
from pressroom.service import Services
from tests.conftest import FakeClock

Api = tuple[TestClient, dict[str, str]]


@pytest.fixture
def api(services: Services) -> Api:
    key = services.store.tenancy.create_key("acme", now=services.clock())
    return TestClient(create_app(services)), {"Authorization": f"Bearer {key}"}


def insert(services: Services, tenant: str = "acme", lane: Lane = Lane.BULK, at: float = 0) -> str:
    job_id = str(uuid.uuid4())
    job = NewJob(
        id=job_id,
        tenant=tenant,
        lane=lane,
        source_key=f"sources/{tenant}/{job_id}/source",
        source_sha256="ab" * 32,
        source_bytes=10,
        kind="pdf",
        template="plain",
    )
    services.store.queue.insert(job, now=at or services.clock(), max_attempts=3)
    return job_id


def pages(client: TestClient, headers: dict[str, str], url: str) -> list[dict[str, Any]]:
    """Every page from ``url`` on, following ``next``."""
    seen = []
    while url:
        response = client.get(url, headers=headers)
        assert response.status_code == 200, response.text
        seen.append(response.json())
        url = response.json()["next"]
    return seen


def test_jobs_come_newest_first_in_pages_linked_by_next(
    api: Api, services: Services, clock: FakeClock
) -> None:
    client, headers = api
    made = []
    for _ in range(7):
        made.append(insert(services))
        clock.advance(1)
    first = client.get("/v1/jobs?limit=3", headers=headers)
    body = first.json()
    assert [j["id"] for j in body["jobs"]] == made[::-1][:3]
    assert first.headers["link"] == f'<{body["next"]}>; rel="next"'
    # each job as GET /v1/jobs/{id} shows it
    one = client.get(f"/v1/jobs/{made[-1]}", headers=headers).json()
    assert body["jobs"][0] == one
    all_pages = pages(client, headers, "/v1/jobs?limit=3")
    assert [len(p["jobs"]) for p in all_pages] == [3, 3, 1]
    assert [j["id"] for p in all_pages for j in p["jobs"]] == made[::-1]
    last = client.get("/v1/jobs?limit=50", headers=headers)
    assert last.json()["next"] is None and "link" not in last.headers


def test_jobs_created_meanwhile_neither_repeat_nor_shift_the_pages(
    api: Api, services: Services, clock: FakeClock
) -> None:
    client, headers = api
    made = [insert(services, at=clock.now)]  # one shared created_at: the id breaks the tie
    made += [insert(services, at=clock.now) for _ in range(3)]
    first = client.get("/v1/jobs?limit=2", headers=headers).json()
    clock.advance(5)
    insert(services)  # newer than the cursor: it belongs before the first page
    rest = pages(client, headers, first["next"])
    listed = [j["id"] for j in first["jobs"]] + [j["id"] for p in rest for j in p["jobs"]]
    assert sorted(listed) == sorted(made) and len(listed) == len(set(listed))


def test_filters_by_state_lane_and_creation_time(
    api: Api, services: Services, clock: FakeClock
) -> None:
    client, headers = api
    start = clock.now
    old = insert(services)
    clock.advance(100)
    fast = insert(services, lane=Lane.INTERACTIVE)
    claimed = services.store.queue.claim((Lane.INTERACTIVE,), "w", now=clock.now, lease_s=30)
    assert claimed is not None and claimed.id == fast
    clock.advance(100)
    newest = insert(services)

    def ids(query: str) -> list[str]:
        response = client.get(f"/v1/jobs?{query}", headers=headers)
        assert response.status_code == 200, response.text
        return [j["id"] for j in response.json()["jobs"]]

    def stamp(at: float) -> str:
        return datetime.fromtimestamp(at, UTC).isoformat().replace("+00:00", "Z")

    assert ids("state=running") == [fast]
    assert ids("state=accepted") == [newest, old]
    assert ids("lane=interactive") == [fast]
    assert ids(f"created_after={stamp(start + 50)}") == [newest, fast]
    assert ids(f"created_before={stamp(start + 150)}") == [fast, old]
    both = f"created_after={stamp(start + 50)}&created_before={stamp(start + 150)}"
    assert ids(both) == [fast]
    assert ids("state=accepted&lane=interactive") == []
    # filters travel with the next link
    paged = client.get("/v1/jobs?state=accepted&limit=1", headers=headers).json()
    assert "state=accepted" in paged["next"]
    assert [j["id"] for j in client.get(paged["next"], headers=headers).json()["jobs"]] == [old]


def test_another_tenant_sees_none(api: Api, services: Services) -> None:
    client, headers = api
    insert(services, tenant="acme")
    other = services.store.tenancy.create_key("other", now=services.clock())
    body = client.get("/v1/jobs", headers={"Authorization": f"Bearer {other}"}).json()
    assert body == {"jobs": [], "next": None}
    assert len(client.get("/v1/jobs", headers=headers).json()["jobs"]) == 1
    assert client.get("/v1/jobs").status_code == 401


@pytest.mark.parametrize(
    "query",
    [
        "limit=0",
        "limit=501",
        "limit=many",
        "state=lost",
        "lane=fast",
        "created_after=yesterday",
        "created_after=2026-12-01T09:30:00",  # no offset: not RFC 3339
        "created_before=2026-12-01",
        "created_after=2026-02-30T09:30:00Z",  # no such day
        "cursor=garbage",
    ],
)
def test_a_bad_parameter_is_a_bad_request(api: Api, query: str) -> None:
    client, headers = api
    response = client.get(f"/v1/jobs?{query}", headers=headers)
    assert response.status_code == 400, query
    assert response.headers["content-type"] == "application/problem+json"
    # a cursor is a token the service wrote: one it did not write has its own code
    code = "INVALID_CURSOR" if query.startswith("cursor=") else "BAD_REQUEST"
    assert response.json()["code"] == code


@pytest.mark.parametrize(
    "value",
    ["2026-12-01T09:30:00Z", "2026-12-01t09:30:00z", "2026-12-01T10:30:00.5+01:00"],
)
def test_every_rfc_3339_form_is_read(api: Api, value: str) -> None:
    client, headers = api
    response = client.get("/v1/jobs", params={"created_after": value}, headers=headers)
    assert response.status_code == 200, (value, response.text)


def test_a_tampered_cursor_is_refused(api: Api, services: Services, clock: FakeClock) -> None:
    client, headers = api
    for _ in range(3):
        insert(services)
        clock.advance(1)
    cursor = client.get("/v1/jobs?limit=1", headers=headers).json()["next"].split("cursor=")[1]
    # flip one character of the cursor: it still decodes, but it is not one this service wrote
    flipped = cursor[:-3] + ("A" if cursor[-3] != "A" else "B") + cursor[-2:]
    response = client.get(f"/v1/jobs?cursor={flipped}", headers=headers)
    assert (response.status_code, response.json()["code"]) == (400, "INVALID_CURSOR")
    assert client.get(f"/v1/jobs?cursor={cursor}", headers=headers).status_code == 200
