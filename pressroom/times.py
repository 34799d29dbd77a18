"""RFC 3339 date-times read exactly as the RFC writes them, for every time a client sends."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

_EPOCH = datetime(1970, 1, 1)
# T or t (or a space, RFC 3339 5.6's note), any fraction, Z/z or a numeric offset
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)


def rfc3339_seconds(value: str) -> float:
    """Epoch seconds of an RFC 3339 date-time; ValueError for anything else. A leap second
    (:60) is the last instant of its minute; years 1-9999 at any offset."""
    m = _RFC3339.fullmatch(value)
    if m is None:
        raise ValueError("not an RFC 3339 date-time")
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    micro = int((m.group(7) or ".0")[1:7].ljust(6, "0"))
    zone = m.group(8).upper()
    offset = timedelta(0)
    if zone != "Z":
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:
            raise ValueError("offset out of range")
        offset = (-1 if zone[0] == "-" else 1) * timedelta(hours=hours, minutes=minutes)
    leap = second == 60
    local = datetime(year, month, day, hour, minute, 59 if leap else second, micro)
    # naive arithmetic: year 1 at +14:00 is before year 1 in UTC, which datetime cannot hold
    seconds = (local - _EPOCH - offset).total_seconds()
    return seconds + (0.999999 - micro / 1e6 if leap else 0.0)
