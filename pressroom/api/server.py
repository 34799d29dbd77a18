"""The HTTP connection guard uvicorn lacks: a deadline for request headers.

uvicorn closes idle keep-alive connections, but a client that sends half a request line or
half its headers and then waits holds the connection (and a slot of the server's) forever.
Here every connection must finish its request headers within ``header_timeout_s`` of opening,
and again within that time of each response it was sent. The body has its own limits where it
is read (``api.uploads``): a pause between chunks and a deadline for the whole upload.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol


class HeaderDeadlineProtocol(H11Protocol):
    header_timeout_s = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            # still waiting for the rest of a request line or headers: let the connection go
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:
            self._disarm()  # the headers are in; the body's own limits take over

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.their_state is h11.IDLE:  # kept alive: the next request's headers are due
            self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)


def protocol_with_header_timeout(seconds: float) -> type[HeaderDeadlineProtocol]:
    """A protocol class for ``uvicorn.Config(http=...)`` with this header deadline."""
    return type("HeaderDeadline", (HeaderDeadlineProtocol,), {"header_timeout_s": seconds})
