"""What OCR does with PDF pages that already carry text (``--ocr``, the API's ``ocr`` field).

- ``skip`` (the default): a page with text of its own keeps it and is not read again; only
  pages without text are recognised.
- ``redo``: an earlier OCR text layer is replaced. Text drawn invisibly (render mode 3, as
  every OCR tool writes its layer, Pressroom included) is taken out of each page's content and
  of the forms it draws, the rest of the page is left exactly as it was; a page left with no
  text of its own is then recognised like a scan, a page whose text is visible keeps it.
- ``force``: every page is rendered at its images' resolution (300 dpi where it has none) and
  recognised; the rendered picture replaces the page, so no vector text is left beside the new
  layer (OCRmyPDF's ``--force-ocr``). The page keeps its displayed size.

Either change is made on a copy in the job's scratch space, after forms are flattened and
before inspection, so everything after (inspection's limits, the text test, levelling, the
output check) reads the reworked pages as it would read any source. Image sources are scans
already: every mode reads them the same way.

A redaction reads the source's own text on every page a rework changed as well
(``Reworked.rewritten``; ``redact.source.OriginalText``): what a rework takes out — an earlier
layer, or all of a page's text under ``force`` — is still detected and burned.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pikepdf
import pypdfium2
from pikepdf import Array, Dictionary, Name, Operator

from pressroom.engines import pdfium
from pressroom.engines.pdfstr import text_of
from pressroom.engines.straighten import Encoding, image_stream
from pressroom.errors import (
    BadRequest,
    ContentLimit,
    Corrupt,
    Encrypted,
    PressroomError,
)
from pressroom.models import OCR_MODES, OcrMode, SourceKind
from pressroom.pipeline.content import ContentMeter
from pressroom.pipeline.inspect import PDF_ERRORS, page_tree_count, render_dpi
from pressroom.pipeline.sniff import sniffed
from pressroom.pipeline.stop import between_pages
from pressroom.pixels import PixelBudget
from pressroom.settings import Limits
from pressroom.stages import Stage, StageTimer

INVISIBLE = 3  # text render mode: neither filled nor stroked (nor added to the clip)
MAX_DEPTH = 40  # forms inside forms, as deep as a renderer draws them (pipeline.content)
_SHOWS = frozenset({"Tj", "TJ", "'", '"'})
COLOUR_JPEG_QUALITY = 90  # a rendered colour page: JPEG as a scanner's colour mode writes it


@dataclass(frozen=True, slots=True)
class Reworked:
    """A source as OCR reads it: ``path`` (the source itself, or its reworked copy), how many
    pages were changed (invisible text taken out, or rendered) and, for ``redo``, the pages
    (from 0) that lost a text layer: each is read again whatever text it still shows.
    ``rewritten``: every page (from 0) whose text the rework changed (``redo``: those that lost
    a layer; ``force``: those rendered), where a redaction reads the source's own text too."""

    path: Path
    pages: int = 0
    reread: frozenset[int] = frozenset()
    rewritten: frozenset[int] = frozenset()


def ocr_mode(raw: str) -> OcrMode:
    """``raw`` as an OCR mode; anything else is refused (``BadRequest``)."""
    for mode in OCR_MODES:
        if raw == mode:
            return mode
    raise BadRequest("ocr must be 'skip' (the default), 'redo' or 'force'")


@contextmanager
def reworked(
    source: Path,
    scratch: Path,
    mode: OcrMode,
    limits: Limits | None = None,
    only: range | None = None,
    timer: StageTimer | None = None,
    *,
    pdf: bool | None = None,
) -> Iterator[Reworked]:
    """The source as OCR in ``mode`` reads it, for the length of the block; a changed copy is
    written beside ``scratch`` (a path in the job's private scratch space) and removed after.
    ``only``: the pages of one range are rendered (``force``); the others are left alone. The
    time it takes is the raster stage's. ``pdf``: whether the source is a PDF, where the
    caller sniffed it already."""
    target = scratch.with_name(f"{scratch.name}.ocr.pdf")
    try:
        if mode == "skip":
            yield Reworked(source)
            return
        if pdf is None:
            pdf = sniffed(source) is SourceKind.PDF
        if not pdf:
            yield Reworked(source)
            return
        with (timer or StageTimer()).stage(Stage.RASTER):
            done = rework_into(source, target, mode, limits or Limits(), only)
        yield done
    finally:
        target.unlink(missing_ok=True)


