"""Words with boxes from a PDF page's own text (PDFium), in the pixel frame of its rendering."""

from __future__ import annotations

import ctypes
from typing import Any

import pypdfium2.raw as pdfium_c

from pressroom.engines.pdfium import failing_as
from pressroom.models import Box, Word
from pressroom.pipeline.geometry import Matrix, compose, turn_cw
from pressroom.redact.detect import joined_utf16

_BREAKS = {0x0D, 0x0A, 0x02}


def page_to_pixels(page: Any, scale: float) -> tuple[Matrix, tuple[float, float]]:
    """Matrix from PDF page space to the page's rendering (displayed, y down), and its size."""
    # get_bbox, not get_cropbox: boxes inherited from the page tree count (fpdf2 writes them
    # there), and get_cropbox falls back to US Letter when the page itself has none
    left, bottom, right, top = page.get_bbox()
    rotate = int(page.get_rotation()) % 360
    turn, (w, h) = turn_cw(rotate, right - left, top - bottom)
    frame = compose((1.0, 0.0, 0.0, 1.0, -left, -bottom), turn)
    # y up in points → y down in pixels
    return compose(frame, (scale, 0.0, 0.0, -scale, 0.0, h * scale)), (w * scale, h * scale)


def _apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


def extracted_words(page: Any, scale: float, fonts: list[int] | None = None) -> list[Word]:
    """The page's extractable words, boxes in rendering pixels; lines follow PDFium's breaks.
    ``fonts``: filled with each word's font (of its first character) as PDFium holds it: the
    same number for every word of one font resource of the page, another for another."""
    matrix, _size = page_to_pixels(page, scale)
    with failing_as("a page's text cannot be read"):
        textpage = page.get_textpage()
    try:
        words: list[Word] = []
        chars: list[str] = []
        boxes: list[tuple[float, float, float, float]] = []
        font = 0  # of the word's first character
        line = 0

        def flush() -> None:
            if chars:
                xs0, ys0, xs1, ys1 = zip(*boxes, strict=True)
                box = Box(min(xs0), min(ys0), max(xs1), max(ys1))
                height = max(box.height, 1.0)
                words.append(
                    Word(
                        # one code unit at a time: a pair joined, a lone surrogate replaced
                        joined_utf16("".join(chars)),
                        100.0,
                        box,
                        (box.x0, box.y1 - 0.2 * height),
                        max(box.width, 1.0),
                        height,
                        0.0,
                        line,
                    )
                )
                if fonts is not None:
                    fonts.append(font)
                chars.clear()
                boxes.clear()

        for i in range(textpage.count_chars()):
            code = pdfium_c.FPDFText_GetUnicode(textpage.raw, i)
            char = chr(code) if code else ""
            if code in _BREAKS:
                flush()
                if code == 0x0A or code == 0x02:
                    line += 1
                continue
            if not char or char.isspace():
                flush()
                continue
            left, bottom, right, top = textpage.get_charbox(i)
            corners = [_apply(matrix, x, y) for x, y in ((left, bottom), (right, top))]
            (x0, y0), (x1, y1) = corners
            boxes.append((min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)))
            if fonts is not None and not chars:
                font = _font_of(textpage, i)
            chars.append(char)
        flush()
        return words
    finally:
        textpage.close()


def _font_of(textpage: Any, index: int) -> int:
    """The font of character ``index`` as PDFium holds it (0 where it says none)."""
    obj = pdfium_c.FPDFText_GetTextObject(textpage.raw, index)
    if not obj:
        return 0
    font = pdfium_c.FPDFTextObj_GetFont(obj)
    return ctypes.cast(font, ctypes.c_void_p).value or 0
