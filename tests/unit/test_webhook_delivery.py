"""One webhook send against scripted peers (no sockets): it connects to the address that was
checked, keeps the URL's name for Host and TLS, ends by its deadline however slowly the peer
trickles, and reads at most a capped response."""

from __future__ import annotations

import itertools
import ssl
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import httpcore
import pytest

from pressroom.errors import BadConfig
from pressroom.notify.config import DeliveryConfig
from pressroom.notify.webhooks import Sent, WebhookSender
from pressroom.settings import Settings

PUBLIC = "93.184.216.34"
HEAD_204 = b"HTTP/1.1 204 No Content\r\n\r\n"


class Clock:
    """Monotonic time that moves only when the scripted peer says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class ScriptedStream(httpcore.NetworkStream):
    """Answers reads from ``script``; each read costs ``per_read`` seconds of the clock."""

    def __init__(self, peer: ScriptedPeer) -> None:
        self.peer = peer
        self.chunks = iter(peer.script)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.peer.timeouts.append(timeout)
        self.peer.clock.now += self.peer.per_read
        chunk = next(self.chunks, b"")[:max_bytes]
        self.peer.served += len(chunk)
        return chunk

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.peer.written += buffer

    def close(self) -> None:
        self.peer.closed = True

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        self.peer.tls_names.append(server_hostname)
        return self

    def get_extra_info(self, info: str) -> Any:
        return None


class ScriptedPeer(httpcore.NetworkBackend):
    """A network where every connection reaches one scripted peer; records where it was asked
    to connect, what was written, and how many response bytes were taken."""

    def __init__(
        self, script: Iterable[bytes], clock: Clock, per_read: float = 0.0, refuse: bool = False
    ) -> None:
        self.script = script
        self.clock = clock
        self.per_read = per_read
        self.refuse = refuse
        self.connected: list[tuple[str, int]] = []
        self.tls_names: list[str | None] = []
        self.written = b""
        self.served = 0
        self.closed = False
        self.timeouts: list[float | None] = []

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        self.connected.append((host, port))
        if self.refuse:
            raise httpcore.ConnectError("refused")
        return ScriptedStream(self)

    def sleep(self, seconds: float) -> None:
        self.clock.now += seconds


class Rebinding:
    """A name server for an attacker's name: a public address for the first lookup, a private
    one for every lookup after (DNS rebinding)."""

    def __init__(self, first: Sequence[str], after: Sequence[str] = ("127.0.0.1",)) -> None:
        self.first = list(first)
        self.after = list(after)
        self.calls = 0

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls += 1
        return self.first if self.calls == 1 else self.after


def sender(peer: ScriptedPeer, resolve: Any, **kw: Any) -> WebhookSender:
    return WebhookSender(resolve=resolve, network=peer, clock=peer.clock, **kw)


def post(s: WebhookSender, url: str, clock: Clock, deadline_s: float = 15.0) -> Sent:
    return s.post(url, b'{"a":1}', {"webhook-id": "msg_1"}, deadline=clock() + deadline_s)


def endless(chunk: bytes) -> Iterator[bytes]:
    while True:
        yield chunk


def test_the_connection_goes_to_the_address_that_was_checked_not_a_second_lookup() -> None:
    clock = Clock()
    peer = ScriptedPeer([HEAD_204], clock)
    dns = Rebinding([PUBLIC])
    sent = post(sender(peer, dns), "http://hooks.example/hook", clock)
    assert sent == Sent(True, None, 204, 0)
    assert peer.connected == [(PUBLIC, 80)]
    assert dns.calls == 1  # resolved once: the check and the connection share the answer
    assert peer.written.startswith(b"POST /hook HTTP/1.1\r\nHost: hooks.example\r\n")
    assert b"webhook-id: msg_1\r\n" in peer.written and peer.written.endswith(b'{"a":1}')


def test_tls_is_started_for_the_url_name_on_the_pinned_address() -> None:
    clock = Clock()
    peer = ScriptedPeer([HEAD_204], clock)
    sent = post(sender(peer, Rebinding([PUBLIC])), "https://hooks.example:8443/hook", clock)
    assert sent.ok
    assert peer.connected == [(PUBLIC, 8443)]
    assert peer.tls_names == ["hooks.example"]  # SNI and the certificate check use the name
    assert b"Host: hooks.example:8443\r\n" in peer.written


def test_every_resolved_address_is_checked_and_none_is_connected_to_if_one_is_private() -> None:
    clock = Clock()
    peer = ScriptedPeer([HEAD_204], clock)
    sent = post(sender(peer, Rebinding([PUBLIC, "10.0.0.5"])), "http://hooks.example/", clock)
    assert sent == Sent(False, "PRIVATE_ADDRESS")
    assert peer.connected == []


def test_with_private_addresses_allowed_the_resolved_address_is_still_the_one_used() -> None:
    clock = Clock()
    peer = ScriptedPeer([HEAD_204], clock)
    dns = Rebinding(["10.0.0.5"], after=["10.9.9.9"])
    sent = post(sender(peer, dns, allow_private=True), "http://hooks.internal/", clock)
    assert sent.ok and peer.connected == [("10.0.0.5", 80)] and dns.calls == 1


def test_the_next_address_is_tried_when_the_first_refuses() -> None:
    clock = Clock()

    class FirstRefuses(ScriptedPeer):
        def connect_tcp(self, host: str, port: int, *a: Any, **kw: Any) -> httpcore.NetworkStream:
            if host == PUBLIC:
                self.connected.append((host, port))
                raise httpcore.ConnectError("refused")
            return super().connect_tcp(host, port, *a, **kw)

    peer = FirstRefuses([HEAD_204], clock)
    sent = post(sender(peer, Rebinding([PUBLIC, "8.8.8.8"])), "http://hooks.example/", clock)
    assert sent.ok and peer.connected == [(PUBLIC, 80), ("8.8.8.8", 80)]


def test_a_peer_trickling_one_byte_every_4_s_ends_with_timeout_at_the_deadline() -> None:
    clock = Clock()
    peer = ScriptedPeer(endless(b"H"), clock, per_read=4.0)
    start = clock()
    sent = post(sender(peer, Rebinding([PUBLIC])), "http://hooks.example/", clock, deadline_s=15)
    assert sent == Sent(False, "TIMEOUT")
    assert clock() - start <= 16.0  # the read that crossed the deadline was the last
    assert peer.served == 4 and peer.closed
    # each read may wait only what the deadline leaves, never the layer's whole timeout
    assert peer.timeouts == [15.0, 11.0, 7.0, 3.0]


def test_a_body_after_a_2xx_is_read_only_up_to_the_cap() -> None:
    clock = Clock()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"
    peer = ScriptedPeer(
        itertools.chain([head], endless(b"x" * 4096)),  # a body without end, read at once
        clock,
    )
    s = sender(peer, Rebinding([PUBLIC]), max_response_bytes=64 * 1024)
    sent = post(s, "http://hooks.example/", clock)
    assert sent.ok and sent.status == 200
    assert 64 * 1024 <= sent.received < 64 * 1024 + 4096
    assert peer.served <= len(head) + 64 * 1024 + 4096 and peer.closed


def test_a_2xx_whose_body_trickles_past_the_deadline_counts_as_delivered() -> None:
    clock = Clock()
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
    peer = ScriptedPeer(itertools.chain([head], endless(b"x")), clock, per_read=4.0)
    sent = post(sender(peer, Rebinding([PUBLIC])), "http://hooks.example/", clock)
    assert sent.ok and sent.status == 200 and peer.closed


def test_a_name_server_slower_than_the_deadline_is_a_timeout() -> None:
    release = threading.Event()

    def stuck(host: str, port: int) -> list[str]:
        release.wait(30)
        return [PUBLIC]

    peer = ScriptedPeer([HEAD_204], Clock())
    s = WebhookSender(resolve=stuck, network=peer)  # the real clock: the lookup waits for real
    try:
        sent = s.post("http://hooks.example/", b"{}", {}, deadline=s.clock() + 0.3)
    finally:
        release.set()
    assert sent == Sent(False, "TIMEOUT") and peer.connected == []


@pytest.mark.parametrize(
    ("script", "refuse", "code"),
    [
        ([b"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n"], False, "HTTP_500"),
        ([b"HTTP/1.1 302 Found\r\nLocation: http://10.0.0.1/\r\n\r\n"], False, "HTTP_302"),
        ([], True, "UNREACHABLE"),
        ([b"not http at all\r\n\r\n"], False, "UNREACHABLE"),
    ],
)
def test_failures_have_stable_codes(script: list[bytes], refuse: bool, code: str) -> None:
    clock = Clock()
    peer = ScriptedPeer(script, clock, refuse=refuse)
    sent = post(sender(peer, Rebinding([PUBLIC])), "http://hooks.example/", clock)
    assert (sent.ok, sent.code) == (False, code)
    assert len(peer.connected) == 1  # a redirect is never followed


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("ftp://hooks.example/x", "BAD_REQUEST"),
        ("http://user:pw@hooks.example/x", "BAD_REQUEST"),
        ("http://hooks.example:99999/x", "BAD_REQUEST"),
        ("http://127.0.0.1/x", "PRIVATE_ADDRESS"),
        ("http://[::ffff:10.0.0.1]/x", "PRIVATE_ADDRESS"),
    ],
)
def test_refused_urls_are_never_connected_to(url: str, code: str) -> None:
    clock = Clock()
    peer = ScriptedPeer([HEAD_204], clock)
    dns = Rebinding([PUBLIC])
    assert post(sender(peer, dns), url, clock) == Sent(False, code)
    assert peer.connected == [] and dns.calls == 0


def test_an_international_name_is_resolved_and_sent_in_its_ascii_form() -> None:
    clock = Clock()
    peer = ScriptedPeer([HEAD_204], clock)
    asked: list[str] = []

    def dns(host: str, port: int) -> list[str]:
        asked.append(host)
        return [PUBLIC]

    assert post(sender(peer, dns), "https://bücher.example/hook", clock).ok
    assert asked == ["xn--bcher-kva.example"] and peer.tls_names == ["xn--bcher-kva.example"]


def test_a_deadline_that_could_outlast_the_lease_is_refused_naming_the_variable() -> None:
    with pytest.raises(BadConfig, match="PRESSROOM_WEBHOOK_DEADLINE_SECONDS"):
        DeliveryConfig(deadline_s=55.0)  # the lease is 60 s and a send ends 10 s before it
    with pytest.raises(BadConfig, match="PRESSROOM_WEBHOOK_DEADLINE_SECONDS"):
        DeliveryConfig.from_settings(
            Settings.from_env({"PRESSROOM_WEBHOOK_DEADLINE_SECONDS": "soon"}).webhooks
        )
    with pytest.raises(BadConfig, match="PRESSROOM_WEBHOOK_DEADLINE_SECONDS"):
        DeliveryConfig.from_settings(
            Settings.from_env({"PRESSROOM_WEBHOOK_DEADLINE_SECONDS": "55"}).webhooks
        )
    with pytest.raises(BadConfig, match="PRESSROOM_WEBHOOK_SENDERS"):
        DeliveryConfig.from_settings(Settings.from_env({"PRESSROOM_WEBHOOK_SENDERS": "0"}).webhooks)
    config = DeliveryConfig.from_settings(
        Settings.from_env(
            {"PRESSROOM_WEBHOOK_DEADLINE_SECONDS": "5", "PRESSROOM_WEBHOOK_PER_TENANT": "1"}
        ).webhooks
    )
    assert (config.deadline_s, config.per_tenant, config.senders) == (5.0, 1, 4)
    assert config.deadline_s < config.lease_s
