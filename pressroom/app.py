"""The one app ``pressroom serve`` runs: the API (``api.app``) and the reviewer's desk
(``desk``, pages at ``/review`` outside the API document) mounted side by side. The two faces
share only the web kit (``pressroom.web``); this module is the only one that knows both."""

from __future__ import annotations

from fastapi import FastAPI, Request

from pressroom.api.app import create_api
from pressroom.desk.config import DeskConfig, service_config
from pressroom.desk.routes import router as desk_router
from pressroom.service import Services


def service_desk(request: Request) -> DeskConfig:
    """The desk over the service's store, built per request like every route's services; its
    backend module is loaded when first used (it brings the review service's imports)."""
    from pressroom.deskstore import ServiceDesk

    services = request.app.state.services
    return service_config(ServiceDesk(services), services)


def create_app(services: Services) -> FastAPI:
    app = create_api(services)
    app.state.desk = service_desk
    app.include_router(desk_router)
    return app
