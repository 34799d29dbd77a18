"""What a born-digital page shows beyond its text (``redact.seen``): marks its text-free
rendering has beyond straight ruling (a picture, a logo, a signature, text drawn as shapes),
and words that spell nothing set to draw (dots or bars row over row: a name drawn in full
stops; a bullet or a leader on its line draws nothing). Both are joined into regions
(``marked_regions``), each OCR'd where it is (``read_regions``), so a page with a logo is
not OCR'd whole; past ``MOST_REGIONS`` regions or ``MARKED_SHARE`` of the page it is."""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import replace

import cv2
import numpy as np
from PIL import Image

from pressroom.models import Box, Word
from pressroom.pipeline.ocr import OcrEngine
from pressroom.redact.faint import faint_words
from pressroom.redact.plan import normalise, overlaps

EDGE_LEVELS = 16  # grey levels between neighbouring pixels that make an edge
RULE_PX = 20  # pixels at 100 dpi: a straight run of edge this long is ruling, not a mark
MARK_PX = 24  # edge pixels at 100 dpi outside ruling past which the page shows marks
ART_PX = 600  # pixels at 150 dpi (seen.SEEN_DPI) of words that spell nothing set to draw
ART_NEAR_PT = 3.0  # such words this near another on another row are set to draw
ART_ROW = 0.5  # of the lower word's height: middles further apart are on another row
ART_TALL = 2.0  # times the page's usual word height: one such word standing on several rows
MOST_ART_WORDS = 5000  # past this many such words on a page, all count, unplaced
# marks beyond ruling are OCR'd where they are: marks this near joined into one region, each
# region grown by this much (inches); past MOST_REGIONS regions, or MARKED_SHARE of the page's
# area, the page is OCR'd whole
REGION_GAP_IN = 0.15
REGION_PAD_IN = 0.1
MOST_REGIONS = 12
MARKED_SHARE = 0.3
# OCR's line numbers of region n start at n times this, past the page's own lines
REGION_LINE = 10_000_000


def marks_beyond_rules(plain: np.ndarray, dpi: float) -> bool:
    """Whether a text-free rendering (grey, at ``dpi``) shows marks: edges outside straight
    horizontal or vertical runs of ``RULE_PX`` at 100 dpi, past ``MARK_PX`` pixels at 100 dpi.
    Read on blocks of about a hundredth of an inch (3 x 3 pixels at 300 dpi, 2 x 2 at 150): a
    block has an edge where its pixels, or its and a neighbour's, differ by more than
    ``EDGE_LEVELS``."""
    marks, k = _marks(plain, dpi)
    at = dpi / k / 100.0  # the blocks' resolution, in hundreds of dpi
    return int(marks.sum()) > MARK_PX * at * at


def _marks(plain: np.ndarray, dpi: float) -> tuple[np.ndarray, int]:
    """The blocks of ``plain`` (``k`` x ``k`` pixels each) with an edge that is no rule, and
    ``k``."""
    k = max(1, round(dpi / 100.0))
    at = dpi / k / 100.0
    rule = max(2, round(RULE_PX * at))
    rows, cols = int(plain.shape[0]) // k * k, int(plain.shape[1]) // k * k
    if rows == 0 or cols == 0:
        return np.zeros((0, 0), dtype=bool), k
    page = np.asarray(plain[:rows, :cols], dtype=np.uint8)
    high = page[0::k, 0::k].copy()
    low = high.copy()
    for dy in range(k):
        for dx in range(k):
            np.maximum(high, page[dy::k, dx::k], out=high)
            np.minimum(low, page[dy::k, dx::k], out=low)
    high, low = high.astype(np.int16), low.astype(np.int16)
    small: np.ndarray = (high - low) > EDGE_LEVELS
    across = np.maximum(high[:, 1:], high[:, :-1]) - np.minimum(low[:, 1:], low[:, :-1])
    small[:, :-1] |= across > EDGE_LEVELS
    down = np.maximum(high[1:, :], high[:-1, :]) - np.minimum(low[1:, :], low[:-1, :])
    small[:-1, :] |= down > EDGE_LEVELS
    if not small.any():
        return small, k
    rules = _runs(small, rule) | _runs(small.T, rule).T
    return small & ~rules, k


