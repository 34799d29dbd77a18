"""A born-digital page read from its own text instead of OCR (issue 46, item 2): which words a
reader sees, told from pixels; which pages still go to OCR (a picture, glyphs that are drawings,
a map that lies); and that reading such a page OCRs a few line crops, never the page."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import pikepdf
import pypdfium2
import pytest
from pikepdf import Dictionary, Name
from PIL import Image

from pressroom.engines import pdfium
from pressroom.engines.tesseract import TesseractEngine
from pressroom.models import Word
from pressroom.pipeline.core import JobOptions
from pressroom.pixels import PixelBudget
from pressroom.redact.engine import detect_document
from pressroom.redact.policy import parse_policy
from pressroom.redact.seen import seen_words
from pressroom.redact.text import extracted_words
from pressroom.settings import Limits
from pressroom.templates import resolve_template
from tests import hiding

pytestmark = pytest.mark.integration

DPI = 300.0


class CountingEngine:
    """The real engine, with the size of every image it was asked to read."""

    def __init__(self, engine: TesseractEngine) -> None:
        self.engine = engine
        self.sizes: list[tuple[int, int]] = []

    def recognize(self, image: Image.Image, **kwargs: Any) -> Any:
        self.sizes.append(image.size)
        return self.engine.recognize(image, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)

    def whole_pages(self, page: tuple[int, int]) -> int:
        """Reads of an image at least half the page's height: a page read whole."""
        return sum(1 for _w, h in self.sizes if h >= page[1] / 2)


def read(path: Path, index: int, engine: object) -> list[Word] | None:
    """``seen_words`` of page ``index`` as redaction's first pass calls it."""
    doc = pypdfium2.PdfDocument(path)
    pdf = pikepdf.open(path)
    try:
        page = doc[index]
        try:
            gray = pdfium.render_luma(page, DPI / 72.0)
            words = extracted_words(page, DPI / 72.0)
        finally:
            page.close()
        budget = PixelBudget(Limits())
        return seen_words(doc, pdf, index, gray, words, DPI, engine, budget)  # type: ignore[arg-type]
    finally:
        pdf.close()
        doc.close()


def texts(words: list[Word] | None) -> set[str]:
    assert words is not None, "the page was sent to OCR"
    return {w.text.strip(",.") for w in words}


@pytest.mark.parametrize(
    "make",
    [
        hiding.white_text,
        hiding.under_rectangle,
        hiding.under_image,
        hiding.clipped_text,
        hiding.invisible_text,
        hiding.off_page,
    ],
)
def test_words_nobody_sees_are_not_seen_and_the_rest_are(
    make: Any, tmp_path: Path, engine: TesseractEngine
) -> None:
    path = make(tmp_path / "source.pdf")
    seen = texts(read(path, 1, engine))
    assert "Whitfield" not in seen
    assert {"committee", "spring", "Minutes", "member"} <= seen


def test_faint_print_is_seen(tmp_path: Path, engine: TesseractEngine) -> None:
    path = hiding.faint_on_white(tmp_path / "source.pdf")
    assert "Whitfield" in texts(read(path, 1, engine))


