"""Standard Webhooks: signed with the tenant's secrets, never to private addresses unless allowed,
retried with backoff from the outbox rows the store wrote with each job's final state.

A send resolves the URL's host once, checks every address it got, and connects to one of those
very addresses (the name still goes into the Host header and TLS), all by one wall-clock
deadline and reading at most a capped response."""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx

from pressroom.errors import BadRequest, PrivateAddress
from pressroom.jobs.backoff import RetryPolicy
from pressroom.jobs.model import JobState
from pressroom.jobs.store import Outbox
from pressroom.notify.config import DeliveryConfig
from pressroom.notify.transport import PinnedBackend
from pressroom.service import Services
from pressroom.signing import artifact_links

log = logging.getLogger("pressroom.webhooks")
DELIVERY_POLICY = RetryPolicy(max_attempts=8, base_s=10.0, cap_s=3600.0)

Resolver = Callable[[str, int], Sequence[str]]
"""``(host, port)`` → the addresses (text) the host resolves to, in the order to try them."""


@dataclass(frozen=True, slots=True)
class Target:
    """A webhook URL, parsed once: the same parse decides where to connect and what to send."""

    url: httpx.URL
    host: str  # IDNA-encoded name or an IP literal without brackets
    port: int


def parse_url(url: str) -> Target:
    """An http(s) URL without credentials, parsed the way the request will be sent."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, UnicodeError, TypeError):
        raise BadRequest("webhook_url must be an http:// or https:// URL") from None
    if parsed.scheme not in ("http", "https") or not parsed.raw_host:
        raise BadRequest("webhook_url must be an http:// or https:// URL")
    if parsed.userinfo:
        raise BadRequest("webhook_url must not carry credentials")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    if not 0 < port < 65536:
        raise BadRequest("webhook_url's port is out of range")
    return Target(parsed, parsed.raw_host.decode("ascii"), port)


def system_resolver(host: str, port: int) -> list[str]:
    """The system's answer for ``host``, each address once, in the order it gave them."""
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        raise BadRequest("webhook_url's host does not resolve") from None
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def check_addresses(addresses: Sequence[str]) -> None:
    """Refuse unless every address (and any IPv4 address it embeds) is public unicast
    (multicast counts as global to ``ipaddress``, but it is no webhook endpoint)."""
    for text in addresses:
        address = ipaddress.ip_address(text)
        if not all(a.is_global and not a.is_multicast for a in (address, *embedded_ipv4(address))):
            raise PrivateAddress("webhook_url points at a private or local address")


def check_url(url: str, *, allow_private: bool) -> str:
    """An http(s) URL whose host resolves only to public addresses (unless allowed)."""
    target = parse_url(url)
    if not allow_private:
        check_addresses(_literal(target.host) or system_resolver(target.host, target.port))
    return url


def _literal(host: str) -> list[str]:
    try:
        return [str(ipaddress.ip_address(host))]
    except ValueError:
        return []


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
    """One signature: v1,base64(HMAC-SHA256(key, id.ts.body))."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def signatures(secrets: Sequence[str], msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header value: one signature per secret, space-separated, in
    the order given (Standard Webhooks: a receiver accepts the message if any one verifies)."""
    return " ".join(signature(secret, msg_id, timestamp, body) for secret in secrets)


class _Late(Exception):
    """The deadline passed before the host resolved."""


@dataclass(frozen=True, slots=True)
class Sent:
    """What one send came to: ``code`` is None when delivered."""

    ok: bool
    code: str | None
    status: int | None = None
    received: int = 0  # response body bytes read (at most the cap)


@dataclass(frozen=True, slots=True)
class WebhookSender:
    """Posts one message: resolve once, check, connect to that address; all by ``deadline``.

    The ports (resolver, network backend, clock) are injectable so tests can answer a
    rebinding name or a trickling peer without a network."""

    allow_private: bool = False
    max_response_bytes: int = DeliveryConfig().max_response_bytes
    resolve: Resolver = system_resolver
    network: httpcore.NetworkBackend = field(default_factory=httpcore.SyncBackend)
    ssl_context: ssl.SSLContext | None = None  # None: httpcore's default (certifi, verified)
    clock: Callable[[], float] = time.monotonic

    def post(self, url: str, body: bytes, headers: Mapping[str, str], *, deadline: float) -> Sent:
        """POST ``body`` to ``url``; ``deadline`` is a ``clock()`` time."""
        try:
            target = parse_url(url)
            addresses = _literal(target.host) or self._resolve(target, deadline)
            if not self.allow_private:
                check_addresses(addresses)
        except BadRequest as exc:
            return Sent(False, exc.code)
        except _Late:
            return Sent(False, "TIMEOUT")
        left = deadline - self.clock()
        if left <= 0:
            return Sent(False, "TIMEOUT")
        backend = PinnedBackend(addresses, deadline, self.network, self.clock)
        request_headers = [
            ("Host", target.url.netloc.decode("ascii")),
            ("User-Agent", "pressroom-webhooks"),
            ("Content-Length", str(len(body))),
            *headers.items(),
        ]
        timeouts = {"connect": left, "read": left, "write": left, "pool": left}
        with httpcore.ConnectionPool(
            ssl_context=self.ssl_context, network_backend=backend, max_connections=1
        ) as pool:
            try:
                with pool.stream(
                    "POST",
                    httpcore.URL(
                        scheme=target.url.raw_scheme,
                        host=target.url.raw_host,
                        port=target.url.port,
                        target=target.url.raw_path,
                    ),
                    headers=request_headers,
                    content=body,
                    extensions={"timeout": timeouts},
                ) as response:
                    status = response.status
                    received = self._drain(response)
            except httpcore.TimeoutException:
                return Sent(False, "TIMEOUT")
            except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol):
                return Sent(False, "UNREACHABLE")
        if 200 <= status < 300:
            return Sent(True, None, status, received)
        return Sent(False, f"HTTP_{status}", status, received)

    def _resolve(self, target: Target, deadline: float) -> list[str]:
        """The resolver's answer, or ``_Late`` at the deadline (a slow name server is a tarpit
        too; its lookup is left to finish on its own)."""
        answer: list[Sequence[str] | BaseException] = []
        done = threading.Event()

        def lookup() -> None:
            try:
                answer.append(self.resolve(target.host, target.port))
            except BaseException as exc:  # handed to the waiting sender
                answer.append(exc)
            finally:
                done.set()

        threading.Thread(target=lookup, name="webhook-resolve", daemon=True).start()
        if not done.wait(max(0.0, deadline - self.clock())):
            raise _Late
        result = answer[0]
        if isinstance(result, BaseException):
            raise result
        if not result:
            raise BadRequest("webhook_url's host does not resolve")
        return list(result)

    def _drain(self, response: httpcore.Response) -> int:
        """Read the body up to the cap; the status line was the answer, so a body cut short,
        trickled past the deadline or too long changes nothing."""
        received = 0
        try:
            for chunk in response.iter_stream():
                received += len(chunk)
                if received >= self.max_response_bytes:
                    break
        except (httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError):
            pass
        return received


