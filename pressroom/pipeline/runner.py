"""Run the whole pipeline on one document: inspect → per page (raster → OCR → compose) → check."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pikepdf
from PIL import Image

from pressroom import ENGINE_VERSION, __version__, tracing
from pressroom.engines import images, pdfium
from pressroom.engines.straighten import STRAIGHTEN_MIN, Encoding, image_stream, level
from pressroom.errors import Corrupt, DeadlineExceeded, UnreadableScan
from pressroom.models import DocumentInfo, PageInfo, PageText, SourceKind
from pressroom.pipeline.check import CheckedPage, check_output
from pressroom.pipeline.inspect import file_sha256, inspect_source, render_dpi
from pressroom.pipeline.ocr import OcrEngine, OcrStage, PageReading, rotate_cw
from pressroom.pipeline.pixels import PixelBudget
from pressroom.pipeline.render import OutputBuilder, PlacedSource, then, turn_cw
from pressroom.settings import Limits
from pressroom.templates import Template

MIN_REAL_CHARS = 20
PART_PAGES = 32
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class JobOptions:
    template: Template
    title: str | None = None
    when: datetime = field(default_factory=lambda: datetime.now(UTC))
    limits: Limits = field(default_factory=Limits)
    deadline: float | None = None  # time.monotonic() by which the job must be done
    # Keep each scan's pixels as they are: skewed pages are not levelled (the text layer is
    # still laid level, line by line); pages are turned upright by placement only.
    keep_pixels: bool = False


@dataclass(frozen=True, slots=True)
class DocumentResult:
    source_sha256: str
    output_sha256: str
    kind: SourceKind
    pages: int  # content pages
    output_pages: int  # with the cover
    ocr_pages: int
    kept_pages: int
    rotations: tuple[int, ...]
    skews: tuple[float, ...]
    real_chars: int
    template: str
    engine: str
    timings: dict[str, float]
    redacted: dict[str, int] = field(default_factory=dict)  # boxes burned, by class
    levelled_pages: int = 0  # skewed pages whose scan was levelled

    @classmethod
    def of(
        cls,
        info: DocumentInfo,
        output: Path,
        checked: list[CheckedPage],
        offset: int,
        options: JobOptions,
        engine: OcrEngine,
        timings: dict[str, float],
        redacted: dict[str, int] | None = None,
        levelled_pages: int = 0,
    ) -> DocumentResult:
        """The result of a checked output: counts from its pages, the output's own hash."""
        return cls(
            source_sha256=info.sha256,
            output_sha256=file_sha256(output),
            kind=info.kind,
            pages=len(checked),
            output_pages=len(checked) + offset,
            ocr_pages=sum(1 for p in checked if p.method == "ocr"),
            kept_pages=sum(1 for p in checked if p.method == "kept"),
            rotations=tuple(p.rotation for p in checked),
            skews=tuple(p.skew for p in checked),
            real_chars=sum(p.real_chars for p in checked),
            template=options.template.identity,
            engine=f"{ENGINE_VERSION}; {engine.name}",
            timings=timings,
            redacted=redacted or {},
            levelled_pages=levelled_pages,
        )


class _Clock:
    def __init__(self) -> None:
        self.totals: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            with tracing.span(name):
                yield
        finally:
            self.totals[name] = self.totals.get(name, 0.0) + time.perf_counter() - start


def output_builder(
    options: JobOptions,
    pages: int,
    engine: OcrEngine,
    *,
    base: pikepdf.Pdf | None = None,
    note: str = "",
) -> OutputBuilder:
    """The builder for one job's output, with the template's placeholders filled in."""
    template = options.template
    values = {
        "title": options.title or template.default_title,
        "date": options.when.astimezone(UTC).date().isoformat(),
        "pages": str(pages),
        "page_count": f"{pages} page" if pages == 1 else f"{pages} pages",
        "organisation": template.organisation,
        "page": "",
    }
    producer = f"Pressroom {__version__} ({ENGINE_VERSION}; {engine.name}; {template.identity}"
    return OutputBuilder(
        template, values, producer=producer + (f"; {note})" if note else ")"), base=base
    )


