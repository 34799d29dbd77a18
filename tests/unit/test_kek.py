"""The keyring without a KMS: the local master key binds each data key to its context, the
cache is bounded by count and age, a column key is reused only so long and so often, and a
format 2 blob and an ``s2:`` value read and re-wrap under the local key (the KMS side is
``tests/integration/test_kms.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pressroom.errors import EncryptionError, MasterKeyMissing
from pressroom.kek import ColumnKeys, Context, DataKey, DataKeyCache, Keyring, LocalMasterKey
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


def _holds(obj: object, secret: bytes, seen: set[int] | None = None) -> bool:
    """Whether ``secret`` is reachable from ``obj`` (attributes, slots, containers)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return False
    seen.add(id(obj))
    if isinstance(obj, bytes | bytearray):
        return bytes(obj) == secret
    if isinstance(obj, dict):
        return any(_holds(x, secret, seen) for kv in obj.items() for x in kv)
    if isinstance(obj, list | tuple | set | frozenset):
        return any(_holds(x, secret, seen) for x in obj)
    fields = list(getattr(obj, "__dict__", {}).values())
    fields += [getattr(obj, n) for n in getattr(type(obj), "__slots__", ()) if hasattr(obj, n)]
    return any(_holds(x, secret, seen) for x in fields)


def test_no_plaintext_key_is_held_past_its_bound_even_when_nothing_is_asked_again() -> None:
    """An expired key leaves the cache on the next look at it (any get, put or count), not only
    when it is itself asked for; a column key's plaintext lives only in that cache."""
    clock = Clock()
    cache = DataKeyCache(ttl_s=300, clock=clock)
    ring = Keyring(LocalMasterKey(NEW), cache=cache)
    columns = ColumnKeys(ring, clock=clock)
    made = columns.for_sealing("label")
    other = ring.generate({"pressroom": "blob", "blob": "b"})
    assert len(cache) == 2
    assert not any(made.plaintext in v for v in columns._current.values())  # wrapped only
    assert _holds(columns, made.plaintext)  # in the cache, for now
    clock.now = 86400.0  # a day later, the process idle since
    assert cache.get(cache.key("local", "x", b"y", {})) is None  # asked for another key
    assert len(cache) == 0  # both gone, the unasked one included
    assert not _holds(columns, made.plaintext) and not _holds(ring, other.plaintext)
    later = columns.for_sealing("label")  # too old: a new key, the old one dropped
    assert later.wrapped != made.wrapped and list(columns._current) == ["label"]


def test_the_column_key_is_read_back_from_the_cache_while_it_lasts() -> None:
    clock = Clock()
    ring = Keyring(LocalMasterKey(NEW), cache=DataKeyCache(entries=1, clock=clock))
    columns = ColumnKeys(ring, clock=clock)
    made = columns.for_sealing("label")
    assert columns.for_sealing("label").plaintext == made.plaintext
    ring.generate({"n": "1"})  # pushes the column key out of a one-entry cache
    again = columns.for_sealing("label")  # unwrapped again: the same key
    assert (again.plaintext, again.wrapped) == (made.plaintext, made.wrapped)


def test_rewrapping_values_that_share_a_data_key_wraps_it_once() -> None:
    class Counting(LocalMasterKey):
        wraps = 0

        def wrap(self, plaintext: bytes, context: Context) -> DataKey:
            Counting.wraps += 1
            return super().wrap(plaintext, context)

    sealer = Labels(b"s" * 32, kms=Keyring(LocalMasterKey(OLD)))
    rows = [sealer.seal(f"j{n}", f"L{n}") for n in range(20)]
    ring = Keyring(Counting(NEW, [OLD]))
    rewrapper = Labels(b"s" * 32, kms=ring)
    moved = [rewrapper.rewrap(f"j{n}", v, "label") for n, v in enumerate(rows)]
    assert Counting.wraps == 1
    assert len({v.rsplit(".", 2)[1] for v in moved if v}) == 1  # one wrapped key between them
    assert [Labels(b"s" * 32, NEW).open(f"j{n}", v) for n, v in enumerate(moved)] == [
        f"L{n}" for n in range(20)
    ]
