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
from decimal import Decimal
from pathlib import Path

import pikepdf
from pikepdf import Name

from pressroom.engines.pdfstr import text_of
from pressroom.errors import Corrupt, Encrypted, UnsupportedForm
from pressroom.models import SourceKind
from pressroom.pipeline.inspect import PDF_ERRORS, check_object_count, page_tree_count
from pressroom.pipeline.sniff import sniffed
from pressroom.settings import Limits

# annotations that are no part of what a page shows: a viewer draws nothing of its own for
# them (a popup belongs to its parent; a link is an area to click)
_NOT_DRAWN = {"/Popup", "/Link"}
# the annotation subtypes PDF 2.0 defines: the only ones a reason may name
_SUBTYPES = frozenset(
    Name("/" + kind)
    for kind in """Text Link FreeText Line Square Circle Polygon PolyLine Highlight Underline
    Squiggly StrikeOut Caret Stamp Ink Popup FileAttachment Sound Movie Screen Widget
    PrinterMark TrapNet Watermark 3D Redact Projection RichMedia""".split()
)


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


def _subtype(annot: pikepdf.Dictionary) -> Name | None:
    """An annotation's subtype where it is a name (anything else there is no type)."""
    kind = annot.get("/Subtype")
    return kind if isinstance(kind, Name) else None


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
                text = text_of(contents).strip()
                if text:
                    found.append((number, text))
    return tuple(found)


def _drawn(pdf: pikepdf.Pdf) -> int:
    """How many annotations a viewer draws (a normal appearance, not hidden or NoView)."""
    n = 0
    for page in pdf.pages:
        for annot in page.obj.get("/Annots", pikepdf.Array()):
            if not isinstance(annot, pikepdf.Dictionary) or _subtype(annot) in _NOT_DRAWN:
                continue
            if _hidden(annot):
                continue
            if _has_appearance(annot):
                n += 1
    return n


def _inherited(field: pikepdf.Object, key: str) -> object:
    """A field attribute, from the widget or the first field above it that has it."""
    node: object = field
    depth = 0
    while isinstance(node, pikepdf.Dictionary) and depth < 32:
        if key in node:
            return node[key]
        node, depth = node.get("/Parent"), depth + 1
    return None


def _value(widget: pikepdf.Dictionary) -> str:
    value = _inherited(widget, "/V")
    if isinstance(value, pikepdf.String):
        return text_of(value)
    if isinstance(value, pikepdf.Array):
        return "\n".join(text_of(v) for v in value if isinstance(v, pikepdf.String))
    if isinstance(value, Name):
        return "" if value == Name.Off else text_of(value)[1:]
    return ""


def _widgets(pdf: pikepdf.Pdf) -> list[pikepdf.Dictionary]:
    return [
        annot
        for page in pdf.pages
        for annot in page.obj.get("/Annots", pikepdf.Array())
        if isinstance(annot, pikepdf.Dictionary) and annot.get("/Subtype") == Name.Widget
    ]


def _hidden(annot: pikepdf.Dictionary) -> bool:
    return bool(_whole(annot.get("/F", 0)) & (2 | 32))  # Hidden, NoView


def _whole(value: object) -> int:
    """A number as PDFium reads it (a real as its whole part); anything else is 0."""
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return 0
    try:
        return int(value)
    except (ValueError, OverflowError):  # NaN, infinity
        return 0


def _to_generate(pdf: pikepdf.Pdf) -> list[pikepdf.Dictionary]:
    """The widgets with a value a viewer shows but no appearance of their own: qpdf draws
    them. One it cannot draw as a viewer would is refused, never drawn wrong: a password
    field (a viewer masks it), a field whose value a script formats, a check box or button,
    a value outside the Latin characters qpdf's appearances carry, a multi-line value."""
    found = []
    for widget in _widgets(pdf):
        if _has_appearance(widget) or _hidden(widget):
            continue
        value = _value(widget)
        if not value.strip():
            continue  # an empty field: nothing to show
        kind = _inherited(widget, "/FT")
        raw_flags = _inherited(widget, "/Ff")
        flags = raw_flags if isinstance(raw_flags, int) else 0
        actions = _inherited(widget, "/AA")
        why = None
        if kind not in (Name.Tx, Name.Ch):
            why = "a check box or button with a value and no appearance"
        elif flags & 8192:
            why = "a password field with a value and no appearance (a viewer masks it)"
        elif isinstance(actions, pikepdf.Dictionary) and ("/F" in actions or "/K" in actions):
            why = "a field whose value a script formats, with no appearance"
        elif "\n" in value or "\r" in value:
            why = "a multi-line value with no appearance"
        else:
            try:
                value.encode("cp1252")
            except UnicodeEncodeError:
                why = "a value outside Latin characters with no appearance"
        if why is not None:
            raise UnsupportedForm(f"the form has {why}: it cannot be drawn as a viewer shows it")
        found.append(widget)
    return found


