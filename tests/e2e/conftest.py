"""`pressroom serve` as a subprocess, with a client that knows its key."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

PRESSROOM = Path(sys.executable).with_name("pressroom")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    url: str
    data_dir: Path
    scratch_dir: Path
    client: httpx.Client

    def worker_pids(self) -> list[int]:
        """The serve process's worker children (not multiprocessing's resource tracker)."""
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == self.process.pid and b"resource_tracker" not in cmdline:
                pids.append(int(entry.name))
        return pids

    def wait_for(self, job_id: str, states: set[str], timeout: float = 120) -> dict[str, object]:
        seen: dict[str, object] = {}

        def reached() -> bool:
            seen.update(self.client.get(f"/v1/jobs/{job_id}").json())
            return seen["state"] in states

        if not poll(reached, timeout):
            raise AssertionError(f"job {job_id} never reached {states}: {seen}")
        return seen


def poll(condition: Callable[[], bool], timeout: float, every: float = 0.2) -> bool:
    """Check ``condition`` until it holds or ``timeout`` seconds pass (a bound, not a claim)."""
    for _ in range(max(1, int(timeout / every))):
        if condition():
            return True
        time.sleep(every)
    return condition()


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def launch_serve(
    tmp_path: Path,
    *,
    name: str = "serve",
    extra_env: dict[str, str] | None = None,
    workers: int = 1,
    interactive: int = 1,
    port: int | None = None,
) -> Server:
    """``pressroom serve`` in its own data dir under ``tmp_path``, answering /healthz."""
    port = port or free_port()
    data = tmp_path / "data"
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "PRESSROOM_DATA_DIR": str(data),
        "PRESSROOM_SCRATCH_DIR": str(scratch),
        "PRESSROOM_LEASE_SECONDS": "6",
        "PRESSROOM_MAX_PAGES": "1000",
        **(extra_env or {}),
    }
    log_path = tmp_path / f"{name}.log"
    log = log_path.open("ab")
    process = subprocess.Popen(
        [
            str(PRESSROOM),
            "serve",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--interactive",
            str(interactive),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    log.close()
    url = f"http://127.0.0.1:{port}"
    if not poll(lambda: process.poll() is not None or _healthy(url), 60, every=0.2) or (
        process.poll() is not None
    ):
        process.kill()
        raise AssertionError(f"serve did not start: {log_path.read_text()}")
    key = (data / "api-key").read_text().strip()
    client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=30)
    return Server(process, url, data, scratch, client)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    srv = launch_serve(tmp_path)
    yield srv
    srv.client.close()
    stop(srv.process)
