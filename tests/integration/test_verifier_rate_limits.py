"""An identity service that answers 429 with Retry-After, over real HTTP: the verifier stops
calling it until the wait has passed (the job's attempt is transient, VERIFIER_UNAVAILABLE) and
lets fewer calls in flight afterwards; answers give the room back. Only the verify stage slows:
nothing here touches a worker pool."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

import pytest

from pressroom.errors import VerifierUnavailable
from pressroom.verify import HttpVerifier
from tests.hookservers import http_serving

pytestmark = pytest.mark.integration


@dataclass
class Provider:
    """Throttles the next ``throttle`` calls (429, Retry-After ``retry_after``), then allows;
    each call may be held ``hold`` (an Event the test opens) to count calls in flight."""

    throttle: int = 0
    retry_after: str | None = None
    status: int = 429  # what a throttled call is answered
    calls: int = 0
    in_flight: int = 0
    most_in_flight: int = 0
    hold: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def provider() -> Iterator[tuple[Provider, str]]:
    state = Provider()
    state.hold.set()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            with state.lock:
                state.calls += 1
                throttled = state.throttle > 0
                state.throttle -= throttled
                state.in_flight += 1
                state.most_in_flight = max(state.most_in_flight, state.in_flight)
            try:
                state.hold.wait(10)
                if throttled:
                    self.send_response(state.status)
                    if state.retry_after is not None:
                        self.send_header("Retry-After", state.retry_after)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                body = json.dumps({"decision": "allow"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            finally:
                with state.lock:
                    state.in_flight -= 1

        def log_message(self, *_args: object) -> None:
            pass

    with http_serving(Handler, "/verify") as url:
        yield state, url


def test_a_429_with_retry_after_stops_every_call_until_it_has_passed(
    provider: tuple[Provider, str],
) -> None:
    state, url = provider
    state.throttle, state.retry_after = 1, "60"
    verifier = HttpVerifier(url, timeout_s=2.0, concurrency=4, rate_per_s=1000)
    with pytest.raises(VerifierUnavailable, match="429"):
        verifier.verify("t", "c", timeout=None)
    assert verifier.limit.limit == 2
    # the service asked for a minute: the next questions are not sent at all
    for _ in range(3):
        with pytest.raises(VerifierUnavailable, match="Retry-After"):
            verifier.verify("t", "c", timeout=None)
    assert state.calls == 1


def test_after_throttling_fewer_calls_are_in_flight_and_answers_give_the_room_back(
    provider: tuple[Provider, str],
) -> None:
    state, url = provider
    state.throttle = 2  # no Retry-After: only the limit reacts
    verifier = HttpVerifier(url, timeout_s=5.0, concurrency=4, rate_per_s=1000)
    for _ in range(2):
        with pytest.raises(VerifierUnavailable, match="429"):
            verifier.verify("t", "c", timeout=None)
    assert verifier.limit.limit == 1
    # eight questions at once, each held by the service until all have been asked
    state.hold.clear()
    outcomes: list[str] = []
    threads = [
        threading.Thread(target=lambda: outcomes.append(verifier.verify("t", "c", timeout=None)))
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 10
    while state.in_flight < 1 and time.monotonic() < deadline:
        time.sleep(0.01)
    state.hold.set()
    for t in threads:
        t.join()
    assert outcomes == ["allowed"] * 8
    # one call at a time at first; a few answers later, two or three (never the four asked)
    assert 1 <= state.most_in_flight < 4
    for _ in range(40):
        verifier.verify("t", "c", timeout=None)
    assert verifier.limit.limit == 4


def test_a_503_without_retry_after_neither_grows_nor_shrinks_the_limit(
    provider: tuple[Provider, str],
) -> None:
    """A 503 that names no wait is a failing service, not a throttle: it does not halve the
    limit, and as no healthy answer it does not give room back either."""
    state, url = provider
    state.throttle = 1
    verifier = HttpVerifier(url, timeout_s=2.0, concurrency=4, rate_per_s=1000)
    with pytest.raises(VerifierUnavailable, match="429"):
        verifier.verify("t", "c", timeout=None)
    assert verifier.limit.limit == 2
    state.throttle, state.status = 10, 503
    for _ in range(10):
        with pytest.raises(VerifierUnavailable, match="503"):
            verifier.verify("t", "c", timeout=None)
    assert verifier.limit.limit == 2
