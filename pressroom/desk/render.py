"""Page pictures for the desk: a source page turned and levelled as the redaction read it (so
the review sheet's boxes lie on it) and a page of the held output, as PNGs of a given width.

Rendered at the target scale directly: a page the desk shows is at most a screen's width, so
no full-resolution raster is made of a PDF page (an image frame is decoded at its own size,
which inspection bounded, and scaled down before it is turned). Every bitmap is counted against
a ``PixelBudget`` first.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any

from PIL import Image

from pressroom.corrections import SheetPage
from pressroom.engines import images, pdfium
from pressroom.engines.straighten import level
from pressroom.errors import BadRequest, Corrupt
from pressroom.models import SourceKind
from pressroom.pipeline.ocr import rotate_cw
from pressroom.pixels import PixelBudget
from pressroom.settings import Limits

MIN_WIDTH, MAX_WIDTH = 16, 4000


def source_page_png(
    path: Path, kind: SourceKind, index: int, page: SheetPage | None, width_px: int
) -> bytes:
    """Page ``index`` (from 0) of the source, upright and levelled as ``page`` says the
    redaction read it, ``width_px`` wide; its height follows the page's upright size in points
    (so a box at x, y pt is at x * width_px / width_pt px). Without a sheet page: as it stands."""
    width = _width(width_px)
    budget = PixelBudget(Limits())
    rotation = page.rotation % 360 if page is not None else 0
    turned = rotation in (90, 270)
    if kind is SourceKind.PDF:
        with pdfium.open_pdf(path) as doc:
            pdf_page = _page(doc, index)
            try:
                shown_w, shown_h = (float(v) for v in pdf_page.get_size())
                upright = _upright(
                    width, page, (shown_h, shown_w) if turned else (shown_w, shown_h)
                )
                before = (upright[1], upright[0]) if turned else upright
                scale = before[0] / shown_w
                budget.take(*pdfium.bitmap_size(pdf_page, scale), f"page {index + 1}")
                image = pdfium.render_colour(pdf_page, scale)
            finally:
                pdf_page.close()
    else:
        frame = _frame(path, index, budget)
        shown = (float(frame.width), float(frame.height))
        upright = _upright(width, page, (shown[1], shown[0]) if turned else shown)
        before = (upright[1], upright[0]) if turned else upright
        image = frame
    if image.size != before:
        budget.take(*before, f"page {index + 1} scaled")
        image = image.resize(before, Image.Resampling.LANCZOS, reducing_gap=3.0)
    image = rotate_cw(image, rotation)
    if page is not None and page.level:
        image = level(image, page.level)
    return _png(image)


def output_page_png(path: Path, index: int, width_px: int, frame: SheetPage | None = None) -> bytes:
    """Page ``index`` (from 0) of a PDF (the held output) as it displays, ``width_px`` wide.
    With ``frame``: only the part where that sheet page was laid (its placement: scale and
    offset on the output page, bands left out), ``width_px`` wide and as high as the sheet
    page is for that width — the same frame as ``source_page_png``'s picture of it."""
    width = _width(width_px)
    budget = PixelBudget(Limits())
    with pdfium.open_pdf(path) as doc:
        pdf_page = _page(doc, index)
        try:
            shown_w, _shown_h = pdf_page.get_size()
            if frame is None:
                scale = width / float(shown_w)
            else:
                factor = frame.placement[0]
                if not (factor > 0 and frame.width_pt > 0 and math.isfinite(factor)):
                    raise Corrupt("the page has no placement")
                scale = width / (factor * frame.width_pt)  # pixels per output point
            budget.take(*pdfium.bitmap_size(pdf_page, scale), f"page {index + 1}")
            image = pdfium.render_colour(pdf_page, scale)
        finally:
            pdf_page.close()
    if frame is not None:
        factor, left, top = frame.placement
        size = _upright(width, frame, (frame.width_pt, frame.height_pt))
        x0, y0 = round(left * scale), round(top * scale)
        # the part of the output page the sheet page covers; past the output's edge is paper
        cut = Image.new("RGB", size, "white")
        cut.paste(image.convert("RGB").crop((x0, y0, x0 + size[0], y0 + size[1])), (0, 0))
        image = cut
    return _png(image)


def _width(width_px: int) -> int:
    if not MIN_WIDTH <= width_px <= MAX_WIDTH:
        raise BadRequest(f"a page picture is {MIN_WIDTH} to {MAX_WIDTH} pixels wide")
    return width_px


def _upright(width: int, page: SheetPage | None, shown: tuple[float, float]) -> tuple[int, int]:
    """The picture's size: ``width`` wide, as high as the upright page is for that width."""
    w_pt, h_pt = (page.width_pt, page.height_pt) if page is not None else shown
    if not (w_pt > 0 and h_pt > 0 and math.isfinite(w_pt / h_pt)):
        raise Corrupt("the page has no size")
    return width, max(1, round(width * h_pt / w_pt))


def _page(doc: Any, index: int) -> Any:
    if not 0 <= index < len(doc):
        raise BadRequest(f"no page {index + 1} in this document")
    return doc[index]


def _frame(path: Path, index: int, budget: PixelBudget) -> Image.Image:
    """Frame ``index`` of an image file, flattened as the redaction flattened it, in a mode
    that scales and saves as PNG."""
    frames = images.iter_frames(path)
    try:
        for i, frame in enumerate(frames):
            if i == index:
                budget.take(*frame.size, f"page {index + 1}")
                flat = images.flatten(frame)
                if flat.mode not in ("L", "RGB"):
                    flat = flat.convert("L" if flat.mode == "1" else "RGB")
                return flat.copy() if flat is frame else flat
    finally:
        frames.close()
    raise BadRequest(f"no page {index + 1} in this image")


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=6)
    return out.getvalue()
