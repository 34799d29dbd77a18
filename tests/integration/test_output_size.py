"""A redacted page rebuilt from its pixels is stored like its source: a JPEG scan stays JPEG at
its own resolution, a bilevel scan stays bilevel in CCITT group 4, a born-digital page is black
and white at a resolution that keeps its text legible; outputs of scans stay within 1.3x of
their source (bench/size_bench.py measures every kind)."""

from __future__ import annotations

import io
from pathlib import Path

import pikepdf
import pytest

from pressroom.engines.tesseract import TesseractEngine
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.optimize import LEVELS
from pressroom.processing import Processing
from pressroom.redact.leaks import find_leaks
from pressroom.redact.policy import parse_policy
from pressroom.synth import draw_page, save_tiff, text_pdf
from pressroom.templates import resolve_template
from tests.helpers import delivered

pytestmark = pytest.mark.integration

LINES = [
    "Payout form for the spring tournament, section A",
    "Player: Mr Quentin Alder, rating 2140",
    "The organiser confirms the prize was paid in full.",
]
NAME = "Quentin Alder"


def jpeg_scan_pdf(path: Path, dpi: int = 200) -> Path:
    image = draw_page(LINES, dpi=dpi, height_in=4.0).image
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=75)
    pdf = pikepdf.Pdf.new()
    w, h = image.width * 72 / dpi, image.height * 72 / dpi
    stream = pdf.make_stream(
        buf.getvalue(),
        Type=pikepdf.Name.XObject,
        Subtype=pikepdf.Name.Image,
        Width=image.width,
        Height=image.height,
        ColorSpace=pikepdf.Name.DeviceGray,
        BitsPerComponent=8,
        Filter=pikepdf.Name.DCTDecode,
    )
    pdf.pages.append(
        pikepdf.Page(
            pikepdf.Dictionary(
                Type=pikepdf.Name.Page,
                MediaBox=pikepdf.Array([0, 0, w, h]),
                Resources=pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=stream)),
                Contents=pdf.make_stream(f"q {w:.2f} 0 0 {h:.2f} 0 0 cm /Im0 Do Q".encode()),
            )
        )
    )
    pdf.save(path)
    return path


def redacted(src: Path, tmp: Path, engine: TesseractEngine) -> Path:
    out = tmp / "out.pdf"
    delivered(
        Processing(parse_policy("name", now=0))(
            src, out, JobOptions(template=resolve_template("plain")), engine
        )
    )
    assert find_leaks(out, [NAME]) == []
    return out


def image_facts(path: Path) -> tuple[list[str], int, int, int]:
    with pikepdf.open(path) as pdf:
        (raw,) = pdf.pages[0].get_images().values()
        image = pikepdf.PdfImage(raw)
        return [str(f) for f in image.filters], image.width, image.height, image.bits_per_component


