"""Webhook delivery threads of their own in every serve and worker process, so no endpoint, however
slow, ever holds a worker that should be running jobs.

One thread claims due deliveries from the outbox, only as many as there are idle senders; a few
sender threads post them. Each send ends by its deadline, which is shorter than the delivery's
lease, so the lease never lapses while the send runs and no other process (nor this one) starts
a second send of the same delivery. One tenant holds at most ``per_tenant`` senders; a claimed
delivery waits for its tenant's turn only as long as a full send would still end inside the
lease, and is otherwise left for the lease to lapse and the outbox to hand out again."""

from __future__ import annotations

import logging
import os
import queue
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pressroom.errors import TransientError
from pressroom.jobs.store import Outbox
from pressroom.notify.config import DeliveryConfig
from pressroom.notify.webhooks import WebhookSender, artifact_link, deliver
from pressroom.service import Services

log = logging.getLogger("pressroom.webhooks")
RETRY_STORE_S = 2.0  # after the store failed, wait this long before claiming again


@dataclass(frozen=True, slots=True)
class _Claimed:
    row: Mapping[str, Any]
    claimed_at: float  # on the pool's clock, taken before the claim: never later than the lease

    @property
    def id(self) -> str:
        return str(self.row["id"])

    @property
    def tenant(self) -> str:
        return str(self.row["tenant"])


def default_owner() -> str:
    return f"{socket.gethostname()[:24]}:{os.getpid()}:hooks:{uuid.uuid4().hex[:6]}"


class DeliveryPool:
    """``start()`` it once per process; ``stop()`` before the process ends."""

    def __init__(
        self,
        services: Services,
        config: DeliveryConfig | None = None,
        *,
        owner: str | None = None,
        sender: WebhookSender | None = None,
        base_url: str = "",
    ) -> None:
        self.outbox: Outbox = services.store.outbox
        # a complete job's webhook carries its download link under this base
        self.link = artifact_link(services, services.settings.public_url or base_url)
        self.now = services.clock  # the store's clock (the sender keeps its own for deadlines)
        self.config = config or DeliveryConfig()
        self.owner = owner or default_owner()
        self.sender = sender or WebhookSender(
            allow_private=services.settings.webhook_allow_private,
            max_response_bytes=self.config.max_response_bytes,
        )
        self._clock = self.sender.clock  # deadlines are times on the sender's clock
        self._lock = threading.Lock()
        self._filling = threading.Lock()  # one claim at a time, or two would both see room
        self._running: dict[str, str] = {}  # delivery id → tenant, sends in flight
        self._per_tenant: Counter[str] = Counter()
        self._waiting: list[_Claimed] = []  # claimed, their tenant at its share
        self._queue: queue.SimpleQueue[_Claimed | None] = queue.SimpleQueue()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        if self._threads:
            raise RuntimeError("the delivery pool is already started")
        for n in range(self.config.senders):
            self._threads.append(
                threading.Thread(target=self._send_loop, name=f"webhook-send-{n}", daemon=True)
            )
        self._threads.append(
            threading.Thread(target=self._claim_loop, name="webhook-claim", daemon=True)
        )
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Claim no more; wait for sends in flight (each ends by its deadline, so by default
        wait that long). Deliveries claimed but not started are left to their leases."""
        self._stop.set()
        self._wake.set()
        for _ in range(self.config.senders):
            self._queue.put(None)
        limit = self.config.deadline_s + 1.0 if timeout is None else timeout
        end = time.monotonic() + limit
        for thread in self._threads:
            thread.join(max(0.0, end - time.monotonic()))

    def fill(self) -> int:
        """Claim as many due deliveries as there are idle senders and start what may start;
        returns how many were claimed. The claim thread calls this; tests may too.

        One delivery per claim, skipping tenants already at their share: a tenant with a burst
        of deliveries to a slow endpoint takes its share of the senders, and the others go to
        other tenants' deliveries, however much older the burst is."""
        claimed = 0
        with self._filling:
            while not self._stop.is_set():
                with self._lock:
                    self._start_ready()
                    room = self.config.senders - len(self._running) - len(self._waiting)
                    busy = {t for t, n in self._per_tenant.items() if n >= self.config.per_tenant}
                    busy |= {item.tenant for item in self._waiting}
                if room <= 0:
                    break
                claimed_at = self._clock()
                rows = self.outbox.claim_deliveries(
                    self.owner,
                    now=self.now(),
                    lease_s=self.config.lease_s,
                    limit=1,
                    skip_tenants=busy,
                )
                if not rows:
                    break
                claimed += len(rows)
                with self._lock:
                    for row in rows:
                        item = _Claimed(row, claimed_at)
                        if item.id in self._running:  # cannot happen while deadline < lease
                            continue
                        self._waiting.append(item)
                    self._start_ready()
        return claimed

    def _start_ready(self) -> None:
        """Hand each waiting delivery whose tenant has room to a sender (the lock held)."""
        now = self._clock()
        still: list[_Claimed] = []
        for item in self._waiting:
            if now - item.claimed_at > self.config.start_window_s:
                # too late for a full send inside the lease: never start it; once the lease
                # lapses the outbox hands it out again
                log.info("webhook deferred", extra={"job_id": item.row["job_id"], "code": "BUSY"})
            elif (
                len(self._running) < self.config.senders
                and self._per_tenant[item.tenant] < self.config.per_tenant
            ):
                self._running[item.id] = item.tenant
                self._per_tenant[item.tenant] += 1
                self._queue.put(item)
            else:
                still.append(item)
        self._waiting = still

    def _claim_loop(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()  # before the claim: a send that ends during it wakes the next
            try:
                self.fill()
            except TransientError as exc:
                log.warning("webhook outbox unavailable", extra={"code": exc.code})
                self._stop.wait(RETRY_STORE_S)
                continue
            except Exception:  # a bug: log it and keep delivering the rest
                log.exception("webhook claim failed")
                self._stop.wait(RETRY_STORE_S)
                continue
            self._wake.wait(self.config.poll_s)

    def _send_loop(self) -> None:
        while (item := self._queue.get()) is not None:
            try:
                self._send(item)
            except TransientError as exc:
                # the result was not recorded: the lease lapses and the delivery is sent again
                log.warning(
                    "webhook result not recorded",
                    extra={"job_id": item.row["job_id"], "code": exc.code},
                )
            except Exception:
                log.exception("webhook send failed", extra={"job_id": item.row["job_id"]})
            finally:
                with self._lock:
                    del self._running[item.id]
                    self._per_tenant[item.tenant] -= 1
                    if self._per_tenant[item.tenant] <= 0:
                        del self._per_tenant[item.tenant]
                self._wake.set()

    def _send(self, item: _Claimed) -> None:
        # The full deadline from the start, but never past the lease (less its margin), however
        # late the send started.
        deadline = min(
            self._clock() + self.config.deadline_s,
            item.claimed_at + self.config.send_by_s,
        )
        deliver(
            self.outbox,
            self.now,
            self.sender,
            self.owner,
            item.row,
            deadline=deadline,
            link=self.link,
        )
