"""A job's label: judged at the door, echoed with the title and the policy, listed and filtered
on, the download's file name (sanitised, whatever the client sent), sealed at rest when
encryption is on, and never in a log line."""

from __future__ import annotations

import base64
import dataclasses
import io
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pikepdf
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from pressroom.app import create_app
from pressroom.jobs.schema import jobs, webhook_secrets
from pressroom.labels import content_disposition, download_name
from pressroom.logs import formatter
from pressroom.service import Services, open_services
from pressroom.settings import Settings, StorageSettings
from tests.conftest import FakeClock
from tests.integration.test_service import api, png_bytes, post, work

pytestmark = pytest.mark.integration
__all__ = ["api"]  # the fixture, shared with test_service

LABEL = 'Case 41/7 "Økonomi" — payout\\form.pdf'


def disposition_name(header: str) -> str:
    """The file name a browser saves under: ``filename*`` when given (RFC 6266), else
    ``filename``."""
    head, star, exact = header.partition("; filename*=")
    if star:
        assert exact.startswith("UTF-8''") and ";" not in exact
        return unquote(exact.removeprefix("UTF-8''"))
    found = re.fullmatch(r'attachment; filename="([^"]*)"', head)
    assert found is not None, header
    return found.group(1)


def test_a_label_is_echoed_listed_and_names_the_download(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    data = png_bytes(tmp_path)
    sent = post(client, headers, data, label=LABEL, title="Payout forms", redact="name")
    assert sent.status_code == 202, sent.text
    body = sent.json()
    assert (body["label"], body["title"], body["redact"], body["template"]) == (
        LABEL,
        "Payout forms",
        ["name"],
        "plain",
    )
    other = post(client, headers, data, label="another case").json()
    bare = post(client, headers, data).json()
    assert (other["label"], bare["label"], bare["redact"], bare["title"]) == (
        "another case",
        None,
        [],
        None,
    )
    listed = client.get("/v1/jobs", headers=headers, params={"label": LABEL}).json()
    assert [j["id"] for j in listed["jobs"]] == [body["id"]]
    assert client.get("/v1/jobs", headers=headers, params={"label": "Case"}).json()["jobs"] == []
    assert len(client.get("/v1/jobs", headers=headers).json()["jobs"]) == 3

    work(services)
    job = client.get(f"/v1/jobs/{body['id']}", headers=headers).json()
    assert job["state"] == "complete", job
    got = client.get(job["artifact_url"])
    assert got.status_code == 200
    header = got.headers["content-disposition"]
    assert "\n" not in header and "\r" not in header
    # the exact name for clients that read filename*, a safe ASCII one for the rest; the
    # label's slash and backslash never make a path
    assert disposition_name(header) == 'Case 41_7 "Økonomi" — payout_form.pdf'
    assert 'filename="Case 41_7 _' in header
    plain = client.get(client.get(f"/v1/jobs/{bare['id']}", headers=headers).json()["artifact_url"])
    assert disposition_name(plain.headers["content-disposition"]) == f"{bare['id']}.pdf"


@pytest.mark.parametrize(
    "label",
    ["x" * 201, "two\nlines", "nul\x00", "tab\tbed", "bell\x07", "line\u2028sep"],
)
def test_a_bad_label_is_refused_at_the_door(
    api: tuple[TestClient, dict[str, str]], tmp_path: Path, label: str
) -> None:
    client, headers = api
    refused = post(client, headers, png_bytes(tmp_path), label=label)
    assert refused.status_code == 400 and refused.json()["code"] == "BAD_REQUEST"
    assert "label" in refused.json()["detail"]


def test_a_label_filter_longer_than_a_label_is_refused(
    api: tuple[TestClient, dict[str, str]],
) -> None:
    client, headers = api
    refused = client.get("/v1/jobs", headers=headers, params={"label": "x" * 201})
    assert refused.status_code == 400


def test_a_label_is_another_tenants_nothing(services: Services, tmp_path: Path) -> None:
    data = png_bytes(tmp_path)
    keys = {t: services.store.tenancy.create_key(t, now=services.clock()) for t in ("a", "b")}
    client = TestClient(create_app(services), client=("127.0.0.1", 50000))
    made = {}
    for tenant, key in keys.items():
        sent = post(client, {"Authorization": f"Bearer {key}"}, data, label="same")
        assert sent.status_code == 202
        made[tenant] = sent.json()["id"]
    for tenant, key in keys.items():
        found = client.get(
            "/v1/jobs", headers={"Authorization": f"Bearer {key}"}, params={"label": "same"}
        ).json()["jobs"]
        assert [j["id"] for j in found] == [made[tenant]]


@pytest.fixture
def sealed(tmp_path: Path, clock: FakeClock) -> Iterator[Services]:
    master = base64.b64encode(b"m" * 32).decode()
    settings = Settings(
        data_dir=tmp_path / "data",
        scratch_dir=tmp_path / "scratch",
        storage=dataclasses.replace(StorageSettings(), master_key=master),
    )
    settings.scratch_dir.mkdir()
    svc = open_services(settings)
    svc.clock = clock
    yield svc
    svc.store.db.engine.dispose()


def test_with_encryption_on_the_label_is_sealed_at_rest(sealed: Services, tmp_path: Path) -> None:
    key = sealed.store.tenancy.create_key("acme", now=sealed.clock())
    client = TestClient(create_app(sealed), client=("127.0.0.1", 50000))
    headers = {"Authorization": f"Bearer {key}"}
    sent = post(client, headers, png_bytes(tmp_path), label="Okafor settlement 2026-118").json()
    assert sent["label"] == "Okafor settlement 2026-118"
    with sealed.store.db.tx(read_only=True) as conn:
        row = conn.execute(select(jobs.c.label, jobs.c.label_digest)).one()
    assert row.label.startswith("s1:") and "Okafor" not in row.label
    assert "Okafor" not in (row.label_digest or "")
    raw = (tmp_path / "data").glob("*.db*")
    for path in raw:
        assert b"Okafor" not in path.read_bytes(), path.name
    listed = client.get("/v1/jobs", headers=headers, params={"label": sent["label"]}).json()
    assert [j["id"] for j in listed["jobs"]] == [sent["id"]]
    # a sealed label is bound to its job: copied onto another job it does not open
    assert sealed.labels.open("another-job", row.label) is None
    assert sealed.labels.open(sent["id"], row.label) == sent["label"]


def test_a_label_is_in_no_log_line(
    api: tuple[TestClient, dict[str, str]],
    services: Services,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    client, headers = api
    label = "Margaret Okafor claim 7781"
    with caplog.at_level(logging.DEBUG):
        job_id = post(client, headers, png_bytes(tmp_path), label=label).json()["id"]
        work(services)
        job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
        client.get(job["artifact_url"])
        client.get("/v1/jobs", headers=headers, params={"label": label})
    assert job["state"] == "complete"
    # the service's own log stream (the pressroom loggers, as the service renders them; the
    # test client's own httpx lines are not the service's)
    render = formatter()
    lines = [
        render.format(r) + r.getMessage() + repr(r.__dict__)
        for r in caplog.records
        if r.name.startswith("pressroom")
    ]
    assert lines and not [line for line in lines if "Okafor" in line]


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        (None, "job-1.pdf"),
        ("scan.PDF", "scan.pdf"),
        ("waiver.tiff", "waiver.pdf"),
        ("case 12", "case 12.pdf"),
        (".pdf", "job-1.pdf"),
    ],
)
def test_the_download_name_comes_from_the_label(label: str | None, expected: str) -> None:
    assert download_name(label, "job-1", ".pdf") == expected


