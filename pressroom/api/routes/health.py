"""Liveness and readiness for load balancers and orchestrators: ``/healthz`` (the process
answers and its database does) and ``/readyz`` (the database, the blob store and the schema:
traffic may be sent here)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from pressroom import __version__
from pressroom.api.deps import ServicesDep
from pressroom.api.openapi import problems
from pressroom.errors import ScannerUnavailable, SchemaBehind
from pressroom.jobs.migrate import current_revision, head_revision
from pressroom.service import Services

router = APIRouter(tags=["operations"])
SCANNER_PING_S = 2.0


@router.get("/healthz", responses=problems(503))
async def healthz(services: ServicesDep) -> dict[str, str]:
    """Liveness: the process answers and its database does."""
    await run_in_threadpool(services.store.stats.counts)
    return {"status": "ok", "version": __version__}


def _ready(services: Services) -> dict[str, str]:
    with services.store.db.read() as conn:  # the database answers, or StoreUnavailable
        current = current_revision(conn)
    head = head_revision()
    if current != head:
        raise SchemaBehind(
            f"the database schema is at {current or 'nothing'}, this code needs {head}: "
            "run `pressroom db upgrade`"
        )
    services.blobs.reachable()
    return {
        "status": "ready",
        "version": __version__,
        "schema": head,
        "scanner": _scanner(services),
    }


def _scanner(services: Services) -> str:
    """The malware scanner as the workers will find it: ``off`` (none configured), ``ok`` (it
    answered PING) or ``unreachable``. Said, not a 503: the API never scans (the workers do,
    and retry while it is down), so a scanner outage must not take uploads away."""
    if services.scanner is None:
        return "off"
    try:
        # a probe's own timeout is seconds: a paused clamd must not hold the answer past it
        services.scanner.ping(timeout_s=SCANNER_PING_S)
    except ScannerUnavailable:
        return "unreachable"
    return "ok"


@router.get("/readyz", responses=problems(503))
async def readyz(services: ServicesDep) -> dict[str, str]:
    """Readiness: the database answers at this code's schema revision and the blob store can
    be written. 503 (a problem naming which) until all three hold. ``scanner`` says whether
    the configured malware scanner answers (``ok``, ``unreachable``, ``off``)."""
    return await run_in_threadpool(_ready, services)
