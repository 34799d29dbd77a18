"""A short value in faint print on a full page of dark print: under any share of the whole page
a page of scanner grain stays under, but a person reads it. Its band of rows is read on its
own (``faint.MIN_BAND_GREY_PT2``), so a faint copy of a found account number is burned like
the dark one (it was delivered readable: review R3)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest
from PIL import Image, ImageDraw, ImageFont

from pressroom.engines.tesseract import TesseractEngine
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.ocr import normalise_contrast
from pressroom.redact.engine import redact_document
from pressroom.redact.faint import MIN_GREY_SHARE, grey_bands
from pressroom.redact.policy import parse_policy
from pressroom.synth import find_font, image_pdf, page_lines
from pressroom.templates import resolve_template
from tests.helpers import delivered

pytestmark = pytest.mark.integration

DPI = 300
NUMBER = "40212983"
FAINT_AT = (4.2, 9.6)  # inches: the faint copy, alone on its line


def _page(faint_grey: int = 175, faint_pt: float = 8.0, text: str = NUMBER) -> Image.Image:
    image = Image.new("L", (round(8.5 * DPI), round(11 * DPI)), 255)
    draw = ImageDraw.Draw(image)
    body = ImageFont.truetype(str(find_font("DejaVuSerif.ttf")), round(10 * DPI / 72))
    lines = [*page_lines(7, 12), f"Account number: {NUMBER}", *page_lines(8, 10)]
    for i, line in enumerate(lines):
        draw.text((0.9 * DPI, (0.9 + 0.36 * i) * DPI), line, fill=0, font=body)
    small = ImageFont.truetype(str(find_font("DejaVuSans.ttf")), round(faint_pt * DPI / 72))
    draw.text((FAINT_AT[0] * DPI, FAINT_AT[1] * DPI), text, fill=faint_grey, font=small)
    return image


@pytest.mark.parametrize(
    ("grey", "pt", "text"),
    [(175, 8, NUMBER), (195, 10, "Ann Lee"), (175, 8, "Lee"), (200, 6, "Lee"), (215, 6, "Ivy Li")],
)
def test_a_short_faint_value_on_a_full_page_is_a_band_to_read(
    grey: int, pt: float, text: str
) -> None:
    gray = normalise_contrast(_page(grey, pt, text))
    bands, _paper = grey_bands(gray, DPI)
    y = FAINT_AT[1] * DPI
    assert any(y0 <= y + 10 <= y1 for y0, y1 in bands), bands
    # under the page's share: what the whole-page rule alone would have dropped
    factor = max(gray.size) // 1100
    assert (gray.width // factor) * (gray.height // factor) * MIN_GREY_SHARE > 250


def test_the_same_page_in_dark_print_only_makes_no_band() -> None:
    assert grey_bands(normalise_contrast(_page(faint_grey=0)), DPI)[0] == []


def test_a_faint_copy_of_a_found_number_is_burned(tmp_path: Path, engine: TesseractEngine) -> None:
    src = image_pdf([_page()], tmp_path / "scan.pdf", DPI)
    out = tmp_path / "out.pdf"
    delivered(
        redact_document(
            src,
            out,
            JobOptions(template=resolve_template(None)),
            parse_policy("name,address,account-number", now=0),
            engine,
        )
    )
    doc = pdfium.PdfDocument(out)
    try:
        page = doc[0]
        scale = DPI / 72
        seen = page.render(scale=scale, grayscale=True).to_pil().convert("L")
        width_pt = page.get_size()[0]
    finally:
        doc.close()
    # the output keeps the page's size; the faint copy's ink, in the output's pixels
    k = seen.width / (width_pt * scale)
    small = ImageFont.truetype(str(find_font("DejaVuSans.ttf")), round(8.0 * DPI / 72))
    x0, y0, x1, y1 = small.getbbox(NUMBER)
    x, y = FAINT_AT[0] * DPI, FAINT_AT[1] * DPI
    ink = tuple(round(v * k) for v in (x + x0, y + y0, x + x1, y + y1))
    copy = np.asarray(seen.crop(ink))
    assert copy.max() < 60, "the faint copy of the account number is still readable"