def test_a_page_read_from_its_text_ocrs_a_few_lines_never_the_page(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    path = hiding.white_text(tmp_path / "source.pdf")
    counting = CountingEngine(engine)
    options = JobOptions(template=resolve_template("plain"))
    found = detect_document(path, parse_policy("name", now=0), counting, options)  # type: ignore[arg-type]
    assert {f.page for f in found if f.kind == "name"} == {1, 2}
    page = (2550, 3300)
    assert counting.sizes, "the sample read nothing"
    assert counting.whole_pages(page) == 0
    # each read is one line's crop: a few of them, each a strip of the page
    assert len(counting.sizes) <= 2 * 4
    assert all(h < page[1] / 20 for _w, h in counting.sizes)


@pytest.mark.parametrize("make", [hiding.inline_image, hiding.shared_type3])
def test_a_page_showing_more_than_its_text_goes_to_ocr(
    make: Any, tmp_path: Path, engine: TesseractEngine
) -> None:
    """A name in an image's pixels (page 2), glyphs that are drawings (a Type 3 font, page
    1): the page's text cannot say what it shows."""
    path = make(tmp_path / "source.pdf")
    index = 1 if make is hiding.inline_image else 0
    assert read(path, index, engine) is None
    counting = CountingEngine(engine)
    options = JobOptions(template=resolve_template("plain"))
    found = detect_document(path, parse_policy("name", now=0), counting, options)  # type: ignore[arg-type]
    assert counting.whole_pages((2550, 3300)) >= 1
    assert index + 1 in {f.page for f in found if f.kind == "name"}


def test_a_map_that_lies_about_its_letters_sends_the_page_to_ocr(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    pdf = pikepdf.Pdf.new()
    # each letter said to be the next one of the alphabet
    lies = _mapped(pdf, lambda c: chr(c + 1) if chr(c).isalpha() else chr(c))
    resources = Dictionary(Font=Dictionary(F1=lies))
    lines = [
        "Margaret Thornbury visited the harbour office",
        "The committee meets again in the spring",
        "Minutes will be sent to every member",
    ]
    content = b"".join(hiding._line(700 - 30 * n, text) for n, text in enumerate(lines))
    hiding._page(pdf, content, resources)
    path = tmp_path / "source.pdf"
    pdf.save(path)
    assert read(path, 0, engine) is None


def test_ruling_is_not_a_mark_but_a_drawn_shape_is(tmp_path: Path, engine: TesseractEngine) -> None:
    grid = (
        b"0.5 w "
        + b"".join(f"72 {y} m 540 {y} l S ".encode() for y in range(400, 640, 40))
        + b"".join(f"{x} 400 m {x} 600 l S ".encode() for x in (72, 300, 540))
    )
    ruled = hiding._on_page_two(tmp_path / "ruled.pdf", grid)
    assert "committee" in texts(read(ruled, 1, engine))
    # a name's initials drawn as filled shapes: marks no text accounts for
    shapes = b"".join(f"{x} 500 m {x + 20} 540 l {x + 40} 500 l f ".encode() for x in (100, 160))
    drawn = hiding._on_page_two(tmp_path / "drawn.pdf", shapes)
    assert read(drawn, 1, engine) is None


def test_fonts_whose_codes_say_nothing_of_their_letters_are_not_trusted(tmp_path: Path) -> None:
    from pressroom.redact.seen import fonts_trusted

    cases = {
        hiding.shared_type3: False,  # glyphs that are drawings
        hiding.shared_identity_h: True,  # a composite font with its ToUnicode map
        hiding.white_text: True,  # Helvetica, a standard encoding
    }
    for make, trusted in cases.items():
        with pikepdf.open(make(tmp_path / f"{make.__name__}.pdf")) as pdf:
            assert fonts_trusted(pdf.pages[0]) is trusted, make.__name__
    pdf = pikepdf.Pdf.new()
    bare = pdf.make_indirect(
        Dictionary(
            Type=Name.Font, Subtype=Name.Type0, BaseFont=Name.X, Encoding=Name("/Identity-H")
        )
    )
    hiding._page(pdf, hiding._line(700, "Hello"), Dictionary(Font=Dictionary(F1=bare)))
    assert fonts_trusted(pdf.pages[0]) is False  # a CID font without a map


# --- review R1's findings: each page below was read from its text and delivered the name

BODY = [
    "Thank you for your letter about the garden project and the new bench.",
    "The committee has agreed to fund the planting along the northern wall.",
    "Work will start in the spring once the ground has dried out properly.",
    "Please let us know which weekend suits your volunteers for the digging.",
]


def _mapped(pdf: pikepdf.Pdf, spell: Any) -> pikepdf.Object:
    """Helvetica whose ToUnicode map says each code spells ``spell(code)``."""
    pairs = "\n".join(
        f"<{c:02X}> <{spell(c).encode('utf-16-be').hex().upper()}>" for c in range(32, 127)
    )
    cmap = (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        "/CMapName /Said def /CMapType 2 def\n"
        "1 begincodespacerange <00> <FF> endcodespacerange\n"
        f"95 beginbfchar\n{pairs}\nendbfchar\n"
        "endcmap CMapName currentdict /CMap defineresource pop end end\n"
    )
    return pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name.Helvetica,
            Encoding=Name.WinAnsiEncoding,
            ToUnicode=pdf.make_stream(cmap.encode()),
        )
    )


