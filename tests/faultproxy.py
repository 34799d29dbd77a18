"""A TCP proxy that can fail on command: pass bytes through, refuse connections, or hang.

Put in front of the S3 server to play an object store that times out or refuses for a while.
"""

from __future__ import annotations

import contextlib
import select
import socket
import struct
import threading
from typing import Literal

Mode = Literal["pass", "refuse", "hang"]


class FaultProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.mode: Mode = "pass"
        self.connections = 0
        self.failed = 0  # connections refused or left hanging
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        self._open: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def set(self, mode: Mode) -> None:
        self.mode = mode
        if mode != "hang":
            self._drop_hanging()

    def close(self) -> None:
        self._stop.set()
        self._listener.close()
        self._drop_hanging()

    def _drop_hanging(self) -> None:
        for conn in self._open:
            with contextlib.suppress(OSError):
                conn.close()
        self._open.clear()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            if self.mode == "refuse":
                self.failed += 1
                # RST at once: the client sees "connection reset/refused"
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                conn.close()
            elif self.mode == "hang":
                self.failed += 1
                self._open.append(conn)  # read nothing, answer nothing
            else:
                threading.Thread(target=self._pipe, args=(conn,), daemon=True).start()

    def _pipe(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.target, timeout=10)
        except OSError:
            client.close()
            return
        sockets = [client, upstream]
        try:
            while not self._stop.is_set():
                ready, _, _ = select.select(sockets, [], [], 0.5)
                if self.mode == "refuse":  # an outage cuts live connections too
                    return
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    (upstream if sock is client else client).sendall(data)
        except OSError:
            return
        finally:
            client.close()
            upstream.close()
