"""Envelope encryption at rest, around any blob store.

Every blob gets its own random AES-256 data key, made by the key-encryption key (``kek.py``:
the local master key, or a KMS key when ``PRESSROOM_KMS_KEY_ID`` is set) and stored only
wrapped, in the blob's header, with the KEK's kind and id. The body is encrypted in 1 MiB
segments, each sealed with AES-256-GCM under a nonce made of a random per-blob prefix and the
segment number, with the segment number and a last-segment flag bound in as associated data —
so segments cannot be reordered, dropped or truncated without the read failing. Memory stays at
one segment whatever the blob's size.

Format 2 (written now)::

    "PRSENC2\\n" | u32 n | body header (JSON: v, prefix, size, commit) | u32 m | key block
    (JSON: kek kind, key id, wrapped data key) | segments

The segments' associated data binds the SHA-256 of the blob's key and the *body header* only —
the immutable part. The key block is bound by the wrap itself (the context names the blob's
key: a blob moved under another key does not open) and checked against ``commit`` (an HMAC of
the data key), so ``rewrap_blob`` can re-wrap a blob's data key under a new KEK by rewriting
the key block and copying the sealed body byte for byte, never decrypting it.

Format 1 (``PRSENC1``, before the KEK port) is still read with the local master keys: its one
header holds the wrapped key and its SHA-256 is bound into every segment, so a format 1 blob
cannot be re-wrapped — only re-sealed, or left until retention removes it (sources live until
delivery, artifacts until the retention window ends).

Master keys: ``PRESSROOM_MASTER_KEY`` (base64 of 32 bytes) or ``PRESSROOM_MASTER_KEY_FILE``.
Rotation: put the new key there and list the old ones in ``PRESSROOM_MASTER_KEYS_OLD`` (files
or base64 values, comma-separated), or move to a KMS key; ``pressroom keys rewrap`` then moves
every format 2 blob's data key to the current KEK.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
import os
import struct
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol, cast, runtime_checkable

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from pressroom.errors import BadConfig, EncryptionError, MasterKeyMissing
from pressroom.kek import DataKey, Keyring, LocalMasterKey, master_key_id
from pressroom.settings import StorageSettings
from pressroom.storage import BlobStore

MAGIC = b"PRSENC1\n"
MAGIC2 = b"PRSENC2\n"
SEGMENT = 1 << 20
TAG = 16
_HEADER_LEN = struct.Struct(">I")
_MAX_HEADER = 64 << 10  # a header is a few hundred bytes; more is not ours

key_id = master_key_id  # a local master key's id, as format 1 names it


def blob_context(blob_key: str) -> dict[str, str]:
    """What a blob's data key is bound to: the key it is stored under."""
    return {"pressroom": "blob", "blob": blob_key}


def _wrap_aad(blob_key: str) -> bytes:
    # format 1: the data key is bound to the blob's key: a blob copied or swapped under another
    # key (another tenant's, another job's) does not open
    return b"pressroom-data-key\0" + blob_key.encode()


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


def _body_digest(blob_key: str, body_header: bytes) -> bytes:
    return hashlib.sha256(b"pressroom-blob-v2\0" + blob_key.encode() + b"\0" + body_header).digest()


def commitment(data_key: bytes) -> bytes:
    """Binds the body to one data key (AES-GCM alone does not): a key block re-written with
    another key is caught before any segment is read. An HMAC: it tells nothing of the key."""
    return hmac.new(data_key, b"pressroom-key-commitment", hashlib.sha256).digest()[:16]


def _seal_segments(
    src: BinaryIO, out: BinaryIO, cipher: AESGCM, prefix: bytes, digest: bytes
) -> None:
    index = 0
    block = src.read(SEGMENT)
    while True:
        following = src.read(SEGMENT) if block else b""
        last = not following
        out.write(cipher.encrypt(_nonce(prefix, index), block, _aad(digest, index, last)))
        if last:
            break
        block, index = following, index + 1


def encrypt_file(src: Path, dest: Path, master: bytes, blob_key: str) -> None:
    """Format 1, as releases before the KEK port wrote it (kept so tests can make such blobs)."""
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
    prefix = base64.b64decode(json.loads(header)["prefix"])
    with src.open("rb") as fin, dest.open("wb") as out:
        out.write(MAGIC + _HEADER_LEN.pack(len(header)) + header)
        _seal_segments(fin, out, AESGCM(data_key), prefix, hashlib.sha256(header).digest())


