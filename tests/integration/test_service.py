"""The service in process: HTTP in through FastAPI's test client, jobs run by a real JobRunner
with a fake OCR engine, SQLite and a local blob folder underneath."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

import numpy as np
import pikepdf
import pytest
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy import select

from pressroom.app import create_app
from pressroom.errors import StorageUnavailable as StorageUnavailableForTests
from pressroom.jobs.model import JobState, Lane
from pressroom.jobs.schema import review_decisions
from pressroom.redact.policy import RedactionPolicy
from pressroom.service import Services
from pressroom.storage import artifact_key
from pressroom.synth import distort, save_png, text_pdf
from pressroom.templates import registered_template
from pressroom.testing import FakeOcrEngine
from pressroom.worker.publish import artifact_digest
from pressroom.worker.runner import JobRunner
from tests.conftest import FakeClock
from tests.helpers import output_text, small_scan
from tests.hookservers import Receiver

LINES = ("Waiver signed by the participant", "Payout approved 2026")


@pytest.fixture
def api(services: Services) -> tuple[TestClient, dict[str, str]]:
    key = services.store.tenancy.create_key("acme", now=services.clock())
    # the embedded default: the service's own host talks to it over loopback
    local = TestClient(create_app(services), client=("127.0.0.1", 50000))
    return local, {"Authorization": f"Bearer {key}"}


def png_bytes(tmp_path: Path) -> bytes:
    return save_png(small_scan(dpi=100, lines=2).image, tmp_path / "s.png", 100).read_bytes()


def post(client: TestClient, headers: dict[str, str], data: bytes, **form: str) -> Any:
    return client.post(
        "/v1/jobs", headers=headers, files={"file": ("x.pdf", io.BytesIO(data))}, data=form
    )


def work(services: Services, engine: FakeOcrEngine | None = None, owner: str = "w1") -> None:
    runner = JobRunner(services, engine or FakeOcrEngine(lines=LINES), owner)
    while runner.run_next((Lane.BULK, Lane.INTERACTIVE)) is not None:
        pass


def test_upload_is_accepted_processed_and_downloadable(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    response = post(client, headers, png_bytes(tmp_path), template="sample", title="Forms")
    assert response.status_code == 202
    body = response.json()
    assert body["state"] == "accepted" and response.headers["location"] == f"/v1/jobs/{body['id']}"
    work(services)
    job = client.get(f"/v1/jobs/{body['id']}", headers=headers).json()
    assert job["state"] == "complete" and job["pages"] == 1 and job["attempts"] == 1
    assert {"queue", "fetch", "process", "ocr", "publish"} <= set(job["timings"])
    assert job["artifact_url"].startswith("http://testserver/v1/artifacts/")
    pdf = client.get(job["artifact_url"])
    assert pdf.status_code == 200 and pdf.headers["content-type"] == "application/pdf"
    out = tmp_path / "got.pdf"
    out.write_bytes(pdf.content)
    assert "Waiver signed by the participant" in output_text(out, 1)
    with pikepdf.open(out) as doc:
        assert str(doc.docinfo.Title) == "Forms"
    # the source is deleted after delivery, and no scratch is left
    assert list(services.blobs.list("sources")) == []
    assert list(services.settings.scratch_dir.iterdir()) == []


def test_missing_wrong_key_and_other_tenants_job(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    job_id = post(client, headers, png_bytes(tmp_path)).json()["id"]
    assert client.get(f"/v1/jobs/{job_id}").status_code == 401
    wrong = client.get(f"/v1/jobs/{job_id}", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.json()["code"] == "UNAUTHORIZED"
    other = services.store.tenancy.create_key("globex", now=0)
    seen = client.get(f"/v1/jobs/{job_id}", headers={"Authorization": f"Bearer {other}"})
    assert seen.status_code == 404 and seen.json()["code"] == "NOT_FOUND"


@pytest.mark.parametrize(
    ("data", "form", "status", "code"),
    [
        (b"<html><body>not a pdf</body></html>", {}, 415, "BAD_MIME"),
        (b"", {}, 415, "BAD_MIME"),
        (b"%PDF-1.7\n", {"template": "nope"}, 400, "UNKNOWN_TEMPLATE"),
        (b"%PDF-1.7\n", {"lane": "express"}, 400, "BAD_REQUEST"),
        (b"%PDF-1.7\n", {"deadline": "soon"}, 400, "BAD_REQUEST"),
        (b"%PDF-1.7\n", {"keep_pixels": "yes"}, 400, "BAD_REQUEST"),
        (b"%PDF-1.7\n", {"keep_pixels": "1"}, 400, "BAD_REQUEST"),
        (b"%PDF-1.7\n", {"keep_pixels": ""}, 400, "BAD_REQUEST"),
    ],
)
def test_bad_uploads_are_refused_at_the_door_and_leave_nothing(
    api: tuple[TestClient, dict[str, str]],
    services: Services,
    data: bytes,
    form: dict[str, str],
    status: int,
    code: str,
) -> None:
    client, headers = api
    response = post(client, headers, data, **form)
    assert response.status_code == status
    assert response.json()["code"] == code
    assert list(services.blobs.list("")) == []
    assert list(services.settings.scratch_dir.iterdir()) == []
    assert services.store.stats.counts() == {}


def test_templates_are_taken_by_registered_name_only(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    # a brand planted outside the registered folders, reachable by a relative or absolute path
    evil = tmp_path / "srv" / "evil"
    evil.mkdir(parents=True)
    (evil / "template.toml").write_text('name = "evil"\nversion = "1"\n')
    relative = "../" * 12 + str(evil).lstrip("/")
    for name in (str(evil), relative, "./evil", "Sample", "sample/../plain", "a" * 65):
        response = post(client, headers, png_bytes(tmp_path), template=name)
        assert response.status_code == 400, name
        assert response.json()["code"] == "UNKNOWN_TEMPLATE"
    unknown = post(client, headers, png_bytes(tmp_path), template="nope").json()
    # no listing of the brands there are
    assert unknown["code"] == "UNKNOWN_TEMPLATE" and "sample" not in unknown["detail"]
    assert services.store.stats.counts() == {}
    assert post(client, headers, png_bytes(tmp_path), template="sample").status_code == 202


def test_upload_over_the_size_cap_is_stopped_mid_stream(services: Services, tmp_path: Path) -> None:
    from dataclasses import replace

    from pressroom.settings import Limits

    services.settings = replace(services.settings, limits=Limits(max_bytes=2000))
    key = services.store.tenancy.create_key("acme", now=0)
    client = TestClient(create_app(services))
    response = post(client, {"Authorization": f"Bearer {key}"}, b"%PDF-1.7\n" + b"0" * 50_000)
    assert response.status_code == 413 and response.json()["code"] == "TOO_LARGE"
    assert list(services.settings.scratch_dir.iterdir()) == []


def test_multipart_without_a_file_part_is_a_bad_request(
    api: tuple[TestClient, dict[str, str]],
) -> None:
    client, headers = api
    response = client.post(
        "/v1/jobs", headers=headers, data={"title": "x"}, files={"other": ("a", b"1")}
    )
    assert response.status_code == 400 and response.json()["code"] == "BAD_REQUEST"


def test_idempotency_key_replay_returns_the_same_job(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    data = png_bytes(tmp_path)
    first = post(client, {**headers, "Idempotency-Key": "abc"}, data).json()
    again = post(client, {**headers, "Idempotency-Key": "abc"}, data).json()
    assert again["id"] == first["id"]
    clash = post(client, {**headers, "Idempotency-Key": "abc"}, data, title="different")
    assert clash.status_code == 422 and clash.json()["code"] == "IDEMPOTENCY_CONFLICT"
    assert len(list(services.blobs.list("sources"))) == 1


def test_keep_pixels_is_part_of_the_request_and_of_the_artifact(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    data = save_png(
        distort(small_scan(dpi=100, lines=2).image, skew=1.5), tmp_path / "s.png", 100
    ).read_bytes()
    kept = post(client, {**headers, "Idempotency-Key": "k"}, data, keep_pixels="true").json()
    assert services.store.queue.get(kept["id"]).order.to_json()["keep_pixels"] is True  # type: ignore[union-attr]
    # the same key with the other choice is another request, not a replay
    clash = post(client, {**headers, "Idempotency-Key": "k"}, data, keep_pixels="false")
    assert clash.status_code == 422 and clash.json()["code"] == "IDEMPOTENCY_CONFLICT"
    levelled = post(client, headers, data, keep_pixels="false").json()
    assert "keep_pixels" not in services.store.queue.get(levelled["id"]).order.to_json()  # type: ignore[union-attr]
    work(services)
    jobs = [client.get(f"/v1/jobs/{j['id']}", headers=headers).json() for j in (kept, levelled)]
    assert [j["state"] for j in jobs] == ["complete", "complete"]
    keys = [services.store.queue.get(j["id"]).artifact_key for j in (kept, levelled)]  # type: ignore[union-attr]
    assert keys[0] != keys[1]
    pixels = []
    for job in jobs:
        body = client.get(job["artifact_url"]).content
        with pikepdf.open(io.BytesIO(body)) as pdf:
            (image,) = pdf.pages[0].get_images().values()
            pixels.append(np.asarray(pikepdf.PdfImage(image).as_pil_image().convert("L")))
    with Image.open(io.BytesIO(data)) as png:
        source = np.asarray(png.convert("L"))
    # the kept scan is the PNG's own pixels; the levelled one is turned on the same grid
    assert np.array_equal(pixels[0], source)
    assert pixels[1].shape == source.shape and not np.array_equal(pixels[1], source)


def test_tampered_and_expired_links(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    client, headers = api
    job_id = post(client, headers, png_bytes(tmp_path)).json()["id"]
    work(services)
    url = client.get(f"/v1/jobs/{job_id}", headers=headers).json()["artifact_url"]
    assert client.get(url.replace("signature=", "signature=0")).status_code == 403
    assert client.get(url.replace(job_id, "0" * 36)).status_code == 403
    clock.advance(services.settings.link_ttl_s + 1)
    gone = client.get(url)
    assert gone.status_code == 410 and gone.json()["code"] == "LINK_EXPIRED"


def test_permanent_failure_is_dead_lettered_with_its_reason(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    plain = text_pdf([["secret"]], tmp_path / "p.pdf")
    with pikepdf.open(plain) as pdf:
        pdf.save(tmp_path / "e.pdf", encryption=pikepdf.Encryption(user="u", owner="o"))
    job_id = post(client, headers, (tmp_path / "e.pdf").read_bytes()).json()["id"]
    work(services)
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["reason"], job["attempts"]) == ("rejected", "ENCRYPTED", 1)


def test_a_bug_is_dead_lettered_as_internal_error_not_retried(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    class Broken(FakeOcrEngine):
        def recognize(self, *a: Any, **k: Any) -> Any:
            raise ZeroDivisionError("a bug")

    client, headers = api
    job_id = post(client, headers, png_bytes(tmp_path)).json()["id"]
    work(services, Broken())
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["reason"], job["attempts"]) == ("rejected", "INTERNAL_ERROR", 1)


def test_storage_outage_is_retried_with_backoff(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    client, headers = api
    job_id = post(client, headers, png_bytes(tmp_path)).json()["id"]
    real = services.blobs

    class Down:
        def __getattr__(self, name: str) -> Any:
            if name == "get_to_path":

                def fail(*_a: Any) -> None:
                    raise StorageUnavailableForTests("storage is down")

                return fail
            return getattr(real, name)

    services.blobs = Down()  # type: ignore[assignment]
    work(services)
    job = services.store.queue.get(job_id)
    assert job is not None and job.state is JobState.RETRYING
    assert job.reason == "STORAGE_UNAVAILABLE"
    assert job.next_eligible_at - clock.now >= 5.0  # backoff, not a hot loop
    services.blobs = real
    work(services)  # not yet eligible: nothing happens
    assert services.store.queue.get(job_id).state is JobState.RETRYING  # type: ignore[union-attr]
    clock.advance(60)
    work(services)
    done = services.store.queue.get(job_id)
    assert done is not None and done.state is JobState.COMPLETE and done.attempts == 2


def test_a_job_run_twice_yields_one_artifact(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    client, headers = api
    job_id = post(client, headers, png_bytes(tmp_path)).json()["id"]
    stale = services.store.queue.claim(
        (Lane.BULK,), "stale-worker", now=clock.now, lease_s=services.settings.lease_s
    )
    assert stale is not None
    clock.advance(services.settings.lease_s + 1)
    assert services.store.queue.rescue_expired(now=clock.now, policy=services.retry) == 1
    clock.advance(600)
    work(services, owner="fresh-worker")
    # the stale worker wakes up and runs its copy to the end
    JobRunner(services, FakeOcrEngine(lines=LINES), "stale-worker").run(stale)
    artifacts = list(services.blobs.list("artifacts"))
    assert len(artifacts) == 1
    job = services.store.queue.get(job_id)
    assert (
        job is not None and job.state is JobState.COMPLETE and job.artifact_key == artifacts[0][0]
    )


def test_metrics_show_queue_stages_and_dead_letters(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    post(client, headers, png_bytes(tmp_path))
    post(client, headers, b"%PDF-1.7\n%broken")
    post(client, headers, png_bytes(tmp_path), lane="interactive")
    runner = JobRunner(services, FakeOcrEngine(lines=LINES), "w")
    runner.run_next((Lane.BULK,))
    runner.run_next((Lane.BULK,))
    text = client.get("/metrics").text
    assert 'pressroom_jobs{lane="bulk",state="complete"} 1.0' in text
    assert 'pressroom_jobs{lane="interactive",state="accepted"} 1.0' in text
    assert 'pressroom_dead_letters_total{lane="bulk",reason="CORRUPT"} 1.0' in text
    assert 'pressroom_stage_duration_seconds_count{stage="ocr"} 1.0' in text
    assert 'pressroom_queue_oldest_age_seconds{lane="interactive",state="accepted"}' in text
    assert "pressroom_scratch_bytes 0.0" in text


def test_webhook_is_signed_sent_once_the_job_ends_and_retried_on_failure(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    from dataclasses import replace

    from pressroom.notify.webhooks import deliver_due, signature

    services.settings = replace(services.settings, webhook_allow_private=True)
    receiver = Receiver(status=500)
    try:
        client, headers = api
        job_id = post(client, headers, png_bytes(tmp_path), webhook_url=receiver.url).json()["id"]
        assert deliver_due(services, "w") == 0 and receiver.received == []  # nothing yet
        work(services)
        assert deliver_due(services, "w") == 0  # the receiver answers 500
        assert len(receiver.received) == 1
        clock.advance(5)
        assert deliver_due(services, "w") == 0  # backing off: not due yet
        receiver.status = 200
        clock.advance(30)
        assert deliver_due(services, "w") == 1
        sent_headers, body = receiver.received[-1]
        secret = client.get("/v1/webhook-secret", headers=headers).json()["secret"]
        expected = signature(
            secret, sent_headers["webhook-id"], int(sent_headers["webhook-timestamp"]), body
        )
        assert sent_headers["webhook-signature"] == expected
        assert receiver.received[0][0]["webhook-id"] == sent_headers["webhook-id"]
        event = __import__("json").loads(body)
        assert event["type"] == "job.completed" and event["data"]["id"] == job_id
        clock.advance(3600)
        assert deliver_due(services, "w") == 0 and len(receiver.received) == 2  # once
    finally:
        receiver.close()


def test_webhook_to_a_private_address_is_refused_unless_allowed(
    api: tuple[TestClient, dict[str, str]], tmp_path: Path
) -> None:
    client, headers = api
    for url in ("http://127.0.0.1:9/hook", "http://10.1.2.3/hook", "http://[::1]/x"):
        refused = post(client, headers, png_bytes(tmp_path), webhook_url=url)
        assert refused.status_code == 400, url
        assert refused.json()["code"] == "PRIVATE_ADDRESS"
    bad = post(client, headers, png_bytes(tmp_path), webhook_url="ftp://example.com/x")
    assert bad.status_code == 400 and bad.json()["code"] == "BAD_REQUEST"


@pytest.mark.parametrize(
    "host",
    [
        "[64:ff9b::a9fe:a9fe]",  # NAT64 of 169.254.169.254, the cloud metadata service
        "[64:ff9b::a00:1]",  # NAT64 of 10.0.0.1
        "[64:ff9b:1::a00:1]",  # RFC 8215 local-use NAT64
        "[2002:a9fe:a9fe::]",  # 6to4 of 169.254.169.254
        "[::127.0.0.1]",  # IPv4-compatible loopback
        "[::ffff:10.0.0.1]",  # IPv4-mapped
        "[2001:0:4136:e378:8000:63bf:3fff:fdd2]",  # Teredo, client 192.0.2.45
        "224.0.0.1",  # multicast: global to ipaddress, but no endpoint
        "[ff02::1]",  # IPv6 multicast
    ],
)
def test_webhook_addresses_embedding_a_private_ipv4_are_refused(host: str) -> None:
    from pressroom.errors import PrivateAddress
    from pressroom.notify.webhooks import check_url

    with pytest.raises(PrivateAddress):
        check_url(f"http://{host}/hook", allow_private=False)


def test_webhook_addresses_embedding_a_public_ipv4_are_taken() -> None:
    from pressroom.notify.webhooks import check_url

    for host in ("[64:ff9b::808:808]", "[2002:808:808::1]"):  # 8.8.8.8 through NAT64, 6to4
        assert check_url(f"http://{host}/hook", allow_private=False) == f"http://{host}/hook"


def test_housekeeping_expires_artifacts_and_sweeps_orphan_sources(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    from pressroom.service import housekeeper

    client, headers = api
    job_id = post(client, headers, png_bytes(tmp_path)).json()["id"]
    work(services)
    orphan = tmp_path / "orphan"
    orphan.write_bytes(b"%PDF-1.7 left by a crash between blob and row")
    services.blobs.put_file("sources/acme/00000000-dead-beef-0000-000000000000/source", orphan)
    services.store.tenancy.set_customer("acme", "gone", status="suspended", now=0)
    dead = post(client, headers, png_bytes(tmp_path), customer="gone").json()["id"]
    work(services)  # dead-lettered: its source stays for a redrive, for a while
    waiting = post(client, headers, png_bytes(tmp_path)).json()["id"]  # its source must stay
    empty = {"artifacts": 0, "orphans": 0, "dead_sources": 0, "expired_reviews": 0, "staging": 0}
    assert housekeeper(services)() == empty  # too young for any
    clock.advance(services.settings.retention_s + 1)
    import os

    for key, _ in services.blobs.list("sources"):  # age the files on disk as well
        path = services.settings.data_dir / "blobs" / key
        os.utime(path, (clock.now - 7200, clock.now - 7200))
    assert housekeeper(services)() == {**empty, "artifacts": 1, "orphans": 1, "dead_sources": 1}
    gone = services.store.queue.get(dead)
    assert gone is not None and gone.source_key is None
    assert not services.store.queue.redrive(dead, now=clock())  # nothing left to run
    assert list(services.blobs.list("artifacts")) == []
    job = services.store.queue.get(job_id)
    assert job is not None and job.artifact_key is None
    remaining = [k for k, _ in services.blobs.list("sources")]
    assert remaining == [f"sources/acme/{waiting}/source"]


@pytest.mark.parametrize("redact", ["email", "ssn", "name,phone"])
def test_unknown_redaction_classes_are_refused_at_the_door(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path, redact: str
) -> None:
    client, headers = api
    response = post(client, headers, png_bytes(tmp_path), redact=redact)
    assert response.status_code == 400
    assert response.json()["code"] == "UNSUPPORTED_POLICY"
    assert services.store.stats.counts() == {}
    assert list(services.blobs.list("")) == []


def test_a_redaction_the_output_check_doubts_is_held_for_review_never_published(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    # This fake "reads" the account number on every image, the redacted output included:
    # detection run again on the output finds it, so the job must stop in review.
    client, headers = api
    job_id = post(client, headers, png_bytes(tmp_path), redact="account-number").json()["id"]
    work(services, FakeOcrEngine(lines=("Account number: 12345678", "Ordinary words stay.")))
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["reason"]) == ("review", "REDACTION_LEAK")
    assert job["artifact_url"] is None
    assert list(services.blobs.list("artifacts")) == []
    assert list(services.settings.scratch_dir.iterdir()) == []
    # the reviewer sees why (codes and counts, never the value) and the held copy
    queue = client.get("/v1/review", headers=headers).json()["jobs"]
    assert [j["id"] for j in queue] == [job_id]
    assert "12345678" not in str(queue)
    held = client.get(f"/v1/jobs/{job_id}/held", headers=headers)
    assert held.status_code == 200 and held.content.startswith(b"%PDF")
    # streamed from the blob store, with the size and the headers personal data needs
    assert held.headers["content-type"] == "application/pdf"
    assert int(held.headers["content-length"]) == len(held.content)
    assert held.headers["cache-control"] == "no-store"
    assert held.headers["x-content-type-options"] == "nosniff"
    other = services.store.tenancy.create_key("globex", now=0)
    assert (
        client.get(
            f"/v1/jobs/{job_id}/held", headers={"Authorization": f"Bearer {other}"}
        ).status_code
        == 404
    )
    approved = client.post(f"/v1/jobs/{job_id}/approve", headers=headers).json()
    assert approved["state"] == "complete" and approved["artifact_url"]
    assert client.get(approved["artifact_url"]).content == held.content
    assert list(services.blobs.list("review")) == []
    assert client.get("/v1/review", headers=headers).json()["jobs"] == []
    # approved means delivered: the source is gone and nothing can run the job again, so no
    # retry, rescue or redrive can ever overwrite what the reviewer approved
    assert list(services.blobs.list("sources")) == []
    assert not services.store.queue.redrive(job_id, now=services.clock())
    assert (
        services.store.queue.rescue_expired(now=services.clock() + 3600, policy=services.retry) == 0
    )
    work(services, FakeOcrEngine(lines=("Account number: 12345678",)))
    again = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert again["state"] == "complete" and again["attempts"] == approved["attempts"]
    assert client.get(again["artifact_url"]).content == held.content


def test_redaction_jobs_report_their_stages_whether_complete_or_held(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    done = post(client, headers, png_bytes(tmp_path), redact="account-number").json()["id"]
    work(services)  # nothing to redact: delivered
    held = post(client, headers, png_bytes(tmp_path), redact="account-number").json()["id"]
    work(services, FakeOcrEngine(lines=("Account number: 12345678", "Ordinary words stay.")))
    for job_id, state in ((done, "complete"), (held, "review")):
        job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
        assert job["state"] == state
        # the worker's stages, the pipeline's like any job's, redaction's own and its total
        assert {
            *("queue", "verify", "fetch", "process"),
            *("inspect", "raster", "ocr", "render", "check"),
            *("detect", "leak_check", "redetect", "redact"),
        } <= set(job["timings"]), state


def test_a_reviewer_can_reject_a_held_job(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    job_id = post(client, headers, png_bytes(tmp_path), redact="account-number").json()["id"]
    work(services, FakeOcrEngine(lines=("Account number: 12345678", "Ordinary words stay.")))
    rejected = client.post(f"/v1/jobs/{job_id}/reject", headers=headers).json()
    assert (rejected["state"], rejected["reason"]) == ("rejected", "REVIEW_REJECTED")
    assert list(services.blobs.list("review")) == []
    assert client.post(f"/v1/jobs/{job_id}/approve", headers=headers).status_code == 404


def first_artifact_key(services: Services, job_id: str, engine: FakeOcrEngine) -> str:
    """Where a plain job's output is published, as the worker names it."""
    job = services.store.queue.get(job_id)
    assert job is not None
    template = registered_template(job.template, services.settings.template_dirs)
    digest = artifact_digest(
        job.source_sha256, template.content_hash, RedactionPolicy(()), engine=engine.name
    )
    return artifact_key(job.tenant, job.id, digest)


