"""Admission control: refuse at the door what cannot finish in time, and what is over quota.

The estimate: pages already waiting or running in the lane, plus this upload's pages, times the
measured seconds per page of the last hour's completed jobs (a configurable prior until there
are any: 20 pages/min per worker), divided by the lane's live worker processes. When that is
later than the job's deadline the upload is refused ``429 OVERLOADED`` with ``Retry-After`` =
the time the work ahead needs to drain. A lane whose queue is over its cap is refused the same
way. Per tenant: a cap on jobs not yet finished, and on pages accepted in the last hour
(``429 QUOTA_EXCEEDED``, Retry-After = when the oldest of that hour's uploads ages out).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pressroom.errors import (
    DeadlineUnreachable,
    Overloaded,
    QuotaExceeded,
    TooBigForQuota,
)
from pressroom.jobs.model import Lane
from pressroom.jobs.store import AdmissionFigures
from pressroom.settings import AdmissionSettings

if TYPE_CHECKING:
    from sqlalchemy import Connection

HOUR = 3600.0


REFUSALS = (Overloaded, QuotaExceeded, DeadlineUnreachable, TooBigForQuota)


MIN_MEASURED_PAGES = 5  # fewer measured pages than this: the prior still decides


@dataclass(frozen=True, slots=True)
class Admission:
    prior_pages_per_min: float = 20.0  # per worker, until throughput has been measured
    queue_cap: Mapping[str, int] = field(
        default_factory=lambda: {Lane.BULK.value: 20_000, Lane.INTERACTIVE.value: 500}
    )
    default_deadline_s: Mapping[str, float] = field(
        default_factory=lambda: {Lane.BULK.value: 24 * HOUR, Lane.INTERACTIVE.value: 120.0}
    )
    per_page_deadline_s: Mapping[str, float] = field(
        default_factory=lambda: {Lane.BULK.value: 0.0, Lane.INTERACTIVE.value: 10.0}
    )
    tenant_max_active: int = 5_000
    tenant_pages_per_hour: int = 200_000

    @classmethod
    def from_settings(cls, s: AdmissionSettings) -> Admission:
        return cls(
            prior_pages_per_min=s.prior_pages_per_min,
            queue_cap={
                Lane.BULK.value: s.queue_cap_bulk,
                Lane.INTERACTIVE.value: s.queue_cap_interactive,
            },
            default_deadline_s={
                Lane.BULK.value: s.deadline_bulk_s,
                Lane.INTERACTIVE.value: s.deadline_interactive_s,
            },
            tenant_max_active=s.tenant_max_active,
            tenant_pages_per_hour=s.tenant_pages_per_hour,
        )

    def default_deadline(self, lane: Lane, pages: int) -> float:
        """Per lane, growing with the input's size class (pages) where the lane says so."""
        return self.default_deadline_s[lane.value] + self.per_page_deadline_s[lane.value] * pages


@dataclass(frozen=True, slots=True)
class Estimate:
    seconds: float  # from now until this job would be done
    seconds_per_page: float
    measured: bool
    workers: int
    pages_ahead: int


def estimate(
    store: AdmissionFigures,
    rules: Admission,
    lane: Lane,
    pages: int,
    *,
    now: float,
    conn: Connection | None = None,
) -> Estimate:
    measured = store.seconds_per_page(since=now - HOUR, conn=conn)
    if measured is not None and measured[1] >= MIN_MEASURED_PAGES:
        per_page, is_measured = measured[0], True
    else:
        per_page, is_measured = 60.0 / rules.prior_pages_per_min, False
    workers = max(1, store.live_workers(now=now, conn=conn).get(lane.value, 0))
    ahead = store.pages_ahead(lane.value, conn=conn)
    return Estimate((ahead + pages) * per_page / workers, per_page, is_measured, workers, ahead)


def admit(
    store: AdmissionFigures,
    rules: Admission,
    *,
    tenant: str,
    lane: Lane,
    pages: int,
    deadline_s: float,
    now: float,
    conn: Connection | None = None,
    record: bool = True,
) -> Estimate:
    """The estimate for an upload that may go in; raises ``Overloaded``/``QuotaExceeded`` (and
    records the refusal, unless ``record`` is False: inside a transaction that the refusal rolls
    back, the caller records it)."""
    try:
        if store.jobs_waiting(lane.value, conn=conn) >= rules.queue_cap[lane.value]:
            raise Overloaded(f"the {lane.value} queue is full", retry_after=60)
        active, pages_hour, oldest = store.tenant_load(tenant, since=now - HOUR, conn=conn)
        if active >= rules.tenant_max_active:
            raise QuotaExceeded(
                f"{active} jobs of this tenant are not finished yet "
                f"(limit {rules.tenant_max_active})",
                retry_after=30,
            )
        if pages > rules.tenant_pages_per_hour:
            raise TooBigForQuota(
                f"this upload alone has {pages:,} pages, more than the tenant's "
                f"{rules.tenant_pages_per_hour:,} pages an hour: split it"
            )
        if pages_hour + pages > rules.tenant_pages_per_hour:
            wait = (oldest + HOUR - now) if oldest is not None else HOUR
            raise QuotaExceeded(
                f"this upload would take the tenant past {rules.tenant_pages_per_hour:,} pages "
                "in an hour",
                retry_after=wait,
            )
        guess = estimate(store, rules, lane, pages, now=now, conn=conn)
        alone = pages * guess.seconds_per_page / guess.workers
        if alone > deadline_s:
            # waiting cannot help: even on an empty queue it would not finish in time
            raise DeadlineUnreachable(
                f"{pages} pages need about {alone:,.0f} s, longer than the deadline of "
                f"{deadline_s:,.0f} s: ask for a longer deadline or split the file"
            )
        if guess.seconds > deadline_s:
            drain = guess.pages_ahead * guess.seconds_per_page / guess.workers
            raise Overloaded(
                f"estimated completion in {guess.seconds:,.0f} s is past the deadline of "
                f"{deadline_s:,.0f} s ({guess.pages_ahead} pages ahead in {lane.value}, "
                f"{guess.workers} worker(s))",
                retry_after=max(drain, 1.0),
            )
        return guess
    except REFUSALS as refusal:
        if record:
            store.record_refusal(tenant, lane.value, refusal.code, now=now)
        raise
