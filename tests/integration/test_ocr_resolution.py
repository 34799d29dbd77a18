"""Real Tesseract reading at the scale each page's print needs: words where they are drawn,
small and faint print read at full resolution, blank pages never read, CER no worse."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
from PIL import Image

from pressroom.engines.tesseract import TesseractEngine
from pressroom.models import OcrResult
from pressroom.pipeline.ocr import OcrStage
from pressroom.synth import distort, draw_page, page_lines
from tests.helpers import cer, small_scan

pytestmark = pytest.mark.integration


@dataclass
class Counting:
    """The real engine, recording the size of every image it is shown."""

    engine: TesseractEngine
    shown: list[tuple[int, int]] = field(default_factory=list)
    orientations: int = 0

    @property
    def name(self) -> str:
        return self.engine.name

    def recognize(
        self,
        image: Image.Image,
        *,
        dpi: float,
        timeout: float | None = None,
        adaptive: bool = False,
    ) -> OcrResult:
        self.shown.append(image.size)
        return self.engine.recognize(image, dpi=dpi, timeout=timeout, adaptive=adaptive)

    def detect_orientation(self, image: Image.Image, *, dpi: float) -> tuple[int, float] | None:
        self.orientations += 1
        return self.engine.detect_orientation(image, dpi=dpi)


def _fit(engine: Counting) -> OcrStage:
    return OcrStage(engine, fit_resolution=True, skip_blank=True)


def _ink_box(image: Image.Image, box: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    """The tight box of the ink drawn inside ``box`` (Pillow's text box has side bearings)."""
    x0, y0, x1, y1 = box
    a = np.asarray(image.crop((x0 - 4, y0 - 4, x1 + 4, y1 + 4))) < 128
    ys, xs = np.nonzero(a)
    return (
        x0 - 4 + int(xs.min()),
        y0 - 4 + int(ys.min()),
        x0 - 4 + int(xs.max()) + 1,
        y0 - 4 + int(ys.max()) + 1,
    )


def test_words_read_reduced_land_where_they_are_drawn(engine: TesseractEngine) -> None:
    scan = draw_page(page_lines(11, 12), dpi=300, font_pt=11.0, height_in=6.0)
    counting = Counting(engine)
    reading = _fit(counting)(scan.image, 300.0)
    ((w, _h),) = counting.shown
    assert w < 0.6 * scan.image.width  # read reduced
    drawn: dict[str, list[tuple[int, int, int, int]]] = {}
    for text, box in scan.word_boxes:
        drawn.setdefault(text, []).append(_ink_box(scan.image, box))
    matched = tops = 0
    for word in reading.result.words:
        places = drawn.get(word.text)
        if not places:
            continue
        near = min(places, key=lambda b: abs(b[0] - word.box.x0) + abs(b[1] - word.box.y0))
        # left, right and baseline side within a few pixels of the ink, every word
        got = (word.box.x0, word.box.x1, word.box.y1)
        assert got == pytest.approx((near[0], near[2], near[3]), abs=3.0), word.text
        # the top too, but an i's dot may stand apart from its word when read reduced
        tops += abs(word.box.y0 - near[1]) <= 3.0
        matched += 1
    assert matched >= 0.9 * len(scan.word_boxes)
    assert tops >= 0.95 * matched


@pytest.mark.parametrize("pt", [8.0, 7.5])
def test_small_print_is_read_at_full_resolution(pt: float, engine: TesseractEngine) -> None:
    scan = draw_page(page_lines(12, 10), dpi=300, font_pt=pt, height_in=4.0)
    counting = Counting(engine)
    reading = _fit(counting)(scan.image, 300.0)
    assert counting.shown == [scan.image.size]
    assert cer(scan.text, reading.result.text) <= 0.02


def test_a_blank_page_is_never_recognised(engine: TesseractEngine) -> None:
    rng = np.random.default_rng(3)
    paper = Image.fromarray(np.clip(rng.normal(238, 5, (3300, 2550)), 0, 255).astype(np.uint8))
    counting = Counting(engine)
    reading = _fit(counting)(paper, 300.0)
    assert counting.shown == []
    assert counting.orientations == 0
    assert reading.result.words == ()


def test_a_faint_page_is_still_read(engine: TesseractEngine) -> None:
    scan = small_scan(seed=4)
    faint = distort(scan.image, faint=True, noise=0.002, seed=4)
    counting = Counting(engine)
    reading = _fit(counting)(faint, 300.0)
    assert counting.shown == [faint.size]  # faint print keeps its pixels
    assert cer(scan.text, reading.result.text) <= 0.02


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_reading_reduced_is_no_worse_than_reading_every_pixel(
    seed: int, engine: TesseractEngine
) -> None:
    scan = small_scan(seed=seed)
    native = OcrStage(engine)(scan.image, 300.0)
    counting = Counting(engine)
    fitted = _fit(counting)(scan.image, 300.0)
    ((w, _h),) = counting.shown
    assert w < scan.image.width
    assert cer(scan.text, fitted.result.text) <= cer(scan.text, native.result.text) + 0.002
    assert cer(scan.text, fitted.result.text) <= 0.02


@pytest.mark.parametrize(
    "defect",
    [{"skew": 2.5}, {"skew": -1.0}, {"rotate": 90}, {"rotate": 180}, {"rotate": 270}],
    ids=["skew-2.5", "skew-minus-1", "turned-90", "turned-180", "turned-270"],
)
def test_turned_and_skewed_pages_read_reduced_land_where_read_natively(
    defect: dict[str, float], engine: TesseractEngine
) -> None:
    scan = draw_page(page_lines(13, 10), dpi=300, font_pt=11.0, height_in=5.0)
    page = distort(scan.image, **defect)  # type: ignore[arg-type]
    native = OcrStage(engine)(page, 300.0)
    counting = Counting(engine)
    fitted = _fit(counting)(page, 300.0)
    assert counting.shown[-1][0] < 0.6 * max(page.size)  # read reduced
    assert (fitted.rotation, fitted.size) == (native.rotation, native.size)
    assert fitted.skew == pytest.approx(native.skew, abs=0.05)
    assert cer(scan.text, fitted.result.text) <= 0.02
    theirs = {}
    for w in native.result.words:
        theirs.setdefault(w.text, []).append(w)
    matched = 0
    for w in fitted.result.words:
        near = min(
            theirs.get(w.text, []),
            key=lambda n: abs(n.box.x0 - w.box.x0) + abs(n.box.y1 - w.box.y1),
            default=None,
        )
        if near is None:
            continue
        assert (w.box.x0, w.box.x1, w.box.y1) == pytest.approx(
            (near.box.x0, near.box.x1, near.box.y1), abs=3.0
        ), w.text
        assert w.origin == pytest.approx(near.origin, abs=3.0)
        matched += 1
    assert matched >= 0.9 * len(native.result.words)
