"""Hardening against a tenant acting as an attacker (issue 12): keys with ids, expiry and
revocation; per-tenant template allow-lists; request limits and byte quotas; links that never
trust the Host header; retention of held copies; the memory ceiling of a worker process; the
database's clock."""

from __future__ import annotations

import asyncio
import io
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pressroom.api.uploads import receive_upload
from pressroom.app import create_app
from pressroom.errors import BadConfig, BadRequest, RequestTimeout, StorageFull, TooLarge
from pressroom.jobs.model import JobState, Lane
from pressroom.service import Services, housekeeper, open_services
from pressroom.settings import Settings
from pressroom.testing import FakeOcrEngine
from tests.conftest import FakeClock
from tests.integration.test_service import png_bytes, post, work


def _client(services: Services) -> TestClient:
    return TestClient(create_app(services), client=("127.0.0.1", 50000))


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


# --- keys: ids, list, revoke, expiry -------------------------------------------------------


def test_keys_have_ids_list_without_secrets_and_revoke_at_once(services: Services) -> None:
    client = _client(services)
    key_id, key = services.store.tenancy.new_key("acme", now=services.clock())
    assert key_id.startswith("k_") and key.startswith("pr_")
    assert client.get("/v1/review", headers=_bearer(key)).status_code == 200
    listed = services.store.tenancy.list_keys("acme")
    assert [row["id"] for row in listed] == [key_id]
    assert key not in str(listed) and "key_hash" not in listed[0]
    assert listed[0]["last_used_at"] is not None  # the request above used it
    assert services.store.tenancy.revoke_key(key_id, now=services.clock()) == key_id
    refused = client.get("/v1/review", headers=_bearer(key))
    assert refused.status_code == 401 and refused.json()["code"] == "UNAUTHORIZED"
    assert (
        services.store.tenancy.revoke_key(key_id, now=services.clock()) is None
    )  # already revoked
    # by the key itself, too
    _, other = services.store.tenancy.new_key("acme", now=services.clock())
    assert services.store.tenancy.revoke_key(other, now=services.clock()) is not None
    assert client.get("/v1/review", headers=_bearer(other)).status_code == 401


def test_an_expired_key_is_refused(services: Services, clock: FakeClock) -> None:
    client = _client(services)
    _, key = services.store.tenancy.new_key("acme", now=clock(), expires_at=clock() + 60)
    assert client.get("/v1/review", headers=_bearer(key)).status_code == 200
    clock.advance(61)
    assert client.get("/v1/review", headers=_bearer(key)).status_code == 401
    with pytest.raises(ValueError, match="past"):
        services.store.tenancy.new_key("acme", now=clock(), expires_at=clock() - 1)


