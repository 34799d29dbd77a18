"""What the read-back reads of each output page again, and the reading of a rebuilt page's
burned rows alone: re-detection reads what the build wrote (the output's text layer) wherever
the build determined the page's pixels, and OCRs again only the pixels it changed.

Each output page is read one of three ways (``how``):

- ``TEXT``: its extracted text only. A page read from its own text (``PageScan.from_text``:
  its pixels were shown to be that text and nothing more), whether kept as vectors or rebuilt
  with boxes over those words; or a page copied as vectors from a page pass one OCR'd, where
  the output shows the very pixels pass one read (``same_pixels``: the same resolution, not
  turned, levelled or scaled) — pass one read them, detected and found nothing to burn in,
  and its text layer is what pass one read or the page's own text.
- ``BANDS``: a page rebuilt from pixels with boxes burned, from a page pass one OCR'd at the
  pixels the output shows (``same_pixels``): its
  text layer (the words that stay, exactly as written) and an independent OCR, of the output
  as a reader gets it, of the rows each burned box lies in and the line above and below
  them. That is where the build changed pixels: a box's edge may leave part of a value
  readable, and a burn changes how OCR cuts the words around it. Elsewhere the page's pixels
  are the source's (at most stored coarser or re-encoded), which pass one read. The rows are
  cut from the solid-box check's rendering of the page and read at the scale the page's
  print needs, as plain jobs read (``print_size``: the smallest commonest print decides,
  print under a 20 px x-height and faint print keep every pixel, and ``faint_words`` reads
  faint print again at every pixel): at 150 dpi, body text reads as well as at 300 (FIELD
  NOTES: CER 0.17 % against 0.44 %) in two thirds of the time.
- ``WHOLE``: the whole page rendered and OCR'd again at every pixel, as every page was
  before: a page the content does not account for (a cover page); a page pass one OCR'd at
  other pixels than the output shows (an image file read at its own resolution, a page
  turned or levelled, content a template scales: a second OCR of other pixels reads what the
  first missed, review R2);
  and a share of the OCR-read pages, kept or rebuilt (``PRESSROOM_REDETECT_SAMPLE``, chosen
  by the source's digest and the page, so the same document is read the same way each time;
  1: every one, as before): the audit of the claim above.

Still fail-closed: every pixel the build changed is read again independently; a page whose
pixels it did not change was read by pass one, whose findings are what was burned; and what
pass one could not read with confidence is held before re-detection runs (the read-back's
low-confidence and low-resolution checks, unchanged)."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import replace
from enum import Enum
from typing import Any

from PIL import Image

from pressroom.engines import pdfium
from pressroom.models import Box, Word
from pressroom.pipeline.ocr import OcrEngine, OcrStage
from pressroom.pipeline.resolution import TextSize, measure_text
from pressroom.pixels import PixelBudget
from pressroom.redact.faint import faint_words
from pressroom.redact.scan import PageScan

# a line's height around a burned box: the box's own, within these bounds (points): a box
# over a word in body text is a line high, one drawn over a paragraph is not
LINE_MIN_PT = 14.0
LINE_MAX_PT = 48.0
# rows read above and below a box, in its heights: the whole of the line above and the line
# below, double-spaced too (their middle lies about two box heights off); and rows rendered
# half a height further each way, for context only: OCR reads a line cut by the band's edge as
# fragments, so a word is kept only where its middle lies in the rows read
KEPT_LINES = 2.0
CONTEXT_LINES = 0.5
# OCR's line numbers (faint print's included) of band n start at n times this: each band's
# count from 0, and a word is never joined to a line of another band
BAND_LINE = 10_000_000


class Reading(Enum):
    TEXT = "text"
    BANDS = "bands"
    WHOLE = "whole"


def how(scan: PageScan | None, rebuilt: bool, sampled: bool, dpi: float) -> Reading:
    """How the output page of ``scan`` (None: no content page of the source) is read again at
    ``dpi``; ``rebuilt``: the build made it from pixels; ``sampled``: it is among the audited
    share. A page pass one OCR'd is read by what the build wrote only where the output shows
    the pixels pass one read (``same_pixels``); else whole, as every page was before."""
    if scan is None:
        return Reading.WHOLE
    if scan.from_text:
        return Reading.TEXT
    if sampled or not same_pixels(scan, dpi):
        return Reading.WHOLE
    return Reading.BANDS if rebuilt else Reading.TEXT


def same_pixels(scan: PageScan, dpi: float) -> bool:
    """Whether the output, read at ``dpi``, shows the pixels pass one OCR'd of ``scan``'s page
    (but where the build burned): read at the same resolution (an image file is read at its
    own, which is seldom the read-back's), neither turned nor levelled, and placed on its page
    as it was (a template that scales the content into margins resamples every pixel)."""
    scale, left, top = scan.placement
    return (
        abs(scan.dpi - dpi) <= 0.5
        and scan.rotation == 0
        and scan.level == 0.0
        and abs(scale - 1.0) < 1e-6
        and abs(left) < 1e-3
        and abs(top) < 1e-3
    )


def sampled(seed: bytes, index: int, share: float) -> bool:
    """Whether output page ``index`` is among ``share`` of the pages (1: every one, 0: none),
    drawn from ``seed`` (the source's digest): the same document, the same pages, whatever the
    date its output carries (a draw from the output's bytes held a document in one run and
    delivered it in the next)."""
    if share >= 1.0:
        return True
    if share <= 0.0:
        return False
    draw = hashlib.sha256(seed + index.to_bytes(8, "big")).digest()
    return int.from_bytes(draw[:8], "big") < share * 2**64


def bands(boxes: Sequence[Box], height: int, scale: float) -> list[tuple[int, int, int, int]]:
    """The rows to read around ``boxes`` (pixels of a page ``height`` rows high rendered at
    ``scale`` pixels a point), overlapping ones joined: (first rendered row, past the last,
    first kept row, past the last kept)."""
    spans: list[tuple[int, int, int, int]] = []
    for b in sorted(boxes, key=lambda b: b.y0):
        line = min(max(b.y1 - b.y0, LINE_MIN_PT * scale), LINE_MAX_PT * scale)
        keep0, keep1 = b.y0 - KEPT_LINES * line, b.y1 + KEPT_LINES * line
        top = max(0, math.floor(keep0 - CONTEXT_LINES * line))
        bottom = min(height, math.ceil(keep1 + CONTEXT_LINES * line))
        kept = (max(0, math.floor(keep0)), min(height, math.ceil(keep1)))
        if bottom <= top or kept[1] <= kept[0]:
            continue
        if spans and top <= spans[-1][1]:
            t, b_, k0, k1 = spans[-1]
            spans[-1] = (t, max(b_, bottom), k0, max(k1, kept[1]))
        else:
            spans.append((top, bottom, kept[0], kept[1]))
    return spans


def print_size(gray: Image.Image) -> TextSize | None:
    """The size of a whole output page's print, for OCR to read it again at the scale that
    print needs, as plain jobs read (``resolution.choose_scale``: its smallest commonest print
    decides; print under a 20 px x-height keeps every pixel, and so does faint print, which
    ``faint_words`` reads again at every pixel besides). None: every pixel is read."""
    size = measure_text(gray)
    return None if size.faint else size


def page_words(
    page: Any,
    scale: float,
    dpi: float,
    ocr: OcrStage,
    engine: OcrEngine,
    budget: PixelBudget,
    what: str,
    whole: Image.Image | None = None,
) -> list[Word]:
    """OCR (and faint print) of the whole of ``page`` rendered at ``scale``, read at ``dpi``:
    the words in its pixel frame. ``whole``: that rendering, made already (the solid-box
    check's); else it is made here."""
    size = pdfium.bitmap_size(page, scale)
    budget.take(*size, what)
    made = whole is not None and whole.size == size
    gray = whole if made and whole is not None else pdfium.render_luma(page, scale)
    # read as it is (the words must stay where the output has them), at every pixel: the
    # audit reads as every page was read before
    seen = list(replace(ocr, straighten_min=None).read_as_is(gray, dpi).result.words)
    return seen + faint_words(gray, seen, engine, dpi)


def band_words(
    page: Any,
    scale: float,
    dpi: float,
    boxes: Sequence[Box],
    ocr: OcrStage,
    engine: OcrEngine,
    budget: PixelBudget,
    what: str,
    whole: Image.Image | None = None,
) -> list[Word] | None:
    """OCR (and faint print) of the rows around ``boxes`` (pixels of ``page``'s rendering at
    ``scale``, read at ``dpi``), as words in the whole page's pixel frame: cut from ``whole``,
    that rendering made already (the solid-box check's), else rendered from the page itself a
    band at a time. None where a band cannot be rendered where it was asked for: the caller
    reads the whole page instead."""
    width, height = (math.ceil(v * scale) for v in page.get_size())
    if whole is not None and whole.size != (width, height):
        whole = None
    as_is = replace(ocr, straighten_min=None)
    # the page's print decides (a band is too few lines to measure); no page, no reduction
    fit = print_size(whole) if whole is not None else None
    out: list[Word] = []
    for n, (top, bottom, keep0, keep1) in enumerate(bands(boxes, height, scale)):
        budget.take(width, bottom - top, what)
        image = (
            whole.crop((0, top, width, bottom))
            if whole is not None
            else pdfium.render_region(page, scale, (0, top, width, bottom))
        )
        if image is None:
            return None
        seen = list(as_is.read_as_is(image, dpi, fit=fit).result.words)
        seen += faint_words(image, seen, engine, dpi)
        del image
        for w in seen:
            middle = top + (w.box.y0 + w.box.y1) / 2
            if not keep0 <= middle <= keep1:
                continue  # context only: a line the band's edge may cut, beyond any burn's reach
            out.append(
                replace(
                    w,
                    box=Box(w.box.x0, w.box.y0 + top, w.box.x1, w.box.y1 + top),
                    origin=(w.origin[0], w.origin[1] + top),
                    line=n * BAND_LINE + w.line,
                )
            )
    return out
