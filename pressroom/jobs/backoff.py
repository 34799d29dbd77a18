"""Retry delays as data: min(cap, base * 2^attempt) * U(1, 1.25), so a failed batch spreads out."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field


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
