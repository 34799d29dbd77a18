"""The identity service's own limit (AIMD): a throttled answer halves the calls in flight and
closes the door until its Retry-After has passed; answers give the room back one call at a
time, up to the configured concurrency. Driven on a scripted clock: nothing here waits."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import format_datetime

from pressroom.verify import RETRY_AFTER_CAP_S, AimdLimit, retry_after_s


def test_retry_after_reads_seconds_and_http_dates_and_caps_them() -> None:
    now = 1_800_000_000.0
    assert retry_after_s("7", now_epoch=now) == 7.0
    when = format_datetime(datetime.fromtimestamp(now + 42, tz=UTC), usegmt=True)
    assert retry_after_s(when, now_epoch=now) == 42.0
    assert retry_after_s("86400", now_epoch=now) == RETRY_AFTER_CAP_S
    past = format_datetime(datetime.fromtimestamp(now - 60, tz=UTC), usegmt=True)
    assert retry_after_s(past, now_epoch=now) == 0.0
    for odd in (None, "", "soon", "-5", "1.5e3"):
        assert retry_after_s(odd, now_epoch=now) is None


def test_a_throttled_answer_halves_the_limit_and_answers_grow_it_back() -> None:
    now = [0.0]
    limit = AimdLimit(8, clock=lambda: now[0])
    assert limit.limit == 8
    for expected in (4, 2, 1, 1):
        assert limit.acquire(deadline=1.0) is None
        limit.release(throttled=True)
        assert limit.limit == expected
    answers = 0
    while limit.limit < 8:
        assert limit.acquire(deadline=1.0) is None
        limit.release(throttled=False)
        answers += 1
    # additive: about one more call in flight per window of answers, not all at once
    assert 20 <= answers <= 40
    assert limit.acquire(deadline=1.0) is None
    limit.release(throttled=False)
    assert limit.limit == 8  # never past the configured concurrency


def test_a_call_that_got_no_answer_neither_grows_nor_shrinks_the_limit() -> None:
    limit = AimdLimit(4, clock=lambda: 0.0)
    assert limit.acquire(deadline=1.0) is None
    limit.release(throttled=True)
    assert limit.acquire(deadline=1.0) is None
    limit.release(throttled=False, answered=False)
    assert limit.limit == 2


def test_no_call_starts_before_retry_after_has_passed() -> None:
    now = [100.0]
    limit = AimdLimit(4, clock=lambda: now[0])
    assert limit.acquire(deadline=101.0) is None
    limit.release(throttled=True, retry_after=30.0)
    # the service asked for 30 s: a call whose budget ends sooner is refused, not sent
    assert limit.acquire(deadline=now[0] + 5.0) == "throttled"
    now[0] += 31.0
    assert limit.acquire(deadline=now[0] + 5.0) is None


def test_calls_past_the_limit_are_refused_at_their_deadline() -> None:
    limit = AimdLimit(2, clock=lambda: 10.0)
    assert limit.acquire(deadline=11.0) is None
    assert limit.acquire(deadline=11.0) is None
    assert limit.acquire(deadline=10.0) == "busy"  # the budget is spent: no wait
