"""How wide band and cover text is: Helvetica's advance widths, which the band font (Pressroom
Sans, ``engines.fonts.BAND_FONT``) shares, for the WinAnsi bytes that font shows."""

from __future__ import annotations

# Helvetica's advance widths (AFM, 1/1000 em) for printable ASCII, codes 32 (space) to 126 (~),
# sixteen a row; every other code takes DEFAULT.
_ROWS = """
278 278 355 556 556 889 667 191 333 333 389 584 278 333 278 278
556 556 556 556 556 556 556 556 556 556 278 278 584 584 584 556
1015 667 667 722 722 667 611 778 722 278 500 667 556 833 722 778
667 778 722 667 611 722 667 944 667 667 611 278 278 278 469 556
333 556 556 500 556 556 278 556 556 222 222 500 222 833 556 556
556 556 333 500 278 556 500 722 500 500 500 334 260 334 584
"""
WIDTHS: dict[int, int] = dict(zip(range(32, 127), map(int, _ROWS.split()), strict=True))
DEFAULT = 556


def winansi(text: str) -> bytes:
    """``text`` in the band font's WinAnsi encoding (what it cannot show becomes ``?``)."""
    return text.encode("cp1252", errors="replace")


def text_width(text: str, size: float) -> float:
    """How wide ``text`` is at ``size`` points, in points."""
    return sum(WIDTHS.get(b, DEFAULT) for b in winansi(text)) * size / 1000.0
