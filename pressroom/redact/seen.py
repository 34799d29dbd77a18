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
  edges that are no rule, and the page is OCR'd. Nor may glyphs show ink outside every word's
  box (``STRAY_PX``: codes mapped to nothing or to spaces), nor words that spell nothing
  (dots, bars, one character over and over) set to draw show more than ``ART_PX`` of it (a
  name drawn in full stops; a bullet, a leader or a rule of underscores on its own line
  draws nothing).
- **Its text spells what it shows.** Fonts whose text cannot be trusted to be their glyphs
  send the page to OCR: Type 3 fonts (their glyphs are drawings), composite fonts without a
  ToUnicode map, simple fonts with neither a map nor a known encoding; so does text with
  characters that hide what a word spells (unmapped, control and format characters — a
  zero-width space, a soft hyphen — letters in compatibility forms such as mathematical bold),
  a word of private-use characters, a word in two scripts, and a page of sideways words (a
  margin stamp standing sideways is read as it stands). Then the page's lines are sampled
  font by font (a map lies for its own font): a font of few words (a name set apart) on every
  line it is on, any other on up to ``SAMPLE_LINES`` lines spread over the page, each line
  OCR'd as its own crop; each font's words must agree with OCR (``SAMPLE_AGREE``), and a page
  with more lines to sample than ``MOST_SAMPLED_LINES`` is OCR'd.

The sample is the independent check, and a sample: a map that lies about one word only, of a
font used as it says in many words elsewhere on the page, could pass it (the word's line may
not be among those read). What a page read this way gives the redaction is its words,
exactly: every value found in its text is burned where its glyphs are, and the output is
determined by them (kept as vectors, or rebuilt from the same pixels with boxes over those
words), which is why its read-back needs no OCR either
(``redact.readback``)."""

from __future__ import annotations

import bisect
import unicodedata
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
from pressroom.redact.text import extracted_words
from pressroom.redact.writing import script_of

SEEN_DPI = 150.0  # the resolution words are told seen or not at, and marks looked for
MIN_SEEN_PT = 4.0  # a word less tall than this (points) is not read by a person
SEEN_LEVELS = 8  # grey levels a glyph changes a pixel by, to count as shown
EDGE_LEVELS = 16  # grey levels between neighbouring pixels that make an edge
RULE_PX = 20  # pixels at 100 dpi: a straight run of edge this long is ruling, not a mark
MARK_PX = 24  # edge pixels at 100 dpi outside ruling past which the page shows marks
SAMPLE_LINES = 3  # lines of a font's sampled, spread over the page
FULL_FONT_WORDS = 12  # a font with no more words of three letters than this: all its lines
MOST_SAMPLED_LINES = 12  # past this many lines to sample, the page is OCR'd
SAMPLE_AGREE = 0.7  # share of each font's sampled words OCR must read the same
MIN_PRIVATE = 3  # private-use characters in one word that send the page to OCR
SIDEWAYS_SHARE = 0.2  # of the words of three letters or more, standing sideways
STRAY_PX = 30  # pixels at SEEN_DPI glyphs may show outside every word's box
ART_PX = 600  # pixels at SEEN_DPI words that spell nothing set to draw may show (below)
ART_NEAR_PT = 3.0  # such words this near another on another row are set to draw
ART_ROW = 0.5  # of the lower word's height: middles further apart are on another row
ART_TALL = 2.0  # times the page's usual word height: one such word standing on several rows
MOST_ART_WORDS = 2000  # past this many such words on a page, all count, unplaced
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
        shown, plain, fonts = _renders(doc, index, dpi, words, budget)
    if fonts is None or marks_beyond_rules(plain, SEEN_DPI):
        return None
    k = SEEN_DPI / dpi  # the words' boxes are in ``gray``'s pixels
    changed: np.ndarray = np.abs(shown.astype(np.int16) - plain.astype(np.int16)) > SEEN_LEVELS
    if _ink_beyond_words(changed, words, k) or _glyph_art(changed, words, k):
        return None
    seen = [w for w in words if _shown(w, k, changed)]
    font_of = {id(w): f for w, f in zip(words, fonts, strict=True)}
    if not _sample_agrees(gray, seen, font_of, engine, dpi, timeout):
        return None
    return seen


def _text_trusted(words: Sequence[Word]) -> bool:
    """No character that hides what it spells (``_hides``), no word of ``MIN_PRIVATE``
    private-use characters or more (a symbol font's bullet or arrow is one or two: letters a
    font hides there are a word's worth), no word in two scripts (a Cyrillic a (U+0430) in a Latin
    name), and no more than ``SIDEWAYS_SHARE`` of the words standing sideways (a margin stamp
    is read as it stands; a page of sideways text is OCR'd, which turns it)."""
    sideways = counted = 0
    for w in words:
        private = 0
        for c in w.text:
            if _hides(c):
                return False
            private += "\ue000" <= c <= "\uf8ff"
        if private >= MIN_PRIVATE:
            return False
        if len({script_of(c) for c in w.text if c.isalpha()} - {None}) > 1:
            return False
        if sum(c.isalnum() for c in w.text) >= 3:
            counted += 1
            sideways += w.box.height > w.box.width
    return sideways <= SIDEWAYS_SHARE * counted


def _hides(c: str) -> bool:
    """Whether ``c`` keeps a word from reading as it shows: unmapped (U+FFFD, a plane-15/16
    private code), a control or format character (a zero-width space or joiner, a soft hyphen
    inside a name), an unassigned or surrogate code, or a letter or digit written in a
    compatibility form (mathematical bold, fullwidth) that detection does not read as the
    letter it shows. The common ligatures (U+FB00-FB06) are read as their letters."""
    if c == "\ufffd" or c >= "\U000f0000":
        return True
    if unicodedata.category(c) in ("Cc", "Cf", "Cn", "Cs"):
        return True
    if "\ufb00" <= c <= "\ufb06":
        return False
    return c.isalnum() and unicodedata.normalize("NFKC", c) != c


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


def _renders(
    doc: Any, index: int, dpi: float, words: Sequence[Word], budget: PixelBudget
) -> tuple[np.ndarray, np.ndarray, list[int] | None]:
    """Page ``index`` rendered grey at ``SEEN_DPI`` as it is, and again with every text object
    invisible: in PDFium's parsed copy only (the page is closed after, and the next load of it
    reads the file again). Both by the same renderer, so they differ only where text shows.
    And the font of each of ``words`` (the page's words as read at ``dpi``), read again with
    them: None where they are not the same words."""
    scale = SEEN_DPI / 72.0
    page = doc[index]
    try:
        size = pdfium.bitmap_size(page, scale)
        budget.take(*size, f"page {index + 1}, seen")
        budget.take(*size, f"page {index + 1} without its text")
        fonts: list[int] | None = []
        again = extracted_words(page, dpi / 72.0, fonts)
        if [w.text for w in again] != [w.text for w in words]:
            fonts = None
        shown = _grey(page, scale)
        for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_TEXT], max_depth=15):
            pdfium_c.FPDFTextObj_SetTextRenderMode(obj.raw, pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE)
        return shown, _grey(page, scale), fonts
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


