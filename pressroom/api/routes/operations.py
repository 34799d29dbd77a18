"""The operator's views, metrics and the dashboard, mounted from their own modules: open on
loopback, an operator key from anywhere else."""

from __future__ import annotations

import base64
import hashlib
import re

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
    page = render_dashboard(snap)
    return HTMLResponse(page, headers=dashboard_headers(page))


def dashboard_headers(page: str) -> dict[str, str]:
    """The desk's security headers: no script at all, the page's one style block by its hash
    (nothing a value rendered into the page could add), never framed, never cached (it lists
    every tenant's jobs)."""
    styles = re.findall(r"<style>(.*?)</style>", page, flags=re.DOTALL)
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in styles
    )
    style_src = hashes or "'none'"
    csp = (
        f"default-src 'none'; style-src {style_src}; img-src 'self' data:; "
        "form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
    )
    return {
        "Content-Security-Policy": csp,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }
