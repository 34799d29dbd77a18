"""The desk's page pictures: the width asked for, the height of the upright page, and a mark on
the source where the sheet's frame puts it — turned and levelled as the redaction read it."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from pressroom.corrections import SheetPage
from pressroom.errors import BadRequest
from pressroom.models import Box, SourceKind, Word
from pressroom.pipeline.ocr import level_words
from pressroom.pipeline.pictures import output_page_png, source_page_png

# a letter page at 72 dpi: one pixel a point; a dark square centred at (80, 120) pt
W_PT, H_PT = 612, 792
MARK = (60, 100, 100, 140)


def _page_image() -> Image.Image:
    image = Image.new("RGB", (W_PT, H_PT), "white")
    image.paste((0, 0, 0), MARK)
    return image


@pytest.fixture
def pdf(tmp_path: Path) -> Path:
    path = tmp_path / "source.pdf"
    _page_image().save(path, "PDF", resolution=72.0)
    return path


@pytest.fixture
def tiff(tmp_path: Path) -> Path:
    path = tmp_path / "source.tiff"
    blank = Image.new("L", (W_PT, H_PT), 255)
    blank.save(path, "TIFF", save_all=True, append_images=[_page_image().convert("L")])
    return path


def _open(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    return image


def _mark(image: Image.Image) -> tuple[float, float]:
    ys, xs = np.nonzero(np.asarray(image.convert("L")) < 128)
    assert len(xs), "no mark on the picture"
    return float(xs.mean()), float(ys.mean())


def test_an_upright_pdf_page_at_the_width_asked(pdf: Path) -> None:
    image = _open(source_page_png(pdf, SourceKind.PDF, 0, SheetPage(W_PT, H_PT), 306))
    assert image.size == (306, 396)
    assert _mark(image) == pytest.approx((40, 60), abs=1.5)  # (80, 120) pt at half scale


def test_a_page_read_turned_is_shown_turned_so_the_boxes_lie_on_it(pdf: Path) -> None:
    # the redaction turned this scan 90° clockwise: its upright page is 792 x 612 pt
    sheet = SheetPage(H_PT, W_PT, rotation=90)
    image = _open(source_page_png(pdf, SourceKind.PDF, 0, sheet, 396))
    assert image.size == (396, 306)
    # turned clockwise, (x, y) lands on (height - y, x): (80, 120) → (672, 80) pt
    assert _mark(image) == pytest.approx((336, 40), abs=1.5)


def test_a_levelled_page_is_levelled_as_its_words_were(pdf: Path) -> None:
    sheet = SheetPage(W_PT, H_PT, level=4.0)
    image = _open(source_page_png(pdf, SourceKind.PDF, 0, sheet, W_PT))
    assert image.size == (W_PT, H_PT)
    x, y = 80.0, 120.0
    word = Word("mark", 90.0, Box(x, y, x + 1, y + 1), (x, y), 1.0, 1.0)
    (moved,) = level_words((word,), 4.0, (W_PT, H_PT))
    assert _mark(image) == pytest.approx(moved.origin, abs=1.5)
    assert abs(moved.origin[0] - x) > 5  # the turn moves the mark: the check can tell


def test_an_image_frame_is_turned_and_scaled_like_a_pdf_page(tiff: Path) -> None:
    plain = _open(source_page_png(tiff, SourceKind.TIFF, 1, SheetPage(W_PT, H_PT), 306))
    assert plain.size == (306, 396)
    assert _mark(plain) == pytest.approx((40, 60), abs=1.5)
    sheet = SheetPage(H_PT, W_PT, rotation=270)
    turned = _open(source_page_png(tiff, SourceKind.TIFF, 1, sheet, 396))
    assert turned.size == (396, 306)
    # turned counter-clockwise, (x, y) lands on (y, width - x): (80, 120) → (120, 532) pt
    assert _mark(turned) == pytest.approx((60, 266), abs=1.5)


def test_without_a_sheet_page_the_page_is_shown_as_it_stands(pdf: Path, tiff: Path) -> None:
    assert _open(source_page_png(pdf, SourceKind.PDF, 0, None, 200)).size == (200, 259)
    assert _open(source_page_png(tiff, SourceKind.TIFF, 0, None, 200)).size == (200, 259)


def test_an_output_page_at_the_width_asked(pdf: Path) -> None:
    image = _open(output_page_png(pdf, 0, 1224))
    assert image.size == (1224, 1584)
    assert _mark(image) == pytest.approx((160, 240), abs=2)


def test_a_page_that_is_not_there_or_a_silly_width_is_a_bad_request(pdf: Path, tiff: Path) -> None:
    with pytest.raises(BadRequest):
        output_page_png(pdf, 1, 640)
    with pytest.raises(BadRequest):
        source_page_png(pdf, SourceKind.PDF, -1, None, 640)
    with pytest.raises(BadRequest):
        source_page_png(tiff, SourceKind.TIFF, 2, None, 640)
    with pytest.raises(BadRequest):
        output_page_png(pdf, 0, 100_000)


_THREADS = """
import sys, threading
from pathlib import Path
from pressroom.pipeline.pictures import output_page_png, source_page_png
from pressroom.models import SourceKind
path = Path(sys.argv[1])
failed = []
def draw(n):
    try:
        for k in range(40):
            width = 300 + 150 * ((n + k) % 9)
            if k % 2:
                output_page_png(path, k % 4, width)
            else:
                source_page_png(path, SourceKind.PDF, k % 4, None, width)
    except Exception as exc:
        failed.append(repr(exc))
threads = [threading.Thread(target=draw, args=(n,)) for n in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("failed", failed)
sys.exit(1 if failed else 0)
"""


def test_pictures_drawn_from_many_threads_at_once(tmp_path: Path) -> None:
    """The service draws the desk's pictures on its thread pool, a page's thumbnails side by
    side; PDFium is not thread-safe, and two threads inside it crashed the whole process
    (SIGSEGV, seen in CI). Run in a child process so that a crash fails this test, not the
    suite."""
    import subprocess
    import sys

    from pressroom import synth

    # pages of text: PDFium's font handling is where two threads crashed it
    path = synth.text_pdf([synth.page_lines(15, 12 + n) for n in range(4)], tmp_path / "four.pdf")
    run = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", _THREADS, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, (run.returncode, run.stdout[-2000:], run.stderr[-2000:])
