"""Request headers with a grammar of their own, parsed by pure functions: W3C ``traceparent``
and RFC 7240 ``Prefer`` (``wait``, ``respond-async``)."""

from __future__ import annotations

import re
import secrets

_TRACEPARENT = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$")
MAX_PREFER_WAIT_S = 60.0


def parse_traceparent(value: str | None) -> tuple[str, str | None]:
    """(trace id, parent span id) from a W3C ``traceparent``; a new trace when absent or invalid."""
    match = _TRACEPARENT.match((value or "").strip().lower())
    if match and set(match.group(1)) != {"0"} and set(match.group(2)) != {"0"}:
        return match.group(1), match.group(2)
    return secrets.token_hex(16), None


def prefers_async(value: str | None) -> bool:
    """``Prefer: respond-async`` (RFC 7240 section 4.1): answer 202 at once, whatever ``wait``
    says beside it."""
    return any(
        token.split(";")[0].strip().lower() == "respond-async" for token in (value or "").split(",")
    )


def prefer_wait(value: str | None) -> float | None:
    """Seconds from ``Prefer: wait=N`` (RFC 7240), capped; None when not asked."""
    for part in (value or "").split(","):
        for token in part.split(";"):
            name, _, number = token.strip().partition("=")
            if name.strip().lower() == "wait":
                try:
                    return min(max(float(number.strip().strip('"')), 0.0), MAX_PREFER_WAIT_S)
                except ValueError:
                    return None
    return None
