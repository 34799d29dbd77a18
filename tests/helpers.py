"""Shared helpers for tests: small synthetic documents and ways to read outputs back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pikepdf
from pikepdf import Array, Dictionary, Name
from rapidfuzz.distance import Levenshtein

from pressroom.engines import pdfium
from pressroom.outcomes import Held
from pressroom.synth import draw_page, page_lines


def small_scan(seed: int = 1, lines: int = 5, dpi: int = 300, height_in: float = 2.6):
    """A short page: enough text to judge OCR, small enough to read in well under a second."""
    return draw_page(page_lines(seed, lines), dpi=dpi, height_in=height_in)


def cer(truth: str, got: str) -> float:
    """Character error rate with whitespace runs collapsed."""
    t = " ".join(truth.split())
    g = " ".join(got.split())
    return Levenshtein.distance(t, g) / max(len(t), 1)


def content_rect(template: str, width: float, height: float) -> tuple[float, float, float, float]:
    """Where a ``width`` x ``height`` pt source page's content lies on its output page under
    ``template``'s bands (fit "inside": scaled between them, centred), in PDF points."""
    from pressroom.pipeline.geometry import band_scale
    from pressroom.templates import resolve_template

    t = resolve_template(template)
    k = band_scale(width, height)
    top, bottom = t.header.height * k, t.footer.height * k
    scale = (height - top - bottom) / height if top or bottom else 1.0
    dx = width * (1 - scale) / 2
    return (dx, bottom, dx + width * scale, bottom + height * scale)


def output_text(
    path: Path, page: int = 0, rect: tuple[float, float, float, float] | None = None
) -> str:
    with pdfium.open_pdf(path) as doc:
        return pdfium.page_text(doc, page, rect)


def hostile_pdf(path: Path, secret: str = "Jane Q Example") -> Path:
    """A PDF carrying the things an output must never inherit: script, attachment, forms, ..."""
    pdf = pikepdf.Pdf.new()
    font = pdf.make_indirect(
        Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica)
    )
    text = "This born digital page carries enough real text to be kept as it is."
    page = pikepdf.Page(
        Dictionary(
            Type=Name.Page,
            MediaBox=Array([0, 0, 612, 792]),
            Resources=Dictionary(Font=Dictionary(F1=font)),
            Contents=pdf.make_stream(f"BT /F1 12 Tf 72 700 Td ({text}) Tj ET".encode()),
        )
    )
    pdf.pages.append(page)
    p = pdf.pages[0]
    p.obj.Annots = pdf.make_indirect(
        Array(
            [
                Dictionary(
                    Type=Name.Annot,
                    Subtype=Name.Text,
                    Rect=Array([0, 0, 10, 10]),
                    Contents=pikepdf.String(secret),
                )
            ]
        )
    )
    pdf.Root.OpenAction = Dictionary(S=Name.JavaScript, JS=pikepdf.String("app.alert(1)"))
    attachment = pdf.make_stream(secret.encode())
    attachment.Type = Name.EmbeddedFile
    pdf.Root.Names = Dictionary(
        EmbeddedFiles=Dictionary(
            Names=Array(
                [
                    pikepdf.String("secret.txt"),
                    Dictionary(
                        Type=Name.Filespec,
                        F=pikepdf.String("secret.txt"),
                        EF=Dictionary(F=attachment),
                    ),
                ]
            )
        )
    )
    pdf.Root.Outlines = pdf.make_indirect(Dictionary(Type=Name.Outlines, Count=0))
    pdf.docinfo.Author = secret
    pdf.docinfo.Title = secret
    pdf.save(path)
    return path


def dejavu_descriptor(pdf: pikepdf.Pdf) -> pikepdf.Object:
    """DejaVu Sans embedded (TrueType) and its font descriptor, for hand-built test PDFs."""
    from pressroom.synth import find_font

    data = find_font("DejaVuSans.ttf").read_bytes()
    font_file = pdf.make_stream(data)
    font_file.Length1 = len(data)
    return pdf.make_indirect(
        Dictionary(
            Type=Name.FontDescriptor,
            FontName=Name("/DejaVuSans"),
            Flags=32,
            FontBBox=Array([-1021, -463, 1793, 1232]),
            ItalicAngle=0,
            Ascent=928,
            Descent=-236,
            CapHeight=729,
            StemV=80,
            FontFile2=font_file,
        )
    )


def held_by(outcome: object, kind: type[Exception] = Exception) -> Held:
    """The hold a document's processing came to (``outcomes.Held``), its reason a ``kind``;
    the test fails when the document was delivered instead, or held for another reason."""
    assert isinstance(outcome, Held), f"delivered, not held: {outcome!r}"
    assert isinstance(outcome.reason, kind), f"held as {outcome.code}, not {kind.__name__}"
    return outcome


def delivered(outcome: object) -> Any:
    """A document's processing result (``DocumentResult``); the test fails when it was held
    for a person instead (``outcomes.Held``)."""
    assert not isinstance(outcome, Held), f"held, not delivered: {outcome.code}: {outcome.message}"
    return outcome


def raised(outcome: object) -> Any:
    """A document's processing result, or its hold's reason raised: for a harness that takes
    every ending (refused, held, delivered) from one ``except PressroomError``."""
    if isinstance(outcome, Held):
        raise outcome.reason
    return outcome
