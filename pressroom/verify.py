"""Customer verification, the first stage of every job: is this customer allowed right now?

Built in: the tenant's customer registry (``pressroom customers create --tenant T ID``; active or
suspended). Optional: an HTTP identity service (``PRESSROOM_VERIFIER=http``,
``PRESSROOM_VERIFIER_URL``): ``POST {"tenant", "customer"}`` → ``{"decision": "allow"|"deny"}``,
called through a bounded pool sized to that service's rate limit. A timeout or a server error
is transient (the job is retried with backoff); a deny is ``UNAUTHORIZED_CUSTOMER`` and is never
retried. A 429 (or a 503 with ``Retry-After``) halves the calls this process lets in flight and
stops every call until the service's ``Retry-After`` has passed; answers that are not throttled
give the room back one call at a time (``AimdLimit``). Only the verify stage waits: the worker
refuses the job as transient and its OCR goes on with other jobs. The job keeps the customer
id and the decision, never identity evidence, and neither is logged.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Protocol

import httpx

from pressroom.errors import UnauthorizedCustomer, VerifierUnavailable
from pressroom.jobs.store import Customers
from pressroom.settings import VerifierSettings

ALLOWED = "allowed"
RETRY_AFTER_CAP_S = 300.0  # a provider asking for longer is asked again after this


class Verifier(Protocol):
    name: str

    def verify(self, tenant: str, customer: str | None, *, timeout: float | None) -> str:
        """``"allowed"``, or raise ``UnauthorizedCustomer`` / ``VerifierUnavailable``."""


@dataclass
class RegistryVerifier:
    """The tenant's own customer list. No customer on the job means the tenant itself."""

    customers: Customers
    name: str = "registry"

    def verify(self, tenant: str, customer: str | None, *, timeout: float | None) -> str:
        if customer is None:
            return ALLOWED
        status = self.customers.customer_status(tenant, customer)
        if status == "active":
            return ALLOWED
        raise UnauthorizedCustomer(
            "the customer is suspended" if status else "the customer is not registered"
        )


@dataclass
class TokenBucket:
    """At most ``rate`` calls per second on average, bursts up to ``burst``."""

    rate: float
    burst: float = 1.0
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    _tokens: float = field(init=False)
    _at: float = field(init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)

    def __post_init__(self) -> None:
        self._tokens = self.burst
        self._at = self.clock()

    def take(self, deadline: float | None) -> bool:
        """Wait for a token; False when it would come after ``deadline`` (on ``clock``)."""
        while True:
            with self._lock:
                now = self.clock()
                self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
                self._at = now
                if self._tokens >= 1.0 - 1e-9:  # rounding must not leave a sliver to wait for
                    self._tokens = max(0.0, self._tokens - 1.0)
                    return True
                wait = (1.0 - self._tokens) / self.rate
            if deadline is not None and now + wait > deadline:
                return False
            self.sleep(wait)


def retry_after_s(value: str | None, *, now_epoch: float) -> float | None:
    """The seconds a ``Retry-After`` header asks for (seconds or an HTTP date), at most
    ``RETRY_AFTER_CAP_S``; None when absent or unreadable."""
    if not value or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text) if text.isdigit() else None
        if seconds is None:
            seconds = parsedate_to_datetime(text).timestamp() - now_epoch
    except (TypeError, ValueError, OverflowError):
        return None
    return min(RETRY_AFTER_CAP_S, max(0.0, seconds))


