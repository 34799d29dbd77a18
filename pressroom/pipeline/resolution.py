"""How big a page's print is, in pixels: whether it needs reading at all, and at what scale.

Tesseract scales every text line to a fixed height before its recogniser sees it, so pixels
beyond what the glyphs need cost layout time and buy no accuracy (measured on 10-11 pt letter
pages scanned at 300 dpi: 1.16 s a page as scanned, 0.76 s at half the resolution, CER no
worse). Small print is another matter: the choice goes by the glyphs' height in pixels, never
by the nominal resolution, and keeps every pixel of small or faint print.

What the reduction cannot buy: the recogniser's own time is per character, whatever the scale
(a dense 8 pt page spends ~1.0 of its 1.5 s there), so the saving is layout time, about a
quarter of a page's time as scanned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import cv2
import numpy as np
from PIL import Image

from pressroom.models import Box, Word
from pressroom.pixels import bitmap_pixels

# A lowercase letter's height (x-height) in pixels that Tesseract reads as well as any larger:
# 10-11 pt print at 150 dpi (9.5-11 px) read at 0.17 % CER against 0.44 % at 300 dpi.
TARGET_XHEIGHT = 10.5
# Below this x-height the page keeps its pixels: 8 pt at 300 dpi (15-18 px) is read as scanned,
# and so are faxes (16-19 px at 200 dpi). Read at a 12 px x-height, 8 pt pages were 15-20 %
# faster and their words no worse (dev half of tests/scans.py, 3 seeds), but one held-out page
# read 0.4 CER points worse in poppler (1.01 -> 1.42 %; the six other readers alike within
# 0.02): small print keeps every pixel.
KEEP_BELOW_XHEIGHT = 20.0
# Ink this much darker than the paper at most (grey levels) is faint print: worn toner measured
# 58-72 below its paper, every other kind of page 156 or more. Reduced, a faint page lost
# 0.3-0.45 CER points on one page in three where native reading was perfect: it keeps its pixels.
FAINT_CONTRAST = 110.0
# Scales above this save too little to be worth a resampling; below it nothing is reduced.
MIN_SCALE = 0.25
MIN_DPI = 150.0  # the measured table went no lower; nor does the layout it reads
MAX_USEFUL_SCALE = 0.85
# Ink this much darker than the paper counts (grey levels); faint toner is 40-80 below it.
MIN_INK_CONTRAST = 24
# Components shorter than this are specks, JPEG fragments or punctuation, not print anyone
# reads: they must not make the commonest height (a noisy scan's band held 235 of them).
MIN_GLYPH_PX = 6
MIN_GLYPHS = 20  # fewer measured glyphs than this: no estimate, the page keeps its pixels
MIN_BAND_GLYPHS = 12  # a band with fewer (a page number, a rule) says nothing of its print
BANDS = 6  # bands of rows measured, one in each sixth of the page


@dataclass(frozen=True, slots=True)
class TextSize:
    """What a cheap look at a page's ink found."""

    blank: bool  # no ink beyond noise anywhere: nothing to read
    # the commonest glyph height and width in pixels (x-height-like), None when too few glyphs
    # were measured; for a page read turned a quarter, its width is the text's height
    height: float | None = None
    width: float | None = None
    glyphs: int = 0
    # the paper's grey level less the ink's (the darkest 1 % of a coarse sample); 0: unknown
    contrast: float = 0.0

    @property
    def faint(self) -> bool:
        """Worn toner or a light pencil (or no measure of the ink at all): keep every pixel."""
        return self.contrast < FAINT_CONTRAST

    def xheight(self, rotation: int) -> float | None:
        """The x-height of the text once the page is turned clockwise by ``rotation``."""
        return self.width if rotation % 180 == 90 else self.height


