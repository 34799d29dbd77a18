"""The source as redaction reads it, page by page: ``RedactionSource`` (each page's pixels at
the resolution it is read and burned at, and its vector placement) and, for a copy OCR reworked
(``--ocr redo``/``force``), ``OriginalText``: the source's own words, laid onto the reworked
page."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import pikepdf
from PIL import Image

from pressroom.engines import images, pdfium
from pressroom.engines.pdfium import failing_as
from pressroom.engines.prune import PageCleaner
from pressroom.errors import Corrupt, TextLimit
from pressroom.models import Box, DocumentInfo, SourceKind, Word
from pressroom.pipeline.core import open_source_pdf
from pressroom.pipeline.resolution import fitting_dpi
from pressroom.pixels import PixelBudget
from pressroom.redact.kept import Kept
from pressroom.redact.text import extracted_words, page_to_pixels
from pressroom.settings import Limits

REDACT_DPI = 300.0


class RedactionSource:
    """Page rasters and vector placements of one source, PDF or image, page by page."""

    def __init__(
        self, stack: ExitStack, path: Path, info: DocumentInfo, limits: Limits | None = None
    ) -> None:
        self.path = path
        self.kind = info.kind
        self.info = info
        self.max_pixels = (limits or Limits()).max_pixels
        self.single = len(info.pages) == 1
        self.pdf: pikepdf.Pdf | None = None
        self.cleaner: PageCleaner | None = None  # kept pages copied with only what they draw
        # pass one's grey renderings, for the build to burn without rendering them again
        self.kept = Kept()
        if self.kind is SourceKind.PDF:
            self.pdf = open_source_pdf(stack, path)
            self.cleaner = PageCleaner(self.pdf, scrub_images=True)
            self.doc: Any = stack.enter_context(pdfium.RecyclingDocument(path))

    def dpi(self, index: int) -> float:
        """The resolution PDF page ``index`` is read and burned at: ``REDACT_DPI``, or the
        lower one a page too large for the pixel limit at it fits in (inspection checked the
        page at the same)."""
        page = self.info.pages[index]
        return fitting_dpi(page.width_pt, page.height_pt, REDACT_DPI, self.max_pixels)

    def frame(self, index: int) -> tuple[float, float]:
        """The size of page ``index``'s rendering (displayed, unrounded pixels)."""
        page = self.doc[index]
        try:
            return page_to_pixels(page, self.dpi(index) / 72.0)[1]
        finally:
            page.close()

    def frames(self) -> Generator[Image.Image, None, None]:
        return images.iter_frames(self.path)

    def render(
        self, index: int, budget: PixelBudget, *, grey: bool = False
    ) -> tuple[Image.Image, list[Word]]:
        """The displayed page at its resolution (``dpi``), RGB (or grey, as RGB made grey), and
        its extractable words in that frame."""
        scale = self.dpi(index) / 72.0
        page = self.doc[index]
        try:
            budget.take(*pdfium.bitmap_size(page, scale), f"page {index + 1}")
            if grey:
                image, coloured = pdfium.render_luma_seen(page, scale)
                self.kept.put(rendering(index, scale), image.copy(), coloured)
            else:
                image = pdfium.render_colour(page, scale)
            words = extracted_words(page, scale)
        finally:
            page.close()
        return image, words


def rendering(index: int, scale: float) -> tuple[str, int, float]:
    """The key of page ``index``'s rendering at ``scale`` among a source's kept ones."""
    return ("page", index, round(scale, 9))


class OriginalText:
    """The source's own text as it came (forms flattened, nothing reworked), for a source whose
    pages OCR reworked: the words of each page in ``pages`` (from 0), laid onto the reworked
    page's rendering.

    Both are the same displayed page: ``force`` renders each page upright as a viewer shows it
    (its crop box, its /Rotate applied) onto a page of that displayed size, and ``redo`` changes
    no geometry. The words are taken in the source page's displayed frame (crop box and /Rotate,
    as ``text.extracted_words`` reads any page) and scaled to the reworked page's frame, so a
    crop box PDFium clips to the media box lands where the rendering put it too."""

    def __init__(
        self, stack: ExitStack, path: Path, pages: frozenset[int] | None, limits: Limits
    ) -> None:
        self.path = path
        self.pages = pages
        self.limits = limits
        self.doc: Any = stack.enter_context(pdfium.RecyclingDocument(path))

    def reads(self, index: int) -> bool:
        return self.pages is None or index in self.pages

    def words(self, index: int, frame: tuple[float, float]) -> list[Word]:
        """Page ``index``'s own words, boxes in a rendering of size ``frame`` (pixels)."""
        if index >= len(self.doc):
            raise Corrupt("the PDF's page tree is inconsistent")
        scale = REDACT_DPI / 72.0
        with failing_as(f"page {index + 1} of the source cannot be read"):
            page = self.doc[index]
        try:
            with failing_as(f"page {index + 1} of the source cannot be read"):
                textpage = page.get_textpage()
            try:
                chars = textpage.count_chars()
            finally:
                textpage.close()
            if chars > self.limits.max_detect_chars:
                raise TextLimit(
                    f"page {index + 1} holds {chars:,} characters of text; "
                    f"a redaction reads at most {self.limits.max_detect_chars:,} a page"
                )
            words = extracted_words(page, scale)
            _matrix, (w, h) = page_to_pixels(page, scale)
        finally:
            page.close()
        kx, ky = frame[0] / max(w, 1e-6), frame[1] / max(h, 1e-6)
        if abs(kx - 1.0) < 1e-9 and abs(ky - 1.0) < 1e-9:
            return words
        return [_scaled_word(word, kx, ky) for word in words]


def _scaled_word(w: Word, kx: float, ky: float) -> Word:
    b = w.box
    return replace(
        w,
        box=Box(b.x0 * kx, b.y0 * ky, b.x1 * kx, b.y1 * ky),
        origin=(w.origin[0] * kx, w.origin[1] * ky),
        advance=w.advance * kx,
        size=w.size * ky,
    )
