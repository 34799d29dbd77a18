"""Inline images are found by tokens, not bytes: text that spells BI, ID or EI is text.

Born-digital documents were refused CONTENT_LIMIT ("an inline image whose size cannot be
read") because a company name ``(BIG Corp) Tj`` or a surname split by kerning
``[(BI) 11.2 (ANCA)] TJ`` read as the BI operator. Real inline images must still be found,
sized and held to the pixel caps as before.
"""

from __future__ import annotations

from pathlib import Path

import pikepdf
import pytest
from pikepdf import Dictionary, Name

from pressroom.errors import ContentLimit, PermanentError
from pressroom.pipeline.content import ContentMeter, PageCost
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.inspect import inspect_source
from pressroom.pipeline.plain import process_document
from pressroom.settings import Limits
from pressroom.templates import resolve_template
from pressroom.testing import FakeOcrEngine
from tests.helpers import delivered

BORN_DIGITAL = b"BT /F1 12 Tf 72 700 Td (BIG Corp) Tj [(BI) 11.2 (ANCA)] TJ (ID card EI) Tj ET"
INLINE_4X4 = b"q 4 0 0 4 72 600 cm BI /W 4 /H 4 /BPC 8 /CS /G ID " + bytes(range(16)) + b" EI Q"


def _pdf(path: Path, content: bytes) -> Path:
    pdf = pikepdf.Pdf.new()
    font = pdf.make_indirect(
        Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica)
    )
    page = pikepdf.Page(
        Dictionary(
            Type=Name.Page,
            MediaBox=[0, 0, 612, 792],
            Resources=Dictionary(Font=Dictionary(F1=font)),
            Contents=pdf.make_stream(content),
        )
    )
    pdf.pages.append(page)
    pdf.save(path)
    return path


def _cost(path: Path) -> PageCost:
    with pikepdf.open(path) as pdf:
        return ContentMeter(Limits()).page(pdf.pages[0], 1)


def test_a_born_digital_page_whose_text_spells_bi_goes_through(tmp_path: Path) -> None:
    src = _pdf(tmp_path / "text.pdf", BORN_DIGITAL)
    assert _cost(src).largest_image == 0
    assert len(inspect_source(src, Limits()).pages) == 1
    options = JobOptions(template=resolve_template(None), limits=Limits())
    delivered(
        process_document(src, tmp_path / "out.pdf", options, FakeOcrEngine(lines=("BIG Corp",)))
    )
    assert (tmp_path / "out.pdf").exists()


def test_a_real_inline_image_among_such_text_is_still_found_and_sized(tmp_path: Path) -> None:
    src = _pdf(tmp_path / "both.pdf", BORN_DIGITAL + b"\n" + INLINE_4X4 + b"\n" + BORN_DIGITAL)
    cost = _cost(src)
    assert (cost.largest_image, cost.image_pixels) == (16, 16)
    # two of them: each counted, its binary data never read as operators
    src = _pdf(tmp_path / "two.pdf", INLINE_4X4 + b" (BI) Tj " + INLINE_4X4.replace(b"4", b"5"))
    cost = _cost(src)
    assert (cost.largest_image, cost.image_pixels) == (25, 41)


def test_a_huge_inline_image_after_such_text_is_still_refused(tmp_path: Path) -> None:
    side = 30_000
    huge = b"BI /W %d /H %d /CS /G /BPC 8 ID " % (side, side) + bytes(16) + b" EI"
    src = _pdf(tmp_path / "huge.pdf", BORN_DIGITAL + b" q " + huge + b" Q")
    assert _cost(src).largest_image == side * side
    options = JobOptions(template=resolve_template(None), limits=Limits())
    with pytest.raises(PermanentError) as info:
        delivered(process_document(src, tmp_path / "out.pdf", options, FakeOcrEngine(lines=("x",))))
    assert info.value.code == "PIXEL_LIMIT"


UNSIZED = b"BI /CS /G /BPC 8 ID xxxx EI"


@pytest.mark.parametrize(
    "text",
    [
        rb"(a\) BI \( b) Tj",
        rb"(x (BI) y) Tj",
        rb"(x (y (z \) BI) ID) EI) Tj",
        rb"(a\\\\) Tj (BI) Tj",
        b"<4249> Tj <4249\n4944> Tj",
        b"% BI /CS /G ID xxxx EI\n",
        b"/BI /ID /EI /xBI 0BI BID",
    ],
    ids=["escaped-parens", "nested", "nested-deep", "escaped-backslash", "hex", "comment", "names"],
)
def test_bi_in_strings_comments_and_names_is_no_operator(tmp_path: Path, text: bytes) -> None:
    # an unsized inline image is refused: the control shows the spelling would be refused
    # were it read as an operator
    content = b"BT /F1 12 Tf 72 700 Td " + text + b" ET"
    assert _cost(_pdf(tmp_path / "ok.pdf", content)).largest_image == 0
    with pytest.raises(ContentLimit, match="inline image whose size cannot be read"):
        _cost(_pdf(tmp_path / "control.pdf", content + b" " + UNSIZED))


def test_an_unsized_inline_image_after_a_string_is_refused(tmp_path: Path) -> None:
    """A string before the operator ends where it ends, escapes and nesting followed."""
    for before in (rb"(a\\) ", b"(x (y) z) ", b"<4249> ", b"% (\n"):
        with pytest.raises(ContentLimit, match="inline image whose size cannot be read"):
            _cost(_pdf(tmp_path / "bad.pdf", before + UNSIZED))


def test_after_a_string_that_never_ends_bi_is_matched_as_bytes(tmp_path: Path) -> None:
    """A renderer reads a broken stream some way of its own: nothing after the break is hidden
    from the caps by it."""
    src = _pdf(tmp_path / "broken.pdf", b"(never closed BI /W 5 /H 5 /CS /G ID xxxxx EI")
    assert _cost(src).largest_image == 25
    src = _pdf(tmp_path / "broken-hex.pdf", b"<4249 BI /W 5 /H 5 /CS /G ID xxxxx EI")
    assert _cost(src).largest_image == 25
