"""A region of a page rendered alone (``pdfium.render_region``), as the read-back renders the
rows around burned boxes, is exactly that part of the whole page's rendering for what a
rebuilt page holds (its picture drawn at its size or smaller, grey or colour, JPEG or Flate,
text and vector bands; turned or shifted pages): the rows read again are the pixels a reader
sees. (Not in general: a tiling pattern, or a picture scaled up with interpolation, renders
otherwise at a region's edge — review R5 — so the solid-box check renders the page whole.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pikepdf
import pytest
from PIL import ImageDraw

from pressroom.engines import pdfium
from pressroom.models import Box
from pressroom.redact.burn import unsolid_boxes
from pressroom.synth import draw_page, image_pdf, text_pdf

REGIONS = [
    (0, 0, 50, 40),  # the top left corner
    (123, 77, 311, 98),  # inside, odd edges
    (0, 200, None, 260),  # a band of whole rows
    (None, None, None, None),  # the bottom right corner, to the page's edges
]


def _pages(tmp_path: Path) -> list[Path]:
    scan = draw_page(["Account 40212983 Jane Whitfield", "Second line here"], dpi=150).image
    ImageDraw.Draw(scan).rectangle((300, 120, 520, 170), fill=0)
    jpeg = image_pdf([scan], tmp_path / "jpeg.pdf", 150)
    lossless = image_pdf([scan], tmp_path / "flate.pdf", 150, jpeg=False)
    vector = text_pdf([["Some words in a font", "and a second line"]], tmp_path / "text.pdf")
    turned = text_pdf([["A page turned by its /Rotate"]], tmp_path / "turned.pdf", rotate=90)
    shifted = tmp_path / "shifted.pdf"
    with pikepdf.open(vector) as pdf:  # a media box that does not start at the origin
        pdf.pages[0].obj.MediaBox = pikepdf.Array([-30, 40, 582, 832])
        pdf.save(shifted)
    return [jpeg, lossless, vector, turned, shifted]


@pytest.mark.parametrize("scale", [150 / 72, 300 / 72, 1.0])
def test_a_region_rendered_alone_is_that_part_of_the_whole_rendering(
    tmp_path: Path, scale: float
) -> None:
    for path in _pages(tmp_path):
        with pdfium.RecyclingDocument(path) as doc:
            page = doc[0]
            try:
                whole = page.render(scale=scale, grayscale=True).to_pil().convert("L")
                width, height = pdfium.bitmap_size(page, scale)
                assert whole.size == (width, height)
                for x0, y0, x1, y1 in REGIONS:
                    region = (
                        width - 37 if x0 is None else x0,
                        height - 29 if y0 is None else y0,
                        width if x1 is None else x1,
                        height if y1 is None else y1,
                    )
                    alone = pdfium.render_region(page, scale, region)
                    assert alone is not None, (path.name, region)
                    assert np.array_equal(np.asarray(alone), np.asarray(whole.crop(region))), (
                        path.name,
                        scale,
                        region,
                    )
                # a region not inside the rendering is not rendered (the caller renders whole)
                assert pdfium.render_region(page, scale, (0, 0, width + 1, 10)) is None
                assert pdfium.render_region(page, scale, (10, 10, 10, 20)) is None
            finally:
                page.close()


def test_the_solidity_check_sees_ink_at_any_box_s_edge(tmp_path: Path) -> None:
    """A box with a grey line just inside one edge, a box with one light pixel, a box off the
    page's edge and a solid one: each judged as the whole page shows it."""
    page = draw_page(["Some words"], dpi=100, height_in=2.0).image
    draw = ImageDraw.Draw(page)
    for x in (100, 300, 500, 700):
        draw.rectangle((x, 60, x + 100, 100), fill=0)
    draw.line((103, 60, 103, 100), fill=128)  # a grey line 3 px inside the left edge
    draw.point((350, 97), fill=255)  # one white pixel 3 px inside the bottom edge
    src = image_pdf([page], tmp_path / "p.pdf", 100, jpeg=False)
    boxes = [Box(x, 60, x + 100, 100) for x in (100, 300, 500, 700)]
    bad: list[tuple[int, Box]] = []
    assert unsolid_boxes(src, [(0, 100.0, boxes)], bad_boxes=bad) == 2
    assert [b for _, b in bad] == [
        Box(100 * 0.72, 60 * 0.72, 200 * 0.72, 100 * 0.72),
        Box(300 * 0.72, 60 * 0.72, 400 * 0.72, 100 * 0.72),
    ]
    # a box reaching past the page's right edge: what lies off the page is no ink, what lies
    # on it is judged
    draw.rectangle((page.width - 70, 110, page.width, 150), fill=0)
    src = image_pdf([page], tmp_path / "q.pdf", 100, jpeg=False)
    past = [Box(page.width - 70, 110, page.width + 40, 150)]
    assert unsolid_boxes(src, [(0, 100.0, past)]) == 0
    assert unsolid_boxes(src, [(0, 100.0, [Box(page.width - 70, 160, page.width + 40, 190)])]) == 1
