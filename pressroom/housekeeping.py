"""Housekeeping, a service: what the store says has expired is deleted from the blob store
(outputs, dead letters' sources, unreviewed held copies), orphan blobs a crash left are swept,
old history is pruned; ``start_housekeeping`` runs it in a loop in ``serve``. The store
(``jobs/retention.py``) knows no blobs; the keys are read back by ``storage.parse_key``."""

from __future__ import annotations

import threading
from collections.abc import Callable

from pressroom.errors import PressroomError
from pressroom.jobs.store import Retention
from pressroom.storage import BlobStore, delete_output, parse_key

ORPHAN_AGE_S = 3600.0
HISTORY_S = 30 * 24 * 3600.0  # job events and stage timings behind metrics and the dashboard


def housekeeping(
    retention: Retention,
    blobs: BlobStore,
    *,
    clock: Callable[[], float],
    retention_s: float,
    review_retention_s: float,
    prune_sessions: Callable[..., int] | None = None,
) -> dict[str, int]:
    """Delete expired artifacts, sources kept for dead letters past the retention window,
    orphan sources (a crash between blob and row), old events and timings, and desk sessions
    a day past their end."""
    now = clock()
    if prune_sessions is not None:
        prune_sessions(before=now - 86400.0)
    removed = {"artifacts": 0, "orphans": 0, "dead_sources": 0, "expired_reviews": 0}
    for job_id in retention.expired_reviews(before=now - review_retention_s):
        keys = retention.expire_review(job_id, now=clock())
        for key in keys or ():
            if key:
                delete_output(blobs, key)
        removed["expired_reviews"] += keys is not None
    before = now - retention_s
    for job_id, key in retention.expired_rejected_sources(before=before):
        # a dead letter keeps its source for a redrive, but not forever: it holds personal data
        blobs.delete(key)
        retention.forget_source(job_id)
        removed["dead_sources"] += 1
    retention.prune_history(before=now - HISTORY_S)
    for job_id, key in retention.expired_artifacts(before=now - retention_s):
        delete_output(blobs, key)
        retention.forget_artifact(job_id)
        removed["artifacts"] += 1
    for prefix in ("sources", "review"):
        for key, mtime in list(blobs.list(prefix)):
            if now - mtime < ORPHAN_AGE_S:
                continue
            named = parse_key(key)
            held = retention.held_keys(named.job_id) if named is not None else None
            if held is None or key not in held:
                blobs.delete(key)
                removed["orphans"] += 1
    for key, mtime in list(blobs.list("scratch")):
        # a page range's part outlives its job only when the job's end missed it (a worker
        # stopped by the supervisor, a lapsed cancel): gone an hour on
        named = parse_key(key)
        if now - mtime < ORPHAN_AGE_S or (named is not None and retention.unfinished(named.job_id)):
            continue
        blobs.delete(key)
        removed["orphans"] += 1
    removed["staging"] = sweep_staging(blobs, ORPHAN_AGE_S)
    return removed


def sweep_staging(blobs: object, max_age_s: float) -> int:
    """Half-written local copies a crash left (S3 writes are atomic and leave none); through
    wrappers (encryption) to the store that writes the files."""
    while blobs is not None:
        sweep = getattr(blobs, "sweep_staging", None)
        if callable(sweep):
            return int(sweep(max_age_s))
        blobs = getattr(blobs, "inner", None)
    return 0


def start_housekeeping(run: Callable[[], object], every_s: float = 300.0) -> threading.Event:
    """Call ``run`` (a bound ``housekeeping``) in a background thread every ``every_s`` until
    the returned event is set."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(every_s):
            try:
                run()
            except PressroomError:
                continue

    threading.Thread(target=loop, name="housekeeping", daemon=True).start()
    return stop
