"""A real clamd for the scanner tests, started here as its own process with a config this module
writes: Foreground, its sockets and its signature database in a temporary folder. These
machines cannot download ClamAV's official database, so the database is ours: the EICAR test
string as a body signature (.ndb) and a hash signature (.hdb) of a fixture PDF. Readiness is
clamd's own PING, never a fixed sleep.

clamd comes from Debian's ``clamav-daemon`` (``make test-system-deps``). Missing, the tests
that need it fail under CI (``CI=true``) and are skipped, saying so, anywhere else."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pikepdf
import pytest
from pikepdf import Array, Dictionary, Name, String

from pressroom.engines.clamd import ClamdScanner
from pressroom.errors import ScannerUnavailable
from pressroom.synth import text_pdf

# the EICAR test file (https://www.eicar.org): every scanner's harmless "virus"
EICAR = rb"X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*"
EICAR_SIGNATURE = "Pressroom.Test.EICAR.UNOFFICIAL"  # clamd marks a database it cannot verify
HASHED_SIGNATURE = "Pressroom.Test.HashedPdf.UNOFFICIAL"
INSTALL_HINT = "clamd is not installed: run `make test-system-deps` (Debian clamav-daemon)"
START_S = 60.0  # a loaded machine; clamd with two signatures is up in well under a second
STOP_S = 30.0  # clamd ends on SIGTERM at once; this only bounds one that hangs


def require_clamd() -> str:
    """clamd's path; without it the test fails under CI and is skipped elsewhere."""
    found = shutil.which("clamd") or next(
        (p for p in ("/usr/sbin/clamd", "/usr/bin/clamd") if Path(p).is_file()), None
    )
    if found is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(INSTALL_HINT)
        pytest.skip(INSTALL_HINT)
    return found


def clean_pdf(path: Path, marker: str = "A clean letter") -> Path:
    return text_pdf([[marker, "Nothing here but words."]], path)


def hashed_pdf(path: Path) -> Path:
    """The PDF the database's hash signature names (its own words make its own hash)."""
    return text_pdf([["The fixture PDF whose hash the test database holds."]], path)


