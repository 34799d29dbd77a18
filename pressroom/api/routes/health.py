"""Liveness for load balancers and orchestrators: the database answers, and which version runs."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from pressroom import __version__
from pressroom.api.deps import ServicesDep
from pressroom.api.openapi import problems

router = APIRouter()


@router.get("/healthz", responses=problems(503))
async def healthz(services: ServicesDep) -> dict[str, str]:
    await run_in_threadpool(services.store.stats.counts)
    return {"status": "ok", "version": __version__}