@pytest.mark.parametrize(
    "name",
    [
        'a";b.pdf',
        "x\r\nSet-Cookie: s=1.pdf",
        "../../etc/passwd.pdf",
        "名前.pdf",
        "%41%0d.pdf",
        "   .pdf",
        "a;filename=evil.pdf",
    ],
)
def test_a_content_disposition_cannot_be_broken_out_of(name: str) -> None:
    header = content_disposition(name)
    assert "\r" not in header and "\n" not in header
    plain = header.split("; filename*=")[0]
    assert plain.count('"') == 2 and ";" not in plain.split('filename="')[1]
    got = disposition_name(header)
    assert "/" not in got and "\\" not in got and "\n" not in got


def test_with_encryption_on_titles_and_webhook_secrets_are_sealed_at_rest(
    sealed: Services, tmp_path: Path
) -> None:
    from pressroom.notify.webhooks import deliver_due, signature
    from tests.hookservers import Receiver

    sealed.settings = dataclasses.replace(sealed.settings, webhook_allow_private=True)
    key = sealed.store.tenancy.create_key("acme", now=sealed.clock())
    client = TestClient(create_app(sealed), client=("127.0.0.1", 50000))
    headers = {"Authorization": f"Bearer {key}"}
    title = "Okafor estate payout"
    receiver = Receiver(status=200)
    try:
        sent = post(client, headers, png_bytes(tmp_path), title=title, webhook_url=receiver.url)
        job_id = sent.json()["id"]
        work(sealed)
        secret = client.get("/v1/webhook-secret", headers=headers).json()["secret"]
        assert deliver_due(sealed, "w") == 1
        hook_headers, body = receiver.received[-1]
    finally:
        receiver.close()
    # the title reads back, and is printed in the output, from its sealed form
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert job["title"] == title and job["state"] == "complete"
    pdf = client.get(job["artifact_url"]).content
    with pikepdf.open(io.BytesIO(pdf)) as doc:
        assert str(doc.docinfo.Title) == title
    # the webhook is signed with the secret the tenant sees
    expected = signature(
        secret, hook_headers["webhook-id"], int(hook_headers["webhook-timestamp"]), body
    )
    assert hook_headers["webhook-signature"] == expected
    with sealed.store.db.tx(read_only=True) as conn:
        stored_title = conn.execute(select(jobs.c.title)).scalar_one()
        stored_secret = conn.execute(select(webhook_secrets.c.secret)).scalar_one()
    assert stored_title.startswith("s1:") and "Okafor" not in stored_title
    assert stored_secret.startswith("s1:") and secret not in stored_secret
    secret_body = secret.removeprefix("whsec_").encode()
    for path in (tmp_path / "data").glob("*.db*"):
        data = path.read_bytes()
        assert b"Okafor" not in data and secret_body not in data, path.name
    # each is bound to its place: a title does not open as another job's, nor as a label
    assert sealed.labels.open("another-job", stored_title, purpose="title") is None
    assert sealed.labels.open(job_id, stored_title) is None
    assert sealed.labels.open("globex", stored_secret, purpose="webhook-secret") is None


