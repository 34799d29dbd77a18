"""The steps every job's pipeline shares, plain or redaction: the job's options, opening a PDF
source, placing a source page unchanged, putting pages into the output (cover, parts), the
finishing steps (minimum characters, save, output check) and the result. The variants
(``pipeline.plain``, ``redact.engine``) differ only in how each page is read and made."""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pikepdf
from PIL import Image

from pressroom import ENGINE_VERSION, __version__
from pressroom.corrections import Corrections, ReviewSheet
from pressroom.engines import images
from pressroom.engines.prune import PageCleaner
from pressroom.errors import (
    Corrupt,
    DeadlineExceeded,
    Encrypted,
    OutputCheckFailed,
    OutputInvalid,
    PdfaUnreachable,
    TextReadBack,
    UnreadableScan,
)
from pressroom.models import DocumentInfo, OcrMode, PageInfo, PageText, SourceKind
from pressroom.orders import JobOrder
from pressroom.pipeline.archive import pdfa_problems
from pressroom.pipeline.check import CheckedPage, check_output
from pressroom.pipeline.geometry import PageLayout, PlacedSource, compose, turn_cw
from pressroom.pipeline.inspect import PDF_ERRORS, file_sha256
from pressroom.pipeline.ocr import OcrEngine, rotate_cw
from pressroom.pipeline.output import OutputBuilder
from pressroom.pipeline.structure import Carriers, Placed, embedded, read_carriers
from pressroom.pixels import PixelBudget
from pressroom.settings import Limits, RedactionSettings, Settings
from pressroom.stages import Stage, StageTimer
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


def output_builder(
    options: JobOptions,
    pages: int,
    engine: OcrEngine,
    *,
    base: pikepdf.Pdf | None = None,
    note: str = "",
    carriers: Carriers | None = None,
) -> OutputBuilder:
    """The builder for one job's output, with the template's placeholders filled in.
    ``carriers``: what the source carries besides its pages (pipeline.structure); read from
    ``base`` (the source itself) when not given."""
    template = options.template
    if carriers is None and base is not None:
        carriers = read_carriers(base)
    values = {
        # a control character (a tab, a newline, an escape) draws nothing and has no place in
        # a font's Unicode map: a space, so every reader reads the band alike
        "title": _printable(job_title(options, carriers)),
        "date": options.when.astimezone(UTC).date().isoformat(),
        "pages": str(pages),
        "page_count": f"{pages} page" if pages == 1 else f"{pages} pages",
        "organisation": template.organisation,
        "page": "",
    }
    producer = f"Pressroom {__version__} ({ENGINE_VERSION}; {engine.name}; {template.identity}"
    builder = OutputBuilder(
        template,
        values,
        producer=producer + (f"; {note})" if note else ")"),
        base=base,
        pdfa=options.archive,
        optimize=options.optimize,
    )
    builder.carriers = carriers
    return builder


def job_title(options: JobOptions, carriers: Carriers | None) -> str:
    """The output's title: the job's, else the source's own, else the template's default
    (never the default where the source has a title)."""
    own = carriers.title if carriers is not None else None
    return options.title or own or options.template.default_title


def _printable(text: str) -> str:
    return "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)


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


