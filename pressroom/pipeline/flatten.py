"""Forms and annotations flattened, never dropped: what a viewer draws of each widget and
annotation (its normal appearance, honouring the Hidden and NoView flags) becomes page content
before the page is rebuilt, so a filled field, a ticked box, a stamp, a signature's appearance
or an ink note is in the output like anything else on the page — and, in a redaction, is
detected, burned and leak-checked like anything else. The interactive objects go.

A field with a value but no appearance is given one first (qpdf generates text and choice
fields' appearances). An XFA form with no appearances of its own (a dynamic form: its pages
hold only a "please wait" placeholder) is refused ``UNSUPPORTED_FORM``, never delivered empty.
A sticky note's (``/Text`` annotation's) words are not drawn on the page: they are counted,
and kept for the sidecar text.

Flattening writes a copy of the source into the job's scratch space; a source with neither
annotations nor a form is used as it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pikepdf
from pikepdf import Name

from pressroom.errors import BadMime, Corrupt, UnsupportedForm
from pressroom.models import SourceKind
from pressroom.pipeline.sniff import sniff_file

# annotations that are no part of what a page shows: a viewer draws nothing of its own for
# them (a popup belongs to its parent; a link is an area to click)
_NOT_DRAWN = {"/Popup", "/Link"}


@dataclass(frozen=True, slots=True)
class Flattened:
    """A source as the pipeline reads it: ``path`` (the source itself, or its flattened copy),
    and what flattening found."""

    path: Path
    flattened: int = 0  # annotations drawn into their pages
    notes: tuple[tuple[int, str], ...] = field(default=())  # (page from 1, text) of sticky notes


def needs_flattening(pdf: pikepdf.Pdf) -> bool:
    if "/AcroForm" in pdf.Root or "/NeedsRendering" in pdf.Root:
        return True
    return any("/Annots" in page.obj for page in pdf.pages)


def _has_appearance(annot: pikepdf.Object) -> bool:
    ap = annot.get("/AP")
    return isinstance(ap, pikepdf.Dictionary) and "/N" in ap


def _check_xfa(pdf: pikepdf.Pdf) -> None:
    if bool(pdf.Root.get("/NeedsRendering", False)):  # a dynamic XFA form: the viewer draws it
        raise UnsupportedForm(
            "the document is a dynamic XFA form (NeedsRendering): what it shows is built by "
            "the viewer, and cannot be kept"
        )
    form = pdf.Root.get("/AcroForm")
    if not isinstance(form, pikepdf.Dictionary) or "/XFA" not in form:
        return
    widgets = (
        annot
        for page in pdf.pages
        for annot in page.obj.get("/Annots", pikepdf.Array())
        if isinstance(annot, pikepdf.Dictionary) and annot.get("/Subtype") == Name.Widget
    )
    if not any(_has_appearance(w) or "/V" in w for w in widgets):
        raise UnsupportedForm(
            "the document is an XFA form with no appearances of its own: what it shows is "
            "built by the viewer, and cannot be kept"
        )


def _notes(pdf: pikepdf.Pdf) -> tuple[tuple[int, str], ...]:
    found = []
    for number, page in enumerate(pdf.pages, 1):
        for annot in page.obj.get("/Annots", pikepdf.Array()):
            if not isinstance(annot, pikepdf.Dictionary) or annot.get("/Subtype") != Name.Text:
                continue
            contents = annot.get("/Contents")
            if isinstance(contents, pikepdf.String):
                text = str(contents).strip()
                if text:
                    found.append((number, text))
    return tuple(found)


def _drawn(pdf: pikepdf.Pdf) -> int:
    """How many annotations a viewer draws (a normal appearance, not hidden or NoView)."""
    n = 0
    for page in pdf.pages:
        for annot in page.obj.get("/Annots", pikepdf.Array()):
            if not isinstance(annot, pikepdf.Dictionary) or annot.get("/Subtype") in _NOT_DRAWN:
                continue
            flags = int(annot.get("/F", 0))
            if flags & (2 | 32):  # Hidden, NoView
                continue
            if _has_appearance(annot):
                n += 1
    return n


def flatten_into(source: Path, target: Path) -> Flattened:
    """``source`` with every visible annotation and field drawn into its pages, written to
    ``target``; the source itself when it has none (``target`` is then not written). A PDF
    that does not open is left to inspection, which refuses it with its own code (encrypted,
    corrupt); one that opens but cannot be flattened is refused here, never passed on with its
    forms dropped."""
    try:
        pdf = pikepdf.open(source)
    except pikepdf.PdfError:
        return Flattened(source)
    try:
        with pdf:
            if not needs_flattening(pdf):
                return Flattened(source)
            _check_xfa(pdf)
            notes = _notes(pdf)
            form = pdf.Root.get("/AcroForm")
            if isinstance(form, pikepdf.Dictionary):
                # a field with a value and no appearance is drawn as a viewer would draw it
                form.NeedAppearances = True
                pdf.generate_appearance_streams()
            drawn = _drawn(pdf)
            pdf.flatten_annotations(mode="screen")
            for page in pdf.pages:  # what was not drawn (links, popups, hidden ones) goes
                if "/Annots" in page.obj:
                    del page.obj["/Annots"]
            if "/AcroForm" in pdf.Root:
                del pdf.Root["/AcroForm"]
            pdf.save(target, stream_decode_level=pikepdf.StreamDecodeLevel.none)
    except (pikepdf.PdfError, ValueError, TypeError, KeyError):
        target.unlink(missing_ok=True)
        raise Corrupt("the PDF's forms or annotations cannot be drawn into its pages") from None
    return Flattened(target, drawn, notes)


@contextmanager
def flattened(source: Path, scratch: Path) -> Iterator[Flattened]:
    """The source as the pipeline reads it, for the length of the block; a flattened copy is
    written beside ``scratch`` (a path in the job's private scratch space) and removed after."""
    target = scratch.with_name(f"{scratch.name}.flat.pdf")
    try:
        try:
            pdf = sniff_file(source) is SourceKind.PDF
        except BadMime:
            pdf = False  # inspection refuses it
        yield flatten_into(source, target) if pdf else Flattened(source)
    finally:
        target.unlink(missing_ok=True)
