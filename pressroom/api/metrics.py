"""/metrics: read from the store and the scratch folder at scrape time, so the figures are the
same whichever process serves them (workers are separate processes); the counters are running
totals that survive pruning, every known reason exported from zero. HTTP timings are the one
per-process part (``api.timing``)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from pressroom.api.reasons import (
    dead_letter_reasons,
    known_labels,
    refusal_reasons,
    retry_reasons,
)
from pressroom.api.timing import render_http_metrics
from pressroom.jobs.model import JobState, Lane
from pressroom.scanning import OUTCOMES as SCAN_OUTCOMES
from pressroom.scratch import scratch_disk, scratch_state
from pressroom.service import Services
from pressroom.stages import Stage
from pressroom.worker.adaptive import REASONS as POOL_REASONS

BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 900.0)


def _histogram(
    name: str, documentation: str, label: str, rows: Iterable[tuple[str, list[int], int, float]]
) -> HistogramMetricFamily:
    family = HistogramMetricFamily(name, documentation, labels=[label])
    for key, cumulative, count, total in rows:
        buckets = [(str(b), n) for b, n in zip(BUCKETS, cumulative, strict=True)]
        buckets.append(("+Inf", count))
        family.add_metric([key], buckets, total)
    return family


def _labelled_counter(
    name: str,
    documentation: str,
    totals: dict[tuple[str, str], int],
    reasons: tuple[str, ...],
) -> CounterMetricFamily:
    """Every known (lane, reason) at its total or zero, then any other reason the store holds
    (one written by an older version), so no series disappears."""
    family = CounterMetricFamily(name, documentation, labels=["lane", "reason"])
    known = known_labels(reasons)
    for lane, reason in known:
        family.add_metric([lane, reason], totals.get((lane, reason), 0))
    exported = set(known)
    for (lane, reason), n in sorted(totals.items()):
        if (lane, reason) not in exported:
            family.add_metric([lane, reason], n)
    return family


def counter_families(totals: dict[tuple[str, str, str], int]) -> Iterator[Metric]:
    """The counters, from the running totals (never from the events, which are pruned)."""
    by_kind: dict[str, dict[tuple[str, str], int]] = {}
    for (kind, lane, reason), n in totals.items():
        by_kind.setdefault(kind, {})[(lane, reason)] = n
    yield _labelled_counter(
        "pressroom_retries",
        "Attempts that failed and were retried, by reason",
        by_kind.get("retry", {}),
        retry_reasons(),
    )
    yield _labelled_counter(
        "pressroom_dead_letters",
        "Jobs rejected (the dead letter), by reason",
        by_kind.get("dead_letter", {}),
        dead_letter_reasons(),
    )
    yield _labelled_counter(
        "pressroom_admission_refusals",
        "Uploads refused at the door by admission (429; 413/422 when waiting cannot help)",
        by_kind.get("refused", {}),
        refusal_reasons(),
    )
    yield _labelled_counter(
        "pressroom_pool_decisions",
        "Adaptive worker pools' size changes, by lane and reason (the size itself: "
        "pressroom_workers)",
        by_kind.get("pool", {}),
        POOL_REASONS,
    )
    for kind, name, documentation in (
        ("deadline_miss", "pressroom_deadline_misses", "Jobs that ran past their deadline"),
        ("attempt", "pressroom_job_attempts", "Attempts started (claims), by lane"),
        ("cancelled", "pressroom_cancellations", "Jobs a tenant cancelled before they ended"),
    ):
        family = CounterMetricFamily(name, documentation, labels=["lane"])
        counted = by_kind.get(kind, {})
        for lane in Lane:
            family.add_metric(
                [lane.value], sum(n for (ln, _r), n in counted.items() if ln == lane.value)
            )
        yield family
    scans = CounterMetricFamily(
        "pressroom_scans",
        "Malware scans of sources by the workers, by lane and outcome (clean, found, "
        "too_large, unavailable)",
        labels=["lane", "outcome"],
    )
    counted = by_kind.get("scan", {})
    for lane in Lane:
        for outcome in SCAN_OUTCOMES:
            scans.add_metric([lane.value, outcome], counted.get((lane.value, outcome), 0))
    yield scans


class StoreCollector(Collector):
    def __init__(self, services: Services) -> None:
        self.services = services

    def collect(self) -> Iterator[Metric]:
        stats = self.services.store.stats
        now = self.services.clock()
        depth = GaugeMetricFamily(
            "pressroom_jobs", "Jobs by lane and state", labels=["lane", "state"]
        )
        counts = stats.counts()
        for lane in Lane:
            for state in JobState:
                depth.add_metric(
                    [lane.value, state.value], counts.get((lane.value, state.value), 0)
                )
        yield depth
        oldest = GaugeMetricFamily(
            "pressroom_queue_oldest_age_seconds",
            "Age of the oldest job per lane and state (waiting, retrying, running)",
            labels=["lane", "state"],
        )
        ages = stats.oldest_by_state(now=now)
        for lane in Lane:
            for state in (JobState.ACCEPTED, JobState.RETRYING, JobState.RUNNING):
                oldest.add_metric(
                    [lane.value, state.value], ages.get((lane.value, state.value), 0.0)
                )
        yield oldest
        yield GaugeMetricFamily(
            "pressroom_review_jobs",
            "Jobs held for a human in review",
            value=sum(n for (_lane, state), n in counts.items() if state == JobState.REVIEW.value),
        )
        live = stats.live_workers(now=now)
        workers = GaugeMetricFamily(
            "pressroom_workers", "Worker processes seen in the last 30 s", labels=["lane"]
        )
        for lane in Lane:
            workers.add_metric([lane.value], live.get(lane.value, 0))
        yield workers

        yield from counter_families(stats.counter_totals())
        rows = stats.stage_histograms(BUCKETS)
        internal = {Stage.QUEUE, Stage.SCRATCH}
        yield _histogram(
            "pressroom_stage_duration_seconds",
            "Time spent per stage, per attempt",
            "stage",
            [r for r in rows if r[0] not in internal],
        )
        yield _histogram(
            "pressroom_queue_wait_seconds",
            "Enqueue (or retry) to start, per attempt",
            "stage",
            [r for r in rows if r[0] == Stage.QUEUE],
        )
        yield _histogram(
            "pressroom_scratch_lifetime_seconds",
            "How long each job's scratch folder lived",
            "stage",
            [r for r in rows if r[0] == Stage.SCRATCH],
        )
        measured = stats.seconds_per_page(since=now - 3600)
        yield GaugeMetricFamily(
            "pressroom_pages_per_minute_per_core",
            "Pages per minute per worker process over the last hour (0 when none finished)",
            value=60.0 / measured[0] if measured else 0.0,
        )
        base = self.services.settings.scratch_dir
        used, folders, oldest_scratch = scratch_state(base, now=time.time())
        free, total = scratch_disk(base)
        yield GaugeMetricFamily(
            "pressroom_scratch_oldest_age_seconds",
            "Age of the oldest live job scratch folder on this host (0 when none)",
            value=oldest_scratch,
        )
        yield GaugeMetricFamily(
            "pressroom_scratch_bytes", "Bytes in live job scratch folders", value=used
        )
        yield GaugeMetricFamily(
            "pressroom_scratch_folders", "Live job scratch folders", value=folders
        )
        yield GaugeMetricFamily(
            "pressroom_scratch_disk_free_bytes", "Free bytes on the scratch file system", value=free
        )
        yield GaugeMetricFamily(
            "pressroom_scratch_disk_size_bytes", "Size of the scratch file system", value=total
        )


def render_metrics(services: Services) -> bytes:
    """The store's figures (the same from every process) and this process's HTTP timings:
    two families apart, so one exposition holds both."""
    registry = CollectorRegistry()
    registry.register(StoreCollector(services))
    return bytes(generate_latest(registry)) + render_http_metrics()
