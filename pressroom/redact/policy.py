"""A redaction policy: which classes of personal data go, validated before any worker runs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from pressroom.errors import PolicyExpired, UnsupportedPolicy
from pressroom.redact.detect.registry import CLASSES

__all__ = ["CLASSES", "RedactionPolicy", "parse_policy"]


@dataclass(frozen=True, slots=True)
class RedactionPolicy:
    classes: tuple[str, ...]
    expires_at: float | None = None

    @property
    def empty(self) -> bool:
        return not self.classes

    def as_options(self) -> dict[str, object]:
        """The policy as stored on the job (and hashed into the artifact key)."""
        return {"redact": list(self.classes), "expires_at": self.expires_at}

    def check_current(self, now: float) -> None:
        if self.expires_at is not None and now >= self.expires_at:
            raise PolicyExpired("the redaction policy expired before the job could run")


def parse_policy(raw: str | None, expires_at: str | None = None, *, now: float) -> RedactionPolicy:
    """``name,address,account-number`` (any order, any subset); unknown classes are refused."""
    classes: list[str] = []
    for part in (raw or "").split(","):
        name = part.strip().lower().replace("_", "-")
        if not name:
            continue
        if name not in CLASSES:
            raise UnsupportedPolicy(f"cannot redact {name!r}; supported: {', '.join(CLASSES)}")
        if name not in classes:
            classes.append(name)
    expiry = _parse_time(expires_at) if expires_at else None
    policy = RedactionPolicy(tuple(sorted(classes, key=CLASSES.index)), expiry)
    policy.check_current(now)
    return policy


def _parse_time(raw: str) -> float:
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise UnsupportedPolicy("expires_at must be epoch seconds or an ISO 8601 time") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()