def measure_text(image: Image.Image) -> TextSize:
    """Ink components of the page as it is (grey, before any contrast stretch): blank or not,
    and the smallest commonest glyph size of its bands. ~20-40 ms on a 300-dpi letter page:
    blankness on a copy reduced by the darkest pixel of each 4x4 block (no stroke fades,
    however thin), the glyphs' size at full resolution in a band of rows from each sixth of
    the page, the inkiest of its sixth."""
    gray = image if image.mode == "L" else image.convert("L")
    a = np.asarray(gray, dtype=np.uint8)
    if a.shape[0] < 2 or a.shape[1] < 2:  # no neighbours to read noise from: nothing to read
        return TextSize(blank=True)
    # the paper's level and its noise, from a coarse sample (robust: medians). The noise is
    # read from neighbouring samples' differences, which light falling off across a photo
    # does not touch: spread about the page's median, it read a phone photo's vignette as
    # noise 46 levels wide, set the ink threshold at 1 and called a page of print blank.
    sample = a[:: max(1, a.shape[0] // 400), :: max(1, a.shape[1] // 400)]
    paper = float(np.median(sample))
    steps = np.abs(np.diff(sample.astype(np.float32), axis=1))
    spread = float(np.median(steps)) * 1.4826 / math.sqrt(2.0)
    threshold = paper - max(MIN_INK_CONTRAST, 4.0 * spread)
    if threshold <= 0:
        return TextSize(blank=False)  # a dark page: not ours to judge
    pooled = _ink(cv2.erode(a, np.ones((4, 4), np.uint8))[::4, ::4], threshold)
    if _blank(pooled):
        return TextSize(blank=True)
    # glyphs are cut halfway between paper and ink: a highlighter's stroke or a grey tint is
    # lighter than that, and at the paper's edge its noise would outnumber the letters in it
    ink = float(np.percentile(sample, 1.0))
    bands = _glyphs(a, min(threshold, (paper + ink) / 2), pooled.sum(axis=1, dtype=np.int64))
    glyphs = sum(h.size for h, _w in bands)
    # the smallest print of the page decides: a band of footnotes under large body text
    measured = [(_mode(h), _mode(w)) for h, w in bands if h.size >= MIN_BAND_GLYPHS]
    if glyphs < MIN_GLYPHS or not measured:
        return TextSize(blank=False, glyphs=glyphs, contrast=paper - ink)
    return TextSize(
        blank=False,
        height=min(h for h, _w in measured),
        width=min(w for _h, w in measured),
        glyphs=glyphs,
        contrast=paper - ink,
    )


def _ink(a: np.ndarray, threshold: float) -> np.ndarray:
    return (a < threshold).astype(np.uint8)


def _blank(pooled: np.ndarray) -> bool:
    """No ink mark bigger than a speck anywhere on the page."""
    count, _labels, stats, _centres = cv2.connectedComponentsWithStats(pooled, connectivity=8)
    if count <= 1:
        return True
    w = stats[1:, cv2.CC_STAT_WIDTH]
    h = stats[1:, cv2.CC_STAT_HEIGHT]
    # a speck of noise pools to one or two pixels; a glyph of 6 pt at 150 dpi spans more
    return not bool((np.maximum(w, h) >= 2).any())


def _glyphs(
    a: np.ndarray, threshold: float, rows: np.ndarray
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Heights and widths of the glyph-like ink components, band by band: in each sixth of
    the page (top to bottom), the band of rows with the most ink (``rows``: ink per row of the
    4x pooled page)."""
    band = max(128, a.shape[0] // 24)  # taller than any glyph of body text
    limit = max(8, min(band - 2, min(a.shape) // 12))
    tops = list(range(0, max(1, a.shape[0] - band // 2), band))
    ink = [int(rows[top // 4 : (top + band) // 4].sum()) for top in tops]
    groups = np.array_split(np.arange(len(tops)), min(len(tops), BANDS))
    chosen = [int(max(g, key=lambda i: ink[i])) for g in groups if g.size]
    found: list[tuple[np.ndarray, np.ndarray]] = []
    for i in chosen:
        if ink[i] == 0:
            continue
        part = a[tops[i] : tops[i] + band]
        count, _labels, stats, _centres = cv2.connectedComponentsWithStats(
            _ink(part, threshold), connectivity=8
        )
        if count <= 1:
            continue
        x, y = stats[1:, cv2.CC_STAT_LEFT], stats[1:, cv2.CC_STAT_TOP]
        w, h = stats[1:, cv2.CC_STAT_WIDTH], stats[1:, cv2.CC_STAT_HEIGHT]
        area = stats[1:, cv2.CC_STAT_AREA]
        # glyph-like: whole (not cut by the band's edges), not a rule, frame or blot, at most
        # a few letters run together
        glyph = (
            (y > 0)
            & (y + h < part.shape[0])
            & (x > 0)
            & (h >= MIN_GLYPH_PX)
            & (h <= limit)
            & (w >= 2)
            & (w <= 2 * limit)
            & (area >= 0.1 * w * h)
        )
        found.append((h[glyph], w[glyph]))
    return found


def _mode(values: np.ndarray) -> float:
    """The commonest value (lowercase letters without ascenders outnumber the rest), smoothed
    over neighbours so one-pixel jitter does not split the peak."""
    counts = np.bincount(values.astype(np.int64)).astype(np.float64)
    smooth = np.convolve(counts, [1.0, 2.0, 1.0], mode="same")
    return float(np.argmax(smooth))


def choose_scale(xheight: float | None, dpi: float | None = None) -> float:
    """The scale to read a page at, from its x-height in pixels: 1 keeps the pixels.

    Unknown (too few glyphs), small print, and print already near the target keep every
    pixel; larger print is reduced so its x-height comes to ``TARGET_XHEIGHT``, but never below
    ``MIN_DPI`` where the resolution is known: the layout (column gaps, a table's rules) is read
    from the same pixels as the glyphs, and two columns at 108 dpi were read as one."""
    if xheight is None or xheight < KEEP_BELOW_XHEIGHT:
        return 1.0
    floor = MIN_SCALE if not dpi else max(MIN_SCALE, MIN_DPI / dpi)
    scale = max(floor, TARGET_XHEIGHT / xheight)
    return 1.0 if scale > MAX_USEFUL_SCALE else scale


def reduced_size(size: tuple[int, int], scale: float) -> tuple[int, int]:
    return max(1, round(size[0] * scale)), max(1, round(size[1] * scale))


def reduce(image: Image.Image, scale: float) -> Image.Image:
    """``image`` at ``scale`` (area-averaged, as a scanner at the lower resolution sees it)."""
    size = reduced_size(image.size, scale)
    if size == image.size:
        return image
    return image.resize(size, Image.Resampling.BOX)


def enlarge_words(
    words: tuple[Word, ...], small: tuple[int, int], full: tuple[int, int]
) -> tuple[Word, ...]:
    """Words read on an image of size ``small`` moved onto the same page at size ``full``.

    Each axis by its own exact factor (the reduced size was rounded): a pixel edge at ``x`` of
    the reduced image is the edge at ``x * full / small`` of the full one."""
    if small == full:
        return words
    fx, fy = full[0] / small[0], full[1] / small[1]
    return tuple(
        replace(
            w,
            box=Box(w.box.x0 * fx, w.box.y0 * fy, w.box.x1 * fx, w.box.y1 * fy),
            origin=(w.origin[0] * fx, w.origin[1] * fy),
            advance=w.advance * fx,
            size=w.size * fy,
            angle=w.angle if fx == fy else _angle(w.angle, fx, fy),
        )
        for w in words
    )


def _angle(degrees: float, fx: float, fy: float) -> float:
    th = math.radians(degrees)
    return math.degrees(math.atan2(math.sin(th) * fy, math.cos(th) * fx))


# The lowest resolution a page too large for the pixel limit is read at instead: 8-10 pt print
# is still 11-14 px tall at 100 dpi, and a page that large (a poster, a drawing) is printed
# larger. A page over the limit even at this resolution is refused, as one over it at any.
MIN_FIT_DPI = 100.0


def fitting_dpi(
    width_pt: float, height_pt: float, wanted: float, max_pixels: int, floor: float = MIN_FIT_DPI
) -> float:
    """The resolution to render a ``width_pt`` x ``height_pt`` page at: ``wanted`` where its
    bitmap keeps within ``max_pixels``; else the highest that does (to a tenth of a dpi), if
    that is ``floor`` or more; else ``wanted`` (a page no lower resolution saves: its check at
    ``wanted`` refuses it, as before). The same for every caller, so inspection's check and the
    renderings agree on every page's pixels."""
    if bitmap_pixels(width_pt, height_pt, wanted) <= max_pixels or width_pt <= 0 or height_pt <= 0:
        return wanted
    dpi = math.floor(72.0 * math.sqrt(max_pixels / (width_pt * height_pt)) * 10) / 10
    while dpi >= floor and bitmap_pixels(width_pt, height_pt, dpi) > max_pixels:
        dpi = round(dpi - 0.1, 1)  # PDFium rounds each side up
    return dpi if dpi >= floor else wanted
