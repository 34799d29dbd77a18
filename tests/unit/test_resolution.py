"""The recognition scale chosen per page from its print, blank pages left unread, words mapped
back onto the page's own pixels. The engine is a fake that records what it was shown."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from pressroom.models import Box, Word
from pressroom.pipeline.ocr import OcrStage
from pressroom.pipeline.resolution import (
    KEEP_BELOW_XHEIGHT,
    choose_scale,
    enlarge_words,
    measure_text,
    reduce,
)
from pressroom.synth import distort, draw_page, find_font, page_lines
from pressroom.testing import FakeOcrEngine


def _page(pt: float, font: str = "DejaVuSerif.ttf", dpi: int = 300) -> Image.Image:
    return draw_page(page_lines(3, 18), dpi=dpi, font_pt=pt, font=font).image


def _noisy_paper(size: tuple[int, int] = (2550, 3300), sigma: float = 6.0) -> Image.Image:
    rng = np.random.default_rng(7)
    grey = np.clip(rng.normal(236, sigma, (size[1], size[0])), 0, 255).astype(np.uint8)
    return Image.fromarray(grey)


@pytest.mark.parametrize("font", ["DejaVuSerif.ttf", "DejaVuSans.ttf"])
@pytest.mark.parametrize("pt", [7.5, 8.0])
def test_small_print_keeps_every_pixel(pt: float, font: str) -> None:
    size = measure_text(_page(pt, font))
    assert not size.blank
    assert choose_scale(size.xheight(0)) == 1.0


@pytest.mark.parametrize("font", ["DejaVuSerif.ttf", "DejaVuSans.ttf"])
@pytest.mark.parametrize("pt", [10.0, 11.0])
def test_ordinary_print_at_300_dpi_is_read_at_about_half(pt: float, font: str) -> None:
    size = measure_text(_page(pt, font))
    assert 0.35 <= choose_scale(size.xheight(0)) <= 0.6
    assert choose_scale(size.xheight(0), 300.0) == 0.5


def test_the_choice_follows_the_glyphs_not_the_resolution() -> None:
    # 10 pt scanned at 150 dpi has glyphs as small as 5 pt at 300 dpi: it keeps its pixels
    assert choose_scale(measure_text(_page(10.0, dpi=150)).xheight(0)) == 1.0


def test_a_sideways_page_is_sized_by_its_text_not_its_frame() -> None:
    page = _page(8.0)
    turned = page.rotate(90, expand=True, fillcolor=255)
    size = measure_text(turned)
    assert choose_scale(size.xheight(90)) == 1.0
    assert size.xheight(90) == size.width
    assert size.xheight(0) == size.height


def test_unknown_size_keeps_the_pixels() -> None:
    assert choose_scale(None) == 1.0
    assert choose_scale(KEEP_BELOW_XHEIGHT - 0.5) == 1.0
    assert choose_scale(200.0) == pytest.approx(0.25)


def test_large_print_is_never_read_below_150_dpi() -> None:
    assert choose_scale(40.0, 300.0) == pytest.approx(0.5)
    assert choose_scale(40.0, 600.0) == pytest.approx(0.26, abs=0.01)  # by its glyphs
    assert choose_scale(40.0, 170.0) == 1.0  # 150/170 saves too little


def test_footnotes_under_large_print_keep_the_pixels() -> None:
    page = draw_page(page_lines(5, 14), dpi=300, font_pt=12.0).image
    face = ImageFont.truetype(str(find_font("DejaVuSerif.ttf")), round(7 * 300 / 72))
    draw = ImageDraw.Draw(page)
    for i, line in enumerate(page_lines(9, 4)):
        draw.text((270, 2950 + i * 45), line, font=face, fill=0)
    assert choose_scale(measure_text(page).xheight(0), 300.0) == 1.0


@pytest.mark.parametrize(
    "paper",
    [
        Image.new("L", (2550, 3300), 255),
        Image.new("L", (1275, 1650), 228),
        _noisy_paper(),
    ],
    ids=["white", "grey", "noisy"],
)
def test_paper_without_ink_is_blank(paper: Image.Image) -> None:
    assert measure_text(paper).blank


def _photo_lit(page: Image.Image, fall: float = 0.3, desk: float = 70.0) -> Image.Image:
    """``page`` as a phone sees it: grey ink, light falling off towards the corners, a dark
    desk at both sides."""
    ink = np.asarray(page, dtype=np.float32) / 255.0
    h, w = ink.shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    light = np.clip(
        1.0 - fall * ((xx - w / 2) / (w / 2)) ** 2 - fall * ((yy - h / 2) / (h / 2)) ** 2, 0.2, 1.0
    )
    lit = (60.0 + ink * 175.0) * light
    side = int(w * 0.08)
    lit[:, :side] = desk
    lit[:, -side:] = desk
    noise = np.random.default_rng(5).normal(0, 1.5, lit.shape)
    return Image.fromarray((lit + noise).clip(0, 255).astype(np.uint8))


def test_a_page_under_uneven_light_is_not_blank() -> None:
    # the light's fall-off is not noise: read as noise it set the ink threshold under the ink
    size = measure_text(_photo_lit(_page(10.0)))
    assert not size.blank
    assert size.height is not None and not size.faint


def test_blank_paper_under_uneven_light_is_read_rather_than_skipped() -> None:
    # a desk and a shadow are marks: the page is read (and found empty), never skipped unseen
    assert not measure_text(_photo_lit(Image.new("L", (2550, 3300), 255))).blank


def test_one_faint_word_is_not_blank() -> None:
    page = _noisy_paper()
    face = ImageFont.truetype(str(find_font("DejaVuSans.ttf")), 28)
    ImageDraw.Draw(page).text((1800, 3100), "No", fill=190, font=face)
    assert not measure_text(page).blank


def test_a_faint_page_is_not_blank() -> None:
    assert not measure_text(distort(_page(10.0), faint=True)).blank


def test_words_read_on_a_reduced_image_land_on_the_full_one() -> None:
    full = (2551, 3301)  # odd sizes: the reduced size is rounded
    small = reduce(Image.new("L", full, 255), 0.5).size
    assert small == (1276, 1650)
    word = Word("ink", 90.0, Box(100.0, 200.0, 150.0, 220.0), (100.0, 216.0), 50.0, 16.0)
    (mapped,) = enlarge_words((word,), small, full)
    fx, fy = full[0] / small[0], full[1] / small[1]
    assert mapped.box == Box(100 * fx, 200 * fy, 150 * fx, 220 * fy)
    assert mapped.origin == (100 * fx, 216 * fy)
    assert mapped.advance == pytest.approx(50 * fx)
    assert mapped.size == pytest.approx(16 * fy)
    assert mapped.text == "ink"
    assert enlarge_words((word,), full, full) == (word,)


def _fit_stage(engine: FakeOcrEngine) -> OcrStage:
    return OcrStage(engine, fit_resolution=True, skip_blank=True)


def test_a_blank_page_is_never_shown_to_the_engine() -> None:
    engine = FakeOcrEngine()
    reading = _fit_stage(engine)(_noisy_paper(), 300.0)
    assert engine.calls == []
    assert engine.orientation_calls == 0
    assert reading.result.words == ()
    assert reading.size == (2550, 3300)
    assert reading.rotation == 0


def test_without_skip_blank_a_blank_page_is_read() -> None:
    engine = FakeOcrEngine()
    OcrStage(engine)(_noisy_paper(), 300.0)
    assert engine.calls


def test_ordinary_print_is_shown_reduced_and_its_words_come_back_full_size() -> None:
    page = _page(11.0)
    engine = FakeOcrEngine()
    reading = _fit_stage(engine)(page, 300.0)
    ((w, h),) = engine.calls
    assert w < 0.6 * page.width and h < 0.6 * page.height
    # the fake lays its first word at a quarter of the image it was shown: a quarter of the
    # page it is again, within a pixel of the rounding
    first = reading.result.words[0]
    assert first.box.x0 == pytest.approx((w // 4) * page.width / w, abs=1e-6)
    assert first.box.x0 == pytest.approx(page.width / 4, abs=page.width / w + 1)
    assert first.box.y0 == pytest.approx(page.height / 4, abs=page.height / h + 1)
    assert reading.size == page.size


def test_the_native_stage_shows_the_engine_every_pixel() -> None:
    page = _page(11.0)
    engine = FakeOcrEngine()
    OcrStage(engine)(page, 300.0)
    assert engine.calls == [page.size]


@pytest.mark.parametrize(
    "page",
    [_page(8.0), distort(_page(11.0), faint=True)],
    ids=["small-print", "faint"],
)
def test_small_and_faint_print_are_shown_at_full_resolution(page: Image.Image) -> None:
    engine = FakeOcrEngine()
    reading = _fit_stage(engine)(page, 300.0)
    assert engine.calls == [page.size]
    assert reading.result.words


def test_a_highlighted_line_does_not_pass_for_small_print() -> None:
    page = np.asarray(_page(11.0), dtype=np.float32) * (240 / 255)
    rng = np.random.default_rng(3)
    # a highlighter's tint over some lines, just darker than the paper's noise allows: specks
    # of noise inside it must not outnumber the letters under it
    tint = np.ones_like(page)
    for top in range(250, 3000, 600):
        tint[top : top + 90, 250:2300] = 0.895
    noisy = page * tint + rng.normal(0, 5, page.shape)
    marked = Image.fromarray(noisy.clip(0, 255).astype(np.uint8))
    assert choose_scale(measure_text(marked).xheight(0), 300.0) == 0.5


def test_faint_print_is_told_by_its_ink_not_by_its_paper() -> None:
    faint = measure_text(distort(_page(11.0), faint=True))
    assert faint.faint and faint.height is not None
    # dark print on an unevenly lit, grey page (a photo's light falling off) is not faint,
    # though its grey range gets stretched for reading as a faint page's does
    page = np.asarray(_page(11.0), dtype=np.float32)
    light = np.linspace(1.0, 0.7, page.shape[1], dtype=np.float32)[None, :]
    lit = Image.fromarray((page * light * 0.85).clip(0, 255).astype(np.uint8))
    size = measure_text(lit)
    assert not size.faint
    engine = FakeOcrEngine()
    _fit_stage(engine)(lit, 300.0)
    ((w, _h),) = engine.calls
    assert w < 0.6 * lit.width