def rework_into(
    source: Path, target: Path, mode: OcrMode, limits: Limits, only: range | None = None
) -> Reworked:
    """``source`` with its pages reworked for ``mode``, written to ``target``; the source
    itself where nothing changed. A PDF that does not open or is encrypted is left to
    inspection, which refuses it with its own code."""
    try:
        probe = pikepdf.open(source)
    except pikepdf.PdfError:
        return Reworked(source)
    try:
        with probe as pdf:
            if pdf.is_encrypted:
                return Reworked(source)
            count = page_tree_count(pdf, limits)
            _measure(pdf, limits, count)
            reread: frozenset[int] = frozenset()
            if mode == "redo":
                reread = rewritten = InvisibleText(pdf).strip_pages()
            else:
                rewritten = _render_pages(pdf, source, limits, only)
            changed = len(rewritten)
            if not changed:
                return Reworked(source)
            pdf.save(target, stream_decode_level=pikepdf.StreamDecodeLevel.none)
    except PressroomError:
        target.unlink(missing_ok=True)
        raise
    except pikepdf.PasswordError:
        target.unlink(missing_ok=True)
        raise Encrypted("the PDF needs a password to open; remove the password first") from None
    except PDF_ERRORS:
        target.unlink(missing_ok=True)
        raise Corrupt("the PDF's pages cannot be prepared for OCR") from None
    return Reworked(target, changed, reread, rewritten)


def _measure(pdf: pikepdf.Pdf, limits: Limits, count: int) -> None:
    """Every page's content measured against the limits before any of it is parsed (as
    inspection measures it): a content bomb is refused here as it would be there."""
    meter = ContentMeter(limits)
    operators = 0
    for i, page in enumerate(pdf.pages):
        operators += meter.page(page, i + 1).operators
        if operators > limits.max_document_operators:
            raise ContentLimit(
                f"the document's pages hold more than "
                f"{limits.max_document_operators:,} drawing operators in all"
            )
    if len(pdf.pages) != count:
        raise Corrupt("the PDF's page tree is inconsistent")


# -- redo: invisible text out ---------------------------------------------------------------


