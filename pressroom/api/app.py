"""The FastAPI app, assembled: one handler table for Pressroom's errors, and a router per
resource (``api.routes``) over the services kept in ``app.state``."""

from __future__ import annotations

from fastapi import FastAPI

from pressroom import __version__
from pressroom.api.openapi import openapi_of
from pressroom.api.problems import install_error_handlers
from pressroom.api.routes import downloads, health, jobs, keys, operations, review, tenancy
from pressroom.api.single import SingleValues
from pressroom.api.timing import RequestTiming
from pressroom.desk import web as desk
from pressroom.service import Services


def create_app(services: Services) -> FastAPI:
    app = FastAPI(
        title="Pressroom", version=__version__, description="Scans in, searchable branded PDFs out."
    )
    # Starlette's trailing-slash redirect builds its Location from the Host header the client
    # wrote (a signed link included): a path with a slash too many is simply not found
    app.router.redirect_slashes = False
    app.state.services = services
    install_error_handlers(app)
    for module in (health, operations, jobs, keys, tenancy, review, downloads):
        app.include_router(module.router)
    app.include_router(desk.router)  # /review: the reviewer's desk, pages outside the API document
    app.add_middleware(SingleValues)
    app.add_middleware(RequestTiming)
    app.openapi = openapi_of(app)  # type: ignore[method-assign]  # FastAPI's documented hook
    return app
