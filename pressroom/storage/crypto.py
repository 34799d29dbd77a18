"""Envelope encryption at rest, around any blob store.

Every blob gets its own random AES-256 data key. The data key is wrapped (AES-256-GCM) by the
master key and stored in the blob's header with the master key's id; the body is encrypted in
1 MiB segments, each sealed with AES-256-GCM under a nonce made of a random per-blob prefix and
the segment number, with the segment number and a last-segment flag bound in as associated
data — so segments cannot be reordered, dropped or truncated without the read failing. Memory
stays at one segment whatever the blob's size.

Master keys: ``PRESSROOM_MASTER_KEY`` (base64 of 32 bytes) or ``PRESSROOM_MASTER_KEY_FILE``.
Rotation: put the new key there and list the old ones in ``PRESSROOM_MASTER_KEYS_OLD`` (files
or base64 values, comma-separated). New blobs are wrapped by the new key; blobs written before
are still read with the old ones, found by key id. Sources live until delivery and artifacts
until the retention window ends, so once that window has passed no blob needs an old key and it
can be dropped from the list (``pressroom storage rewrap`` is not needed for that reason).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import struct
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import BinaryIO, cast

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from pressroom.errors import BadConfig, EncryptionError, MasterKeyMissing
from pressroom.settings import StorageSettings
from pressroom.storage import BlobStore

MAGIC = b"PRSENC1\n"
SEGMENT = 1 << 20
TAG = 16
_HEADER_LEN = struct.Struct(">I")


def _wrap_aad(blob_key: str) -> bytes:
    # the data key is bound to the blob's key: a blob copied or swapped under another key
    # (another tenant's, another job's) does not open
    return b"pressroom-data-key\0" + blob_key.encode()


def key_id(master: bytes) -> str:
    return hashlib.sha256(b"pressroom-master-key\0" + master).hexdigest()[:16]


def _decode_key(value: str) -> bytes:
    raw = base64.b64decode(value.strip(), validate=True)
    if len(raw) != 32:
        raise ValueError("a master key is 32 bytes, base64-encoded")
    return raw


def _read_key(spec: str) -> bytes:
    path = Path(spec)
    return _decode_key(path.read_text() if path.is_file() else spec)


def master_keys(storage: StorageSettings) -> tuple[bytes, list[bytes]] | None:
    """(current master key, older keys still accepted for reading), or None when off."""
    name, current = "PRESSROOM_MASTER_KEY", storage.master_key.strip()
    try:
        if not current and storage.master_key_file:
            name = "PRESSROOM_MASTER_KEY_FILE"
            current = Path(storage.master_key_file).read_text().strip()
        if not current:
            return None
        key = _decode_key(current)
        name = "PRESSROOM_MASTER_KEYS_OLD"
        return key, [_read_key(s) for s in storage.master_keys_old]
    except (OSError, ValueError):
        # never the value itself: it is a secret
        raise BadConfig(
            f"{name}: expected base64 of 32 bytes (or, for the file and old keys, a file "
            "holding it)"
        ) from None


def _nonce(prefix: bytes, index: int) -> bytes:
    return prefix + struct.pack(">I", index)


def _aad(header_digest: bytes, index: int, last: bool) -> bytes:
    return header_digest + struct.pack(">I?", index, last)


def encrypt_file(src: Path, dest: Path, master: bytes, blob_key: str) -> None:
    data_key = AESGCM.generate_key(bit_length=256)
    wrap_nonce = os.urandom(12)
    header = json.dumps(
        {
            "v": 1,
            "kid": key_id(master),
            "wrap_nonce": base64.b64encode(wrap_nonce).decode(),
            "wrapped": base64.b64encode(
                AESGCM(master).encrypt(wrap_nonce, data_key, _wrap_aad(blob_key))
            ).decode(),
            "prefix": base64.b64encode(os.urandom(8)).decode(),
            "size": src.stat().st_size,
        },
        sort_keys=True,
    ).encode()
    digest = hashlib.sha256(header).digest()
    prefix = base64.b64decode(json.loads(header)["prefix"])
    cipher = AESGCM(data_key)
    with src.open("rb") as fin, dest.open("wb") as out:
        out.write(MAGIC + _HEADER_LEN.pack(len(header)) + header)
        index = 0
        block = fin.read(SEGMENT)
        while True:
            following = fin.read(SEGMENT) if block else b""
            last = not following
            out.write(cipher.encrypt(_nonce(prefix, index), block, _aad(digest, index, last)))
            if last:
                break
            block, index = following, index + 1


class DecryptingReader(io.RawIOBase):
    """Plaintext of an encrypted blob, segment by segment, as a read-only binary file."""

    def __init__(self, raw: BinaryIO, keys: Mapping[str, bytes], blob_key: str) -> None:
        self._raw = raw
        try:
            if raw.read(len(MAGIC)) != MAGIC:
                raise EncryptionError("blob is not encrypted by Pressroom")
            (length,) = _HEADER_LEN.unpack(raw.read(_HEADER_LEN.size))
            header_bytes = raw.read(length)
            header = json.loads(header_bytes)
            if not isinstance(header, dict):
                raise ValueError("header is not an object")
            master = keys.get(str(header["kid"]))
            if master is None:
                raise MasterKeyMissing("no master key with this blob's key id is configured")
            data_key = AESGCM(master).decrypt(
                base64.b64decode(header["wrap_nonce"]),
                base64.b64decode(header["wrapped"]),
                _wrap_aad(blob_key),
            )
        except (InvalidTag, ValueError, KeyError, TypeError, struct.error) as exc:
            raw.close()
            raise EncryptionError("blob header cannot be opened") from exc
        except Exception:
            raw.close()
            raise
        self.size = int(header["size"])
        self._cipher = AESGCM(data_key)
        self._prefix = base64.b64decode(header["prefix"])
        self._digest = hashlib.sha256(header_bytes).digest()
        self._index = 0
        self._buffer = b""
        self._done = False
        self._pending: bytes | None = None  # read on first use: size() needs the header only

    def readable(self) -> bool:
        return True

    def _next_segment(self) -> None:
        sealed = self._raw.read(SEGMENT + TAG) if self._pending is None else self._pending
        self._pending = self._raw.read(SEGMENT + TAG)
        last = not self._pending
        try:
            self._buffer += self._cipher.decrypt(
                _nonce(self._prefix, self._index), sealed, _aad(self._digest, self._index, last)
            )
        except InvalidTag:
            raise EncryptionError("blob failed its integrity check") from None
        self._index += 1
        self._done = last

    def read(self, n: int = -1) -> bytes:
        while not self._done and (n < 0 or len(self._buffer) < n):
            self._next_segment()
        if n < 0:
            out, self._buffer = self._buffer, b""
        else:
            out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._raw.close()
        super().close()


class EncryptedBlobStore:
    """``BlobStore`` that encrypts on the way in and decrypts on the way out."""

    def __init__(self, inner: BlobStore, master: bytes, old: list[bytes] | None = None) -> None:
        self.inner = inner
        self.master = master
        self.keys = {key_id(k): k for k in [*(old or []), master]}

    def _sealed(self, path: Path, key: str) -> Path:
        # next to the plaintext: the same private scratch folder, removed by the caller's finally
        fd, name = tempfile.mkstemp(prefix=".sealed-", dir=path.parent)
        os.close(fd)
        sealed = Path(name)
        try:
            encrypt_file(path, sealed, self.master, key)
        except BaseException:
            sealed.unlink(missing_ok=True)
            raise
        return sealed

    def put_file(self, key: str, path: Path) -> None:
        sealed = self._sealed(path, key)
        try:
            self.inner.put_file(key, sealed)
        finally:
            sealed.unlink(missing_ok=True)

    def put_if_absent(self, key: str, path: Path) -> bool:
        sealed = self._sealed(path, key)
        try:
            return self.inner.put_if_absent(key, sealed)
        finally:
            sealed.unlink(missing_ok=True)

    def open(self, key: str) -> BinaryIO:
        return cast(BinaryIO, DecryptingReader(self.inner.open(key), self.keys, key))

    def get_to_path(self, key: str, dest: Path) -> None:
        with self.open(key) as src, dest.open("wb") as out:
            while block := src.read(SEGMENT):
                out.write(block)

    def size(self, key: str) -> int:
        with DecryptingReader(self.inner.open(key), self.keys, key) as reader:
            return reader.size

    def exists(self, key: str) -> bool:
        return self.inner.exists(key)

    def reachable(self) -> None:
        self.inner.reachable()

    def delete(self, key: str) -> None:
        self.inner.delete(key)

    def list(self, prefix: str) -> Iterator[tuple[str, float]]:
        return self.inner.list(prefix)

    def download_url(
        self, key: str, ttl_s: float, filename: str, media_type: str = "application/pdf"
    ) -> str | None:
        return None  # the bucket holds ciphertext: the API decrypts while streaming
