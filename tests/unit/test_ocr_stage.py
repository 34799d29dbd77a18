"""The OCR stage's own logic: skew, orientation, mapping words back. The engine is a fake."""

from __future__ import annotations

import pytest
from PIL import Image

from pressroom.models import Box, Word
from pressroom.pipeline.ocr import (
    OcrStage,
    estimate_skew,
    guess_orientation,
    is_garbage,
    normalise_contrast,
    rotate_cw,
    unskew_words,
)
from pressroom.synth import distort, draw_page, page_lines
from pressroom.testing import FakeOcrEngine, draw_marker
from tests.helpers import small_scan


@pytest.mark.parametrize("angle", [-4.0, -1.5, 0.0, 0.8, 2.5, 6.0])
def test_skew_is_measured(angle: float) -> None:
    scan = small_scan(dpi=150, lines=6)
    skewed = distort(scan.image, skew=angle)
    assert estimate_skew(skewed) == pytest.approx(angle, abs=0.25)


def test_blank_page_has_no_skew() -> None:
    assert estimate_skew(Image.new("L", (800, 1000), 255)) == 0.0


def test_faint_scan_is_stretched_and_normal_scan_left_alone() -> None:
    scan = small_scan(dpi=150)
    faint = distort(scan.image, faint=True)
    lo, hi = faint.getextrema()
    assert hi - lo < 100
    lo2, hi2 = normalise_contrast(faint).getextrema()
    assert hi2 - lo2 > 200
    assert normalise_contrast(scan.image).tobytes() == scan.image.tobytes()


def test_unskew_maps_a_point_back_onto_the_skewed_ink() -> None:
    # A dot drawn on a straight page, then the page skewed: mapping the dot's straight
    # position through unskew_words must land on the dot in the skewed image.
    size = (1000, 800)
    page = Image.new("L", size, 255)
    page.paste(0, (700, 200, 706, 206))
    skewed = page.rotate(3.0, fillcolor=255)
    ys, xs = zip(
        *[(y, x) for y in range(800) for x in range(1000) if skewed.getpixel((x, y)) < 128],
        strict=True,
    )
    dot = (sum(xs) / len(xs), sum(ys) / len(ys))
    word = Word("x", 90, Box(700, 200, 706, 206), (703, 203), 6, 6)
    (mapped,) = unskew_words((word,), 3.0, size)
    assert mapped.origin == pytest.approx(dot, abs=1.5)
    assert mapped.angle == 3.0


@pytest.mark.parametrize("turned", [0, 90, 180, 270])
@pytest.mark.parametrize("skew", [0.0, 3.0])
def test_orientation_is_guessed_from_the_ink(turned: int, skew: float) -> None:
    page = distort(draw_page(page_lines(5, 20), dpi=120).image, skew=skew, rotate=turned)
    assert guess_orientation(page) == (360 - turned) % 360


def test_no_guess_without_lines_of_text() -> None:
    assert guess_orientation(Image.new("L", (800, 1000), 255)) is None
    assert guess_orientation(_marker_only()) is None


def _marker_only() -> Image.Image:
    return draw_marker(Image.new("L", (850, 1100), 255))


@pytest.mark.parametrize("turned", [0, 90, 180, 270])
def test_text_page_is_read_once_at_the_guessed_turn(turned: int) -> None:
    page = draw_marker(small_scan(dpi=100).image)
    fix = (360 - turned) % 360
    engine = FakeOcrEngine(require_marker=True, orientation=(0, 9.0))
    reading = OcrStage(engine)(rotate_cw(page, turned), 100)
    assert reading.rotation == fix
    assert reading.size == page.size
    assert len(engine.calls) == 1  # no wasted reading
    assert engine.orientation_calls == 0  # and no engine detector needed
    assert not is_garbage(reading.result)


@pytest.mark.parametrize("turned", [90, 180, 270])
def test_unclear_page_asks_the_engine_detector(turned: int) -> None:
    fix = (360 - turned) % 360
    engine = FakeOcrEngine(require_marker=True, orientation=(fix, 4.0))
    reading = OcrStage(engine)(rotate_cw(_marker_only(), turned), 100)
    assert reading.rotation == fix
    assert engine.orientation_calls == 1
    assert len(engine.calls) == 1


def test_unsure_engine_detector_is_ignored() -> None:
    engine = FakeOcrEngine(require_marker=True, orientation=(90, 0.5))
    reading = OcrStage(engine)(_marker_only(), 100)
    assert reading.rotation == 0
    assert len(engine.calls) == 1


def test_wrong_orientation_guess_falls_back_to_trying_the_others() -> None:
    engine = FakeOcrEngine(require_marker=True, orientation=(90, 1.0))  # a bad guess
    reading = OcrStage(engine)(rotate_cw(_marker_only(), 180), 100)
    assert reading.rotation == 180
    assert not is_garbage(reading.result)


def test_unreadable_page_returns_best_effort_after_all_turns() -> None:
    engine = FakeOcrEngine(require_marker=True, orientation=None)
    reading = OcrStage(engine)(small_scan(dpi=100).image, 100)  # no marker: never readable
    assert is_garbage(reading.result)
    assert len(engine.calls) == 5  # four turns, then the best one with adaptive thresholds
    assert engine.orientation_calls == 1  # consulted once the profile guess read as garbage
