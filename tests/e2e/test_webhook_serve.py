"""Webhooks as the service delivers them: `serve` (also with `--workers 0`) and `worker` each run a
delivery pool of their own, so a tarpit endpoint never holds the worker that runs the next job."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pressroom.jobs.model import Lane
from pressroom.service import Services, open_services
from pressroom.settings import Settings
from pressroom.synth import text_pdf
from pressroom.testing import FakeOcrEngine
from pressroom.worker.runner import JobRunner
from tests.e2e.conftest import PRESSROOM, launch_serve, stop
from tests.hookservers import Tarpit, receiving, wait_until

pytestmark = pytest.mark.e2e

HOOKS_ENV = {
    "PRESSROOM_WEBHOOK_ALLOW_PRIVATE": "1",  # the endpoints here are on loopback
    "PRESSROOM_WEBHOOK_DEADLINE_SECONDS": "45",  # longer than the test looks: still connected
}


@pytest.fixture
def tarpit() -> Iterator[Tarpit]:
    with Tarpit(every=1.0) as pit:
        yield pit


def _document(tmp_path: Path, name: str) -> bytes:
    return text_pdf([["Quarterly statement", name]], tmp_path / f"{name}.pdf").read_bytes()


def test_the_next_job_completes_while_a_tarpit_webhook_is_still_connected(
    tmp_path: Path, tarpit: Tarpit
) -> None:
    """One bulk worker, no interactive one: before, the only worker sent the webhook itself
    and the next job waited as long as the tarpit kept trickling."""
    server = launch_serve(tmp_path, workers=1, interactive=0, extra_env=HOOKS_ENV)
    try:
        first = server.client.post(
            "/v1/jobs",
            files={"file": ("a.pdf", _document(tmp_path, "first"))},
            data={"webhook_url": tarpit.url},
        ).json()["id"]
        assert wait_until(lambda: tarpit.open == 1, 120), server.wait_for(first, {"complete"})
        second = server.client.post(
            "/v1/jobs", files={"file": ("b.pdf", _document(tmp_path, "second"))}
        ).json()["id"]
        done = server.wait_for(second, {"complete", "rejected", "review"}, timeout=60)
        assert done["state"] == "complete", done
        assert tarpit.open == 1 and tarpit.connections == 1  # still trickling, sent once
        assert server.client.get("/healthz").status_code == 200
    finally:
        server.client.close()
        tarpit.close()
        stop(server.process)


def _services_beside(data_dir: Path, scratch: Path) -> Services:
    return open_services(Settings(data_dir=data_dir, scratch_dir=scratch), migrate=False)


def test_serve_without_workers_still_delivers_webhooks(tmp_path: Path) -> None:
    server = launch_serve(tmp_path, workers=0, extra_env=HOOKS_ENV)
    try:
        with receiving() as receiver:
            job_id = server.client.post(
                "/v1/jobs",
                files={"file": ("a.pdf", _document(tmp_path, "alone"))},
                data={"webhook_url": receiver.url},
            ).json()["id"]
            # the job runs elsewhere (here, in this process); serve sends its webhook
            services = _services_beside(server.data_dir, server.scratch_dir)
            JobRunner(services, FakeOcrEngine(), "elsewhere").run_next((Lane.BULK,))
            assert server.wait_for(job_id, {"complete"}, timeout=30)["state"] == "complete"
            assert wait_until(lambda: len(receiver.received) == 1, 30)
            assert receiver.received[0][0]["webhook-id"].startswith("msg_")
            services.store.db.engine.dispose()
    finally:
        server.client.close()
        stop(server.process)


def test_a_worker_command_delivers_webhooks(tmp_path: Path) -> None:
    data, scratch = tmp_path / "data", tmp_path / "scratch"
    scratch.mkdir()
    env = {
        **os.environ,
        **HOOKS_ENV,
        "PRESSROOM_DATA_DIR": str(data),
        "PRESSROOM_SCRATCH_DIR": str(scratch),
    }
    settings = Settings(data_dir=data, scratch_dir=scratch, webhook_allow_private=True)
    services = open_services(settings)  # migrates the store
    key = services.store.tenancy.create_key("acme", now=services.clock())
    from pressroom.app import create_app

    api = TestClient(create_app(services), client=("127.0.0.1", 50000))
    log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen(
        [str(PRESSROOM), "worker", "--lane", "bulk", "--concurrency", "1"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        with receiving() as receiver:
            response = api.post(
                "/v1/jobs",
                headers={"Authorization": f"Bearer {key}"},
                files={"file": ("a.pdf", _document(tmp_path, "worked"))},
                data={"webhook_url": receiver.url},
            )
            assert response.status_code == 202, response.text
            assert wait_until(lambda: len(receiver.received) == 1, 120), (
                tmp_path / "worker.log"
            ).read_text()
    finally:
        stop(worker)
        log.close()
        services.store.db.engine.dispose()
