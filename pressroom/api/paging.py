"""The job list's pages: an opaque cursor that names a keyset position (created_at, id),
signed so a cursor the client edited is refused rather than read, and the time filters."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json

from pressroom.errors import BadRequest, InvalidCursor
from pressroom.times import rfc3339_seconds

_MAC_BYTES = 12


def _mac(secret: bytes, payload: bytes) -> bytes:
    return hmac.new(secret, b"job-list\n" + payload, hashlib.sha256).digest()[:_MAC_BYTES]


def encode_cursor(secret: bytes, created_at: float, job_id: str) -> str:
    """The position just past the last job of a page; ``repr`` keeps the float exact."""
    payload = json.dumps([repr(created_at), job_id], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(_mac(secret, payload) + payload).decode().rstrip("=")


def decode_cursor(secret: bytes, cursor: str) -> tuple[float, str]:
    """The position a cursor names; ``InvalidCursor`` for anything this service did not write."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        mac, payload = raw[:_MAC_BYTES], raw[_MAC_BYTES:]
        if not hmac.compare_digest(mac, _mac(secret, payload)):
            raise ValueError("signature")
        at, job_id = json.loads(payload)
        return float(at), str(job_id)
    except (ValueError, TypeError, binascii.Error):
        raise InvalidCursor("invalid cursor: pass the `next` link of the previous page") from None


def rfc3339(name: str, value: str | None) -> float | None:
    """An RFC 3339 date-time (with its offset, as RFC 3339 requires) as epoch seconds. A leap
    second (:60) is read as the last instant of its minute."""
    if value is None:
        return None
    try:
        return rfc3339_seconds(value)
    except (ValueError, OverflowError):
        raise BadRequest(
            f"invalid {name}: an RFC 3339 date-time, e.g. 2026-12-01T09:30:00Z"
        ) from None
