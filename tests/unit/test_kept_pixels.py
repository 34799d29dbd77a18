"""A page a redaction renders once is read twice (issue 46): pass one's grey rendering is what
the build burns where the page shows no colour, the same pixels as a rendering of its own; and
the kept images are copies, bounded in bytes."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pikepdf
import pypdfium2
import pytest
from PIL import Image

from pressroom.engines import pdfium
from pressroom.models import Box
from pressroom.pipeline.inspect import inspect_source
from pressroom.pixels import PixelBudget
from pressroom.redact import build
from pressroom.redact.kept import Kept
from pressroom.redact.scan import PageScan
from pressroom.redact.source import RedactionSource
from pressroom.settings import Limits
from tests.unit.test_burn_cost import CountingDocument

NAME_BOX = Box(290.0, 300.0, 1300.0, 420.0)  # 300 dpi pixels


def scan_pdf(path: Path, *, colour: bool = False) -> Path:
    """A one-page scan: a grey 300 dpi JPEG of a letter with a name (``colour``: a red stamp
    on it, the page an RGB JPEG)."""
    rng = np.random.default_rng(3)
    grey = np.full((3300, 2550), 236, dtype=np.uint8)
    grey[300:420, 300:1290] = 40  # the name's ink
    grey[700:760, 300:2200] = 60
    grey += rng.integers(0, 6, size=grey.shape, dtype=np.uint8)
    image = Image.fromarray(grey, "L")
    if colour:
        image = image.convert("RGB")
        image.paste((200, 20, 20), (1800, 2600, 2200, 2900))
    jpeg = path.with_suffix(".jpg")
    image.save(jpeg, quality=85, dpi=(300, 300))
    pdf = pikepdf.new()
    page = pdf.add_blank_page(page_size=(612, 792))
    raw = pdf.make_stream(jpeg.read_bytes())
    raw.Type, raw.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
    raw.Width, raw.Height, raw.BitsPerComponent = 2550, 3300, 8
    raw.ColorSpace = pikepdf.Name.DeviceRGB if colour else pikepdf.Name.DeviceGray
    raw.Filter = pikepdf.Name.DCTDecode
    page.obj.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=raw))
    page.obj.Contents = pdf.make_stream(b"q 612 0 0 792 0 0 cm /Im0 Do Q")
    pdf.save(path)
    return path


def rebuild(path: Path, *, read_first: bool) -> tuple[Image.Image, list[float]]:
    """The first page of ``path`` rebuilt with the name burned (``read_first``: after pass
    one's grey rendering of it): what is stored, and the scale of every rendering the build
    made."""
    with ExitStack() as stack:
        info = inspect_source(path, Limits())
        src = RedactionSource(stack, path, info)
        budget = PixelBudget(Limits())
        if read_first:
            src.render(0, budget, grey=True)
        counting = CountingDocument(src.doc)
        src.doc = counting
        scan = PageScan(info.pages[0], 0, src.dpi(0), (2550, 3300), [], [])
        out = stack.enter_context(pikepdf.new())
        placed, _text, _burned, _margins = build._rebuilt_page(
            out, src, scan, None, [NAME_BOX], [], budget
        )
        return pikepdf.PdfImage(placed.xobject).as_pil_image(), counting.scales


def test_a_grey_scan_is_burned_from_pass_ones_rendering(tmp_path: Path) -> None:
    src = scan_pdf(tmp_path / "grey.pdf")
    kept, made = rebuild(src, read_first=True)
    alone, made_alone = rebuild(src, read_first=False)
    assert made == []  # pass one's pixels, not rendered again
    assert made_alone == [pytest.approx(300 / 72)]
    # the very pixels a rendering of its own gives, burned and stored alike
    assert kept.mode == alone.mode == "L"
    assert np.array_equal(np.asarray(kept), np.asarray(alone))


def test_a_page_with_colour_is_rendered_again_in_colour(tmp_path: Path) -> None:
    src = scan_pdf(tmp_path / "colour.pdf", colour=True)
    stored, made = rebuild(src, read_first=True)
    assert made == [pytest.approx(300 / 72)]  # pass one's grey is not the page
    assert stored.mode == "RGB"


def test_the_grey_rendering_is_pillows_grey_and_says_whether_there_is_colour(
    tmp_path: Path,
) -> None:
    for colour in (False, True):
        path = scan_pdf(tmp_path / f"{colour}.pdf", colour=colour)
        doc = pypdfium2.PdfDocument(str(path))
        try:
            expected = doc[0].render(scale=300 / 72).to_pil().convert("RGB").convert("L")
            got, coloured = pdfium.render_luma_seen(doc[0], 300 / 72)
        finally:
            doc.close()
        assert coloured is colour
        assert got.mode == "L" and np.array_equal(np.asarray(got), np.asarray(expected))


def test_kept_images_are_copies_and_bounded_in_bytes() -> None:
    kept = Kept(max_bytes=3 * 100 * 100)
    first = Image.new("L", (100, 100), 255)
    kept.put("a", first, "info")
    got = kept.get("a")
    assert got is not None and got[1] == "info"
    got[0].paste(0, (0, 0, 50, 50))  # a reader's drawing stays its own
    again = kept.get("a")
    assert again is not None and again[0].getpixel((0, 0)) == 255
    for key in "bcd":
        kept.put(key, Image.new("L", (100, 100)))
    assert kept.get("a") is None  # the oldest gave way
    assert all(kept.get(key) is not None for key in "bcd")
    kept.put("big", Image.new("RGB", (100, 100)))  # as large as all: kept alone
    assert kept.get("big") is not None and kept.get("d") is None
    kept.put("huge", Image.new("RGB", (200, 100)))  # larger than all: not kept
    assert kept.get("huge") is None
    assert kept.get("missing") is None
