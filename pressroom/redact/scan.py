"""Redaction's first pass: every page read — its own text and OCR of its pixels, faint print
included — and the values detection finds on it. Nothing is built here.

Under ``--ocr redo`` and ``force`` the pages read are a reworked copy (an earlier invisible
layer taken out, or every page rendered to an image). What a person could find in the source
must still be found: the source's own text (forms flattened, nothing reworked) is read too, on
each page the rework changed, laid onto the reworked page (the same displayed page, so the same
frame), detected and burned like the page's own. It is read for detection only: the output's
text layer stays what the mode makes (OCR's, or the visible text a page kept)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace

import numpy as np
from PIL import Image

from pressroom.engines import images
from pressroom.engines.straighten import level
from pressroom.errors import TextLimit
from pressroom.models import Box, DocumentInfo, PageInfo, SourceKind, Word
from pressroom.pipeline.core import (
    frame_resolution,
    remaining,
    square,
    square_frame,
)
from pressroom.pipeline.ocr import OcrEngine, OcrStage, level_words, rotate_cw
from pressroom.pipeline.stop import between_pages
from pressroom.pixels import PixelBudget
from pressroom.redact import procs
from pressroom.redact.context import RunContext
from pressroom.redact.detect.detector import name_tokens
from pressroom.redact.detect.evidence import spreads
from pressroom.redact.detection import Hit, detect
from pressroom.redact.faint import faint_words
from pressroom.redact.pages import read_in_threads, twinnable
from pressroom.redact.plan import covered_words, turn_words, visible_words
from pressroom.redact.seen import seen_words
from pressroom.redact.source import REDACT_DPI, OriginalText, RedactionSource
from pressroom.redact.writing import ocr_languages, unread_pages
from pressroom.settings import Limits
from pressroom.stages import Stage, StageTimer


@dataclass
class PageScan:
    """What pass one learnt of a page; pass two decides and builds from it."""

    info: PageInfo
    rotation: int
    dpi: float
    size: tuple[int, int]  # upright pixels
    ocr: list[Word]
    extracted: list[Word]
    hits_ocr: list[Hit] = field(default_factory=list)
    hits_text: list[Hit] = field(default_factory=list)
    confidence: float = 100.0
    # degrees the upright page is turned clockwise to level its lines; the words above are in
    # that levelled frame, and so is everything built from them
    level: float = 0.0
    # the extracted words a reader can see, once a build rebuilt the page from its pixels
    # (hidden, white, tiny and off-page text dropped); None: the page was not rebuilt.
    # ``extracted`` stays the page as read: the hits count its words, and a second build
    # starts from it again.
    visible: list[Word] | None = None
    # where the page landed on its output page, once built: (scale, left, top) in output
    # points, y down — a point (x, y) of the page is at (left + scale x, top + scale y)
    placement: tuple[float, float, float] = (1.0, 0.0, 0.0)
    bands: tuple[float, float] = (0.0, 0.0)  # its output page's footer and header, points
    # read below REDACT_DPI (a page too large for the pixel limit at it) and showing ink
    # outside its own words' boxes: pictures, drawings or text drawn as shapes, which the lower
    # resolution may not read, so the output check holds it for a person
    unowned_ink: bool = False
    # how many of ``extracted`` (the first ones) are the page's own words; the rest are the
    # source's words that the reworked page no longer carries (``--ocr redo``/``force``),
    # read and burned like the page's own but never part of the output's text. None: all.
    own: int | None = None
    # True where what a reader sees on the page was read from its own text, not OCR'd: a
    # born-digital page whose pixels were shown to be its text and nothing more
    # (``redact.seen``); ``ocr`` then holds its visible words, as read from the text layer.
    # Its output is pixel-for-pixel determined by that text (kept as vectors, or rebuilt with
    # boxes over those words), so the read-back need not OCR it again.
    from_text: bool = False

    @property
    def seen_text(self) -> list[Word]:
        """The page's own words as the output keeps them: all, or the visible ones (never the
        source's words a reworked page lost: the output's text is what the mode makes)."""
        words = self.extracted if self.visible is None else self.visible
        if self.own is None or self.own >= len(self.extracted):
            return words
        mine = {id(w) for w in self.extracted[: self.own]}
        return [w for w in words if id(w) in mine]


# ink darker than this (0-255) counts; past this many pixels of it outside the page's own words
# (each box grown by a few pixels) the page shows more than its own text: a name in 4 pt type
# read at 100 dpi is about 150 such pixels
INK_LEVEL = 160
UNOWNED_INK_PIXELS = 24


def ink_beyond(gray: Image.Image, words: Sequence[Word], pad: int = 3) -> bool:
    """Whether ``gray`` shows ink outside the boxes of ``words`` (in its pixel frame): more
    than ``UNOWNED_INK_PIXELS`` pixels darker than ``INK_LEVEL``."""
    ink = np.asarray(gray) < INK_LEVEL
    h, w = ink.shape
    for word in words:
        b = word.box
        x0, y0 = max(0, int(b.x0) - pad), max(0, int(b.y0) - pad)
        x1, y1 = min(w, int(b.x1 + 1) + pad), min(h, int(b.y1 + 1) + pad)
        if x1 > x0 and y1 > y0:
            ink[y0:y1, x0:x1] = False
    return bool(ink.sum() > UNOWNED_INK_PIXELS)


def scan_pages(ctx: RunContext, original: OriginalText | None = None) -> list[PageScan]:
    """Every page read and detected. ``original``: the source's own text, where ``ctx.src`` is
    a copy OCR reworked (``--ocr redo``/``force``): on each page the rework changed, the
    source's words the page no longer carries join its words (``PageScan.own`` counts the
    page's own), are detected in their own reading order, and their hits are burned like any.

    A PDF's pages are read by ``ctx.options.page_threads`` readers at once where more than
    one is asked for and the engine can be twinned: forked processes, each with its own
    Tesseract and its own handles on the source (``redact.procs``), where this process may
    fork (``procs.fork_refused``: not a daemonic process, no other threads alive); else
    threads (``redact.pages``; each thread reads with an engine of its own, PDFium, pikepdf
    and detection are taken one thread at a time). What needs the whole document (the values
    found, the source's words a reworked page keeps) is decided after every page is read."""
    info = ctx.info
    budget = PixelBudget(ctx.options.limits)  # this pass's bitmaps
    engine = ctx.engine
    reads = ocr_languages(ctx.options.languages or tuple(getattr(engine, "languages", ("eng",))))
    reader = PageReader(ctx, original, engine, ctx.ocr, budget, reads)
    threads = min(ctx.options.page_threads, len(info.pages))
    if threads > 1 and info.kind is SourceKind.PDF and twinnable(engine):
        if procs.fork_refused() is None:
            scans = procs.read_in_processes(reader, threads)
        else:
            scans = read_in_threads(reader, threads)
    else:
        scans = []
        for n, (page_info, raster, words) in enumerate(_rasters(ctx.src, info, budget, ctx.timer)):
            scans.append(reader.read(page_info, raster, words, ctx.timer))
            if ctx.progress is not None:
                ctx.progress(n + 1, 2 * len(info.pages))
    joined = [scan for scan in scans if scan.own is not None]  # pages that took source words
    if joined:
        with ctx.timer.stage(Stage.DETECT):
            values, tokens = document_values(scans)
            found = set().union(*values.values()) if values else set()
            for scan in joined:
                _keep_source_words(scan, found, tokens)
    return scans


@dataclass
class PageReader:
    """Reads one page of a redaction's first pass: the run's context and what one thread
    reads with (its engine and OCR stage), the pass's pixel budget, the writing the job's OCR
    reads; ``turn`` is held around every PDFium and pikepdf call and ``detecting`` around
    detection, so threads reading pages at once take those one at a time."""

    ctx: RunContext
    original: OriginalText | None
    engine: OcrEngine
    ocr: OcrStage
    budget: PixelBudget
    reads: frozenset[str]
    turn: AbstractContextManager[object] = field(default_factory=threading.RLock)
    detecting: AbstractContextManager[object] = field(default_factory=threading.Lock)

    def twin(self, engine: OcrEngine) -> PageReader:
        """This reader with another engine (one per thread), its locks shared."""
        return replace(self, engine=engine, ocr=replace(self.ocr, engine=engine))

    def render(self, page_info: PageInfo, timer: StageTimer) -> tuple[Image.Image, list[Word]]:
        """A PDF page rendered grey for the first pass, and its words."""
        with self.turn, timer.stage(Stage.RASTER):
            return self.ctx.src.render(page_info.index, self.budget, grey=True)

    def read(
        self, page_info: PageInfo, raster: Image.Image, words: list[Word], timer: StageTimer
    ) -> PageScan:
        """The page read (its own text and what a reader sees of it) and detected."""
        src, info, engine, detector = self.ctx.src, self.ctx.info, self.engine, self.ctx.detector
        deadline, limits = self.ctx.options.deadline, self.ctx.options.limits
        original = self.original
        read: list[Word] = []
        if original is not None and src.kind is SourceKind.PDF and original.reads(page_info.index):
            with self.turn, timer.stage(Stage.RASTER):
                read = original.words(page_info.index, src.frame(page_info.index))
        with timer.stage(Stage.RASTER):
            gray = raster.convert("L")
        dpi = (
            src.dpi(page_info.index)
            if info.kind is SourceKind.PDF
            else (page_info.native_dpi or 300.0)
        )
        # in the frame the page was rendered in, before any reading turns it
        unowned_ink = info.kind is SourceKind.PDF and dpi < REDACT_DPI and ink_beyond(gray, words)
        if (
            not read
            and not unowned_ink
            and _text_page(src, page_info.index, dpi, words, self.reads)
        ):
            # a born-digital page whose pixels are its text: read from it, not OCR'd
            with timer.stage(Stage.OCR):
                assert src.pdf is not None  # (``_text_page``)
                shown = seen_words(
                    src.doc,
                    src.pdf,
                    page_info.index,
                    gray,
                    words,
                    dpi,
                    engine,
                    self.budget,
                    turn=self.turn,
                    timeout=remaining(deadline),
                )
            if shown is not None:
                _check_read(page_info.index, (), words, limits)
                scan = PageScan(page_info, 0, dpi, gray.size, list(shown), words, from_text=True)
                with self.detecting, timer.stage(Stage.DETECT):
                    # the words seen are some of its own: one detection reads them all, and
                    # the seen reading has the same findings over its words (else each word
                    # of a name found whole would be found again alone there, a finding of
                    # its own that a reviewer's let-stand of the name does not reach)
                    scan.hits_text = detect(words, detector)
                    scan.hits_ocr = _seen_hits(scan.hits_text, words, scan.ocr)
                return scan
        # Levelled only where it is a scan with square pixels: a page with its own text is
        # set straight already (a diagonal stamp must not turn it), and on a fax's 204x98 grid
        # an angle measured in pixels is not the page's. (The source's words a reworked page
        # lost change nothing here: OCR reads the page as the mode made it.)
        level_it = info.kind is SourceKind.PDF or square(*frame_resolution(gray.height, page_info))
        reader = self.ocr if level_it and not words else replace(self.ocr, straighten_min=None)
        with timer.stage(Stage.OCR):
            reading = reader(gray, dpi, timeout=remaining(deadline))
            # the page's own words, in the upright (and levelled) frame OCR settled on
            words = _settled(words, reading.rotation, gray.size, reading.straightened, reading.size)
            read = _settled(read, reading.rotation, gray.size, reading.straightened, reading.size)
            seen = list(reading.result.words)
            # faint print a person reads and the first reading dropped
            upright = level(rotate_cw(gray, reading.rotation), reading.straightened)
            seen += faint_words(upright, seen, engine, dpi, timeout=remaining(deadline))
        if reading.levelling_s:
            # the levelling done inside the reading is straightening's, as in plain jobs
            timer.add(Stage.OCR, -reading.levelling_s)
            timer.add(Stage.STRAIGHTEN, reading.levelling_s)
        _check_read(page_info.index, seen, words, limits)
        _check_read(page_info.index, (), read, limits)
        carried = _carried(read, words)
        lost = [j for j, k in enumerate(carried) if k is None]
        # the source's words the page lost, after its own (on lines of their own)
        shift = max((w.line for w in words), default=-1) + 1
        extracted = words + [replace(read[j], line=read[j].line + shift) for j in lost]
        scan = PageScan(page_info, reading.rotation, dpi, reading.size, seen, extracted)
        scan.unowned_ink = unowned_ink
        scan.level = reading.straightened
        scan.confidence = reading.result.mean_confidence
        with self.detecting, timer.stage(Stage.DETECT):
            scan.hits_ocr = detect(scan.ocr, detector)
            scan.hits_text = detect(words, detector)
            if lost:
                # the source's words read as the source has them (their order, their context),
                # each hit moved onto the page's words: its own where the page kept the word
                at = {j: len(words) + r for r, j in enumerate(lost)}
                where = [k if k is not None else at[j] for j, k in enumerate(carried)]
                moved = [
                    Hit(h.finding, tuple(where[i] for i in h.words)) for h in detect(read, detector)
                ]
                scan.hits_text = _union(scan.hits_text, moved)
                scan.own = len(words)
        return scan


def _seen_hits(hits: Sequence[Hit], words: Sequence[Word], seen: Sequence[Word]) -> list[Hit]:
    """``hits`` over ``words`` moved onto ``seen`` (some of those very words): each hit all of
    whose words are seen."""
    at = {id(w): j for j, w in enumerate(seen)}
    return [
        Hit(h.finding, tuple(at[id(words[i])] for i in h.words))
        for h in hits
        if all(id(words[i]) in at for i in h.words)
    ]


def _text_page(
    src: RedactionSource,
    index: int,
    dpi: float,
    words: Sequence[Word],
    reads: frozenset[str],
) -> bool:
    """Whether page ``index`` may be read from its own text (``redact.seen``): a PDF page
    with words, read at the full resolution (a page read lower to fit the pixel limit is OCR'd
    at it, and held when it shows more than its words), in writing the job's OCR reads
    (``reads``: ``writing.ocr_languages``; a page OCR cannot read is rebuilt from its pixels
    with what OCR made of it, and held: ``redact.engine``)."""
    return (
        src.kind is SourceKind.PDF
        and src.pdf is not None
        and bool(words)
        and dpi >= REDACT_DPI - 0.5
        and unread_pages([" ".join(w.text for w in words)], {"ocr": reads}) is None
    )


def _settled(
    words: list[Word], rotation: int, size: tuple[int, int], angle: float, levelled: tuple[int, int]
) -> list[Word]:
    """Words of the page's rendering in the upright, levelled frame OCR settled on."""
    if not words:
        return words
    turned = turn_words(words, rotation, size)
    return list(level_words(tuple(turned), angle, levelled))


_CELL = 8.0  # pixels (300 dpi): the grid the page's own words are looked up in
_SAME = 2.0  # pixels: the same word at the same place, edge for edge
_LOOK = 16  # candidates tried in one cell: past them a word counts as lost (read, burned)
_NEAR = ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))


