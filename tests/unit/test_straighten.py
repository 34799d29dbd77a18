"""Levelling a scan: pixels and words turn the same way, and the page is stored like its source."""

from __future__ import annotations

import io

import numpy as np
import pikepdf
import pytest
from PIL import Image

from pressroom.engines.straighten import Encoding, image_stream, jpeg_quality, level
from pressroom.models import Box, Word
from pressroom.pipeline.ocr import estimate_skew, level_words
from pressroom.synth import distort, draw_page, page_lines


def _dark_centre(image: Image.Image) -> tuple[float, float]:
    ys, xs = np.nonzero(np.asarray(image.convert("L")) < 128)
    return float(xs.mean()), float(ys.mean())


@pytest.mark.parametrize("skew", [2.5, -1.2])
def test_pixels_and_words_are_levelled_by_the_same_turn(skew: float) -> None:
    page = Image.new("L", (1200, 900), 255)
    page.paste(0, (1000, 150, 1016, 166))  # a mark far from the centre, where a turn shows
    x, y = _dark_centre(page)
    levelled = level(page, skew)
    word = Word("mark", 90.0, Box(x, y, x + 1, y + 1), (x, y), 1.0, 1.0)
    (moved,) = level_words((word,), skew, page.size)
    assert moved.origin == pytest.approx(_dark_centre(levelled), abs=1.0)
    assert moved.angle == pytest.approx(-skew)


def test_a_skewed_page_comes_out_level() -> None:
    scan = draw_page(page_lines(3, 12), dpi=150, font_pt=11)
    skewed = distort(scan.image, skew=2.0)
    measured = estimate_skew(skewed)
    assert measured == pytest.approx(2.0, abs=0.2)
    assert abs(estimate_skew(level(skewed, measured))) <= 0.1


def test_the_print_not_a_dark_desk_decides_the_skew() -> None:
    scan = draw_page(page_lines(4, 14), dpi=150, font_pt=11)
    photo = Image.new("L", (scan.image.width + 500, scan.image.height + 500), 60)
    photo.paste(scan.image, (250, 250))
    assert estimate_skew(distort(photo, skew=-1.8)) == pytest.approx(-1.8, abs=0.3)


def test_jpeg_keeps_the_sources_tables_and_bilevel_and_lossless_keep_every_pixel() -> None:
    scan = draw_page(page_lines(5, 6), dpi=100, font_pt=11).image
    pdf = pikepdf.new()
    for quality in (40, 85):
        buf = io.BytesIO()
        scan.save(buf, format="JPEG", quality=quality)
        encoding = Encoding.of_jpeg(buf.getvalue())
        stream = image_stream(pdf, scan, encoding)
        assert stream.Filter == pikepdf.Name.DCTDecode
        with Image.open(io.BytesIO(stream.read_raw_bytes())) as again:
            assert {k: list(v) for k, v in again.quantization.items()} == encoding.qtables  # type: ignore[attr-defined]
        assert jpeg_quality(buf.getvalue()) == quality
    bilevel = scan.point(lambda v: 255 if v >= 128 else 0).convert("1")
    g4 = image_stream(pdf, bilevel, Encoding("bilevel"))
    assert g4.Filter == pikepdf.Name.CCITTFaxDecode and g4.BitsPerComponent == 1
    back = pikepdf.PdfImage(g4).as_pil_image().convert("L")
    assert np.array_equal(np.asarray(back), np.asarray(bilevel.convert("L")))
    flate = image_stream(pdf, scan, Encoding("lossless"))
    assert np.array_equal(np.asarray(pikepdf.PdfImage(flate).as_pil_image()), np.asarray(scan))
