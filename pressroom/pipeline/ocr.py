"""The OCR stage: make the page upright and straight for recognition, read it, map words back."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
from PIL import Image

from pressroom.models import Box, OcrResult, Word

ROTATIONS = (0, 90, 180, 270)
_TRANSPOSE = {
    90: Image.Transpose.ROTATE_270,  # PIL names counter-clockwise turns
    180: Image.Transpose.ROTATE_180,
    270: Image.Transpose.ROTATE_90,
}


class OcrEngine(Protocol):
    """Reads words from an image. ``TesseractEngine`` in production, ``FakeOcrEngine`` in tests."""

    @property
    def name(self) -> str: ...

    def recognize(
        self, image: Image.Image, *, dpi: float, timeout: float | None = None
    ) -> OcrResult: ...

    def detect_orientation(self, image: Image.Image, *, dpi: float) -> tuple[int, float] | None: ...


@dataclass(frozen=True, slots=True)
class PageReading:
    """The best reading of one page, in the upright (rotated, not deskewed) pixel frame."""

    result: OcrResult
    rotation: int  # clockwise degrees applied to the page to make it upright
    skew: float  # counter-clockwise degrees of the text lines in the upright frame
    size: tuple[int, int]  # upright image size in pixels
    attempts: int


def rotate_cw(image: Image.Image, degrees: int) -> Image.Image:
    degrees %= 360
    return image if degrees == 0 else image.transpose(_TRANSPOSE[degrees])


def normalise_contrast(image: Image.Image) -> Image.Image:
    """Stretch a faint scan's grey range to full scale; leave a well-exposed one alone."""
    gray = image if image.mode == "L" else image.convert("L")
    hist = gray.histogram()
    total = sum(hist)
    if total == 0:
        return gray
    lo = _percentile(hist, total, 0.005)
    hi = _percentile(hist, total, 0.995)
    if hi - lo >= 180 or hi <= lo:
        return gray
    scale = 255.0 / (hi - lo)
    lut = [min(255, max(0, round((v - lo) * scale))) for v in range(256)]
    return gray.point(lut)


def _percentile(hist: list[int], total: int, q: float) -> int:
    target = total * q
    seen = 0
    for value, count in enumerate(hist):
        seen += count
        if seen >= target:
            return value
    return 255


