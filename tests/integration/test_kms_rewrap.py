"""Rotation and ``pressroom keys rewrap`` against moto's KMS over HTTP: blobs sealed under the
old local master key, in format 1 and under an older KMS key stay readable; a re-wrap moves
their data keys to the new key without touching the sealed bodies (compared byte for byte), is
idempotent, works on a bucket, and counts what a refused key still holds."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from pressroom.app import create_app
from pressroom.jobs.schema import jobs
from pressroom.kek import Keyring
from pressroom.rewrap import rewrap
from pressroom.storage.crypto import EncryptedBlobStore, encrypt_file
from pressroom.storage.kms import KmsKey
from tests.conftest import FakeClock
from tests.integration.test_kms import (
    OLD_MASTER,
    _aws_env,
    _b64,
    all_blob_keys,
    api,
    body_after_header,
    inner,
    key_block,
    kms,
    open_kms,
    stored,
)
from tests.integration.test_service import png_bytes, post
from tests.kmsserver import KmsServer

pytestmark = pytest.mark.integration
__all__ = ["_aws_env", "kms"]  # the fixtures, shared with test_kms


def test_rotation_old_keys_read_and_rewrap_moves_data_keys_without_touching_bodies(
    kms: KmsServer, tmp_path: Path, clock: FakeClock
) -> None:
    old_arn, new_arn = kms.new_key(), kms.new_key()
    master = base64.b64encode(OLD_MASTER).decode()
    # first under the local master key alone, then under an older KMS key
    local = open_kms(tmp_path, clock, kms, "", PRESSROOM_MASTER_KEY=master)
    src = tmp_path / "doc.bin"
    src.write_bytes(os.urandom(3 * (1 << 20) + 5))
    local.blobs.put_file("sources/acme/local/source", src)
    encrypt_file(src, tmp_path / "v1", OLD_MASTER, "sources/acme/v1/source")  # format 1
    inner(local).put_file("sources/acme/v1/source", tmp_path / "v1")
    client, headers = api(local)
    job_l = post(client, headers, png_bytes(tmp_path), label="local label").json()["id"]
    older = open_kms(tmp_path, clock, kms, old_arn, PRESSROOM_MASTER_KEY=master)
    older.blobs.put_file("sources/acme/kms/source", src)
    client = TestClient(create_app(older), client=("127.0.0.1", 50000))
    job_k = post(client, headers, png_bytes(tmp_path), label="kms label").json()["id"]
    with older.store.db.tx(read_only=True) as conn:
        labels = dict(conn.execute(select(jobs.c.id, jobs.c.label)).all())
    s1, s2 = labels[job_l], labels[job_k]
    assert s1.startswith("s1:") and s2.startswith("s2:kms." + _b64(old_arn))

    current = open_kms(
        tmp_path, clock, kms, new_arn, PRESSROOM_MASTER_KEY=master, PRESSROOM_KMS_KEYS_OLD=old_arn
    )
    names = ("sources/acme/local/source", "sources/acme/kms/source", "sources/acme/v1/source")
    before = {k: stored(current, k) for k in all_blob_keys(current)}
    for key in names:  # all readable under the new configuration
        with current.blobs.open(key) as fh:
            assert fh.read() == src.read_bytes()
    assert current.labels.open(job_l, s1) == "local label"
    assert current.labels.open(job_k, s2) == "kms label"

    done = rewrap(current)
    assert done["blobs"] == {"rewrapped": 4, "format1": 1}  # two uploads' sources besides
    assert done["values"] == {"rewrapped": 2}
    for key in set(before) - {"sources/acme/v1/source"}:
        assert key_block(current, key)["kid"] == new_arn
        # the sealed body, and the header its segments are bound to, byte for byte the same
        assert body_after_header(stored(current, key)) == body_after_header(before[key])
    assert stored(current, "sources/acme/v1/source") == before["sources/acme/v1/source"]
    with current.store.db.tx(read_only=True) as conn:
        labels = dict(conn.execute(select(jobs.c.id, jobs.c.label)).all())
    assert labels[job_k].rsplit(".", 1)[1] == s2.rsplit(".", 1)[1]  # same sealed text
    assert all(v.startswith("s2:kms." + _b64(new_arn)) for v in labels.values())

    # the old KMS key disabled, and a process without the old local key: still all readable
    kms.disable(old_arn)
    try:
        fresh = open_kms(tmp_path, clock, kms, new_arn)
        for key in ("sources/acme/local/source", "sources/acme/kms/source"):
            with fresh.blobs.open(key) as fh:
                assert fh.read() == src.read_bytes()
        assert fresh.labels.open(job_l, labels[job_l]) == "local label"
        assert fresh.labels.open(job_k, labels[job_k]) == "kms label"
        # idempotent, through the command an operator runs
        got = subprocess.run(
            [str(Path(sys.executable).with_name("pressroom")), "keys", "rewrap"],
            env={**os.environ, "PRESSROOM_DATA_DIR": str(tmp_path / "data"),
                 "PRESSROOM_SCRATCH_DIR": str(tmp_path / "scratch"),
                 "PRESSROOM_MASTER_KEY": master, **kms.env(new_arn)},
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert got.returncode == 0, got.stderr
        assert "blobs: 5 (4 current, 1 format1)" in got.stdout
        assert "values: 2 (2 current)" in got.stdout
        assert "format 1" in got.stderr
    finally:
        kms.enable(old_arn)


def test_rewrap_on_an_s3_bucket_copies_the_sealed_body_byte_for_byte(
    kms: KmsServer, tmp_path: Path
) -> None:
    """The same moto server speaks S3: a bucket of KMS-sealed blobs moved to a new key."""
    from pressroom.storage.crypto import rewrap_blob
    from pressroom.storage.s3 import S3BlobStore, make_client
    from tests.s3server import CREDENTIALS

    s3 = make_client(endpoint_url=kms.moto_url, **CREDENTIALS)
    s3.create_bucket(Bucket="kms-rewrap")
    bucket = S3BlobStore("kms-rewrap", "pre", client=s3)
    old, new = kms.new_key(), kms.new_key()
    src = tmp_path / "big"
    src.write_bytes(os.urandom(9 * (1 << 20) + 7))  # multipart, ten segments
    EncryptedBlobStore(bucket, keyring=Keyring(KmsKey(old, kms.client()))).put_file(
        "artifacts/acme/j1/d.pdf", src
    )
    with bucket.open("artifacts/acme/j1/d.pdf") as fh:
        before = fh.read()
    ring = Keyring(KmsKey(new, kms.client(), old=[old]))
    assert rewrap_blob(bucket, "artifacts/acme/j1/d.pdf", ring, tmp_path) == "rewrapped"
    assert rewrap_blob(bucket, "artifacts/acme/j1/d.pdf", ring, tmp_path) == "current"
    with bucket.open("artifacts/acme/j1/d.pdf") as fh:
        after = fh.read()
    assert body_after_header(after) == body_after_header(before) and after != before
    kms.disable(old)
    try:
        fresh = EncryptedBlobStore(bucket, keyring=Keyring(KmsKey(new, kms.client())))
        fresh.get_to_path("artifacts/acme/j1/d.pdf", tmp_path / "back")
        assert (tmp_path / "back").read_bytes() == src.read_bytes()
    finally:
        kms.enable(old)
    s3.close()


def test_rewrap_counts_what_a_refused_key_holds_and_goes_on(
    kms: KmsServer, tmp_path: Path, clock: FakeClock
) -> None:
    gone, kept, new = kms.new_key(), kms.new_key(), kms.new_key()
    src = tmp_path / "doc"
    src.write_bytes(b"page" * 1000)
    for key, name in ((gone, "a"), (kept, "b")):
        open_kms(tmp_path, clock, kms, key).blobs.put_file(f"sources/acme/{name}/source", src)
    kms.disable(gone)
    try:
        done = rewrap(open_kms(tmp_path, clock, kms, new, PRESSROOM_KMS_KEYS_OLD=f"{gone},{kept}"))
    finally:
        kms.enable(gone)
    assert done["blobs"] == {"refused": 1, "rewrapped": 1}
    current = open_kms(tmp_path, clock, kms, new)
    assert key_block(current, "sources/acme/a/source")["kid"] == gone  # left as it was
    assert key_block(current, "sources/acme/b/source")["kid"] == new


def test_rewrap_of_rows_sharing_a_column_key_costs_one_wrap_and_leaves_one_wrapped_key(
    kms: KmsServer,
) -> None:
    """50 labels under one column key: one Decrypt and one Encrypt re-wrap them all, and a cold
    listing afterwards costs one Decrypt, not 50."""
    from pressroom.labels import Labels, _parse2

    old, new = kms.new_key(), kms.new_key()
    sealer = Labels(b"s", kms=Keyring(KmsKey(old, kms.client())))
    rows = {f"job{i}": sealer.seal(f"job{i}", f"label {i}") for i in range(50)}
    assert len({_parse2(v or "")[2] for v in rows.values()}) == 1
    before = kms.calls.copy()
    rewrapper = Labels(b"s", kms=Keyring(KmsKey(new, kms.client(), old=[old])))
    moved = {j: rewrapper.rewrap(j, v, "label") for j, v in rows.items()}
    spent = kms.calls - before
    assert spent["Encrypt"] == 1 and spent["Decrypt"] == 1, dict(spent)
    assert len({_parse2(v or "")[2] for v in moved.values()}) == 1
    assert all((v or "").startswith("s2:kms." + _b64(new)) for v in moved.values())
    before = kms.calls.copy()
    cold = Labels(b"s", kms=Keyring(KmsKey(new, kms.client())))
    assert all(cold.open(j, v) == f"label {j[3:]}" for j, v in moved.items())
    assert dict(kms.calls - before) == {"Decrypt": 1}


class _DeletedMeanwhile:
    """Stands in for housekeeping deleting the blob (retention, delivery) while a re-wrap
    copies it: the delete lands after the read, before the write."""

    def __init__(self, store: Any, then: str = "delete") -> None:
        self.store, self.then = store, then

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def replace_if_version(self, key: str, path: Path, version: str) -> bool:
        if self.then == "delete":
            self.store.delete(key)
        else:  # another writer replaced it meanwhile
            other = path.parent.parent / "other"
            other.write_bytes(b"written meanwhile")
            self.store.put_file(key, other)
            other.unlink()
        return bool(self.store.replace_if_version(key, path, version))


@pytest.mark.parametrize("then", ["delete", "replace"])
def test_rewrap_never_brings_back_a_blob_deleted_or_rewritten_meanwhile(
    kms: KmsServer, tmp_path: Path, then: str
) -> None:
    from pressroom.storage.crypto import VersionedBlobStore, rewrap_blob
    from pressroom.storage.local import LocalBlobStore
    from pressroom.storage.s3 import S3BlobStore, make_client
    from tests.s3server import CREDENTIALS

    s3 = make_client(endpoint_url=kms.moto_url, **CREDENTIALS)
    s3.create_bucket(Bucket=f"kms-gone-{then}")
    old, new = kms.new_key(), kms.new_key()
    src = tmp_path / "src"
    src.write_bytes(b"%PDF- an output" * 100)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    ring = Keyring(KmsKey(new, kms.client(), old=[old]))
    stores = (LocalBlobStore(tmp_path / "blobs"), S3BlobStore(f"kms-gone-{then}", client=s3))
    for store in stores:
        assert isinstance(store, VersionedBlobStore)
        key = "artifacts/acme/j1/d.pdf"
        EncryptedBlobStore(store, keyring=Keyring(KmsKey(old, kms.client()))).put_file(key, src)
        racy = _DeletedMeanwhile(store, then)
        assert rewrap_blob(racy, key, ring, scratch) == "gone", type(store).__name__
        if then == "delete":
            assert not store.exists(key)  # not brought back
        else:
            with store.open(key) as fh:
                assert fh.read() == b"written meanwhile"  # not overwritten
        assert list(scratch.iterdir()) == []
    s3.close()


def test_a_vanished_or_malformed_blob_is_counted_and_the_run_goes_on(
    kms: KmsServer, tmp_path: Path, clock: FakeClock
) -> None:
    """A source delivered (deleted) after the listing is ``gone``; a blob whose header is ours
    but broken is ``unreadable``; the rest is re-wrapped and the command exits 2."""
    from pressroom.rewrap import rewrap_blobs

    old, new = kms.new_key(), kms.new_key()
    sealing = open_kms(tmp_path, clock, kms, old)
    src = tmp_path / "doc"
    src.write_bytes(b"source bytes")
    for n in range(3):
        sealing.blobs.put_file(f"sources/acme/j{n}/source", src)
    bad = tmp_path / "bad"
    for n, data in enumerate([b'PRSENC2\n\x00\x00\x00\x05{"v":', b"PRSENC2\n\x00\x00\x00\x02[]"]):
        bad.write_bytes(data)
        inner(sealing).put_file(f"artifacts/acme/x{n}/x.pdf", bad)
    bad.write_bytes(b"plain bytes, from before encryption")
    inner(sealing).put_file("artifacts/acme/p/p.pdf", bad)
    current = open_kms(tmp_path, clock, kms, new, PRESSROOM_KMS_KEYS_OLD=old)
    assert isinstance(current.blobs, EncryptedBlobStore)

    def progress(_what: str, done: int) -> None:
        if done == 1:  # meanwhile the service delivers a job and deletes its source
            inner(current).delete([k for k, _ in inner(current).list("sources")][-1])

    done = rewrap_blobs(current.blobs, tmp_path / "scratch", progress)
    assert done == {"rewrapped": 2, "gone": 1, "unreadable": 2, "plain": 1}
    got = subprocess.run(
        [str(Path(sys.executable).with_name("pressroom")), "keys", "rewrap"],
        env={**os.environ, "PRESSROOM_DATA_DIR": str(tmp_path / "data"),
             "PRESSROOM_SCRATCH_DIR": str(tmp_path / "scratch"), **kms.env(new)},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert got.returncode == 2, got.stderr
    assert "blobs: 5 (2 current, 1 plain, 2 unreadable)" in got.stdout
    assert "2 unreadable" in got.stderr and "1 blobs are not sealed" in got.stderr
