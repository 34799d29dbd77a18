"""/dashboard: one server-rendered page for operators (no build step, no scripts).

Read from the store at request time, like /metrics: per lane depth and oldest age, p50/p95 per
stage over the last hour, throughput, retry reasons, dead letters by reason, the review queue,
scratch usage. Charts are inline SVG; the page refreshes itself. It shows job ids, tenants,
reason codes, counts and durations — never file names, customer ids or document text.
"""

from __future__ import annotations

import functools
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, Template

from pressroom.jobs.model import Lane
from pressroom.scratch import scratch_disk, scratch_usage
from pressroom.service import Services
from pressroom.stages import Stage

HOUR = 3600.0
REFRESH_S = 10
WORKER_LIVE_S = 30.0  # admission's window: a worker not heard from for longer is shown stale
STAGE_ORDER = tuple(stage.value for stage in Stage)  # the order a job runs them
COLOURS = {"accepted": "#4e79a7", "retrying": "#f28e2b", "running": "#59a14f"}


@dataclass
class Snapshot:
    now: float
    counts: dict[tuple[str, str], int]
    oldest: dict[tuple[str, str], float]
    workers: dict[str, int]
    stages: dict[str, tuple[float, float, int]]  # p50, p95, n over the last hour
    throughput: list[int]  # pages completed per 5-minute slot, oldest first (12 slots)
    pages_per_min_per_core: float | None
    retries: dict[str, int]  # reason → count, last 24 h
    dead: dict[str, int]  # reason → count, last 24 h
    review_total: int = 0
    review: list[dict[str, Any]] = field(default_factory=list)
    recent_dead: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)  # newest first
    worker_list: list[dict[str, Any]] = field(default_factory=list)  # newest heartbeat first
    # adaptive pools' size changes, last 24 h: (lane, reason) → count
    pool: dict[tuple[str, str], int] = field(default_factory=dict)
    scratch_bytes: int = 0
    scratch_folders: int = 0
    disk_free: int = 0
    disk_size: int = 0


def _quantiles(values: list[float]) -> tuple[float, float]:
    if len(values) == 1:
        return values[0], values[0]
    cuts = statistics.quantiles(values, n=20, method="inclusive")
    return statistics.median(values), cuts[18]


