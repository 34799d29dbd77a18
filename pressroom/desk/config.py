"""What the reviewer's desk runs on (``DeskConfig``), and where a request finds it: the offline
desk's app holds one, the service's app a function that builds one per request over the store
(``pressroom.app``)."""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fastapi import Request

from pressroom.desk.gate import Gate, KeyGate
from pressroom.deskport import DeskBackend
from pressroom.errors import NotFound

if TYPE_CHECKING:
    from pressroom.service import Services


@dataclass(frozen=True, slots=True)
class DeskConfig:
    """What the desk runs on: who holds the jobs, who may sign in, the key its cookies are
    signed with, and the time."""

    backend: DeskBackend
    gate: Gate
    secret: bytes
    clock: Callable[[], float] = field(default=time.time)
    secure: bool = False  # Secure cookies whatever the request's scheme (public URL is https)
    templates: str | None = None  # a folder of page templates replacing the package's


def desk_secret(signing_key: bytes) -> bytes:
    """A key of the desk's own, derived from the service's link-signing key: a session cookie
    is never a valid download signature, nor the other way round."""
    return hmac.new(signing_key, b"desk", hashlib.sha256).digest()


def config_of(request: Request) -> DeskConfig:
    """``app.state.desk``: a ``DeskConfig`` (the offline desk, tests), or a function of the
    request that builds one (the service's, set by ``pressroom.app``, built per request like
    every other route's services). The desk itself knows no store."""
    given = getattr(request.app.state, "desk", None)
    if callable(given):
        given = given(request)
    if not isinstance(given, DeskConfig):
        raise NotFound("no desk is configured here")
    return given


def service_config(backend: DeskBackend, services: Services) -> DeskConfig:
    """The desk the service runs: ``backend`` over the store, keys checked against the tenancy,
    the session cookie signed with a key derived from the link-signing key."""
    return DeskConfig(
        backend,
        KeyGate(services),
        desk_secret(services.signer.secret),
        services.clock,
        secure=services.settings.public_url.startswith("https://"),
        templates=services.settings.desk_templates or None,
    )


def templates_of(request: Request) -> str | None:
    """The folder of page templates replacing the package's for this request, if any: found
    without building the service's desk (a refusal is drawn with it too)."""
    given = getattr(request.app.state, "desk", None)
    if isinstance(given, DeskConfig):
        return given.templates
    services = getattr(request.app.state, "services", None)
    return (services.settings.desk_templates or None) if services is not None else None
