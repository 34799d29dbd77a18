"""Faint print: light grey text a person reads but one global threshold drops.

A page with dark text and light grey text binarises with the grey on the background's side, so
OCR never sees it. Here the grey-only ink (lighter than the text, darker than the paper, and
away from dark strokes and their anti-aliased edges) is found on a reduced copy; only the bands
of rows that hold it are read again, with the grey stretched to black. Words that the first
reading already has are not added twice.

How much grey is faint print: past a share of the whole page, every band that holds grey; below
it, a band that holds the grey of a short word on its own (a faint name of a few letters on a
full page of dark print is a thousandth of the page's pixels, under any share of the page a
page of grain stays under).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from PIL import Image

from pressroom.models import Box, Word
from pressroom.pipeline.ocr import OcrEngine, normalise_contrast

MIN_GREY_SHARE = 0.0004  # of the page's pixels: past this, every band of grey rows is read
# grey in one band of rows, in square points: past this a band is read whatever the page's share
# (a three-letter word in 6 pt faint print is about 25, in 8 pt about 45; a 10 pt "Ann Lee" about
# 130). Measured on 123 pages (our scans, real documents' first pages, JPEG q40 copies): 15
# bands more than the page's share alone reads, 339 -> 354; grain, JPEG q15, a red stamp, light
# shading and a photo: none (review R5)
MIN_BAND_GREY_PT2 = 18.0
PAPER_MARGIN = 22  # grey levels under the paper that count as ink
DARK = 110  # ink darker than this was read by the first pass
BAND_PAD = 12  # pixels, at full resolution, around a band of grey rows
FAINT_LINE = 1_000_000  # line numbers of words found here stay apart from the first reading's


def _dilate(mask: np.ndarray, r: int) -> np.ndarray:
    out = mask.copy()
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            if dy or dx:
                out |= np.roll(np.roll(mask, dy, axis=0), dx, axis=1)
    return out


def block_min(pixels: np.ndarray, factor: int) -> np.ndarray:
    """The darkest pixel of each ``factor`` x ``factor`` block: thin dark strokes stay dark (an
    average turns them grey). Taken as the minimum of the blocks' ``factor`` squared pixel
    grids, one whole-array step each: the same as a reduction over the blocks' two axes, which
    numpy walks strided at ~0.06 s a 300-dpi page."""
    h, w = pixels.shape[0] // factor * factor, pixels.shape[1] // factor * factor
    out = pixels[0:h:factor, 0:w:factor].copy()
    for dy in range(factor):
        for dx in range(factor):
            if dy or dx:
                np.minimum(out, pixels[dy:h:factor, dx:w:factor], out=out)
    return out


def grey_bands(gray: Image.Image, dpi: float = 300.0) -> tuple[list[tuple[int, int]], int]:
    """Row ranges (full-resolution pixels) holding grey-only ink, and the paper's grey level;
    ``dpi``: the image's resolution (how large its pixels are)."""
    factor = max(1, max(gray.size) // 1100)
    a = block_min(np.asarray(gray, dtype=np.uint8), factor)
    paper = int(np.percentile(a, 90))
    if paper < 140:
        return [], paper  # a dark page: nothing faint about it
    light = a < paper - PAPER_MARGIN
    dark = a < DARK
    grey = light & ~_dilate(dark, 2)
    # lone specks are noise: keep grey pixels with grey neighbours
    neighbours = sum(
        np.roll(np.roll(grey, dy, axis=0), dx, axis=1).astype(np.int8)
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
        if dy or dx
    )
    grey &= neighbours >= 2
    per_row = grey.sum(axis=1)
    # a reduced pixel's area in square points
    pt2 = (72.0 * factor / dpi) ** 2 if dpi > 0 else 1.0
    least = MIN_BAND_GREY_PT2 / pt2  # grey pixels a band needs on its own
    whole = int(per_row.sum())
    if whole < min(least, MIN_GREY_SHARE * a.size):
        return [], paper
    every = whole >= MIN_GREY_SHARE * a.size
    rows = per_row >= 2
    bands: list[tuple[int, int]] = []
    y = 0
    while y < rows.size:
        if not rows[y]:
            y += 1
            continue
        start = y
        while y < rows.size and (rows[y] or rows[min(y + 3, rows.size - 1)]):
            y += 1
        if y - start >= 2 and (every or int(per_row[start:y].sum()) >= least):
            bands.append((start * factor, min(gray.height, y * factor)))
    merged: list[tuple[int, int]] = []
    for b in bands:
        lo, hi = max(0, b[0] - BAND_PAD), min(gray.height, b[1] + BAND_PAD)
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], hi)
        else:
            merged.append((lo, hi))
    return merged, paper


def _darken(crop: Image.Image, paper: int) -> Image.Image:
    """Grey ink to black, paper to white: the faint text becomes ordinary text."""
    top = max(1, paper - PAPER_MARGIN // 2)
    lut = [
        0 if v <= top - 60 else 255 if v >= top else round(255 * (v - (top - 60)) / 60)
        for v in range(256)
    ]
    return crop.point(lut)


def _overlap(a: Box, b: Box) -> float:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    if w <= 0 or h <= 0:
        return 0.0
    return (w * h) / max(1.0, min(a.width * a.height, b.width * b.height))


def faint_words(
    upright: Image.Image,
    known: Sequence[Word],
    engine: OcrEngine,
    dpi: float,
    *,
    timeout: float | None = None,
) -> list[Word]:
    """Words in faint print that the first reading of the upright page did not have."""
    gray = normalise_contrast(upright)
    bands, paper = grey_bands(gray, dpi)
    found: list[Word] = []
    for n, (y0, y1) in enumerate(bands):
        crop = _darken(gray.crop((0, y0, gray.width, y1)), paper)
        result = engine.recognize(crop, dpi=dpi, timeout=timeout)
        for w in result.words:
            if sum(c.isalnum() for c in w.text) < 1 or w.confidence < 30:
                continue
            box = Box(w.box.x0, w.box.y0 + y0, w.box.x1, w.box.y1 + y0)
            if any(_overlap(box, k.box) > 0.3 for k in known):
                continue
            found.append(
                replace(
                    w,
                    box=box,
                    origin=(w.origin[0], w.origin[1] + y0),
                    line=FAINT_LINE + n * 1000 + w.line,
                )
            )
    return found