Link = Callable[[str], str | None]


def artifact_link(services: Services, base: str) -> Link:
    """A complete job's download link for its webhook, signed now (each send: a retried
    delivery hours later still carries a live link, and no link is ever stored), under
    ``base`` (``PRESSROOM_PUBLIC_URL``, else what ``serve`` listens on); None for any other
    job, or with no base to build it on."""

    def link(job_id: str) -> str | None:
        job = services.store.queue.get(job_id)
        if not base or job is None or job.state is not JobState.COMPLETE or not job.artifact_key:
            return None
        url, _ = artifact_links(
            services.signer,
            job.id,
            job.artifact_sha256,
            job.artifact_key,
            base.rstrip("/"),
            sidecar=False,
            now=services.clock(),
        )
        return url

    return link


def payload_of(row: Mapping[str, Any], link: Link | None) -> dict[str, Any]:
    """The stored payload, with a complete job's ``artifact_url`` added at send time."""
    payload = dict(row["payload"])
    data = dict(payload.get("data") or {})
    if data.get("state") == JobState.COMPLETE.value:
        data["artifact_url"] = link(str(row["job_id"])) if link is not None else None
        payload["data"] = data
    return payload


def send_delivery(
    outbox: Outbox,
    clock: Callable[[], float],
    sender: WebhookSender,
    row: Mapping[str, Any],
    *,
    deadline: float,
    link: Link | None = None,
) -> Sent:
    """Sign and post one outbox row, with the secrets that sign at send time (a row queued
    before a rotation carries the new secret's signature, and the old one's during the
    overlap)."""
    body = json.dumps(payload_of(row, link), separators=(",", ":"), sort_keys=True).encode()
    timestamp = int(clock())
    keys = outbox.signing_secrets(str(row["tenant"]), now=clock())
    headers = {
        "content-type": "application/json",
        "webhook-id": str(row["id"]),
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signatures(keys, str(row["id"]), timestamp, body),
    }
    return sender.post(str(row["url"]), body, headers, deadline=deadline)


def deliver(
    outbox: Outbox,
    clock: Callable[[], float],
    sender: WebhookSender,
    owner: str,
    row: Mapping[str, Any],
    *,
    deadline: float,
    link: Link | None = None,
) -> bool:
    """Send one claimed row and record the result on the outbox; True when delivered."""
    started = time.monotonic()
    sent = send_delivery(outbox, clock, sender, row, deadline=deadline, link=link)
    outbox.delivery_result(
        str(row["id"]),
        owner,
        ok=sent.ok,
        error=sent.code,
        now=clock(),
        policy=DELIVERY_POLICY,
    )
    log.info(
        "webhook",
        extra={
            "job_id": row["job_id"],
            "tenant": row["tenant"],
            "ok": sent.ok,
            "code": sent.code,
            "attempt": row["attempts"],
            "seconds": round(time.monotonic() - started, 3),
        },
    )
    return sent.ok


def deliver_due(
    services: Services,
    owner: str,
    sender: WebhookSender | None = None,
    config: DeliveryConfig | None = None,
    base_url: str = "",
) -> int:
    """Send every due delivery once, one after another in the caller's thread; returns how
    many were delivered. The service delivers with a ``DeliveryPool`` instead; this is for a
    one-off run and for tests."""
    config = config or DeliveryConfig()
    sender = sender or WebhookSender(
        allow_private=services.settings.webhook_allow_private,
        max_response_bytes=config.max_response_bytes,
    )
    delivered = 0
    # one claim per send, so no claimed row waits behind another's send past its lease
    while True:
        claimed_at = sender.clock()
        due = services.store.outbox.claim_deliveries(
            owner, now=services.clock(), lease_s=config.lease_s, limit=1
        )
        if not due:
            return delivered
        # the config holds deadline_s inside the lease, so this send ends before it lapses
        deadline = claimed_at + config.deadline_s
        delivered += deliver(
            services.store.outbox,
            services.clock,
            sender,
            owner,
            due[0],
            deadline=deadline,
            link=artifact_link(services, services.settings.public_url or base_url),
        )
