"""Where things land on an output page: PDF matrices (product, quarter turns, levelling), a
source page placed as an XObject, the layout of a source on its output page, how the brand
bands scale with the page, and text cut to fit a width. Used by the output builder
(``pipeline.output``), the carriers (``pipeline.structure``) and the redaction's build."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pikepdf

from pressroom.models import Box
from pressroom.pipeline.helvetica import text_width

Matrix = tuple[float, float, float, float, float, float]
IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


def compose(m1: Matrix, m2: Matrix) -> Matrix:
    """The matrix product ``m1 m2``: the matrix that applies ``m1`` and then ``m2`` (PDF
    row-vector convention)."""
    a1, b1, c1, d1, e1, f1 = m1
    a2, b2, c2, d2, e2, f2 = m2
    return (
        a1 * a2 + b1 * c2,
        a1 * b2 + b1 * d2,
        c1 * a2 + d1 * c2,
        c1 * b2 + d1 * d2,
        e1 * a2 + f1 * c2 + e2,
        e1 * b2 + f1 * d2 + f2,
    )


def turn_cw(degrees: int, w: float, h: float) -> tuple[Matrix, tuple[float, float]]:
    """Turn the frame [0,w]x[0,h] clockwise on screen; returns the matrix and the new size."""
    degrees %= 360
    if degrees == 90:
        return (0.0, -1.0, 1.0, 0.0, 0.0, w), (h, w)
    if degrees == 180:
        return (-1.0, 0.0, 0.0, -1.0, w, h), (w, h)
    if degrees == 270:
        return (0.0, 1.0, -1.0, 0.0, h, 0.0), (h, w)
    return IDENTITY, (w, h)


def levelling(degrees: float, w: float, h: float) -> Matrix:
    """Turn the frame [0,w]x[0,h] clockwise on screen by ``degrees`` about its centre."""
    th = math.radians(degrees)
    c, s = math.cos(th), math.sin(th)
    cx, cy = w / 2.0, h / 2.0
    # clockwise on screen is a negative angle in PDF's y-up space
    turn: Matrix = (c, -s, s, c, 0.0, 0.0)
    return compose(compose((1.0, 0.0, 0.0, 1.0, -cx, -cy), turn), (1.0, 0.0, 0.0, 1.0, cx, cy))


@dataclass(frozen=True, slots=True)
class PlacedSource:
    """A source page as an XObject of the output, with the matrix onto its displayed frame."""

    xobject: pikepdf.Object
    to_frame: Matrix  # XObject space → displayed frame [0,w]x[0,h], y up
    width: float  # displayed frame, points
    height: float


@dataclass(frozen=True, slots=True)
class PageLayout:
    """Where a source page lands on its output page. The output page is the source's own size
    (after turning upright); brand bands that do not fit over a blank margin make the source
    ``scale`` times smaller, placed at ``content``."""

    width: float
    height: float
    content: tuple[float, float, float, float]  # l, b, r, t of the source content, points
    scale: float = 1.0  # output points per source point
    bands: tuple[float, float] = (0.0, 0.0)  # the footer's and header's heights, points

    @property
    def text_box(self) -> tuple[float, float, float, float]:
        """The content that no band covers (l, b, r, t): where the page's own text is read
        back (bands over blank margins overlap the content's edges)."""
        left, bottom, right, top = self.content
        return (left, max(bottom, self.bands[0]), right, min(top, self.height - self.bands[1]))

    def onto(self, box: Box, unit: float = 1.0) -> Box:
        """``box`` in the source's upright frame (y down, ``unit`` units a point: pixels at
        some resolution, or 1 for points) in the same units on the output page (y down)."""
        left, _bottom, _right, top = self.content
        dx, dy = left * unit, (self.height - top) * unit
        k = self.scale
        return Box(dx + box.x0 * k, dy + box.y0 * k, dx + box.x1 * k, dy + box.y1 * k)


# Band heights and font sizes are meant for Letter and A4; pages whose shorter side is
# outside these are given bands scaled to them.
LETTER_A4 = (595.0, 612.0)


def band_scale(width: float, height: float) -> float:
    """How much a template's bands grow or shrink on a page of this size."""
    short = min(width, height)
    low, high = LETTER_A4
    if short < low:
        return short / low
    if short > high:
        return short / high
    return 1.0


def fit(text: str, size: float, room: float) -> str:
    """``text`` at ``size`` points in the band font, cut short with an ellipsis to fit ``room``
    points."""
    if text_width(text, size) <= room:
        return text
    while text and text_width(text + "…", size) > room:
        text = text[:-1]
    return text + "…" if text else ""
