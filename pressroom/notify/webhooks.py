"""Standard Webhooks: signed with the tenant's secret, never to private addresses unless allowed,
retried with backoff from the outbox rows the store wrote with each job's final state."""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import logging
import socket
from typing import Any
from urllib.parse import urlsplit

import httpx

from pressroom.errors import BadRequest
from pressroom.jobs.backoff import RetryPolicy
from pressroom.service import Services

log = logging.getLogger("pressroom.webhooks")
DELIVERY_POLICY = RetryPolicy(max_attempts=8, base_s=10.0, cap_s=3600.0)
TIMEOUT_S = 10.0


class PrivateAddress(BadRequest):
    code = "PRIVATE_ADDRESS"


def check_url(url: str, *, allow_private: bool) -> str:
    """An http(s) URL whose host resolves only to public addresses (unless allowed)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadRequest("webhook_url must be an http:// or https:// URL")
    if parts.username or parts.password:
        raise BadRequest("webhook_url must not carry credentials")
    if allow_private:
        return url
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or 443, proto=socket.IPPROTO_TCP)
    except socket.gaierror:
        raise BadRequest("webhook_url's host does not resolve") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if not all(a.is_global for a in (address, *embedded_ipv4(address))):
            raise PrivateAddress("webhook_url points at a private or local address")
    return url


_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052's well-known prefix
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")  # RFC 8215: local use, never a webhook
_COMPATIBLE = ipaddress.ip_network("::/96")  # the deprecated IPv4-compatible form


def embedded_ipv4(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The IPv4 addresses an IPv6 address reaches through a translator or tunnel: mapped,
    IPv4-compatible, NAT64, 6to4 and Teredo (its client). ``64:ff9b::a9fe:a9fe`` is the cloud
    metadata service and ``[::127.0.0.1]`` this host, however global Python calls them."""
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    low = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    found: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if address in _NAT64 or (address in _COMPATIBLE and int(address) > 1):
        found.append(low)
    if address in _NAT64_LOCAL:
        found.append(ipaddress.IPv4Address("0.0.0.0"))  # not global, whatever it embeds
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.append(address.teredo[1])
    return found


def signature(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header value: v1,base64(HMAC-SHA256(key, id.ts.body))."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def deliver_due(services: Services, owner: str, client: httpx.Client | None = None) -> int:
    """Send every due delivery once; returns how many were delivered."""
    store = services.store
    due = store.claim_deliveries(owner, now=services.clock(), lease_s=60.0)
    if not due:
        return 0
    delivered = 0
    own = client is None
    http = client or httpx.Client(timeout=TIMEOUT_S, follow_redirects=False)
    try:
        for row in due:
            ok, error = _send(services, http, row)
            store.delivery_result(
                str(row["id"]),
                owner,
                ok=ok,
                error=error,
                now=services.clock(),
                policy=DELIVERY_POLICY,
            )
            delivered += ok
            log.info(
                "webhook",
                extra={
                    "job_id": row["job_id"],
                    "ok": ok,
                    "code": error,
                    "attempt": row["attempts"],
                },
            )
    finally:
        if own:
            http.close()
    return delivered


def _send(services: Services, http: httpx.Client, row: dict[str, Any]) -> tuple[bool, str | None]:
    try:
        check_url(str(row["url"]), allow_private=services.settings.webhook_allow_private)
    except BadRequest as exc:
        return False, exc.code
    body = json.dumps(row["payload"], separators=(",", ":"), sort_keys=True).encode()
    timestamp = int(services.clock())
    secret = services.store.webhook_secret(str(row["tenant"]), now=services.clock())
    headers = {
        "content-type": "application/json",
        "webhook-id": str(row["id"]),
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature(secret, str(row["id"]), timestamp, body),
    }
    try:
        response = http.post(str(row["url"]), content=body, headers=headers)
    except httpx.TimeoutException:
        return False, "TIMEOUT"
    except httpx.TransportError:
        return False, "UNREACHABLE"
    if 200 <= response.status_code < 300:
        return True, None
    return False, f"HTTP_{response.status_code}"