def test_a_retry_that_makes_other_bytes_is_held_and_both_outputs_kept(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    from pressroom.service import housekeeper

    # An earlier attempt stored an output and died before recording it; what it stored is
    # not what this attempt makes (tampered with here, or a changed engine in life).
    client, headers = api
    engine = FakeOcrEngine(lines=LINES)
    job_id = post(client, headers, png_bytes(tmp_path)).json()["id"]
    first = first_artifact_key(services, job_id, engine)
    stored = tmp_path / "stored.pdf"
    stored.write_bytes(b"%PDF-1.7\n% an earlier attempt's output\n")
    services.blobs.put_file(first, stored)
    work(services, engine)
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["reason"]) == ("review", "OUTPUT_CHANGED")
    assert job["artifact_url"] is None
    versioned = first.removesuffix(".pdf") + ".v2.pdf"
    assert sorted(k for k, _ in services.blobs.list("artifacts")) == sorted([first, versioned])
    with services.blobs.open(first) as fh:
        assert fh.read() == stored.read_bytes()  # the stored copy is untouched
    held = client.get(f"/v1/jobs/{job_id}/held", headers=headers)
    with services.blobs.open(versioned) as fh:
        assert held.status_code == 200 and held.content == fh.read()
    (tmp_path / "held.pdf").write_bytes(held.content)
    assert "Waiver signed by the participant" in output_text(tmp_path / "held.pdf", 0)
    approved = client.post(f"/v1/jobs/{job_id}/approve", headers=headers).json()
    assert approved["state"] == "complete"
    done = services.store.queue.get(job_id)
    assert done is not None and done.artifact_key == versioned
    assert client.get(approved["artifact_url"]).content == held.content
    with services.blobs.open(first) as fh:
        assert fh.read() == stored.read_bytes()
    assert list(services.blobs.list("sources")) == []
    # when the published output expires, the earlier copy beside it goes with it
    clock.advance(services.settings.retention_s + 1)
    assert housekeeper(services)()["artifacts"] == 1
    assert list(services.blobs.list("artifacts")) == []


