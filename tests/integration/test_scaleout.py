"""The same service on PostgreSQL and S3 (moto's server): configuration only, same code."""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.service import Services, open_services
from pressroom.settings import Settings
from pressroom.storage.crypto import EncryptedBlobStore
from pressroom.storage.s3 import S3BlobStore
from tests.conftest import FakeClock
from tests.integration.test_service import png_bytes, post, work
from tests.s3server import S3Server

pytestmark = pytest.mark.integration


@pytest.fixture(params=["plain", "encrypted"])
def scaled(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    pg_url: str,
    s3_server: S3Server,
    clock: FakeClock,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Services]:
    bucket = s3_server.new_bucket()
    for name, value in s3_server.env(bucket).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PRESSROOM_DATABASE_URL", pg_url)
    # moto's endpoint is reachable by the test client too: links may point at it
    monkeypatch.setenv("PRESSROOM_S3_PUBLIC_ENDPOINT", s3_server.url)
    if request.param == "encrypted":
        monkeypatch.setenv("PRESSROOM_MASTER_KEY", base64.b64encode(b"k" * 32).decode())
    settings = dataclasses.replace(
        Settings.from_env(),
        data_dir=tmp_path / "data",
        scratch_dir=tmp_path / "scratch",
    )
    settings.scratch_dir.mkdir()
    svc = open_services(settings)
    svc.clock = clock
    yield svc
    svc.store.db.close_listener()
    svc.store.db.engine.dispose()


def raw_s3(services: Services) -> S3BlobStore:
    blobs = services.blobs
    inner = blobs.inner if isinstance(blobs, EncryptedBlobStore) else blobs
    assert isinstance(inner, S3BlobStore)
    return inner


def test_upload_process_download_on_postgres_and_s3(scaled: Services, tmp_path: Path) -> None:
    services = scaled
    assert services.store.db.is_postgres
    key = services.store.tenancy.create_key("acme", now=services.clock())
    client = TestClient(create_app(services))
    headers = {"Authorization": f"Bearer {key}"}
    label = 'Reçu "7"; année.pdf'  # quotes, a separator and non-ASCII, as a client may send
    job_id = post(client, headers, png_bytes(tmp_path), label=label).json()["id"]
    named = """attachment; filename="Re_u _7__ ann_e.pdf"; filename*=UTF-8''"""
    named += "Re%C3%A7u%20%227%22%3B%20ann%C3%A9e.pdf"
    # the source is in the bucket under the prefix, not on local disk
    assert [k for k, _ in raw_s3(services).list("sources")] == [f"sources/acme/{job_id}/source"]
    assert not (services.settings.data_dir / "blobs").exists()
    work(services)
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert job["state"] == "complete"
    artifacts = [k for k, _ in raw_s3(services).list("artifacts")]
    assert len(artifacts) == 1 and artifacts[0].startswith(f"artifacts/acme/{job_id}/")
    assert list(raw_s3(services).list("sources")) == []
    response = client.get(job["artifact_url"], follow_redirects=False)
    if isinstance(services.blobs, EncryptedBlobStore):
        # encrypted at rest: the bucket holds ciphertext, the API decrypts while streaming
        assert response.status_code == 200 and response.content.startswith(b"%PDF")
        assert response.headers["content-disposition"] == named
        with raw_s3(services).open(artifacts[0]) as fh:
            assert not fh.read().startswith(b"%PDF")
    else:
        # plain S3: a short-lived presigned URL straight to the bucket
        assert response.status_code == 307
        target = response.headers["location"]
        assert "X-Amz-Expires=300" in target and "X-Amz-Signature=" in target
        fetched = httpx.get(target)
        assert fetched.status_code == 200 and fetched.content.startswith(b"%PDF")
        # the bucket names the download as the API would: the presigned link says so
        assert fetched.headers["content-disposition"] == named
        assert fetched.headers["content-type"] == "application/pdf"
    assert list(services.settings.scratch_dir.iterdir()) == []


def test_a_private_s3_endpoint_is_streamed_through_the_api(
    tmp_path: Path, pg_url: str, s3_server: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # MinIO inside a private network (AWS_ENDPOINT_URL, no PRESSROOM_S3_PUBLIC_ENDPOINT):
    # a presigned link would name a host the client cannot reach, so the API streams
    for name, value in s3_server.env(s3_server.new_bucket()).items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PRESSROOM_S3_PUBLIC_ENDPOINT", raising=False)
    settings = dataclasses.replace(
        Settings.from_env(), data_dir=tmp_path / "d", scratch_dir=tmp_path, database_url=pg_url
    )
    services = open_services(settings)
    try:
        key = services.store.tenancy.create_key("acme", now=services.clock())
        client = TestClient(create_app(services))
        headers = {"Authorization": f"Bearer {key}"}
        job_id = post(client, headers, png_bytes(tmp_path)).json()["id"]
        work(services)
        job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
        response = client.get(job["artifact_url"], follow_redirects=False)
        assert response.status_code == 200 and response.content.startswith(b"%PDF")
    finally:
        services.store.db.close_listener()
        services.store.db.engine.dispose()
