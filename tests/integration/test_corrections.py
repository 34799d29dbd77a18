"""A reviewer's corrections applied by the redaction engine, with real Tesseract: a box clicked
away leaves its text in every reader, a box drawn by hand takes the text under it out of every
reader and the pixels, "every occurrence" takes a word out wherever it is written."""

from __future__ import annotations

import hashlib
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pikepdf
import pytest

from pressroom.corrections import MANUAL, Area, Corrections, ReviewSheet, removed_match
from pressroom.engines import pdfium
from pressroom.engines.tesseract import TesseractEngine
from pressroom.errors import BadRequest
from pressroom.models import Box
from pressroom.pipeline.core import DocumentResult, JobOptions
from pressroom.pipeline.geometry import PageLayout
from pressroom.redact.engine import detect_document, redact_document
from pressroom.redact.leaks import find_leaks
from pressroom.redact.plan import overlaps
from pressroom.redact.policy import parse_policy
from pressroom.redact.readback import text_under_drawn
from pressroom.redact.text import extracted_words
from pressroom.synth import draw_page, image_pdf, text_pdf
from pressroom.templates import resolve_template
from tests.helpers import delivered, held_by

pytestmark = pytest.mark.integration

POLICY = parse_policy("name,address,account-number", now=0)
WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
FALSE_POSITIVE = "BLUEHERON"  # a code word detection takes for a person's name
MISSED = "zx91qv"  # a locker code no recogniser finds
EVERY = "lantern"  # written three times
LINES = [
    f"Please quote the code word {FALSE_POSITIVE} when you call the desk.",
    f"The locker is opened with the combination {MISSED} on weekdays.",
    f"Tickets sold: {EVERY}, {EVERY} and one more {EVERY}.",
    "This sentence must stay searchable.",
]
Points = tuple[float, float, float, float]


def options(template: str, corrections: Corrections | None = None) -> JobOptions:
    return JobOptions(template=resolve_template(template), when=WHEN, corrections=corrections)


