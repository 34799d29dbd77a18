"""The resolution a page too large for the pixel limit is read at: the highest within it, never
under the floor (issue 43, item 6: an A0 page was refused PIXEL_LIMIT under redaction)."""

from __future__ import annotations

import pytest

from pressroom.pipeline.resolution import MIN_FIT_DPI, fitting_dpi
from pressroom.pixels import bitmap_pixels

LIMIT = 100_000_000  # PRESSROOM_MAX_PIXELS' default


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ((595.0, 842.0), 300.0),  # A4 fits at 300 dpi: unchanged
        ((2384.0, 3370.0), 254.0),  # A0: 139 Mpx at 300 dpi
        ((4768.0, 6740.0), 127.0),  # 4A0
    ],
)
def test_a_page_is_read_at_the_highest_resolution_within_the_limit(
    size: tuple[float, float], expected: float
) -> None:
    dpi = fitting_dpi(*size, 300.0, LIMIT)
    assert dpi == expected
    assert bitmap_pixels(*size, dpi) <= LIMIT
    if dpi < 300.0:  # and no higher one would do
        assert bitmap_pixels(*size, dpi + 0.1) > LIMIT


def test_a_page_over_the_limit_even_at_the_floor_keeps_the_wanted_resolution() -> None:
    # 200 x 200 inches: over 100 Mpx even at 100 dpi; its check at 300 dpi refuses it
    side = 200 * 72.0
    assert bitmap_pixels(side, side, MIN_FIT_DPI) > LIMIT
    assert fitting_dpi(side, side, 300.0, LIMIT) == 300.0
