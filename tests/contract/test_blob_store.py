"""The blob storage contract, on every adapter: local disk and S3, each plain and encrypted."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pressroom.errors import BlobNotFound, EncryptionError, MasterKeyMissing
from pressroom.storage import BlobStore
from pressroom.storage.crypto import EncryptedBlobStore
from pressroom.storage.local import LocalBlobStore
from pressroom.storage.s3 import S3BlobStore
from tests.s3server import S3Server

MASTER = bytes(range(32))


def _inner(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> BlobStore:
    if kind.startswith("s3"):
        server: S3Server = request.getfixturevalue("s3_server")
        return S3BlobStore(server.new_bucket(), "pre/fix", client=server.client())
    return LocalBlobStore(tmp_path / "blobs")


@pytest.fixture(params=["local", "s3", "local-encrypted", "s3-encrypted"])
def blobs(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BlobStore]:
    inner = _inner(request.param, tmp_path, request)
    yield EncryptedBlobStore(inner, MASTER) if request.param.endswith("encrypted") else inner


def payload(tmp_path: Path, name: str, size: int) -> Path:
    path = tmp_path / name
    path.write_bytes(os.urandom(size))
    return path


def test_round_trip_streams_a_large_blob(blobs: BlobStore, tmp_path: Path) -> None:
    # 9 MiB: above boto3's multipart threshold and many encryption segments
    src = payload(tmp_path, "big", 9 * (1 << 20) + 123)
    blobs.put_file("sources/acme/j1/source", src)
    assert blobs.size("sources/acme/j1/source") == src.stat().st_size
    dest = tmp_path / "back"
    blobs.get_to_path("sources/acme/j1/source", dest)
    assert dest.read_bytes() == src.read_bytes()
    with blobs.open("sources/acme/j1/source") as fh:
        head = fh.read(1000)
        rest = fh.read()
    assert head + rest == src.read_bytes()


def test_empty_blob(blobs: BlobStore, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    blobs.put_file("sources/acme/j0/source", empty)
    assert blobs.size("sources/acme/j0/source") == 0
    with blobs.open("sources/acme/j0/source") as fh:
        assert fh.read() == b""


def test_put_if_absent_keeps_the_first_write(blobs: BlobStore, tmp_path: Path) -> None:
    first, second = payload(tmp_path, "a", 2000), payload(tmp_path, "b", 3000)
    key = "artifacts/acme/j2/abc.pdf"
    assert blobs.put_if_absent(key, first)
    assert not blobs.put_if_absent(key, second)
    with blobs.open(key) as fh:
        assert fh.read() == first.read_bytes()


def test_racing_publishers_leave_exactly_one_object(blobs: BlobStore, tmp_path: Path) -> None:
    files = [payload(tmp_path, f"p{n}", 50_000) for n in range(6)]
    key = "artifacts/acme/j3/race.pdf"
    wins: list[int] = []
    barrier = threading.Barrier(len(files))

    def publish(n: int) -> None:
        barrier.wait()
        if blobs.put_if_absent(key, files[n]):
            wins.append(n)

    threads = [threading.Thread(target=publish, args=(n,)) for n in range(len(files))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1
    with blobs.open(key) as fh:
        assert fh.read() == files[wins[0]].read_bytes()
    assert [k for k, _ in blobs.list("artifacts")] == [key]


def test_missing_blobs(blobs: BlobStore, tmp_path: Path) -> None:
    with pytest.raises(BlobNotFound):
        blobs.open("sources/acme/none/source")
    with pytest.raises(BlobNotFound):
        blobs.size("sources/acme/none/source")
    with pytest.raises(BlobNotFound):
        blobs.get_to_path("sources/acme/none/source", tmp_path / "x")
    assert not blobs.exists("sources/acme/none/source")
    blobs.delete("sources/acme/none/source")  # deleting what is gone is fine


def test_list_is_by_folder_and_delete_removes(blobs: BlobStore, tmp_path: Path) -> None:
    data = payload(tmp_path, "d", 10)
    for key in ("sources/acme/j4/source", "sources-old/acme/j5/source", "review/acme/j6/x.pdf"):
        blobs.put_file(key, data)
    listed = list(blobs.list("sources"))
    assert [k for k, _ in listed] == ["sources/acme/j4/source"]
    assert all(isinstance(mtime, float) and mtime > 0 for _, mtime in listed)
    blobs.delete("sources/acme/j4/source")
    assert not blobs.exists("sources/acme/j4/source")
    assert sorted(k for k, _ in blobs.list("")) == [
        "review/acme/j6/x.pdf",
        "sources-old/acme/j5/source",
    ]


def test_keys_that_could_escape_are_refused(blobs: BlobStore, tmp_path: Path) -> None:
    data = payload(tmp_path, "d", 10)
    for bad in ("../etc/passwd", "sources/../../x", "/abs", "a//b", ""):
        with pytest.raises(ValueError):
            blobs.put_file(bad, data)


# --- encryption at rest -----------------------------------------------------------------------


@pytest.fixture(params=["local", "s3"])
def inner(request: pytest.FixtureRequest, tmp_path: Path) -> BlobStore:
    return _inner(request.param, tmp_path, request)


def test_stored_bytes_are_ciphertext(inner: BlobStore, tmp_path: Path) -> None:
    secret = tmp_path / "s"
    secret.write_bytes(b"Account number 12345678 " * 5000)
    EncryptedBlobStore(inner, MASTER).put_file("sources/acme/j7/source", secret)
    with inner.open("sources/acme/j7/source") as fh:
        stored = fh.read()
    assert b"12345678" not in stored and b"Account" not in stored
    assert len(stored) > secret.stat().st_size  # header and one tag per segment


def test_tampered_or_foreign_blobs_fail_closed(inner: BlobStore, tmp_path: Path) -> None:
    src = payload(tmp_path, "p", 3 * (1 << 20))
    store = EncryptedBlobStore(inner, MASTER)
    store.put_file("sources/acme/j8/source", src)
    with inner.open("sources/acme/j8/source") as fh:
        stored = bytearray(fh.read())
    # flip one byte in the middle segment
    stored[len(stored) // 2] ^= 1
    tampered = tmp_path / "t"
    tampered.write_bytes(bytes(stored))
    inner.put_file("sources/acme/j9/source", tampered)
    with pytest.raises(EncryptionError):
        store.get_to_path("sources/acme/j9/source", tmp_path / "out")
    # cut off the last segment: truncation is caught too
    truncated = tmp_path / "cut"
    truncated.write_bytes(bytes(stored[: -(1 << 20) - 16]))
    inner.put_file("sources/acme/j10/source", truncated)
    with pytest.raises(EncryptionError):
        store.get_to_path("sources/acme/j10/source", tmp_path / "out2")
    # a process without the blob's master key cannot open it (retried: the fix is config)
    with pytest.raises(MasterKeyMissing):
        EncryptedBlobStore(inner, bytes(32)).size("sources/acme/j8/source")
    # the blob is bound to its key: moved under another tenant's key, it does not open
    moved = tmp_path / "moved"
    inner.get_to_path("sources/acme/j8/source", moved)
    inner.put_file("sources/globex/j8/source", moved)
    with pytest.raises(EncryptionError):
        store.get_to_path("sources/globex/j8/source", tmp_path / "out3")


def test_rotation_reads_old_blobs_and_writes_with_the_new_key(
    inner: BlobStore, tmp_path: Path
) -> None:
    old_key, new_key = MASTER, bytes(reversed(MASTER))
    src = payload(tmp_path, "p", 5000)
    EncryptedBlobStore(inner, old_key).put_file("sources/acme/old/source", src)
    rotated = EncryptedBlobStore(inner, new_key, [old_key])
    with rotated.open("sources/acme/old/source") as fh:
        assert fh.read() == src.read_bytes()
    rotated.put_file("sources/acme/new/source", src)
    with pytest.raises(MasterKeyMissing):  # written with the new key only
        EncryptedBlobStore(inner, old_key).size("sources/acme/new/source")