def remaining(deadline: float | None) -> float | None:
    """Seconds left before ``deadline`` (monotonic); DeadlineExceeded once it has passed."""
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise DeadlineExceeded("the job ran past its deadline")
    return left


def process_document(
    source: Path,
    output: Path,
    options: JobOptions,
    engine: OcrEngine,
    *,
    progress: Progress | None = None,
) -> DocumentResult:
    """Turn ``source`` into a searchable branded PDF at ``output`` (a scratch path), checked."""
    clock = _Clock()
    with clock.stage("inspect"):
        info = inspect_source(source, options.limits)
    ocr = OcrStage(engine, straighten_min=None if options.keep_pixels else STRAIGHTEN_MIN)
    template = options.template
    title = options.title or template.default_title
    offset = 1 if template.cover is not None else 0
    checked: list[CheckedPage] = []
    total = len(info.pages)
    levelled_pages = 0
    with ExitStack() as stack:
        base = None
        if info.kind is SourceKind.PDF:
            try:
                base = stack.enter_context(pikepdf.open(source))
            except pikepdf.PdfError:
                raise Corrupt("the PDF cannot be parsed") from None
        builder = output_builder(options, len(info.pages), engine, base=base)
        stack.callback(builder.discard_parts)  # on failure too: no part files left behind
        # one pass over the document: every bitmap it makes is counted before it is made
        budget = PixelBudget(options.limits)
        rasters = _rasters(stack, source, info, lambda: builder.pdf, options.limits, budget, clock)
        # Image sources' pages live in memory until written: write them out in parts.
        chunk = PART_PAGES if info.kind is not SourceKind.PDF else 0
        for page in rasters:
            page_info, raster = page.info, page.raster
            remaining(options.deadline)
            level = 0.0
            placed: PlacedSource | None = None
            if raster is None:
                text = PageText(
                    index=page_info.index, method="kept", real_chars=page_info.text_chars
                )
                rotation = 0
            else:
                with clock.stage("ocr"):
                    reading = ocr(raster.image, raster.dpi, timeout=remaining(options.deadline))
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
                    real_chars=reading.result.real_chars,
                )
                rotation = reading.rotation
                if reading.straightened:
                    levelled_pages += 1
                    with clock.stage("straighten"):
                        placed, rotation, level = _levelled(builder.pdf, page, reading)
                del raster, reading
            with clock.stage("render"):
                if placed is None:
                    placed = page.place()
                layout = builder.add_page(placed, text, rotation, page_info.index + 1, level=level)
                del page
                if not checked and template.cover is not None:
                    builder.add_cover(layout.width, layout.height)
                if chunk and len(builder.pdf.pages) >= chunk:
                    builder.flush_part(output.with_name(f"{output.name}.part{len(builder.parts)}"))
            checked.append(CheckedPage.of(page_info.index + offset, layout, text))
            if progress is not None:
                progress(page_info.index + 1, total)
        real_chars = sum(p.real_chars for p in checked)
        if real_chars < MIN_REAL_CHARS:
            raise UnreadableScan(
                f"only {real_chars} letters or digits could be read from the whole document"
            )
        with clock.stage("render"):
            builder.save(output, title=title, created=options.when)
    with clock.stage("check"):
        check_output(output, len(checked) + offset, checked)
    return DocumentResult.of(
        info, output, checked, offset, options, engine, clock.totals, None, levelled_pages
    )


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


def _rasters(
    stack: ExitStack,
    source: Path,
    info: DocumentInfo,
    out: Callable[[], pikepdf.Pdf],
    limits: Limits,
    budget: PixelBudget,
    clock: _Clock,
) -> Iterator[SourcePage]:
    """Each page with its pixels when it needs OCR; one page at a time."""
    if info.kind is SourceKind.PDF:
        yield from _pdf_pages(stack, source, info, out(), limits, budget, clock)
    else:
        yield from _image_pages(stack, source, info, out, limits, budget, clock)


