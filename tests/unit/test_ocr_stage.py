"""The OCR stage's own logic: skew, orientation, mapping words back. The engine is a fake."""

from __future__ import annotations

import random

import pytest
from PIL import Image

from pressroom.engines.orientation import Orientation
from pressroom.models import Box, OcrResult, Word
from pressroom.pipeline.ocr import (
    OcrStage,
    clear_winner,
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


def test_unreadable_page_keeps_its_turn_after_cheap_probes_of_the_others() -> None:
    engine = FakeOcrEngine(require_marker=True, orientation=None)
    page = small_scan(dpi=100).image  # no marker: garbage at every turn
    reading = OcrStage(engine)(page, 100)
    assert is_garbage(reading.result)
    # the best garbage is no answer: the page keeps the turn it came with, and says so
    assert reading.rotation == 0 and reading.turn_unsure
    # one whole reading; the other turns were compared on a band of lines each (the rest of
    # the page blank), and tiles tried on a band before any whole reading with them
    assert reading.attempts == 1
    assert engine.orientation_calls == 1  # consulted once the profile guess read as garbage
    assert len(engine.calls) == 1 + 4 + 1


def test_a_page_read_at_every_pixel_compares_its_turns_on_bands_read_reduced() -> None:
    """A redaction's pass one reads the page at every pixel (``fit_resolution`` off); where
    that reading is garbage (a bank statement of capitals and figures), the turns are compared
    on bands read at the scale the page's print needs, as a plain job compares them: the
    bands choose a turn, and their words are kept nowhere. The page itself is read again, at
    another turn, only at every pixel."""
    engine = FakeOcrEngine(require_marker=True, orientation=None)
    page = small_scan(dpi=300).image  # 12 pt print at 300 dpi; no marker: garbage
    reading = OcrStage(engine)(page, 300)
    assert is_garbage(reading.result) and reading.attempts == 1
    whole, *bands = engine.calls
    assert whole == page.size
    assert len(bands) == 4 + 1 and all(w < page.width for w, _h in bands)
    # a page that reads at another turn is read again there at every pixel
    turned = FakeOcrEngine(require_marker=True, orientation=None)
    marked = rotate_cw(_marker_only(), 180)
    again = OcrStage(turned)(marked, 300)
    assert again.rotation == 180 and not is_garbage(again.result)
    assert turned.calls[0] == turned.calls[-1] == marked.size


def test_a_sure_detector_turns_a_page_that_reads_as_garbage_at_every_turn() -> None:
    engine = FakeOcrEngine(require_marker=True, orientation=(180, 6.0))
    reading = OcrStage(engine)(small_scan(dpi=100).image, 100)
    assert reading.rotation == 180 and not reading.turn_unsure


def _speckles() -> Image.Image:
    """Ink in no lines: the profiles guess no turn, the detector is asked first."""
    page = Image.new("L", (850, 1100), 255)
    rng = random.Random(7)
    for _ in range(400):
        x, y = rng.randrange(20, 830), rng.randrange(20, 1080)
        page.paste(0, (x, y, x + 3, y + 3))
    return page


def test_a_half_sure_detector_does_not_turn_a_page_that_reads_as_garbage() -> None:
    page = _speckles()
    assert guess_orientation(page) is None
    # sure enough to read at its turn first (>= 2), not to turn a page no reading confirms
    engine = FakeOcrEngine(require_marker=True, orientation=(180, 3.0))
    reading = OcrStage(engine)(page, 100)
    assert reading.rotation == 0 and reading.turn_unsure
    assert reading.attempts == 2  # its turn, then the page's own


class _ForeignScript(FakeOcrEngine):
    """A detector that saw, with confidence, a script the engine's languages do not read."""

    def detect_orientation(self, image: Image.Image, *, dpi: float) -> Orientation | None:
        self.orientation_calls += 1
        return Orientation(180, 9.0, "Han", 5.0, foreign=True)


def test_a_script_the_languages_do_not_read_is_not_tried_at_other_turns() -> None:
    engine = _ForeignScript(require_marker=True)
    reading = OcrStage(engine)(small_scan(dpi=100).image, 100)
    assert reading.rotation == 180 and not reading.turn_unsure
    # no band of the other turns is read, nor tiles tried: under each it would be the same
    # garbage. The page at the profiles' turn, then at the detector's.
    assert reading.attempts == 2
    assert len(engine.calls) == 2


def _reading(confidence: float, words: int, dictionary: int) -> OcrResult:
    found = tuple(
        Word("word", confidence, Box(10 * i, 0, 10 * i + 8, 10), (10 * i, 8), 8, 8)
        for i in range(words)
    )
    return OcrResult(found, confidence, dictionary, words)


@pytest.mark.parametrize(
    ("readings", "winner"),
    [
        # one turn reads, the others are garbage
        ({0: _reading(12, 1, 0), 90: _reading(12, 1, 0), 180: _reading(90, 20, 18)}, 180),
        # garbage of the same quality everywhere: no winner, whatever is a hair better
        ({0: _reading(30, 20, 1), 180: _reading(31, 20, 1), 90: _reading(29, 20, 1)}, None),
        # garbage, far better at one turn, but hardly a real word in it: no winner
        ({0: _reading(45, 30, 2), 180: _reading(10, 5, 0)}, None),
        # faint print: garbage by confidence, yet real words, and far better than the others
        ({0: _reading(45, 30, 20), 180: _reading(15, 10, 0)}, 0),
        # nothing at all anywhere
        ({0: OcrResult((), 0.0), 180: OcrResult((), 0.0)}, None),
    ],
)
def test_a_turn_wins_only_clearly(readings: dict[int, OcrResult], winner: int | None) -> None:
    assert clear_winner(readings) == winner


@pytest.mark.parametrize(("detector", "turned"), [(0, 0), (180, 180), (None, 180)])
def test_a_garbage_band_with_a_few_words_wins_only_where_the_detector_agrees(
    detector: int | None, turned: int
) -> None:
    """A map's labels read upside down gave a band of garbage with a few short words ("LOT",
    "an") that beat the others, and the upright map was turned over while the detector, not
    sure, said it was upright (OCRmyPDF's palette.pdf). Such a band wins only where the
    detector does not point at another turn."""
    engine = FakeOcrEngine(
        require_marker=True,
        confidence=40.0,  # garbage by confidence, with real words in it
        lines=("Bay of the old harbour town",),
        orientation=None if detector is None else (detector, 3.0),
    )
    reading = OcrStage(engine)(rotate_cw(_marker_only(), 180), 100)
    assert reading.rotation == turned
    assert reading.turn_unsure == (turned == 0)
