"""What the fuzzer (tests/integration/test_fuzz_pdfs.py) found, each kept as a small file
written byte by byte (and one damaged TIFF): every one ended in an exception that was not
Pressroom's (INTERNAL_ERROR, "a bug") and is now refused with its code or read as a renderer
reads it."""

from __future__ import annotations

import base64
import io
import struct
import warnings
import zlib
from pathlib import Path

import pikepdf
import pytest

from pressroom.engines.images import inspect_image, iter_frames
from pressroom.engines.pdfstr import text_of
from pressroom.engines.prune import PageCleaner, hidden_groups
from pressroom.engines.straighten import Encoding, image_stream
from pressroom.engines.streams import fits
from pressroom.errors import Corrupt, PressroomError
from pressroom.pipeline.archive import pdfa_problems
from pressroom.pipeline.content import ContentMeter
from pressroom.pipeline.flatten import flatten_into
from pressroom.pipeline.inspect import inspect_source
from pressroom.settings import Limits

TEXT = b"BT /F1 12 Tf 10 20 Td (Enough text to be a page of text, kept as it is.) Tj ET"


def raw_pdf(path: Path, objects: dict[int, bytes], *, root: int = 1) -> Path:
    """A PDF with exactly these objects (number: body) and a classic cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    size = max(objects) + 1
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for number in range(1, size):
        if number in offsets:
            out += b"%010d 00000 n \n" % offsets[number]
        else:
            out += b"0000000000 00000 f \n"
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (size, root, xref)
    path.write_bytes(bytes(out))
    return path


def _stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def _page_objects(resources: bytes) -> dict[int, bytes]:
    return {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 60] /Resources "
        + resources
        + b" /Contents 4 0 R >>",
        4: _stream(TEXT),
        5: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }


def test_a_font_resource_that_points_at_no_object_is_measured_as_nothing(
    tmp_path: Path,
) -> None:
    """/F2 9 0 R with no object 9: pikepdf hands over None, which has no object number
    (content.py: AttributeError)."""
    path = raw_pdf(tmp_path / "f.pdf", _page_objects(b"<< /Font << /F1 5 0 R /F2 9 0 R >> >>"))
    with pikepdf.open(path) as pdf:
        cost = ContentMeter(Limits()).page(pdf.pages[0], 1)
    assert cost.operators > 0
    assert len(inspect_source(path, Limits()).pages) == 1


def test_a_page_tree_whose_root_has_no_kids_is_corrupt(tmp_path: Path) -> None:
    """The root of the page tree is a page itself, with an annotation: pikepdf will not list
    its pages (flatten.py: PdfError "root of pages tree has no /Kids array")."""
    objects = _page_objects(b"<< /Font << /F1 5 0 R >> >>")
    objects[1] = b"<< /Type /Catalog /Pages 3 0 R >>"
    objects[3] = objects[3].replace(b"/Parent 2 0 R", b"/Annots [6 0 R]")
    objects[6] = b"<< /Type /Annot /Subtype /Square /Rect [0 0 10 10] >>"
    path = raw_pdf(tmp_path / "tree.pdf", objects)
    try:
        flatten_into(path, tmp_path / "flat.pdf")
    except PressroomError as exc:
        assert isinstance(exc, Corrupt)


def _with_xref_stream(path: Path, objects: dict[int, bytes]) -> Path:
    """A PDF whose cross-reference is a stream (object ``max + 1``), its dictionary the
    trailer, as qpdf reads it."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n" % number + objects[number] + b"\nendobj\n"
    me = max(objects) + 1
    offsets[me] = len(out)
    rows = b"".join(
        struct.pack(">BIH", 1, offsets[n], 0) if n in offsets else struct.pack(">BIH", 0, 0, 0)
        for n in range(me + 1)
    )
    rows = struct.pack(">BIH", 0, 0, 65535) + rows[7:]
    out += (
        b"%d 0 obj\n" % me
        + _stream(rows, b"/Type /XRef /Size %d /W [1 4 2] /Root 1 0 R" % (me + 1))
        + b"\nendobj\n"
    )
    out += b"startxref\n%d\n%%%%EOF\n" % offsets[me]
    path.write_bytes(bytes(out))
    return path


