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
from pressroom.pipeline.variants import Processing
from pressroom.redact.leaks import find_leaks
from pressroom.redact.policy import parse_policy
from pressroom.synth import draw_page, save_tiff, text_pdf
from pressroom.templates import resolve_template

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
    Processing(parse_policy("name", now=0))(
        src, out, JobOptions(template=resolve_template("plain")), engine
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