def test_keys_cli_prints_the_id_then_the_key_lists_and_revokes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pressroom.cli import main

    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "data"))
    assert main(["keys", "create", "--tenant", "acme", "--expires", "30d"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-2].startswith("id: k_") and lines[-1].startswith("pr_")
    key_id, key = lines[-2].removeprefix("id: "), lines[-1]
    assert main(["keys", "list", "--tenant", "acme"]) == 0
    listing = capsys.readouterr().out
    assert listing.startswith(key_id) and "live" in listing and key not in listing
    assert "expires=20" in listing  # a date, not "-"
    assert main(["keys", "revoke", key_id]) == 0
    assert capsys.readouterr().out.strip() == f"revoked {key_id}"
    assert main(["keys", "list"]) == 0
    assert "revoked" in capsys.readouterr().out
    assert main(["keys", "revoke", key_id]) == 2
    assert "NOT_FOUND" in capsys.readouterr().err
    services = open_services(Settings.from_env())
    assert services.store.tenancy.key_info(key) is None


# --- templates: per-tenant allow-lists -----------------------------------------------------


def test_a_tenant_with_an_allow_list_uses_only_those_templates(
    services: Services, tmp_path: Path
) -> None:
    client = _client(services)
    acme = services.store.tenancy.create_key("acme", now=services.clock())
    globex = services.store.tenancy.create_key("globex", now=services.clock())
    services.store.tenancy.allow_templates("acme", ["plain"], now=services.clock())
    refused = post(client, _bearer(acme), png_bytes(tmp_path), template="sample")
    assert refused.status_code == 400
    error = refused.json()
    # the same words as a name that does not exist: nothing says "sample" is someone's brand
    assert (error["code"], error["detail"]) == ("UNKNOWN_TEMPLATE", "unknown template")
    assert post(client, _bearer(acme), png_bytes(tmp_path), template="plain").status_code == 202
    # a tenant without a list may use every registered template
    assert post(client, _bearer(globex), png_bytes(tmp_path), template="sample").status_code == 202
    services.store.tenancy.disallow_templates("acme", None)
    assert services.store.tenancy.allowed_templates("acme") is None
    assert post(client, _bearer(acme), png_bytes(tmp_path), template="sample").status_code == 202


def test_templates_allow_cli_refuses_unknown_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pressroom.cli import main

    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "data"))
    assert main(["templates", "allow", "--tenant", "acme", "../evil"]) == 2
    assert "UNKNOWN_TEMPLATE" in capsys.readouterr().err
    assert main(["templates", "allow", "--tenant", "acme", "plain", "sample"]) == 0
    assert "may use: plain, sample" in capsys.readouterr().out
    assert main(["templates", "--tenant", "acme"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert sorted(names) == ["plain", "sample"]
    assert main(["templates", "disallow", "--tenant", "acme", "sample"]) == 0
    assert "may use: plain" in capsys.readouterr().out


# --- request limits ------------------------------------------------------------------------

BOUNDARY = "pressroom-test-boundary"


def _part(name: str, value: bytes, filename: str | None = None) -> bytes:
    disposition = f'form-data; name="{name}"' + (f'; filename="{filename}"' if filename else "")
    return f"--{BOUNDARY}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + value + b"\r\n"


async def _body(*chunks: bytes, pause_after: int | None = None, pause_s: float = 0) -> Any:
    for i, chunk in enumerate(chunks):
        if pause_after is not None and i == pause_after:
            await asyncio.sleep(pause_s)
        yield chunk


def _receive(dest: Path, body: AsyncIterator[bytes], **kwargs: Any) -> Any:
    return asyncio.run(
        receive_upload(
            f"multipart/form-data; boundary={BOUNDARY}",
            body,
            dest,
            max_bytes=kwargs.pop("max_bytes", 100_000),
            **kwargs,
        )
    )


def test_fields_sent_before_the_file_are_refused_before_a_byte_is_written(tmp_path: Path) -> None:
    seen: list[dict[str, str]] = []

    def check(fields: dict[str, str]) -> None:
        seen.append(fields)
        if fields.get("lane") not in (None, "bulk", "interactive"):
            raise BadRequest("lane must be 'bulk' or 'interactive'")

    dest = tmp_path / "upload"
    body = _body(
        _part("lane", b"fast"),
        _part("file", b"%PDF-1.7 " + b"x" * 5000, "a.pdf"),
        f"--{BOUNDARY}--\r\n".encode(),
    )
    with pytest.raises(BadRequest, match="lane"):
        _receive(dest, body, before_file=check)
    assert seen == [{"lane": "fast"}]
    assert not dest.exists()


def test_many_small_fields_cannot_grow_the_body_past_the_file_cap(tmp_path: Path) -> None:
    fields = [_part(f"f{i}", b"v" * 8000) for i in range(20)]  # each under the field cap
    body = _body(*fields, _part("file", b"%PDF-1.7 tiny", "a.pdf"), f"--{BOUNDARY}--\r\n".encode())
    with pytest.raises(TooLarge):
        _receive(tmp_path / "upload", body, max_bytes=1000)
    assert not (tmp_path / "upload").exists()


def test_a_stalled_upload_is_cut_off(tmp_path: Path) -> None:
    body = _body(
        _part("file", b"%PDF-1.7 " + b"x" * 100, "a.pdf")[:60],
        b"more",
        pause_after=1,
        pause_s=20,  # had the stall not been cut, the body would end unfinished: BAD_REQUEST
    )
    with pytest.raises(RequestTimeout):
        _receive(tmp_path / "upload", body, idle_s=0.3)


def test_a_full_disk_during_an_upload_is_503_storage_full_and_logged(
    services: Services,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    from pressroom.api import uploads

    # /dev/full answers every write with ENOSPC, as a full disk does
    def full_disk(_self: object) -> Any:
        return Path("/dev/full").open("wb")

    monkeypatch.setattr(uploads._Collector, "_open_dest", full_disk)
    client = _client(services)
    key = services.store.tenancy.create_key("acme", now=services.clock())
    response = post(client, _bearer(key), png_bytes(tmp_path) * 4)
    assert response.status_code == 503
    assert response.json()["code"] == "STORAGE_FULL"
    assert int(response.headers["retry-after"]) > 0
    assert any(getattr(r, "code", None) == "STORAGE_FULL" for r in caplog.records)
    assert services.store.stats.counts() == {}
    assert list(services.settings.scratch_dir.iterdir()) == []


def test_the_blob_store_reports_a_full_disk_as_storage_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pressroom.storage import local
    from pressroom.storage.local import LocalBlobStore

    def full(*_args: object) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(local, "staged_copy", full)
    source = tmp_path / "s"
    source.write_bytes(b"x")
    with pytest.raises(StorageFull):
        LocalBlobStore(tmp_path / "blobs").put_file("sources/acme/j/source", source)


def test_byte_quotas_per_tenant_refuse_with_429(services: Services, tmp_path: Path) -> None:
    data = png_bytes(tmp_path)
    services.settings = Settings(
        data_dir=services.settings.data_dir,
        scratch_dir=services.settings.scratch_dir,
        tenant_max_bytes_per_hour=len(data) * 2 + 10,
    )
    client = _client(services)
    acme = services.store.tenancy.create_key("acme", now=services.clock())
    globex = services.store.tenancy.create_key("globex", now=services.clock())
    assert post(client, _bearer(acme), data).status_code == 202
    assert post(client, _bearer(acme), data).status_code == 202
    third = post(client, _bearer(acme), data)
    assert third.status_code == 429 and third.json()["code"] == "QUOTA_EXCEEDED"
    assert int(third.headers["retry-after"]) > 0
    assert post(client, _bearer(globex), data).status_code == 202  # another tenant flows on
    assert services.store.stats.counts() == {("bulk", "accepted"): 3}


def test_stored_bytes_quota_counts_sources_still_held(services: Services, tmp_path: Path) -> None:
    data = png_bytes(tmp_path)
    services.settings = Settings(
        data_dir=services.settings.data_dir,
        scratch_dir=services.settings.scratch_dir,
        tenant_max_stored_bytes=len(data) + 10,
    )
    client = _client(services)
    acme = services.store.tenancy.create_key("acme", now=services.clock())
    assert post(client, _bearer(acme), data).status_code == 202
    assert post(client, _bearer(acme), data).status_code == 429  # the first source is held
    work(services)  # delivered: its source is deleted
    assert post(client, _bearer(acme), data).status_code == 202


def test_one_upload_bigger_than_a_quota_is_refused_for_good(
    services: Services, tmp_path: Path
) -> None:
    data = png_bytes(tmp_path)
    services.settings = Settings(
        data_dir=services.settings.data_dir,
        scratch_dir=services.settings.scratch_dir,
        tenant_max_bytes_per_hour=len(data) - 1,
    )
    client = _client(services)
    response = post(client, _bearer(services.store.tenancy.create_key("acme", now=0)), data)
    assert response.status_code == 413  # no Retry-After: waiting cannot make it fit
    assert response.json()["code"] == "QUOTA_EXCEEDED"
    assert "retry-after" not in response.headers


def test_template_names_end_where_they_end(services: Services, tmp_path: Path) -> None:
    client = _client(services)
    key = services.store.tenancy.create_key("acme", now=0)
    refused = post(client, _bearer(key), png_bytes(tmp_path), template="sample\n")
    assert refused.status_code == 400
    assert refused.json()["code"] == "UNKNOWN_TEMPLATE"
    assert "registered template's name" in refused.json()["detail"]


def test_a_retry_of_an_accepted_upload_is_replayed_even_at_the_quota(
    services: Services, tmp_path: Path
) -> None:
    """The client lost the first answer and sends the same upload again: the job it already
    has comes back, never a 429 for bytes that were counted the first time."""
    data = png_bytes(tmp_path) + bytes(200_000)  # large enough for the check before the body
    services.settings = Settings(
        data_dir=services.settings.data_dir,
        scratch_dir=services.settings.scratch_dir,
        tenant_max_stored_bytes=len(data) + 10,
    )
    client = _client(services)
    headers = {**_bearer(services.store.tenancy.create_key("acme", now=services.clock()))}
    headers["Idempotency-Key"] = "upload-1"
    first = client.post("/v1/jobs", headers=headers, files={"file": ("x.png", io.BytesIO(data))})
    again = client.post("/v1/jobs", headers=headers, files={"file": ("x.png", io.BytesIO(data))})
    assert first.status_code == 202 and again.status_code == 202
    assert again.json()["id"] == first.json()["id"]


# --- links, headers, signing key -----------------------------------------------------------


def test_links_never_follow_the_host_header_and_downloads_are_not_cached(
    services: Services, tmp_path: Path
) -> None:
    client = _client(services)
    key = services.store.tenancy.create_key("acme", now=services.clock())
    job_id = post(client, _bearer(key), png_bytes(tmp_path)).json()["id"]
    work(services)
    job = client.get(f"/v1/jobs/{job_id}", headers={**_bearer(key), "Host": "evil.example"}).json()
    assert job["artifact_url"].startswith("http://testserver/v1/artifacts/")
    pdf = client.get(job["artifact_url"])
    assert pdf.status_code == 200
    assert pdf.headers["cache-control"] == "no-store"
    assert pdf.headers["x-content-type-options"] == "nosniff"


def test_a_short_signing_key_refuses_to_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pressroom.cli import main

    monkeypatch.setenv("PRESSROOM_SIGNING_KEY", "secret")
    with pytest.raises(BadConfig, match="PRESSROOM_SIGNING_KEY"):
        open_services(Settings(data_dir=tmp_path / "data", signing_key="secret"))
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "data"))
    assert main(["keys", "list"]) == 2
    assert "BAD_CONFIG" in capsys.readouterr().err


# --- retention -----------------------------------------------------------------------------


def _held(services: Services, tmp_path: Path) -> tuple[TestClient, dict[str, str], str]:
    client = _client(services)
    headers = _bearer(services.store.tenancy.create_key("acme", now=services.clock()))
    job_id = post(client, headers, png_bytes(tmp_path), redact="account-number").json()["id"]
    work(services, FakeOcrEngine(lines=("Account number: 12345678", "Ordinary words stay.")))
    job = services.store.queue.get(job_id)
    assert job is not None and job.state is JobState.REVIEW
    return client, headers, job_id


def test_a_held_copy_nobody_reviews_expires_with_its_source(
    services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    _, _, job_id = _held(services, tmp_path)
    assert list(services.blobs.list("review")) and list(services.blobs.list("sources"))
    assert housekeeper(services)()["expired_reviews"] == 0
    clock.advance(services.settings.review_retention_s + 1)
    assert housekeeper(services)()["expired_reviews"] == 1
    job = services.store.queue.get(job_id)
    assert job is not None and (job.state, job.reason) == (JobState.REJECTED, "REVIEW_EXPIRED")
    assert job.source_key is None and job.artifact_key is None
    assert list(services.blobs.list("review")) == [] and list(services.blobs.list("sources")) == []
    assert [
        d["event"] for d in services.store.outbox.deliveries(job_id)
    ] == []  # no webhook URL set
    assert not services.store.queue.redrive(job_id, now=clock())


def test_a_rejected_review_deletes_the_source_at_once(services: Services, tmp_path: Path) -> None:
    client, headers, job_id = _held(services, tmp_path)
    assert client.post(f"/v1/jobs/{job_id}/reject", headers=headers).status_code == 200
    assert list(services.blobs.list("sources")) == []
    assert list(services.blobs.list("review")) == []
    job = services.store.queue.get(job_id)
    assert job is not None and job.source_key is None


def test_half_written_staging_files_are_swept(services: Services, clock: FakeClock) -> None:
    root = services.settings.data_dir / "blobs"
    folder = root / "sources" / "acme" / "j"
    folder.mkdir(parents=True)
    stale, fresh = folder / ".incoming-abc", folder / ".incoming-def"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"being written")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    assert housekeeper(services)()["staging"] == 1
    assert not stale.exists() and fresh.exists()


# --- the memory ceiling of a worker process -------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _claim_one(lanes: tuple[str, ...], settings: Settings, stop: Any, owner: str) -> Any:
    """The first job a worker of these lanes can claim, or None once told to stop."""
    services = open_services(settings, migrate=False)
    while not stop.wait(0.1):
        job = services.store.queue.claim(
            tuple(Lane(x) for x in lanes), owner, now=services.clock(), lease_s=600
        )
        if job is not None:
            return job
    return None


def greedy_worker(
    lanes: tuple[str, ...], settings: Settings, stop: Any, max_jobs: int, current: Any
) -> None:
    """A worker that claims a job and then swells past any sane limit (a decoded bomb)."""
    owner = f"greedy:{os.getpid()}"
    job = _claim_one(lanes, settings, stop, owner)
    if job is None:
        return
    current.value = f"{job.id} {owner} 0".encode()
    hog = bytearray(400 * 1024 * 1024)  # touched below, so it is resident, not reserved
    for i in range(0, len(hog), 4096):
        hog[i] = 1
    stop.wait(60)


def stuck_worker(
    lanes: tuple[str, ...], settings: Settings, stop: Any, max_jobs: int, current: Any
) -> None:
    """A worker that claims a job and then never comes back from one call (as a PDFium load of
    a hostile page would not), its deadline a second away."""
    owner = f"stuck:{os.getpid()}"
    job = _claim_one(lanes, settings, stop, owner)
    if job is None:
        return
    current.value = f"{job.id} {owner} {time.time() + 1.0}".encode()
    time.sleep(600)  # deaf to the stop event too: only a kill ends it


def test_a_job_stuck_past_its_deadline_is_stopped_and_ends_deadline_exceeded(
    tmp_path: Path,
) -> None:
    from pressroom.worker.pool import Supervisor
    from tests.e2e.conftest import poll

    settings = Settings(data_dir=tmp_path / "data", scratch_dir=tmp_path / "scratch")
    services = open_services(settings)
    client = _client(services)
    key = services.store.tenancy.create_key("acme", now=services.clock())
    job_id = post(client, _bearer(key), png_bytes(tmp_path)).json()["id"]
    supervisor = Supervisor(settings, {Lane.BULK: 1}, target=stuck_worker, deadline_grace_s=0.5)
    supervisor.start()
    try:

        def outcome() -> tuple[JobState, str | None]:
            job = services.store.queue.get(job_id)
            assert job is not None
            return job.state, job.reason

        assert poll(lambda: outcome() == (JobState.REJECTED, "DEADLINE_EXCEEDED"), 60), outcome()
    finally:
        supervisor.stop(5)


def test_a_stuck_job_its_tenant_cancelled_ends_cancelled_when_its_worker_is_stopped(
    tmp_path: Path,
) -> None:
    """The supervisor's stop does not wait for the lease to lapse: a job cancelled while its
    worker was stuck ends CANCELLED at the stop, and its source goes with it."""
    from pressroom.worker.pool import Supervisor
    from tests.e2e.conftest import poll

    settings = Settings(data_dir=tmp_path / "data", scratch_dir=tmp_path / "scratch")
    services = open_services(settings)
    client = _client(services)
    key = services.store.tenancy.create_key("acme", now=services.clock())
    job_id = post(client, _bearer(key), png_bytes(tmp_path)).json()["id"]
    source = services.store.queue.get(job_id)
    assert source is not None and source.source_key
    supervisor = Supervisor(settings, {Lane.BULK: 1}, target=stuck_worker, deadline_grace_s=3.0)
    supervisor.start()
    try:

        def state() -> JobState:
            job = services.store.queue.get(job_id)
            assert job is not None
            return job.state

        assert poll(lambda: state() is JobState.RUNNING, 60), state()
        stopping = client.delete(f"/v1/jobs/{job_id}", headers=_bearer(key))
        assert stopping.status_code == 202, stopping.text  # running: it stops when it can
        assert poll(lambda: state() is JobState.REJECTED, 60), state()
        job = services.store.queue.get(job_id)
        assert job is not None and job.reason == "CANCELLED"
        assert not services.blobs.exists(source.source_key)
    finally:
        supervisor.stop(5)


def test_a_worker_past_its_memory_limit_is_stopped_and_the_job_ends_memory_limit(
    tmp_path: Path,
) -> None:
    from pressroom.worker.pool import Supervisor
    from tests.e2e.conftest import poll

    settings = Settings(
        data_dir=tmp_path / "data",
        scratch_dir=tmp_path / "scratch",
        worker_memory_limit_bytes=250 * 1024 * 1024,
    )
    services = open_services(settings)
    client = _client(services)
    key = services.store.tenancy.create_key("acme", now=services.clock())
    job_id = post(client, _bearer(key), png_bytes(tmp_path)).json()["id"]
    supervisor = Supervisor(settings, {Lane.BULK: 1}, target=greedy_worker)
    supervisor.start()
    first = supervisor.pids()
    try:

        def reason() -> tuple[JobState, str | None]:
            job = services.store.queue.get(job_id)
            assert job is not None
            return job.state, job.reason

        assert poll(lambda: reason() == (JobState.RETRYING, "MEMORY_LIMIT"), 60), reason()
        # the retry, made claimable at once; the second time it is permanent
        from sqlalchemy import update

        from pressroom.jobs.schema import jobs

        with services.store.db.engine.begin() as conn:
            conn.execute(update(jobs).where(jobs.c.id == job_id).values(next_eligible_at=0))
        assert poll(lambda: reason() == (JobState.REJECTED, "MEMORY_LIMIT"), 60), reason()

        # the slot was refilled with a fresh worker, alive
        def refilled() -> bool:
            pids = supervisor.pids()
            return bool(pids) and pids != first and all(_alive(pid) for pid in pids)

        assert poll(refilled, 30)
    finally:
        supervisor.stop(5)


def test_the_runner_names_each_job_it_runs_for_the_memory_guard(services: Services) -> None:
    from pressroom.worker.runner import JobRunner

    client = _client(services)
    key = services.store.tenancy.create_key("acme", now=services.clock())
    job_id = post(client, _bearer(key), png_bytes(services.settings.data_dir)).json()["id"]
    told: list[str | None] = []
    runner = JobRunner(
        services,
        FakeOcrEngine(lines=("Hello",)),
        "w1",
        on_job=lambda job: told.append(None if job is None else job.id),
    )
    assert runner.run_next((Lane.BULK,)) is not None
    assert told == [job_id, None]
    assert runner.run_next((Lane.BULK,)) is None and told == [job_id, None]


# --- the database's clock ------------------------------------------------------------------


def test_postgres_leases_run_on_the_database_clock_not_this_hosts(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pressroom.jobs.sql import SqlJobStore
    from pressroom.jobs.transport import make_engine

    store = SqlJobStore(make_engine(pg_url))
    clock = store.db.clock()
    before = clock()
    assert abs(before - time.time()) < 5  # the same machine here: the clocks agree
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() + 86400)  # this host jumps a day
    assert abs(clock() - before) < 5
    store.db.engine.dispose()


def test_sqlite_keeps_the_hosts_clock(services: Services) -> None:
    assert services.store.db.clock() is time.time


def test_a_bad_field_value_from_the_api_is_refused_before_the_file_is_stored(
    services: Services, tmp_path: Path
) -> None:
    client = _client(services)
    key = services.store.tenancy.create_key("acme", now=services.clock())
    response = client.post(
        "/v1/jobs",
        headers=_bearer(key),
        data={"lane": "fast"},
        files={"file": ("x.png", io.BytesIO(png_bytes(tmp_path)))},
    )
    assert response.status_code == 400 and response.json()["code"] == "BAD_REQUEST"
    assert list(services.settings.scratch_dir.iterdir()) == []