def embedded_eicar_pdf(path: Path, pages: list[list[str]] | None = None) -> Path:
    """A PDF (one page unless ``pages``) carrying the EICAR string as an embedded file
    (/EmbeddedFiles), its stream Flate-compressed: the string is nowhere in the file's bytes."""
    text_pdf(pages or [["An invoice with an attachment."]], path)
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        # built by hand: pikepdf's AttachedFileSpec puts /Params << /CheckSum … >> before
        # /Filter, and ClamAV 1.4's PDF parser then misses the filter (measured: a pass)
        stream = pdf.make_stream(
            zlib.compress(EICAR), Filter=Name.FlateDecode, Type=Name.EmbeddedFile
        )
        spec = pdf.make_indirect(
            Dictionary(Type=Name.Filespec, F=String("readme.txt"), EF=Dictionary(F=stream))
        )
        names = Array([String("readme.txt"), spec])
        pdf.Root.Names = Dictionary(EmbeddedFiles=Dictionary(Names=names))
        pdf.save(path, stream_decode_level=pikepdf.StreamDecodeLevel.none)
    data = path.read_bytes()
    assert EICAR not in data and b"/EmbeddedFiles" in data and b"/FlateDecode" in data
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Clamd:
    """One clamd process and where it listens."""

    process: subprocess.Popen[bytes]
    socket_path: Path
    port: int
    folder: Path

    @property
    def tcp(self) -> str:
        return f"127.0.0.1:{self.port}"

    def scanner(self, timeout_s: float = 30.0) -> ClamdScanner:
        return ClamdScanner(str(self.socket_path), timeout_s=timeout_s)

    def stop(self) -> None:
        """SIGTERM first, so clamd removes the copies of streams it keeps while it scans
        (in ``tmp/`` here: never the machine's /tmp); SIGKILL only if it does not end."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # one a test paused must hear the signal
            self.process.terminate()
            try:
                self.process.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process.wait()

    def log(self) -> str:
        path = self.folder / "clamd.log"
        return path.read_text(errors="replace") if path.exists() else ""


def write_database(folder: Path, hashed: Path) -> Path:
    """The two signatures, in a database folder of their own."""
    db = folder / "db"
    db.mkdir(parents=True, exist_ok=True)
    (db / "pressroom.ndb").write_text(f"Pressroom.Test.EICAR:0:*:{EICAR.hex()}\n")
    data = hashed.read_bytes()
    digest = hashlib.md5(data, usedforsecurity=False).hexdigest()
    (db / "pressroom.hdb").write_text(f"{digest}:{len(data)}:Pressroom.Test.HashedPdf\n")
    return db


def start_clamd(
    folder: Path, hashed: Path, *, stream_max: str = "64M", extra: Sequence[str] = ()
) -> Clamd:
    """clamd on a Unix socket and a TCP port in ``folder``, ready (it answered PING);
    ``extra``: more lines of its config (the bench's scan limits)."""
    binary = require_clamd()
    folder.mkdir(parents=True, exist_ok=True)
    db = write_database(folder, hashed)
    sock, port = folder / "clamd.sock", free_port()
    temporary = folder / "tmp"  # clamd's plaintext copy of each stream: the test's, not /tmp's
    temporary.mkdir(mode=0o700, exist_ok=True)
    config = folder / "clamd.conf"
    config.write_text(
        "\n".join(
            [
                "Foreground yes",
                f"LocalSocket {sock}",
                f"TCPSocket {port}",
                "TCPAddr 127.0.0.1",
                f"DatabaseDirectory {db}",
                f"TemporaryDirectory {temporary}",
                f"LogFile {folder / 'clamd.log'}",
                f"StreamMaxLength {stream_max}",
                "Bytecode no",
                # a file past the scan limits is a finding, never a silent pass
                "AlertExceedsMax yes",
                *extra,
                "",
            ]
        )
    )
    process = subprocess.Popen(
        [binary, "-c", str(config)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    clamd = Clamd(process, sock, port, folder)
    probe = ClamdScanner(str(sock), timeout_s=5.0)
    tcp_probe = ClamdScanner(clamd.tcp, timeout_s=5.0)
    end = time.monotonic() + START_S
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"clamd exited {process.returncode}:\n{clamd.log()}")
        try:
            probe.ping()
            tcp_probe.ping()
            return clamd
        except ScannerUnavailable:
            if time.monotonic() > end:
                clamd.stop()
                raise RuntimeError(f"clamd did not answer PING:\n{clamd.log()}") from None
            time.sleep(0.05)  # polling PING: the signal waited on is clamd's answer


class FakeClamd:
    """Something on a Unix socket posing as clamd, for the answers a real one never gives: it
    reads the command (and a stream's chunks), then sends ``answer`` — a byte every
    ``trickle_s`` when that is set — and closes. ``served`` is set once it has begun to
    answer."""

    def __init__(self, path: Path, answer: bytes, trickle_s: float = 0.0) -> None:
        self.path, self.answer, self.trickle_s = path, answer, trickle_s
        self.served = threading.Event()
        self.closing = threading.Event()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen(4)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closing.is_set():
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                command = b""
                while not command.endswith(b"\0"):
                    block = conn.recv(1)
                    if not block:
                        return
                    command += block
                if command == b"zINSTREAM\0":
                    while (size := struct.unpack(">I", _exactly(conn, 4))[0]) != 0:
                        _exactly(conn, size)
                self.served.set()
                if not self.trickle_s:
                    conn.sendall(self.answer)
                    return
                for byte in self.answer:
                    # the wait is the trickle itself (what is tested), never a test's sync
                    if self.closing.wait(self.trickle_s):
                        return
                    conn.sendall(bytes([byte]))
            except OSError:
                return

    def close(self) -> None:
        self.closing.set()
        self._server.close()


def _exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        block = conn.recv(min(size - len(data), 1 << 16))
        if not block:
            raise ConnectionResetError("closed mid-stream")
        data += block
    return data


class SwappingProxy:
    """A pass-through to a real clamd (the verdict is clamd's own) standing in for the owner
    of an input who rewrites it after its scan: when clamd's answer is ``stream: OK``, every
    file named ``name`` under ``root`` (hidden folders too: a hot folder's claimed file) is
    rewritten in place, the same inode, with ``replacement`` padded to the file's size (PDF
    comment bytes after its end) and its mtime put back, so nothing that watches a file's size
    or time sees it; then the answer is passed on. ``swapped`` counts the files rewritten."""

    def __init__(self, path: Path, clamd: Path, root: Path, name: str, replacement: bytes):
        self.path, self.clamd, self.root, self.name = path, clamd, root, name
        self.replacement = replacement
        self.swapped = 0
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen(4)
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as real:
            try:
                real.connect(str(self.clamd))
                threading.Thread(target=_pump, args=(conn, real), daemon=True).start()
                answer = b""
                while not answer.endswith(b"\0") and (block := real.recv(4096)):
                    answer += block
                if answer == b"stream: OK\0":
                    for folder, _dirs, names in os.walk(self.root):
                        if self.name in names:
                            victim = Path(folder) / self.name
                            was = victim.stat()
                            pad = was.st_size - len(self.replacement) - 2
                            assert pad >= 0, "the replacement must be smaller than the file"
                            with victim.open("r+b") as rewritten:
                                rewritten.write(self.replacement + b"%" + b"0" * pad + b"\n")
                            os.utime(victim, ns=(was.st_atime_ns, was.st_mtime_ns))
                            self.swapped += 1
                conn.sendall(answer)
            except OSError:
                return

    def close(self) -> None:
        self._server.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while block := source.recv(1 << 16):
            sink.sendall(block)
    except OSError:
        return
