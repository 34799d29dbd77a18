"""The operator's views, metrics and the dashboard, mounted from their own modules: open on
loopback, an operator key from anywhere else."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from pressroom.api.deps import ServicesDep, operator_off_loopback
from pressroom.api.openapi import LOOPBACK_OR_BEARER, problems, text

router = APIRouter(tags=["operations"], dependencies=[Depends(operator_off_loopback)])


@router.get(
    "/metrics",
    response_class=Response,
    responses={
        **text("text/plain", "Prometheus text exposition (version 0.0.4)."),
        **problems(401, 403, 503),
    },
    openapi_extra=LOOPBACK_OR_BEARER,
)
async def metrics(services: ServicesDep) -> Response:
    from pressroom.api.metrics import render_metrics

    body = await run_in_threadpool(render_metrics, services)
    return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")


@router.get(
    "/dashboard",
    response_class=HTMLResponse,
    responses={**text("text/html", "The operator's dashboard."), **problems(401, 403, 503)},
    openapi_extra=LOOPBACK_OR_BEARER,
)
async def dashboard(services: ServicesDep) -> HTMLResponse:
    from pressroom.api.dashboard import render_dashboard, snapshot

    snap = await run_in_threadpool(snapshot, services)
    return HTMLResponse(render_dashboard(snap))