def _letter_with_name(path: Path, spell: Any) -> Path:
    """Prose in Helvetica; one line's name set in a second Helvetica that ``spell`` maps."""
    pdf = pikepdf.Pdf.new()
    fonts = Dictionary(F1=hiding._helvetica(pdf), F2=_mapped(pdf, spell))
    body = b"".join(hiding._line(700 - 20 * n, text, size=11) for n, text in enumerate(BODY))
    after = b"".join(hiding._line(560 - 20 * n, text, size=11) for n, text in enumerate(BODY))
    named = (
        b"BT /F1 11 Tf 72 600 Td (Our chair, ) Tj /F2 11 Tf (Jane Whitfield) Tj /F1 11 Tf "
        b"(, will visit the garden on Monday.) Tj ET\n"
    )
    hiding._page(pdf, body + named + after, Dictionary(Font=fonts))
    pdf.save(path)
    return path


@pytest.mark.parametrize(
    "spell",
    [
        lambda c: chr(c) + "\u200b" if chr(c).isalpha() else chr(c),  # a zero-width space
        lambda c: chr(c) + "\u00ad" if chr(c).isalpha() else chr(c),  # a soft hyphen
        # mathematical bold: what normalising folds, detection does not read
        lambda c: chr(0x1D400 + c - 65) if "A" <= chr(c) <= "Z" else chr(c),
        lambda c: "x" if chr(c).isalpha() else chr(c),  # a map that lies for this font only
        lambda c: " ",  # every code a space: glyphs no word holds
    ],
    ids=["zero-width", "soft-hyphen", "math-bold", "lies-for-one-font", "spaces"],
)
def test_a_name_its_text_does_not_spell_goes_to_ocr(
    spell: Any, tmp_path: Path, engine: TesseractEngine
) -> None:
    assert read(_letter_with_name(tmp_path / "source.pdf", spell), 0, engine) is None


def test_a_name_drawn_with_dots_goes_to_ocr(tmp_path: Path, engine: TesseractEngine) -> None:
    import numpy as np
    from PIL import ImageDraw, ImageFont

    from pressroom.synth import find_font

    face = ImageFont.truetype(str(find_font("DejaVuSans.ttf")), 22)
    picture = Image.new("L", (22 * 14, 44), 255)
    ImageDraw.Draw(picture).text((2, 2), "Jane Whitfield", font=face, fill=0)
    pdf = pikepdf.Pdf.new()
    bold = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name("/Helvetica-Bold"),
            Encoding=Name.WinAnsiEncoding,
        )
    )
    dots = b"\n".join(
        f"BT /F3 8.46 Tf {110 + x * 1.1:.2f} {725 - y * 1.1:.2f} Td (.) Tj ET".encode()
        for y, x in zip(*np.nonzero(np.asarray(picture) < 128), strict=True)
    )
    body = b"".join(hiding._line(640 - 20 * n, text, size=11) for n, text in enumerate(BODY))
    fonts = Dictionary(F1=hiding._helvetica(pdf), F3=bold)
    hiding._page(pdf, hiding._line(700, "Dear") + dots + b"\n" + body, Dictionary(Font=fonts))
    path = tmp_path / "dots.pdf"
    pdf.save(path)
    assert read(path, 0, engine) is None


