"""What an API key looks like to the people who manage it: one expiry syntax and one record
(id, tenant, role, dates, status — never the secret), for the CLI and the API alike."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pressroom.times import rfc3339_seconds

ROLES = ("tenant", "operator", "reviewer")
EXPIRY_HELP = "a duration (90d, 12h, 30m) or a date/time (2027-01-31, 2027-01-31T18:00:00Z)"
_DURATION = re.compile(r"(\d{1,6})([dhm])")
_UNIT_S = {"d": 86400, "h": 3600, "m": 60}


@dataclass(frozen=True, slots=True)
class KeyOwner:
    """Who a live key speaks for: its tenant, its role and its id (``k_…``, never the key)."""

    tenant: str
    role: str
    key_id: str


def parse_expiry(value: str, *, now: float) -> float:
    """A duration from ``now`` (``90d``, ``12h``, ``30m``) or a date/time (RFC 3339 or ISO
    8601; UTC when it names no zone) as an epoch time. ValueError names what is accepted."""
    text = value.strip()
    m = _DURATION.fullmatch(text)
    if m:
        return now + int(m.group(1)) * _UNIT_S[m.group(2)]
    try:
        return rfc3339_seconds(text)
    except ValueError:
        pass  # an ISO 8601 date, or a time without a zone (read as UTC)
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"give {EXPIRY_HELP}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


def key_status(row: Mapping[str, Any], *, now: float) -> str:
    """``revoked``, ``expired`` or ``live``."""
    if row["revoked_at"] is not None:
        return "revoked"
    if row["expires_at"] is not None and float(row["expires_at"]) <= now:
        return "expired"
    return "live"


def key_record(row: Mapping[str, Any], *, now: float) -> dict[str, Any]:
    """A stored key as the API answers it: times in epoch seconds like every API time."""
    return {
        "id": row["id"],
        "tenant": row["tenant"],
        "role": row["role"],
        "created_at": row["created_at"],
        "last_used_at": row["last_used_at"],
        "expires_at": row["expires_at"],
        "revoked_at": row["revoked_at"],
        "status": key_status(row, now=now),
    }


# the ids ``new_key`` makes; only an id names a key in a URL (a key in a path would be logged)
KEY_ID_RE = re.compile(r"^k_[0-9a-f]{1,32}$")