def _carried(read: Sequence[Word], own: Sequence[Word]) -> list[int | None]:
    """For each of the source's words, the page's own word that is the same word at the same
    place, or None where the rework took it out (redo's invisible layer; every word under
    force). Linear: each word is looked up in a grid of the page's words by text and cell."""
    if not own:
        return [None] * len(read)
    grid: dict[tuple[str, int, int], list[int]] = {}
    for k, w in enumerate(own):
        grid.setdefault((w.text, int(w.box.x0 // _CELL), int(w.box.y0 // _CELL)), []).append(k)
    out: list[int | None] = []
    for w in read:
        cx, cy = int(w.box.x0 // _CELL), int(w.box.y0 // _CELL)
        match: int | None = None
        for dx, dy in (
            (0, 0),
            (-1, 0),
            (1, 0),
            (0, -1),
            (0, 1),
            (-1, -1),
            (-1, 1),
            (1, -1),
            (1, 1),
        ):
            bucket = grid.get((w.text, cx + dx, cy + dy))
            if not bucket:
                continue
            for pos in range(min(len(bucket), _LOOK)):
                k = bucket[-1 - pos]
                if _same_place(own[k].box, w.box):
                    bucket[-1 - pos] = bucket[-1]  # taken: each own word matches once
                    bucket.pop()
                    match = k
                    break
            if match is not None:
                break
        out.append(match)
    return out


def _same_place(a: Box, b: Box) -> bool:
    return (
        abs(a.x0 - b.x0) <= _SAME
        and abs(a.y0 - b.y0) <= _SAME
        and abs(a.x1 - b.x1) <= _SAME
        and abs(a.y1 - b.y1) <= _SAME
    )


def _union(hits: list[Hit], more: Sequence[Hit]) -> list[Hit]:
    """``hits`` and those of ``more`` over other words or of another class; where both found
    the same, the one believed."""
    seen = {(h.finding.kind, h.words): n for n, h in enumerate(hits)}
    out = list(hits)
    for h in more:
        n = seen.get((h.finding.kind, h.words))
        if n is None:
            seen[(h.finding.kind, h.words)] = len(out)
            out.append(h)
        elif out[n].finding.doubt and not h.finding.doubt:
            out[n] = h
    return out


def _keep_source_words(scan: PageScan, found: set[str], tokens: frozenset[str]) -> None:
    """The source's words a page lost stay on it where they matter — a hit in them, a value
    or name found anywhere in the document among them, or a word OCR did not see where it
    stands (rotated, tiny, faint, hidden: the build rebuilds such a page from its pixels, and a
    reviewer's "every occurrence" finds it there). Else they go: the page's own words, or
    OCR's, are all it has, and it is built as it would be without them."""
    own = scan.own
    assert own is not None
    lost = scan.extracted[own:]
    if any(i >= own for h in scan.hits_text for i in h.words):
        return
    if covered_words(lost, [], found, tokens):
        return
    shown = {id(w) for w in visible_words(lost, scan.ocr)}
    if any(sum(c.isalnum() for c in w.text) >= 3 and id(w) not in shown for w in lost):
        return
    scan.extracted = scan.extracted[:own]
    scan.own = None


def check_text_size(info: DocumentInfo, limits: Limits) -> None:
    """Refuse, before any page is rendered or read, a page whose own text passes what
    detection reads (``TEXT_LIMIT``): a redaction is never delivered unread."""
    for page in info.pages:
        if page.text_chars > limits.max_detect_chars:
            raise TextLimit(
                f"page {page.index + 1} holds {page.text_chars:,} characters of text; "
                f"a redaction reads at most {limits.max_detect_chars:,} a page"
            )


def _check_read(index: int, seen: Sequence[Word], words: Sequence[Word], limits: Limits) -> None:
    """The same cap on what the page gave once read (OCR's words and the page's own)."""
    chars = max(sum(len(w.text) + 1 for w in seen), sum(len(w.text) + 1 for w in words))
    if chars > limits.max_detect_chars:
        raise TextLimit(
            f"page {index + 1} reads as {chars:,} characters of text; "
            f"a redaction reads at most {limits.max_detect_chars:,} a page"
        )


def document_values(scans: Sequence[PageScan]) -> tuple[dict[str, set[str]], frozenset[str]]:
    """Every value found anywhere (by class), and the name tokens of every person found
    anywhere: once a person is found, every mention on every page goes too. A doubtful name
    is burned where it was found (its hit) and never spread: it is not among these, nor is one
    word that only the model or a capital letter called (``evidence.spreads``)."""
    hits = [h for s in scans for h in s.hits_ocr + s.hits_text if spreads(h.finding)]
    values: dict[str, set[str]] = {}
    for h in hits:
        values.setdefault(h.finding.kind, set()).add(h.finding.value)
    tokens = name_tokens(h.finding.value for h in hits if h.finding.kind == "name")
    return values, tokens


def _rasters(
    src: RedactionSource, info: DocumentInfo, budget: PixelBudget, timer: StageTimer
) -> Iterator[tuple[PageInfo, Image.Image, list[Word]]]:
    if info.kind is SourceKind.PDF:
        for page_info in info.pages:
            between_pages()
            # pass one reads grey: the page is never held in colour (4 bytes a pixel) here
            with timer.stage(Stage.RASTER):
                image, words = src.render(page_info.index, budget, grey=True)
            yield page_info, image, words
    else:
        frames = src.frames()
        try:
            for page_info, frame in zip(info.pages, frames, strict=False):
                between_pages()
                with timer.stage(Stage.RASTER):
                    budget.take(*frame.size, f"page {page_info.index + 1}")
                    image = square_frame(images.flatten(frame).convert("RGB"), page_info, budget)
                yield page_info, image, []
                del image
        finally:
            frames.close()