def test_a_changed_output_never_overwrites_an_earlier_version(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    engine = FakeOcrEngine(lines=LINES)
    job_id = post(client, headers, png_bytes(tmp_path)).json()["id"]
    first = first_artifact_key(services, job_id, engine)
    second = first.removesuffix(".pdf") + ".v2.pdf"
    for key, body in ((first, b"one"), (second, b"two")):
        (tmp_path / "b").write_bytes(b"%PDF-1.7\n% " + body + b"\n")
        services.blobs.put_file(key, tmp_path / "b")
    work(services, engine)
    job = services.store.queue.get(job_id)
    assert job is not None and job.state is JobState.REVIEW and job.reason == "OUTPUT_CHANGED"
    assert job.artifact_key == first.removesuffix(".pdf") + ".v3.pdf"
    with services.blobs.open(second) as fh:
        assert fh.read() == b"%PDF-1.7\n% two\n"
    with services.blobs.open(job.artifact_key) as fh:
        held_sha = hashlib.sha256(fh.read()).hexdigest()
    # a reviewer who rejects it ends the job: no output of it is kept, none was published
    rejected = client.post(f"/v1/jobs/{job_id}/reject", headers=headers).json()
    assert (rejected["state"], rejected["reason"]) == ("rejected", "REVIEW_REJECTED")
    assert list(services.blobs.list("artifacts")) == []
    # the record names what was rejected by its content's digest, not by its key's name
    with services.store.db.read() as conn:
        detail = conn.execute(
            select(review_decisions.c.detail).where(review_decisions.c.job_id == job_id)
        ).scalar_one()
    assert detail == {"held_sha256": held_sha}


def test_an_honest_retry_finding_its_own_bytes_stored_completes(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    engine = FakeOcrEngine(lines=LINES)
    data = png_bytes(tmp_path)
    model = post(client, headers, data).json()["id"]
    work(services, engine)
    retried = post(client, headers, data).json()["id"]
    done, job = services.store.queue.get(model), services.store.queue.get(retried)
    assert done is not None and done.artifact_key is not None and job is not None
    assert done.created_at == job.created_at  # the same job's bytes, but for its id
    # the first attempt of `retried` stored exactly what a rerun makes, then died
    services.blobs.get_to_path(done.artifact_key, tmp_path / "honest.pdf")
    key = first_artifact_key(services, retried, engine)
    services.blobs.put_file(key, tmp_path / "honest.pdf")
    work(services, engine)
    job = services.store.queue.get(retried)
    assert job is not None and job.state is JobState.COMPLETE and job.artifact_key == key
    assert job.artifact_sha256 == done.artifact_sha256
    assert [k for k, _ in services.blobs.list(f"artifacts/acme/{retried}")] == [key]
