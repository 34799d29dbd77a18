"""The label is read like the title (issue 40, item 4; security N10): a redaction job whose label
carries a value it removes is held ``REDACTION_LEAK`` and the label withheld — the job, the list,
the dashboard and the webhooks never name it, and the approved copy downloads as ``ID.pdf``."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.redact.leaks import carries_value
from pressroom.service import Services
from pressroom.testing import FakeOcrEngine
from tests.integration.test_labels import disposition_name
from tests.integration.test_service import png_bytes, post, work

pytestmark = pytest.mark.integration
LETTER = FakeOcrEngine(lines=("Dear Jane Whitfield,", "Thank you for your letter of May."))
HOOK = "http://127.0.0.1:9/hook"  # never called here: the outbox rows are what is read


@pytest.fixture
def api(services: Services) -> tuple[TestClient, dict[str, str]]:
    # the fake engine reads its lines from every image it is given, the rows around a burned
    # box too (where they would stand apart from the box): the read-back reads whole pages here
    whole = replace(services.settings.redaction, redetect_sample=1.0)
    services.settings = replace(services.settings, webhook_allow_private=True, redaction=whole)
    key = services.store.tenancy.create_key("acme", now=services.clock())
    return TestClient(create_app(services)), {"Authorization": f"Bearer {key}"}


def test_a_label_carrying_a_found_name_is_withheld_everywhere(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    label = "Jane Whitfield letter.pdf"
    sent = post(client, headers, png_bytes(tmp_path), redact="name", label=label, webhook_url=HOOK)
    assert sent.status_code == 202, sent.text
    job_id = sent.json()["id"]
    work(services, LETTER)
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["reason"]) == ("review", "REDACTION_LEAK"), job
    assert job["label"] is None and "label" in job["message"]
    for shown in (
        json.dumps(job),
        client.get("/v1/jobs", headers=headers).text,
        client.get("/v1/review", headers=headers).text,
        client.get("/dashboard").text,
    ):
        assert "Whitfield" not in shown
    assert client.get("/v1/jobs", headers=headers, params={"label": label}).json()["jobs"] == []
    approved = client.post(f"/v1/jobs/{job_id}/approve", headers=headers)
    assert approved.status_code == 200, approved.text
    done = approved.json()
    assert (done["state"], done["label"]) == ("complete", None)
    got = client.get(done["artifact_url"])
    assert got.status_code == 200
    assert disposition_name(got.headers["content-disposition"]) == f"{job_id}.pdf"
    stored = services.store.queue.get(job_id)
    assert stored is not None and stored.label is None
    hooks = services.store.outbox.deliveries(job_id)
    assert hooks and all("Whitfield" not in json.dumps(h, default=str) for h in hooks)


def test_a_label_without_a_found_value_still_names_the_download(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    job_id = post(client, headers, png_bytes(tmp_path), redact="name", label="Case 41.pdf").json()[
        "id"
    ]
    work(services, LETTER)
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["label"]) == ("complete", "Case 41.pdf"), job
    got = client.get(job["artifact_url"])
    assert disposition_name(got.headers["content-disposition"]) == "Case 41.pdf"


@pytest.mark.parametrize(
    ("label", "carries"),
    [
        ("Jane Whitfield letter.pdf", True),
        ("jane-WHITFIELD_2024", True),  # case and spacing folded, as the leak check folds them
        ("Jâne Whitfíeld", True),  # accents folded
        ("JaneWhitfield", True),
        ("Whitfield", False),  # a part of a value is not the value
        ("Case 41", False),
        (None, False),
    ],
)
def test_a_label_is_compared_as_the_leak_check_compares(label: str | None, carries: bool) -> None:
    assert carries_value(label, {"Jane Whitfield", "12"}) is carries