@dataclass
class AimdLimit:
    """The calls this process may have in flight to the identity service, AIMD: halved (to
    one at least) on a throttled answer, and no call at all until its ``Retry-After`` has
    passed; one more after a window of answers that were not throttled, up to ``ceiling``
    (the configured concurrency)."""

    ceiling: int
    clock: Callable[[], float] = time.monotonic
    _limit: float = field(init=False)
    _in_flight: int = field(default=0, init=False)
    _closed_until: float = field(default=-math.inf, init=False)
    _cond: threading.Condition = field(default_factory=threading.Condition, init=False)

    def __post_init__(self) -> None:
        self._limit = float(self.ceiling)

    @property
    def limit(self) -> int:
        return max(1, int(self._limit))

    def acquire(self, deadline: float) -> str | None:
        """None once a call may start (then ``release`` it); else why not: ``throttled`` when
        the service's Retry-After runs past ``deadline`` (on ``clock``), ``busy`` when no
        place came free by then."""
        with self._cond:
            while True:
                now = self.clock()
                if now < self._closed_until:
                    if self._closed_until > deadline:
                        return "throttled"
                    wait = self._closed_until - now
                elif self._in_flight < self.limit:
                    self._in_flight += 1
                    return None
                else:
                    wait = deadline - now
                    if wait <= 0:
                        return "busy"
                self._cond.wait(wait)

    def release(
        self, *, throttled: bool, retry_after: float | None = None, answered: bool = True
    ) -> None:
        """A call ended: ``throttled`` shrinks the limit; an answer that was not throttled
        grows it; a call that got no answer (a timeout, a refused connection) or a failing one
        (a 5xx without Retry-After: ``answered`` False) does neither."""
        with self._cond:
            self._in_flight -= 1
            if throttled:
                self._limit = max(1.0, self._limit / 2)
                if retry_after:
                    self._closed_until = max(self._closed_until, self.clock() + retry_after)
            elif answered:
                self._limit = min(float(self.ceiling), self._limit + 1 / self._limit)
            self._cond.notify_all()


@dataclass
class HttpVerifier:
    url: str
    timeout_s: float = 5.0
    concurrency: int = 4  # in flight at once from this process
    rate_per_s: float = 10.0  # calls per second from this process
    name: str = "http"
    client: httpx.Client | None = None
    limit: AimdLimit = field(init=False)
    _bucket: TokenBucket = field(init=False)

    def __post_init__(self) -> None:
        self.limit = AimdLimit(self.concurrency)
        self._bucket = TokenBucket(self.rate_per_s, burst=max(1.0, float(self.concurrency)))
        if self.client is None:
            self.client = httpx.Client(follow_redirects=False)

    def verify(self, tenant: str, customer: str | None, *, timeout: float | None) -> str:
        budget = self.timeout_s if timeout is None else min(self.timeout_s, timeout)
        deadline = time.monotonic() + budget
        refused = self.limit.acquire(deadline)
        if refused == "throttled":
            raise VerifierUnavailable("the identity service asked us to wait (Retry-After)")
        if refused:
            raise VerifierUnavailable("the identity service pool is busy")
        throttled, answered, wait = False, False, None
        try:
            if not self._bucket.take(deadline):
                raise VerifierUnavailable("the identity service's rate limit leaves no slot now")
            left = max(0.05, deadline - time.monotonic())
            assert self.client is not None
            try:
                response = self.client.post(
                    self.url, json={"tenant": tenant, "customer": customer}, timeout=left
                )
            except httpx.TimeoutException:
                raise VerifierUnavailable("the identity service timed out") from None
            except httpx.HTTPError as exc:
                raise VerifierUnavailable(
                    f"the identity service failed ({type(exc).__name__})"
                ) from None
            # a 5xx is a failing service: no room given back for it (throttled or not)
            answered = response.status_code < 500
            wait = retry_after_s(response.headers.get("Retry-After"), now_epoch=time.time())
            throttled = response.status_code == 429 or (
                response.status_code == 503 and wait is not None
            )
        finally:
            self.limit.release(
                throttled=throttled, retry_after=wait if throttled else None, answered=answered
            )
        if response.status_code == 429 or response.status_code >= 500:
            raise VerifierUnavailable(f"the identity service answered {response.status_code}")
        try:
            decision = response.json().get("decision") if response.status_code == 200 else None
        except ValueError:
            decision = None
        if decision == "allow":
            return ALLOWED
        if decision == "deny" or response.status_code in (403, 404):
            raise UnauthorizedCustomer("the identity service denied this customer")
        raise VerifierUnavailable("the identity service gave no decision")


def verifier_from_settings(customers: Customers, s: VerifierSettings) -> Verifier:
    """The settings were checked when read: ``kind`` is registry or http, with a URL."""
    if s.kind == "http":
        return HttpVerifier(
            s.url, timeout_s=s.timeout_s, concurrency=s.concurrency, rate_per_s=s.rate_per_s
        )
    return RegistryVerifier(customers)
