"""Slow clients against the real server (uvicorn with Pressroom's connection guard): a half-sent
header and a stalled upload are cut off, the stalled upload's scratch is removed, and the
service keeps answering everyone else meanwhile."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Server, launch_serve, poll, stop


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[Server]:
    srv = launch_serve(
        tmp_path,
        workers=0,
        extra_env={
            "PRESSROOM_HEADER_TIMEOUT_SECONDS": "1",
            "PRESSROOM_BODY_TIMEOUT_SECONDS": "1",
        },
    )
    yield srv
    srv.client.close()
    stop(srv.process)


def _connect(server: Server) -> socket.socket:
    """A raw connection (use it in ``with``: a socket left open warns in a later test)."""
    host, port = server.url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10)


def _closed_within(sock: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing, or None if it was still open after ``seconds``.
    A reset counts as closed: a server that closes with bytes of ours unread sends one."""
    sock.settimeout(seconds)
    got = b""
    try:
        while chunk := sock.recv(4096):
            got += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        return got
    return got


def test_a_half_sent_header_is_closed_and_others_are_served(guarded: Server) -> None:
    with _connect(guarded) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        assert guarded.client.get("/healthz").status_code == 200  # meanwhile, others get answers
        assert _closed_within(sock, 8) == b""


def test_a_kept_alive_connection_must_send_its_next_headers_in_time(guarded: Server) -> None:
    with _connect(guarded) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(0.3)
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHo")  # the second request stalls mid-header
        got = _closed_within(sock, 8)
        assert got is not None and got.startswith(b"HTTP/1.1 200") and got.count(b"HTTP/1.1") == 1


def test_a_body_trickled_after_an_early_answer_is_cut_off(guarded: Server) -> None:
    """No key: the API answers 401 before reading the body. A client that goes on trickling
    that body (one byte a second) must not keep the connection."""
    with _connect(guarded) as sock:
        sock.sendall(b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
        sock.settimeout(5)
        assert sock.recv(4096).startswith(b"HTTP/1.1 401")
        closed = False
        for _ in range(15):  # well past the 1 s deadline; each byte would restart a naive timer
            try:
                sock.sendall(b"x")
            except OSError:
                closed = True
                break
            if _closed_within(sock, 1.0) is not None:
                closed = True
                break
    assert closed


def test_the_request_after_a_drained_body_gets_its_own_header_deadline(guarded: Server) -> None:
    with _connect(guarded) as sock:
        sock.sendall(b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n")
        sock.settimeout(5)
        assert sock.recv(4096).startswith(b"HTTP/1.1 401")
        sock.sendall(b"12345GET /healthz HTTP/1.1\r\nHo")  # the body, then half a request
        assert _closed_within(sock, 8) is not None


def test_a_stalled_upload_is_answered_408_and_its_scratch_removed(guarded: Server) -> None:
    key = guarded.client.headers["Authorization"]
    boundary = "slowboundary"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n'
        "Content-Type: application/pdf\r\n\r\n%PDF-1.7\n"
    ).encode()
    with _connect(guarded) as sock:
        sock.sendall(
            b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\n"
            + f"Authorization: {key}\r\n".encode()
            + f"Content-Type: multipart/form-data; boundary={boundary}\r\n".encode()
            + b"Content-Length: 100000\r\n\r\n"
            + head
        )
        # the upload's scratch exists while it streams, then the stall ends it
        got = _closed_within(sock, 10) or b""
    assert got.startswith(b"HTTP/1.1 408"), got[:200]
    assert b"REQUEST_TIMEOUT" in got
    assert poll(lambda: list(guarded.scratch_dir.iterdir()) == [], 5)
    assert guarded.client.get("/v1/review").status_code == 200