def test_a_page_that_reaches_the_cross_reference_stream_leaves_the_trailer_whole(
    tmp_path: Path,
) -> None:
    """A font descriptor whose font file is the cross-reference stream (object 8): cleaning
    the page took /Root out of the trailer, and the output could take no page after it
    (render.py: PdfError "unable to find /Root dictionary")."""
    objects = _page_objects(b"<< /Font << /F1 5 0 R >> >>")
    objects[5] = (
        b"<< /Type /Font /Subtype /TrueType /BaseFont /Odd /FirstChar 32 /LastChar 32 "
        b"/Widths [500] /FontDescriptor 6 0 R >>"
    )
    objects[6] = (
        b"<< /Type /FontDescriptor /FontName /Odd /Flags 32 /FontBBox [0 0 1 1] "
        b"/ItalicAngle 0 /Ascent 1 /Descent 0 /CapHeight 1 /StemV 1 /FontFile2 8 0 R >>"
    )
    objects[7] = b"null"
    path = _with_xref_stream(tmp_path / "x.pdf", objects)
    with pikepdf.open(path) as pdf:
        assert pdf.get_object((8, 0)).get("/Type") == pikepdf.Name.XRef
        cleaner = PageCleaner(pdf)
        page = pdf.pages[0]
        cleaner.page_form(page, [float(v) for v in page.cropbox])
        assert "/Root" in pdf.trailer
        pdf.pages.append(pikepdf.Page(pikepdf.Dictionary(Type=pikepdf.Name.Page)))


@pytest.mark.parametrize("where", [b"/OCGs", b"/ON", b"/OFF"])
def test_optional_content_lists_that_hold_a_null_are_read(tmp_path: Path, where: bytes) -> None:
    """A null in the lists of optional content groups (prune.py: AttributeError)."""
    lists = {b"/OCGs": b"[7 0 R null 3]", b"/ON": b"[7 0 R]", b"/OFF": b"[]"}
    lists[where] = b"[null 7 0 R 9 0 R]"
    objects = _page_objects(b"<< /Font << /F1 5 0 R >> >>")
    objects[1] = (
        b"<< /Type /Catalog /Pages 2 0 R /OCProperties << /OCGs "
        + lists[b"/OCGs"]
        + b" /D << /ON "
        + lists[b"/ON"]
        + b" /OFF "
        + lists[b"/OFF"]
        + b" /AS [<< /Event /View /Category [/View] /OCGs [null 7 0 R] >>] >> >> >>"
    )
    objects[7] = b"<< /Type /OCG /Name (Layer) /Usage << /View << /ViewState /OFF >> >> >>"
    path = raw_pdf(tmp_path / "oc.pdf", objects)
    with pikepdf.open(path) as pdf:
        assert hidden_groups(pdf) == {(7, 0)}


def test_names_and_operators_whose_bytes_are_not_utf8_are_copied(tmp_path: Path) -> None:
    """pikepdf makes a name or an operator a str by UTF-8: /F#93#ff and an operator of junk
    bytes raised UnicodeDecodeError in the page cleaner. A renderer skips the operator and
    finds the font by its bytes; so does the copy."""
    objects = _page_objects(b"<< /Font << /F#93#ff 5 0 R >> >>")
    objects[4] = _stream(b"q \x93\xff Q " + TEXT.replace(b"/F1", b"/F#93#ff"))
    path = raw_pdf(tmp_path / "bytes.pdf", objects)
    with pikepdf.open(path) as pdf:
        page = pdf.pages[0]
        form = PageCleaner(pdf).page_form(page, [float(v) for v in page.cropbox])
        fonts = form.Resources.Font
        assert len(fonts) == 1 and "/R0" in fonts
        assert b"/R0 12 Tf" in form.read_bytes() and b"\x93" not in form.read_bytes()
    assert inspect_source(path, Limits()).pages[0].has_text


