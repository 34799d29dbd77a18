"""The keyring without a KMS: the local master key binds each data key to its context, the
cache is bounded by count and age, a column key is reused only so long and so often, and a
format 2 blob and an ``s2:`` value read and re-wrap under the local key (the KMS side is
``tests/integration/test_kms.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pressroom.errors import EncryptionError, MasterKeyMissing
from pressroom.kek import ColumnKeys, DataKeyCache, Keyring, LocalMasterKey
from pressroom.labels import Labels
from pressroom.storage.crypto import EncryptedBlobStore, read_header, rewrap_blob
from pressroom.storage.local import LocalBlobStore

OLD, NEW = bytes(range(32)), bytes(range(32, 64))


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_local_data_key_opens_only_under_its_context_and_its_key() -> None:
    kek = LocalMasterKey(NEW, [OLD])
    made = kek.generate({"pressroom": "blob", "blob": "a"})
    assert (
        kek.unwrap(made.key_id, made.wrapped, {"pressroom": "blob", "blob": "a"}) == made.plaintext
    )
    with pytest.raises(EncryptionError):
        kek.unwrap(made.key_id, made.wrapped, {"pressroom": "blob", "blob": "b"})
    with pytest.raises(MasterKeyMissing):
        LocalMasterKey(OLD).unwrap(made.key_id, made.wrapped, {"pressroom": "blob", "blob": "a"})
    assert made.plaintext not in made.wrapped and "plaintext" not in repr(made)


def test_the_cache_is_bounded_by_count_and_age() -> None:
    clock = Clock()
    cache = DataKeyCache(entries=3, ttl_s=10, clock=clock)
    for n in range(5):
        cache.put(cache.key("local", "k", bytes([n]), {}), bytes(32))
    assert len(cache) == 3  # least recently used out
    assert cache.get(cache.key("local", "k", bytes([0]), {})) is None
    assert cache.get(cache.key("local", "k", bytes([4]), {})) is not None
    assert cache.get(cache.key("local", "k", bytes([4]), {"other": "context"})) is None
    clock.now = 10.0
    assert cache.get(cache.key("local", "k", bytes([4]), {})) is None  # expired


def test_a_column_key_is_reused_only_so_long_and_so_often() -> None:
    clock = Clock()
    columns = ColumnKeys(Keyring(LocalMasterKey(NEW)), max_age_s=60, max_uses=3, clock=clock)
    first = [columns.for_sealing("label") for _ in range(3)]
    assert len({k.wrapped for k in first}) == 1
    assert columns.for_sealing("label").wrapped != first[0].wrapped  # the fourth: a new key
    assert columns.for_sealing("title").wrapped != first[0].wrapped  # one key per purpose
    again = columns.for_sealing("title")
    clock.now = 60.0
    assert columns.for_sealing("title").wrapped != again.wrapped  # too old


def test_a_format2_blob_rewraps_from_one_local_key_to_another(tmp_path: Path) -> None:
    inner = LocalBlobStore(tmp_path / "blobs")
    src = tmp_path / "src"
    src.write_bytes(b"x" * (2 * (1 << 20) + 3))
    EncryptedBlobStore(inner, OLD).put_file("sources/acme/j/source", src)
    ring = Keyring(LocalMasterKey(NEW, [OLD]))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert rewrap_blob(inner, "sources/acme/j/source", ring, scratch) == "rewrapped"
    assert rewrap_blob(inner, "sources/acme/j/source", ring, scratch) == "current"
    with inner.open("sources/acme/j/source") as fh:
        block = read_header(fh, "sources/acme/j/source").key_block
    assert block is not None and block["kid"] == LocalMasterKey(NEW).current_id
    back = tmp_path / "back"
    EncryptedBlobStore(inner, NEW).get_to_path("sources/acme/j/source", back)
    assert back.read_bytes() == src.read_bytes()
    assert list(scratch.iterdir()) == []  # the re-wrap's copy is gone


def test_an_s2_value_sealed_by_a_local_keyring_reads_and_stays_bound() -> None:
    ring = Keyring(LocalMasterKey(OLD))
    sealing = Labels(b"s" * 32, kms=ring)  # any keyring seals ``s2:``; a KMS one in service
    stored = sealing.seal("job-1", "Case 7", purpose="title")
    assert stored is not None and stored.startswith("s2:local.")
    assert Labels(b"s" * 32, OLD).open("job-1", stored, purpose="title") == "Case 7"
    assert Labels(b"s" * 32, OLD).open("job-2", stored, purpose="title") is None
    assert Labels(b"s" * 32, OLD).open("job-1", stored, purpose="label") is None
    assert Labels(b"s" * 32, NEW).open("job-1", stored, purpose="title") is None  # key dropped
    moved = Labels(b"s" * 32, NEW, (OLD,)).rewrap("job-1", stored, "title")
    assert moved is not None and moved.rsplit(".", 1)[1] == stored.rsplit(".", 1)[1]
    assert Labels(b"s" * 32, NEW).open("job-1", moved, purpose="title") == "Case 7"


def test_an_s1_value_is_resealed_under_the_current_master_key_only_when_older() -> None:
    old = Labels(b"s" * 32, OLD).seal("job-1", "Case 7")
    assert old is not None and old.startswith("s1:")
    rotated = Labels(b"s" * 32, NEW, (OLD,))
    moved = rotated.rewrap("job-1", old, "label")
    assert moved is not None and moved.startswith("s1:") and moved != old
    assert Labels(b"s" * 32, NEW).open("job-1", moved) == "Case 7"
    assert rotated.rewrap("job-1", moved, "label") is None  # already current
    with pytest.raises(MasterKeyMissing):  # no configured key opens it: said, not skipped
        Labels(b"s" * 32, NEW).rewrap("job-1", old, "label")
