"""The page pruner and the font walk on hostile structures: they end, and fail closed."""

from __future__ import annotations

import io
from itertools import islice
from typing import Any

import pikepdf
import pytest
from pikepdf import Array, Dictionary, Name
from PIL import Image

from pressroom.engines.prune import PageCleaner, bare_jpeg
from pressroom.redact.fontcodes import CodeSpace
from pressroom.redact.fonttext import document_text


def _page(pdf: pikepdf.Pdf, content: bytes, resources: Dictionary) -> pikepdf.Page:
    pdf.pages.append(
        pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, 100, 100]),
                Resources=resources,
                Contents=pdf.make_stream(content),
            )
        )
    )
    return pdf.pages[-1]


def test_a_form_without_resources_that_draws_itself_is_cleaned_once() -> None:
    """Each use of X0 drawing X0 twice would double the work forty levels deep (2^41)."""
    pdf = pikepdf.Pdf.new()
    resources = pdf.make_indirect(Dictionary())
    form = pdf.make_stream(b"q /X0 Do Q q /X0 Do Q")
    form.Type, form.Subtype, form.BBox = Name.XObject, Name.Form, Array([0, 0, 10, 10])
    resources.XObject = Dictionary(X0=pdf.make_indirect(form))
    page = _page(pdf, b"/X0 Do", resources)
    cleaner = CountingCleaner(pdf)
    cleaned = cleaner.page_form(page, [0, 0, 100, 100])
    assert cleaner.streams == 2  # the page's content, and X0 once
    assert list(cleaned.Resources.XObject.keys()) == ["/R0"]


class CountingCleaner(PageCleaner):
    """Counts the content streams it parses: the work the pruning does."""

    streams = 0

    def _content(self, *args: Any, **kwargs: Any) -> Any:
        self.streams += 1
        return super()._content(*args, **kwargs)


def test_names_a_producer_chose_do_not_survive() -> None:
    pdf = pikepdf.Pdf.new()
    image = pdf.make_stream(b"\x80")
    image.Type, image.Subtype, image.Width, image.Height = Name.XObject, Name.Image, 1, 1
    image.ColorSpace, image.BitsPerComponent = Name.DeviceGray, 8
    key = "/Jane#20Whitfield"
    page = _page(
        pdf,
        b"q 1 0 0 1 0 0 cm " + key.encode() + b" Do Q /Jane#20Whitfield BMC EMC foo bar baz",
        Dictionary(XObject=Dictionary({key: image})),
    )
    cleaned = PageCleaner(pdf).page_form(page, [0, 0, 100, 100])
    content = cleaned.read_bytes()
    assert b"Jane" not in content and b"baz" not in content and b"BMC" not in content
    assert b"/R0 Do" in content


@pytest.mark.parametrize(
    ("codespace", "text", "to_unicode"),
    [
        (b"1 begincodespacerange <> <> endcodespacerange", b"<0041>", None),
        (b"1 begincodespacerange <00> <FFFF> endcodespacerange", b"<0041>", None),
        (
            b"1 begincodespacerange <0000> <FFFF> endcodespacerange",
            b"<0002>",
            b"begincmap 1 beginbfrange <0000> <0005> <FFFF> endbfrange endcmap",
        ),
    ],
)
def test_a_malformed_cmap_is_unread_text_never_a_hang_or_a_crash(
    codespace: bytes, text: bytes, to_unicode: bytes | None
) -> None:
    pdf = pikepdf.Pdf.new()
    encoding = pdf.make_stream(b"begincmap\n" + codespace + b"\nendcmap")
    cid = Dictionary(Type=Name.Font, Subtype=Name.CIDFontType2, BaseFont=Name.X)
    font = Dictionary(
        Type=Name.Font,
        Subtype=Name.Type0,
        BaseFont=Name.X,
        Encoding=encoding,
        DescendantFonts=Array([cid]),
    )
    if to_unicode is not None:
        font.ToUnicode = pdf.make_stream(to_unicode)
    _page(pdf, b"BT /F0 12 Tf " + text + b" Tj ET", Dictionary(Font=Dictionary(F0=font)))
    (shown,) = [t for t in document_text(pdf) if t.where == "page 1"]
    assert shown.unreadable >= 1


@pytest.mark.parametrize(
    "ranges", [[(b"", b"")], [(b"\x00", b"\xff\xff")], [(b"\x00" * 5, b"\xff" * 5)]]
)
def test_splitting_codes_always_moves_on(ranges: list[tuple[bytes, bytes]]) -> None:
    """A code space that names no usable range still splits a string into at most one code a
    byte (an empty range once never moved on)."""
    codes = list(islice(CodeSpace(ranges).split(b"\x00A\x01B"), 10))
    assert 1 <= len(codes) <= 4 and sum(n for _code, n in codes) == 4


def test_many_code_space_ranges_cost_what_one_lookup_does() -> None:
    """Each code is tried only against the ranges its first byte can start (4 here, not all
    1,024), and a CMap with more ranges than any producer writes is not read at all."""
    ranges = [(bytes([i, 0]), bytes([i, 255])) for i in range(256)] * 4
    space = CodeSpace(ranges)
    assert max(len(tried) for tried in space._by_first.values()) == 4
    assert len(list(space.split(bytes(range(256)) * 40))) == 256 * 40 // 2
    assert not space.too_many
    assert CodeSpace(ranges * 2).too_many


def test_text_shown_with_a_font_set_elsewhere_is_counted_unread() -> None:
    """A form whose text takes its caller's font: which font a viewer uses is not known here."""
    pdf = pikepdf.Pdf.new()
    _page(pdf, b"BT (Jane Whitfield) Tj ET", Dictionary())
    (shown,) = [t for t in document_text(pdf) if t.where == "page 1"]
    assert shown.unreadable == len("Jane Whitfield")


def test_q_and_q_restore_the_font_and_gs_sets_one() -> None:
    pdf = pikepdf.Pdf.new()
    helv = Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica)
    state = Dictionary(Type=Name.ExtGState, Font=Array([helv, 12]))
    _page(
        pdf,
        b"q /G0 gs BT (Jane) Tj ET Q BT (x) Tj ET",
        Dictionary(ExtGState=Dictionary(G0=state)),
    )
    (shown,) = [t for t in document_text(pdf) if t.where == "page 1"]
    assert shown.text[0] == "Jane" and shown.unreadable == 1  # after Q no font is set


def test_a_jpeg_keeps_its_pixels_and_loses_its_metadata() -> None:
    image = Image.new("RGB", (32, 32), (10, 200, 30))
    exif = Image.Exif()
    exif[0x013B] = "Jane Whitfield"
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", exif=exif.tobytes(), comment=b"photo of Jane Whitfield")
    raw = buffer.getvalue() + b"trailing Jane Whitfield"
    bare = bare_jpeg(raw)
    assert b"Whitfield" in raw and b"Whitfield" not in bare
    again = Image.open(io.BytesIO(bare))
    assert again.size == (32, 32) and again.tobytes() == Image.open(buffer).tobytes()
    assert bare_jpeg(b"not a jpeg") == b"not a jpeg"