class Assembly:
    """One job's output as it is put together, page by page, then finished and checked: the
    same for every variant. Pages are added in order; the cover (when the template has one)
    follows the first page, sized like it."""

    def __init__(
        self,
        stack: ExitStack,
        options: JobOptions,
        pages: int,
        engine: OcrEngine,
        timer: StageTimer,
        *,
        base: pikepdf.Pdf | None = None,
        note: str = "",
        cover: bool = True,
        carriers: Carriers | None = None,
    ) -> None:
        self.options = options
        self.timer = timer
        self.builder = output_builder(
            options, pages, engine, base=base, note=note, carriers=carriers
        )
        stack.callback(self.builder.discard_parts)  # on failure too: no part files left behind
        # pages are numbered as in the whole output; without ``cover`` (a page range, put
        # together later) the cover is left to whoever assembles the whole
        self.offset = 1 if options.template.cover is not None else 0
        self.cover = cover
        self.checked: list[CheckedPage] = []
        # output pages whose new pixels were turned upright before placing (a redaction's
        # rebuilt page): the turn, for the source's targets and links on them
        self.turned: dict[int, int] = {}
        # what a plain job's output check found that delivers all the same (a page whose text
        # layer reads back short of what OCR read), said on the ok line and in the job
        self.warnings: list[str] = []

    @property
    def pdf(self) -> pikepdf.Pdf:
        return self.builder.pdf

    def add(
        self,
        placed: PlacedSource | Callable[[], PlacedSource],
        text: PageText,
        rotation: int,
        *,
        level: float = 0.0,
        part: Path | None = None,
        part_pages: int = 0,
        margins_blank: MarginsBlank | None = None,
    ) -> PageLayout:
        """Place one page with its text layer; a callable ``placed`` is built only here. Once
        the output holds ``part_pages`` pages (0: never) they are written out to a part file
        beside ``part``. ``margins_blank``: whether the upright page shows nothing in its top
        and bottom margins of so many points (None: not known, so the bands never go over
        them)."""
        with self.timer.stage(Stage.RENDER):
            source = placed() if callable(placed) else placed
            layout = self.builder.add_page(
                source, text, rotation, text.index + 1, level=level, margins_blank=margins_blank
            )
            del source
            if not self.checked and self.offset and self.cover:
                self.builder.add_cover(layout.width, layout.height)
            if part is not None and part_pages and len(self.builder.pdf.pages) >= part_pages:
                self.builder.flush_part(
                    part.with_name(f"{part.name}.part{len(self.builder.parts)}")
                )
        self.checked.append(CheckedPage.of(text.index + self.offset, layout, text))
        return layout

    def save_part(self, part: Path) -> None:
        """A page range's pages written to ``part``, to be assembled with the others."""
        with self.timer.stage(Stage.RENDER):
            self.builder.save_part(part)

    def finish(self, output: Path) -> None:
        """Refuse an output with too little text to be worth searching (unless the job allows
        a document without text); save it."""
        real_chars = sum(p.real_chars for p in self.checked)
        if real_chars < MIN_REAL_CHARS and not self.options.allow_no_text:
            raise UnreadableScan(
                f"only {real_chars} letters or digits could be read from the whole document"
            )
        title = job_title(self.options, self.builder.carriers)
        placed = [
            Placed(
                p.output_index - self.offset,
                p.output_index,
                p.layout,
                self.turned.get(p.output_index, p.rotation),
            )
            for p in self.checked
        ]
        with self.timer.stage(Stage.RENDER):
            self.builder.save(output, title=title, created=self.options.when, placed=placed)

    def check(self, output: Path, *, plain: bool = False) -> None:
        """The saved output read back: its pages, its text where we laid it.

        A redaction's output that misses a check is held for a person (``OutputCheckFailed``).
        A plain job's (``plain``) is never held, since there is nothing a person could approve
        into a better file: a text layer that reads back short of what OCR read is delivered
        with a warning (``warnings``); a structural miss is refused ``OUTPUT_INVALID``, a PDF/A
        clause it breaks ``PDFA_UNREACHABLE``, nothing delivered."""
        with self.timer.stage(Stage.CHECK):
            try:
                check_output(output, len(self.checked) + self.offset, self.checked)
            except TextReadBack as exc:
                if not plain:
                    raise
                self.warnings.append(exc.message)
            except OutputCheckFailed as exc:
                if not plain:
                    raise
                raise OutputInvalid(exc.message) from None
            if self.options.archive:
                problems = pdfa_problems(output)
                if problems:
                    said = "not PDF/A-2b: " + "; ".join(problems)
                    raise PdfaUnreachable(said) if plain else OutputCheckFailed(said)

    def result(
        self,
        info: DocumentInfo,
        output: Path,
        engine: OcrEngine,
        *,
        redacted: dict[str, int] | None = None,
        levelled_pages: int = 0,
    ) -> DocumentResult:
        result = DocumentResult.of(
            info,
            output,
            self.checked,
            self.offset,
            self.options,
            engine,
            self.timer.totals,
            redacted,
            levelled_pages,
        )
        # a page rebuilt from pixels turned upright in them is placed with no turn left: its
        # turn is the one it was read at (the ok line's "turned upright")
        rotations = tuple(self.turned.get(p.output_index, p.rotation) for p in self.checked)
        result = replace(result, warnings=tuple(self.warnings), rotations=rotations)
        carriers = self.builder.carriers
        return replace(result, dropped=carriers.dropped) if carriers is not None else result


