"""Admission control: refuse at the door what cannot finish in time, and what is over quota.

Work is counted in units: a job's pages, plus, for a redaction, one unit per
``TEXT_CHARS_PER_UNIT`` characters of text (what detection reads). The estimate
follows fair claiming (``jobs.claims``): before this upload is done, the tenant's own unfinished
units and this upload's must be worked, every other tenant's running units (a running job
is not interrupted), and of its waiting units as many as its weight earns meanwhile (all of
them, when it has fewer). That, times the measured seconds
per unit of the last hour's completed jobs (a configurable prior until there are any: 20
pages/min per worker), divided by the lane's live worker processes, is when the job would be
done. When that is later than the job's deadline the upload is refused ``429 OVERLOADED`` with
``Retry-After`` = the time the work ahead of it needs. So a tenant whose own backlog fills the
lane is refused while another tenant's single job still fits.

A lane whose queue is at its cap takes no more jobs from a tenant holding its share of the cap
already (the cap times its weight over the weights of the tenants with jobs waiting); a tenant
under its share is still admitted, so one tenant's burst never shuts the others out. Past twice
the cap only a tenant with nothing waiting is admitted (one job at a time). Per tenant: a cap
on jobs not yet finished, and on pages accepted in the last hour (``429 QUOTA_EXCEEDED``,
Retry-After = when the oldest of that hour's uploads ages out).
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

    from pressroom.jobs.stats import TenantLoad

HOUR = 3600.0


REFUSALS = (Overloaded, QuotaExceeded, DeadlineUnreachable, TooBigForQuota)


MIN_MEASURED_PAGES = 5  # fewer measured pages than this: the prior still decides

# A redaction is charged one more unit per this many characters of text (as PDFium extracts
# them, each page's counted up to the detection cap): an ordinary dense page (3,000-5,000)
# costs nothing more, a page at the cap (``TEXT_LIMIT``, 100,000) 5 more.
TEXT_CHARS_PER_UNIT = 20_000

# past this many times a lane's cap, only a tenant with nothing waiting is admitted
HARD_CAP_FACTOR = 2


def work_units(pages: int, text_chars: int | None, *, redaction: bool, text_cap: int) -> int:
    """What admission and fair claiming charge a job: its pages, plus a redaction's text.
    Text that could not be counted (the counting child died or ran out of time, as a file
    built for it would make it) is charged as if every page were at the cap."""
    if not redaction:
        return pages
    if text_chars is None:
        text_chars = pages * text_cap
    return pages + text_chars // TEXT_CHARS_PER_UNIT


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
    seconds_per_page: float  # per work unit
    measured: bool
    workers: int
    pages_ahead: int  # units worked before this job is done, under fair claiming (not its own)


def _ahead(load: dict[str, TenantLoad], tenant: str, units: int) -> int:
    """Units worked before ``tenant``'s next ``units`` are: its own unfinished ones, and of
    each other tenant's, the units running now (a running job is not interrupted) and of its
    waiting ones what its weight earns while ``tenant`` is served (all, if fewer)."""
    mine = load[tenant]
    need = mine.units + units
    others = sum(
        other.running + min(other.units - other.running, need * other.weight / mine.weight)
        for name, other in load.items()
        if name != tenant
    )
    return round(mine.units + others)


def estimate(
    store: AdmissionFigures,
    rules: Admission,
    lane: Lane,
    units: int,
    *,
    tenant: str,
    now: float,
    conn: Connection | None = None,
    load: dict[str, TenantLoad] | None = None,
) -> Estimate:
    measured = store.seconds_per_page(since=now - HOUR, conn=conn)
    if measured is not None and measured[1] >= MIN_MEASURED_PAGES:
        per_page, is_measured = measured[0], True
    else:
        per_page, is_measured = 60.0 / rules.prior_pages_per_min, False
    workers = max(1, store.live_workers(now=now, conn=conn).get(lane.value, 0))
    if load is None:
        load = store.lane_load(lane.value, tenant, conn=conn)
    ahead = _ahead(load, tenant, units)
    return Estimate((ahead + units) * per_page / workers, per_page, is_measured, workers, ahead)


def _check_share(rules: Admission, lane: Lane, tenant: str, load: dict[str, TenantLoad]) -> None:
    """At the lane's cap, a tenant already holding its share of it is refused."""
    cap = rules.queue_cap[lane.value]
    waiting = sum(t.waiting for t in load.values())
    if waiting < cap:
        return
    if waiting >= HARD_CAP_FACTOR * cap and load[tenant].waiting:
        # far past the cap, only a tenant with nothing waiting is let in: one job each
        raise Overloaded(f"the {lane.value} queue is full", retry_after=60)
    weights = sum(t.weight for name, t in load.items() if t.waiting or name == tenant)
    share = cap * load[tenant].weight / weights
    if load[tenant].waiting + 1 > share:
        raise Overloaded(
            f"the {lane.value} queue is full and this tenant has {load[tenant].waiting} jobs "
            f"waiting, its share of the lane's {cap:,}",
            retry_after=60,
        )


def admit(
    store: AdmissionFigures,
    rules: Admission,
    *,
    tenant: str,
    lane: Lane,
    pages: int,
    deadline_s: float,
    now: float,
    units: int | None = None,
    conn: Connection | None = None,
    record: bool = True,
) -> Estimate:
    """The estimate for an upload that may go in; raises ``Overloaded``/``QuotaExceeded`` (and
    records the refusal, unless ``record`` is False: inside a transaction that the refusal rolls
    back, the caller records it). ``units``: what the job is charged (``work_units``), its
    ``pages`` when not given; the hourly quota counts pages."""
    units = pages if units is None else units
    try:
        load = store.lane_load(lane.value, tenant, conn=conn)
        _check_share(rules, lane, tenant, load)
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
        guess = estimate(store, rules, lane, units, tenant=tenant, now=now, conn=conn, load=load)
        alone = units * guess.seconds_per_page / guess.workers
        if alone > deadline_s:
            # waiting cannot help: even on an empty queue it would not finish in time
            size = f"{pages} pages" if units == pages else f"{pages} pages ({units} work units)"
            raise DeadlineUnreachable(
                f"{size} need about {alone:,.0f} s, longer than the deadline of "
                f"{deadline_s:,.0f} s: ask for a longer deadline or split the file"
            )
        if guess.seconds > deadline_s:
            drain = guess.pages_ahead * guess.seconds_per_page / guess.workers
            raise Overloaded(
                f"estimated completion in {guess.seconds:,.0f} s is past the deadline of "
                f"{deadline_s:,.0f} s ({guess.pages_ahead} work units ahead of it in "
                f"{lane.value}, {guess.workers} worker(s))",
                retry_after=max(drain, 1.0),
            )
        return guess
    except REFUSALS as refusal:
        if record:
            store.record_refusal(tenant, lane.value, refusal.code, now=now)
        raise
