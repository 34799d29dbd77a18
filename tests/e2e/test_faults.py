"""Scale-out under faults: PostgreSQL + S3 (moto), an API host and separate worker hosts.

Each test asserts that every accepted job reaches a terminal state, that exactly one artifact
object exists per job, that no job is left running after its lease, and that no scratch is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from pressroom.synth import image_pdf, save_png
from tests.e2e.conftest import PRESSROOM, Server, launch_serve, poll, stop
from tests.faultproxy import FaultProxy
from tests.helpers import small_scan
from tests.s3server import S3Server

pytestmark = pytest.mark.e2e
TERMINAL = ("complete", "rejected", "review")


@dataclass
class Cluster:
    root: Path
    pg_url: str
    s3: S3Server
    bucket: str
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    clients: list[httpx.Client] = field(default_factory=list)
    scratch_dirs: list[Path] = field(default_factory=list)

    def env(self, endpoint: str | None = None) -> dict[str, str]:
        return {
            **self.s3.env(self.bucket, endpoint),
            "PRESSROOM_DATABASE_URL": self.pg_url,
            "PRESSROOM_SIGNING_KEY": "shared-by-every-host-of-this-cluster",
            "PRESSROOM_LEASE_SECONDS": "6",
            "PRESSROOM_MAX_ATTEMPTS": "8",
            "PRESSROOM_STORAGE_TIMEOUT_SECONDS": "2",
        }

    def api(
        self, *, endpoint: str | None = None, workers: int = 0, port: int | None = None
    ) -> Server:
        folder = self.root / "api"
        folder.mkdir(exist_ok=True)
        server = launch_serve(
            folder, extra_env=self.env(endpoint), workers=workers, interactive=0, port=port
        )
        self.processes.append(server.process)
        self.clients.append(server.client)
        self.scratch_dirs.append(server.scratch_dir)
        return server

    def host(
        self, name: str, concurrency: int, *, endpoint: str | None = None
    ) -> subprocess.Popen[bytes]:
        """A worker "host": `pressroom worker` with its own data and scratch folders."""
        folder = self.root / name
        (folder / "scratch").mkdir(parents=True)
        env = {
            **os.environ,
            **self.env(endpoint),
            "PRESSROOM_DATA_DIR": str(folder / "data"),
            "PRESSROOM_SCRATCH_DIR": str(folder / "scratch"),
        }
        with (folder / "worker.log").open("ab") as log:
            process = subprocess.Popen(
                [str(PRESSROOM), "worker", "--lane", "bulk", "--concurrency", str(concurrency)],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.processes.append(process)
        self.scratch_dirs.append(folder / "scratch")
        return process

    def states(self) -> dict[str, str]:
        with psycopg.connect(self.pg_url) as conn:
            return {str(i): str(s) for i, s in conn.execute("select id, state from jobs")}

    def jobs(self) -> list[dict[str, Any]]:
        with psycopg.connect(self.pg_url) as conn:
            cur = conn.execute("select id, state, attempts, reason, lease_owner from jobs")
            names = [c.name for c in cur.description or ()]
            return [dict(zip(names, row, strict=True)) for row in cur]

    def wait_terminal(self, expected: int, timeout: float) -> list[dict[str, Any]]:
        def done() -> bool:
            try:
                states = self.states()
            except psycopg.OperationalError:
                return False  # the database is restarting
            return len(states) == expected and all(s in TERMINAL for s in states.values())

        if not poll(done, timeout, every=0.5):
            raise AssertionError(f"jobs not terminal in {timeout} s: {self.jobs()}")
        return self.jobs()

    def artifacts(self) -> dict[str, int]:
        """Artifact objects per job id, counted in the bucket itself."""
        counts: dict[str, int] = {}
        pages = (
            self.s3.client()
            .get_paginator("list_objects_v2")
            .paginate(Bucket=self.bucket, Prefix="pressroom/artifacts/")
        )
        for page in pages:
            for item in page.get("Contents", []):
                job_id = item["Key"].split("/")[3]
                counts[job_id] = counts.get(job_id, 0) + 1
        return counts

    def assert_clean(self, jobs: list[dict[str, Any]]) -> None:
        assert all(j["state"] == "complete" for j in jobs), jobs
        assert all(j["lease_owner"] is None for j in jobs)
        assert self.artifacts() == {j["id"]: 1 for j in jobs}
        for folder in self.scratch_dirs:  # scratch is removed once every process has stopped
            poll(lambda f=folder: not any(f.iterdir()), 10)
            assert list(folder.iterdir()) == [], folder


@pytest.fixture
def cluster(tmp_path: Path, pg_url: str, s3_server: S3Server) -> Iterator[Cluster]:
    made = Cluster(tmp_path, pg_url, s3_server, s3_server.new_bucket())
    yield made
    for process in made.processes:
        stop(process)
    for client in made.clients:
        client.close()


def one_page(tmp_path: Path, seed: int) -> bytes:
    return save_png(
        small_scan(seed=seed, lines=3).image, tmp_path / f"p{seed}.png", 300
    ).read_bytes()


def submit(api: Server, data: bytes, **headers: str) -> str:
    response = api.client.post("/v1/jobs", files={"file": ("x", data)}, headers=headers)
    assert response.status_code == 202, response.text
    return str(response.json()["id"])


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"resource_tracker" not in cmdline:
                found.append(int(entry.name))
    return found


def test_two_worker_hosts_race_for_one_queue(cluster: Cluster, tmp_path: Path) -> None:
    api = cluster.api()
    ids = [submit(api, one_page(tmp_path, seed)) for seed in range(8)]
    hosts = [cluster.host("host-a", 2), cluster.host("host-b", 2)]
    jobs = cluster.wait_terminal(len(ids), 240)
    for host in hosts:
        stop(host)
    cluster.assert_clean(jobs)
    assert all(j["attempts"] == 1 for j in jobs)  # no job was claimed twice
    worked = [
        (cluster.root / h / "worker.log").read_text().count('"job complete"')
        for h in ("host-a", "host-b")
    ]
    assert sum(worked) == len(ids) and min(worked) >= 1, worked


def test_worker_killed_mid_job_on_postgres_and_s3(cluster: Cluster, tmp_path: Path) -> None:
    api = cluster.api()
    pages = [small_scan(seed=s, lines=6).image for s in range(70, 80)]
    job_id = submit(api, image_pdf(pages, tmp_path / "ten.pdf", 300).read_bytes())
    host = cluster.host("host-a", 1)
    assert poll(lambda: cluster.states().get(job_id) == "running", 60)
    time.sleep(1.5)
    victims = children(host.pid)
    assert victims
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    jobs = cluster.wait_terminal(1, 240)
    stop(host)
    cluster.assert_clean(jobs)
    assert jobs[0]["attempts"] >= 2


def test_postgres_restarted_mid_run(cluster: Cluster, tmp_path: Path) -> None:
    api = cluster.api()
    ids = [submit(api, one_page(tmp_path, seed)) for seed in range(10, 16)]
    host = cluster.host("host-a", 2)
    assert poll(lambda: "running" in cluster.states().values(), 60)
    version = subprocess.run(
        ["pg_lsclusters", "--no-header"], capture_output=True, text=True, check=True
    ).stdout.split()[0]
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"], check=True
    )
    jobs = cluster.wait_terminal(len(ids), 300)
    stop(host)
    cluster.assert_clean(jobs)
    # the API came through it too
    assert api.client.get(f"/v1/jobs/{ids[0]}").json()["state"] == "complete"


def test_object_storage_refusing_then_timing_out_for_a_while(
    cluster: Cluster, tmp_path: Path
) -> None:
    target = cluster.s3.url.rsplit(":", 1)
    proxy = FaultProxy("127.0.0.1", int(target[1]))
    try:
        api = cluster.api()  # uploads go straight to the store
        ids = [submit(api, one_page(tmp_path, seed)) for seed in range(20, 24)]
        proxy.set("refuse")
        host = cluster.host("host-a", 2, endpoint=proxy.url)  # workers reach it via the proxy
        assert poll(lambda: proxy.failed >= 2, 30)
        time.sleep(4)
        proxy.set("hang")
        time.sleep(6)
        proxy.set("pass")
        jobs = cluster.wait_terminal(len(ids), 300)
        stop(host)
        cluster.assert_clean(jobs)
        assert sum(j["attempts"] for j in jobs) > len(ids)  # the outage cost attempts, not jobs
        log = (cluster.root / "host-a" / "worker.log").read_text()
        assert "STORAGE_UNAVAILABLE" in log
    finally:
        proxy.close()


def test_api_restarted_during_an_upload_one_job_per_idempotency_key(
    cluster: Cluster, tmp_path: Path
) -> None:
    api = cluster.api()
    port = int(api.url.rsplit(":", 1)[1])
    key = api.client.headers["Authorization"]
    body = one_page(tmp_path, 30)
    headers = {"Authorization": key, "Idempotency-Key": "reprint-2026-11-29-0001"}
    sent = threading.Event()

    def slow_multipart() -> Iterator[bytes]:
        boundary = b"--pressroom-boundary"
        yield boundary + b'\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\n'
        for i in range(0, len(body), 4096):
            yield body[i : i + 4096]
            sent.set()
            time.sleep(0.05)
        yield b"\r\n" + boundary + b"--\r\n"

    def cut_off() -> None:
        sent.wait(10)
        time.sleep(0.3)
        api.process.kill()  # the API host dies mid-upload, its worker-less serve with it

    killer = threading.Thread(target=cut_off)
    killer.start()
    with pytest.raises(httpx.TransportError):
        httpx.post(
            f"{api.url}/v1/jobs",
            content=slow_multipart(),
            headers={**headers, "Content-Type": "multipart/form-data; boundary=pressroom-boundary"},
            timeout=30,
        )
    killer.join()
    api.process.wait()
    assert cluster.states() == {}  # nothing half-accepted
    again = cluster.api(port=port)  # the same host comes back
    first = httpx.post(f"{again.url}/v1/jobs", files={"file": ("x", body)}, headers=headers)
    replay = httpx.post(f"{again.url}/v1/jobs", files={"file": ("x", body)}, headers=headers)
    assert first.status_code == 202 and replay.json()["id"] == first.json()["id"]
    host = cluster.host("host-a", 1)
    jobs = cluster.wait_terminal(1, 120)
    stop(host)
    stop(again.process)
    cluster.assert_clean(jobs)