def snapshot(services: Services) -> Snapshot:
    stats = services.store.stats
    now = services.clock()
    since = now - HOUR
    work = stats.recent_work(since=since)
    by_stage: dict[str, list[float]] = {}
    for stage, seconds in work.timings:
        by_stage.setdefault(stage, []).append(seconds)
    stages = {s: (*_quantiles(v), len(v)) for s, v in by_stage.items()}
    slots = [0] * 12
    for finished, pages in work.finished:
        slot = min(11, max(0, int((finished - since) // 300)))
        slots[slot] += pages
    events = stats.event_counts(since=now - 24 * HOUR)
    retries: dict[str, int] = {}
    dead: dict[str, int] = {}
    pool: dict[tuple[str, str], int] = {}
    for (kind, lane, reason), n in events.items():
        if kind == "retry":
            retries[reason] = retries.get(reason, 0) + n
        elif kind == "dead_letter":
            dead[reason] = dead.get(reason, 0) + n
        elif kind == "pool":
            pool[(lane, reason)] = n
    measured = stats.seconds_per_page(since=since)
    used, folders = scratch_usage(services.settings.scratch_dir)
    free, size = scratch_disk(services.settings.scratch_dir)
    snap = Snapshot(
        now=now,
        counts=stats.counts(),
        oldest=stats.oldest_by_state(now=now),
        workers=stats.live_workers(now=now),
        stages=stages,
        throughput=slots,
        pages_per_min_per_core=60.0 / measured[0] if measured else None,
        retries=retries,
        dead=dead,
        scratch_bytes=used,
        scratch_folders=folders,
        disk_free=free,
        disk_size=size,
    )
    snap.review_total = work.review_total
    snap.pool = pool
    labels = services.labels
    snap.review = [
        {
            "id": r.id,
            "tenant": r.tenant,
            "label": labels.open(r.id, r.label),
            "reason": r.reason,
            "age": now - (r.finished_at or now),
        }
        for r in work.review
    ]
    snap.recent_dead = [
        {
            "id": r.id,
            "tenant": r.tenant,
            "label": labels.open(r.id, r.label),
            "lane": r.lane,
            "reason": r.reason,
            "age": now - (r.finished_at or now),
            "redrivable": r.source_kept,
        }
        for r in work.dead
    ]
    snap.worker_list = [
        {
            "host": w.host,
            "pid": w.pid,
            "lanes": ", ".join(w.lanes),
            "heartbeat": now - w.seen_at,
            "stale": now - w.seen_at > WORKER_LIVE_S,
            "job": w.job_id,
            "stage": w.stage,
        }
        for w in stats.worker_list(now=now)
    ]
    snap.decisions = [
        {"at": d.at, "id": d.job_id, "action": d.action, "key_id": d.key_id} for d in work.decisions
    ]
    return snap


# --- rendering ---------------------------------------------------------------------------------


def _age(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _num(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.2f}"


@functools.cache
def _template() -> Template:
    env = Environment(
        loader=PackageLoader("pressroom.api", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        age=_age,
        size=_bytes,
        num=_num,
        stamp=lambda at: time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at)),
    )
    return env.get_template("dashboard.html")


def render_dashboard(snap: Snapshot) -> str:
    """The page, from ``pressroom/api/templates/dashboard.html`` (autoescaped)."""
    ordered = sorted(
        snap.stages.items(),
        key=lambda kv: STAGE_ORDER.index(kv[0]) if kv[0] in STAGE_ORDER else 99,
    )

    def ranked(counts: dict[str, int], colour: str) -> list[tuple[str, float, str]]:
        return [(r, float(n), colour) for r, n in sorted(counts.items(), key=lambda kv: -kv[1])]

    lanes = []
    for lane in (Lane.BULK, Lane.INTERACTIVE):
        states = ("accepted", "retrying", "running")
        depth = [(st, float(snap.counts.get((lane.value, st), 0)), COLOURS[st]) for st in states]
        oldest = max(
            (snap.oldest.get((lane.value, st), 0.0) for st in ("accepted", "retrying")),
            default=0.0,
        )
        lanes.append(
            {
                "name": lane.value,
                "waiting": int(sum(n for _, n, _ in depth)),
                "oldest": oldest,
                "workers": snap.workers.get(lane.value, 0),
                "done": snap.counts.get((lane.value, "complete"), 0),
                "depth": depth,
            }
        )
    ppm = (
        f"{snap.pages_per_min_per_core:.1f}"
        if snap.pages_per_min_per_core is not None
        else "— (nothing finished this hour)"
    )
    return _template().render(
        refresh=REFRESH_S,
        stamp=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(snap.now)),
        lanes=lanes,
        ppm=ppm,
        throughput=snap.throughput,
        stages=[(st, p50, p95, n) for st, (p50, p95, n) in ordered],
        stage_chart=[
            (f"{st} p95", p95, "#e15759") for st, (_p50, p95, _n) in ordered if st != Stage.SCRATCH
        ],
        retries=ranked(snap.retries, "#f28e2b"),
        dead=ranked(snap.dead, "#e15759"),
        recent_dead=snap.recent_dead,
        review=snap.review,
        review_total=snap.review_total,
        decisions=snap.decisions,
        worker_list=snap.worker_list,
        pool=sorted(snap.pool.items()),
        scratch_bytes=snap.scratch_bytes,
        scratch_folders=snap.scratch_folders,
        disk_used=1 - snap.disk_free / snap.disk_size if snap.disk_size else 0.0,
        disk_free=snap.disk_free,
        disk_size=snap.disk_size,
    )
