"""Through the service: a redaction for names of a page in writing the name model does not read
ends in review with the reason ``UNSUPPORTED_SCRIPT`` and a held copy, or, under
``PRESSROOM_UNSUPPORTED_SCRIPT=refuse``, rejected with it (a dead letter); never
``UNREADABLE_SCAN`` and never complete (issue 41, item 6)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.service import Services, open_services
from pressroom.settings import RedactionSettings, Settings
from pressroom.testing import FakeOcrEngine
from tests.conftest import FakeClock
from tests.integration.test_service import png_bytes, post, work

pytestmark = pytest.mark.integration

# what the fake engine "reads" on the scan: French prose, a name in it
FRENCH = (
    "Le conseil municipal s'est réuni lundi à la mairie pour discuter du budget de la ville.",
    "Madame Claire Dubois a présenté le rapport de la commission des finances et des travaux.",
    "Les travaux prévus dans les écoles seront terminés au printemps, selon le maire.",
)
ENGLISH = (
    "The council met on Monday at the town hall to discuss the budget of the city.",
    "Mrs Claire Dubois presented the report of the finance committee and the works.",
    "The works planned in the schools will be finished by spring, said the mayor.",
)


def client_for(services: Services) -> tuple[TestClient, dict[str, str]]:
    key = services.store.tenancy.create_key("acme", now=services.clock())
    return TestClient(create_app(services), client=("127.0.0.1", 50000)), {
        "Authorization": f"Bearer {key}"
    }


@pytest.fixture
def refusing(tmp_path: Path, clock: FakeClock) -> Iterator[Services]:
    settings = Settings(
        data_dir=tmp_path / "data",
        scratch_dir=tmp_path / "scratch",
        redaction=RedactionSettings(unsupported_script="refuse"),
    )
    settings.scratch_dir.mkdir()
    svc = open_services(settings)
    svc.clock = clock
    yield svc
    svc.store.db.engine.dispose()


def test_a_french_page_redacted_for_names_waits_in_review_with_its_reason(
    services: Services, tmp_path: Path
) -> None:
    client, headers = client_for(services)
    job_id = post(client, headers, png_bytes(tmp_path), redact="name").json()["id"]
    work(services, FakeOcrEngine(lines=FRENCH))
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["reason"]) == ("review", "UNSUPPORTED_SCRIPT")
    assert job["artifact_url"] is None
    held = client.get(f"/v1/jobs/{job_id}/held", headers=headers)
    assert held.status_code == 200 and held.content.startswith(b"%PDF")
    # the same page in English is delivered
    job_id = post(client, headers, png_bytes(tmp_path), redact="name").json()["id"]
    work(services, FakeOcrEngine(lines=ENGLISH))
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert job["state"] == "complete", job


def test_the_refuse_setting_rejects_it_with_its_reason(refusing: Services, tmp_path: Path) -> None:
    client, headers = client_for(refusing)
    job_id = post(client, headers, png_bytes(tmp_path), redact="name").json()["id"]
    work(refusing, FakeOcrEngine(lines=FRENCH))
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["reason"]) == ("rejected", "UNSUPPORTED_SCRIPT")
    # a redaction for account numbers alone is not held for the language
    job_id = post(client, headers, png_bytes(tmp_path), redact="account-number").json()["id"]
    work(refusing, FakeOcrEngine(lines=FRENCH))
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert job["state"] == "complete", job
