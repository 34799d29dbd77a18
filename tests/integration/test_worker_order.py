"""A job's stored order is read once, through ``orders.JobOrder``: a row this version cannot
read is listed and shown as any other, but no worker runs it and no webhook is sent for it —
a misspelt redaction class is never a document published unredacted."""

from __future__ import annotations

import uuid
from pathlib import Path

from sqlalchemy import func, select, update

from pressroom.api.responses import job_json
from pressroom.jobs.model import JobState, Lane, NewJob
from pressroom.jobs.schema import jobs, webhook_deliveries
from pressroom.orders import JobOrder
from pressroom.service import Services
from pressroom.synth import text_pdf
from pressroom.testing import FakeOcrEngine
from pressroom.worker.runner import JobRunner


def _insert(services: Services, order: JobOrder) -> str:
    job_id = str(uuid.uuid4())
    new = NewJob(
        id=job_id,
        tenant="acme",
        lane=Lane.BULK,
        source_key=f"sources/acme/{job_id}/source",
        source_sha256="ab" * 32,
        source_bytes=10,
        kind="pdf",
        template="plain",
        order=order,
    )
    services.store.queue.insert(new, now=services.clock(), max_attempts=3)
    return job_id


def test_an_order_round_trips_through_the_row(services: Services) -> None:
    order = JobOrder(
        redact=("name",),
        expires_at=None,
        output_type="pdfa",
        sidecar=True,
        optimize=1,
        ocr="redo",
        languages=("eng", "deu"),
        review_always=True,
        webhook_url="https://hooks.example.org/x",
    )
    job = services.store.queue.get(_insert(services, order))
    assert job is not None and job.order == order and job.order.refused is None


def test_a_stored_class_no_recogniser_knows_is_refused_never_ignored(
    services: Services, tmp_path: Path
) -> None:
    job_id = _insert(services, JobOrder(webhook_url="https://hooks.example.org/x"))
    source = text_pdf([["Alice Example paid 40 EUR"]], tmp_path / "s.pdf")
    services.blobs.put_file(f"sources/acme/{job_id}/source", source)
    with services.store.db.tx() as conn:  # a row written by hand, or by another version
        conn.execute(
            update(jobs)
            .where(jobs.c.id == job_id)
            .values(options={"redact": ["nmae"], "webhook_url": "https://hooks.example.org/x"})
        )
    listed = services.store.queue.get(job_id)
    assert listed is not None and listed.order.refused is not None  # read, not raised
    # shown as waiting, never as a plain job: it says why it will not run
    shown = job_json(listed, services, "http://testserver")
    assert shown["state"] == "accepted" and shown["reason"] == "UNSUPPORTED_POLICY"
    assert "nmae" in shown["message"]
    JobRunner(services, FakeOcrEngine(lines=("x",)), "w1").run_next((Lane.BULK,))
    job = services.store.queue.get(job_id)
    assert job is not None and job.state is JobState.REJECTED
    assert job.reason == "UNSUPPORTED_POLICY" and job.artifact_key is None
    assert list(services.blobs.list("artifacts")) == []
    # nor is its webhook sent: a URL read from an order that could not be read is not trusted
    with services.store.db.read() as conn:
        sent = conn.execute(
            select(func.count())
            .select_from(webhook_deliveries)
            .where(webhook_deliveries.c.job_id == job_id)
        ).scalar_one()
    assert sent == 0


def test_a_readable_order_sends_its_webhook_when_the_job_ends(services: Services) -> None:
    # the same ending with an order that reads (its source is missing): the notice is queued
    job_id = _insert(services, JobOrder(webhook_url="https://hooks.example.org/x"))
    JobRunner(services, FakeOcrEngine(lines=("x",)), "w1").run_next((Lane.BULK,))
    job = services.store.queue.get(job_id)
    assert job is not None and (job.state, job.reason) == (JobState.REJECTED, "SOURCE_MISSING")
    with services.store.db.read() as conn:
        urls = conn.execute(
            select(webhook_deliveries.c.url).where(webhook_deliveries.c.job_id == job_id)
        ).scalars()
        assert list(urls) == ["https://hooks.example.org/x"]
