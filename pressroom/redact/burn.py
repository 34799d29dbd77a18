"""The pixels of a page a redaction rebuilds: rendered once, at the resolution they are stored
at; grey where the page has no colour; the boxes burned in; and the checks that judge them (ink
under a box, black print or grey, and each burned box solid in the output as rendered)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw

from pressroom.engines import pdfium
from pressroom.engines.pdfium import failing_as
from pressroom.models import Box
from pressroom.pipeline.geometry import PageLayout
from pressroom.pixels import PixelBudget
from pressroom.redact.kept import Kept
from pressroom.redact.plan import PAD_PX
from pressroom.redact.source import RedactionSource, rendering
from pressroom.settings import Limits

BAND = 256  # rows at a time: a whole page of planes would be several bytes a pixel more
INK_SPREAD = 2  # grey levels between lightest and darkest pixel: more is a mark someone may see
# grey pixels in the middle of grey (every neighbour grey too), past this share of the page:
# grey print, a shaded box, a photo — not the grey edge of black print, which bilevel keeps
GREY_AREA_SHARE = 0.0002
NEIGHBOURS = np.ones((3, 3), dtype=np.uint8)


def page_pixels(
    src: RedactionSource, index: int, budget: PixelBudget, dpi: float
) -> tuple[Image.Image, tuple[int, int]]:
    """PDF page ``index`` as displayed, rendered once at ``dpi``: grey (as Pillow makes RGB
    grey) where no pixel shows colour, else RGB; and the size its rendering at the page's
    reading resolution (``src.dpi``) has, which its boxes and words are measured in. Its words
    are not read again: the scan has them. Pass one's grey rendering at ``dpi`` of a page that
    shows no colour is those pixels (``RedactionSource.kept``): taken, not made again."""
    page = src.doc[index]
    try:
        full = pdfium.bitmap_size(page, src.dpi(index) / 72.0)
        budget.take(*pdfium.bitmap_size(page, dpi / 72.0), f"page {index + 1}")
        kept = src.kept.get(rendering(index, dpi / 72.0))
        if kept is not None and not kept[1]:
            return kept[0], full
        with failing_as("a page cannot be rendered"):
            bitmap = page.render(scale=dpi / 72.0)
        try:
            return grey_or_colour(bitmap), full
        finally:
            bitmap.close()
    finally:
        page.close()


def grey_or_colour(bitmap: Any) -> Image.Image:
    """A PDFium bitmap as a grey image where no pixel shows colour (``grey``'s test), else as
    RGB. Read a band of rows at a time from PDFium's own buffer: a grey page is never held in
    colour by Pillow (4 bytes a pixel)."""
    width, height, channels = bitmap.width, bitmap.height, bitmap.n_channels
    if channels == 1:
        luma: Image.Image = bitmap.to_pil().copy()
        return luma
    rows = np.frombuffer(bitmap.buffer, dtype=np.uint8).reshape(height, bitmap.stride)
    if bitmap.rev_byteorder:
        code = cv2.COLOR_RGB2GRAY if channels == 3 else cv2.COLOR_RGBA2GRAY
    else:  # PDFium writes BGR(x)
        code = cv2.COLOR_BGR2GRAY if channels == 3 else cv2.COLOR_BGRA2GRAY
    out = np.empty((height, width), dtype=np.uint8)
    for top in range(0, height, BAND):
        band = rows[top : top + BAND, : width * channels].reshape(-1, width, channels)
        if coloured(band):
            colour: Image.Image = bitmap.to_pil()
            return colour if colour.mode == "RGB" else colour.convert("RGB")
        # OpenCV's weights make exactly Pillow's grey of every pixel this close to grey
        # (all 6,350 such colours checked; they differ by one on some coloured ones)
        out[top : top + BAND] = cv2.cvtColor(band, code)
    return Image.fromarray(out, mode="L")


def scaled(b: Box, k: float) -> tuple[int, int, int, int]:
    """A box in pixels ``k`` times as coarse, every pixel it touches whole."""
    return math.floor(b.x0 * k), math.floor(b.y0 * k), math.ceil(b.x1 * k), math.ceil(b.y1 * k)


def black_and_white(image: Image.Image) -> bool:
    """Whether the page is black print on white: no area of grey (a grey caption, a shaded
    box, a photo) that cutting it at mid-grey would lose, only the grey edges of black ink."""
    if image.mode == "1":
        return True
    if image.mode != "L":
        return False
    greyish = cv2.inRange(np.asarray(image), 16, 240)
    # a grey pixel whose every neighbour is grey too (the page's edge repeated beyond it)
    inner = cv2.countNonZero(cv2.erode(greyish, NEIGHBOURS, borderType=cv2.BORDER_REPLICATE))
    return inner <= GREY_AREA_SHARE * image.width * image.height


def inked(image: Image.Image, box: Box, k: float = 1.0) -> bool:
    """Whether anything shows in ``box`` (its padding aside; in pixels ``1 / k`` times as
    fine as ``image``'s): a blank, flat area or one off the page shows nothing a burn could
    hide."""
    x0, y0 = max(0, round((box.x0 + PAD_PX) * k)), max(0, round((box.y0 + PAD_PX) * k))
    x1 = min(image.width, round((box.x1 - PAD_PX) * k))
    y1 = min(image.height, round((box.y1 - PAD_PX) * k))
    if x1 <= x0 or y1 <= y0:
        return False
    low, high = image.crop((x0, y0, x1, y1)).convert("L").getextrema()
    assert isinstance(low, int | float) and isinstance(high, int | float)  # one band
    return bool(high - low > INK_SPREAD)


def burn(image: Image.Image, boxes: Sequence[Box], k: float = 1.0) -> Image.Image:
    """Boxes burned into the pixels (``boxes`` in pixels ``1 / k`` times as fine as these,
    each burned over every pixel it touches); a page with no colour stays grey (a third of the
    bytes to compress and store). A grey or colour ``image`` is burned in place (no copy of a
    page): callers hand over a raster made for this."""
    if image.mode == "L":
        out = image
    elif grey(image):
        out = image.convert("L")
    else:
        out = image if image.mode == "RGB" else image.convert("RGB")
    draw = ImageDraw.Draw(out)
    for b in boxes:
        draw.rectangle((b.x0, b.y0, b.x1, b.y1) if k == 1.0 else scaled(b, k), fill=0)
    return out


def grey(image: Image.Image) -> bool:
    if image.mode in ("L", "1"):
        return True
    if image.mode != "RGB":
        return False
    for top in range(0, image.height, BAND):
        band = np.asarray(image.crop((0, top, image.width, min(image.height, top + BAND))))
        if coloured(band):
            return False
    return True


def coloured(band: np.ndarray[Any, np.dtype[np.uint8]]) -> bool:
    """Whether any pixel of a band of RGB or BGR(x) pixels shows colour: two of its channels
    more than two levels apart."""
    planes = cv2.split(band)
    return bool(
        cv2.absdiff(planes[0], planes[1]).max() > 2 or cv2.absdiff(planes[1], planes[2]).max() > 2
    )


def unsolid_boxes(
    output: Path,
    burned: list[tuple[int, float, list[Box]]],
    placed: Mapping[int, PageLayout] | None = None,
    budget: PixelBudget | None = None,
    bad_boxes: list[tuple[int, Box]] | None = None,
    kept: Kept | None = None,
) -> int:
    """Render each rebuilt page whole at its own resolution and look inside every burned box;
    ``bad_boxes``: filled with (output page, box in the page's points) of each one not solid;
    ``kept``: given each rendering, by (output page, scale), for the read-back to read again.

    Whole, not each box alone: a region rendered alone is not always the same pixels (a tiling
    pattern, an image scaled up with interpolation: review R5), and one whole rendering costs
    less than a dozen regions of a colour image, which PDFium decodes again for each."""
    bad = 0
    budget = budget or PixelBudget(Limits())
    with pdfium.RecyclingDocument(output) as doc:
        for index, dpi, boxes in burned:
            page = doc[index]
            try:
                budget.take(*pdfium.bitmap_size(page, dpi / 72.0), f"output page {index + 1}")
                image = pdfium.render_luma(page, dpi / 72.0)
            finally:
                page.close()
            if kept is not None:
                kept.put(output_rendering(index, dpi / 72.0), image)
            for b in boxes:
                o = _placed(placed, index, b, dpi / 72.0)
                inside = image.crop(
                    (round(o.x0) + 2, round(o.y0) + 2, round(o.x1) - 2, round(o.y1) - 2)
                )
                if inside.width > 0 and inside.height > 0 and int(np.asarray(inside).max()) > 40:
                    bad += 1
                    if bad_boxes is not None:
                        k = 72.0 / dpi
                        bad_boxes.append((index, Box(b.x0 * k, b.y0 * k, b.x1 * k, b.y1 * k)))
    return bad


def output_rendering(index: int, scale: float) -> tuple[str, int, float]:
    """The key of output page ``index``'s grey rendering at ``scale`` among the kept ones."""
    return ("output", index, round(scale, 9))


def _placed(placed: Mapping[int, PageLayout] | None, index: int, box: Box, unit: float) -> Box:
    """``box`` of the content page at output page ``index`` (``unit`` units a point) where it
    lies on that output page."""
    layout = placed.get(index) if placed is not None else None
    return layout.onto(box, unit) if layout is not None else box