def _generate(pdf: pikepdf.Pdf, form: pikepdf.Dictionary) -> None:
    """Appearances for the fields that need one; every appearance the source has stays as it
    is (qpdf redraws every text field when asked for any: those are put back)."""
    needed = _to_generate(pdf)
    if needed:
        kept = [(w, w.get("/AP")) for w in _widgets(pdf) if _has_appearance(w)]
        form.NeedAppearances = True
        pdf.generate_appearance_streams()
        for widget, appearance in kept:
            widget.AP = appearance
    # a viewer asked to redraw would redraw what the source drew; the source's drawing stays
    form.NeedAppearances = False


def _left_behind(pdf: pikepdf.Pdf) -> None:
    """After flattening, anything a viewer would still show that was not drawn in is refused:
    nothing a person sees may vanish. Links and popups show nothing of their own; sticky
    notes are counted; a hidden one, or an empty field, shows nothing."""
    for number, page in enumerate(pdf.pages, 1):
        for place, annot in enumerate(page.obj.get("/Annots", pikepdf.Array()), 1):
            if not isinstance(annot, pikepdf.Dictionary) or _hidden(annot):
                continue
            kind = _subtype(annot)
            if kind in _NOT_DRAWN or kind == Name.Text:
                continue
            if kind == Name.Widget and not _value(annot).strip():
                continue
            # a subtype of the specification's is named; any other is the file's own word
            # (it may be a person's name: N5), so it is not
            what = "untyped" if kind is None else "an unknown type"
            if kind in _SUBTYPES:
                what = str(kind)[1:]
            raise UnsupportedForm(
                f"page {number} has an annotation (number {place} on the page, {what}) "
                "with no appearance of its own: a viewer would draw it, Pressroom cannot"
            )


def flatten_into(source: Path, target: Path, limits: Limits | None = None) -> Flattened:
    """``source`` with every visible annotation and field drawn into its pages, written to
    ``target``; the source itself when it has none (``target`` is then not written). The
    checks inspection makes before it opens a PDF are made first (object count, page tree);
    a PDF that needs a password to open is refused ``ENCRYPTED`` here (nothing after this
    could open it either); one that does not open is left to inspection, which refuses it
    with its own code; one that opens but cannot be flattened is refused here, never passed
    on with its forms dropped. A PDF encrypted with only an owner password (permissions:
    its user password is empty) opens without one: it is written to ``target`` without
    encryption, flattened or not, so that nothing after this sees encryption and the output
    carries none (as OCRmyPDF does; its permissions do not stop reading)."""
    limits = limits or Limits()
    check_object_count(source)
    try:
        probe = pikepdf.open(source, inherit_page_attributes=False)
    except pikepdf.PasswordError:
        raise Encrypted("the PDF needs a password to open; remove the password first") from None
    except pikepdf.PdfError:
        return Flattened(source)
    try:
        with probe:
            page_tree_count(probe, limits)
            if not needs_flattening(probe):
                if not probe.is_encrypted:
                    return Flattened(source)
                # opened with no password: only an owner password is set. Saved without one,
                # its streams and strings are written decrypted (a save drops encryption
                # unless told to keep it).
                probe.save(target, stream_decode_level=pikepdf.StreamDecodeLevel.none)
                return Flattened(target)
    except PDF_ERRORS:
        target.unlink(missing_ok=True)
        raise Corrupt("the PDF cannot be parsed") from None
    try:
        with pikepdf.open(source) as pdf:
            _check_xfa(pdf)
            notes = _notes(pdf)
            form = pdf.Root.get("/AcroForm")
            if isinstance(form, pikepdf.Dictionary):
                _generate(pdf, form)
            drawn = _drawn(pdf)
            pdf.flatten_annotations(mode="screen")
            _left_behind(pdf)
            for page in pdf.pages:  # what is left draws nothing (links, popups, hidden ones)
                annots = page.obj.get("/Annots")
                if annots is None:
                    continue
                # links stay for the output to keep as it may (pipeline.structure)
                links = [
                    a
                    for a in annots
                    if isinstance(a, pikepdf.Dictionary) and a.get("/Subtype") == Name.Link
                ]
                if links:
                    page.obj.Annots = pikepdf.Array(links)
                else:
                    del page.obj["/Annots"]
            if "/AcroForm" in pdf.Root:
                del pdf.Root["/AcroForm"]
            pdf.save(target, stream_decode_level=pikepdf.StreamDecodeLevel.none)
    except PDF_ERRORS:
        target.unlink(missing_ok=True)
        raise Corrupt("the PDF's forms or annotations cannot be drawn into its pages") from None
    except UnsupportedForm:
        target.unlink(missing_ok=True)
        raise
    return Flattened(target, drawn, notes)


@contextmanager
def flattened(
    source: Path, scratch: Path, limits: Limits | None = None, *, pdf: bool | None = None
) -> Iterator[Flattened]:
    """The source as the pipeline reads it, for the length of the block; a flattened copy is
    written beside ``scratch`` (a path in the job's private scratch space) and removed after.
    ``pdf``: whether the source is a PDF, where the caller sniffed it already."""
    target = scratch.with_name(f"{scratch.name}.flat.pdf")
    try:
        if pdf is None:
            pdf = sniffed(source) is SourceKind.PDF
        yield flatten_into(source, target, limits) if pdf else Flattened(source)
    finally:
        target.unlink(missing_ok=True)
