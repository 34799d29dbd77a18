"""Real Tesseract on generated scans: each defect read back within 5 % CER, in the right place."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from pressroom.engines import pdfium
from pressroom.engines.tesseract import TesseractEngine, tesseract_version
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.plain import process_document
from pressroom.synth import distort, image_pdf, save_png, save_tiff
from pressroom.templates import resolve_template
from tests.helpers import cer, delivered, output_text, small_scan

pytestmark = pytest.mark.integration

DEFECTS = {
    "upright": {},
    "skewed-1deg": {"skew": 1.0},
    "skewed-2.5deg": {"skew": 2.5},
    "skewed-minus-4deg": {"skew": -4.0},
    "upside-down": {"rotate": 180},
    "sideways-cw": {"rotate": 90},
    "sideways-ccw": {"rotate": 270},
    "faint": {"faint": True, "noise": 0.002},
}


def test_version_is_probed_apart_from_recognition() -> None:
    assert re.match(r"\d+\.\d+", tesseract_version())


@pytest.mark.parametrize("defect", list(DEFECTS))
def test_defective_scan_reads_within_five_percent(
    defect: str, tmp_path: Path, engine: TesseractEngine
) -> None:
    scan = small_scan(seed=7, lines=5)
    src = save_png(distort(scan.image, **DEFECTS[defect]), tmp_path / "in.png", 300)
    out = tmp_path / "out.pdf"
    result = process_document(src, out, JobOptions(template=resolve_template(None)), engine)
    # In the order the text layer was written (poppler's -raw): the reading, not a viewer's
    # guess at line order, which on a 3° skew interleaves lines in every extractor.
    error = cer(scan.text, pdftotext(out, "-raw"))
    print(f"CER {defect}: {error:.2%} (rotation {result.rotations[0]}, skew {result.skews[0]})")
    assert error <= 0.05
    expected_turn = {"upside-down": 180, "sideways-cw": 270, "sideways-ccw": 90}.get(defect, 0)
    assert result.rotations == (expected_turn,)


def pdftotext(path: Path, *args: str) -> str:
    return subprocess.run(
        ["pdftotext", *args, str(path), "-"], check=True, capture_output=True, text=True
    ).stdout


def _word_box_pt(scan, word: str, dpi: int) -> tuple[float, float, float, float]:
    """Where ``word`` was drawn, as (l, b, r, t) in points on an upright page."""
    (box,) = [b for w, b in scan.word_boxes if w == word][:1]
    height_pt = scan.image.height * 72 / dpi
    k = 72 / dpi
    return box[0] * k, height_pt - box[3] * k, box[2] * k, height_pt - box[1] * k


def _overlap(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    area = (a[2] - a[0]) * (a[3] - a[1])
    return ix * iy / area if area else 0.0


def test_search_finds_a_word_where_it_is_printed(tmp_path: Path, engine: TesseractEngine) -> None:
    scan = small_scan(seed=3, lines=4, dpi=300)
    # Upside down in the file: the output shows it upright, and the word must be found there.
    src = image_pdf([distort(scan.image, rotate=180)], tmp_path / "scan.pdf", 300)
    out = tmp_path / "out.pdf"
    delivered(process_document(src, out, JobOptions(template=resolve_template(None)), engine))
    word = max((w for w, _ in scan.word_boxes if w.isalpha()), key=len)
    drawn = _word_box_pt(scan, word, 300)
    with pdfium.open_pdf(out) as doc:
        found = pdfium.find_text(doc, 0, word)
    assert found, f"PDFium cannot find {word!r}"
    assert max(_overlap(drawn, f) for f in found) > 0.6


def test_pdftotext_sees_words_at_their_place(tmp_path: Path, engine: TesseractEngine) -> None:
    scan = small_scan(seed=4, lines=4, dpi=300)
    src = save_png(scan.image, tmp_path / "in.png", 300)
    out = tmp_path / "out.pdf"
    delivered(process_document(src, out, JobOptions(template=resolve_template(None)), engine))
    html = pdftotext(out, "-bbox")
    words = re.findall(
        r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]+)</word>',
        html,
    )
    height_pt = scan.image.height * 72 / 300
    matched = 0
    for drawn_word, _ in scan.word_boxes[:10]:
        drawn = _word_box_pt(scan, drawn_word, 300)
        for x0, y0, x1, y1, text in words:
            if text == drawn_word:
                # poppler's y runs down from the top
                box = (float(x0), height_pt - float(y1), float(x1), height_pt - float(y0))
                if _overlap(drawn, box) > 0.5:
                    matched += 1
                    break
    assert matched >= 9
    assert cer(scan.text, pdftotext(out)) <= 0.05


def test_mixed_document_keeps_text_pages_and_reads_scans(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    import pikepdf

    from pressroom.synth import text_pdf

    scan = small_scan(seed=9, lines=3)
    scanned = image_pdf([scan.image], tmp_path / "scan.pdf", 300)
    digital = text_pdf(
        [["This page was typed, not scanned, and its text must stay exact."]],
        tmp_path / "digital.pdf",
    )
    mixed = pikepdf.Pdf.new()
    for part in (digital, scanned):
        with pikepdf.open(part) as p:
            mixed.pages.extend(p.pages)
    mixed.save(tmp_path / "mixed.pdf")
    out = tmp_path / "out.pdf"
    result = process_document(
        tmp_path / "mixed.pdf", out, JobOptions(template=resolve_template("sample")), engine
    )
    assert (result.kept_pages, result.ocr_pages) == (1, 1)
    assert "its text must stay exact" in output_text(out, 1)
    # the page keeps its size; the sample's bands, scaled to it, fit inside
    from tests.helpers import content_rect

    content = content_rect("sample", 612, scan.image.height * 72 / 300)
    assert cer(scan.text, output_text(out, 2, content)) <= 0.05


def test_bilevel_multipage_fax(tmp_path: Path, engine: TesseractEngine) -> None:
    scans = [small_scan(seed=s, lines=3, dpi=200) for s in (21, 22)]
    src = save_tiff([s.image for s in scans], tmp_path / "fax.tif", 200, bilevel=True)
    out = tmp_path / "out.pdf"
    result = process_document(src, out, JobOptions(template=resolve_template(None)), engine)
    assert result.pages == 2
    for i, s in enumerate(scans):
        assert cer(s.text, output_text(out, i)) <= 0.05
