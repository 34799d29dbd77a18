"""Keys held by a KMS, against moto's KMS over HTTP (``tests/kmsserver.py``): the round trip
with no master key, rotation and ``keys rewrap`` (the sealed body untouched), a disabled key and
a KMS outage mid-job (fail closed, never a plaintext fallback), and no plaintext data key in the
database or the blob store."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from pressroom.app import create_app
from pressroom.errors import KmsKeyRefused, KmsUnavailable
from pressroom.jobs.model import JobState
from pressroom.jobs.schema import jobs, metadata, webhook_secrets
from pressroom.kek import Keyring, LocalMasterKey
from pressroom.labels import Labels
from pressroom.service import Services, open_services
from pressroom.settings import Settings
from pressroom.storage.crypto import MAGIC2, EncryptedBlobStore, read_header
from pressroom.storage.kms import KmsKey
from pressroom.testing import FakeOcrEngine
from tests.conftest import FakeClock
from tests.integration.test_service import LINES, png_bytes, post, work
from tests.kmsserver import KmsServer, running_kms

pytestmark = pytest.mark.integration
OLD_MASTER = bytes(range(32))


@pytest.fixture(scope="module")
def kms() -> Iterator[KmsServer]:
    with running_kms() as server:
        yield server


@pytest.fixture(autouse=True)
def _aws_env(kms: KmsServer, monkeypatch: pytest.MonkeyPatch) -> None:
    # boto3 reads its credentials and region itself, as in production
    for name, value in kms.env("unused").items():
        if name.startswith("AWS_"):
            monkeypatch.setenv(name, value)


def open_kms(tmp_path: Path, clock: FakeClock, kms: KmsServer, key: str, **env: str) -> Services:
    data = tmp_path / "data"
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    settings = Settings.from_env(
        {
            "PRESSROOM_DATA_DIR": str(data),
            "PRESSROOM_SCRATCH_DIR": str(scratch),
            "PRESSROOM_WEBHOOK_ALLOW_PRIVATE": "1",
            **{k: v for k, v in kms.env(key).items() if k.startswith("PRESSROOM_")},
            **env,
        }
    )
    services = open_services(settings)
    services.clock = clock
    return services


def api(services: Services) -> tuple[TestClient, dict[str, str]]:
    key = services.store.tenancy.create_key("acme", now=services.clock())
    return (
        TestClient(create_app(services), client=("127.0.0.1", 50000)),
        {"Authorization": f"Bearer {key}"},
    )


def inner(services: Services) -> Any:
    assert isinstance(services.blobs, EncryptedBlobStore)
    return services.blobs.inner


def stored(services: Services, key: str) -> bytes:
    with inner(services).open(key) as fh:
        return bytes(fh.read())


def key_block(services: Services, key: str) -> dict[str, Any]:
    with inner(services).open(key) as fh:
        header = read_header(fh, key)
    assert header.version == 2 and header.key_block is not None
    return header.key_block


def body_after_header(data: bytes) -> tuple[bytes, bytes]:
    """(body header, sealed segments) of a format 2 blob: what a re-wrap must not touch."""
    assert data.startswith(MAGIC2)
    n = int.from_bytes(data[8:12], "big")
    body_header = data[12 : 12 + n]
    m = int.from_bytes(data[12 + n : 16 + n], "big")
    return body_header, data[16 + n + m :]


def _b64(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


def all_blob_keys(services: Services) -> list[str]:
    return [
        k
        for area in ("sources", "review", "artifacts", "scratch")
        for k, _ in inner(services).list(area)
    ]


def test_round_trip_with_a_kms_and_no_master_key(
    kms: KmsServer, tmp_path: Path, clock: FakeClock
) -> None:
    from pressroom.notify.webhooks import deliver_due, signature
    from tests.hookservers import Receiver

    arn = kms.new_key()
    services = open_kms(tmp_path, clock, kms, arn)
    assert not services.settings.storage.master_key  # the KMS alone: no master key anywhere
    client, headers = api(services)
    receiver = Receiver(status=200)
    start = kms.calls.copy()
    try:
        sent = post(
            client,
            headers,
            png_bytes(tmp_path),
            label="Okafor 2026-118",
            title="Okafor estate",
            webhook_url=receiver.url,
        ).json()
        spent = {"intake": kms.calls - start}
        # the worker and the deliverer as processes of their own: cold caches
        worker = open_kms(tmp_path, clock, kms, arn)
        work(worker)
        spent["worker"] = kms.calls - start - sum(spent.values(), Counter())
        secret = client.get("/v1/webhook-secret", headers=headers).json()["secret"]
        deliverer = open_kms(tmp_path, clock, kms, arn)
        assert deliver_due(deliverer, "w") == 1
        spent["webhook"] = kms.calls - start - sum(spent.values(), Counter())
        hook_headers, body = receiver.received[-1]
    finally:
        receiver.close()
    job = client.get(f"/v1/jobs/{sent['id']}", headers=headers).json()
    assert job["state"] == "complete"
    assert (job["label"], job["title"]) == ("Okafor 2026-118", "Okafor estate")
    assert client.get(job["artifact_url"]).content.startswith(b"%PDF")
    expected = signature(
        secret, hook_headers["webhook-id"], int(hook_headers["webhook-timestamp"]), body
    )
    assert hook_headers["webhook-signature"] == expected
    # every blob, the source included, sealed under a KMS data key of this key
    keys = all_blob_keys(services)
    assert any(k.startswith("artifacts/") for k in keys)
    for key in keys:
        block = key_block(services, key)
        assert (block["kek"], block["kid"]) == ("kms", arn), key
    # the columns: sealed ``s2:`` under a KMS column key, never the master key
    with services.store.db.tx(read_only=True) as conn:
        row = conn.execute(select(jobs.c.label, jobs.c.title)).one()
        sealed_secret = conn.execute(select(webhook_secrets.c.secret)).scalar_one()
    for value in (row.label, row.title, sealed_secret):
        assert value.startswith("s2:kms.") and "Okafor" not in value
    assert services.store.outbox.signing_secrets("acme", now=clock()) == (secret,)
    print("\nKMS calls for one job, by process:", {k: dict(v) for k, v in spent.items()})


def test_a_listing_of_100_jobs_costs_one_kms_call_per_column_key(
    kms: KmsServer, tmp_path: Path, clock: FakeClock
) -> None:
    arn = kms.new_key()
    services = open_kms(tmp_path, clock, kms, arn)
    client, headers = api(services)
    data = png_bytes(tmp_path)
    before = kms.calls.copy()
    for n in range(100):
        assert post(client, headers, data, label=f"case {n}", title=f"T{n}").status_code == 202
    made = kms.calls - before
    # one data key per source blob; the label and title columns one key each, reused
    assert made["GenerateDataKey"] == 100 + 2
    # another process (a cold cache) lists them
    other = open_kms(tmp_path, clock, kms, arn)
    other_client = TestClient(create_app(other), client=("127.0.0.1", 50000))
    before = kms.calls.copy()
    listed = other_client.get("/v1/jobs", headers=headers, params={"limit": 100}).json()
    assert sorted(j["label"] for j in listed["jobs"]) == sorted(f"case {n}" for n in range(100))
    spent = kms.calls - before
    print(f"\nKMS calls: 100 intakes {dict(made)}; listing 100 jobs, cold cache {dict(spent)}")
    assert sum(spent.values()) <= 2  # one Decrypt per column key (label, title), not per row


def test_a_disabled_or_unknown_key_fails_closed(
    kms: KmsServer, tmp_path: Path, clock: FakeClock
) -> None:
    arn = kms.new_key()
    services = open_kms(tmp_path, clock, kms, arn)
    src = tmp_path / "doc"
    src.write_bytes(b"Account 12345678 " * 100)
    services.blobs.put_file("sources/acme/j1/source", src)
    sealed_label = services.labels.seal("j1", "a label")
    kms.disable(arn)
    try:
        # writes: refused before a byte is stored, never stored unsealed
        with pytest.raises(KmsKeyRefused) as refused:
            services.blobs.put_file("sources/acme/j2/source", src)
        assert refused.value.code == "KMS_KEY_REFUSED"
        assert not inner(services).exists("sources/acme/j2/source")
        with pytest.raises(KmsKeyRefused):  # a column with no key in hand: refused
            services.labels.seal("j2", "a title", purpose="title")
        # (the label column's key, generated before, serves out its bound: 5 minutes at most)
        # reads in another process (nothing cached): refused, no plaintext
        fresh = open_kms(tmp_path, clock, kms, arn)
        with pytest.raises(KmsKeyRefused):
            fresh.blobs.get_to_path("sources/acme/j1/source", tmp_path / "out")
        with pytest.raises(KmsKeyRefused):  # a sealed label: refused, not shown as none
            fresh.labels.open("j1", sealed_label)
        assert not (tmp_path / "out").exists() or (tmp_path / "out").read_bytes() == b""
        # the door answers 503 with the code: the upload is not kept
        client, headers = api(fresh)
        answer = post(client, headers, png_bytes(tmp_path))
        assert answer.status_code == 503 and answer.json()["code"] == "KMS_KEY_REFUSED"
        assert all_blob_keys(fresh) == ["sources/acme/j1/source"]
    finally:
        kms.enable(arn)
    # a key the KMS does not know (deleted, or a wrong id): refused as well
    gone = open_kms(
        tmp_path, clock, kms, arn.rsplit("/", 1)[0] + "/" + "0" * 8 + "-0000-0000-0000-" + "0" * 12
    )
    with pytest.raises(KmsKeyRefused):
        gone.blobs.put_file("sources/acme/j3/source", src)


class StopsTheKms:
    """An OCR engine that takes the KMS endpoint down on its first page: the worker has
    fetched (and opened) the source, and must seal the output with no KMS."""

    def __init__(self, kms: KmsServer) -> None:
        self.inner, self.kms = FakeOcrEngine(lines=LINES), kms

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def recognize(self, *args: Any, **kwargs: Any) -> Any:
        if not self.kms.gone.is_set():
            self.kms.stop()
        return self.inner.recognize(*args, **kwargs)


def test_a_kms_outage_during_a_job_retries_it_and_never_publishes_unsealed(
    kms: KmsServer, tmp_path: Path, clock: FakeClock
) -> None:
    from pressroom.jobs.model import Lane
    from pressroom.worker.runner import JobRunner

    arn = kms.new_key()
    services = open_kms(tmp_path, clock, kms, arn)
    client, headers = api(services)
    sent = post(client, headers, png_bytes(tmp_path), label="outage").json()
    worker = open_kms(tmp_path, clock, kms, arn)  # a worker process: its own (cold) cache
    try:
        runner = JobRunner(worker, StopsTheKms(kms), "w1")  # type: ignore[arg-type]
        runner.run_next((Lane.BULK, Lane.INTERACTIVE))
        assert kms.gone.is_set()
        job = worker.store.queue.get(sent["id"])
        assert (
            job is not None and job.state == JobState.RETRYING and job.reason == "KMS_UNAVAILABLE"
        )
        # nothing published: no output, sealed or not; only the sealed source
        assert all_blob_keys(worker) == [f"sources/acme/{sent['id']}/source"]
        assert all(stored(worker, k).startswith(MAGIC2) for k in all_blob_keys(worker))
        with pytest.raises(KmsUnavailable):  # the worker's cache has only the source's key
            worker.labels.seal("x", "y")
        # an API process with a cold cache: the listing fails closed, no label shown blank
        cold = TestClient(create_app(open_kms(tmp_path, clock, kms, arn)), client=("127.0.0.1", 1))
        listing = cold.get("/v1/jobs", headers=headers)
        assert listing.status_code == 503 and listing.json()["code"] == "KMS_UNAVAILABLE"
    finally:
        kms.start()
    clock.advance(3600)
    work(worker)
    job = worker.store.queue.get(sent["id"])
    assert job is not None and job.state == JobState.COMPLETE and job.attempts == 2
    for key in all_blob_keys(worker):
        assert key_block(worker, key)["kid"] == arn


def test_no_plaintext_data_key_is_written_to_the_database_or_the_blob_store(
    kms: KmsServer, tmp_path: Path, clock: FakeClock, pg_url: str
) -> None:
    from pressroom.notify.webhooks import deliver_due
    from tests.hookservers import Receiver

    arn = kms.new_key()
    handed_out = len(kms.plaintexts)
    services = open_kms(tmp_path, clock, kms, arn, PRESSROOM_DATABASE_URL=pg_url)
    client, headers = api(services)
    receiver = Receiver(status=200)
    try:
        for n in range(3):
            post(
                client,
                headers,
                png_bytes(tmp_path),
                label=f"L{n}",
                title=f"T{n}",
                webhook_url=receiver.url,
            )
        work(services)
        client.get("/v1/webhook-secret", headers=headers)
        assert deliver_due(services, "w") == 3
    finally:
        receiver.close()
    listed = client.get("/v1/jobs", headers=headers).json()["jobs"]
    assert {j["state"] for j in listed} == {"complete"} and len(listed) == 3
    keys = kms.plaintexts[handed_out:]
    assert len(keys) >= 3 * 2 + 3  # a source and an output per job, the column keys
    forms = [
        form
        for key in keys
        for form in (key, key.hex().encode(), key.hex().upper().encode(),
                     base64.b64encode(key), base64.urlsafe_b64encode(key),
                     base64.b64encode(key).rstrip(b"="), base64.urlsafe_b64encode(key).rstrip(b"="))
    ]  # fmt: skip
    # every blob as stored, and every file under the data dir
    places = {k: stored(services, k) for k in all_blob_keys(services)}
    for path in [*(tmp_path / "data").rglob("*"), *(tmp_path / "scratch").rglob("*")]:
        if path.is_file():
            places[str(path)] = path.read_bytes()
    # a dump of every table of the database
    with services.store.db.tx(read_only=True) as conn:
        for table in metadata.sorted_tables:
            rows = conn.execute(select(table)).all()
            places[f"table {table.name}"] = json.dumps(
                [[_dumped(v) for v in row] for row in rows]
            ).encode()
    assert len(places) > 10
    for where, data in places.items():
        for form in forms:
            assert form not in data, where
    services.store.db.engine.dispose()


def _dumped(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("latin-1")
    return value if isinstance(value, int | float | str | type(None)) else repr(value)


def test_the_keyring_bounds_and_binds_its_cache(kms: KmsServer) -> None:
    """Unwrapped keys are cached by wrapped bytes *and* context: a cached key never opens a
    value bound elsewhere; past its TTL or its size the KMS is asked again."""
    from pressroom.errors import EncryptionError
    from pressroom.kek import DataKeyCache

    now = [0.0]
    kek = KmsKey(kms.new_key(), kms.client())
    ring = Keyring(kek, cache=DataKeyCache(entries=2, ttl_s=60, clock=lambda: now[0]))
    made = ring.generate({"pressroom": "blob", "blob": "a"})
    calls = kek.calls
    assert (
        ring.unwrap("kms", made.key_id, made.wrapped, {"pressroom": "blob", "blob": "a"})
        == made.plaintext
    )
    assert kek.calls == calls  # cached
    with pytest.raises(EncryptionError):  # the same wrapped bytes, another context: asked, refused
        ring.unwrap("kms", made.key_id, made.wrapped, {"pressroom": "blob", "blob": "b"})
    now[0] = 61.0
    ring.unwrap("kms", made.key_id, made.wrapped, {"pressroom": "blob", "blob": "a"})
    assert kek.calls == calls + 2  # expired: asked again
    for n in range(3):
        ring.generate({"n": str(n)})
    assert len(ring.cache) == 2
    # a local ring never opens a KMS-wrapped key: no reader for it
    local = Labels(b"s" * 32, OLD_MASTER)
    assert local.open("j", "s2:kms." + _b64(made.key_id) + ".AAAA.AAAA") is None
    assert dataclasses.replace(local, kms=None).sealing
    assert isinstance(Keyring(LocalMasterKey(OLD_MASTER)).current, LocalMasterKey)


def test_a_kms_outage_on_the_last_attempt_dead_letters_with_the_code(
    kms: KmsServer, tmp_path: Path, clock: FakeClock
) -> None:
    from pressroom.jobs.model import Lane
    from pressroom.worker.runner import JobRunner

    arn = kms.new_key()
    services = open_kms(tmp_path, clock, kms, arn, PRESSROOM_MAX_ATTEMPTS="1")
    client, headers = api(services)
    sent = post(client, headers, png_bytes(tmp_path)).json()
    worker = open_kms(tmp_path, clock, kms, arn, PRESSROOM_MAX_ATTEMPTS="1")
    try:
        JobRunner(worker, StopsTheKms(kms), "w1").run_next((Lane.BULK, Lane.INTERACTIVE))  # type: ignore[arg-type]
    finally:
        kms.start()
    job = worker.store.queue.get(sent["id"])
    assert job is not None and job.state == JobState.REJECTED
    assert job.reason == "RETRIES_EXHAUSTED" and "KMS_UNAVAILABLE" in (job.message or "")
    assert not [k for k in all_blob_keys(worker) if not k.startswith("sources/")]


def test_a_wrapped_key_naming_a_kms_key_not_ours_is_refused_before_the_kms_is_asked(
    kms: KmsServer, tmp_path: Path
) -> None:
    """Whoever writes the bucket or the database writes the key id a ciphertext names: a blob
    or a value sealed under another KMS key (one the service's role may decrypt with) is
    refused unopened, unless that key is listed in PRESSROOM_KMS_KEYS_OLD."""
    from pressroom.storage.local import LocalBlobStore

    ours, theirs = kms.new_key(), kms.new_key()
    blobs = LocalBlobStore(tmp_path / "blobs")
    src = tmp_path / "forged"
    src.write_bytes(b"FORGED SOURCE")
    key = "sources/acme/j1/source"
    EncryptedBlobStore(blobs, keyring=Keyring(KmsKey(theirs, kms.client()))).put_file(key, src)
    forged = Labels(b"s", kms=Keyring(KmsKey(theirs, kms.client()))).seal("j1", "forged", "title")
    service = EncryptedBlobStore(blobs, keyring=Keyring(KmsKey(ours, kms.client())))
    labels = Labels(b"s", kms=Keyring(KmsKey(ours, kms.client())))
    before = kms.calls.copy()
    with pytest.raises(KmsKeyRefused) as refused:
        service.get_to_path(key, tmp_path / "out")
    assert refused.value.code == "KMS_KEY_REFUSED"
    with pytest.raises(KmsKeyRefused):
        labels.open("j1", forged, "title")
    assert not (kms.calls - before)  # the KMS was never asked
    # listed as an older key (its bare id, or its ARN): read
    bare = theirs.rsplit("/", 1)[-1]
    for listed in (bare, theirs):
        ring = Keyring(KmsKey(ours, kms.client(), old=[listed]))
        EncryptedBlobStore(blobs, keyring=ring).get_to_path(key, tmp_path / "out")
        assert (tmp_path / "out").read_bytes() == b"FORGED SOURCE"
        assert Labels(b"s", kms=ring).open("j1", forged, "title") == "forged"
    # the current key configured by alias: its ARN is learned (one GenerateDataKey), then read
    admin = kms.client(kms.moto_url)
    admin.create_alias(AliasName="alias/pressroom-test", TargetKeyId=theirs.rsplit("/", 1)[-1])
    by_alias = EncryptedBlobStore(
        blobs, keyring=Keyring(KmsKey("alias/pressroom-test", kms.client()))
    )
    by_alias.get_to_path(key, tmp_path / "out")
    assert (tmp_path / "out").read_bytes() == b"FORGED SOURCE"
    admin.close()
    # and through the settings
    settings = Settings.from_env(
        {"PRESSROOM_KMS_KEY_ID": ours, "PRESSROOM_KMS_KEYS_OLD": f"x, {bare}"}
    )
    assert settings.storage.kms_keys_old == ("x", bare)
