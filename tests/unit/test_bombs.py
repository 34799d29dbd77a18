"""PDF and image bombs, built in each test: refused with their code before they cost memory,
in plain processing and in redaction; pages that are merely heavy still go through."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pikepdf
import pypdfium2
import pytest
from PIL import Image

from pressroom.engines import pdfium
from pressroom.errors import ContentLimit, Corrupt, PermanentError, PixelLimit
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.inspect import inspect_source
from pressroom.pipeline.plain import process_document
from pressroom.pipeline.resolution import fitting_dpi
from pressroom.pixels import PixelBudget
from pressroom.redact.engine import detect_document, redact_document
from pressroom.redact.policy import RedactionPolicy
from pressroom.settings import Limits
from pressroom.synth import save_png, save_tiff
from pressroom.templates import resolve_template
from pressroom.testing import FakeOcrEngine
from tests import bombs

LINES = ("Waiver signed by the participant", "Payout approved 2026")
# account numbers only: no language model to load in a unit test
POLICY = RedactionPolicy(("account-number",))


def process(src: Path, tmp: Path, limits: Limits | None = None) -> object:
    options = JobOptions(template=resolve_template(None), limits=limits or Limits())
    return process_document(src, tmp / "out.pdf", options, FakeOcrEngine(lines=LINES))


def redact(src: Path, tmp: Path, limits: Limits | None = None) -> object:
    options = JobOptions(template=resolve_template(None), limits=limits or Limits())
    return redact_document(src, tmp / "out.pdf", options, POLICY, FakeOcrEngine(lines=LINES))


Make = Callable[[Path], Path]

BOMBS: list[tuple[str, str, Make]] = [
    # a 40 KB file inflating to 20 MB: 4.5 million operators
    ("operators-20MB", "CONTENT_LIMIT", lambda p: bombs.operator_bomb(p, 20)),
    # 100 KB inflating to 50 MB, past the byte cap before the operators are counted
    ("operators-50MB", "CONTENT_LIMIT", lambda p: bombs.operator_bomb(p, 50)),
    ("rectangles-12MB", "CONTENT_LIMIT", lambda p: bombs.operator_bomb(p, 12, b"0 0 1 1 re f\n")),
    # forms drawing forms: 10**7 and 4**10 uses of a form from under 2 KB
    ("fanout-10^7", "CONTENT_LIMIT", lambda p: bombs.form_fanout_bomb(p, 10, 7)),
    ("fanout-4^10", "CONTENT_LIMIT", lambda p: bombs.form_fanout_bomb(p, 4, 10)),
    ("text-4MB", "CONTENT_LIMIT", lambda p: bombs.text_bomb(p, 4)),
    ("hex-text-4MB", "CONTENT_LIMIT", lambda p: bombs.text_bomb(p, 4, hexed=True)),
    # a 30,000 x 30,000 image declared over a few KB, at every depth and by every route
    *[
        (
            f"image-{depth}-deep",
            "PIXEL_LIMIT",
            (lambda d: lambda p: bombs.nested_image_bomb(p, d))(depth),
        )
        for depth in (1, 5, 10)
    ],
    ("image-just-over-8-deep", "PIXEL_LIMIT", lambda p: bombs.nested_image_bomb(p, 8, 12_300)),
    *[
        (
            f"image-via-{via}",
            "PIXEL_LIMIT",
            (lambda v: lambda p: bombs.nested_image_bomb(p, 6, via=v))(via),
        )
        for via in ("pattern", "type3", "smask", "annotation")
    ],
    ("inline-image", "PIXEL_LIMIT", lambda p: bombs.inline_image_bomb(p)),
    ("jpeg-bigger-than-declared", "PIXEL_LIMIT", lambda p: bombs.jpeg_liar(p)),
    ("forms-45-deep", "CONTENT_LIMIT", lambda p: bombs.nested_image_bomb(p, 45, 100)),
    # the same image drawn in lawful spellings a naive scan misses: a comment or NUL between
    # the name and Do, an inline image glued to BI or with a long dictionary, resources
    # inherited from the root of a deep page tree, a form measured first under small resources
    ("do-after-comment", "PIXEL_LIMIT", lambda p: bombs.image_drawn_as(p, b"/Im %x\nDo")),
    ("do-after-nul", "PIXEL_LIMIT", lambda p: bombs.image_drawn_as(p, b"/Im\x00Do")),
    (
        "inline-glued",
        "PIXEL_LIMIT",
        lambda p: bombs.inline_image_spelled(p, b"BI/W %d/H %d/CS/G/BPC 8/F/Fl"),
    ),
    (
        "inline-long-dictionary",
        "PIXEL_LIMIT",
        lambda p: bombs.inline_image_spelled(
            p, b"BI /W %d /H %d /CS /G /BPC 8 /F /Fl /Pad (" + b"x" * 2000 + b")"
        ),
    ),
    (
        "inline-unsized",
        "CONTENT_LIMIT",
        lambda p: bombs.inline_image_spelled(p, b"BI /CS /G /BPC 8 /F /Fl /Pad [%d %d]"),
    ),
    ("inherited-64-deep", "PIXEL_LIMIT", lambda p: bombs.deep_tree_inherited_image(p, 64)),
    ("form-memo", "PIXEL_LIMIT", bombs.form_measured_under_small_resources),
    # one real page under a tree that claims millions: corrupt, not an internal error
    ("tree-claims-5M", "CORRUPT", lambda p: bombs.lying_page_tree(p, 5_000_000)),
    ("tree-claims-3", "CORRUPT", lambda p: bombs.lying_page_tree(p, 3)),
    ("subtree-claims-less", "CORRUPT", bombs.lying_subtree),
    ("kids-repeated-300k", "CORRUPT", lambda p: bombs.repeated_kids(p, 300_000)),
    # a trailer claiming 20 million objects in a few KB: qpdf would size its table by it
    ("xref-size-20M", "CORRUPT", lambda p: bombs.xref_size_liar(p, 20_000_000)),
]


@pytest.mark.parametrize(
    ("make", "code"), [(make, code) for _, code, make in BOMBS], ids=[b[0] for b in BOMBS]
)
def test_pdf_bombs_are_refused_with_their_code_in_processing_and_redaction(
    tmp_path: Path, make: Make, code: str
) -> None:
    src = make(tmp_path / "bomb.pdf")
    for run in (process, redact):
        with pytest.raises(PermanentError) as info:
            run(src, tmp_path)
        assert info.value.code == code, info.value
        assert not (tmp_path / "out.pdf").exists()


def test_a_page_with_more_objects_than_the_walk_allows_is_refused(tmp_path: Path) -> None:
    src = bombs.many_objects(tmp_path / "many.pdf", 1_200)
    with pytest.raises(ContentLimit, match="more than 1,000 objects"):
        inspect_source(src, Limits(max_page_objects=1_000))
    assert len(inspect_source(src, Limits(max_page_objects=1_300)).pages) == 1


def test_caps_are_settings(tmp_path: Path) -> None:
    """A page of 60,000 operators goes through by default and is refused under a lower cap."""
    src = bombs.operator_bomb(tmp_path / "heavy.pdf", 0.27)
    inspect_source(src, Limits())
    env = {"PRESSROOM_MAX_PAGE_OPERATORS": "50000"}
    with pytest.raises(ContentLimit, match="more than 50,000 drawing operators"):
        inspect_source(src, Limits.from_env(env))
    env = {"PRESSROOM_MAX_PAGE_CONTENT_BYTES": "100000"}
    with pytest.raises(ContentLimit, match="inflate past 100,000 bytes"):
        inspect_source(src, Limits.from_env(env))


def test_a_document_has_an_operator_budget(tmp_path: Path) -> None:
    """Pages each under the page cap, sharing one content stream, add up past the budget."""
    page = bombs.operator_bomb(tmp_path / "one.pdf", 0.27)  # ~60,000 operators
    with pikepdf.open(page) as pdf:
        for _ in range(4):
            pdf.pages.append(pdf.pages[0])
        pdf.save(tmp_path / "five.pdf")
    inspect_source(tmp_path / "five.pdf", Limits())
    env = {"PRESSROOM_MAX_DOCUMENT_OPERATORS": "200000"}
    with pytest.raises(ContentLimit, match="200,000 drawing operators in all"):
        inspect_source(tmp_path / "five.pdf", Limits.from_env(env))


@pytest.mark.parametrize(
    "make",
    [
        # a heavy born-digital page: 200,000 operators
        lambda p: bombs.operator_bomb(p, 0.9),
        # a real image ten forms down, well under the cap
        lambda p: bombs.nested_image_bomb(p, 10, 1_500),
        # a form drawing itself: PDFium refuses the inner draw, and so does the walk
        bombs.self_drawing_form,
    ],
    ids=["200k-operators", "image-10-deep", "form-draws-itself"],
)
def test_heavy_but_honest_pages_go_through(tmp_path: Path, make: Make) -> None:
    src = make(tmp_path / "heavy.pdf")
    result = process(src, tmp_path)
    assert result.pages == 1  # type: ignore[attr-defined]


def test_a_huge_page_with_text_is_kept_but_never_rendered_for_redaction(tmp_path: Path) -> None:
    """Plain processing keeps a text page's vectors (no bitmap); redaction renders every page,
    at 300 dpi or, for a page too large for the cap at it, at the highest resolution within it
    down to 100 dpi: 14,400 pt square would be 400 Mpx even at 100 dpi (3.6 Gpx at 300)."""
    src = bombs.big_text_page(tmp_path / "big.pdf", 14_400)
    assert process(src, tmp_path).kept_pages == 1  # type: ignore[attr-defined]
    (tmp_path / "out.pdf").unlink()
    with pytest.raises(PixelLimit, match="would render to"):
        redact(src, tmp_path)
    with pytest.raises(PixelLimit):
        detect_document(src, POLICY, FakeOcrEngine(), JobOptions(template=resolve_template(None)))
    assert not (tmp_path / "out.pdf").exists()
    # 3,000 pt square: 156 Mpx at 300 dpi, over the cap; inspected at 240 dpi, 100 Mpx
    page = inspect_source(
        bombs.big_text_page(tmp_path / "big3000.pdf", 3_000), Limits(), every_page_dpi=300.0
    ).pages[0]
    assert fitting_dpi(page.width_pt, page.height_pt, 300.0, Limits().max_pixels) == 240.0


@pytest.mark.parametrize(
    ("side", "dpi", "code"),
    [
        (2_000, 50, "PIXEL_LIMIT"),  # 4 Mpx, upscaled 3x each way to 36 Mpx
        (1_500, 60, "PIXEL_LIMIT"),  # 2.25 Mpx to 14 Mpx
        (2_000, 150, None),  # at the floor already: no upscale
    ],
)
def test_low_resolution_images_are_checked_at_the_size_they_are_upscaled_to(
    tmp_path: Path, side: int, dpi: int, code: str | None
) -> None:
    limits = Limits(max_pixels=10_000_000)
    src = bombs.low_dpi_png(tmp_path / "low.png", side, dpi)
    if code is None:
        assert process(src, tmp_path, limits).pages == 1  # type: ignore[attr-defined]
        return
    with pytest.raises(PixelLimit, match="resampled for recognition to"):
        process(src, tmp_path, limits)
    # redaction reads the frame as it is, but checks its output rendered at 300 dpi
    with pytest.raises(PixelLimit, match="would render to"):
        redact(src, tmp_path, limits)


def test_a_fax_grid_is_checked_at_the_size_it_is_made_square(tmp_path: Path) -> None:
    """400 x 50 dpi: rows are resampled 8x to make the pixels square."""
    src = tmp_path / "fax.tif"
    bombs.marked((2_000, 500)).save(src, format="TIFF", dpi=(400, 50))
    with pytest.raises(PixelLimit):
        process(src, tmp_path, Limits(max_pixels=5_000_000))
    assert process(src, tmp_path, Limits(max_pixels=9_000_000)).pages == 1  # type: ignore[attr-defined]


def test_a_document_has_a_pixel_budget(tmp_path: Path) -> None:
    """Each page under the per-bitmap cap, the document over its budget: refused before any
    page is rendered; the same pages in a shorter document go through."""
    page = 417 * 417  # a 100 pt square page at 300 dpi
    limits = Limits(max_document_pixels=3 * page)
    scans = [bombs.marked((417, 417))] * 4
    src = save_tiff(scans, tmp_path / "four.tif", 300)
    with pytest.raises(PixelLimit, match="pixels of bitmaps"):
        process(src, tmp_path, limits)
    src = save_tiff(scans[:3], tmp_path / "three.tif", 300)
    assert process(src, tmp_path, limits).pages == 3  # type: ignore[attr-defined]
    # text pages are kept in processing, but redaction renders every one of them
    text = bombs.text_pages(tmp_path / "text.pdf", 4, (100, 100))
    (tmp_path / "out.pdf").unlink()
    assert process(text, tmp_path, limits).pages == 4  # type: ignore[attr-defined]
    (tmp_path / "out.pdf").unlink()
    with pytest.raises(PixelLimit, match="pixels of bitmaps"):
        redact(text, tmp_path, limits)


def test_every_render_is_counted_before_its_bitmap_is_made(tmp_path: Path) -> None:
    src = bombs.text_pages(tmp_path / "letters.pdf", 2)  # 8.4 Mpx each at 300 dpi
    doc = pypdfium2.PdfDocument(str(src))
    try:
        with pytest.raises(
            PixelLimit, match=r"bitmap of 8,41\d,\d{3} pixels; the limit is 8,000,000"
        ):
            pdfium.render_gray(doc, 0, 300, PixelBudget(Limits(max_pixels=8_000_000)))
        budget = PixelBudget(Limits(max_document_pixels=10_000_000))
        assert pdfium.render_gray(doc, 0, 300, budget).size == pdfium.bitmap_size(doc[0], 300 / 72)
        with pytest.raises(PixelLimit, match="past 10,000,000 pixels"):
            pdfium.render_gray(doc, 1, 300, budget)
    finally:
        doc.close()


def test_corrupt_page_trees_are_found_before_anything_trusts_a_count(tmp_path: Path) -> None:
    src = bombs.lying_page_tree(tmp_path / "tree.pdf", 5_000_000)
    with pytest.raises(Corrupt, match="claims 5000000 pages where it holds 1"):
        inspect_source(src, Limits())
    # pikepdf reads the real page and PDFium would too: the tree is all that is wrong
    with pikepdf.open(src) as pdf:
        assert len(pdf.pages) == 1


def test_a_png_is_still_read_at_its_own_size_when_no_upscale_is_needed(tmp_path: Path) -> None:
    src = save_png(bombs.marked((1_000, 1_000)), tmp_path / "ok.png", 200)
    assert process(src, tmp_path, Limits(max_pixels=1_000_000)).pages == 1  # type: ignore[attr-defined]


def _page_with(content: bytes, **stream: object) -> tuple[pikepdf.Pdf, pikepdf.Page]:
    pdf = pikepdf.Pdf.new()
    contents = pdf.make_stream(content)
    for key, value in stream.items():
        contents[f"/{key}"] = value
    pdf.pages.append(
        pikepdf.Page(
            pikepdf.Dictionary(
                Type=pikepdf.Name.Page,
                MediaBox=pikepdf.Array([0, 0, 612, 792]),
                Contents=contents,
            )
        )
    )
    return pdf, pdf.pages[0]


@pytest.mark.parametrize(
    ("content", "operators", "text_bytes"),
    [
        (b"q 1 0 0 1 72 72 cm 0 0 m 10 10 l S Q", 6, 0),
        (b"BT /F1 12 Tf 72 700 Td (Hello) Tj ET", 5, 6),  # "(Hello" : the bytes a string holds
        (b"BT [(Hel) -20 (lo)] TJ ET", 3, 7),
        (b"BT (a \\) b (c) d) Tj ET", 3, 13),  # escapes and nested brackets stay inside
        (b"BT <48656c6c6f> Tj ET", 3, 5),  # hex digits count half
        (b"/Span <</MCID 0>> BDC (x) Tj EMC", 3, 2),  # a dictionary is not a string
        (b"/Im0 Do /Im0 Do", 2, 0),
    ],
)
def test_the_operator_estimate_on_small_content(
    content: bytes, operators: int, text_bytes: int
) -> None:
    from pressroom.pipeline.content import ContentMeter

    pdf, page = _page_with(content)
    cost = ContentMeter(Limits()).page(page, 1)
    assert (cost.operators, cost.text_bytes, cost.content_bytes) == (
        operators,
        text_bytes,
        len(content),
    )
    pdf.close()


def _lzw(data: bytes) -> bytes:
    """LZW as TIFF writes it (Pillow's libtiff; the same code as PDF's, EarlyChange 1)."""
    import io

    buffer = io.BytesIO()
    Image.frombytes("L", (len(data), 1), data).save(buffer, format="TIFF", compression="tiff_lzw")
    with Image.open(buffer) as tiff:
        offset, length = tiff.tag_v2[273][0], tiff.tag_v2[279][0]
    return buffer.getvalue()[offset : offset + length]


def test_every_content_filter_is_measured_as_a_parser_decodes_it(tmp_path: Path) -> None:
    import base64
    import zlib

    from pressroom.engines.streams import decoded

    content = b"BT /F1 12 Tf 72 700 Td (Hello) Tj ET\n" * 50
    rows = b"".join(b"\x02" + bytes(37) for _ in range(49))  # PNG "Up": each row as the last
    variants = {
        "lzw": (_lzw(content), pikepdf.Name.LZWDecode, None),
        "hex-flate": (
            zlib.compress(content).hex().encode() + b">",
            pikepdf.Array([pikepdf.Name.ASCIIHexDecode, pikepdf.Name.FlateDecode]),
            None,
        ),
        "a85": (base64.a85encode(content) + b"~>", pikepdf.Name.ASCII85Decode, None),
        "run-length": (
            b"".join(
                bytes([len(c) - 1]) + c
                for c in (content[i : i + 100] for i in range(0, len(content), 100))
            )
            + b"\x80",
            pikepdf.Name.RunLengthDecode,
            None,
        ),
        "predictor": (
            zlib.compress(b"\x00" + content[:37] + rows),
            pikepdf.Name.FlateDecode,
            pikepdf.Dictionary(Predictor=12, Columns=37),
        ),
    }
    for name, (raw, filters, parms) in variants.items():
        pdf = pikepdf.Pdf.new()
        stream = pdf.make_stream(raw)
        stream.Filter = filters
        if parms is not None:
            stream.DecodeParms = parms
        assert decoded(stream, 1 << 20) == content, name
        assert stream.read_bytes(pikepdf.StreamDecodeLevel.specialized) == content, name
        pdf.close()


def test_a_predictor_cannot_hide_a_bomb(tmp_path: Path) -> None:
    """Rows that repeat become zeros under PNG's "Up" predictor: the operators are counted on
    the bytes the parser really gets."""
    import zlib

    row = bombs.STROKE  # 14 bytes, three operators
    count = 400_000  # 1.2 million operators
    data = b"\x00" + row + (b"\x02" + bytes(len(row))) * (count - 1)
    pdf, page = _page_with(
        zlib.compress(data, 9),
        Filter=pikepdf.Name.FlateDecode,
        DecodeParms=pikepdf.Dictionary(Predictor=12, Columns=len(row)),
    )
    from pressroom.pipeline.content import ContentMeter

    with pytest.raises(ContentLimit, match="drawing operators"):
        ContentMeter(Limits()).page(page, 1)
    pdf.close()


def test_redaction_reads_grey_exactly_as_pillow_makes_colour_grey(tmp_path: Path) -> None:
    """Pass one renders in colour and makes it grey band by band (never a colour image of the
    whole page in memory): the pixels are the ones ``convert("RGB").convert("L")`` gave."""
    import numpy as np

    pdf = pikepdf.Pdf.new()
    ops = [
        f"{(i * 37 % 100) / 100} {(i * 61 % 100) / 100} {(i * 17 % 100) / 100} rg "
        f"{i * 7 % 500} {i * 13 % 700} {20 + i % 60} {15 + i % 40} re f"
        for i in range(200)
    ]
    pdf.pages.append(
        pikepdf.Page(
            pikepdf.Dictionary(
                Type=pikepdf.Name.Page,
                MediaBox=pikepdf.Array([0, 0, 612, 792]),
                Contents=pdf.make_stream("\n".join(ops).encode()),
            )
        )
    )
    pdf.save(tmp_path / "colour.pdf")
    doc = pypdfium2.PdfDocument(str(tmp_path / "colour.pdf"))
    try:
        expected = doc[0].render(scale=300 / 72).to_pil().convert("RGB").convert("L")
        got = pdfium.render_luma(doc[0], 300 / 72)
        assert got.mode == "L" and got.size == expected.size
        assert np.array_equal(np.asarray(got), np.asarray(expected))
    finally:
        doc.close()
