"""What a reader sees on a born-digital page, read from the page's own text instead of OCR.

OCR of a page whose text PDFium already has (0.75 s of a 300-dpi page) answers two questions:
which of its words a reader can see (white, covered, clipped, invisible and off-page text
cannot be seen), and whether it shows letters its text does not have (a picture of a name,
words drawn as shapes, glyphs that spell something else than their text says). Both are
answered here from pixels, for a fraction of the cost, and where either answer is in doubt
the page is OCR'd as before (``None``):

- **Seen.** The page is rendered at ``SEEN_DPI`` as it is and again with every text object
  made invisible (in PDFium's copy of the page only: the file is not touched, and the page is
  closed after). A word is seen where its glyphs change the pixels inside its box (by more than
  ``SEEN_LEVELS`` grey levels, on enough pixels for its letters) and it stands at least
  ``MIN_SEEN_PT`` tall. Text drawn under a rectangle or a picture, white on white, clipped,
  invisible, in a layer that is off, or off the page changes nothing and is not seen.
- **Nothing but its text.** The text-free rendering must show no marks beyond ruling: edges
  (a step of more than ``EDGE_LEVELS`` grey levels) outside straight rules of at least
  ``RULE_PX`` pixels at 100 dpi. A picture, a logo, a signature or text drawn as shapes has
  edges that are no rule, and the page is OCR'd.
- **Its text spells what it shows.** Fonts whose text cannot be trusted to be their glyphs
  send the page to OCR: Type 3 fonts (their glyphs are drawings), composite fonts without a
  ToUnicode map, simple fonts with neither a map nor a known encoding, text with unmapped or
  control characters or a word of private-use ones, and a page of sideways words (a margin
  stamp standing sideways is read as it stands). Then a sample of its lines (up to
  ``SAMPLE_LINES``, spread over the page) is OCR'd, each as its own small crop, and must agree
  with the text layer (``SAMPLE_AGREE`` of the words): a ToUnicode map that lies fails here.

The sample is the independent check: it reads a few lines, not every word, so a map that lies
about one word only of a font used elsewhere on the page could pass it. What a page read this
way gives the redaction is its words, exactly: every value found in its text is burned where
its glyphs are, and the output is determined by them (kept as vectors, or rebuilt from the
same pixels with boxes over those words), which is why its read-back needs no OCR either
(``redact.readback``)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np
import pikepdf
import pypdfium2.raw as pdfium_c
from PIL import Image

from pressroom.engines import pdfium
from pressroom.models import Box, Word
from pressroom.pipeline.ocr import OcrEngine
from pressroom.pixels import PixelBudget
from pressroom.redact.plan import normalise, overlaps

SEEN_DPI = 150.0  # the resolution words are told seen or not at, and marks looked for
MIN_SEEN_PT = 4.0  # a word less tall than this (points) is not read by a person
SEEN_LEVELS = 8  # grey levels a glyph changes a pixel by, to count as shown
EDGE_LEVELS = 16  # grey levels between neighbouring pixels that make an edge
RULE_PX = 20  # pixels at 100 dpi: a straight run of edge this long is ruling, not a mark
MARK_PX = 24  # edge pixels at 100 dpi outside ruling past which the page shows marks
SAMPLE_LINES = 4
MIN_PRIVATE = 3  # private-use characters in one word that send the page to OCR
SIDEWAYS_SHARE = 0.2  # of the words of three letters or more, standing sideways
SAMPLE_WORDS = 8  # lines are sampled until this many words of three letters or more
SAMPLE_AGREE = 0.7  # share of the sampled words OCR must read the same
_MAX_FORM_DEPTH = 8
_STANDARD_ENCODINGS = {"/WinAnsiEncoding", "/MacRomanEncoding", "/StandardEncoding"}
_STANDARD_14 = {
    "Times-Roman",
    "Times-Bold",
    "Times-Italic",
    "Times-BoldItalic",
    "Helvetica",
    "Helvetica-Bold",
    "Helvetica-Oblique",
    "Helvetica-BoldOblique",
    "Courier",
    "Courier-Bold",
    "Courier-Oblique",
    "Courier-BoldOblique",
    "Symbol",
    "ZapfDingbats",
}


def seen_words(
    doc: Any,
    pdf: pikepdf.Pdf,
    index: int,
    gray: Image.Image,
    words: Sequence[Word],
    dpi: float,
    engine: OcrEngine,
    budget: PixelBudget,
    *,
    turn: AbstractContextManager[object] | None = None,
    timeout: float | None = None,
) -> list[Word] | None:
    """The words of ``words`` (page ``index``'s own, in ``gray``'s frame: the page rendered
    at ``dpi``, which the sample's crops are cut from) a reader sees, or None where the page
    must be OCR'd (see the module's doc). ``doc``: the page's PDFium document, ``pdf`` the same
    file in pikepdf; ``turn``: held around every call into either (threads reading pages at
    once take them one at a time)."""
    turn = turn if turn is not None else nullcontext()
    if not words or not _text_trusted(words):
        return None
    with turn:
        if not fonts_trusted(pdf.pages[index]):
            return None
        shown, plain = _renders(doc, index, budget)
    if marks_beyond_rules(plain, SEEN_DPI):
        return None
    k = SEEN_DPI / dpi  # the words' boxes are in ``gray``'s pixels
    seen = [w for w in words if _shown(w, k, shown, plain)]
    if not _sample_agrees(gray, seen, engine, dpi, timeout):
        return None
    return seen


def _text_trusted(words: Sequence[Word]) -> bool:
    """No unmapped or control characters, no word of ``MIN_PRIVATE`` private-use characters or
    more (a symbol font's bullet or arrow is one or two: letters a font hides there are a
    word's worth), and no more than ``SIDEWAYS_SHARE`` of the words standing sideways (a
    margin stamp is read as it stands; a page of sideways text is OCR'd, which turns it)."""
    sideways = counted = 0
    for w in words:
        private = 0
        for c in w.text:
            code = ord(c)
            if code == 0xFFFD or code < 0x20 or code >= 0xF0000:
                return False
            private += 0xE000 <= code <= 0xF8FF
        if private >= MIN_PRIVATE:
            return False
        if sum(c.isalnum() for c in w.text) >= 3:
            counted += 1
            sideways += w.box.height > w.box.width
    return sideways <= SIDEWAYS_SHARE * counted


def fonts_trusted(page: pikepdf.Page) -> bool:
    """Whether every font the page (and the forms it draws, to a depth) may use maps its codes
    to the letters its glyphs show, as far as the file can say."""
    seen: set[tuple[int, int]] = set()

    def walk(resources: Any, depth: int) -> bool:
        if not isinstance(resources, pikepdf.Dictionary) or depth > _MAX_FORM_DEPTH:
            return depth <= _MAX_FORM_DEPTH
        fonts = resources.get("/Font")
        if isinstance(fonts, pikepdf.Dictionary):
            for _name, font in fonts.items():
                if not _font_trusted(font):
                    return False
        xobjects = resources.get("/XObject")
        if isinstance(xobjects, pikepdf.Dictionary):
            for _name, xobject in xobjects.items():
                if not isinstance(xobject, pikepdf.Stream):
                    continue
                if xobject.get("/Subtype") != "/Form":
                    continue
                key = xobject.objgen
                if key != (0, 0):
                    if key in seen:
                        continue
                    seen.add(key)
                if not walk(xobject.get("/Resources"), depth + 1):
                    return False
        return True

    try:
        return walk(page.obj.get("/Resources"), 0)
    except (pikepdf.PdfError, ValueError, TypeError, AttributeError):
        return False


def _font_trusted(font: Any) -> bool:
    if not isinstance(font, pikepdf.Dictionary):
        return False
    subtype = str(font.get("/Subtype", ""))
    if subtype == "/Type3":
        return False
    if "/ToUnicode" in font:
        return isinstance(font.get("/ToUnicode"), pikepdf.Stream)
    if subtype == "/Type0":
        return False  # a CID font's codes say nothing of its letters without a map
    encoding = font.get("/Encoding")
    if isinstance(encoding, pikepdf.Name):
        return str(encoding) in _STANDARD_ENCODINGS
    if isinstance(encoding, pikepdf.Dictionary):
        return True  # a base encoding with glyph names that say their letters
    base = str(font.get("/BaseFont", "")).lstrip("/")
    return base in _STANDARD_14 and base not in ("Symbol", "ZapfDingbats")


def _renders(doc: Any, index: int, budget: PixelBudget) -> tuple[np.ndarray, np.ndarray]:
    """Page ``index`` rendered grey at ``SEEN_DPI`` as it is, and again with every text object
    invisible: in PDFium's parsed copy only (the page is closed after, and the next load of it
    reads the file again). Both by the same renderer, so they differ only where text shows."""
    scale = SEEN_DPI / 72.0
    page = doc[index]
    try:
        size = pdfium.bitmap_size(page, scale)
        budget.take(*size, f"page {index + 1}, seen")
        budget.take(*size, f"page {index + 1} without its text")
        shown = _grey(page, scale)
        for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_TEXT], max_depth=15):
            pdfium_c.FPDFTextObj_SetTextRenderMode(obj.raw, pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE)
        return shown, _grey(page, scale)
    finally:
        page.close()