def _pdf_pages(
    stack: ExitStack,
    source: Path,
    info: DocumentInfo,
    src: pikepdf.Pdf,
    limits: Limits,
    budget: PixelBudget,
    clock: _Clock,
) -> Iterator[SourcePage]:
    """Pages of a PDF source, placed as form XObjects of ``src`` itself (see OutputBuilder)."""
    doc: Any = stack.enter_context(pdfium.RecyclingDocument(source))
    for page_info in info.pages:
        with clock.stage("render"):
            try:
                page = src.pages[page_info.index]
                crop = [float(v) for v in page.cropbox]
                form = page.as_form_xobject(handle_transformations=False)
                form.BBox = pikepdf.Array(crop)
            except (pikepdf.PdfError, ValueError, TypeError):
                raise Corrupt(f"page {page_info.index + 1} cannot be copied") from None
            x0, y0, x1, y1 = crop
            turn, (w, h) = turn_cw(page_info.rotate, x1 - x0, y1 - y0)
            placed = PlacedSource(form, then((1.0, 0.0, 0.0, 1.0, -x0, -y0), turn), w, h)
            del form
        raster = None
        if not page_info.has_text:
            with clock.stage("raster"):
                raster = _pdf_raster(doc, page, page_info, (x1 - x0, y1 - y0), limits, budget)
        # (a helper builds the raster: no page image outlives its page in this frame)
        yield SourcePage(page_info, w, h, _held(placed), raster)
        del raster, placed


def _pdf_raster(
    doc: Any,
    page: pikepdf.Page,
    page_info: PageInfo,
    crop_size: tuple[float, float],
    limits: Limits,
    budget: PixelBudget,
) -> Raster:
    native = page_info.native_dpi
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


def square(dpi_x: float, dpi_y: float) -> bool:
    """Whether pixels of these resolutions are square (a fax's 204x98 are not)."""
    return abs(dpi_x - dpi_y) <= 0.01 * max(dpi_x, dpi_y)


def frame_resolution(height_px: int, page: PageInfo) -> tuple[float, float]:
    """An image frame's resolution across (as inspected) and down (from its height)."""
    return page.native_dpi or 300.0, height_px * 72.0 / page.height_pt


def _image_pages(
    stack: ExitStack,
    source: Path,
    info: DocumentInfo,
    out: Callable[[], pikepdf.Pdf],
    limits: Limits,
    budget: PixelBudget,
    clock: _Clock,
) -> Iterator[SourcePage]:
    single = len(info.pages) == 1
    frames = images.iter_frames(source)
    stack.callback(frames.close)
    for page_info in info.pages:
        with clock.stage("raster"):
            try:
                frame = next(frames)
            except StopIteration:
                raise Corrupt("the image has fewer frames than its header says") from None
            budget.take(*frame.size, f"decoding page {page_info.index + 1}")
            raster = _image_raster(frame, info.kind, page_info, limits, budget)
        w, h = page_info.width_pt, page_info.height_pt

        def place(frame: Image.Image = frame, w: float = w, h: float = h) -> PlacedSource:
            # the frame's own bytes where PDF allows, built only when the page is not levelled
            xobject = images.image_xobject(out(), info.kind, source, frame, single)
            return PlacedSource(xobject, (w, 0.0, 0.0, h, 0.0, 0.0), w, h)

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
        dpi_x, dpi_y = frame_resolution(frame.height, page)
        if square(dpi_x, dpi_y):
            return image
        dpi = max(dpi_x, dpi_y)
        size = (round(page.width_pt * dpi / 72.0), round(page.height_pt * dpi / 72.0))
        budget.take(*size, f"making page {page.index + 1}'s pixels square")
        if image.mode == "1":
            image = image.convert("L")
        return image.resize(size, Image.Resampling.BILINEAR)

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