def _pixels(box: Box, k: float, shape: tuple[int, ...], grow: int = 0) -> tuple[int, ...]:
    """``box`` (``k`` times its coordinates: the renders' pixels), grown by ``grow`` pixels,
    inside a page of ``shape``: (x0, y0, x1, y1), empty where it lies off the page."""
    h, w = int(shape[0]), int(shape[1])
    x0, y0 = max(0, int(box.x0 * k) - grow), max(0, int(box.y0 * k) - grow)
    x1, y1 = min(w, int(box.x1 * k) + 1 + grow), min(h, int(box.y1 * k) + 1 + grow)
    return x0, y0, max(x0, x1), max(y0, y1)


def _shown(word: Word, k: float, changed: np.ndarray) -> bool:
    """Whether the word's glyphs change the pixels inside its box, on at least a pixel a
    letter, and it stands at least ``MIN_SEEN_PT`` tall."""
    if word.box.height * k < MIN_SEEN_PT * SEEN_DPI / 72.0:
        return False
    x0, y0, x1, y1 = _pixels(word.box, k, changed.shape)
    if x1 <= x0 or y1 <= y0:
        return False  # off the page
    letters = max(1, sum(c.isalnum() for c in word.text))
    return int(changed[y0:y1, x0:x1].sum()) >= letters


