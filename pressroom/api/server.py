"""The HTTP connection guard uvicorn lacks: deadlines on whatever the server waits for from the
client.

uvicorn closes idle keep-alive connections, but a client that sends half a request line or half
its headers and then waits — or that trickles a body the app already answered without reading
(a 401, a 413) — holds the connection, and a slot of the server's, forever. Here one timer per
connection watches what the server is waiting for:

- request headers (a new connection, or the next request on a kept-alive one): they must be
  complete within ``header_timeout_s``;
- the rest of a body the app answered early: it must be drained within ``header_timeout_s`` too
  (then the next request's headers get their own deadline);
- a body the app is reading: it must be complete within ``body_deadline_s``; uploads also
  refuse a pause between chunks (``api.uploads``).

The timer runs from when the wait began and is not restarted by each byte: a trickle cannot
stretch it. When it fires while the connection still waits for the same thing, the connection
is closed.
"""

from __future__ import annotations

import asyncio
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEADERS, DRAIN, BODY = "headers", "drain", "body"


class DeadlineProtocol(H11Protocol):
    header_timeout_s = 10.0
    body_deadline_s = 600.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._timer: asyncio.TimerHandle | None = None
        self._waiting_for: str | None = None

    def _awaited(self) -> str | None:
        """What the server waits for from the client now, if anything."""
        theirs, ours = self.conn.their_state, self.conn.our_state
        if theirs is h11.IDLE:
            return HEADERS
        if theirs is h11.SEND_BODY:
            return DRAIN if ours in (h11.DONE, h11.MUST_CLOSE) else BODY
        return None  # the request is in: the app is working, the client owes nothing

    def _refresh(self) -> None:
        wanted = self._awaited()
        if wanted == self._waiting_for:
            return  # the same wait goes on: its deadline stands
        self._cancel()
        self._waiting_for = wanted
        if wanted is not None and not self.transport.is_closing():
            seconds = self.body_deadline_s if wanted == BODY else self.header_timeout_s
            self._timer = self.loop.call_later(seconds, self._expired, wanted)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _expired(self, waited_for: str) -> None:
        self._timer = None
        if self._awaited() == waited_for and not self.transport.is_closing():
            self.transport.close()  # the client kept us waiting too long: let it go
        else:
            self._waiting_for = None
            self._refresh()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._refresh()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._refresh()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._refresh()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)


def guarded_protocol(header_timeout_s: float, body_deadline_s: float) -> type[DeadlineProtocol]:
    """A protocol class for ``uvicorn.Config(http=...)`` with these deadlines."""
    return type(
        "GuardedH11",
        (DeadlineProtocol,),
        {"header_timeout_s": header_timeout_s, "body_deadline_s": body_deadline_s},
    )
