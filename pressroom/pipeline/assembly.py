"""One job's output put together and finished, the same for every variant: pages added in
order, the cover after the first, the template's bands with their placeholders filled in, then
the minimum characters, the save and the output check (``Assembly``); and a split document's
parts, its page ranges read by several workers, put together as one (``assemble``)."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import replace
from datetime import UTC
from pathlib import Path
from typing import Any

import pikepdf

from pressroom import ENGINE_VERSION, __version__
from pressroom.errors import (
    OutputCheckFailed,
    OutputInvalid,
    PdfaUnreachable,
    TextReadBack,
    UnreadableScan,
)
from pressroom.models import DocumentInfo, PageText, SourceKind
from pressroom.pipeline.archive import pdfa_problems
from pressroom.pipeline.check import CheckedPage, check_output
from pressroom.pipeline.core import (
    MIN_REAL_CHARS,
    DocumentResult,
    JobOptions,
    MarginsBlank,
    text_layer,
)
from pressroom.pipeline.geometry import PageLayout, PlacedSource
from pressroom.pipeline.inspect import file_sha256
from pressroom.pipeline.ocr import OcrEngine
from pressroom.pipeline.output import OutputBuilder
from pressroom.pipeline.structure import Carriers, Placed, embedded, read_carriers
from pressroom.stages import Stage, StageTimer


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