class InvisibleText:
    """Takes invisible (render mode 3) text out of a document's pages and the forms they draw.

    The render mode belongs to the graphics state: ``q``/``Q`` save and restore it, ``BT``
    does not reset it, and a form starts with the mode in force where it is drawn. A form
    drawn under both modes is rewritten once for each (the second a copy of its own, under a
    fresh resource name), so no page loses visible text to another page's invisible layer.
    """

    def __init__(self, pdf: pikepdf.Pdf) -> None:
        self.pdf = pdf
        # (form, drawn invisibly) -> the form to draw, and whether invisible text went from it
        self._done: dict[tuple[tuple[int, int], bool], tuple[pikepdf.Stream, bool]] = {}
        self._original: dict[tuple[int, int], bytes] = {}  # a form's content as it came
        self._changed: set[tuple[int, int]] = set()  # forms rewritten in place
        self._open: set[tuple[tuple[int, int], bool]] = set()
        self.removed = 0  # text-showing operators taken out (a form's, each time drawn)
        self.edits = 0  # removals and forms drawn under a name of their own

    def strip_pages(self) -> frozenset[int]:
        """Every page rewritten; returns the pages (from 0) that lost invisible text."""
        changed = set()
        for i, page in enumerate(self.pdf.pages):
            between_pages()
            before, edits = self.removed, self.edits
            resources = page.obj.get("/Resources")
            content = self._rewrite(_instructions(page), resources, False, 0)
            if self.edits > edits:
                page.obj.Contents = self.pdf.make_stream(content)
            if self.removed > before:
                changed.add(i)
        return frozenset(changed)

    def _rewrite(
        self, instructions: list[Any], resources: Any, invisible: bool, depth: int
    ) -> bytes:
        out: list[Any] = []
        saved: list[bool] = []
        for instruction in instructions:
            if isinstance(instruction, pikepdf.ContentStreamInlineImage):
                out.append(instruction)
                continue
            op = text_of(instruction.operator)
            operands = list(instruction.operands)
            if op == "q":
                saved.append(invisible)
            elif op == "Q":
                invisible = saved.pop() if saved else invisible
            elif op == "Tr" and operands:
                with suppress(TypeError, ValueError):
                    invisible = int(float(operands[0])) == INVISIBLE
            elif op in _SHOWS and invisible:
                self.removed += 1
                self.edits += 1
                # what the operator does besides showing its string is kept
                if op == '"' and len(operands) == 3:
                    out.append(pikepdf.ContentStreamInstruction([operands[0]], Operator("Tw")))
                    out.append(pikepdf.ContentStreamInstruction([operands[1]], Operator("Tc")))
                if op in ("'", '"'):
                    out.append(pikepdf.ContentStreamInstruction([], Operator("T*")))
                continue
            elif op == "Do" and operands and depth < MAX_DEPTH:
                instruction = self._form(instruction, operands[0], resources, invisible, depth)
            out.append(instruction)
        return pikepdf.unparse_content_stream(out)

    def _form(
        self, instruction: Any, name: Any, resources: Any, invisible: bool, depth: int
    ) -> Any:
        """A ``Do``: the form it draws rewritten for the mode in force (a copy where the form
        is drawn under both modes and they differ); returns the instruction to keep."""
        xobjects = resources.get("/XObject") if isinstance(resources, Dictionary) else None
        form = xobjects.get(name) if isinstance(xobjects, Dictionary) else None
        if not isinstance(form, pikepdf.Stream) or form.get("/Subtype") != Name.Form:
            return instruction
        key = (form.objgen, invisible)
        if key in self._open:
            return instruction  # a form that draws itself: drawn no deeper
        if key not in self._done:
            before = self.removed
            self._done[key] = (self._rewritten(form, resources, invisible, depth), False)
            self._done[key] = (self._done[key][0], self.removed > before)
        elif self._done[key][1]:
            self.removed += 1  # drawn again here: this page loses its invisible text too
            self.edits += 1
        done = self._done[key][0]
        if done.objgen == form.objgen:
            return instruction
        return self._named(xobjects, name, done)

    def _rewritten(
        self, form: pikepdf.Stream, resources: Any, invisible: bool, depth: int
    ) -> pikepdf.Stream:
        """``form`` read under the mode in force: itself, rewritten in place the first time
        it is met; a copy when it was rewritten for the other mode and this one differs."""
        key = (form.objgen, invisible)
        first = form.objgen not in self._original
        if first:
            self._original[form.objgen] = form.read_bytes()
        own = form.get("/Resources")
        self._open.add(key)
        try:
            edits = self.edits
            content = self._rewrite(
                _instructions(self.pdf.make_stream(self._original[form.objgen])),
                own if own is not None else resources,
                invisible,
                depth + 1,
            )
        finally:
            self._open.discard(key)
        edited = self.edits > edits
        if first:
            if edited:
                form.write(content)
                self._changed.add(form.objgen)
            return form
        if not edited and form.objgen not in self._changed:
            return form  # neither mode changed it: one form serves both
        copy = self.pdf.make_stream(content)
        for k, v in form.items():
            if k not in ("/Length", "/Filter", "/DecodeParms"):
                copy[k] = v
        made: pikepdf.Stream = self.pdf.make_indirect(copy)
        return made

    def _named(self, xobjects: Any, name: Any, form: pikepdf.Stream) -> Any:
        """``Do`` of ``form`` under a name of its own in ``xobjects``."""
        self.edits += 1
        for existing, value in xobjects.items():
            if isinstance(value, pikepdf.Stream) and value.objgen == form.objgen:
                return pikepdf.ContentStreamInstruction([Name(existing)], Operator("Do"))
        n = 1
        while Name(f"{name}_v{n}") in xobjects:
            n += 1
        fresh = Name(f"{name}_v{n}")
        xobjects[fresh] = form
        return pikepdf.ContentStreamInstruction([fresh], Operator("Do"))