def mark_mask(plain: np.ndarray, dpi: float) -> np.ndarray:
    """The pixels of ``plain`` in a block with a mark (``_marks``), as a mask its shape."""
    marks, k = _marks(plain, dpi)
    out = np.zeros(plain.shape, dtype=bool)
    grown = np.repeat(np.repeat(marks, k, axis=0), k, axis=1)
    out[: grown.shape[0], : grown.shape[1]] = grown
    return out


def marked_regions(
    marked: np.ndarray, dpi: float, scale: float, size: tuple[int, int]
) -> list[Box] | None:
    """Where a rendering at ``dpi`` shows what its text does not account for (``marked``, a
    mask of its pixels): boxes around those pixels (the ones ``REGION_GAP_IN`` apart joined),
    grown by ``REGION_PAD_IN``, in the pixels of the page ``scale`` times larger (``size``: its
    width and height); overlapping ones joined. None where they cover more than
    ``MARKED_SHARE`` of the page or are more than ``MOST_REGIONS``: the page is OCR'd whole (a
    scan, a page of pictures)."""
    if not marked.any():
        return []
    gap = max(1, round(REGION_GAP_IN * dpi))
    joined = cv2.dilate(marked.astype(np.uint8), np.ones((gap, gap), np.uint8))
    count, _labels, stats, _middles = cv2.connectedComponentsWithStats(joined, connectivity=8)
    pad = REGION_PAD_IN * dpi * scale
    width, height = size
    boxes: list[Box] = []
    for x, y, w, h, _area in stats[1:count]:
        boxes.append(
            Box(
                max(0.0, x * scale - pad),
                max(0.0, y * scale - pad),
                min(float(width), (x + w) * scale + pad),
                min(float(height), (y + h) * scale + pad),
            )
        )
    regions = _joined(boxes)
    if len(regions) > MOST_REGIONS:
        return None
    if sum(b.width * b.height for b in regions) > MARKED_SHARE * width * height:
        return None
    return regions


def _joined(boxes: list[Box]) -> list[Box]:
    """``boxes`` with every two that overlap replaced by the box around both, until none do."""
    out = list(boxes)
    merged = True
    while merged:
        merged = False
        for i in range(len(out)):
            for j in range(i + 1, len(out)):
                if overlaps(out[i], out[j]):
                    a, b = out[i], out.pop(j)
                    out[i] = Box(min(a.x0, b.x0), min(a.y0, b.y0), max(a.x1, b.x1), max(a.y1, b.y1))
                    merged = True
                    break
            if merged:
                break
    return out


def read_regions(
    gray: Image.Image,
    regions: Sequence[Box],
    seen: Sequence[Word],
    engine: OcrEngine,
    dpi: float,
    timeout: float | None,
) -> list[Word]:
    """OCR (and faint print) of each of ``regions`` of ``gray``, as words in its frame: each
    but those that are a seen word read again (the same letters where that word stands)."""
    out: list[Word] = []
    for n, region in enumerate(regions):
        x0, y0 = int(region.x0), int(region.y0)
        x1, y1 = min(gray.width, math.ceil(region.x1)), min(gray.height, math.ceil(region.y1))
        if x1 <= x0 or y1 <= y0:
            continue
        crop = gray.crop((x0, y0, x1, y1))
        read = list(engine.recognize(crop, dpi=dpi, timeout=timeout).words)
        read += faint_words(crop, read, engine, dpi, timeout=timeout)
        for w in read:
            moved = replace(
                w,
                box=Box(w.box.x0 + x0, w.box.y0 + y0, w.box.x1 + x0, w.box.y1 + y0),
                origin=(w.origin[0] + x0, w.origin[1] + y0),
                line=REGION_LINE * (n + 1) + w.line,
            )
            if not _read_again(moved, seen):
                out.append(moved)
    return out