def test_strings_whose_bytes_are_not_what_they_claim_are_read(tmp_path: Path) -> None:
    """A string marked UTF-8 (PDF 2.0) whose bytes are not: pikepdf's str() raised. A sticky
    note's words and a stream's /Filter given as such a string."""
    odd = b"<EFBBBF93616263>"
    assert text_of(pikepdf.String(b"\xef\xbb\xbf\x93abc")) == "\ufffdabc"
    objects = _page_objects(b"<< /Font << /F1 5 0 R >> >>")
    objects[3] = objects[3].replace(b"/Contents", b"/Annots [6 0 R] /Contents")
    objects[6] = b"<< /Type /Annot /Subtype /Text /Rect [0 0 9 9] /Contents " + odd + b" >>"
    objects[4] = _stream(TEXT, b"/Filter " + odd)
    path = raw_pdf(tmp_path / "strings.pdf", objects)
    with pikepdf.open(path) as pdf:
        stream = pdf.pages[0].obj.Contents
        assert fits(stream, 10_000)  # an unknown filter: measured as it is stored
    flat = flatten_into(path, tmp_path / "flat.pdf")
    assert flat.notes == ((1, "\ufffdabc"),)


def test_a_page_count_of_true_is_no_count(tmp_path: Path) -> None:
    """/Count true is 1 to Python and no count to qpdf, which then failed to add a page
    (QpdfRuntimeError, "/Count is wrong after flattening pages tree")."""
    objects = _page_objects(b"<< /Font << /F1 5 0 R >> >>")
    objects[2] = b"<< /Type /Pages /Kids [3 0 R] /Count true >>"
    path = raw_pdf(tmp_path / "count.pdf", objects)
    with pytest.raises(Corrupt, match="no page count"):
        inspect_source(path, Limits())


def test_flags_that_are_no_integer_are_read_as_none_set(tmp_path: Path) -> None:
    """A font descriptor's /Flags and an annotation's /F given as strings: int() of them
    raised TypeError (the PDF/A check of an output, the flattening)."""
    objects = _page_objects(b"<< /Font << /F1 5 0 R >> >>")
    objects[5] = (
        b"<< /Type /Font /Subtype /TrueType /BaseFont /Odd /FirstChar 32 /LastChar 32 "
        b"/Widths [500] /FontDescriptor 6 0 R >>"
    )
    objects[6] = b"<< /Type /FontDescriptor /FontName /Odd /Flags (x) /FontBBox [0 0 1 1] >>"
    objects[3] = objects[3].replace(b"/Contents", b"/Annots [7 0 R] /Contents")
    objects[7] = b"<< /Type /Annot /Subtype /Square /Rect [0 0 9 9] /F (2) /AP << /N 8 0 R >> >>"
    objects[8] = _stream(b"0 0 9 9 re f", b"/Type /XObject /Subtype /Form /BBox [0 0 9 9]")
    path = raw_pdf(tmp_path / "flags.pdf", objects)
    problems = pdfa_problems(path)
    assert any(p.startswith("6.2.11.4") for p in problems)
    assert flatten_into(path, tmp_path / "flat.pdf").flattened == 1


@pytest.mark.parametrize("flags", [b"4294967297", b"-2147483649"])
def test_annotation_flags_past_32_bits_are_corrupt(tmp_path: Path, flags: bytes) -> None:
    """qpdf's flattening reads /F as a 32-bit integer: OverflowError, or a RuntimeError
    ("Integer conversion underflow"), neither of them a pikepdf error."""
    objects = _page_objects(b"<< /Font << /F1 5 0 R >> >>")
    objects[3] = objects[3].replace(b"/Contents", b"/Annots [7 0 R] /Contents")
    objects[7] = b"<< /Type /Annot /Subtype /Square /Rect [0 0 9 9] /AP << /N 8 0 R >> /F "
    objects[7] += flags + b" >>"
    objects[8] = _stream(b"0 0 9 9 re f", b"/Type /XObject /Subtype /Form /BBox [0 0 9 9]")
    path = raw_pdf(tmp_path / "flags.pdf", objects)
    with pytest.raises(Corrupt):
        flatten_into(path, tmp_path / "flat.pdf")
    assert not (tmp_path / "flat.pdf").exists()