def _ink_beyond_words(changed: np.ndarray, words: Sequence[Word], k: float) -> bool:
    """Whether glyphs show ink outside every word's box (grown a pixel or two): glyphs whose
    codes the text maps to nothing, or to spaces, show what no word says."""
    stray = changed.copy()
    for w in words:
        x0, y0, x1, y1 = _pixels(w.box, k, stray.shape, grow=2)
        stray[y0:y1, x0:x1] = False
    return int(stray.sum()) > STRAY_PX


def _glyph_art(changed: np.ndarray, words: Sequence[Word], k: float) -> bool:
    """Whether words that spell nothing — no letter or digit, or one character over and over
    ("....", "IIII") — set to draw show more ink than ``ART_PX``: dots or bars set to draw a
    name. Set to draw: each within ``ART_NEAR_PT`` of another such word on another row (dots
    or bars row over row, as letters are drawn), or standing taller than ``ART_TALL`` times the
    page's usual word (one word whose glyphs stand on several rows). A bullet, a rule of
    underscores or a leader of dots on its own line draws nothing. Linear but for the words
    near each other: they are compared in order of their tops, within reach only."""
    art = sorted((w for w in words if _spells_nothing(w)), key=lambda w: w.box.y0)
    if not art:
        return False
    heights = sorted(w.box.height for w in words)
    usual = heights[len(heights) // 2]
    near = ART_NEAR_PT / 72.0 * SEEN_DPI / k  # points, in the words' pixels
    tops = [w.box.y0 for w in art]
    tallest = max(w.box.height for w in art)
    ink = 0
    for a in art:
        if len(art) > MOST_ART_WORDS or a.box.height > ART_TALL * usual:
            drawn = True  # (so many that their places are not compared: all of them count)
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
            x0, y0, x1, y1 = _pixels(a.box, k, changed.shape)
            ink += int(changed[y0:y1, x0:x1].sum())
    return ink > ART_PX


def _spells_nothing(word: Word) -> bool:
    letters = {c for c in word.text if c.isalnum()}
    return not letters or (len(letters) == 1 and len(word.text) >= 4)


def _sample_agrees(
    gray: Image.Image,
    seen: Sequence[Word],
    font_of: dict[int, int],
    engine: OcrEngine,
    dpi: float,
    timeout: float | None,
) -> bool:
    """Lines of the seen words OCR'd, each alone, and compared with the text layer, font by
    font (a map lies for the font it belongs to): a font of at most ``FULL_FONT_WORDS`` words
    of three letters (a name set apart, a signature's font) on every line it is on, any other
    on up to ``SAMPLE_LINES`` of its lines, spread; each font's words must agree
    (``SAMPLE_AGREE``). More lines than ``MOST_SAMPLED_LINES`` to read: the page is OCR'd."""
    lines: dict[int, list[Word]] = {}
    held: dict[int, list[int]] = {}  # font -> the lines of its words of three letters
    for w in seen:
        lines.setdefault(w.line, []).append(w)
        if _letters(w):
            held.setdefault(font_of[id(w)], []).append(w.line)
    picked: set[int] = set()
    for on in held.values():
        distinct = sorted(set(on))
        if len(on) <= FULL_FONT_WORDS:
            picked.update(distinct)
        else:
            step = max(1, len(distinct) // SAMPLE_LINES)
            picked.update(distinct[::step][:SAMPLE_LINES])
    if len(picked) > MOST_SAMPLED_LINES:
        return False
    agree: dict[int, int] = {}
    total: dict[int, int] = {}
    for n in sorted(picked):
        line = lines[n]
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
            return False
        read = engine.recognize(gray.crop(crop_box), dpi=dpi, timeout=timeout).words
        dx, dy = crop_box[0], crop_box[1]
        for w in line:
            key = _letters(w)
            if not key:
                continue
            font = font_of[id(w)]
            total[font] = total.get(font, 0) + 1
            near = [
                normalise(o.text)
                for o in read
                if overlaps(w.box, Box(o.box.x0 + dx, o.box.y0 + dy, o.box.x1 + dx, o.box.y1 + dy))
            ]
            if any(key == n or (len(n) >= 3 and (key in n or n in key)) for n in near):
                agree[font] = agree.get(font, 0) + 1
    return all(agree.get(font, 0) >= SAMPLE_AGREE * n for font, n in total.items())


def _letters(word: Word) -> str:
    key = normalise(word.text)
    return key if len(key) >= 3 else ""
