"""A job's label: a short text of the client's choosing (a file name, a case number) that names
the job on the desk, in listings and in the download's file name. Never taken from the
document, never in logs, metric labels, traces or webhook payloads — treated like the title.

At rest the label is stored as ``p:`` + the text when encryption is off, or sealed with the
master key (``s1:`` + key id + AES-256-GCM of the text, bound to the job's id, so a sealed
label copied onto another job does not open). With a KMS key (``PRESSROOM_KMS_KEY_ID``) a value
is sealed under a column data key the KMS generated instead, never the master key: ``s2:`` +
the KEK's kind + its key id + the wrapped data key + AES-256-GCM of the text, bound the same
way. The column key is reused for a bounded time and count (``kek.ColumnKeys``) and opened
through the keyring's bounded cache, so a listing costs a KMS call per column key, not per
row; ``rewrap`` moves a value's wrapped key to the current KEK without touching its text.

Listing by label (``GET /v1/jobs?label=``)
compares a keyed digest (HMAC-SHA256 under a key derived from the link-signing key, with the
tenant bound in), stored beside it: the database can answer "which jobs have this label"
without ever holding the text in the clear.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from pressroom.errors import (
    BadRequest,
    EncryptionError,
    KmsKeyRefused,
    KmsUnavailable,
    MasterKeyMissing,
)
from pressroom.kek import ColumnKeys, Keyring, LocalMasterKey

MAX_LABEL = 200
_PLAIN, _SEALED, _SEALED2 = "p:", "s1:", "s2:"
# a label is one line of printable text: no controls, no line or paragraph separators
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
# the same rule as the OpenAPI document writes it
LABEL_PATTERN = "^[^\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029]*$"
# the file name's stem: a document's own extension goes (the download is a PDF)
_EXTENSION = re.compile(r"\.(pdf|png|jpe?g|tiff?|gif|bmp|webp|jp2)$", re.IGNORECASE)


def parse_label(raw: str | None) -> str | None:
    """The ``label`` form field judged: absent or empty is no label; else at most
    ``MAX_LABEL`` printable characters on one line, kept as sent (outer spaces trimmed)."""
    if raw is None:
        return None
    label = raw.strip()
    if not label:
        return None
    if len(label) > MAX_LABEL or _UNPRINTABLE.search(label):
        raise BadRequest(f"label must be at most {MAX_LABEL} printable characters on one line")
    return label


def _sub_key(secret: bytes, purpose: bytes) -> bytes:
    return hmac.new(secret, b"pressroom-label\0" + purpose, hashlib.sha256).digest()


def _key_id(master: bytes) -> str:
    return hashlib.sha256(b"pressroom-label-key\0" + master).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Labels:
    """Seals, opens and digests labels. ``master`` None: stored readable (encryption off)."""

    secret: bytes = b""  # the link-signing key: the digest's key is derived from it
    master: bytes | None = None
    old: tuple[bytes, ...] = ()
    # a KMS keyring: values are sealed ``s2:`` under its column keys (the master key then only
    # opens what it sealed before)
    kms: Keyring | None = None
    _keys: Mapping[str, bytes] = field(init=False, repr=False, compare=False)
    _ring: Keyring | None = field(init=False, repr=False, compare=False)
    _columns: ColumnKeys | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        keys = [*self.old, *([self.master] if self.master is not None else [])]
        object.__setattr__(self, "_keys", {_key_id(k): k for k in keys})
        ring = self.kms
        if ring is None and self.master is not None:  # reads ``s2:`` values a local key wrapped
            ring = Keyring(LocalMasterKey(self.master, self.old))
        object.__setattr__(self, "_ring", ring)
        object.__setattr__(self, "_columns", ColumnKeys(self.kms) if self.kms else None)

    @property
    def sealing(self) -> bool:
        """Whether values are sealed at rest (encryption on)."""
        return self.master is not None or self.kms is not None

    def seal(self, job_id: str, label: str | None, purpose: str = "label") -> str | None:
        """``label`` as stored for ``job_id``; ``purpose`` binds it to its column too (a
        sealed title moved into the label column does not open)."""
        if label is None:
            return None
        if self._columns is not None:
            return self._seal2(job_id, label, purpose)
        if self.master is None:
            return _PLAIN + label
        nonce = os.urandom(12)
        sealed = AESGCM(self.master).encrypt(nonce, label.encode(), _aad(job_id, purpose))
        body = base64.urlsafe_b64encode(nonce + sealed).decode()
        return f"{_SEALED}{_key_id(self.master)}:{body}"

    def open(self, job_id: str, stored: str | None, purpose: str = "label") -> str | None:
        """The label as the client gave it; None without one, or when it cannot be opened (a
        key since dropped, a value moved from another job): a label is a convenience, and
        one that cannot be read is shown as none rather than failing the job's answer."""
        if stored is None:
            return None
        if stored.startswith(_PLAIN):
            return stored[len(_PLAIN) :]
        if stored.startswith(_SEALED2):
            return self._open2(job_id, stored, purpose)
        if not stored.startswith(_SEALED):
            # a title written before titles were stored this way (the migration marks
            # those; a row made by hand may not be): the text itself
            return stored if purpose == "title" else None
        kid, _, body = stored[len(_SEALED) :].partition(":")
        key = self._keys.get(kid)
        if key is None:
            return None
        try:
            raw = base64.urlsafe_b64decode(body.encode())
            return AESGCM(key).decrypt(raw[:12], raw[12:], _aad(job_id, purpose)).decode()
        except (InvalidTag, ValueError):
            return None

    def _seal2(self, binding: str, text: str, purpose: str) -> str:
        assert self._columns is not None
        key = self._columns.for_sealing(purpose)
        nonce = os.urandom(12)
        sealed = AESGCM(key.plaintext).encrypt(nonce, text.encode(), _aad(binding, purpose))
        return _format2(key.kind, key.key_id, key.wrapped, nonce + sealed)

    def _open2(self, binding: str, stored: str, purpose: str) -> str | None:
        """An ``s2:`` value. A KMS that does not answer or refuses the key is raised (fail
        closed: no blank stands in for a title an output would print); a value not bound here,
        or a local key since dropped, reads as none, as for ``s1:``."""
        try:
            kind, kid, wrapped, body = _parse2(stored)
        except ValueError:
            return None
        if self._ring is None:
            return None
        try:
            key = self._ring.unwrap(kind, kid, wrapped, ColumnKeys.context(purpose))
            return AESGCM(key).decrypt(body[:12], body[12:], _aad(binding, purpose)).decode()
        except (KmsUnavailable, KmsKeyRefused):
            raise
        except (MasterKeyMissing, EncryptionError, InvalidTag, ValueError):
            return None

    def rewrap(self, binding: str, stored: str | None, purpose: str) -> str | None:
        """``stored`` with its data key wrapped by the current KEK (its sealed text as is), or
        None when there is nothing to do (plain, already current). An ``s1:`` value (sealed
        with the master key itself, no data key) is re-sealed: ``s2:`` when a KMS is on, else
        under the current master key when an older one sealed it. One no key opens here is
        ``MasterKeyMissing``; the KMS's refusals and outages are raised as they are."""
        if stored is None or self._ring is None:
            return None
        if stored.startswith(_SEALED2):
            try:
                kind, kid, wrapped, body = _parse2(stored)
            except ValueError:
                raise EncryptionError("a sealed value is not well formed") from None
            made = self._ring.rewrap(kind, kid, wrapped, ColumnKeys.context(purpose))
            return None if made is None else _format2(made.kind, made.key_id, made.wrapped, body)
        if not stored.startswith(_SEALED):
            return None
        current = self._columns is None and self.master is not None
        if current and stored[len(_SEALED) :].startswith(_key_id(self.master or b"") + ":"):
            return None
        text = self.open(binding, stored, purpose)
        if text is None:
            raise MasterKeyMissing("a sealed value no configured master key opens")
        return self.seal(binding, text, purpose)

    def digest(self, tenant: str, label: str | None) -> str | None:
        """The keyed digest listing compares: equal labels of one tenant, equal digests."""
        if label is None:
            return None
        key = _sub_key(self.secret, b"digest")
        return hmac.new(key, tenant.encode() + b"\0" + label.encode(), hashlib.sha256).hexdigest()


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode()


