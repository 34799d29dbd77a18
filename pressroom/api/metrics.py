"""/metrics: read from the store and the scratch folder at scrape time, so the figures are the
same whichever process serves them (workers are separate processes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from sqlalchemy import func, select

from pressroom.jobs.model import JobState, Lane
from pressroom.jobs.schema import jobs, stage_timings
from pressroom.scratch import PREFIX
from pressroom.service import Services

BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 900.0)


def scratch_usage(base: Path) -> tuple[int, int]:
    """Bytes and folder count of live job scratch folders."""
    total = folders = 0
    try:
        entries = list(base.iterdir())
    except OSError:
        return 0, 0
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        folders += 1
        for path in entry.rglob("*"):
            try:
                if path.is_file():
                    total += path.stat().st_size
            except OSError:
                continue
    return total, folders


class StoreCollector(Collector):
    def __init__(self, services: Services) -> None:
        self.services = services

    def collect(self) -> Iterator[Metric]:
        store = self.services.store
        now = self.services.clock()
        depth = GaugeMetricFamily(
            "pressroom_jobs", "Jobs by lane and state", labels=["lane", "state"]
        )
        counts = store.counts()
        for lane in Lane:
            for state in JobState:
                depth.add_metric(
                    [lane.value, state.value], counts.get((lane.value, state.value), 0)
                )
        yield depth
        oldest = GaugeMetricFamily(
            "pressroom_queue_oldest_age_seconds",
            "Age of the oldest job waiting in each lane",
            labels=["lane"],
        )
        ages = store.oldest_waiting(now=now)
        for lane in Lane:
            oldest.add_metric([lane.value], ages.get(lane.value, 0.0))
        yield oldest
        with store.engine.connect() as conn:
            dead = CounterMetricFamily(
                "pressroom_dead_letters", "Jobs rejected, by reason", labels=["reason"]
            )
            for reason, n in conn.execute(
                select(jobs.c.reason, func.count())
                .where(jobs.c.state == JobState.REJECTED.value)
                .group_by(jobs.c.reason)
            ):
                dead.add_metric([str(reason)], int(n))
            yield dead
            attempts = CounterMetricFamily(
                "pressroom_job_attempts", "Attempts made, by lane", labels=["lane"]
            )
            for lane, n in conn.execute(
                select(jobs.c.lane, func.sum(jobs.c.attempts)).group_by(jobs.c.lane)
            ):
                attempts.add_metric([str(lane)], int(n or 0))
            yield attempts
            stages = HistogramMetricFamily(
                "pressroom_stage_duration_seconds",
                "Time spent per stage, per attempt",
                labels=["stage"],
            )
            rows = conn.execute(select(stage_timings.c.stage, stage_timings.c.seconds)).all()
        by_stage: dict[str, list[float]] = {}
        for stage, seconds in rows:
            by_stage.setdefault(str(stage), []).append(float(seconds))
        for stage, values in sorted(by_stage.items()):
            buckets = [(str(b), sum(1 for v in values if v <= b)) for b in BUCKETS]
            buckets.append(("+Inf", len(values)))
            stages.add_metric([stage], buckets, sum(values))
        yield stages
        used, folders = scratch_usage(self.services.settings.scratch_dir)
        yield GaugeMetricFamily(
            "pressroom_scratch_bytes", "Bytes in live job scratch folders", value=used
        )
        yield GaugeMetricFamily(
            "pressroom_scratch_folders", "Live job scratch folders", value=folders
        )


def render_metrics(services: Services) -> bytes:
    registry = CollectorRegistry()
    registry.register(StoreCollector(services))
    return bytes(generate_latest(registry))
