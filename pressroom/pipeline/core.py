"""The values and steps every job's pipeline shares, plain or redaction: the job's options
(built by ``JobOptions.of`` from an order), the result, opening a PDF source, placing a source
page unchanged or an image page, and the page's blank margins. Putting pages into the output
and finishing it is ``pipeline.assembly``'s. The variants (``pipeline.plain``,
``redact.engine``) differ only in how each page is read and made."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pikepdf
from PIL import Image

from pressroom import ENGINE_VERSION
from pressroom.corrections import Corrections, ReviewSheet
from pressroom.engines import images
from pressroom.engines.prune import PageCleaner
from pressroom.errors import (
    Corrupt,
    DeadlineExceeded,
    Encrypted,
)
from pressroom.models import DocumentInfo, OcrMode, PageInfo, SourceKind
from pressroom.orders import JobOrder
from pressroom.pipeline.check import CheckedPage
from pressroom.pipeline.geometry import PageLayout, PlacedSource, compose, turn_cw
from pressroom.pipeline.inspect import PDF_ERRORS, file_sha256
from pressroom.pipeline.ocr import OcrEngine, rotate_cw
from pressroom.pixels import PixelBudget
from pressroom.settings import Limits, RedactionSettings, Settings
from pressroom.templates import Template

MIN_REAL_CHARS = 20
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class JobOptions:
    template: Template
    title: str | None = None
    # the client's label for the job, never drawn: a redaction is held when it carries a value
    # the document's redaction removes (``redact.engine``), as a title drawn would be
    label: str | None = None
    when: datetime = field(default_factory=lambda: datetime.now(UTC))
    limits: Limits = field(default_factory=Limits)
    deadline: float | None = None  # time.monotonic() by which the job must be done
    # Keep each scan's pixels as they are: skewed pages are not levelled (the text layer is
    # still laid level, line by line); pages are turned upright by placement only.
    keep_pixels: bool = False
    # the recognisers and model a redaction uses, from the entry point's settings (None: read
    # from the environment where used, for tools that build options by hand)
    redaction: RedactionSettings | None = None
    # a reviewer's corrections to apply to a redaction (boxes removed, drawn, every occurrence)
    corrections: Corrections | None = None
    # "pdf" or "pdfa" (PDF/A-2b); None: the template's default
    output_type: str | None = None
    # write the text layer as plain text beside the output; None: the template's default
    sidecar: bool | None = None
    # deliver a document in which no page yields text, with an empty text layer (a photo, a
    # blank page) instead of refusing it UNREADABLE_SCAN
    allow_no_text: bool = False
    # pipeline.optimize's level: 0 none, 1 Flate at its best, 2 also image predictors
    optimize: int = 0
    # the OCR languages the job reads with (the engine is made for them: engine_for); ()
    # for the engine's own
    languages: tuple[str, ...] = ()
    # what OCR does with PDF pages that carry text already (pipeline.ocrmode): "skip" them,
    # "redo" an earlier OCR layer, "force" every page through OCR
    ocr: OcrMode = "skip"
    # threads a redaction's first pass reads a PDF's pages with (``redact.pages``): the
    # redaction settings' (PRESSROOM_REDACT_THREADS; the offline -j N's share)
    page_threads: int = 1

    @classmethod
    def of(
        cls,
        order: JobOrder,
        template: Template,
        settings: Settings,
        *,
        title: str | None = None,
        label: str | None = None,
        when: datetime | None = None,
        deadline: float | None = None,
    ) -> JobOptions:
        """The pipeline's options for ``order`` under these settings, ``template`` loaded
        from the order's name: the one builder the worker, the offline ``process`` and the
        review folder share. ``title`` and ``label`` as opened (never sealed); ``when``: the
        date the output carries (None: now)."""
        options = cls(
            template=template,
            title=title,
            label=label,
            limits=settings.limits,
            deadline=deadline,
            keep_pixels=order.keep_pixels,
            redaction=settings.redaction,
            corrections=order.corrections,
            output_type=order.output_type,
            sidecar=order.sidecar,
            allow_no_text=order.allow_no_text,
            optimize=order.optimize,
            languages=order.languages_or(settings.languages),
            ocr=order.ocr,
            page_threads=settings.redaction.page_threads,
        )
        return options if when is None else replace(options, when=when)

    @property
    def archive(self) -> bool:
        """Whether the output is PDF/A-2b."""
        return (self.output_type or self.template.output_type) == "pdfa"

    @property
    def wants_sidecar(self) -> bool:
        return self.template.sidecar if self.sidecar is None else self.sidecar

    def output_choices(self) -> dict[str, object]:
        """The kind of output this job makes, the template's defaults applied: what a held
        copy keeps to be made again, and what the artifact's digest names."""
        return {
            "output_type": "pdfa" if self.archive else "pdf",
            "sidecar": self.wants_sidecar,
            "allow_no_text": self.allow_no_text,
            "optimize": self.optimize,
            "languages": "+".join(self.languages),
            "ocr": self.ocr,
        }


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
    # a redaction's pages and findings (boxes and classes), for a reviewer's desk
    sheet: ReviewSheet | None = None
    # (page, class) of findings that kept a box a reviewer removed burned (they cover it)
    overridden: tuple[tuple[int, str], ...] = ()
    flattened: int = 0  # form fields and annotations drawn into their pages
    notes: int = 0  # sticky notes (text annotations) with words, which no page shows
    # "empty" when no page yielded text and the job allowed it (allow_no_text); else "text"
    text_layer: str = "text"
    # each content page's place on its output page, in order (for the sidecar text)
    layouts: tuple[PageLayout, ...] = ()
    # what of the source's carriers a redaction dropped because it held a value (or might):
    # "title", "author", "subject", "keywords", "outlines", "destinations", "links",
    # "page labels"
    dropped: tuple[str, ...] = ()
    # what a plain job's output check found that delivers all the same: a page whose text layer
    # reads back short of what OCR read (page numbers and shares, never text)
    warnings: tuple[str, ...] = ()

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
            text_layer=text_layer(checked),
            layouts=tuple(p.layout for p in checked),
        )


