"""Retries as data: whether a failed attempt is tried again, and when —
min(cap, base * 2^attempt) * U(1, 1.25), so a failed batch spreads out."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

# Codes retried once (something else may have crowded the attempt) and permanent the second
# time in a row: a file that takes a worker past its memory ceiling twice will do it again.
ONCE_MORE = frozenset({"MEMORY_LIMIT"})
# Transient codes a job keeps as its dead letter's reason once its attempts are spent (not
# RETRIES_EXHAUSTED): an operator must see at a glance that the scanner, not the document,
# stopped it, and redrive those jobs once it is back.
OWN_END = frozenset({"SCANNER_UNAVAILABLE"})


@dataclass(frozen=True, slots=True)
class Decision:
    """What becomes of a job whose attempt failed: tried again after ``delay_s``, or dead."""

    retry: bool
    reason: str
    message: str
    delay_s: float = 0.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 4
    base_s: float = 5.0
    cap_s: float = 600.0
    jitter: float = 0.25
    uniform: Callable[[float, float], float] = field(default=random.uniform, compare=False)

    def delay(self, attempt: int) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1 for the first)."""
        raw = min(self.cap_s, self.base_s * 2 ** max(attempt - 1, 0))
        return float(raw * self.uniform(1.0, 1.0 + self.jitter))

    def exhausted(self, attempts: int) -> bool:
        return attempts >= self.max_attempts

    def decide(
        self,
        *,
        attempts: int,
        max_attempts: int,
        code: str,
        message: str,
        permanent: bool,
        previous_reason: str | None = None,
    ) -> Decision:
        """The one rule every path that fails a job follows (a worker's error, a lapsed lease,
        the supervisor stopping a worker): a permanent error is dead at once with its own
        code; anything else is retried until the job's attempts are spent, then dead
        ``RETRIES_EXHAUSTED`` (a code of ``OWN_END``: dead with its own code)."""
        if permanent or (code in ONCE_MORE and previous_reason == code):
            return Decision(False, code, message)
        if attempts >= max_attempts and code in OWN_END:
            return Decision(False, code, f"{attempts} attempts; last: {message}")
        if attempts >= max_attempts:
            return Decision(False, "RETRIES_EXHAUSTED", f"{attempts} attempts; last: {code}")
        return Decision(True, code, message, self.delay(attempts))
