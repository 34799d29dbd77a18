"""`pressroom serve`'s console (what `make run` shows): human lines on a terminal, where the
access log shows only failed requests so the summary stays in view; JSON lines for every
request when the log goes to a file or a pipe, or when asked (issue 43 item 7, review S10).
Neither carries what a client sent in a path."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import PRESSROOM, free_port, poll, stop

pytestmark = pytest.mark.e2e

PLANTED = "Jane-Doe-payslip"  # a path a client might send: it must never reach the log


def _start(
    tmp_path: Path, stderr: int, stdout: int, *extra: str
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "PRESSROOM_DATA_DIR": str(tmp_path / "data"),
        "PRESSROOM_SCRATCH_DIR": str(tmp_path / "scratch"),
    }
    process = subprocess.Popen(
        [str(PRESSROOM), "serve", "--port", str(port), "--workers", "0", *extra],
        stdout=stdout,
        stderr=stderr,
        env=env,
    )
    return process, f"http://127.0.0.1:{port}"


def _requests(url: str, data: Path) -> None:
    """Three that succeed, one that fails (a job that is not there, named with a name)."""
    key = (data / "api-key").read_text().strip()
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}) as client:
        for _ in range(3):
            assert client.get("/healthz").status_code == 200
        assert client.get(f"/v1/jobs/{PLANTED}").status_code == 404


class Terminal:
    """What a process wrote on a pty, read as it comes."""

    def __init__(self, leader: int) -> None:
        self.leader = leader
        self.text = ""

    def read_until(self, seen: Callable[[str], bool], timeout: float = 60) -> bool:
        deadline = time.monotonic() + timeout
        while not seen(self.text):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([self.leader], [], [], left)
            if not ready:
                return False
            try:
                chunk = os.read(self.leader, 65536)
            except OSError:  # the child closed its end
                return seen(self.text)
            if not chunk:
                return seen(self.text)
            self.text += chunk.decode("utf-8", "replace")
        return True


def _on_a_terminal(tmp_path: Path, *extra: str) -> str:
    leader, follower = pty.openpty()
    process, url = _start(tmp_path, follower, follower, *extra)
    os.close(follower)
    term = Terminal(leader)
    try:
        assert term.read_until(lambda t: "Pressroom " in t and " on http://" in t), term.text
        _requests(url, tmp_path / "data")
        assert term.read_until(lambda t: "404" in t, timeout=30), term.text
        process.send_signal(signal.SIGTERM)
        term.read_until(lambda _t: False, timeout=30)  # to its end: what it says as it stops
    finally:
        stop(process)
        os.close(leader)
    return term.text


def test_on_a_terminal_log_lines_are_for_a_person_and_only_failed_requests_show(
    tmp_path: Path,
) -> None:
    text = _on_a_terminal(tmp_path)
    lines = [line.strip() for line in text.replace("\r", "").splitlines() if line.strip()]
    assert not [line for line in lines if line.startswith("{")], text
    failed = [line for line in lines if "GET /v1/jobs/{job_id} 404" in line]
    assert len(failed) == 1, text
    assert "/healthz" not in text  # the successful requests stay off the console
    assert PLANTED not in text


def test_asked_for_json_on_a_terminal_every_request_is_a_json_line(tmp_path: Path) -> None:
    text = _on_a_terminal(tmp_path, "--log-format", "json")
    access = [
        json.loads(line)
        for line in text.replace("\r", "").splitlines()
        if line.startswith("{") and '"pressroom.access"' in line
    ]
    assert [(a["route"], a["status"]) for a in access] == [("/healthz", 200)] * 3 + [
        ("/v1/jobs/{job_id}", 404)
    ]
    assert PLANTED not in text


def test_logged_to_a_file_every_request_is_a_json_line(tmp_path: Path) -> None:
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        process, url = _start(tmp_path, log.fileno(), subprocess.DEVNULL)
    try:
        assert poll(lambda: (tmp_path / "data" / "api-key").exists() and _up(url), 60)
        _requests(url, tmp_path / "data")
        assert poll(lambda: "/v1/jobs/{job_id}" in log_path.read_text(), 30)
    finally:
        stop(process)
    text = log_path.read_text()
    access = [
        json.loads(line) for line in text.splitlines() if '"logger": "pressroom.access"' in line
    ]
    routes = [(a["route"], a["status"]) for a in access]
    assert routes.count(("/healthz", 200)) >= 3 and routes[-1] == ("/v1/jobs/{job_id}", 404)
    assert PLANTED not in text


def _up(url: str) -> bool:
    try:
        return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False
