"""The API, assembled: one handler table for Pressroom's errors, and a router per resource
(``api.routes``) over the services kept in ``app.state``. The reviewer's desk is mounted beside
it one level up, in ``pressroom.app``: the API does not know the desk's pages."""

from __future__ import annotations

from fastapi import FastAPI

from pressroom import __version__
from pressroom.api import docs
from pressroom.api.openapi import TAGS, check_operation_ids, openapi_of, operation_id
from pressroom.api.routes import (
    downloads,
    health,
    jobs,
    keys,
    operations,
    review,
    templates,
    tenancy,
)
from pressroom.api.timing import RequestTiming
from pressroom.service import Services
from pressroom.web.problems import install_error_handlers
from pressroom.web.single import SingleValues


def create_api(services: Services) -> FastAPI:
    app = FastAPI(
        title="Pressroom",
        version=__version__,
        description="Scans in, searchable branded PDFs out.",
        # /docs and /redoc come from the package (api.docs), never FastAPI's CDN pages
        docs_url=None,
        redoc_url=None,
        openapi_tags=TAGS,
        generate_unique_id_function=operation_id,
    )
    # Starlette's trailing-slash redirect builds its Location from the Host header the client
    # wrote (a signed link included): a path with a slash too many is simply not found
    app.router.redirect_slashes = False
    app.state.services = services
    install_error_handlers(app)
    routers = [
        m.router for m in (health, operations, jobs, templates, keys, tenancy, review, downloads)
    ]
    check_operation_ids(routers)  # a new route without its operationId fails here
    for router in routers:
        app.include_router(router)
    app.include_router(docs.router)
    app.add_middleware(SingleValues)
    app.add_middleware(RequestTiming, access_log=services.settings.access_log)
    app.openapi = openapi_of(app)  # type: ignore[method-assign]  # FastAPI's documented hook
    return app
