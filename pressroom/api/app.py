"""The FastAPI app, assembled: one handler table for Pressroom's errors, and a router per
resource (``api.routes``) over the services kept in ``app.state``."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from pressroom import __version__
from pressroom.api.responses import error_response
from pressroom.api.routes import downloads, health, jobs, operations, review, tenancy
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


def create_app(services: Services) -> FastAPI:
    app = FastAPI(
        title="Pressroom", version=__version__, description="Scans in, searchable branded PDFs out."
    )
    app.state.services = services
    app.add_exception_handler(PressroomError, pressroom_error)
    for module in (health, operations, jobs, tenancy, review, downloads):
        app.include_router(module.router)
    return app