def _read_again(word: Word, seen: Sequence[Word]) -> bool:
    """Whether OCR's ``word`` is one of ``seen`` read again: its middle inside that word's box
    and the same letters."""
    mx, my = (word.box.x0 + word.box.x1) / 2, (word.box.y0 + word.box.y1) / 2
    key = normalise(word.text)
    return any(
        w.box.x0 - 2 <= mx <= w.box.x1 + 2
        and w.box.y0 - 2 <= my <= w.box.y1 + 2
        and normalise(w.text) == key
        for w in seen
    )


def _runs(mask: np.ndarray, length: int) -> np.ndarray:
    """The pixels of ``mask`` in a horizontal run of at least ``length``."""
    ones = mask.astype(np.int32)
    total = np.zeros((ones.shape[0], ones.shape[1] + 1), dtype=np.int32)
    np.cumsum(ones, axis=1, out=total[:, 1:])
    full = (total[:, length:] - total[:, :-length]) == length  # a run starts at each True
    out = np.zeros(mask.shape, dtype=bool)
    if full.shape[1] == 0:
        return out
    # every pixel of a full window: spread each start over the ``length`` pixels after it
    starts = np.zeros((mask.shape[0], mask.shape[1] + 1), dtype=np.int32)
    starts[:, : full.shape[1]] += full
    starts[:, length : length + full.shape[1]] -= full
    return np.cumsum(starts, axis=1)[:, : mask.shape[1]] > 0


def pixels(box: Box, k: float, shape: tuple[int, ...], grow: int = 0) -> tuple[int, ...]:
    """``box`` (``k`` times its coordinates: the renders' pixels), grown by ``grow`` pixels,
    inside a page of ``shape``: (x0, y0, x1, y1), empty where it lies off the page."""
    h, w = int(shape[0]), int(shape[1])
    x0, y0 = max(0, int(box.x0 * k) - grow), max(0, int(box.y0 * k) - grow)
    x1, y1 = min(w, int(box.x1 * k) + 1 + grow), min(h, int(box.y1 * k) + 1 + grow)
    return x0, y0, max(x0, x1), max(y0, y1)


def glyph_art(changed: np.ndarray, dpi: float, words: Sequence[Word], k: float) -> np.ndarray:
    """The ink (a mask of ``changed``'s shape: pixels at ``dpi``, ``k`` times the words'
    coordinates) of words that spell nothing — no letter or
    digit, or one character over and over ("....", "IIII") — set to draw: each within
    ``ART_NEAR_PT`` of another such word on another row (dots or bars row over row, as letters
    are drawn), or standing taller than ``ART_TALL`` of the page's usual word (one word whose
    glyphs stand on several rows). A bullet, a rule of underscores or a leader of dots on its
    line draws nothing."""
    art = [w for w in words if _spells_nothing(w)]
    out = np.zeros(changed.shape, dtype=bool)
    if not art:
        return out
    heights = sorted(w.box.height for w in words)
    usual = heights[len(heights) // 2]
    near = ART_NEAR_PT / 72.0 * dpi / k  # in the words' pixels
    art.sort(key=lambda w: w.box.y0)
    tops = [w.box.y0 for w in art]
    tallest = max(w.box.height for w in art)
    for a in art:
        if len(art) > MOST_ART_WORDS or a.box.height > ART_TALL * usual:
            drawn = True  # (so many that their places are not compared: all of them)
        else:
            # the words whose top lies where one within ``near`` of ``a`` can start
            lo = bisect.bisect_left(tops, a.box.y0 - near - tallest)
            hi = bisect.bisect_right(tops, a.box.y1 + near)
            drawn = any(
                b is not a
                and abs((a.box.y0 + a.box.y1) - (b.box.y0 + b.box.y1)) / 2
                > ART_ROW * min(a.box.height, b.box.height)
                and b.box.y0 - near <= a.box.y1
                and a.box.y0 - near <= b.box.y1
                and b.box.x0 - near <= a.box.x1
                and a.box.x0 - near <= b.box.x1
                for b in art[lo:hi]
            )
        if drawn:
            x0, y0, x1, y1 = pixels(a.box, k, changed.shape)
            out[y0:y1, x0:x1] |= changed[y0:y1, x0:x1]
    return out


def _spells_nothing(word: Word) -> bool:
    letters = {c for c in word.text if c.isalnum()}
    return not letters or (len(letters) == 1 and len(word.text) >= 4)
