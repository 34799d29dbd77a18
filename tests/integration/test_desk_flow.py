"""A reviewer's whole round through the service with real Tesseract, without a browser: held
for review with a sheet, a false box removed and a missed value boxed, Apply rebuilt by a
worker through the redaction path, approved, downloaded — and the published PDF read back by
every parser."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.corrections import Area, Corrections, removed_match
from pressroom.deskport import Viewer
from pressroom.deskstore import ServiceDesk
from pressroom.engines import pdfium
from pressroom.engines.tesseract import TesseractEngine
from pressroom.jobs.model import JobState
from pressroom.models import Box
from pressroom.redact.leaks import find_leaks
from pressroom.redact.plan import normalise, overlaps
from pressroom.service import Services
from pressroom.templates import registered_template
from tests.desk_docs import FALSE_POSITIVE, MISSED, PERSON, desk_scan, grown, texts, work

pytestmark = pytest.mark.integration


def test_a_reviewer_removes_a_false_box_adds_a_missed_one_and_approves(
    services: Services, engine: TesseractEngine, tmp_path: Path
) -> None:
    doc = desk_scan(tmp_path / "page.png")
    key_id, key = services.store.tenancy.new_key("acme", now=services.clock())
    client = TestClient(create_app(services), client=("127.0.0.1", 50000))
    headers = {"Authorization": f"Bearer {key}"}
    sent = client.post(
        "/v1/jobs",
        headers=headers,
        files={"file": ("page.png", doc.path.read_bytes())},
        data={"redact": "name", "review": "always"},
    )
    assert sent.status_code == 202, sent.text
    job_id = sent.json()["id"]
    work(services, engine)
    desk, viewer = ServiceDesk(services), Viewer("acme", key_id, "tenant")
    held = desk.detail(viewer, job_id)
    assert held.item.reason_code == "REVIEW_REQUESTED" and held.can_apply
    sheet = held.sheet
    assert sheet is not None and len(sheet.pages) == 1
    assert abs(sheet.pages[0].width_pt - doc.width_pt) < 1
    names = [f for f in sheet.findings if f.kind == "name"]
    # both people as detection sees them: the real one and the building
    person = [f for f in names if overlaps(Box(*f.box), Box(*doc.boxes[PERSON]))]
    false = [f for f in names if overlaps(Box(*f.box), Box(*doc.boxes[FALSE_POSITIVE]))]
    assert person and false, names
    assert held.item.counts["name"] == len(names)
    for which in ("source", "redacted"):
        png = desk.page_image(viewer, job_id, 1, which, 640)
        assert png.startswith(b"\x89PNG")

    corrections = Corrections(
        removed=tuple(Area(1, f.box) for f in false),
        manual=(Area(1, grown(doc.boxes[MISSED], 2.0)),),
    )
    desk.apply(viewer, job_id, corrections)
    assert desk.detail(viewer, job_id).item.state == "rebuilding"
    work(services, engine)
    again = desk.detail(viewer, job_id)
    assert again.item.reason_code == "CORRECTED", again.item.reason
    # held after the Apply: the page can say the copy is the rebuild's
    assert again.item.rebuilt_at is not None and again.item.progress is None
    assert again.sheet is not None
    assert again.sheet.corrections == Corrections.parse(corrections.as_json())  # as stored
    kinds = {f.kind for f in again.sheet.findings}
    assert "manual" in kinds
    # the false positive is still a finding of the sheet, shown kept: its box is a removed one
    false_again = [
        f for f in again.sheet.findings if overlaps(Box(*f.box), Box(*doc.boxes[FALSE_POSITIVE]))
    ]
    assert all(
        any(removed_match([f.box], a.box) == 0 for a in again.sheet.corrections.removed)
        for f in false_again
    )
    approved = desk.approve(viewer, job_id)
    assert approved.link is not None
    download = client.get(approved.link)
    assert download.status_code == 200
    out = tmp_path / "published.pdf"
    out.write_bytes(download.content)
    job = services.store.queue.get(job_id)
    assert job is not None and job.state is JobState.COMPLETE
    assert [d.action for d in job.decisions] == ["apply", "approve"]

    # the published PDF: the person and the boxed word gone in every form, the building kept
    assert find_leaks(out, [PERSON, MISSED]) == []
    for reader, text in texts(out).items():
        assert normalise(FALSE_POSITIVE) in text, reader
        assert normalise(MISSED) not in text, reader
        assert normalise("Okafor") not in text, reader
        assert normalise("codeword") in text and normalise("internal") in text, reader
    # the manual box is black in the pixels, under the template's header band
    header = registered_template("plain", services.settings.template_dirs).header.height
    with pdfium.RecyclingDocument(out) as pdf:
        page = pdf[0]
        image = page.render(scale=2.0, grayscale=True).to_pil().convert("L")
        page.close()
    x0, y0, x1, y1 = doc.boxes[MISSED]
    inside = image.crop(
        (int(x0 * 2) + 2, int((y0 + header) * 2) + 2, int(x1 * 2) - 2, int((y1 + header) * 2) - 2)
    )
    assert inside.getextrema()[1] < 60  # solid: no light pixel left inside
