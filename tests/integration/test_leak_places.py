"""A hold caused by a check of the output says where (issue 40, item 5; stranger S3): the review
sheet (``GET /v1/jobs/{id}/review-sheet``, ``NAME.findings.json``) carries what the check found
again — page, class, box, never the value — the desk draws it as a box of its own kind with a
legend entry, and the approve step of a leak hold names it and asks for an acknowledgement.
And corrections outside the document are refused before anything is queued (security N9)."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.corrections import Area, Corrections, ReviewSheet, SheetFinding, SheetPage
from pressroom.desk.folder import DECISIONS, FolderDesk
from pressroom.errors import BadRequest
from pressroom.jobs.model import JobState
from pressroom.models import Box
from pressroom.pipeline.geometry import PageLayout
from pressroom.redact.readback import _Frame
from pressroom.service import Services
from pressroom.testing import FakeOcrEngine
from tests.integration.test_decisions import LEAKY, held_job
from tests.integration.test_desk_folder import VIEWER, _note, desk, held_once, outdir
from tests.integration.test_desk_web import HELD_RE, _page_token, _sign_in, _token
from tests.integration.test_service import png_bytes, post, work

pytestmark = pytest.mark.integration
__all__ = ["desk", "held_once", "outdir"]  # fixtures, shared with test_desk_folder
VALUE = "12345678"  # the account number LEAKY reads on every page, the output's too


@pytest.fixture
def api(services: Services) -> tuple[TestClient, dict[str, str], str]:
    _, key = services.store.tenancy.new_key("acme", now=services.clock())
    client = TestClient(create_app(services), client=("127.0.0.1", 50000))
    return client, {"Authorization": f"Bearer {key}"}, key


def _inside(box: list[float], page: dict[str, Any]) -> bool:
    x0, y0, x1, y1 = box
    return bool(0 <= x0 < x1 <= page["width_pt"] and 0 <= y0 < y1 <= page["height_pt"])


def test_a_leak_holds_review_sheet_says_where_the_check_found_it_again(
    api: tuple[TestClient, dict[str, str], str], services: Services, tmp_path: Path
) -> None:
    client, headers, _ = api
    job_id = held_job(client, headers, services, tmp_path)
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert job["reason"] == "REDACTION_LEAK" and "page 1" in job["message"]
    got = client.get(f"/v1/jobs/{job_id}/review-sheet", headers=headers)
    sheet = got.json()
    again = sheet["rechecked"]
    assert again, sheet
    for place in again:
        assert set(place) == {"page", "class", "box"}  # never a value
        assert place["page"] == 1 and _inside(place["box"], sheet["pages"][0])
    assert {p["class"] for p in again} <= {"account-number", "leak"}
    assert VALUE not in got.text
    # the stored sheet reads back with them, as the desk reads it
    stored = services.store.queue.get(job_id)
    assert stored is not None and stored.review_sheet is not None
    assert len(ReviewSheet.parse(stored.review_sheet).rechecked) == len(again)


def test_a_page_read_with_too_little_confidence_is_named_as_a_whole_page(
    api: tuple[TestClient, dict[str, str], str], services: Services, tmp_path: Path
) -> None:
    client, headers, _ = api
    job_id = post(client, headers, png_bytes(tmp_path), redact="account-number").json()["id"]
    lines = ("Ordinary words stay on this page.", "So do the words of this second line.")
    work(services, FakeOcrEngine(lines=lines, confidence=50.0))
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["reason"]) == ("review", "OUTPUT_CHECK_FAILED"), job
    sheet = client.get(f"/v1/jobs/{job_id}/review-sheet", headers=headers).json()
    page = sheet["pages"][0]
    assert sheet["rechecked"] == [
        {
            "page": 1,
            "class": "low-confidence",
            "box": [0.0, 0.0, page["width_pt"], page["height_pt"]],
        }
    ]


def test_a_box_read_on_the_output_goes_back_to_the_sheets_points() -> None:
    """A content page scaled down under bands and moved on its output page (and a cover page
    before it): a box read there lands where the sheet has it, clipped to the page."""
    layout = PageLayout(612.0, 792.0, (30.6, 20.0, 581.4, 732.6), scale=0.9)
    frame = _Frame({1: layout}, 1, [(612.0, 792.0)])
    px = 300 / 72  # read at 300 dpi: pixels
    on_output = layout.onto(Box(100.0 * px, 200.0 * px, 180.0 * px, 214.0 * px), px)
    [place] = frame.place(1, "name", on_output, px)
    assert place.page == 1 and place.kind == "name"
    assert place.box == pytest.approx((100.0, 200.0, 180.0, 214.0))
    assert frame.place(0, "name", on_output, px) == []  # the cover: no content page
    [edge] = frame.place(1, "leak", layout.onto(Box(600.0, 10.0, 700.0, 30.0)))
    assert edge.box == pytest.approx((600.0, 10.0, 612.0, 30.0))


def test_the_desk_draws_what_was_found_again_and_the_approve_step_needs_an_acknowledgement(
    api: tuple[TestClient, dict[str, str], str], services: Services, tmp_path: Path
) -> None:
    client, headers, key = api
    job_id = held_job(client, headers, services, tmp_path)
    _sign_in(client, key)
    page = client.get(f"/review/jobs/{job_id}")
    assert page.status_code == 200
    assert 'class="box again k-account-number"' in page.text
    assert 'data-testid="again-1-1"' in page.text and 'data-testid="legend-again"' in page.text
    assert 'data-testid="again-note"' in page.text and VALUE not in page.text
    url = f"/review/jobs/{job_id}/approve"
    step = client.post(url, data={"csrf_token": _token(page.text)})
    assert step.status_code == 200
    assert 'data-testid="confirm-found-again"' in step.text
    said = step.text.split('data-testid="confirm-found-again"')[1].split("</div>")[0]
    assert "page 1:" in said and "account-number</span> 1" in said
    assert 'name="acknowledge" value="leak"' in step.text
    held = HELD_RE.search(step.text)
    assert held is not None
    form = {"csrf_token": _token(step.text), "confirm": "yes", "held": html.unescape(held[1])}
    for ticked in ({}, {"acknowledge": "yes"}):
        again = client.post(url, data={**form, **ticked}, follow_redirects=False)
        assert again.status_code == 400, again.text
        assert 'data-testid="acknowledge-needed"' in again.text
        job = services.store.queue.get(job_id)
        assert job is not None and job.state is JobState.REVIEW  # nothing published
    done = client.post(url, data={**form, "acknowledge": "leak"}, follow_redirects=False)
    assert done.status_code == 303, done.text
    job = services.store.queue.get(job_id)
    assert job is not None and job.state is JobState.COMPLETE


def test_a_correction_outside_the_document_is_refused_and_the_review_stays(
    api: tuple[TestClient, dict[str, str], str], services: Services, tmp_path: Path
) -> None:
    client, headers, key = api
    job_id = held_job(client, headers, services, tmp_path)
    before = services.store.queue.get(job_id)
    assert before is not None and before.artifact_key and before.review_sheet
    width, height = (
        before.review_sheet["pages"][0]["width_pt"],
        before.review_sheet["pages"][0]["height_pt"],
    )
    url = f"/v1/jobs/{job_id}/corrections"
    for bad, says in (
        ({"manual": [{"page": 99999, "box": [1, 1, 50, 50]}]}, "page 99999 is not in the document"),
        ({"removed": [{"page": 2, "box": [1, 1, 50, 50]}]}, "page 2 is not in the document"),
        ({"manual": [{"page": 1, "box": [width + 20, 10, width + 80, 40]}]}, "outside page 1"),
        ({"every": [{"page": 1, "box": [10, height - 5, 60, height + 30]}]}, "outside page 1"),
    ):
        refused = client.post(url, headers=headers, json=bad)
        assert refused.status_code == 400, refused.text
        assert refused.json()["code"] == "BAD_REQUEST" and says in refused.json()["detail"]
    # the desk's Apply the same, and JSON nested far too deep is 400, never 500
    _sign_in(client, key)
    token = _page_token(client, f"/review/jobs/{job_id}")
    for raw in (
        json.dumps({"manual": [{"page": 99999, "box": [1, 1, 50, 50]}]}),
        "[" * 5000 + "]" * 5000,
        '{"manual": ' + "[" * 100 + "]" * 100 + "}",
    ):
        refused = client.post(
            f"/review/jobs/{job_id}/apply", data={"csrf_token": token, "corrections": raw}
        )
        assert refused.status_code == 400, refused.text
        assert refused.json()["code"] == "BAD_REQUEST"
    after = services.store.queue.get(job_id)
    assert after is not None and after.state is JobState.REVIEW
    assert after.artifact_key == before.artifact_key and services.blobs.exists(after.artifact_key)
    assert after.review_sheet == before.review_sheet and after.decisions == before.decisions
    assert client.get(f"/v1/jobs/{job_id}/review-sheet", headers=headers).status_code == 200
    # a correction inside the document is still taken
    fine = {"manual": [{"page": 1, "box": [10, 10, 60, 30]}]}
    assert client.post(url, headers=headers, json=fine).status_code == 202
    work(services, LEAKY)


def test_a_sheet_judges_corrections_by_its_pages() -> None:
    sheet = ReviewSheet((SheetPage(612.0, 792.0), SheetPage(792.0, 612.0, 90)))
    sheet.check(Corrections(manual=(Area(2, (700.0, 500.0, 792.0, 612.0)),)))
    # a removed finding's box may reach past the edge (a word at the margin); it must meet it
    sheet.check(Corrections(removed=(Area(1, (600.0, 10.0, 640.0, 30.0)),)))
    for bad in (
        Corrections(removed=(Area(3, (1.0, 1.0, 9.0, 9.0)),)),
        Corrections(removed=(Area(1, (700.0, 10.0, 740.0, 30.0)),)),
        Corrections(manual=(Area(1, (600.0, 10.0, 640.0, 30.0)),)),
        Corrections(every=(Area(2, (10.0, 600.0, 60.0, 640.0)),)),
    ):
        with pytest.raises(BadRequest):
            sheet.check(bad)


def test_rechecked_places_read_back_as_written() -> None:
    sheet = ReviewSheet(
        (SheetPage(612.0, 792.0),),
        (SheetFinding(1, "name", (72.0, 100.0, 200.0, 114.0)),),
        rechecked=(SheetFinding(1, "under-box", (72.5, 100.0, 120.0, 114.0)),),
    )
    raw = json.loads(json.dumps(sheet.as_json()))
    assert raw["rechecked"] == [
        {"page": 1, "class": "under-box", "box": [72.5, 100.0, 120.0, 114.0]}
    ]
    assert ReviewSheet.parse(raw) == sheet
    assert "rechecked" not in ReviewSheet((SheetPage(612.0, 792.0),)).as_json()


def test_the_offline_findings_file_says_where_and_the_folder_desk_draws_it(
    outdir: Path, desk: FolderDesk
) -> None:
    """``process --redact`` held by a detector that never settles: NAME.findings.json's sheet
    carries where re-detection found a name again, the folder desk's page draws it, and a
    correction for a page past the end is refused with the note untouched."""
    from pressroom.desk.pages import job_page as _job_page

    note = _note(outdir)
    sheet = note["sheet"]
    assert isinstance(sheet, dict)
    again = sheet["rechecked"]
    assert again and {p["class"] for p in again} == {"name"}
    for place in again:
        assert set(place) == {"page", "class", "box"}
        assert place["page"] == 1 and _inside(place["box"], sheet["pages"][0])
    detail = desk.detail(VIEWER, "visit")
    shown = bytes(_job_page("Pressroom review (offline)", VIEWER, detail, "t", 0.0).body).decode()
    assert 'data-testid="again-1-1"' in shown and 'data-testid="legend-again"' in shown
    with pytest.raises(BadRequest, match="page 99999 is not in the document"):
        desk.apply(VIEWER, "visit", Corrections(manual=(Area(99999, (1.0, 1.0, 50.0, 50.0)),)))
    assert _note(outdir) == note
    assert not (outdir / "review" / DECISIONS).exists()


def test_the_words_under_a_box_and_a_box_not_solid_are_given_with_their_places(
    tmp_path: Path,
) -> None:
    """The two checks that count what they find also say where: each word still under a box
    (output points), each box not solid (the page's points)."""
    from PIL import ImageDraw

    from pressroom.redact.readback import text_under_drawn, unsolid_boxes
    from pressroom.synth import draw_page, image_pdf, text_pdf

    typed = text_pdf([["Account number here", "Another line below"]], tmp_path / "t.pdf")
    places: dict[int, list[Box]] = {}
    under = text_under_drawn(typed, {0: (Box(0, 0, 612, 792),)}, 0, places=places)
    assert under == {1: 6} and len(places[0]) == 6
    assert all(0 <= b.x0 < b.x1 <= 612 and 0 <= b.y0 < b.y1 <= 792 for b in places[0])
    page = draw_page(["Some words"], dpi=100, height_in=2.0).image
    ImageDraw.Draw(page).rectangle((300, 100, 400, 140), fill=0)
    scan = image_pdf([page], tmp_path / "p.pdf", 100, jpeg=False)
    bad: list[tuple[int, Box]] = []
    boxes = [Box(300, 100, 400, 140), Box(500, 100, 600, 140)]
    assert unsolid_boxes(scan, [(0, 100.0, boxes)], bad_boxes=bad) == 1
    assert bad == [(0, Box(360.0, 72.0, 432.0, 100.8))]
