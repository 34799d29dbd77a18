"""How webhooks are delivered: pool size, per-tenant share, each send's deadline and size cap."""

from __future__ import annotations

from dataclasses import dataclass

from pressroom.errors import BadConfig
from pressroom.settings import WebhookSettings

KIB = 1024
LEASE_S = 60.0  # how long a claimed delivery is ours; another process may claim it after


@dataclass(frozen=True, slots=True)
class DeliveryConfig:
    """The pool's four figures come from ``settings.webhooks`` (``PRESSROOM_WEBHOOK_*``); a value
    out of range is ``BadConfig`` (the process refuses to start, naming the variable)."""

    senders: int = 4  # sends in flight at once in one process
    per_tenant: int = 2  # of those, at most this many for one tenant
    deadline_s: float = 15.0  # wall clock for one send: resolve, connect, TLS, request, response
    max_response_bytes: int = 64 * KIB  # of a response body read; the rest is never read
    poll_s: float = 1.0  # how often the outbox is looked at when nothing else wakes the pool
    lease_s: float = LEASE_S
    # A send ends this long before its lease lapses: the result still has to be written, and
    # another host's clock may run a little ahead of ours.
    lease_margin_s: float = 10.0

    def __post_init__(self) -> None:
        if self.senders < 1 or self.per_tenant < 1 or self.max_response_bytes < 1:
            raise BadConfig("webhook senders, per-tenant share and size cap must be positive")
        if self.poll_s <= 0 or self.lease_margin_s < 0:
            raise BadConfig("the webhook poll interval and lease margin must be positive")
        if not 0 < self.deadline_s <= self.lease_s - self.lease_margin_s:
            # the guarantee that a delivery is never sent twice at once rests on this
            raise BadConfig(
                "PRESSROOM_WEBHOOK_DEADLINE_SECONDS must be above 0 and at most "
                f"{self.lease_s - self.lease_margin_s:g}: a delivery's lease is "
                f"{self.lease_s:g} s and a send must end {self.lease_margin_s:g} s before it"
            )

    @property
    def send_by_s(self) -> float:
        """How long after its claim every send of a delivery has ended."""
        return self.lease_s - self.lease_margin_s

    @property
    def start_window_s(self) -> float:
        """How long after its claim a delivery may still start a full-length send."""
        return self.send_by_s - self.deadline_s

    @classmethod
    def from_settings(cls, s: WebhookSettings) -> DeliveryConfig:
        return cls(
            senders=s.senders,
            per_tenant=s.per_tenant,
            deadline_s=s.deadline_s,
            max_response_bytes=s.max_response_bytes,
        )