def _key_block(data_key: DataKey) -> bytes:
    return json.dumps(
        {
            "kek": data_key.kind,
            "kid": data_key.key_id,
            "wrapped": base64.b64encode(data_key.wrapped).decode(),
        },
        sort_keys=True,
    ).encode()


def encrypt_file_v2(src: Path, dest: Path, data_key: DataKey, blob_key: str) -> None:
    body_header = json.dumps(
        {
            "v": 2,
            "prefix": base64.b64encode(os.urandom(8)).decode(),
            "size": src.stat().st_size,
            "commit": base64.b64encode(commitment(data_key.plaintext)).decode(),
        },
        sort_keys=True,
    ).encode()
    prefix = base64.b64decode(json.loads(body_header)["prefix"])
    key_block = _key_block(data_key)
    with src.open("rb") as fin, dest.open("wb") as out:
        out.write(MAGIC2 + _HEADER_LEN.pack(len(body_header)) + body_header)
        out.write(_HEADER_LEN.pack(len(key_block)) + key_block)
        digest = _body_digest(blob_key, body_header)
        _seal_segments(fin, out, AESGCM(data_key.plaintext), prefix, digest)


def _chunk(raw: BinaryIO) -> bytes:
    (length,) = _HEADER_LEN.unpack(raw.read(_HEADER_LEN.size))
    if length > _MAX_HEADER:
        raise ValueError("header too long")
    data = raw.read(length)
    if len(data) != length:
        raise ValueError("header cut short")
    return data


def _object(data: bytes) -> dict[str, Any]:
    found = json.loads(data)
    if not isinstance(found, dict):
        raise ValueError("header is not an object")
    return found


@dataclass(frozen=True)
class Header:
    """A blob's header as read: its format, the bytes its segments are bound to, and (format 2)
    the key block naming the KEK."""

    version: int
    header: dict[str, Any]
    digest: bytes
    body_header: bytes = b""
    key_block: dict[str, Any] | None = None


def read_header(raw: BinaryIO, blob_key: str) -> Header:
    """The header of a sealed blob, the stream left at its first segment."""
    magic = raw.read(len(MAGIC))
    if magic == MAGIC:
        data = _chunk(raw)
        return Header(1, _object(data), hashlib.sha256(data).digest())
    if magic == MAGIC2:
        body = _chunk(raw)
        block = _object(_chunk(raw))
        return Header(2, _object(body), _body_digest(blob_key, body), body, block)
    raise EncryptionError("blob is not encrypted by Pressroom")


def _data_key(header: Header, keyring: Keyring, blob_key: str) -> bytes:
    if header.key_block is None:  # format 1: wrapped by a local master key, bound to the key
        master = keyring.local_keys().get(str(header.header["kid"]))
        if master is None:
            raise MasterKeyMissing("no master key with this blob's key id is configured")
        return AESGCM(master).decrypt(
            base64.b64decode(header.header["wrap_nonce"]),
            base64.b64decode(header.header["wrapped"]),
            _wrap_aad(blob_key),
        )
    block = header.key_block
    plaintext = keyring.unwrap(
        str(block["kek"]),
        str(block["kid"]),
        base64.b64decode(block["wrapped"]),
        blob_context(blob_key),
    )
    if not hmac.compare_digest(commitment(plaintext), base64.b64decode(header.header["commit"])):
        raise EncryptionError("the blob's data key is not the one its body was sealed with")
    return plaintext


class DecryptingReader(io.RawIOBase):
    """Plaintext of an encrypted blob, segment by segment, as a read-only binary file."""

    def __init__(self, raw: BinaryIO, keyring: Keyring, blob_key: str) -> None:
        self._raw = raw
        try:
            header = read_header(raw, blob_key)
            data_key = _data_key(header, keyring, blob_key)
            self.size = int(header.header["size"])
            self._prefix = base64.b64decode(header.header["prefix"])
        except (InvalidTag, ValueError, KeyError, TypeError, struct.error) as exc:
            raw.close()
            raise EncryptionError("blob header cannot be opened") from exc
        except Exception:
            raw.close()
            raise
        self._cipher = AESGCM(data_key)
        self._digest = header.digest
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


