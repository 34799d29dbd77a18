"""Redaction's first pass: every page read — its own text and OCR of its pixels, faint print
included — and the values detection finds on it. Nothing is built here."""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pikepdf
from PIL import Image

from pressroom.engines import images, pdfium
from pressroom.engines.prune import PageCleaner
from pressroom.engines.straighten import level
from pressroom.errors import TextLimit
from pressroom.models import DocumentInfo, PageInfo, SourceKind, Word
from pressroom.pipeline.core import (
    Progress,
    frame_resolution,
    open_source_pdf,
    remaining,
    square,
    square_frame,
)
from pressroom.pipeline.ocr import OcrEngine, OcrStage, level_words, rotate_cw
from pressroom.pipeline.stages import Stage, StageTimer
from pressroom.pipeline.stop import between_pages
from pressroom.pixels import PixelBudget
from pressroom.redact.detect.detector import Detector, name_tokens
from pressroom.redact.faint import faint_words
from pressroom.redact.plan import Hit, detect, turn_words
from pressroom.redact.text import extracted_words
from pressroom.settings import Limits

REDACT_DPI = 300.0


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

    @property
    def seen_text(self) -> list[Word]:
        """The page's own words as the output keeps them: all, or the visible ones."""
        return self.extracted if self.visible is None else self.visible


class RedactionSource:
    """Page rasters and vector placements of one source, PDF or image, page by page."""

    def __init__(self, stack: ExitStack, path: Path, info: DocumentInfo) -> None:
        self.path = path
        self.kind = info.kind
        self.single = len(info.pages) == 1
        self.pdf: pikepdf.Pdf | None = None
        self.cleaner: PageCleaner | None = None  # kept pages copied with only what they draw
        if self.kind is SourceKind.PDF:
            self.pdf = open_source_pdf(stack, path)
            self.cleaner = PageCleaner(self.pdf, scrub_images=True)
            self.doc: Any = stack.enter_context(pdfium.RecyclingDocument(path))

    def frames(self) -> Generator[Image.Image, None, None]:
        return images.iter_frames(self.path)

    def render(
        self, index: int, budget: PixelBudget, *, grey: bool = False
    ) -> tuple[Image.Image, list[Word]]:
        """The displayed page at 300 dpi, RGB (or grey, as RGB made grey), and its extractable
        words in that frame."""
        page = self.doc[index]
        try:
            budget.take(*pdfium.bitmap_size(page, REDACT_DPI / 72.0), f"page {index + 1}")
            scale = REDACT_DPI / 72.0
            image = pdfium.render_luma(page, scale) if grey else pdfium.render_colour(page, scale)
            words = extracted_words(page, REDACT_DPI / 72.0)
        finally:
            page.close()
        return image, words


def scan_pages(
    src: RedactionSource,
    info: DocumentInfo,
    ocr: OcrStage,
    engine: OcrEngine,
    detector: Detector,
    deadline: float | None,
    progress: Progress | None,
    limits: Limits,
    timer: StageTimer,
) -> list[PageScan]:
    scans: list[PageScan] = []
    total = len(info.pages)
    as_it_is = replace(ocr, straighten_min=None)
    budget = PixelBudget(limits)  # this pass's bitmaps
    for n, (page_info, raster, words) in enumerate(_rasters(src, info, budget, timer)):
        with timer.stage(Stage.RASTER):
            gray = raster.convert("L")
        dpi = REDACT_DPI if info.kind is SourceKind.PDF else (page_info.native_dpi or 300.0)
        # Levelled only where it is a scan with square pixels: a page with its own text is
        # set straight already (a diagonal stamp must not turn it), and on a fax's 204x98 grid
        # an angle measured in pixels is not the page's.
        level_it = info.kind is SourceKind.PDF or square(*frame_resolution(gray.height, page_info))
        reader = ocr if level_it and not words else as_it_is
        with timer.stage(Stage.OCR):
            reading = reader(gray, dpi, timeout=remaining(deadline))
            # the page's own words, in the upright (and levelled) frame OCR settled on
            words = turn_words(words, reading.rotation, gray.size)
            words = list(level_words(tuple(words), reading.straightened, reading.size))
            seen = list(reading.result.words)
            # faint print a person reads and the first reading dropped
            upright = level(rotate_cw(gray, reading.rotation), reading.straightened)
            seen += faint_words(upright, seen, engine, dpi, timeout=remaining(deadline))
        _check_read(page_info.index, seen, words, limits)
        scan = PageScan(page_info, reading.rotation, dpi, reading.size, seen, words)
        scan.level = reading.straightened
        scan.confidence = reading.result.mean_confidence
        with timer.stage(Stage.DETECT):
            scan.hits_ocr = detect(scan.ocr, detector)
            scan.hits_text = detect(scan.extracted, detector)
        scans.append(scan)
        if progress is not None:
            progress(n + 1, 2 * total)
    return scans


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
    is burned where it was found (its hit) and never spread: it is not among these."""
    hits = [h for s in scans for h in s.hits_ocr + s.hits_text if not h.finding.doubt]
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
