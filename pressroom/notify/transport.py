"""httpcore's network layer for webhooks: connect to the address that was checked, never to what a
second lookup of the name answers, and end every connect, handshake, read and write by one
wall-clock deadline, however slowly the far end trickles."""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import httpcore


def remaining(
    deadline: float, timeout: float | None, clock: Callable[[], float], late: type[Exception]
) -> float:
    """The timeout one blocking call may take: the layer's own, cut to what the deadline leaves;
    ``late`` raised when nothing is left."""
    left = deadline - clock()
    if left <= 0:
        raise late("the webhook's deadline has passed")
    return left if timeout is None else min(timeout, left)


class DeadlineStream(httpcore.NetworkStream):
    """A stream whose every blocking call ends by ``deadline`` (a ``clock()`` time).

    The socket layer applies each timeout to a single call (a read that gets one byte starts
    over); cutting each call's timeout to the time left is what turns those into one deadline
    for the whole exchange."""

    def __init__(
        self, inner: httpcore.NetworkStream, deadline: float, clock: Callable[[], float]
    ) -> None:
        self._inner = inner
        self._deadline = deadline
        self._clock = clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        left = remaining(self._deadline, timeout, self._clock, httpcore.ReadTimeout)
        return self._inner.read(max_bytes, timeout=left)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        left = remaining(self._deadline, timeout, self._clock, httpcore.WriteTimeout)
        self._inner.write(buffer, timeout=left)

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        left = remaining(self._deadline, timeout, self._clock, httpcore.ConnectTimeout)
        try:
            tls = self._inner.start_tls(ssl_context, server_hostname=server_hostname, timeout=left)
        except BaseException:
            self._inner.close()
            raise
        return DeadlineStream(tls, self._deadline, self._clock)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class PinnedBackend(httpcore.NetworkBackend):
    """Connects to ``addresses`` (in order, the first that answers) whatever host the URL names.

    The URL's name still goes into the Host header and TLS (SNI and the certificate check):
    httpcore takes both from the request, not from here."""

    def __init__(
        self,
        addresses: Sequence[str],
        deadline: float,
        inner: httpcore.NetworkBackend | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not addresses:
            raise ValueError("a pinned connection needs at least one address")
        self._addresses = tuple(addresses)
        self._deadline = deadline
        self._inner = inner if inner is not None else httpcore.SyncBackend()
        self._clock = clock

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        options = list(socket_options or ())
        failure: httpcore.ConnectError | None = None
        for address in self._addresses:
            left = remaining(self._deadline, timeout, self._clock, httpcore.ConnectTimeout)
            try:
                stream = self._inner.connect_tcp(
                    address,
                    port,
                    timeout=left,
                    local_address=local_address,
                    socket_options=options,
                )
            except httpcore.ConnectError as exc:
                failure = exc
                continue
            return DeadlineStream(stream, self._deadline, self._clock)
        assert failure is not None
        raise failure

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.UnsupportedProtocol("webhooks go over TCP only")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)
