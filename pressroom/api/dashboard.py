"""/dashboard: one server-rendered page for operators (no build step, no scripts).

Read from the store at request time, like /metrics: per lane depth and oldest age, p50/p95 per
stage over the last hour, throughput, retry reasons, dead letters by reason, the review queue,
scratch usage. Charts are inline SVG; the page refreshes itself. It shows job ids, tenants,
reason codes, counts and durations — never file names, customer ids or document text.
"""

from __future__ import annotations

import html
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

from pressroom.jobs.model import Lane
from pressroom.pipeline.stages import Stage
from pressroom.scratch import scratch_disk, scratch_usage
from pressroom.service import Services

HOUR = 3600.0
REFRESH_S = 10
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
    for (kind, _lane, reason), n in events.items():
        if kind == "retry":
            retries[reason] = retries.get(reason, 0) + n
        elif kind == "dead_letter":
            dead[reason] = dead.get(reason, 0) + n
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
    snap.review = [
        {"id": r.id, "tenant": r.tenant, "reason": r.reason, "age": now - (r.finished_at or now)}
        for r in work.review
    ]
    snap.recent_dead = [
        {
            "id": r.id,
            "tenant": r.tenant,
            "lane": r.lane,
            "reason": r.reason,
            "age": now - (r.finished_at or now),
        }
        for r in work.dead
    ]
    snap.decisions = [
        {"at": d.at, "id": d.job_id, "action": d.action, "key_id": d.key_id} for d in work.decisions
    ]
    return snap


# --- rendering ---------------------------------------------------------------------------------


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


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


def _bars(items: list[tuple[str, float, str]], *, width: int = 420, unit: str = "") -> str:
    """Horizontal bars: (label, value, colour)."""
    if not items:
        return '<p class="none">nothing in this window</p>'
    top = max(v for _, v, _ in items) or 1.0
    row = 22
    total_w, total_h = width + 230, row * len(items) + 4
    parts = [
        f'<svg class="chart" viewBox="0 0 {total_w} {total_h}" width="100%" '
        f'preserveAspectRatio="xMinYMin meet" role="img" aria-label="bar chart">'
    ]
    for i, (label, value, colour) in enumerate(items):
        y = i * row + 2
        w = max(1.0, width * value / top) if value else 0.0
        parts.append(
            f'<text x="0" y="{y + 15}" class="lbl">{_e(label)}</text>'
            f'<rect x="150" y="{y}" width="{w:.1f}" height="{row - 6}" fill="{colour}"/>'
            f'<text x="{150 + w + 6:.1f}" y="{y + 15}" class="val">{_num(value)}{_e(unit)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _columns(values: list[int], *, width: int = 600, height: int = 120) -> str:
    top = max(values) or 1
    step = width / len(values)
    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height + 20}" width="100%" role="img" '
        'aria-label="pages completed per 5 minutes over the last hour">'
    ]
    for i, v in enumerate(values):
        h = (height - 4) * v / top
        parts.append(
            f'<rect x="{i * step + 2:.1f}" y="{height - h:.1f}" width="{step - 4:.1f}" '
            f'height="{h:.1f}" fill="#59a14f"><title>{v} pages</title></rect>'
        )
    parts.append(
        f'<text x="0" y="{height + 16}" class="val">60 min ago</text>'
        f'<text x="{width - 40}" y="{height + 16}" class="val">now</text></svg>'
    )
    return "".join(parts)


def _lane_card(snap: Snapshot, lane: Lane) -> str:
    states = ("accepted", "retrying", "running")
    depth = [(s, snap.counts.get((lane.value, s), 0), COLOURS[s]) for s in states]
    oldest = max(
        (snap.oldest.get((lane.value, s), 0.0) for s in ("accepted", "retrying")), default=0.0
    )
    done = snap.counts.get((lane.value, "complete"), 0)
    return (
        f'<section class="card lane" id="lane-{lane.value}"><h2>{lane.value} lane</h2>'
        f'<p class="big">{sum(n for _, n, _ in depth)} <span>waiting or running</span></p>'
        f"<p>oldest waiting: <b>{_age(oldest)}</b> · workers: "
        f"<b>{snap.workers.get(lane.value, 0)}</b> · complete: <b>{done}</b></p>"
        + _bars([(s, float(n), c) for s, n, c in depth], width=260)
        + "</section>"
    )


