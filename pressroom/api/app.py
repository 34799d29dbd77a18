"""The FastAPI app, assembled: one handler table for Pressroom's errors, and a router per
resource (``api.routes``) over the services kept in ``app.state``."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pressroom import __version__
from pressroom.api.openapi import openapi_of
from pressroom.api.responses import error_response
from pressroom.api.routes import downloads, health, jobs, keys, operations, review, tenancy
from pressroom.api.single import SingleValues
from pressroom.api.timing import RequestTiming
from pressroom.desk import web as desk
from pressroom.errors import PressroomError, Refused, TransientError
from pressroom.service import Services

log = logging.getLogger("pressroom.api")


async def pressroom_error(_request: Request, exc: Exception) -> JSONResponse:
    """One handler for the whole family: the class says the status, a refusal or a transient
    failure says when to come back."""
    assert isinstance(exc, PressroomError)
    headers = None
    if isinstance(exc, Refused):
        headers = {"Retry-After": str(exc.retry_after)}
    elif isinstance(exc, TransientError):
        headers = {"Retry-After": "30" if exc.code == "STORAGE_FULL" else "5"}
        log.warning("request refused for now", extra={"code": exc.code})
    return error_response(exc.code, exc.message, exc.http_status, headers)


# the framework's own refusals, with the code each gets
FRAMEWORK_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "TOO_LARGE",
    415: "BAD_MIME",
}


async def framework_error(_request: Request, exc: Exception) -> JSONResponse:
    """Starlette's HTTP errors (an unknown path, a method a path does not take) as problems."""
    assert isinstance(exc, StarletteHTTPException)
    code = FRAMEWORK_CODES.get(exc.status_code, f"HTTP_{exc.status_code}")
    detail = exc.detail if isinstance(exc.detail, str) else code
    return error_response(code, detail, exc.status_code, dict(exc.headers or {}))


async def validation_error(_request: Request, exc: Exception) -> JSONResponse:
    """A parameter the route's declaration refuses (a query value of the wrong type): a bad
    request like any other, naming the parameter, never echoing the value."""
    assert isinstance(exc, RequestValidationError)
    where = sorted({".".join(str(p) for p in e.get("loc", ())[1:]) for e in exc.errors()})
    return error_response("BAD_REQUEST", f"invalid {', '.join(where) or 'request'}", 400)


def create_app(services: Services) -> FastAPI:
    app = FastAPI(
        title="Pressroom", version=__version__, description="Scans in, searchable branded PDFs out."
    )
    # Starlette's trailing-slash redirect builds its Location from the Host header the client
    # wrote (a signed link included): a path with a slash too many is simply not found
    app.router.redirect_slashes = False
    app.state.services = services
    app.add_exception_handler(PressroomError, pressroom_error)
    app.add_exception_handler(StarletteHTTPException, framework_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    for module in (health, operations, jobs, keys, tenancy, review, downloads):
        app.include_router(module.router)
    app.include_router(desk.router)  # /review: the reviewer's desk, pages outside the API document
    app.add_middleware(SingleValues)
    app.add_middleware(RequestTiming)
    app.openapi = openapi_of(app)  # type: ignore[method-assign]  # FastAPI's documented hook
    return app
