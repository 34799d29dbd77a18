"""Every bitmap Pressroom makes is counted before it is allocated.

One bitmap may not pass ``PRESSROOM_MAX_PIXELS`` (a page render, an upscale to the resolution
floor, a redaction raster, a page re-rendered to check it), and one pass over a document may
not make more than ``PRESSROOM_MAX_DOCUMENT_PIXELS`` in all. Inspection predicts both from the
page sizes and refuses early; the budget is the same rule where the pixels are really made.
Copies at the same size (a page turned, levelled, thresholded) are not counted again: each is
bounded by the bitmap it copies.
"""

from __future__ import annotations

import math

from pressroom.errors import PixelLimit
from pressroom.settings import Limits


def bitmap_pixels(width_pt: float, height_pt: float, dpi: float) -> int:
    """Pixels of a page of this size rendered at ``dpi`` (rounded up, as PDFium sizes it)."""
    k = dpi / 72.0
    return math.ceil(width_pt * k) * math.ceil(height_pt * k)


class PixelBudget:
    """The bitmaps of one pass over one document."""

    def __init__(self, limits: Limits) -> None:
        self.max_pixels = limits.max_pixels
        self.max_document_pixels = limits.max_document_pixels
        self.spent = 0

    def take(self, width: int, height: int, what: str) -> None:
        """Count a ``width`` x ``height`` bitmap about to be made; PixelLimit if it may not."""
        pixels = max(0, int(width)) * max(0, int(height))
        if pixels > self.max_pixels:
            raise PixelLimit(
                f"{what} would make a bitmap of {pixels:,} pixels; the limit is {self.max_pixels:,}"
            )
        if self.spent + pixels > self.max_document_pixels:
            raise PixelLimit(
                f"{what} would take the document past {self.max_document_pixels:,} pixels "
                "of bitmaps"
            )
        self.spent += pixels
