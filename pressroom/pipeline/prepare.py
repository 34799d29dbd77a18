"""A source made ready for either variant, in one order: forms and annotations drawn into their
pages (``pipeline.flatten``), then reworked for the OCR mode (``pipeline.ocrmode``: an earlier
text layer taken out, or every page rendered), then inspected. The source is sniffed once and
hashed once (its own bytes, never a prepared copy's): the facts name the source as it came."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pressroom.models import DocumentInfo, SourceKind
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.flatten import Flattened, flattened
from pressroom.pipeline.inspect import inspect_source
from pressroom.pipeline.ocrmode import Reworked, reworked
from pressroom.pipeline.sniff import sniffed
from pressroom.settings import Limits
from pressroom.stages import StageTimer


@dataclass(frozen=True, slots=True)
class Prepared:
    """A source as a variant reads it: ``path`` (the source itself, or its flattened and
    reworked copy, in scratch space for as long as the ``prepare`` block lasts), what
    flattening found (``flat``: its copy, the fields drawn, the sticky notes) and what the
    rework changed (``pages``), and the source's ``kind`` (None: not a kind we read, which
    inspection refuses with its reason)."""

    source: Path
    kind: SourceKind | None
    flat: Flattened
    pages: Reworked

    @classmethod
    def as_is(cls, source: Path) -> Prepared:
        """``source`` read as it is: nothing flattened, nothing reworked (its kind is sniffed
        at inspection)."""
        return cls(source, None, Flattened(source), Reworked(source))

    @property
    def path(self) -> Path:
        return self.pages.path

    @property
    def changed(self) -> bool:
        """Whether the variant reads a copy, not the source itself."""
        return self.path != self.source

    def inspect(self, limits: Limits, *, every_page_dpi: float | None = None) -> DocumentInfo:
        """The facts of ``path`` (``inspect.inspect_source``), carrying the source's sha256."""
        return inspect_source(
            self.path,
            limits,
            every_page_dpi=every_page_dpi,
            kind=self.kind,
            hashed=self.source if self.changed else None,
        )


@contextmanager
def prepare(
    source: Path,
    scratch: Path,
    options: JobOptions,
    *,
    timer: StageTimer | None = None,
    only: range | None = None,
) -> Iterator[Prepared]:
    """``source`` flattened and reworked for ``options.ocr``, for the length of the block; the
    copies are written beside ``scratch`` (a path in the job's private scratch space) and
    removed after. ``only``: the pages of one range are rendered (``force``). The rework's time
    is ``timer``'s raster stage."""
    kind = sniffed(source)
    pdf = kind is SourceKind.PDF
    with (
        flattened(source, scratch, options.limits, pdf=pdf) as flat,
        reworked(flat.path, scratch, options.ocr, options.limits, only, timer, pdf=pdf) as pages,
    ):
        yield Prepared(source, kind, flat, pages)
