"""The plain pipeline: inspect → per page (raster → OCR → straighten → place) → finish → check.
The page placement and finishing steps are the shared core's (``pipeline.core``); what is this
variant's own is how each source page becomes pixels for recognition."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pikepdf
from PIL import Image, ImageDraw

from pressroom.engines import images, pdfium
from pressroom.engines.prune import FontLeft, PageCleaner
from pressroom.engines.straighten import STRAIGHTEN_MIN, Encoding, image_stream, level
from pressroom.errors import Corrupt
from pressroom.models import DocumentInfo, PageInfo, PageText, SourceKind
from pressroom.pipeline.assembly import Assembly
from pressroom.pipeline.check import CheckedPage
from pressroom.pipeline.core import (
    DocumentResult,
    JobOptions,
    MarginsBlank,
    Progress,
    blank_margins,
    frame_resolution,
    image_page,
    open_source_pdf,
    pdf_page_form,
    remaining,
    square,
    square_frame,
)
from pressroom.pipeline.geometry import PlacedSource, turn_cw
from pressroom.pipeline.inspect import render_dpi
from pressroom.pipeline.ocr import OcrEngine, OcrStage, PageReading, rotate_cw
from pressroom.pipeline.prepare import Prepared, prepare
from pressroom.pipeline.stop import between_pages
from pressroom.pixels import PixelBudget
from pressroom.settings import Limits
from pressroom.stages import Stage, StageTimer

PART_PAGES = 32  # an image source's pages are written out this many at a time


def process_document(
    source: Path | Prepared,
    output: Path,
    options: JobOptions,
    engine: OcrEngine,
    *,
    progress: Progress | None = None,
    timer: StageTimer | None = None,
) -> DocumentResult:
    """Turn ``source`` into a searchable branded PDF at ``output`` (a scratch path), checked.
    Stage timings go to ``timer`` (a fresh one when not given), failures included. A prepared
    source (``pipeline.prepare``) is read as its rework left it: pages that lost an earlier
    layer (``--ocr redo``) are read by OCR whatever text they still show (kept, and hidden
    from recognition)."""
    timer = timer or StageTimer()
    ready = source if isinstance(source, Prepared) else Prepared.as_is(source)
    with timer.stage(Stage.INSPECT):
        info = ready.inspect(options.limits)
    with ExitStack() as stack:
        base = open_source_pdf(stack, ready.path) if info.kind is SourceKind.PDF else None
        out = Assembly(stack, options, len(info.pages), engine, timer, base=base)
        levelled_pages = _read_pages(
            _Work(stack, ready.path, info, out, options, engine, output, ready.pages.reread),
            progress=progress,
        )
        out.finish(output)
    out.check(output, plain=True)
    return out.result(info, output, engine, levelled_pages=levelled_pages)


@dataclass(frozen=True, slots=True)
class RangeRead:
    """What reading one page range gives: its pages as the output check must find them, how
    many were levelled, and what drawing the document's forms in found (the whole document's,
    the same for every range)."""

    pages: list[CheckedPage]
    levelled: int = 0
    flattened: int = 0
    notes: tuple[tuple[int, str], ...] = ()  # (page from 1, text) of sticky notes


def read_range(
    source: Path,
    part: Path,
    options: JobOptions,
    engine: OcrEngine,
    pages: range,
    *,
    boundary: Callable[[], None] | None = None,
    timer: StageTimer | None = None,
    progress: Progress | None = None,
) -> RangeRead:
    """One page range of ``source`` read as ``process_document`` reads every page, written
    to ``part`` (no cover, no metadata: ``assembly.assemble`` puts the parts together and checks
    the whole). ``boundary`` is called before each page: it raises to stop the range (a
    cancel, a lost lease); ``progress`` is told each page done (its number in the document,
    the document's pages). Returns the pages as the output check must find them, with what
    else the reading found."""
    timer = timer or StageTimer()
    with ExitStack() as stack:
        # forms and annotations drawn into their pages, as for a whole document; an earlier
        # text layer out, or every page rendered, for the pages of this range
        ready = stack.enter_context(prepare(source, part, options, timer=timer, only=pages))
        with timer.stage(Stage.INSPECT):
            info = ready.inspect(options.limits)
        base = open_source_pdf(stack, ready.path) if info.kind is SourceKind.PDF else None
        out = Assembly(stack, options, len(info.pages), engine, timer, base=base, cover=False)
        work = _Work(stack, ready.path, info, out, options, engine, part, ready.pages.reread)
        levelled = _read_pages(work, progress=progress, only=pages, boundary=boundary)
        out.save_part(part)
    return RangeRead(out.checked, levelled, ready.flat.flattened, tuple(ready.flat.notes))


@dataclass(frozen=True, slots=True)
class _Work:
    """What reading a source's pages into an assembly (``out``) takes: its pages' facts, the
    job's options and engine; ``output``: where an image source's pages are written in parts;
    ``reread``: pages (from 0) read by OCR whatever text they show."""

    stack: ExitStack
    source: Path
    info: DocumentInfo
    out: Assembly
    options: JobOptions
    engine: OcrEngine
    output: Path
    reread: frozenset[int] = frozenset()


def _read_pages(
    work: _Work,
    *,
    progress: Progress | None = None,
    only: range | None = None,
    boundary: Callable[[], None] | None = None,
) -> int:
    """Every page (or those in ``only``) read and added to ``work.out``; returns how many were
    levelled."""
    stack, source, info, out = work.stack, work.source, work.info, work.out
    options, engine, output, reread = work.options, work.engine, work.output, work.reread
    timer = out.timer
    ocr = OcrStage(
        engine,
        straighten_min=None if options.keep_pixels else STRAIGHTEN_MIN,
        fit_resolution=True,
        skip_blank=True,
    )
    total = len(info.pages)
    levelled_pages = 0
    # one pass over the document: every bitmap it makes is counted before it is made
    walk = _Walk(
        stack,
        source,
        info,
        lambda: out.pdf,
        options.limits,
        PixelBudget(options.limits),
        timer,
        only,
        finishers=out.builder.before_save,
        reread=reread,
        fonts_left=out.builder.fonts_left if only is not None else None,
    )
    # Image sources' pages live in memory until written: write them out in parts.
    chunk = PART_PAGES if info.kind is not SourceKind.PDF else 0
    for page in walk.pages():
        between_pages()
        if boundary is not None:
            boundary()
        page_info, raster = page.info, page.raster
        remaining(options.deadline)
        level = 0.0
        placed: PlacedSource | Callable[[], PlacedSource] = page.place
        margins: MarginsBlank | None = None
        if raster is None:
            text = PageText(index=page_info.index, method="kept", real_chars=page_info.text_chars)
            rotation = 0
        else:
            with timer.stage(Stage.OCR):
                reading = ocr(raster.image, raster.dpi, timeout=remaining(options.deadline))
            if reading.levelling_s:
                # the levelling done inside the reading is the straighten stage's, not OCR's
                timer.add(Stage.OCR, -reading.levelling_s)
                timer.add(Stage.STRAIGHTEN, reading.levelling_s)
            text = PageText(
                index=page_info.index,
                method="ocr",
                words=reading.result.words,
                width_px=reading.size[0],
                height_px=reading.size[1],
                dpi=raster.dpi,
                rotation=reading.rotation,
                skew=reading.skew,
                mean_confidence=reading.result.mean_confidence,
                real_chars=reading.result.real_chars + page.shown_chars,
                shown=page.shown,
            )
            rotation = reading.rotation
            if options.template.fit == "margin":
                margins = blank_margins(raster.image, rotation, raster.dpi)
            if reading.straightened:
                levelled_pages += 1
                with timer.stage(Stage.STRAIGHTEN):
                    placed, rotation, level = _levelled(out.pdf, page, reading)
            del raster, reading
        del page
        out.add(
            placed,
            text,
            rotation,
            level=level,
            part=output,
            part_pages=chunk,
            margins_blank=margins,
        )
        del placed
        if progress is not None:
            progress(page_info.index + 1, total)
    return levelled_pages


@dataclass(frozen=True, slots=True)
class Raster:
    """A page's pixels for recognition, and its own pixels where the page is its image."""

    image: Image.Image  # grey, square pixels, turned by the page's own rotation
    dpi: float
    # the page's own pixels (mode 1, L or RGB, square) with the same turn as ``image``, and how
    # they are stored; None where the page is more than one image (it was rendered)
    pixels: Callable[[], Image.Image] | None = None
    encoding: Encoding | None = None
    # ``image`` is exactly the page's own pixels (grey or bilevel, same grid): levelled for
    # recognition, it is the levelled page itself
    image_is_pixels: bool = False


@dataclass(frozen=True, slots=True)
class SourcePage:
    """One source page: its displayed size, how to place it unchanged, its pixels for OCR."""

    info: PageInfo
    width: float  # displayed frame, points
    height: float
    place: Callable[[], PlacedSource]  # built only when the page is placed as it is
    raster: Raster | None  # None: the page keeps its own text
    # a page read again (--ocr redo) that still shows text: that text, kept on the page and
    # hidden from recognition, so the text layer does not hold it twice
    shown: str = ""

    @property
    def shown_chars(self) -> int:
        return sum(c.isalnum() for c in self.shown)


def _levelled(
    pdf: pikepdf.Pdf, page: SourcePage, reading: PageReading
) -> tuple[PlacedSource, int, float]:
    """The page levelled: returns what to place, the turn still to apply and the angle by which
    the placement itself must level it.

    A page that is its image gets that image turned upright and levelled once, encoded like
    the source (JPEG with the source's own tables, bilevel as CCITT G4, else lossless). A page
    drawn from more than an image is levelled by its placement: vectors turn without loss.
    """
    raster = page.raster
    if raster is None or raster.pixels is None or raster.encoding is None:
        return page.place(), reading.rotation, reading.straightened
    if reading.image is not None and reading.unaltered and raster.image_is_pixels:
        # the recognition image is these very pixels, already turned and levelled
        levelled = reading.image
    else:
        # on its own grid (recognition may have read a resampled copy): square pixels turn
        # by the same angle at any scale
        levelled = level(rotate_cw(raster.pixels(), reading.rotation), reading.straightened)
    xobject = image_stream(pdf, levelled, raster.encoding)
    _turn, (w, h) = turn_cw(reading.rotation, page.width, page.height)
    return PlacedSource(xobject, (w, 0.0, 0.0, h, 0.0, 0.0), w, h), 0, 0.0


@dataclass(frozen=True, slots=True)
class _Walk:
    """One pass over a source's pages, and what each page's reading needs."""

    stack: ExitStack
    source: Path
    info: DocumentInfo
    out: Callable[[], pikepdf.Pdf]  # the output document, once it exists
    limits: Limits
    budget: PixelBudget  # every bitmap the pass makes is counted before it is made
    timer: StageTimer
    only: range | None = None  # a page range's pages only (a split document's task)
    # called before the output is written (the page cleaner's deferred fonts)
    finishers: list[Callable[[], None]] = field(default_factory=list)
    reread: frozenset[int] = frozenset()  # pages read by OCR whatever text they show
    # a page range's replaced fonts, left for the assembly (OutputBuilder.fonts_left)
    fonts_left: list[FontLeft] | None = None

    def pages(self) -> Iterator[SourcePage]:
        """Each page with its pixels when it needs OCR; one page at a time."""
        if self.info.kind is SourceKind.PDF:
            yield from _pdf_pages(self)
        else:
            yield from _image_pages(self)


def _pdf_pages(walk: _Walk) -> Iterator[SourcePage]:
    """Pages of a PDF source, placed as form XObjects of the source itself, which is the
    output document (see OutputBuilder)."""
    # replaced standard fonts are filled with the glyphs they show once every page is read
    cleaner = PageCleaner(walk.out(), defer_fonts=True)
    if walk.fonts_left is None:
        walk.finishers.append(cleaner.finish_fonts)
    else:  # a page range: its fonts are filled by the assembly, with every range's codes
        walk.finishers.append(partial(cleaner.finish_fonts, walk.fonts_left))
    doc: Any = walk.stack.enter_context(pdfium.RecyclingDocument(walk.source))
    for page_info in walk.info.pages:
        if walk.only is not None and page_info.index not in walk.only:
            continue
        with walk.timer.stage(Stage.RENDER):
            placed, page = pdf_page_form(cleaner, page_info)
        raster = None
        shown = ""
        if not page_info.has_text:
            with walk.timer.stage(Stage.RASTER):
                raster = _pdf_raster(doc, page, page_info, walk.limits, walk.budget)
        elif page_info.index in walk.reread:
            with walk.timer.stage(Stage.RASTER):
                raster, shown = _shown_hidden(doc, page_info, walk.limits, walk.budget)
        # (a helper builds the raster: no page image outlives its page in this frame)
        yield SourcePage(page_info, placed.width, placed.height, _held(placed), raster, shown)
        del raster, placed


def _pdf_raster(
    doc: Any,
    page: pikepdf.Page,
    page_info: PageInfo,
    limits: Limits,
    budget: PixelBudget,
) -> Raster:
    native = page_info.native_dpi
    x0, y0, x1, y1 = (float(v) for v in page.cropbox)
    crop_size = (x1 - x0, y1 - y0)
    if page_info.plain_scan and native and limits.min_dpi <= native <= limits.max_dpi:
        # the page is its image: decoding it is rendering it at its own resolution
        decoded = images.decode_scan_image(page, limits.max_pixels)
        size = decoded[0].size if decoded is not None else (0, 0)
        if decoded is not None and square(size[0] / crop_size[0], size[1] / crop_size[1]):
            budget.take(*size, f"decoding page {page_info.index + 1}")
            image, encoding = decoded
            own = rotate_cw(image, page_info.rotate)
            if own.mode in ("1", "L"):  # grey or bilevel: small enough to hold
                grey = own if own.mode == "L" else own.convert("L")
                return Raster(grey, native, _held(own), encoding, image_is_pixels=True)
            # colour: decoded again only if the page is levelled
            turn = page_info.rotate

            def again() -> Image.Image:
                redecoded = images.decode_scan_image(page, limits.max_pixels)
                if redecoded is None:  # pragma: no cover - it decoded a moment ago
                    raise Corrupt(f"page {page_info.index + 1} cannot be decoded again")
                return rotate_cw(redecoded[0], turn)

            return Raster(own.convert("L"), native, again, encoding)
    dpi = render_dpi(native, limits)
    return Raster(pdfium.render_gray(doc, page_info.index, dpi, budget), dpi)


def _shown_hidden(
    doc: Any, page_info: PageInfo, limits: Limits, budget: PixelBudget
) -> tuple[Raster, str]:
    """A page that still shows text, rendered for recognition with that text painted out
    (it stays on the page, searchable as it is), and the text itself."""
    dpi = render_dpi(page_info.native_dpi, limits)
    shown, boxes = pdfium.text_boxes(doc, page_info.index, dpi)
    image = pdfium.render_gray(doc, page_info.index, dpi, budget)
    draw = ImageDraw.Draw(image)
    pad = max(1, round(dpi / 150))
    for left, top, right, bottom in boxes:
        draw.rectangle((left - pad, top - pad, right + pad, bottom + pad), fill=255)
    return Raster(image, dpi), shown


def _image_pages(walk: _Walk) -> Iterator[SourcePage]:
    kind, single = walk.info.kind, len(walk.info.pages) == 1
    frames = images.iter_frames(walk.source)
    walk.stack.callback(frames.close)
    for page_info in walk.info.pages:
        if walk.only is not None and page_info.index >= walk.only.stop:
            return
        with walk.timer.stage(Stage.RASTER):
            try:
                frame = next(frames)
            except StopIteration:
                raise Corrupt("the image has fewer frames than its header says") from None
        if walk.only is not None and page_info.index not in walk.only:
            continue  # a frame before the range: decoded to step past it, not read
        with walk.timer.stage(Stage.RASTER):
            walk.budget.take(*frame.size, f"decoding page {page_info.index + 1}")
            raster = _image_raster(frame, kind, page_info, walk.limits, walk.budget)
        w, h = page_info.width_pt, page_info.height_pt

        def place(frame: Image.Image = frame, page_info: PageInfo = page_info) -> PlacedSource:
            # built only when the page is not levelled
            return image_page(walk.out(), kind, walk.source, frame, page_info, single=single)

        yield SourcePage(page_info, w, h, place, raster)
        del raster, place


def _held(thing: Any) -> Callable[[], Any]:
    return lambda: thing


def _image_raster(
    frame: Image.Image, kind: SourceKind, page: PageInfo, limits: Limits, budget: PixelBudget
) -> Raster:
    flat = images.flatten(frame)
    if flat.mode == "CMYK":
        flat = flat.convert("RGB")
    grey = flat if flat.mode == "L" else flat.convert("L")
    image, dpi = _recognition_image(grey, page, limits, budget)
    exact = image is grey and flat.mode in ("1", "L")
    del flat, grey
    return Raster(
        image, dpi, _own_pixels(frame, page, budget), images.frame_encoding(kind, frame), exact
    )


def _own_pixels(
    frame: Image.Image, page: PageInfo, budget: PixelBudget
) -> Callable[[], Image.Image]:
    """The frame's pixels in a mode PDF stores (1, L or RGB), on its own grid when its pixels
    are square; otherwise made square at its finer resolution (a fax's 204x98 dpi)."""

    def pixels() -> Image.Image:
        image = images.flatten(frame)
        if image.mode == "CMYK":
            image = image.convert("RGB")
        if frame.mode in ("P", "PA", "LA") and image.mode == "RGB" and _is_grey(image):
            image = image.convert("L")  # a grey palette or grey with alpha: grey it stays
        return square_frame(image, page, budget)

    return pixels


def _is_grey(image: Image.Image) -> bool:
    r, g, b = (np.asarray(c, dtype=np.int16) for c in image.split())
    return bool(np.abs(r - g).max() <= 2 and np.abs(g - b).max() <= 2)


def _recognition_image(
    grey: Image.Image, page: PageInfo, limits: Limits, budget: PixelBudget
) -> tuple[Image.Image, float]:
    """Grey pixels with square pixels at a resolution Tesseract reads well."""
    image = grey
    dpi_x, dpi_y = frame_resolution(grey.height, page)
    dpi = float(min(max(max(dpi_x, dpi_y), limits.min_dpi), limits.max_dpi))
    target = (round(page.width_pt * dpi / 72.0), round(page.height_pt * dpi / 72.0))
    if target != image.size:
        budget.take(*target, f"resampling page {page.index + 1} for recognition")
        image = image.resize(target, Image.Resampling.BILINEAR)
    return image, dpi