def page_records(pages: Sequence[CheckedPage]) -> list[dict[str, Any]]:
    """A range's pages as the output check must find them, stored beside its part."""
    return [
        {
            "index": p.output_index,
            "layout": [
                p.layout.width,
                p.layout.height,
                list(p.layout.content),
                p.layout.scale,
                list(p.layout.bands),
            ],
            "method": p.method,
            "expected": p.expected,
            "real_chars": p.real_chars,
            "rotation": p.rotation,
            "skew": p.skew,
        }
        for p in pages
    ]


def read_page_records(records: Sequence[dict[str, Any]]) -> list[CheckedPage]:
    out = []
    for r in records:
        # (a part from before the scale and bands: 1, none)
        width, height, content, *rest = r["layout"]
        left, bottom, right, top = (float(v) for v in content)
        scale = float(rest[0]) if rest else 1.0
        footer, header = (float(v) for v in rest[1]) if len(rest) > 1 else (0.0, 0.0)
        out.append(
            CheckedPage(
                int(r["index"]),
                PageLayout(
                    float(width), float(height), (left, bottom, right, top), scale, (footer, header)
                ),
                str(r["method"]),
                str(r["expected"]),
                int(r["real_chars"]),
                int(r["rotation"]),
                float(r["skew"]),
            )
        )
    return out


def part_carriers(part: Path) -> Carriers | None:
    """The source's carriers a range's part holds (None: a part from before them, or of a
    source that carries none)."""
    try:
        with pikepdf.open(part) as pdf:
            return embedded(pdf)
    except pikepdf.PdfError:
        return None  # the assembly reads the part again, and says what is wrong with it


def assemble(
    parts: Sequence[Path],
    pages: Sequence[CheckedPage],
    output: Path,
    options: JobOptions,
    engine: OcrEngine,
    timer: StageTimer,
    *,
    source_sha256: str,
    kind: SourceKind,
) -> DocumentResult:
    """A split document's parts (its page ranges, in page order) put together into one
    output as a whole document's: the cover sized like the first page, the metadata, the
    minimum characters, then the output check, once, over every page. The part files are
    consumed."""
    with ExitStack() as stack:
        # what the source carries, as each range read it (the same in every part)
        carriers = part_carriers(parts[0]) if parts else None
        out = Assembly(stack, options, len(pages), engine, timer, carriers=carriers)
        out.checked = sorted(pages, key=lambda p: p.output_index)
        expected = list(range(out.offset, out.offset + len(pages)))
        if [p.output_index for p in out.checked] != expected:
            raise OutputCheckFailed("the parts do not hold every page once, in order")
        builder = out.builder
        with timer.stage(Stage.RENDER):
            if out.offset:
                first = out.checked[0].layout
                builder.add_cover(first.width, first.height)
                builder.flush_part(output.with_name(f"{output.name}.cover"))
            builder.parts.extend(parts)
        out.finish(output)
    out.check(output, plain=True)
    return DocumentResult(
        source_sha256=source_sha256,
        output_sha256=file_sha256(output),
        kind=kind,
        pages=len(out.checked),
        output_pages=len(out.checked) + out.offset,
        ocr_pages=sum(1 for p in out.checked if p.method == "ocr"),
        kept_pages=sum(1 for p in out.checked if p.method == "kept"),
        rotations=tuple(p.rotation for p in out.checked),
        skews=tuple(p.skew for p in out.checked),
        real_chars=sum(p.real_chars for p in out.checked),
        template=options.template.identity,
        engine=f"{ENGINE_VERSION}; {engine.name}",
        timings=timer.totals,
        text_layer=text_layer(out.checked),
        layouts=tuple(p.layout for p in out.checked),
        warnings=tuple(out.warnings),
    )