def pdftotext(path: Path) -> str:
    return subprocess.run(
        ["pdftotext", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


def texts(path: Path) -> list[str]:
    """The output's text as two independent readers get it, folded for comparing."""
    with pdfium.open_pdf(path) as doc:
        seen = "\n".join(pdfium.page_text(doc, i) for i in range(len(doc)))
    return [seen.casefold(), pdftotext(path).casefold()]


def digital_boxes(src: Path) -> dict[str, Points]:
    """Each word of a born-digital page, by its text, in points from the top left."""
    with pdfium.open_pdf(src) as doc:
        page = doc[0]
        try:
            words = extracted_words(page, 1.0)
        finally:
            page.close()
    return {w.text: (w.box.x0, w.box.y0, w.box.x1, w.box.y1) for w in reversed(words)}


def grown(box: Points, pad: float) -> Points:
    return (box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad)


def finding_box(src: Path, engine: TesseractEngine, value: str) -> Points:
    """Where the dry run finds ``value``: the box a reviewer would click."""
    found = [f for f in detect_document(src, POLICY, engine, options("plain")) if f.value == value]
    assert found, "the false positive is no longer found: pick another"
    return found[0].box


def corrections_for(removed: Points, missed: Points, every: Points) -> Corrections:
    return Corrections(
        removed=(Area(1, grown(removed, 1.0)),),
        manual=(Area(1, grown(missed, 2.0)),),
        every=(Area(1, every),),
    )


def black_inside(out: Path, page: int, box: Points, placement: tuple[float, float, float]) -> float:
    """The brightest pixel inside ``box`` (content frame, points) of output page ``page``, the
    content placed there as the review sheet says (scale, left, top)."""
    scale = 300 / 72
    with pdfium.open_pdf(out) as doc:
        image = doc[page].render(scale=scale, grayscale=True).to_pil().convert("L")
    k, left, top = placement
    x0, y0, x1, y1 = (
        round(v * scale)
        for v in (left + box[0] * k, top + box[1] * k, left + box[2] * k, top + box[3] * k)
    )
    return float(np.asarray(image.crop((x0 + 3, y0 + 3, x1 - 3, y1 - 3))).max())


def assert_corrected(
    result: DocumentResult,
    out: Path,
    fixes: Corrections,
    *,
    cover: int,
    banded: bool,
) -> None:
    for text in texts(out):
        assert FALSE_POSITIVE.casefold() in text  # let stand: searchable
        assert MISSED not in text  # drawn over: gone
        assert EVERY not in text  # every occurrence gone
        assert "this sentence must stay searchable." in " ".join(text.split())
        assert "tickets sold" in text  # the words around them stay
    assert find_leaks(out, [MISSED]) == []
    assert find_leaks(out, [EVERY]) == []
    assert find_leaks(out, [FALSE_POSITIVE]) != []  # the checker sees what was let stand
    manual = fixes.manual[0].box
    sheet = result.sheet
    assert sheet is not None
    assert len(sheet.pages) == 1
    assert sheet.pages[0].width_pt == pytest.approx(612, abs=1)
    assert sheet.pages[0].height_pt == pytest.approx(792, abs=1)
    # the output page keeps the source's size; bands fit inside it, the content scaled
    with pikepdf.open(out) as pdf:
        assert [float(v) for v in pdf.pages[cover].mediabox] == pytest.approx([0, 0, 612, 792])
    placement = sheet.pages[0].placement
    assert (placement[0] < 1.0) is banded
    assert black_inside(out, cover, manual, placement) <= 40
    assert result.redacted.get(MANUAL, 0) >= 4  # the drawn box and three occurrences
    assert "name" not in result.redacted  # the only name found was let stand
    assert sheet.corrections == fixes
    drawn = [f for f in sheet.findings if f.kind == MANUAL and f.box == manual]
    assert len(drawn) == 1
    removed = Box(*fixes.removed[0].box)
    # the finding is still found, and the sheet keeps it with the correction that removed it:
    # the desk shows it kept, exactly where it was removed
    again = [f for f in sheet.findings if overlaps(Box(*f.box), removed)]
    assert len(again) == 1
    assert removed_match([f.box for f in again], fixes.removed[0].box) == 0
    occurrences = [f for f in sheet.findings if f.kind == MANUAL and f.box != manual]
    assert len(occurrences) >= 3
    once = ReviewSheet.parse(sheet.as_json())  # as the desk stores it
    assert ReviewSheet.parse(once.as_json()) == once


def test_a_born_digital_page_corrected(tmp_path: Path, engine: TesseractEngine) -> None:
    src = text_pdf([LINES], tmp_path / "typed.pdf")
    words = digital_boxes(src)
    fixes = corrections_for(
        finding_box(src, engine, FALSE_POSITIVE), words[MISSED], words[f"{EVERY},"]
    )
    out = tmp_path / "out.pdf"
    result = redact_document(src, out, options("plain", fixes), POLICY, engine)
    assert_corrected(result, out, fixes, cover=0, banded=False)


def test_a_scanned_page_corrected_under_a_header_and_cover(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    scan = draw_page(LINES, height_in=11.0)
    src = image_pdf([scan.image], tmp_path / "scan.pdf", 300)
    k = 72 / scan.dpi
    drawn = {
        text: (x0 * k, y0 * k, x1 * k, y1 * k)
        for text, (x0, y0, x1, y1) in reversed(scan.word_boxes)
    }
    fixes = corrections_for(
        finding_box(src, engine, FALSE_POSITIVE), drawn[MISSED], drawn[f"{EVERY},"]
    )
    out = tmp_path / "out.pdf"
    template = resolve_template("sample")
    result = redact_document(src, out, options("sample", fixes), POLICY, engine)
    assert template.cover is not None
    assert_corrected(result, out, fixes, cover=1, banded=True)


def test_without_corrections_the_output_is_what_it_was(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = text_pdf([LINES], tmp_path / "typed.pdf")
    shas = []
    for n, fixes in enumerate((None, Corrections())):
        out = tmp_path / f"out{n}.pdf"
        result = redact_document(src, out, options("plain", fixes), POLICY, engine)
        shas.append(hashlib.sha256(out.read_bytes()).hexdigest())
        assert set(result.redacted) == {"name"}  # the code word, as detection found it
        assert result.sheet is not None
        assert [f.kind for f in result.sheet.findings] == ["name"]
    assert shas[0] == shas[1]


def test_text_left_under_a_drawn_box_is_a_leak(tmp_path: Path, engine: TesseractEngine) -> None:
    """The check finds words in a drawn box where they are there (the source itself), and none
    in the output built with that box."""
    src = text_pdf([LINES], tmp_path / "typed.pdf")
    box = digital_boxes(src)[MISSED]
    fixes = Corrections(manual=(Area(1, grown(box, 2.0)),))
    out = tmp_path / "out.pdf"
    result = redact_document(src, out, options("plain", fixes), POLICY, engine)
    assert result.redacted[MANUAL] == 1
    assert text_under_drawn(src, {0: (Box(*box),)}, 0) == {1: 1}
    # a box across the middle of a longer word finds it too; below a header band the same box
    # lies lower, where the page has nothing
    x0, y0, x1, y1 = digital_boxes(src)["combination"]
    middle = Box((x0 + x1) / 2 - 5, y0 - 10, (x0 + x1) / 2 + 5, y1 - 2)
    assert text_under_drawn(src, {0: (middle,)}, 0) == {1: 1}
    lower = PageLayout(612, 792, (0, -200, 612, 592))
    assert text_under_drawn(src, {0: (middle,)}, 0, {0: lower}) == {}
    assert text_under_drawn(out, {0: (Box(*box),)}, 0) == {}


def test_a_hold_carries_the_sheet_with_the_drawn_box(tmp_path: Path) -> None:
    from pressroom.errors import ReviewRequired
    from pressroom.testing import FakeOcrEngine

    src = image_pdf(
        [draw_page(["Account number: 12345678", "Ordinary words here."], height_in=2.0).image],
        tmp_path / "s.pdf",
        300,
    )
    unsure = FakeOcrEngine(
        lines=("Account number: 12345678", "Ordinary words here stay."), confidence=55.0
    )
    fixes = Corrections(manual=(Area(1, (100.0, 100.0, 160.0, 120.0)),))
    held = held_by(
        redact_document(src, tmp_path / "o.pdf", options("plain", fixes), POLICY, unsure),
        ReviewRequired,
    )
    assert re.search("too little confidence", held.message)
    sheet = held.sheet
    assert isinstance(sheet, ReviewSheet)
    assert sheet.corrections == fixes
    assert (MANUAL, (100.0, 100.0, 160.0, 120.0)) in [(f.kind, f.box) for f in sheet.findings]
    found = [f for f in sheet.findings if f.kind == "account-number"]
    assert len(found) == 1 and len(held.findings) == len(sheet.findings) - 1
    assert sheet.pages[0].width_pt == pytest.approx(612, abs=1)


def test_a_correction_off_the_document_is_refused(tmp_path: Path, engine: TesseractEngine) -> None:
    src = text_pdf([LINES], tmp_path / "typed.pdf")
    fixes = Corrections(manual=(Area(2, (10, 10, 50, 50)),))
    with pytest.raises(BadRequest):
        delivered(
            redact_document(src, tmp_path / "out.pdf", options("plain", fixes), POLICY, engine)
        )