def text_layer(pages: Sequence[CheckedPage]) -> str:
    """ "empty" for a document too short of text to search (delivered only when allowed)."""
    return "empty" if sum(p.real_chars for p in pages) < MIN_REAL_CHARS else "text"


def remaining(deadline: float | None) -> float | None:
    """Seconds left before ``deadline`` (monotonic); DeadlineExceeded once it has passed."""
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise DeadlineExceeded("the job ran past its deadline")
    return left


def open_source_pdf(stack: ExitStack, source: Path) -> pikepdf.Pdf:
    """A PDF source opened for the length of ``stack``; one that cannot be parsed is corrupt."""
    try:
        return stack.enter_context(pikepdf.open(source))
    except pikepdf.PasswordError:
        raise Encrypted("the PDF needs a password to open; remove the password first") from None
    except pikepdf.PdfError:
        raise Corrupt("the PDF cannot be parsed") from None


def pdf_page_form(cleaner: PageCleaner, page_info: PageInfo) -> tuple[PlacedSource, pikepdf.Page]:
    """A PDF source page as a form XObject of the cleaner's document, holding only what the
    page draws (engines.prune), placed upright as displayed (its own /Rotate applied), with
    the page itself."""
    try:
        page = cleaner.pdf.pages[page_info.index]
        crop = [float(v) for v in page.cropbox]
        form = cleaner.page_form(page, crop)
    except PDF_ERRORS:
        raise Corrupt(f"page {page_info.index + 1} cannot be copied") from None
    x0, y0, x1, y1 = crop
    turn, (w, h) = turn_cw(page_info.rotate, x1 - x0, y1 - y0)
    return PlacedSource(form, compose((1.0, 0.0, 0.0, 1.0, -x0, -y0), turn), w, h), page


def image_page(
    out: pikepdf.Pdf,
    kind: SourceKind,
    source: Path,
    frame: Image.Image,
    page_info: PageInfo,
    *,
    single: bool,
) -> PlacedSource:
    """An image source's frame placed unchanged: its own bytes where PDF allows."""
    w, h = page_info.width_pt, page_info.height_pt
    xobject = images.image_xobject(out, kind, source, frame, single)
    return PlacedSource(xobject, (w, 0.0, 0.0, h, 0.0, 0.0), w, h)


def square(dpi_x: float, dpi_y: float) -> bool:
    """Whether pixels of these resolutions are square (a fax's 204x98 are not)."""
    return abs(dpi_x - dpi_y) <= 0.01 * max(dpi_x, dpi_y)


def frame_resolution(height_px: int, page: PageInfo) -> tuple[float, float]:
    """An image frame's resolution across (as inspected) and down (from its height)."""
    return page.native_dpi or 300.0, height_px * 72.0 / page.height_pt


MarginsBlank = Callable[[float, float], bool]
INK_CONTRAST = 24  # grey levels darker than the paper: ink, however light (a pale stamp too)


def blank_margins(grey: Image.Image, rotation: int, dpi: float) -> MarginsBlank:
    """Whether the page these pixels show, turned upright by ``rotation`` (cw), has nothing in
    its top and bottom margins of so many points: where brand bands may go over it. Only which
    rows hold ink is kept, not the pixels."""
    step = max(1, round(dpi / 75.0))  # about 75 dpi is plenty to see a mark
    small = rotate_cw(grey.reduce(step) if step > 1 else grey, rotation)
    levels = np.asarray(small.convert("L"))
    paper = float(np.percentile(levels, 90)) if levels.size else 255.0
    rows = levels < paper - INK_CONTRAST
    inked = rows.sum(axis=1) > max(1, small.width // 500)
    px_per_pt = dpi / 72.0 / step

    def blank(top: float, bottom: float) -> bool:
        # a little more than the band: a scan levelled after this was measured moves a little
        n_top, n_bottom = (int(np.ceil(v * 1.1 * px_per_pt)) for v in (top, bottom))
        return not inked[:n_top].any() and not (n_bottom and inked[-n_bottom:].any())

    return blank


def square_frame(image: Image.Image, page: PageInfo, budget: PixelBudget) -> Image.Image:
    """An image frame with square pixels: as it is, or resampled to its finer resolution (a
    fax's 204x98 dpi becomes 204x204), so one resolution maps its pixels to the page's points
    both ways."""
    dpi_x, dpi_y = frame_resolution(image.height, page)
    if square(dpi_x, dpi_y):
        return image
    dpi = max(dpi_x, dpi_y)
    size = (round(page.width_pt * dpi / 72.0), round(page.height_pt * dpi / 72.0))
    budget.take(*size, f"making page {page.index + 1}'s pixels square")
    if image.mode == "1":
        image = image.convert("L")
    return image.resize(size, Image.Resampling.BILINEAR)