def _grey(page: Any, scale: float) -> np.ndarray:
    with pdfium.failing_as("a page cannot be rendered"):
        bitmap = page.render(scale=scale, grayscale=True)
    try:
        return np.array(bitmap.to_pil().convert("L"), dtype=np.uint8)
    finally:
        bitmap.close()


def marks_beyond_rules(plain: np.ndarray, dpi: float) -> bool:
    """Whether a text-free rendering (grey, at ``dpi``) shows marks: edges outside straight
    horizontal or vertical runs of ``RULE_PX`` at 100 dpi, past ``MARK_PX`` pixels at 100 dpi.
    Read on blocks of about a hundredth of an inch (3 x 3 pixels at 300 dpi, 2 x 2 at 150): a
    block has an edge where its pixels, or its and a neighbour's, differ by more than
    ``EDGE_LEVELS``."""
    k = max(1, round(dpi / 100.0))
    at = dpi / k / 100.0  # the blocks' resolution, in hundreds of dpi
    rule, most = max(2, round(RULE_PX * at)), MARK_PX * at * at
    rows, cols = int(plain.shape[0]) // k * k, int(plain.shape[1]) // k * k
    if rows == 0 or cols == 0:
        return False
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
        return False
    rules = _runs(small, rule) | _runs(small.T, rule).T
    return int((small & ~rules).sum()) > most


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


