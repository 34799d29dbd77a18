"""The key-encryption key (KEK) port, the local master key behind it, and the keyring every
sealing goes through.

Envelope encryption: each blob (and each sealed column's data key) is encrypted under a data
key; the data key is stored only *wrapped* by a key-encryption key — the local master key
(``LocalMasterKey``) or a key held by a KMS (``storage/kms.py``, the AWS KMS API). A wrapped
key names its KEK by ``kind`` (``local``, ``kms``) and ``key_id`` (the master key's id, or the
KMS key's ARN) and is bound to an *encryption context* (what it protects: a blob's key, a
column's purpose): unwrapped under another context it does not open.

The port sits among the core values because the sealed columns (``labels.py``) are sealed
through it; the KMS adapter lives with the blob store's adapters.

Plaintext data keys live only in memory: ``DataKeyCache`` keeps those recently unwrapped or
generated for at most ``CACHE_TTL_S`` seconds and ``CACHE_ENTRIES`` entries (least recently
used out first), keyed by the wrapped bytes *and* their context — so a cached key never opens
a value bound to another context. Every expired key leaves at the next look into the cache
(any get, put or count), and a sealed column's key is held nowhere else (``ColumnKeys`` keeps
only its wrapped form). Python cannot promise to wipe a ``bytes``; the bounds are what limits
how long and how many keys a process holds.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from pressroom.errors import EncryptionError, MasterKeyMissing

Context = Mapping[str, str]
CACHE_TTL_S = 300.0  # a plaintext data key stays in memory at most this long after its use
CACHE_ENTRIES = 1024  # and at most this many at once
COLUMN_KEY_AGE_S = 300.0  # a sealed column's data key is reused this long …
COLUMN_KEY_USES = 10_000  # … or for this many values (random 96-bit nonces: far from any limit)


@dataclass(frozen=True, slots=True)
class DataKey:
    """A data key: its plaintext (memory only) and its wrapped form with the KEK that wraps it."""

    plaintext: bytes = field(repr=False)
    wrapped: bytes
    kind: str
    key_id: str


class KeyEncryptionKey(Protocol):
    """What wraps data keys: the local master key or a KMS key. ``generate`` makes a new
    AES-256 data key under the current key; ``wrap`` wraps a known one (a re-wrap); ``unwrap``
    opens one wrapped by ``key_id`` (this key or an older one). Every call binds ``context``.
    Failures are ours: ``MasterKeyMissing`` (or ``KmsKeyRefused``) for a key this process may
    not use, ``KmsUnavailable`` for a KMS that did not answer, ``EncryptionError`` for a wrapped
    key that does not open under its context."""

    kind: str

    def generate(self, context: Context) -> DataKey: ...

    def wrap(self, plaintext: bytes, context: Context) -> DataKey: ...

    def unwrap(self, key_id: str, wrapped: bytes, context: Context) -> bytes: ...

    def is_current(self, key_id: str) -> bool:
        """Whether ``key_id`` is the key new data keys are wrapped by (a re-wrap skips it)."""
        ...


def canonical(context: Context) -> bytes:
    """The context as bytes, one way: the local key's associated data."""
    return json.dumps(dict(context), sort_keys=True, separators=(",", ":")).encode()


def master_key_id(master: bytes) -> str:
    """The id a local master key is known by in a wrapped key (never the key)."""
    return hashlib.sha256(b"pressroom-master-key\0" + master).hexdigest()[:16]


class LocalMasterKey:
    """Today's master key (``PRESSROOM_MASTER_KEY``), older ones still opening what they
    wrapped. A wrapped key is a 12-byte nonce + AES-256-GCM of the data key, the context as
    associated data."""

    kind = "local"

    def __init__(self, current: bytes, old: Sequence[bytes] = ()) -> None:
        self.current = current
        self.keys = {master_key_id(k): k for k in [*old, current]}
        self.current_id = master_key_id(current)

    def generate(self, context: Context) -> DataKey:
        return self.wrap(AESGCM.generate_key(bit_length=256), context)

    def wrap(self, plaintext: bytes, context: Context) -> DataKey:
        nonce = os.urandom(12)
        sealed = AESGCM(self.current).encrypt(
            nonce, plaintext, b"pressroom-kek\0" + canonical(context)
        )
        return DataKey(plaintext, nonce + sealed, self.kind, self.current_id)

    def unwrap(self, key_id: str, wrapped: bytes, context: Context) -> bytes:
        master = self.keys.get(key_id)
        if master is None:
            raise MasterKeyMissing("no master key with this key id is configured")
        try:
            return AESGCM(master).decrypt(
                wrapped[:12], wrapped[12:], b"pressroom-kek\0" + canonical(context)
            )
        except (InvalidTag, ValueError):
            raise EncryptionError("a wrapped data key does not open under its context") from None

    def is_current(self, key_id: str) -> bool:
        return key_id == self.current_id


_CacheKey = tuple[str, str, bytes, bytes]