def _instructions(content: Any) -> list[Any]:
    """A page's or form's instructions; qpdf's warnings about a damaged stream (it reads on)
    stay qpdf's, never an exception of ours."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(pikepdf.parse_content_stream(content))


# -- force: every page rendered ------------------------------------------------------------


def _render_pages(
    pdf: pikepdf.Pdf, source: Path, limits: Limits, only: range | None
) -> frozenset[int]:
    """Each page (of ``only``) replaced by its rendering, upright as displayed and of the
    same displayed size; returns the pages (from 0) rendered."""
    budget = PixelBudget(limits)
    rendered: set[int] = set()
    with pdfium.RecyclingDocument(source) as doc:
        if len(doc) != len(pdf.pages):
            raise Corrupt("the PDF's page tree is inconsistent")
        for i, page in enumerate(pdf.pages):
            if only is not None and i not in only:
                continue
            between_pages()
            facts = pdfium.page_facts(doc, i)
            dpi = render_dpi(facts.image_dpi, limits)
            image = _rendered(doc, i, dpi, budget)
            x0, y0, x1, y1 = (float(v) for v in page.cropbox)
            w, h = x1 - x0, y1 - y0
            if facts.rotate in (90, 270):
                w, h = h, w
            xobject = image_stream(pdf, image, _encoding(image))
            del image
            obj = page.obj
            for key in ("/CropBox", "/TrimBox", "/BleedBox", "/ArtBox", "/Rotate", "/Group"):
                if key in obj:
                    del obj[key]
            obj.MediaBox = Array([0, 0, w, h])
            obj.Resources = Dictionary(XObject=Dictionary(Im0=xobject))
            obj.Contents = pdf.make_stream(f"q {w:.4f} 0 0 {h:.4f} 0 0 cm /Im0 Do Q".encode())
            rendered.add(i)
    return frozenset(rendered)


def _rendered(doc: Any, index: int, dpi: float, budget: PixelBudget) -> Any:
    """Page ``index`` rendered in colour at ``dpi``: grey where it has no colour, bilevel where
    it has only black and white."""
    from PIL import Image

    page = doc[index]
    try:
        budget.take(*pdfium.bitmap_size(page, dpi / 72.0), f"rendering page {index + 1}")
        image = pdfium.render_colour(page, dpi / 72.0)
    except pypdfium2.PdfiumError:
        raise Corrupt(f"page {index + 1} cannot be rendered") from None
    finally:
        page.close()
    pixels = np.asarray(image).astype(np.int16)
    coloured = np.abs(pixels[..., 0] - pixels[..., 1]).max() > 2 or (
        np.abs(pixels[..., 1] - pixels[..., 2]).max() > 2
    )
    del pixels
    if coloured:
        return image
    grey = np.asarray(image.convert("L"))
    del image
    if np.isin(grey, (0, 255)).all():
        return Image.fromarray(grey, mode="L").convert("1", dither=None)
    return Image.fromarray(grey, mode="L")


def _encoding(image: Any) -> Encoding:
    if image.mode == "1":
        return Encoding("bilevel")
    if image.mode == "RGB":
        return Encoding("jpeg", quality=COLOUR_JPEG_QUALITY)
    return Encoding("lossless")
