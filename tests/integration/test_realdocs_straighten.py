"""A levelled page's straightening is timed where it happens: inside the reading (skew levelled
for recognition, words mapped back) as well as the levelled image's encoding, under the job's
``straighten`` stage and not under its OCR (the review's S10: ``timings.straighten`` was 0.0
for a levelled page)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.jobs.model import Lane
from pressroom.pipeline.ocr import OcrStage
from pressroom.service import Services
from pressroom.synth import distort
from pressroom.testing import FakeOcrEngine
from pressroom.worker.runner import JobRunner
from tests.helpers import small_scan

pytestmark = pytest.mark.integration


def _skewed(tmp_path: Path) -> Path:
    """A skewed scan drawn as two images (its top and bottom halves): the page is rendered for
    recognition and levelled by its placement, so nothing is re-encoded and all of the
    straightening happens inside the reading (timed 0.0 before)."""
    from fpdf import FPDF

    page = distort(small_scan(dpi=150, lines=6).image, skew=3.0)
    w, h = page.width * 72 / 150, page.height * 72 / 150
    pdf = FPDF(unit="pt", format=(w, h))
    pdf.add_page()
    top, bottom = (
        page.crop((0, 0, page.width, page.height // 2)),
        page.crop((0, page.height // 2, page.width, page.height)),
    )
    pdf.image(top, x=0, y=0, w=w, h=top.height * 72 / 150)
    pdf.image(bottom, x=0, y=top.height * 72 / 150, w=w, h=bottom.height * 72 / 150)
    out = tmp_path / "skewed.pdf"
    pdf.output(str(out))
    return out


@pytest.mark.parametrize("fields", [{}, {"redact": "name"}], ids=["plain", "redaction"])
def test_a_skewed_scans_job_json_times_its_straightening(
    services: Services, tmp_path: Path, fields: dict[str, str]
) -> None:
    key = services.store.tenancy.create_key("acme", now=services.clock())
    client = TestClient(create_app(services), client=("127.0.0.1", 50000))
    headers = {"Authorization": f"Bearer {key}"}
    data = _skewed(tmp_path).read_bytes()
    posted = client.post(
        "/v1/jobs", headers=headers, files={"file": ("x.pdf", io.BytesIO(data))}, data=fields
    ).json()
    runner = JobRunner(services, FakeOcrEngine(), "w1")
    while runner.run_next((Lane.BULK, Lane.INTERACTIVE)) is not None:
        pass
    job = client.get(f"/v1/jobs/{posted['id']}", headers=headers).json()
    assert job["state"] == "complete", job
    assert job["timings"]["straighten"] > 0
    assert job["timings"]["ocr"] > 0


def test_a_reading_reports_the_time_it_spent_levelling_and_none_where_it_levelled_nothing() -> None:
    stage = OcrStage(FakeOcrEngine(), straighten_min=0.3)
    skewed = stage(distort(small_scan(dpi=150, lines=6).image, skew=3.0), 150)
    assert skewed.straightened and skewed.levelling_s > 0
    level = stage(small_scan(dpi=150, lines=6).image, 150)
    assert not level.straightened and level.levelling_s == 0.0