@runtime_checkable
class VersionedBlobStore(Protocol):
    """A store that can replace a blob only if it is still the one that was read (local disk:
    the same inode; S3: the same ETag, ``If-Match``): a re-wrap never brings back a blob
    deleted meanwhile, nor overwrites one written meanwhile."""

    def open_versioned(self, key: str) -> tuple[BinaryIO, str]: ...

    def replace_if_version(self, key: str, path: Path, version: str) -> bool: ...


def rewrap_blob(inner: BlobStore, key: str, keyring: Keyring, scratch: Path) -> str:
    """Re-wrap the data key of the blob at ``key`` under the keyring's current KEK: its key
    block rewritten, its sealed body copied byte for byte (never decrypted), written back only
    if the blob is still the one read. Returns ``rewrapped``, ``current`` (already under it),
    ``format1`` (cannot be: see the module's docstring), ``plain`` (not sealed by Pressroom) or
    ``gone`` (deleted or rewritten meanwhile: left as it is). A header that is ours but cannot
    be read is ``EncryptionError``."""
    if not isinstance(inner, VersionedBlobStore):
        raise BadConfig("this blob store cannot replace a blob conditionally: no re-wrap")
    raw, version = inner.open_versioned(key)
    try:
        try:
            header = read_header(raw, key)
        except EncryptionError:
            return "plain"
        except (ValueError, KeyError, TypeError, struct.error):
            raise EncryptionError("blob header cannot be read") from None
        block = header.key_block
        if block is None:
            return "format1"
        try:
            kind, kid = str(block["kek"]), str(block["kid"])
            wrapped = base64.b64decode(block["wrapped"])
            commit = base64.b64decode(header.header["commit"])
        except (ValueError, KeyError, TypeError):
            raise EncryptionError("blob header cannot be read") from None
        made = keyring.rewrap(kind, kid, wrapped, blob_context(key))
        if made is None:
            return "current"
        if not hmac.compare_digest(commitment(made.plaintext), commit):
            raise EncryptionError("the blob's data key is not the one its body was sealed with")
        fd, name = tempfile.mkstemp(prefix=".rewrap-", dir=scratch)
        out_path = Path(name)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(MAGIC2 + _HEADER_LEN.pack(len(header.body_header)) + header.body_header)
                new_block = _key_block(made)
                out.write(_HEADER_LEN.pack(len(new_block)) + new_block)
                while block_bytes := raw.read(SEGMENT):
                    out.write(block_bytes)
            raw.close()
            if not inner.replace_if_version(key, out_path, version):
                return "gone"  # deleted (retention) or rewritten meanwhile: not brought back
        finally:
            out_path.unlink(missing_ok=True)
        return "rewrapped"
    finally:
        raw.close()


class EncryptedBlobStore:
    """``BlobStore`` that encrypts on the way in and decrypts on the way out: each blob under a
    data key the keyring's current KEK made (``master``/``old``: a local master key's ring)."""

    def __init__(
        self,
        inner: BlobStore,
        master: bytes | None = None,
        old: list[bytes] | None = None,
        *,
        keyring: Keyring | None = None,
    ) -> None:
        if keyring is None:
            if master is None:
                raise ValueError("a master key or a keyring")
            keyring = Keyring(LocalMasterKey(master, old or []))
        self.inner = inner
        self.keyring = keyring

    @property
    def keys(self) -> Mapping[str, bytes]:
        return self.keyring.local_keys()

    def _sealed(self, path: Path, key: str) -> Path:
        # the data key first: a KEK that refuses or does not answer stops here, nothing written
        data_key = self.keyring.generate(blob_context(key))
        # next to the plaintext: the same private scratch folder, removed by the caller's finally
        fd, name = tempfile.mkstemp(prefix=".sealed-", dir=path.parent)
        os.close(fd)
        sealed = Path(name)
        try:
            encrypt_file_v2(path, sealed, data_key, key)
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
        return cast(BinaryIO, DecryptingReader(self.inner.open(key), self.keyring, key))

    def get_to_path(self, key: str, dest: Path) -> None:
        with self.open(key) as src, dest.open("wb") as out:
            while block := src.read(SEGMENT):
                out.write(block)

    def size(self, key: str) -> int:
        with DecryptingReader(self.inner.open(key), self.keyring, key) as reader:
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
