"""Retry delays and signed links: pure functions, tables of cases."""

from __future__ import annotations

import pytest

from pressroom.errors import BadSignature, LinkExpired
from pressroom.jobs.backoff import Decision, RetryPolicy
from pressroom.signing import Signer


def test_delay_doubles_up_to_the_cap_with_bounded_jitter() -> None:
    seen: list[tuple[float, float]] = []

    def spy(a: float, b: float) -> float:
        seen.append((a, b))
        return b  # the largest jitter

    policy = RetryPolicy(base_s=5, cap_s=60, jitter=0.25, uniform=spy)
    assert [policy.delay(n) for n in (1, 2, 3, 4, 5, 6)] == [6.25, 12.5, 25.0, 50.0, 75.0, 75.0]
    assert set(seen) == {(1.0, 1.25)}


def test_jitter_spreads_a_batch_that_failed_together() -> None:
    policy = RetryPolicy(base_s=5, cap_s=60)
    delays = {round(policy.delay(2), 3) for _ in range(50)}
    assert len(delays) > 10 and min(delays) >= 10 and max(delays) <= 12.5


FIXED = RetryPolicy(base_s=5, cap_s=60, uniform=lambda a, b: a)


@pytest.mark.parametrize(
    ("attempts", "code", "permanent", "previous", "expected"),
    [
        (1, "STORE_UNAVAILABLE", False, None, Decision(True, "STORE_UNAVAILABLE", "m", 5.0)),
        (2, "LEASE_EXPIRED", False, None, Decision(True, "LEASE_EXPIRED", "m", 10.0)),
        (
            4,
            "LEASE_EXPIRED",
            False,
            None,
            Decision(False, "RETRIES_EXHAUSTED", "4 attempts; last: LEASE_EXPIRED"),
        ),
        (1, "CORRUPT", True, None, Decision(False, "CORRUPT", "m")),
        (1, "DEADLINE_EXCEEDED", True, None, Decision(False, "DEADLINE_EXCEEDED", "m")),
        # MEMORY_LIMIT: once more, in case something else crowded it; dead the second time
        (1, "MEMORY_LIMIT", False, None, Decision(True, "MEMORY_LIMIT", "m", 5.0)),
        (2, "MEMORY_LIMIT", False, "LEASE_EXPIRED", Decision(True, "MEMORY_LIMIT", "m", 10.0)),
        (2, "MEMORY_LIMIT", False, "MEMORY_LIMIT", Decision(False, "MEMORY_LIMIT", "m")),
        (2, "LEASE_EXPIRED", False, "MEMORY_LIMIT", Decision(True, "LEASE_EXPIRED", "m", 10.0)),
    ],
)
def test_one_rule_decides_every_failed_attempt(
    attempts: int, code: str, permanent: bool, previous: str | None, expected: Decision
) -> None:
    got = FIXED.decide(
        attempts=attempts,
        max_attempts=4,
        code=code,
        message="m",
        permanent=permanent,
        previous_reason=previous,
    )
    assert got == expected


def test_signed_link_verifies_and_expires() -> None:
    signer = Signer(b"s" * 32, ttl_s=60)
    expires, sig = signer.sign("job", "artifacts/t/job/x.pdf", now=1000)
    signer.verify("job", "artifacts/t/job/x.pdf", str(expires), sig, now=1059)
    with pytest.raises(LinkExpired):
        signer.verify("job", "artifacts/t/job/x.pdf", str(expires), sig, now=1061)


@pytest.mark.parametrize(
    ("job", "key", "expires_delta", "tamper"),
    [
        ("other", "artifacts/t/job/x.pdf", 0, False),
        ("job", "artifacts/t/job/y.pdf", 0, False),
        ("job", "artifacts/t/job/x.pdf", 3600, False),  # a later expiry, same signature
        ("job", "artifacts/t/job/x.pdf", 0, True),
    ],
)
def test_tampered_links_are_refused(job: str, key: str, expires_delta: int, tamper: bool) -> None:
    signer = Signer(b"s" * 32, ttl_s=60)
    expires, sig = signer.sign("job", "artifacts/t/job/x.pdf", now=1000)
    if tamper:
        sig = sig[:-1] + ("0" if sig[-1] != "0" else "1")
    with pytest.raises(BadSignature):
        signer.verify(job, key, str(expires + expires_delta), sig, now=1000)


@pytest.mark.parametrize(
    "spelling",
    ["+{e}", "0{e}", " {e}", "{e} ", "{e_}", "{arabic}", "{e}.0", "", "-{e}", "{e}\n"],
)
def test_another_spelling_of_the_same_expiry_is_another_link(spelling: str) -> None:
    signer = Signer(b"s" * 32, ttl_s=60)
    expires, sig = signer.sign("job", "digest", now=1000)
    arabic = "".join(chr(0x660 + int(d)) for d in str(expires))
    text = spelling.format(e=expires, e_=f"{expires:_}", arabic=arabic)
    with pytest.raises(BadSignature):
        signer.verify("job", "digest", text, sig, now=1000)
    signer.verify("job", "digest", str(expires), sig, now=1000)  # the link as given still opens
