"""Which reasons each labelled counter can carry, derived from the error classes, so /metrics
exports every one at zero before its first event and a new error class joins by itself."""

from __future__ import annotations

from pressroom import errors
from pressroom.jobs.admission import REFUSALS
from pressroom.jobs.backoff import ONCE_MORE, OWN_END
from pressroom.jobs.model import Lane

# Reasons the queue and the workers write that are no error class of their own.
RETRIES_EXHAUSTED = "RETRIES_EXHAUSTED"  # jobs/backoff.py: transient attempts all spent
LEASE_EXPIRED = "LEASE_EXPIRED"  # jobs/queue.py: a worker stopped answering (its lease lapsed)
SOURCE_MISSING = "SOURCE_MISSING"  # worker/context.py: the source vanished from storage
INTERNAL_ERROR = errors.PressroomError.code  # a bug: dead-lettered at once
DEADLINE_EXCEEDED = errors.DeadlineExceeded.code


def _codes(*bases: type[errors.PressroomError]) -> set[str]:
    """The code of every class under ``bases`` (the bases' own included)."""
    found: set[str] = set()
    pending: list[type[errors.PressroomError]] = list(bases)
    while pending:
        cls = pending.pop()
        found.add(cls.code)
        pending.extend(cls.__subclasses__())
    return found


def dead_letter_reasons() -> tuple[str, ...]:
    """A permanent error's code, a transient one that may fail only so often, or the end of
    the retries, a bug, a lapsed review. A cancel is no dead letter: it has its own counter."""
    reasons = _codes(errors.PermanentError) | set(ONCE_MORE) | set(OWN_END)
    reasons |= {RETRIES_EXHAUSTED, SOURCE_MISSING, INTERNAL_ERROR, DEADLINE_EXCEEDED}
    return tuple(sorted(reasons))


def retry_reasons() -> tuple[str, ...]:
    """A transient error's code, or a worker that stopped answering."""
    return tuple(sorted(_codes(errors.TransientError) | {LEASE_EXPIRED}))


def refusal_reasons() -> tuple[str, ...]:
    """The codes admission refuses an upload with (a 429, or a request that can never fit)."""
    return tuple(sorted(_codes(errors.Refused, *REFUSALS) - {errors.PressroomError.code}))


def known_labels(reasons: tuple[str, ...]) -> list[tuple[str, str]]:
    """Every (lane, reason) pair, in a stable order."""
    return [(lane.value, reason) for lane in Lane for reason in reasons]