def test_a_sealed_webhook_secret_no_key_opens_fails_closed(
    sealed: Services, tmp_path: Path
) -> None:
    from pressroom.errors import MasterKeyMissing
    from pressroom.service import secret_box

    secret = sealed.store.outbox.webhook_secret("acme", now=sealed.clock())
    assert sealed.store.outbox.signing_secrets("acme", now=sealed.clock()) == (secret,)
    # the same store read with another master key (a key dropped from the configuration)
    other = dataclasses.replace(sealed.labels, master=b"o" * 32, old=())
    sealed.store.outbox.seal_secret, sealed.store.outbox.open_secret = secret_box(other)
    with pytest.raises(MasterKeyMissing):
        sealed.store.outbox.signing_secrets("acme", now=sealed.clock())


def test_secrets_and_titles_from_before_encryption_still_read(
    services: Services, tmp_path: Path
) -> None:
    """Turning encryption on keeps what was stored readable: a plain secret signs, a title
    stored before titles were sealed (as the migration leaves it, or bare) reads."""
    from pressroom.service import secret_box

    secret = services.store.outbox.webhook_secret("acme", now=services.clock())
    sealing = dataclasses.replace(services.labels, master=b"m" * 32)
    services.store.outbox.seal_secret, services.store.outbox.open_secret = secret_box(sealing)
    assert services.store.outbox.signing_secrets("acme", now=services.clock()) == (secret,)
    assert sealing.open("j1", "p:Week 49", purpose="title") == "Week 49"
    assert sealing.open("j1", "Week 49", purpose="title") == "Week 49"
    assert sealing.open("j1", "Week 49") is None  # a label was always stored marked
