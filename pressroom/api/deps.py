"""What routes depend on: one bearer-key check for every protected route (a tenant's key or an
operator's), and the services, read from ``app.state`` on each request."""

from __future__ import annotations

import ipaddress
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.concurrency import run_in_threadpool

from pressroom.errors import Forbidden, Unauthorized
from pressroom.intake import Intake
from pressroom.keys import KeyOwner
from pressroom.review import Reviews
from pressroom.service import Services


def get_services(request: Request) -> Services:
    # read per request, never captured: the wiring may be swapped while the app runs (tests do)
    services: Services = request.app.state.services
    return services


ServicesDep = Annotated[Services, Depends(get_services)]


def get_intake(services: ServicesDep) -> Intake:
    return Intake.of(services)


def get_reviews(services: ServicesDep) -> Reviews:
    return Reviews.of(services)


IntakeDep = Annotated[Intake, Depends(get_intake)]
ReviewsDep = Annotated[Reviews, Depends(get_reviews)]


# reads ``Authorization: Bearer <key>`` and declares the scheme in the OpenAPI document; never
# refuses by itself (auto_error=False): ``Bearer`` answers 401 as a problem, with our wording
bearer_scheme = HTTPBearer(
    scheme_name="bearerAuth",
    description="A tenant's API key, or an operator key for operator routes.",
    auto_error=False,
)
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer_scheme)]


class Bearer:
    """``Authorization: Bearer <key>`` for a key of the given roles: 401 without a known key,
    403 with a key of another role (an operator's where a tenant's is needed answers 401, as
    it always did: it is no tenant's key). Checked before anything else the route does: before
    an id is looked up or a body read. Returns the key's owner."""

    def __init__(self, role: str, what: str, *, also: tuple[str, ...] = ()) -> None:
        self.role = role
        self.roles = (role, *also)
        self.what = what  # how the 401 names the key wanted

    async def __call__(self, request: Request, credentials: Credentials) -> str:
        return (await self.owner(request, credentials)).tenant

    async def owner(self, request: Request, credentials: Credentials) -> KeyOwner:
        """The key's owner with its id, for routes that record who acted."""
        if credentials is None or credentials.scheme != "Bearer":
            raise Unauthorized(f"send Authorization: Bearer <{self.what}>")
        services = get_services(request)
        key = credentials.credentials.strip()
        found = await run_in_threadpool(
            lambda: services.store.tenancy.key_info(key, now=services.clock())
        )
        if found is None or (self.role == "tenant" and found.role == "operator"):
            raise Unauthorized("unknown, expired or revoked API key")
        if found.role == "reviewer" and found.role not in self.roles:
            raise Forbidden("a reviewer key may only review: the desk and the review routes")
        if found.role not in self.roles:
            raise Forbidden("this needs an operator key")
        return found


tenant = Bearer("tenant", "API key")
operator = Bearer("operator", "operator key")
Tenant = Annotated[str, Depends(tenant)]
Operator = Annotated[str, Depends(operator)]
# a tenant's key with its id: for the routes that record who acted
Caller = Annotated[KeyOwner, Depends(tenant.owner)]
# the review routes: a tenant's key or its reviewer's
reviewer = Bearer("tenant", "API key or reviewer key", also=("reviewer",))
Reviewer = Annotated[str, Depends(reviewer)]
ReviewCaller = Annotated[KeyOwner, Depends(reviewer.owner)]


def loopback_peer(request: Request, trusted_proxies: tuple[str, ...]) -> bool:
    """Whether the socket peer is this host. Addresses only, never names: a client is not
    "localhost" because a header or a test says so. With trusted proxies every request may
    carry a forwarded address in its place, so none counts as local."""
    if trusted_proxies:
        return False
    client = request.scope.get("client")
    if not client:
        return False
    try:
        address = ipaddress.ip_address(client[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped  # a dual-stack socket's view of an IPv4 peer
    return address.is_loopback


async def operator_off_loopback(request: Request, credentials: Credentials) -> None:
    """Open on loopback (the embedded default); an operator key from anywhere else."""
    if not loopback_peer(request, get_services(request).settings.trusted_proxies):
        await operator(request, credentials)