def estimate_skew(image: Image.Image, *, max_angle: float = 10.0) -> float:
    """Counter-clockwise angle (degrees) of the text lines, by projection-profile sharpness."""
    gray = image if image.mode == "L" else image.convert("L")
    factor = max(1, gray.width // 900)
    small = gray.reduce(factor) if factor > 1 else gray
    a = np.asarray(small, dtype=np.uint8)
    hist = np.bincount(a.ravel(), minlength=256).astype(np.float64)
    threshold = _otsu(hist)
    ys, xs = np.nonzero(a < threshold)
    if ys.size < 200 or ys.size > 0.5 * a.size:
        return 0.0
    if ys.size > 150_000:
        pick = np.random.default_rng(0).choice(ys.size, 150_000, replace=False)
        ys, xs = ys[pick], xs[pick]
    ys_f = ys.astype(np.float64)
    xs_f = xs.astype(np.float64)
    height = a.shape[0] + a.shape[1]

    def sharpness(angle: float) -> float:
        t = math.tan(math.radians(angle))
        proj = np.round(ys_f + xs_f * t).astype(np.int64) + a.shape[1]
        counts = np.bincount(proj, minlength=height + a.shape[1])
        return float(np.dot(counts, counts))

    coarse = np.arange(-max_angle, max_angle + 0.01, 0.5)
    best = max(coarse, key=sharpness)
    fine = np.arange(best - 0.5, best + 0.51, 0.1)
    return round(float(max(fine, key=sharpness)), 2)


def _otsu(hist: np.ndarray) -> int:
    total = hist.sum()
    levels = np.arange(256, dtype=np.float64)
    weight_bg = np.cumsum(hist)
    weight_fg = total - weight_bg
    cum_mean = np.cumsum(hist * levels)
    mean_bg = np.divide(cum_mean, weight_bg, out=np.zeros(256), where=weight_bg > 0)
    mean_fg = np.divide(cum_mean[-1] - cum_mean, weight_fg, out=np.zeros(256), where=weight_fg > 0)
    between = weight_bg * weight_fg * (mean_bg - mean_fg) ** 2
    return int(np.argmax(between)) + 1


def unskew_words(words: tuple[Word, ...], skew: float, size: tuple[int, int]) -> tuple[Word, ...]:
    """Map words read on the deskewed image back onto the skewed one they must overlay."""
    if skew == 0.0:
        return words
    cx, cy = size[0] / 2.0, size[1] / 2.0
    th = math.radians(skew)
    cos, sin = math.cos(th), math.sin(th)

    def turn(x: float, y: float) -> tuple[float, float]:
        # counter-clockwise on screen by ``skew``, in y-down pixel coordinates
        dx, dy = x - cx, y - cy
        return cx + dx * cos + dy * sin, cy - dx * sin + dy * cos

    out = []
    for w in words:
        corners = [
            turn(x, y)
            for x, y in (
                (w.box.x0, w.box.y0),
                (w.box.x1, w.box.y0),
                (w.box.x0, w.box.y1),
                (w.box.x1, w.box.y1),
            )
        ]
        xs = [c[0] for c in corners]
        ys = [c[1] for c in corners]
        out.append(
            replace(
                w,
                box=Box(min(xs), min(ys), max(xs), max(ys)),
                origin=turn(*w.origin),
                angle=w.angle + skew,
            )
        )
    return tuple(out)


def is_garbage(result: OcrResult) -> bool:
    """A reading that is no reading: nothing, low confidence, or almost no dictionary words.

    Lines read top to bottom count too: for the languages Pressroom reads, that is a page
    turned a quarter clockwise, and its word boxes cannot carry a horizontal text layer.
    """
    if not result.words or result.vertical:
        return True
    if result.mean_confidence < 50:
        return True
    return result.alpha_words >= 5 and result.dictionary_words / result.alpha_words < 0.25


def quality(result: OcrResult) -> float:
    if not result.words or result.vertical:
        return 0.0
    ratio = result.dictionary_words / result.alpha_words if result.alpha_words else 0.5
    return result.mean_confidence * (0.5 + ratio) * math.log1p(result.real_chars)


@dataclass(frozen=True, slots=True)
class OcrStage:
    """Read a page: upright first, other orientations only when the first reading is garbage."""

    engine: OcrEngine
    deskew_threshold: float = 0.3  # degrees; Tesseract copes with less on its own
    osd_dpi: float = 150.0

    def __call__(
        self, image: Image.Image, dpi: float, *, timeout: float | None = None
    ) -> PageReading:
        base = normalise_contrast(image)
        first = self._read(base, dpi, 0, timeout)
        if not is_garbage(first.result):
            return first
        tried = {0: first}
        order: list[int] = []
        if first.result.vertical:
            order.append(270)
        else:
            factor = max(1, round(dpi / self.osd_dpi))
            found = self.engine.detect_orientation(base.reduce(factor), dpi=dpi / factor)
            if found is not None and found[0] != 0:
                order.append(found[0])
        if first.result.words:
            order += [r for r in ROTATIONS if r not in order and r != 0]
        best = first
        for rotation in order:
            reading = self._read(base, dpi, rotation, timeout)
            tried[rotation] = reading
            if quality(reading.result) > quality(best.result):
                best = reading
            if not is_garbage(reading.result):
                break
        return replace(best, attempts=len(tried))

    def _read(
        self, base: Image.Image, dpi: float, rotation: int, timeout: float | None
    ) -> PageReading:
        upright = rotate_cw(base, rotation)
        skew = estimate_skew(upright)
        if abs(skew) >= self.deskew_threshold:
            straight = upright.rotate(-skew, resample=Image.Resampling.BILINEAR, fillcolor=255)
        else:
            skew = 0.0
            straight = upright
        result = self.engine.recognize(straight, dpi=dpi, timeout=timeout)
        words = unskew_words(result.words, skew, upright.size)
        return PageReading(
            result=replace(result, words=words),
            rotation=rotation,
            skew=skew,
            size=upright.size,
            attempts=1,
        )