# a two-frame TIFF with one bit flipped: its first frame's tags claim more bytes than the
# file holds (Pillow warns "Truncated File Read", reads on, and finds one frame)
_TRUNCATED_TIFF = (
    "eNrz9NRi4GBgYOBhYGBkYWAEskSAmBHK5gJiJkZmMBukihnKBmE2JLYgVP06IBZD0isOZZ8AYilGVjB7HhBLQ9nLgMbK"
    "IJmjAWUzAXEHkDENKg6j/w8TwAACDiDCk6rhr8dEOPzlmBDhrwZk4wp/BoZhHv5gAABFVJnB"
)


def test_an_image_pillow_warns_about_is_read_as_pillow_reads_it(tmp_path: Path) -> None:
    """Pillow's warnings about a damaged tag or EXIF block: under warnings-as-errors (and
    for a moment in any caller that turns them on) they were exceptions nobody named."""
    path = tmp_path / "scan.tif"
    path.write_bytes(zlib.decompress(base64.b64decode(_TRUNCATED_TIFF)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        frames = inspect_image(path, Limits())
        decoded = [frame.size for frame in iter_frames(path)]
    assert len(frames) == len(decoded) == 1  # the second frame's header is what broke


# a TIFF whose header lacks its size (Pillow: TypeError "Missing dimensions"), and a PNG with
# a broken chunk (Pillow: SyntaxError while decoding)
_NO_DIMENSIONS_TIFF = (
    "eNrz9NRi4GBgYOBhYGBkYWAEsnSABCOUbQPETIzMYDZIFTOUDcJsSGxBqPp1QCyGpFccyg5wY2CQYmQFs+cBsTSUvQyI"
    "ZZDM0YCymUD2uTMwTIOKw+j/o2AUYAIArxwblw=="
)
_BROKEN_PNG = (
    "eNrrDPBz5+WS4mJgYOD19HAJAtIaQMzDASQYTFcsmAikOAs8IosZGMSFQJgxff4lkCpWTxfHkIo5yX/OO8gkKAXdXXHI"
    "cbUgA5M+o7jUx3h1kG5PVz+XdU4JTQC55hbb"
)


@pytest.mark.parametrize("packed", [_NO_DIMENSIONS_TIFF, _BROKEN_PNG], ids=["tiff", "png"])
def test_an_image_pillow_cannot_read_is_corrupt(tmp_path: Path, packed: str) -> None:
    path = tmp_path / "scan"
    path.write_bytes(zlib.decompress(base64.b64decode(packed)))
    with pytest.raises(Corrupt):
        inspect_image(path, Limits())
        for _frame in iter_frames(path):
            pass


# a bilevel G4 TIFF with a bit flipped in its ResolutionUnit tag (18: no such unit)
_BAD_UNIT_TIFF = (
    "eNrz9NRiUGFgYFBbcPNT8ozaukam5uNNBj/0Pziy/v83nb2jh8GBhYeBgZGZgRGoSgOIGaFsoCgDE5QNwsxQNgsQsyGJ"
    "CzKygGkOIBZD0isOFZcBYilGVjB7FxBLQ9mHQHJI5mhA2UIMEDCtASI+DSoPABRnEu8="
)


def test_a_bilevel_frame_with_a_damaged_tag_is_stored_as_g4() -> None:
    """Saving a levelled bilevel page as G4 wrote the frame's own tags with it; libtiff
    refused the damaged one (RuntimeError "Error setting from dictionary")."""
    from PIL import Image

    with Image.open(io.BytesIO(zlib.decompress(base64.b64decode(_BAD_UNIT_TIFF)))) as frame:
        frame.load()
        pdf = pikepdf.Pdf.new()
        stream = image_stream(pdf, frame, Encoding("bilevel"))
    assert stream.Filter == pikepdf.Name.CCITTFaxDecode and stream.Width == 40
