"""How long each HTTP request took, by route template, method and status: a pure ASGI
middleware (a streamed download stays streamed) feeding a histogram kept in this process.

Unlike the store's figures, these are per process: each ``serve`` process is scraped on its own
and Prometheus sums the series (``sum by (route) (rate(..._bucket[5m]))``)."""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Requests run from a millisecond (a status read) to minutes (an upload with ``Prefer: wait``).
HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
UNMATCHED = "unmatched"
# a client may send any method name: one label for all the others keeps the series bounded
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

REGISTRY = CollectorRegistry()
REQUEST_SECONDS = Histogram(
    "pressroom_http_request_duration_seconds",
    "HTTP requests answered by this process, by route template, method and status",
    ["route", "method", "status"],
    buckets=HTTP_BUCKETS,
    registry=REGISTRY,
)


def route_template(scope: Scope) -> str:
    """The path template of the route that took the request (``/v1/jobs/{job_id}``), never
    the raw path: an id in a label would make a series per job. Read after routing: FastAPI
    leaves its route in the scope; the framework's own pages (``/docs``) are looked up."""
    route = scope.get("route")
    if route is None:
        partial: str | None = None
        for candidate in getattr(scope.get("app"), "routes", ()):
            if getattr(candidate, "path_format", None) is None:
                continue  # a group of included routes: FastAPI's own routes said so above
            match, _child = candidate.matches(scope)
            if match is Match.FULL:
                route = candidate
                break
            if match is Match.PARTIAL and partial is None:
                partial = str(candidate.path_format)  # the path exists, not the method (405)
        if route is None:
            return partial or UNMATCHED
    return str(getattr(route, "path_format", None) or getattr(route, "path", UNMATCHED))


class RequestTiming:
    """Times each HTTP request from its arrival to the last byte of its answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the server answers when the app raises before answering

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            method = scope["method"] if scope["method"] in METHODS else "other"
            REQUEST_SECONDS.labels(route_template(scope), method, str(status)).observe(
                time.perf_counter() - started
            )


def render_http_metrics() -> bytes:
    return bytes(generate_latest(REGISTRY))
