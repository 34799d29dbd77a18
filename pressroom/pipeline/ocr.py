"""The OCR stage: make the page upright and straight for recognition, read it, map words back.

Over 500 lines: the OCR port, the maths that make a page upright and level, and the stage that
uses both: one walk of a page, read top to bottom."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Protocol

import cv2
import numpy as np
from PIL import Image

from pressroom.engines.orientation import Orientation
from pressroom.engines.straighten import STRAIGHTEN_MIN, level
from pressroom.models import Box, OcrResult, Word
from pressroom.pipeline.resolution import (
    TextSize,
    choose_scale,
    enlarge_words,
    measure_text,
    reduce,
)

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
        self,
        image: Image.Image,
        *,
        dpi: float,
        timeout: float | None = None,
        adaptive: bool = False,
    ) -> OcrResult: ...

    def detect_orientation(
        self, image: Image.Image, *, dpi: float
    ) -> Orientation | tuple[int, float] | None: ...


def engine_for(engine: OcrEngine, languages: tuple[str, ...]) -> OcrEngine:
    """``engine`` reading a job's ``languages``: ``with_languages`` where the engine has it
    (Tesseract: checks the data is installed, ``UNSUPPORTED_LANGUAGE`` if not); an engine that
    reads one way (the tests' fakes) as it is."""
    pick = getattr(engine, "with_languages", None)
    if not languages or pick is None:
        return engine
    chosen: OcrEngine = pick(tuple(languages))
    return chosen


@dataclass(frozen=True, slots=True)
class PageReading:
    """The best reading of one page, in the upright (rotated, not deskewed) pixel frame."""

    result: OcrResult
    rotation: int  # clockwise degrees applied to the page to make it upright
    skew: float  # counter-clockwise degrees of the text lines in the upright frame
    size: tuple[int, int]  # upright image size in pixels
    attempts: int  # whole-page readings made (the small probes of other turns not counted)
    # Degrees the upright pixels were turned clockwise to level the lines, when the stage
    # straightens: the words are then in that levelled frame, and ``image`` is what was read.
    straightened: float = 0.0
    image: Image.Image | None = None
    # ``image`` holds the page's own grey values (no contrast stretch, no tiles): an output may
    # use it as the levelled scan instead of turning the source's pixels a second time.
    unaltered: bool = False
    # No reading said which way is up (garbage at every turn, the detector unsure): the page
    # keeps the turn it came with (``rotation`` 0), and is not reported turned.
    turn_unsure: bool = False
    # Seconds spent straightening where a reading levelled the page (turning its image level,
    # mapping the words back), every reading made counted: the caller's ``straighten`` stage
    # time, not its OCR's. 0.0 where nothing was levelled.
    levelling_s: float = 0.0


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


@dataclass(frozen=True, slots=True)
class _Ink:
    """Dark pixel coordinates of a reduced, binarised page: what layout measures work on."""

    ys: np.ndarray
    xs: np.ndarray
    shape: tuple[int, int]

    @classmethod
    def of(cls, image: Image.Image) -> _Ink | None:
        gray = image if image.mode == "L" else image.convert("L")
        factor = max(1, max(gray.size) // 1100)
        a = np.asarray(gray.reduce(factor) if factor > 1 else gray, dtype=np.uint8)
        hist = np.bincount(a.ravel(), minlength=256).astype(np.float64)
        dark = a < _otsu(hist)
        # Print is thin strokes on a light ground. Dark areas (the desk around a photographed
        # page, a scanner lid's shadow, a photo, a black box) are not text: their mass would
        # outweigh the lines' profile and pin the angle at 0. A dark pixel counts only where
        # most of its neighbourhood is light.
        k = max(9, round(min(a.shape) / 60))
        around = cv2.blur(dark.astype(np.float32), (k, k))
        ys, xs = np.nonzero(dark & (around < 0.5))
        if ys.size < 200 or ys.size > 0.5 * a.size:
            return None
        if ys.size > 120_000:
            pick = np.random.default_rng(0).choice(ys.size, 120_000, replace=False)
            ys, xs = ys[pick], xs[pick]
        return cls(ys.astype(np.float64), xs.astype(np.float64), (a.shape[0], a.shape[1]))

    def profile(self, angle: float, *, across: bool = False) -> np.ndarray:
        """Ink per line of the page, lines tilted by ``angle``; ``across`` for vertical lines."""
        along, other = (self.xs, self.ys) if across else (self.ys, self.xs)
        t = math.tan(math.radians(angle))
        offset = self.shape[1] + self.shape[0]
        proj = np.round(along + other * t).astype(np.int64) + offset
        return np.bincount(proj, minlength=2 * offset + sum(self.shape))

    def best_angle(self, *, across: bool = False, max_angle: float = 10.0) -> tuple[float, float]:
        """The tilt whose profile is sharpest, and that sharpness (mean square over square mean)."""

        def sharpness(angle: float) -> float:
            counts = self.profile(float(angle), across=across).astype(np.float64)
            return float(np.dot(counts, counts))

        coarse = np.arange(-max_angle, max_angle + 0.01, 0.5)
        best = max(coarse, key=sharpness)
        fine = np.arange(best - 0.5, best + 0.51, 0.1)
        angle = round(float(max(fine, key=sharpness)), 2)
        counts = self.profile(angle, across=across).astype(np.float64)
        used = counts[counts > 0]
        peaky = float((used**2).mean() / used.mean() ** 2) if used.size else 0.0
        return angle, peaky


def estimate_skew(image: Image.Image, *, max_angle: float = 10.0) -> float:
    """Counter-clockwise angle (degrees) of the text lines, by projection-profile sharpness."""
    ink = _Ink.of(image)
    return 0.0 if ink is None else ink.best_angle(max_angle=max_angle)[0]


def _ascender_ratio(profile: np.ndarray) -> float:
    """Ink above each line's x-height band over ink below it, summed over the lines.

    Latin text has far more ascenders (b d f h k l t, capitals) than descenders (g j p q y):
    upright lines give a ratio well above 1, upside-down lines well below.
    """
    if profile.size == 0 or profile.max() == 0:
        return 1.0
    on = profile > 0.08 * profile.max()
    edges = np.flatnonzero(np.diff(np.concatenate(([0], on.astype(np.int8), [0]))))
    above = below = 0.0
    for start, stop in zip(edges[::2], edges[1::2], strict=True):
        run = profile[start:stop]
        if run.size < 4:
            continue
        band = np.flatnonzero(run >= 0.5 * run.max())
        above += float(run[: band[0]].sum())
        below += float(run[band[-1] + 1 :].sum())
    return (above + 1.0) / (below + 1.0)


def guess_orientation(
    image: Image.Image, *, min_axis_margin: float = 1.2, min_updown_margin: float = 1.8
) -> int | None:
    """A cheap orientation guess from ink profiles: the clockwise turn that makes it upright.

    Lines run along the axis whose profile is sharper; which way up follows from ascenders
    outnumbering descenders. ~40 ms a page against ~160 ms for Tesseract's detector. None when
    the page gives no clear answer (little text, all capitals, pictures, tables): then the
    engine's own detector decides.
    """
    return orientation_and_skew(
        image, min_axis_margin=min_axis_margin, min_updown_margin=min_updown_margin
    )[0]


def orientation_and_skew(
    image: Image.Image, *, min_axis_margin: float = 1.2, min_updown_margin: float = 1.8
) -> tuple[int | None, float | None]:
    """``guess_orientation`` and, from the same profiles, the skew of the page as it is
    (``estimate_skew`` of the unturned page, without measuring it twice; None: no ink)."""
    ink = _Ink.of(image)
    if ink is None:
        return None, None
    row_angle, row_peaky = ink.best_angle()
    turn = _turn(ink, row_angle, row_peaky, min_axis_margin, min_updown_margin)
    return turn, row_angle


def _turn(
    ink: _Ink, row_angle: float, row_peaky: float, min_axis_margin: float, min_updown_margin: float
) -> int | None:
    col_angle, col_peaky = ink.best_angle(across=True)
    horizontal = row_peaky >= col_peaky
    axis_margin = max(row_peaky, col_peaky) / max(min(row_peaky, col_peaky), 1e-9)
    if horizontal:
        ratio = _ascender_ratio(ink.profile(row_angle))
        turn = 0 if ratio > 1 else 180
    else:
        ratio = _ascender_ratio(ink.profile(col_angle, across=True))
        turn = 90 if ratio > 1 else 270
    if axis_margin < min_axis_margin or max(ratio, 1 / ratio) < min_updown_margin:
        return None
    return turn


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


def level_words(words: tuple[Word, ...], angle: float, size: tuple[int, int]) -> tuple[Word, ...]:
    """Words of the upright page moved onto it levelled by ``angle`` (clockwise degrees)."""
    return unskew_words(words, -angle, size)


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


# A band this share of the page's height, from its first inked row: a few whole lines
PROBE_SHARE = 0.1
# One turn's band reads clearly better than every other's by at least this factor (quality)
CLEAR_MARGIN = 1.5
# ...and holds at least this many dictionary words where its reading is still garbage
CLEAR_WORDS = 3


def probe_band(upright: Image.Image) -> Image.Image:
    """``upright`` with only a band across its lines left, from its first inked row down a
    tenth of the page, the rest blank paper: a few whole lines, about the same amount of text
    under each turn, in the page's own frame (recognition costs what the band's lines cost:
    blank paper is found blank at once)."""
    gray = upright if upright.mode == "L" else upright.convert("L")
    band = max(1, round(gray.height * PROBE_SHARE))
    rows = np.flatnonzero((np.asarray(gray) < 128).mean(axis=1) > 0.002)
    top = 0 if rows.size == 0 else max(0, int(rows[0]) - band // 20)
    top = max(0, min(top, gray.height - band))
    out = Image.new("L", gray.size, 255)
    out.paste(gray.crop((0, top, gray.width, top + band)), (0, top))
    return out


def clear_winner(readings: dict[int, OcrResult]) -> int | None:
    """The turn whose reading is clearly the best of them all, or None where none is: every
    turn garbage of about the same quality (a script the languages do not read, a page of
    pictures) is no evidence of which way is up."""
    ranked = sorted(readings.items(), key=lambda kv: quality(kv[1]), reverse=True)
    if not ranked:
        return None
    turn, best = ranked[0]
    runner = quality(ranked[1][1]) if len(ranked) > 1 else 0.0
    if quality(best) <= 0.0 or quality(best) < CLEAR_MARGIN * runner:
        return None
    if is_garbage(best) and best.dictionary_words < CLEAR_WORDS:
        return None
    return turn


@dataclass(frozen=True, slots=True)
class OcrStage:
    """Read a page once, at the turn the page's layout suggests; other turns only when that
    reading is garbage.

    The guess comes from ink profiles (~40 ms), or from the engine's orientation detector
    (~160 ms) when the profiles are unclear. Either is far cheaper than the whole wasted
    recognition (~1.4 s) that reading first would cost on each page fed upside down or sideways.
    """

    engine: OcrEngine
    # Skews from this size up are levelled for recognition. Tesseract reads small skews of
    # clean print nearly as well on its own (0 % CER at 1.5°, 0.4 % at 2.5°), but faint print
    # skewed by 0.6° read 4.6 % against 0.5 % levelled, and levelling costs ~50 ms a page.
    deskew_threshold: float = STRAIGHTEN_MIN
    # Set (degrees): skews from this size up are levelled for good, the words stay in the
    # levelled frame and the reading carries the levelled image. None: the scan is kept as it
    # is; only larger skews are levelled, for recognition alone, and the words mapped back.
    straighten_min: float | None = None
    osd_dpi: float = 150.0
    min_osd_confidence: float = 2.0  # below this the detector is guessing: read as scanned
    # Where every turn reads as garbage, the detector alone turns the page, and only when it is
    # this sure (measured: 5.5-5.8 on a Georgian scan turned a quarter or a half, 2.2-2.5 on
    # upright pages of scripts it does not know, where it was wrong as often as right).
    min_unread_osd_confidence: float = 4.0
    # Read each page at the scale its print needs (``resolution.choose_scale``: print under
    # 20 px x-height, or ink within 110 grey levels of paper, keeps every pixel); the words come
    # back in the page's own pixel frame.
    fit_resolution: bool = False
    # A page with no ink beyond noise is not read at all (no orientation, no recognition).
    skip_blank: bool = False

    def __call__(
        self, image: Image.Image, dpi: float, *, timeout: float | None = None
    ) -> PageReading:
        gray = image if image.mode == "L" else image.convert("L")
        size = measure_text(gray) if self.fit_resolution or self.skip_blank else None
        if self.skip_blank and size is not None and size.blank:
            return PageReading(
                result=OcrResult(words=(), mean_confidence=0.0),
                rotation=0,
                skew=0.0,
                size=image.size,
                attempts=0,
            )
        base = normalise_contrast(gray)
        # faint print keeps its pixels: its strokes are what fade (measured by the ink's
        # contrast, not by the stretch: an unevenly lit photo is stretched too, and reads
        # reduced as well as any page)
        fit = size if self.fit_resolution and size is not None and not size.faint else None
        guess, skew = orientation_and_skew(base)
        # the rows' angle of the page as it is is its skew read unturned, and upside down (a
        # half turn keeps every line's slope)
        known = skew if skew is not None else 0.0
        self_skew = {0: known, 180: known}
        detected: Orientation | None = None
        asked_engine = guess is None
        if guess is None:
            detected = self._detect(base, dpi)
            guess = self._sure_turn(detected, self._is_sure(detected, self.min_osd_confidence))
        unaltered = base is image
        first = self._read(base, dpi, guess, timeout, unaltered=unaltered, skews=self_skew, fit=fit)
        if not is_garbage(first.result):
            return first
        levelling = first.levelling_s
        # Garbage at the turn chosen. Other turns are compared on a band of a few lines each,
        # not read whole: a page in a script the languages do not read is garbage at every
        # turn, and four whole readings of garbage cost seconds for nothing. The bands are
        # read at the scale the page's print needs even where the page is read at every pixel
        # (a redaction's pass one): they choose a turn, and their words are kept nowhere (four
        # bands at every pixel cost about a whole reading of the page).
        if size is None:
            size = measure_text(gray)
        band_fit = size if fit is None and not size.faint else fit
        if not asked_engine:
            detected = self._detect(base, dpi)
        # the detector saw a script none of the languages reads: no turn can read better
        winner = None
        probes: dict[int, OcrResult] = {}
        if detected is None or not detected.foreign:
            probes = {
                rotation: self._probe(base, dpi, rotation, timeout, fit=band_fit)
                for rotation in ROTATIONS
            }
            winner = clear_winner(probes)
            if (
                winner is not None
                and is_garbage(probes[winner])
                and detected is not None
                and detected.turn != winner
            ):
                # a band of garbage with a few words in it is weak evidence: it wins only
                # where the detector, sure or not, does not point at another turn (a map's
                # labels read upside down once gave "LOT" and "an" and turned it over)
                winner = None
        # Garbage under every turn, none clearly better: the best garbage is no answer. The
        # detector decides only when it is sure; otherwise the page keeps the turn it came with.
        sure = self._is_sure(detected, self.min_unread_osd_confidence)
        target = winner if winner is not None else self._sure_turn(detected, sure)
        unsure = winner is None and not sure
        best = first
        attempts = 1
        if target != guess:
            del first
            best = self._read(
                base, dpi, target, timeout, unaltered=unaltered, skews=self_skew, fit=fit
            )
            levelling += best.levelling_s
            attempts += 1
        if is_garbage(best.result) and not (detected is not None and detected.foreign):
            # Nothing readable with one global threshold: text on a tinted or uneven ground
            # (a highlighter, a translucent box) binarises to a solid block. Tiles, once more,
            # on the page as it was: stretching its grey range is what made the tint dark. Tried
            # on a band first: a whole page read again only where tiles read clearly better
            # (a script the languages do not read is garbage with tiles too).
            gray = image if image.mode == "L" else image.convert("L")
            rotation = best.rotation
            tiled = self._probe(gray, dpi, rotation, timeout, fit=band_fit, adaptive=True)
            # against the same band as the reading kept has it (the stretched page: a stretch
            # can be what spoilt it, and the tiles read the page unstretched)
            kept = probes.get(rotation)
            if kept is None:
                kept = self._probe(base, dpi, rotation, timeout, fit=band_fit)
            # where both bands read nothing at all the band may have missed the lines (it
            # starts at the first dark row: a tinted panel's edge, say): the whole page is
            # read again, as it was before bands
            if (not tiled.words and not kept.words) or clear_winner({1: tiled, 0: kept}) == 1:
                again = self._read(
                    gray, dpi, rotation, timeout, adaptive=True, unaltered=gray is image
                )
                levelling += again.levelling_s
                attempts += 1
                if quality(again.result) > quality(best.result):
                    best = again
        return replace(best, attempts=attempts, turn_unsure=unsure, levelling_s=levelling)

    def read_as_is(
        self,
        image: Image.Image,
        dpi: float,
        *,
        timeout: float | None = None,
        fit: TextSize | None = None,
    ) -> PageReading:
        """Read without turning the page (its own text already says which way is up); ``fit``:
        the size of its print (``measure_text``), read at the scale that print needs."""
        base = normalise_contrast(image)
        return self._read(base, dpi, 0, timeout, unaltered=base is image, fit=fit)

    def _detect(self, base: Image.Image, dpi: float) -> Orientation | None:
        factor = max(1, round(dpi / self.osd_dpi))
        found = self.engine.detect_orientation(base.reduce(factor), dpi=dpi / factor)
        if found is None or isinstance(found, Orientation):
            return found
        return Orientation(found[0], found[1])

    @staticmethod
    def _is_sure(found: Orientation | None, least: float) -> bool:
        """Whether the detector answered at least ``least`` sure."""
        return found is not None and found.confidence >= least

    @staticmethod
    def _sure_turn(found: Orientation | None, sure: bool) -> int:
        """The detector's turn where it is ``sure``; else the page's own (0)."""
        return found.turn if found is not None and sure else 0

    def _probe(
        self,
        base: Image.Image,
        dpi: float,
        rotation: int,
        timeout: float | None,
        *,
        fit: TextSize | None = None,
        adaptive: bool = False,
    ) -> OcrResult:
        """A band of a few lines of the page turned by ``rotation``, read: what turns are
        compared on (a tenth of the page costs about a tenth of a reading). Every turn is read
        at the scale the page's lines allow: across them (a wrong quarter turn) there is no
        x-height to measure, and a band read at every pixel costs a whole reading."""
        band = probe_band(rotate_cw(base, rotation))
        scale = 1.0
        if fit is not None:
            scale = min(choose_scale(fit.xheight(turn), dpi) for turn in (rotation, rotation + 90))
        seen = reduce(band, scale) if scale < 1.0 else band
        return self.engine.recognize(
            seen, dpi=dpi * seen.width / band.width, timeout=timeout, adaptive=adaptive
        )

    def _read(
        self,
        base: Image.Image,
        dpi: float,
        rotation: int,
        timeout: float | None,
        *,
        adaptive: bool = False,
        unaltered: bool = False,
        skews: dict[int, float] | None = None,
        fit: TextSize | None = None,
    ) -> PageReading:
        upright = rotate_cw(base, rotation)
        known = (skews or {}).get(rotation)
        skew = known if known is not None else estimate_skew(upright)
        keep = self.straighten_min is None
        # Below the threshold the engine reads the sloped lines itself and reports their slope.
        threshold = self.deskew_threshold if keep else self.straighten_min
        applied = skew if threshold is not None and abs(skew) >= threshold else 0.0
        started = time.perf_counter()
        straight = level(upright, applied)
        levelling = time.perf_counter() - started if applied else 0.0
        scale = 1.0 if fit is None else choose_scale(fit.xheight(rotation), dpi)
        seen = reduce(straight, scale) if scale < 1.0 else straight
        result = self.engine.recognize(
            seen, dpi=dpi * seen.width / straight.width, timeout=timeout, adaptive=adaptive
        )
        if seen is not straight:
            result = replace(result, words=enlarge_words(result.words, seen.size, straight.size))
        if keep and applied:
            started = time.perf_counter()
            result = replace(result, words=unskew_words(result.words, applied, upright.size))
            levelling += time.perf_counter() - started
        return PageReading(
            result=result,
            rotation=rotation,
            skew=skew,
            size=upright.size,
            attempts=1,
            straightened=0.0 if keep else applied,
            image=straight if applied and not keep else None,
            unaltered=unaltered and not keep,
            levelling_s=levelling,
        )