def test_a_redacted_jpeg_scan_stays_jpeg_at_its_own_resolution(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = jpeg_scan_pdf(tmp_path / "scan.pdf")
    out = redacted(src, tmp_path, engine)
    filters, width, height, _bits = image_facts(out)
    assert filters == ["/DCTDecode"] and (width, height) == (1700, 800)
    assert out.stat().st_size <= 1.3 * src.stat().st_size


def test_a_redacted_bilevel_scan_stays_bilevel(tmp_path: Path, engine: TesseractEngine) -> None:
    page = draw_page(LINES, dpi=200, height_in=4.0).image
    src = save_tiff([page], tmp_path / "fax.tif", 200, bilevel=True)
    out = redacted(src, tmp_path, engine)
    filters, width, _height, bits = image_facts(out)
    assert filters == ["/CCITTFaxDecode"] and bits == 1 and width == 1700
    assert out.stat().st_size <= 1.3 * src.stat().st_size + 4096  # + the text layer's font


def test_a_redacted_typed_page_is_black_and_white_at_a_legible_resolution(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = text_pdf([LINES], tmp_path / "typed.pdf")
    out = redacted(src, tmp_path, engine)
    filters, width, height, bits = image_facts(out)
    assert filters == ["/CCITTFaxDecode"] and bits == 1
    assert width == 1700 and abs(height - 2200) <= 1  # 200 dpi, not 300
    with pikepdf.open(out) as pdf:  # the page keeps its size
        assert [float(v) for v in pdf.pages[0].mediabox] == [0, 0, 612, 792]


def grey_print_pdf(path: Path) -> Path:
    """A typed page with a grey caption and a shaded box beside its black text."""
    pdf = pikepdf.open(text_pdf([LINES], path.with_name("base.pdf")))
    page = pdf.pages[0]
    font = page.obj.Resources.Font.F1
    extra = (
        b" q 0.92 g 72 500 400 40 re f Q"
        b" BT /F1 14 Tf 0.55 g 80 514 Td (Shaded box: payment due 14 March) Tj ET"
        b" BT /F1 12 Tf 0.6 g 72 470 Td (Caption in 60 per cent grey, ref 88213) Tj ET"
    )
    page.obj.Contents = pdf.make_stream(page.obj.Contents.read_bytes() + extra)
    page.obj.Resources.Font.F1 = font
    pdf.save(path)
    return path


def test_grey_print_on_a_redacted_typed_page_is_kept_grey(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    import numpy as np
    import pypdfium2

    src = grey_print_pdf(tmp_path / "grey.pdf")
    out = redacted(src, tmp_path, engine)
    filters, _w, _h, bits = image_facts(out)
    assert bits == 8 and filters == ["/FlateDecode"]  # not cut to black and white
    image = np.asarray(
        pypdfium2.PdfDocument(str(out))[0].render(scale=2, grayscale=True).to_pil().convert("L")
    )
    caption = image[2 * (792 - 482) : 2 * (792 - 466), 2 * 72 : 2 * 400]
    assert (caption < 200).sum() > 500  # the grey caption is still there


def test_a_coarse_jpeg_scan_is_stored_finer_once_burned(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    """Tables of a quality-20 scan would ring into a burned box: its rebuilt page is stored at
    quality 60 at least, and the solidity check passes (redacted() would raise otherwise)."""
    image = draw_page(LINES, dpi=200, height_in=4.0).image
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=20)
    src = jpeg_scan_pdf(tmp_path / "coarse.pdf")
    with pikepdf.open(src, allow_overwriting_input=True) as pdf:
        (raw,) = pdf.pages[0].get_images().values()
        raw.write(buf.getvalue(), filter=pikepdf.Name.DCTDecode)
        pdf.save(src)
    out = redacted(src, tmp_path, engine)
    assert image_facts(out)[0] == ["/DCTDecode"]


@pytest.mark.parametrize("level", [1, 2])
def test_optimize_is_lossless_and_smaller(
    tmp_path: Path, engine: TesseractEngine, level: int
) -> None:
    import numpy as np
    import pypdfium2

    from pressroom.pipeline.archive import pdfa_problems

    image = draw_page(LINES, dpi=300, height_in=4.0).image
    src = tmp_path / "grey.png"
    image.save(src, dpi=(300, 300))
    outs = []
    for n in (0, level):
        out = tmp_path / f"out{n}.pdf"
        options = JobOptions(template=resolve_template("plain"), optimize=n, output_type="pdfa")
        delivered(Processing(parse_policy("name", now=0))(src, out, options, engine))
        assert pdfa_problems(out) == []
        outs.append(out)
    assert outs[1].stat().st_size < outs[0].stat().st_size
    pixels = [
        np.asarray(pypdfium2.PdfDocument(str(o))[0].render(scale=1).to_pil().convert("L"))
        for o in outs
    ]
    assert np.array_equal(pixels[0], pixels[1])


def test_optimize_never_makes_a_sources_image_larger(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    """A palette image stored with the PNG predictor (the review's ``palette.pdf`` grew under
    ``--optimize 1``, its predictor dropped) comes out no larger at any level, pixels equal."""
    from tests.unit.test_optimize import palette_png_pdf

    src = palette_png_pdf(tmp_path / "palette.pdf")
    with pikepdf.open(src) as pdf:
        (image,) = pdf.pages[0].get_images().values()
        size, pixels = len(image.read_raw_bytes()), image.read_bytes()
    for level in LEVELS:
        out = tmp_path / f"out{level}.pdf"
        options = JobOptions(template=resolve_template("plain"), optimize=level, allow_no_text=True)
        delivered(Processing(None)(src, out, options, engine))
        with pikepdf.open(out) as pdf:
            (image,) = pdf.pages[0].get_images().values()
            assert len(image.read_raw_bytes()) <= size, level
            assert image.read_bytes() == pixels
