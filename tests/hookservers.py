"""Webhook endpoints for tests and benches: one that answers, one that trickles (a tarpit), one
whose response never ends, and a TLS one that records the name the client asked for."""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, HTTPServer, ThreadingHTTPServer
from typing import Any


class _Listener:
    """A loopback TCP listener; each connection handled by ``handle`` in its own thread."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}/hook"
        self.closed = threading.Event()
        self.lock = threading.Lock()
        self.connections = 0  # accepted so far
        self.open = 0  # still connected now
        self._socks: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
                self.open += 1
                self._socks.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            self.handle(conn)
        except OSError:
            pass
        finally:
            with self.lock:
                self.open -= 1
            conn.close()

    def handle(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.closed.set()
        self.sock.close()
        with self.lock:
            for conn in self._socks:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> _Listener:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _read_request(conn: socket.socket) -> bytes:
    """The request head and as much body as arrives within a moment."""
    data = b""
    conn.settimeout(5)
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    conn.settimeout(None)
    return data


class Tarpit(_Listener):
    """Reads the request, then answers one byte every ``every`` seconds, forever: a status line
    and headers that never end. Stops when the client hangs up or the tarpit is closed."""

    def __init__(self, every: float = 1.0) -> None:
        self.every = every
        super().__init__()

    def handle(self, conn: socket.socket) -> None:
        _read_request(conn)
        head = b"HTTP/1.1 200 OK\r\n"
        filler = b"X-Slow: " + b"z" * 64 + b"\r\n"
        n = 0
        while not self.closed.is_set():
            readable, _, _ = select.select([conn], [], [], self.every)
            if readable and not conn.recv(4096):
                return  # the client hung up
            stream = head if n < len(head) else filler
            index = n if n < len(head) else (n - len(head)) % len(filler)
            conn.sendall(stream[index : index + 1])
            n += 1


class EndlessBody(_Listener):
    """Answers 200 at once, then a body that never ends, as fast as the client reads it."""

    def __init__(self) -> None:
        self.sent = 0
        super().__init__()

    def handle(self, conn: socket.socket) -> None:
        _read_request(conn)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n")
        chunk = b"x" * 65536
        while not self.closed.is_set():
            conn.sendall(chunk)
            self.sent += len(chunk)


@dataclass
class Receiver:
    """An HTTP endpoint that records every request and answers ``status``."""

    status: int = 200
    tls: ssl.SSLContext | None = None
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    server_names: list[str | None] = field(default_factory=list)  # SNI, with ``tls``

    def __post_init__(self) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                outer.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(outer.status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.port = int(self.server.server_port)
        if self.tls is not None:
            self.tls.sni_callback = lambda _sock, name, _ctx: self.server_names.append(name)
            self.server.socket = self.tls.wrap_socket(self.server.socket, server_side=True)
        scheme = "https" if self.tls is not None else "http"
        self.url = f"{scheme}://127.0.0.1:{self.port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextlib.contextmanager
def receiving(status: int = 200, tls: ssl.SSLContext | None = None) -> Iterator[Receiver]:
    receiver = Receiver(status, tls)
    try:
        yield receiver
    finally:
        receiver.close()


def wait_until(condition: Any, timeout: float, every: float = 0.05) -> bool:
    """Check ``condition`` until it holds or ``timeout`` seconds pass (a bound, not a claim)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(every)
    return bool(condition())


@contextlib.contextmanager
def http_serving(handler: type[BaseHTTPRequestHandler], path: str = "/") -> Iterator[str]:
    """``handler`` behind a threading HTTP server on a free loopback port: its URL (with
    ``path``) while the block runs; shut down and closed after."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{path}"
    finally:
        server.shutdown()
        server.server_close()
