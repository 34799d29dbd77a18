"""How long each HTTP request took, by route template, method and status: a pure ASGI
middleware (a streamed download stays streamed) feeding a histogram kept in this process, and
the access log: one JSON line per request (``pressroom.access``: method, route template,
status, bytes sent, seconds, the job id where the route names one). Never the raw path or
query string (a signed link's signature, a label), a header (a key) or a file name.

Unlike the store's figures, these are per process: each ``serve`` process is scraped on its own
and Prometheus sums the series (``sum by (route) (rate(..._bucket[5m]))``)."""

from __future__ import annotations

import logging
import re
import time

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Requests run from a millisecond (a status read) to minutes (an upload with ``Prefer: wait``).
HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
UNMATCHED = "unmatched"
# a client may send any method name: one label for all the others keeps the series bounded
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

access = logging.getLogger("pressroom.access")
# a job id as intake makes them (UUID4); anything else a client put in the path is not logged
JOB_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
JOBS_LOCATION = "/v1/jobs/"

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


def job_of(scope: Scope, location: str) -> str | None:
    """The job a request is about: the route's ``job_id`` or ``item_id``, or the job a submit
    made (its ``Location``); only when it has the shape of a job id."""
    params = scope.get("path_params") or {}
    candidate = str(params.get("job_id") or params.get("item_id") or "")
    if not candidate and location.startswith(JOBS_LOCATION):
        candidate = location.removeprefix(JOBS_LOCATION)
    return candidate if JOB_ID.match(candidate) else None


class RequestTiming:
    """Times each HTTP request from its arrival to the last byte of its answer, and logs it
    when ``access_log`` is on."""

    def __init__(self, app: ASGIApp, access_log: bool = False) -> None:
        self.app = app
        self.access_log = access_log

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the server answers when the app raises before answering
        sent = 0
        location = ""

        async def watch(message: Message) -> None:
            nonlocal status, sent, location
            if message["type"] == "http.response.start":
                status = int(message["status"])
                for name, value in message.get("headers", ()):
                    if name.lower() == b"location":
                        location = value.decode("latin-1")
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            seconds = time.perf_counter() - started
            method = scope["method"] if scope["method"] in METHODS else "other"
            route = route_template(scope)
            REQUEST_SECONDS.labels(route, method, str(status)).observe(seconds)
            if self.access_log:
                access.info(
                    "request",
                    extra={
                        "method": method,
                        "route": route,
                        "status": status,
                        "bytes": sent,
                        "seconds": round(seconds, 4),
                        "job_id": job_of(scope, location),
                    },
                )


def render_http_metrics() -> bytes:
    return bytes(generate_latest(REGISTRY))