def test_bullets_rules_and_leaders_draw_nothing(tmp_path: Path, engine: TesseractEngine) -> None:
    """Words that spell nothing on lines of their own — a bullet before each line, a leader of
    dots, a rule of underscores to sign on — are a page's text, read from it."""
    pdf = pikepdf.Pdf.new()
    # a bullet (WinAnsi 0x95) before each line of prose
    body = b"".join(
        b"BT /F1 11 Tf 72 %d Td (\\225 %s) Tj ET\n" % (700 - 20 * n, text.encode())
        for n, text in enumerate(BODY)
    )
    body += hiding._line(600, "Contents " + "." * 60 + " 3", size=11)
    body += hiding._line(560, "Signed " + "_" * 30, size=11)
    hiding._page(pdf, body, Dictionary(Font=Dictionary(F1=hiding._helvetica(pdf))))
    path = tmp_path / "bullets.pdf"
    pdf.save(path)
    seen = read(path, 0, engine)
    assert {"committee", "Contents", "Signed"} <= texts(seen)


def _picture_page(
    path: Path, lines: list[tuple[float, str]], text: str, at: tuple[float, ...]
) -> Path:
    """One page of Helvetica ``lines`` (y, text) and a picture of ``text`` (DejaVu Sans Bold,
    grey pixels in an image XObject) placed at ``at`` (x, y and height in points)."""
    from PIL import ImageDraw, ImageFont

    from pressroom.synth import find_font

    face = ImageFont.truetype(str(find_font("DejaVuSans-Bold.ttf")), 250)  # 300 dpi at 72 pt
    box = ImageDraw.Draw(Image.new("L", (1, 1))).textbbox((0, 0), text, font=face)
    right, bottom = int(box[2]), int(box[3])
    picture = Image.new("L", (right + 40, bottom + 40), 255)
    ImageDraw.Draw(picture).text((20, 20), text, font=face, fill=0)
    pdf = pikepdf.Pdf.new()
    image = pdf.make_stream(zlib.compress(picture.tobytes()))
    image.Type, image.Subtype = Name.XObject, Name.Image
    image.Width, image.Height = picture.width, picture.height
    image.ColorSpace, image.BitsPerComponent, image.Filter = Name.DeviceGray, 8, Name.FlateDecode
    x, y, height = at
    width = height * picture.width / picture.height
    content = f"q {width:.2f} 0 0 {height:.2f} {x} {y} cm /Im0 Do Q\n".encode()
    content += b"".join(hiding._line(y_, t, size=12) for y_, t in lines)
    resources = Dictionary(
        Font=Dictionary(F1=hiding._helvetica(pdf)), XObject=Dictionary(Im0=image)
    )
    hiding._page(pdf, content, resources)
    pdf.save(path)
    return path


def test_a_value_in_a_picture_beside_its_label_in_the_text_is_found(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    """The label is text, the number a picture beside it (review R4, case A): the page is
    read whole, label and value together, so the number is found."""
    lines = [(700.0, "Thank you for your letter about the garden."), (670.0, "Account number:")]
    path = _picture_page(tmp_path / "label.pdf", lines, "40212983", (164.0, 666.0, 14.0))
    assert read(path, 0, engine) is None  # the picture: OCR'd with the page
    found = detect_document(path, parse_policy("account-number", now=0), engine, _plain())
    # where the picture is (OCR may misread a digit: the place is burned either way)
    top = 792 - 666 - 14
    picture = (164.0, top, 164.0 + 80, top + 14)
    assert any(
        f.kind == "account-number"
        and f.box[0] < picture[2]
        and f.box[2] > picture[0]
        and f.box[1] < picture[3]
        and f.box[3] > picture[1]
        for f in found
    ), found


def test_a_name_in_large_letters_in_a_picture_is_found(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    """A name in 72 pt bold letters as a picture (review R4, case B: their straight strokes
    are ruling to the marks test, so only their curves and ends are marks)."""
    lines = [(740.0, "Thank you for your letter about the garden."), (720.0, "We will reply.")]
    path = _picture_page(tmp_path / "large.pdf", lines, "ETHEL HILL", (72.0, 500.0, 72.0))
    assert read(path, 0, engine) is None
    found = detect_document(path, parse_policy("name", now=0), engine, _plain())
    assert any("HILL" in f.value for f in found if f.kind == "name"), found


def _plain() -> JobOptions:
    return JobOptions(template=resolve_template("plain"))
