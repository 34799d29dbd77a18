"""The artifact's digest names the template that built its bytes: the worker loads a job's
template once (``worker.context.JobRun``), so an in-place edit of the template between the
build and the publish cannot give the output a key that misdescribes it."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.jobs.model import JobState, Lane
from pressroom.redact.policy import RedactionPolicy
from pressroom.service import Services
from pressroom.storage import artifact_key
from pressroom.synth import save_png
from pressroom.templates import content_hash
from pressroom.testing import FakeOcrEngine
from pressroom.worker.publish import artifact_digest
from pressroom.worker.runner import JobRunner
from tests.helpers import small_scan

LINES = ("Waiver signed by the participant", "Payout approved 2026")


class EditsTheTemplate:
    """The job store, but the moment the runner records its ``process`` stage — the output
    is built, nothing is published yet — the template's folder is edited in place."""

    def __init__(self, queue: Any, folder: Path) -> None:
        self.queue = queue
        self.folder = folder
        self.edited = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.queue, name)

    def record_timing(self, job_id: str, attempt: int, stage: str, *a: Any, **k: Any) -> None:
        if stage == "process" and not self.edited:
            toml = self.folder / "template.toml"
            toml.write_text(toml.read_text() + "# edited in place after the build\n")
            self.edited = True
        self.queue.record_timing(job_id, attempt, stage, *a, **k)


def test_the_digest_names_the_template_that_built_the_output(
    services: Services, tmp_path: Path
) -> None:
    root = tmp_path / "brands"
    folder = root / "acme-brand"
    folder.mkdir(parents=True)
    (folder / "template.toml").write_text('name = "acme-brand"\nversion = "1"\n')
    services.settings = replace(services.settings, template_dirs=(root,))
    built_with = content_hash(folder)
    key = services.store.tenancy.create_key("acme", now=services.clock())
    client = TestClient(create_app(services), client=("127.0.0.1", 50000))
    scan = save_png(small_scan(dpi=100, lines=2).image, tmp_path / "s.png", 100).read_bytes()
    answer = client.post(
        "/v1/jobs",
        headers={"Authorization": f"Bearer {key}"},
        files={"file": ("x.png", io.BytesIO(scan))},
        data={"template": "acme-brand"},
    )
    assert answer.status_code == 202, answer.text
    hook = EditsTheTemplate(services.store.queue, folder)
    services.store.queue = hook  # type: ignore[assignment]
    engine = FakeOcrEngine(lines=LINES)
    runner = JobRunner(services, engine, "w1")
    while runner.run_next((Lane.BULK, Lane.INTERACTIVE)) is not None:
        pass
    assert hook.edited and content_hash(folder) != built_with  # edited between the two
    job = services.store.queue.get(answer.json()["id"])
    assert job is not None and job.state is JobState.COMPLETE

    def key_for(template_hash: str) -> str:
        digest = artifact_digest(
            job.source_sha256, template_hash, RedactionPolicy(()), engine=engine.name
        )
        return artifact_key(job.tenant, job.id, digest)

    # keyed by the template that built the bytes, not by the one on disk at publish time
    assert job.artifact_key == key_for(built_with)
    assert job.artifact_key != key_for(content_hash(folder))
