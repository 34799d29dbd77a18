"""Copies of one source object, as the parts of a document read in chunks bring them, stored
once again (``pipeline.same_objects``): what makes an assembly the same bytes as the whole
when pages in two chunks share a font."""

from __future__ import annotations

import io
from pathlib import Path

import pikepdf
from pikepdf import Array, Dictionary, Name

from pressroom.pipeline.same_objects import share_copies


def _font(pdf: pikepdf.Pdf, base: str = "Helvetica") -> pikepdf.Object:
    descriptor = pdf.make_indirect(Dictionary(Type=Name.FontDescriptor, FontName=Name("/" + base)))
    widths = pdf.make_indirect(Array([500] * 4))
    return pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name("/" + base),
            FontDescriptor=descriptor,
            Widths=widths,
        )
    )


def _page(pdf: pikepdf.Pdf, font: pikepdf.Object, text: bytes) -> None:
    page = Dictionary(
        Type=Name.Page,
        MediaBox=Array([0, 0, 200, 200]),
        Resources=Dictionary(Font=Dictionary(F1=font)),
        Contents=pdf.make_stream(b"BT /F1 12 Tf 10 10 Td (" + text + b") Tj ET"),
    )
    pdf.pages.append(pikepdf.Page(page))


def _written(pdf: pikepdf.Pdf) -> bytes:
    out = io.BytesIO()
    pdf.save(out, deterministic_id=True, object_stream_mode=pikepdf.ObjectStreamMode.disable)
    return out.getvalue()


def _canonical(data: bytes, tmp: Path) -> bytes:
    """Written a second time from the first write: objects numbered in the order they are
    reached (as the output builder writes)."""
    raw = tmp / "raw.pdf"
    raw.write_bytes(data)
    with pikepdf.open(raw) as pdf:
        return _written(pdf)


def test_copies_of_a_font_in_two_parts_become_the_one_font_of_the_whole(tmp_path: Path) -> None:
    whole = pikepdf.new()
    shared = _font(whole)
    _page(whole, shared, b"one")
    _page(whole, shared, b"two")
    assembled = pikepdf.new()  # each page's part brought its own copy of the font
    _page(assembled, _font(assembled), b"one")
    _page(assembled, _font(assembled), b"two")
    assert _canonical(_written(whole), tmp_path) != _canonical(_written(assembled), tmp_path)
    assert share_copies(assembled) == 3  # the font, its descriptor, its widths
    assert share_copies(whole) == 0
    fonts = {p.Resources.Font.F1.objgen for p in assembled.pages}
    assert len(fonts) == 1
    assert _canonical(_written(whole), tmp_path) == _canonical(_written(assembled), tmp_path)


def test_objects_that_differ_anywhere_below_are_kept_apart_and_pages_never_merge() -> None:
    pdf = pikepdf.new()
    a, b = _font(pdf), _font(pdf)
    b.Widths[0] = 600  # the same dictionary but for one width, one level down
    _page(pdf, a, b"same")
    _page(pdf, b, b"same")
    _page(pdf, a, b"same")  # a page equal to the first in every value stays a page of its own
    # the descriptors are equal, and the three content streams: 3 copies; the fonts differ
    assert share_copies(pdf) == 3
    assert len(pdf.pages) == 3
    assert len({p.objgen for p in pdf.pages}) == 3
    assert pdf.pages[0].Resources.Font.F1.objgen != pdf.pages[1].Resources.Font.F1.objgen


def test_objects_on_a_cycle_keep_their_identity() -> None:
    """An annotation points back at its page (/P): it is never merged with its twin."""
    pdf = pikepdf.new()
    font = _font(pdf)
    _page(pdf, font, b"x")
    _page(pdf, font, b"y")
    for page in pdf.pages:
        annot = pdf.make_indirect(
            Dictionary(Type=Name.Annot, Subtype=Name.Text, Rect=Array([0, 0, 1, 1]))
        )
        annot.P = page.obj
        page.Annots = Array([annot])
    share_copies(pdf)
    assert pdf.pages[0].Annots[0].objgen != pdf.pages[1].Annots[0].objgen
