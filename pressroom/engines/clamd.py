"""ClamAV's daemon as the ``Scanner`` (``scanning.py``): ``zINSTREAM`` over its Unix socket or
its TCP socket, the source sent in length-prefixed chunks as it is read (never copied), and
``zPING`` for readiness. clamd runs as its own process (Debian ``clamav-daemon``); nothing of
ClamAV is linked here.

Fail closed: only ``stream: OK`` is a pass. ``stream: <signature> FOUND`` is a finding, and
``INSTREAM size limit exceeded`` (the stream is longer than clamd's StreamMaxLength) a refusal
of its own; a socket that cannot be reached, a connection closed before an answer, an answer
without the NUL every z-command's answer ends with, or any other answer is
``ScannerUnavailable``. Socket errors are translated here, once.

The time rule (``timeout_s``): the connect, each chunk's send (a chunk is at most
MAX_CHUNK bytes; Python's ``sendall`` bounds the whole call, not each write) and the whole answer
after the last chunk each have ``timeout_s``. The answer's is one deadline, never renewed by a
byte: a clamd (or something posing as one) trickling its answer a byte at a time is
unavailable once it passes. The send is not bounded as a whole — a stream of N chunks may take
N times ``timeout_s`` — since clamd reads as fast as it can and a 256 MiB stream at a slow
link's honest rate would pass any fixed total."""

from __future__ import annotations

import re
import socket
import struct
import time
from collections.abc import Iterable
from dataclasses import dataclass

from pressroom.errors import ScannerUnavailable
from pressroom.scanning import Clean, Found, TooLong, Verdict

MAX_REPLY = 4096  # clamd's answers are one short line; more is not clamd
MAX_CHUNK = 1 << 20  # a chunk larger than the caller's is cut to this (the length is 4 bytes)

# what clamd says, each whole (the z-commands end their answer with a NUL)
_OK = "stream: OK"
_FOUND = re.compile(r"stream: ([\x21-\x7e][\x20-\x7e]{0,199}) FOUND")
_TOO_LONG = "INSTREAM size limit exceeded. ERROR"


def parse_reply(raw: bytes) -> Verdict:
    """The verdict in one of clamd's INSTREAM answers; anything else is ScannerUnavailable
    (never a pass)."""
    if not raw.endswith(b"\0"):  # cut short, or not clamd: a z-command's answer ends so
        raise ScannerUnavailable("clamd's answer did not end as its answers end")
    text = raw[:-1].rstrip(b"\n").decode("ascii", "replace")
    if text == _OK:
        return Clean()
    found = _FOUND.fullmatch(text)
    if found is not None:
        return Found(found.group(1))
    if text == _TOO_LONG:
        return TooLong()
    raise ScannerUnavailable("clamd gave an answer that is not a verdict")


@dataclass(frozen=True, slots=True)
class ClamdScanner:
    """clamd at ``address``: a Unix socket path, or ``host:port``."""

    address: str
    timeout_s: float = 60.0

    def _connect(self, timeout_s: float | None = None) -> socket.socket:
        timeout = self.timeout_s if timeout_s is None else timeout_s
        try:
            if "/" in self.address:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.settimeout(timeout)
                try:
                    sock.connect(self.address)
                except BaseException:
                    sock.close()
                    raise
                return sock
            host, _, port = self.address.rpartition(":")
            sock = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
            sock.settimeout(timeout)
            return sock
        except OSError as exc:
            raise ScannerUnavailable(f"clamd cannot be reached ({_why(exc)})") from None

    def ping(self, timeout_s: float | None = None) -> None:
        timeout = self.timeout_s if timeout_s is None else timeout_s
        with self._connect(timeout) as sock:
            try:
                sock.sendall(b"zPING\0")
                answer = _read_reply(sock, time.monotonic() + timeout)
            except OSError as exc:
                raise ScannerUnavailable(f"clamd did not answer PING ({_why(exc)})") from None
        if answer != b"PONG\0":
            raise ScannerUnavailable("clamd answered PING with something other than PONG")

    def scan(self, chunks: Iterable[bytes], timeout_s: float | None = None) -> Verdict:
        """``timeout_s``: at most this instead of the scanner's own (never more)."""
        timeout = self.timeout_s if timeout_s is None else min(self.timeout_s, timeout_s)
        with self._connect(timeout) as sock:
            try:
                sock.sendall(b"zINSTREAM\0")
                for chunk in chunks:
                    for start in range(0, len(chunk), MAX_CHUNK):
                        piece = chunk[start : start + MAX_CHUNK]
                        sock.sendall(struct.pack(">I", len(piece)) + piece)
                sock.sendall(struct.pack(">I", 0))
            except (BrokenPipeError, ConnectionResetError) as exc:
                # clamd stops reading a stream past StreamMaxLength and closes after saying
                # so: its answer may still be waiting to be read
                return _late_answer(sock, exc, time.monotonic() + timeout)
            except OSError as exc:
                raise ScannerUnavailable(f"clamd stopped taking the stream ({_why(exc)})") from None
            try:
                return parse_reply(_read_reply(sock, time.monotonic() + timeout))
            except OSError as exc:
                raise ScannerUnavailable(f"clamd gave no verdict ({_why(exc)})") from None


def _late_answer(sock: socket.socket, cause: OSError, deadline: float) -> Verdict:
    """The answer of a clamd that closed while the stream was sent: only its size limit is a
    verdict (a refusal); a clamd that went away is unavailable."""
    try:
        answer = _read_reply(sock, deadline)
    except OSError:
        answer = b""
    if answer == _TOO_LONG.encode() + b"\0":
        return TooLong()
    raise ScannerUnavailable(f"clamd stopped taking the stream ({_why(cause)})")


def _read_reply(sock: socket.socket, deadline: float) -> bytes:
    """One answer, up to its NUL (or the connection's end), whole by ``deadline`` (a
    ``time.monotonic`` instant: each read waits only for what is left of it, so an answer
    trickled a byte at a time cannot hold the scan past it: ``TimeoutError``); a closed
    connection before any byte is ScannerUnavailable, as is one longer than clamd ever
    answers."""
    reply = b""
    while not reply.endswith(b"\0"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the answer's deadline passed")
        sock.settimeout(left)
        block = sock.recv(MAX_REPLY)
        if not block:
            break
        reply += block
        if len(reply) > MAX_REPLY:
            raise ScannerUnavailable("clamd's answer is longer than any it gives")
    if not reply:
        raise ScannerUnavailable("clamd closed the connection without a verdict")
    return reply


def _why(exc: OSError) -> str:
    """A socket error in a few words (no address or path: those are the operator's, but a
    job's reason is shown to its tenant)."""
    if isinstance(exc, TimeoutError | socket.timeout):
        return "timed out"
    return exc.strerror or type(exc).__name__