def _shown(word: Word, k: float, shown: np.ndarray, plain: np.ndarray) -> bool:
    """Whether the word's glyphs change the pixels inside its box (``k`` times its
    coordinates: the renders' pixels), on at least a pixel a letter, and it stands at least
    ``MIN_SEEN_PT`` tall."""
    if word.box.height * k < MIN_SEEN_PT * SEEN_DPI / 72.0:
        return False
    h, w = int(shown.shape[0]), int(shown.shape[1])
    x0, y0 = max(0, int(word.box.x0 * k)), max(0, int(word.box.y0 * k))
    x1, y1 = min(w, int(word.box.x1 * k) + 1), min(h, int(word.box.y1 * k) + 1)
    if x1 <= x0 or y1 <= y0:
        return False  # off the page
    letters = max(1, sum(c.isalnum() for c in word.text))
    here = shown[y0:y1, x0:x1].astype(np.int16) - plain[y0:y1, x0:x1].astype(np.int16)
    return int((np.abs(here) > SEEN_LEVELS).sum()) >= letters


def _sample_agrees(
    gray: Image.Image,
    seen: Sequence[Word],
    engine: OcrEngine,
    dpi: float,
    timeout: float | None,
) -> bool:
    """A few lines of the seen words OCR'd, each alone, and compared with the text layer."""
    lines: dict[int, list[Word]] = {}
    for w in seen:
        lines.setdefault(w.line, []).append(w)
    eligible = [ws for _n, ws in sorted(lines.items()) if any(_letters(w) for w in ws)]
    if not eligible:
        return True  # no word of three letters: nothing a sample can tell
    step = max(1, len(eligible) // SAMPLE_LINES)
    picked = eligible[::step][:SAMPLE_LINES]
    agree = total = 0
    for line in picked:
        box = Box(
            min(w.box.x0 for w in line) - 8,
            min(w.box.y0 for w in line) - 8,
            max(w.box.x1 for w in line) + 8,
            max(w.box.y1 for w in line) + 8,
        )
        crop_box = (
            max(0, int(box.x0)),
            max(0, int(box.y0)),
            min(gray.width, int(box.x1) + 1),
            min(gray.height, int(box.y1) + 1),
        )
        if crop_box[2] <= crop_box[0] or crop_box[3] <= crop_box[1]:
            continue
        read = engine.recognize(gray.crop(crop_box), dpi=dpi, timeout=timeout).words
        dx, dy = crop_box[0], crop_box[1]
        for w in line:
            key = _letters(w)
            if not key:
                continue
            total += 1
            near = [
                normalise(o.text)
                for o in read
                if overlaps(w.box, Box(o.box.x0 + dx, o.box.y0 + dy, o.box.x1 + dx, o.box.y1 + dy))
            ]
            if any(key == n or (len(n) >= 3 and (key in n or n in key)) for n in near):
                agree += 1
        if total >= SAMPLE_WORDS:
            break
    return total == 0 or agree >= SAMPLE_AGREE * total


def _letters(word: Word) -> str:
    key = normalise(word.text)
    return key if len(key) >= 3 else ""