def _format2(kind: str, kid: str, wrapped: bytes, body: bytes) -> str:
    return f"{_SEALED2}{kind}.{_b64(kid.encode())}.{_b64(wrapped)}.{_b64(body)}"


def _parse2(stored: str) -> tuple[str, str, bytes, bytes]:
    """(KEK kind, key id, wrapped data key, nonce + sealed text) of an ``s2:`` value."""
    kind, kid, wrapped, body = stored[len(_SEALED2) :].split(".")
    decode = base64.urlsafe_b64decode
    return kind, decode(kid.encode()).decode(), decode(wrapped.encode()), decode(body.encode())


def _aad(binding: str, purpose: str) -> bytes:
    # "label" keeps the binding labels were first sealed with
    prefix = b"pressroom-label\0" if purpose == "label" else f"pressroom-{purpose}\0".encode()
    return prefix + binding.encode()


def download_name(label: str | None, job_id: str, suffix: str) -> str:
    """The download's file name: the label's stem (its document extension dropped) + ``suffix``
    (".pdf", ".txt"), or the job id's when there is no label."""
    stem = _EXTENSION.sub("", label).strip() if label else ""
    return (stem or job_id) + suffix


def content_disposition(filename: str) -> str:
    """``attachment`` with an ASCII ``filename`` any client reads (quotes, backslashes,
    separators and non-ASCII replaced) and the exact name as RFC 6266 / 5987
    ``filename*``: a label can never add a header field or a path."""
    name = unicodedata.normalize("NFC", filename)
    name = _UNPRINTABLE.sub("", name).replace("/", "_").replace("\\", "_")
    ascii_name = "".join(c if 32 <= ord(c) < 127 and c not in '"%;' else "_" for c in name)
    ascii_name = ascii_name.strip(" .") or "download"
    value = f'attachment; filename="{ascii_name}"'
    if ascii_name != name:
        value += f"; filename*=UTF-8''{quote(name, safe='')}"
    return value