class DataKeyCache:
    """Plaintext data keys by (kind, key id, wrapped bytes, context): least recently used out
    past ``entries``, each gone ``ttl_s`` after it was put. Thread-safe (a worker's threads
    share it)."""

    def __init__(
        self,
        entries: int = CACHE_ENTRIES,
        ttl_s: float = CACHE_TTL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.entries, self.ttl_s, self.clock = entries, ttl_s, clock
        self._keys: OrderedDict[_CacheKey, tuple[bytes, float]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    @staticmethod
    def key(kind: str, key_id: str, wrapped: bytes, context: Context) -> _CacheKey:
        return (kind, key_id, wrapped, canonical(context))

    def _purge(self) -> None:
        # every expired key out, not just the one asked for (the lock held)
        now = self.clock()
        for stale in [k for k, (_, until) in self._keys.items() if until <= now]:
            del self._keys[stale]

    def get(self, key: _CacheKey) -> bytes | None:
        with self._lock:
            self._purge()
            found = self._keys.get(key)
            if found is None:
                self.misses += 1
                return None
            self._keys.move_to_end(key)
            self.hits += 1
            return found[0]

    def put(self, key: _CacheKey, plaintext: bytes) -> None:
        with self._lock:
            self._purge()
            self._keys[key] = (plaintext, self.clock() + self.ttl_s)
            self._keys.move_to_end(key)
            while len(self._keys) > self.entries:
                self._keys.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            self._purge()
            return len(self._keys)


class Keyring:
    """The current KEK, the others still read (by kind), and one bounded cache in front of
    them: every data key is generated, opened and re-wrapped here."""

    def __init__(
        self,
        current: KeyEncryptionKey,
        readers: Sequence[KeyEncryptionKey] = (),
        cache: DataKeyCache | None = None,
    ) -> None:
        self.current = current
        self.readers = {k.kind: k for k in [*readers, current]}
        self.cache = cache if cache is not None else DataKeyCache()
        # a re-wrap's result by what it re-wrapped (wrapped bytes only, no plaintext): rows
        # sharing a column key share its new wrapped key too, one wrap between them
        self._rewrapped: OrderedDict[_CacheKey, tuple[bytes, str, str]] = OrderedDict()
        self._lock = threading.Lock()

    def local_keys(self) -> Mapping[str, bytes]:
        """The local master keys by id (format 1 blobs unwrap with them directly)."""
        local = self.readers.get(LocalMasterKey.kind)
        return local.keys if isinstance(local, LocalMasterKey) else {}

    def generate(self, context: Context) -> DataKey:
        made = self.current.generate(context)
        self.cache.put(
            self.cache.key(made.kind, made.key_id, made.wrapped, context), made.plaintext
        )
        return made

    def unwrap(self, kind: str, key_id: str, wrapped: bytes, context: Context) -> bytes:
        key = self.cache.key(kind, key_id, wrapped, context)
        plaintext = self.cache.get(key)
        if plaintext is None:
            reader = self.readers.get(kind)
            if reader is None:
                raise MasterKeyMissing(
                    f"a data key is wrapped by a {kind} key this process is not configured for"
                )
            plaintext = reader.unwrap(key_id, wrapped, context)
            if len(plaintext) != 32:
                raise EncryptionError("an unwrapped data key is not 32 bytes")
            self.cache.put(key, plaintext)
        return plaintext

    def is_current(self, kind: str, key_id: str) -> bool:
        return kind == self.current.kind and self.current.is_current(key_id)

    def rewrap(self, kind: str, key_id: str, wrapped: bytes, context: Context) -> DataKey | None:
        """The same data key wrapped by the current KEK, or None when it already is. A data
        key re-wrapped before (under the same context) gets the same new wrapped key back, not
        another wrap: ``CACHE_ENTRIES`` of them remembered, least recently used out."""
        if self.is_current(kind, key_id):
            return None
        plaintext = self.unwrap(kind, key_id, wrapped, context)
        old = self.cache.key(kind, key_id, wrapped, context)
        with self._lock:
            done = self._rewrapped.get(old)
            if done is not None:
                self._rewrapped.move_to_end(old)
        if done is not None:
            made = DataKey(plaintext, *done)
        else:
            made = self.current.wrap(plaintext, context)
            with self._lock:
                self._rewrapped[old] = (made.wrapped, made.kind, made.key_id)
                while len(self._rewrapped) > self.cache.entries:
                    self._rewrapped.popitem(last=False)
        self.cache.put(
            self.cache.key(made.kind, made.key_id, made.wrapped, context), made.plaintext
        )
        return made


class ColumnKeys:
    """A sealed column's data key, reused for a bounded time and count (the AWS Encryption SDK's
    data key caching): a listing of a hundred jobs or an intake burst costs one KMS call, not
    one a row. One key per purpose (label, title, webhook secret), bound to it by context.
    Only the wrapped key is held here; its plaintext lives in the keyring's bounded cache, so
    it is gone when that entry expires, whether or not anything is sealed again."""

    def __init__(
        self,
        keyring: Keyring,
        max_age_s: float = COLUMN_KEY_AGE_S,
        max_uses: int = COLUMN_KEY_USES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.keyring, self.max_age_s, self.max_uses, self.clock = (
            keyring,
            max_age_s,
            max_uses,
            clock,
        )
        # purpose -> (wrapped key, KEK kind, key id, made at, uses): no plaintext
        self._current: dict[str, tuple[bytes, str, str, float, int]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def context(purpose: str) -> dict[str, str]:
        return {"pressroom": "column", "purpose": purpose}

    def for_sealing(self, purpose: str) -> DataKey:
        context = self.context(purpose)
        with self._lock:
            now = self.clock()
            for name, (*_, born, _uses) in list(self._current.items()):
                if born + self.max_age_s <= now:
                    del self._current[name]
            held = self._current.get(purpose)
            if held is None or held[4] >= self.max_uses:
                made = self.keyring.generate(context)
                self._current[purpose] = (made.wrapped, made.kind, made.key_id, now, 1)
                return made
            wrapped, kind, key_id, born, uses = held
            self._current[purpose] = (wrapped, kind, key_id, born, uses + 1)
        # from the cache (put there when generated); asked again only if it was pushed out
        plaintext = self.keyring.unwrap(kind, key_id, wrapped, context)
        return DataKey(plaintext, wrapped, kind, key_id)