def render_dashboard(snap: Snapshot) -> str:
    ordered = sorted(
        snap.stages.items(),
        key=lambda kv: STAGE_ORDER.index(kv[0]) if kv[0] in STAGE_ORDER else 99,
    )
    stage_rows = "".join(
        f"<tr><td>{_e(s)}</td><td>{p50:.3f}</td><td>{p95:.3f}</td><td>{n}</td></tr>"
        for s, (p50, p95, n) in ordered
    )
    stage_chart = _bars(
        [(f"{s} p95", p95, "#e15759") for s, (_p50, p95, _n) in ordered if s != Stage.SCRATCH],
        unit=" s",
    )

    def reasons(counts: dict[str, int], colour: str) -> str:
        ranked = sorted(counts.items(), key=lambda kv: -kv[1])
        return _bars([(r, float(n), colour) for r, n in ranked])

    review_rows = "".join(
        f"<tr><td><code>{_e(r['id'])}</code></td><td>{_e(r['tenant'])}</td>"
        f"<td>{_e(r['reason'])}</td><td>{_age(r['age'])}</td></tr>"
        for r in snap.review
    )
    dead_rows = "".join(
        f"<tr><td><code>{_e(r['id'])}</code></td><td>{_e(r['tenant'])}</td><td>{_e(r['lane'])}"
        f"</td><td>{_e(r['reason'])}</td><td>{_age(r['age'])}</td></tr>"
        for r in snap.recent_dead
    )
    decision_rows = "".join(
        f"<tr><td>{_e(time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(d['at'])))}</td>"
        f"<td><code>{_e(d['id'])}</code></td><td>{_e(d['action'])}</td>"
        f"<td><code>{_e(d['key_id'])}</code></td></tr>"
        for d in snap.decisions
    )
    review_total = snap.review_total
    disk_used = 1 - snap.disk_free / snap.disk_size if snap.disk_size else 0.0
    ppm = (
        f"{snap.pages_per_min_per_core:.1f}"
        if snap.pages_per_min_per_core is not None
        else "— (nothing finished this hour)"
    )
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(snap.now))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="{REFRESH_S}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pressroom · dashboard</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #222; background: #f6f6f4; }}
h1 {{ font-size: 1.4rem; margin: 0 0 .2rem; }} h2 {{ font-size: 1.05rem; margin: 0 0 .5rem; }}
.grid {{ display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 1rem; }}
.card {{ background: #fff; border-radius: 8px; padding: 1rem; box-shadow: 0 1px 2px #0002; }}
.big {{ font-size: 2rem; margin: 0; }} .big span {{ font-size: .9rem; color: #666; }}
table {{ border-collapse: collapse; width: 100%; }}
td, th {{ text-align: left; padding: .2rem .5rem; border-bottom: 1px solid #eee; }}
.chart text.lbl, .chart text.val {{ font-size: 12px; fill: #333; }} .none {{ color: #888; }}
.muted {{ color: #666; }}
</style></head><body>
<h1>Pressroom</h1>
<p class="muted">{stamp} · refreshes every {REFRESH_S} s ·
<a href="/metrics">/metrics</a> · <a href="/docs">/docs</a></p>
<div class="grid">
{_lane_card(snap, Lane.BULK)}
{_lane_card(snap, Lane.INTERACTIVE)}
<section class="card" id="throughput"><h2>Throughput, last hour</h2>
<p>pages/min per worker process: <b>{ppm}</b> · pages this hour: <b>{sum(snap.throughput)}</b></p>
{_columns(snap.throughput)}</section>
<section class="card" id="stages"><h2>Stages, last hour (seconds)</h2>
{stage_chart}
<table><tr><th>stage</th><th>p50</th><th>p95</th><th>n</th></tr>{stage_rows}</table></section>
<section class="card" id="retries"><h2>Retries by reason, last 24 h</h2>
{reasons(snap.retries, "#f28e2b")}</section>
<section class="card" id="dead"><h2>Dead letters by reason, last 24 h</h2>
{reasons(snap.dead, "#e15759")}
<table><tr><th>job</th><th>tenant</th><th>lane</th><th>reason</th><th>ago</th></tr>
{dead_rows}</table>
<p class="muted">Fix the cause, then <code>POST /v1/jobs/&lt;id&gt;/retry</code> with an
operator key.</p></section>
<section class="card" id="review"><h2>Review queue: {review_total}</h2>
<table><tr><th>job</th><th>tenant</th><th>reason</th><th>waiting</th></tr>{review_rows}</table>
</section>
<section class="card" id="decisions"><h2>Review decisions, newest first</h2>
<table><tr><th>when (UTC)</th><th>job</th><th>decision</th><th>key</th></tr>
{decision_rows}</table></section>
<section class="card" id="scratch"><h2>Scratch</h2>
<p>{_bytes(snap.scratch_bytes)} in {snap.scratch_folders} live job folder(s) ·
disk {disk_used:.0%} used ({_bytes(snap.disk_free)} free of {_bytes(snap.disk_size)})</p>
{_bars([("disk used", disk_used * 100, "#76b7b2")], width=300, unit=" %")}
</section>
</div></body></html>"""
