"""moto's S3 server as a real HTTP endpoint for the tests (``moto_server``, a subprocess)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

CREDENTIALS = {
    "aws_access_key_id": "pressroom-test",
    "aws_secret_access_key": "pressroom-test-secret",
    "region_name": "us-east-1",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class S3Server:
    url: str
    _clients: dict[str, Any] = field(default_factory=dict)

    def client(self, endpoint: str | None = None) -> Any:
        """One client per endpoint for the whole session (closed with the server)."""
        from pressroom.storage.s3 import make_client

        where = endpoint or self.url
        if where not in self._clients:
            self._clients[where] = make_client(endpoint_url=where, **CREDENTIALS)
        return self._clients[where]

    def close_clients(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()

    def new_bucket(self) -> str:
        name = f"pressroom-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def env(self, bucket: str, endpoint: str | None = None) -> dict[str, str]:
        """What an operator would set for a process using this bucket."""
        return {
            "PRESSROOM_STORAGE_URL": f"s3://{bucket}/pressroom",
            "AWS_ENDPOINT_URL": endpoint or self.url,
            "AWS_ACCESS_KEY_ID": CREDENTIALS["aws_access_key_id"],
            "AWS_SECRET_ACCESS_KEY": CREDENTIALS["aws_secret_access_key"],
            "AWS_DEFAULT_REGION": CREDENTIALS["region_name"],
        }


@contextmanager
def moto_endpoint() -> Iterator[str]:
    """moto's server (every service it mocks on one port) as a subprocess; yields its URL once
    it answers, and stops it after."""
    port = free_port()
    server = Path(sys.executable).with_name("moto_server")
    process = subprocess.Popen(
        [str(server), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("moto_server did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(10)


@contextmanager
def running_s3() -> Iterator[S3Server]:
    with moto_endpoint() as url:
        server = S3Server(url)
        try:
            yield server
        finally:
            server.close_clients()
