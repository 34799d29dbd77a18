"""Compose output pages: the untouched source, its invisible text, and brand bands around it."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pikepdf
from pikepdf import Array, Dictionary, Name

from pressroom.engines.fonts import BAND_FONT, fill_simple_truetype
from pressroom.engines.images import logo_xobject
from pressroom.engines.prune import FontLeft, fill_left
from pressroom.models import Box, PageText
from pressroom.pipeline.archive import make_pdfa, pdfa_metadata
from pressroom.pipeline.optimize import best_flate, predict_images, recompress
from pressroom.pipeline.textlayer import glyphless_font, text_layer_ops, to_unicode
from pressroom.templates import Band, Template

if TYPE_CHECKING:
    from pressroom.pipeline.structure import Carriers, Placed

Matrix = tuple[float, float, float, float, float, float]
IDENTITY: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
MARGIN = 18.0

# Helvetica advance widths (AFM, 1/1000 em) for printable ASCII; the rest take 556.
_HELV = dict(
    zip(
        range(32, 127),
        [
            278,
            278,
            355,
            556,
            556,
            889,
            667,
            191,
            333,
            333,
            389,
            584,
            278,
            333,
            278,
            278,
            556,
            556,
            556,
            556,
            556,
            556,
            556,
            556,
            556,
            556,
            278,
            278,
            584,
            584,
            584,
            556,
            1015,
            667,
            667,
            722,
            722,
            667,
            611,
            778,
            722,
            278,
            500,
            667,
            556,
            833,
            722,
            778,
            667,
            778,
            722,
            667,
            611,
            722,
            667,
            944,
            667,
            667,
            611,
            278,
            278,
            278,
            469,
            556,
            333,
            556,
            556,
            500,
            556,
            556,
            278,
            556,
            556,
            222,
            222,
            500,
            222,
            833,
            556,
            556,
            556,
            556,
            333,
            500,
            278,
            556,
            500,
            722,
            500,
            500,
            500,
            334,
            260,
            334,
            584,
        ],
        strict=True,
    )
)


def _copy_in(into: pikepdf.Pdf, obj: Any) -> Any:
    """``obj`` of another document copied into ``into`` as it is there: an
    indirect object by ``copy_foreign``, a direct array or dictionary (a catalog's
    /OutputIntents array often is one) made again of its copied items, since qpdf copies
    only indirect objects across documents."""
    if isinstance(obj, pikepdf.Object) and obj.is_indirect:
        return into.copy_foreign(obj)
    if isinstance(obj, pikepdf.Array):
        return pikepdf.Array([_copy_in(into, v) for v in obj])
    if isinstance(obj, pikepdf.Dictionary):
        return pikepdf.Dictionary({k: _copy_in(into, v) for k, v in obj.items()})
    return obj


def then(m1: Matrix, m2: Matrix) -> Matrix:
    """The matrix that applies ``m1`` and then ``m2`` (PDF row-vector convention)."""
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
    return then(then((1.0, 0.0, 0.0, 1.0, -cx, -cy), turn), (1.0, 0.0, 0.0, 1.0, cx, cy))


def _fmt(m: tuple[float, ...]) -> str:
    return " ".join(f"{v:.4f}".rstrip("0").rstrip(".") or "0" for v in m)


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


# where a page range's part keeps the source's structure tree for the assembly of the whole
TREE_KEY = "/PressroomStructTree"
# a part's replaced standard fonts, each with its source font's number and the codes it showed
FONTS_KEY = "/PressroomFontsLeft"

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


def pdf_date(when: datetime) -> str:
    return when.astimezone(UTC).strftime("D:%Y%m%d%H%M%SZ")


def _winansi(text: str) -> bytes:
    return text.encode("cp1252", errors="replace")


def text_width(text: str, size: float) -> float:
    return sum(_HELV.get(b, 556) for b in _winansi(text)) * size / 1000.0


def fit(text: str, size: float, room: float) -> str:
    if text_width(text, size) <= room:
        return text
    while text and text_width(text + "…", size) > room:
        text = text[:-1]
    return text + "…" if text else ""


class OutputBuilder:
    """Builds one output document page by page; the source pages are referenced, not copied."""

    def __init__(
        self,
        template: Template,
        values: dict[str, str],
        *,
        producer: str,
        base: pikepdf.Pdf | None = None,
        pdfa: bool = False,
        optimize: int = 0,
    ) -> None:
        # With ``base`` (the source PDF itself) new pages are built inside it and the source's
        # own pages, catalog and metadata are dropped before writing: qpdf then streams the
        # untouched page content straight from the source file instead of holding a copy of
        # every page in memory (copy_foreign does: ~0.85 MB a scanned page, measured).
        self.pdf = base if base is not None else pikepdf.Pdf.new()
        self._source_pages = len(base.pages) if base is not None else 0
        self._first_new = self._source_pages
        self.template = template
        self.values = dict(values)
        self.producer = producer
        self.pdfa = pdfa  # written as PDF/A-2b (pipeline.archive)
        self.optimize = optimize  # pipeline.optimize's level
        self._glyphless: pikepdf.Object | None = None
        self._codes: set[int] = set()  # code points the text layer uses beyond U+00FF
        self._band_font: Dictionary | None = None
        self._band_codes: set[int] = set()  # WinAnsi codes the band font shows
        self._logo: tuple[pikepdf.Stream, float] | None = None
        self.parts: list[Path] = []
        # what the source carries besides its pages (pipeline.structure), written with the
        # output's own catalog; None: nothing of the source's (a redaction's fresh document)
        self.carriers: Carriers | None = None
        # the source's output intents (its calibration: a CMYK press profile, say), kept in a
        # plain output and offered to PDF/A (pipeline.archive picks from them)
        self.intents: pikepdf.Object | None = None
        if base is not None:
            from pressroom.pipeline.structure import output_intents  # (it builds on this)

            self.intents = output_intents(base)
        # a tagged source's structure tree, its pages and links named by number until the
        # output's pages are placed in it (pipeline.structure.keep_tree)
        self._tree: Dictionary | None = None
        # called once before the output is written (fonts filled with what their text shows)
        self.before_save: list[Callable[[], None]] = []
        # a page range's replaced standard fonts, left unfilled for the assembly of the whole
        # (engines.prune.PageCleaner.finish_fonts): written into the part under FONTS_KEY
        self.fonts_left: list[FontLeft] = []

    @property
    def tagged(self) -> bool:
        """Whether the output keeps a structure tree: what Pressroom adds to its pages is
        then marked as an artifact (no part of the document's own content)."""
        return self.carriers is not None and self.carriers.tagged

    def _artifact(self, ops: bytes) -> bytes:
        return b"/Artifact BMC\n" + ops + b"EMC\n" if self.tagged and ops else ops

    def _take_tree(self) -> None:
        """A tagged source's tree, made ready to go onto the new pages, before its own pages
        and catalog are dropped."""
        if self.tagged and self._source_pages and self._tree is None:
            from pressroom.pipeline.structure import keep_tree  # (it builds on this module)

            self._tree = keep_tree(self.pdf)

    @property
    def glyphless(self) -> pikepdf.Object:
        if self._glyphless is None:
            self._glyphless = glyphless_font(self.pdf)
        return self._glyphless

    @property
    def band_font(self) -> Dictionary:
        """The band and cover font: Pressroom Sans (Helvetica's metrics), WinAnsi-encoded,
        embedded at the end with the glyphs the text uses (``_finish_font``)."""
        if self._band_font is None:
            self._band_font = self.pdf.make_indirect(
                Dictionary(Type=Name.Font, Subtype=Name.TrueType, Encoding=Name.WinAnsiEncoding)
            )
        return self._band_font

    def _shown(self, text: str) -> str:
        """Hex of ``text`` in the band font, its codes noted for the subset."""
        data = _winansi(text)
        self._band_codes.update(data)
        return data.hex()

    def logo(self) -> tuple[pikepdf.Stream, float] | None:
        if self._logo is None and self.template.logo is not None:
            self._logo = logo_xobject(self.pdf, self.template.logo)
        return self._logo

    def _text(self, key: str, page: int | None = None) -> str:
        values = dict(self.values)
        if page is not None:
            values["page"] = str(page)
        return key.format_map(values)

    def add_page(
        self,
        source: PlacedSource,
        text: PageText | None,
        rotation: int,
        page_number: int,
        *,
        level: float = 0.0,
        margins_blank: Callable[[float, float], bool] | None = None,
    ) -> PageLayout:
        """One output page the size of the source turned upright by ``rotation`` (cw), the
        brand bands at its top and bottom.

        The bands go over the page's own margins when the template says so (``fit =
        "margin"``) and ``margins_blank(top, bottom)`` says the source shows nothing in its top
        ``top`` and bottom ``bottom`` points; otherwise the source is scaled into the area
        between them, centred. The page is never enlarged.

        ``level``: degrees by which the upright source is turned clockwise about its centre to
        level its lines (a page drawn from vectors; scans are levelled in their pixels).
        """
        header, footer = self.template.header, self.template.footer
        turn, (w, h) = turn_cw(rotation, source.width, source.height)
        k = band_scale(w, h)
        top, bottom = header.height * k, footer.height * k
        scale, dx, dy = 1.0, 0.0, 0.0
        if top or bottom:
            over = self.template.fit == "margin" and (
                margins_blank is not None and margins_blank(top, bottom)
            )
            if not over:
                scale = max(h - top - bottom, 1.0) / h
                dx, dy = w * (1.0 - scale) / 2.0, bottom
        upright = then(source.to_frame, turn)
        clip = ""
        content = (dx, dy, dx + w * scale, dy + h * scale)
        if level:
            upright = then(upright, levelling(level, w, h))
            # the turned corners must not reach past the source's own frame (into the bands)
            x0, y0, x1, y1 = content
            clip = f"{x0:.4f} {y0:.4f} {x1 - x0:.4f} {y1 - y0:.4f} re W n "
        placement = then(upright, (scale, 0.0, 0.0, scale, dx, dy))
        page_w, page_h = w, h
        ops = [f"q {clip}{_fmt(placement)} cm /Src Do Q\n".encode()]
        fonts = Dictionary()
        xobjects = Dictionary(Src=source.xobject)
        if text is not None and text.words:
            fonts.Gly = self.glyphless
            self._codes.update(ord(c) for w in text.words for c in w.text if ord(c) > 0xFF)
            ops.append(
                self._artifact(
                    text_layer_ops(
                        text.words,
                        font="/Gly",
                        origin=(dx, dy),
                        frame_height_px=text.height_px,
                        scale=(w * scale / text.width_px, h * scale / text.height_px),
                    )
                )
            )
        band_ops = self._bands(page_w, page_h, page_number, xobjects, fonts, k)
        ops.append(self._artifact(band_ops))
        page = pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, page_w, page_h]),
                # Set, not inherited: a source's page tree may carry /Rotate or /CropBox.
                CropBox=Array([0, 0, page_w, page_h]),
                Rotate=0,
                Resources=Dictionary(XObject=xobjects, Font=fonts),
                Contents=self.pdf.make_stream(b"".join(ops)),
            )
        )
        self.pdf.pages.append(page)
        return PageLayout(page_w, page_h, content, scale, (bottom, top))

    def _bands(
        self,
        page_w: float,
        page_h: float,
        page_number: int,
        xobjects: Dictionary,
        fonts: Dictionary,
        k: float = 1.0,
    ) -> bytes:
        """The header and footer bands, ``k`` times the template's sizes (see band_scale)."""
        out: list[str] = []
        t = self.template
        margin = MARGIN * k
        for band in (t.footer, t.header):
            height = band.height * k
            if height <= 0:
                continue
            y = 0.0 if band is t.footer else page_h - height
            if t.band_colour is not None:
                r, g, b = t.band_colour
                rect = f"0 {y:.2f} {page_w:.2f} {height:.2f}"
                out.append(f"q {r:.3f} {g:.3f} {b:.3f} rg {rect} re f Q\n")
            left = margin
            logo = self.logo() if band.logo else None
            if logo is not None:
                xobjects.Logo = logo[0]
                lh = height - 8 * k
                lw = lh * logo[1]
                out.append(f"q {lw:.2f} 0 0 {lh:.2f} {margin:.2f} {y + 4 * k:.2f} cm /Logo Do Q\n")
                left = margin + lw + 8 * k
            out.append(self._band_text(band, y, left, page_w, page_number, fonts, k))
        return "".join(out).encode("latin-1")

    def _band_text(
        self,
        band: Band,
        y: float,
        left: float,
        page_w: float,
        page_number: int,
        fonts: Dictionary,
        k: float = 1.0,
    ) -> str:
        t = self.template
        height = band.height * k
        size = min(band.font_size * k, height * 0.6)
        baseline = y + (height - size * 0.72) / 2
        colour = t.band_text_colour if t.band_colour is not None else (0.25, 0.25, 0.25)
        items = []
        margin = MARGIN * k
        room = page_w - left - margin
        right = fit(self._text(band.right, page_number), size, room * 0.5) if band.right else ""
        right_w = text_width(right, size)
        if band.left:
            items.append(
                (left, fit(self._text(band.left, page_number), size, room - right_w - 12 * k))
            )
        if right:
            items.append((page_w - margin - right_w, right))
        if band.centre:
            centre = fit(self._text(band.centre, page_number), size, room / 3)
            items.append(((page_w - text_width(centre, size)) / 2, centre))
        if not items:
            return ""
        fonts.Hv = self.band_font
        r, g, b = colour
        parts = [f"q {r:.3f} {g:.3f} {b:.3f} rg BT /Hv {size:.2f} Tf\n"]
        for x, s in items:
            parts.append(f"1 0 0 1 {x:.2f} {baseline:.2f} Tm <{self._shown(s)}> Tj\n")
        parts.append("ET Q\n")
        return "".join(parts)

    def add_cover(self, width: float, height: float) -> None:
        """The template's cover: heading on a colour block, logo, then the cover lines."""
        cover = self.template.cover
        if cover is None:
            return
        t = self.template
        fonts = Dictionary(Hv=self.band_font)
        xobjects = Dictionary()
        ops: list[str] = []
        block = height * 0.3
        colour = t.band_colour or (0.9, 0.9, 0.9)
        ops.append(
            f"q {colour[0]:.3f} {colour[1]:.3f} {colour[2]:.3f} rg "
            f"0 {height - block:.2f} {width:.2f} {block:.2f} re f Q\n"
        )
        logo = self.logo()
        x = 2 * MARGIN
        if logo is not None:
            xobjects.Logo = logo[0]
            lh = min(block * 0.5, 96.0)
            ly = height - block / 2 - lh / 2
            ops.append(f"q {lh * logo[1]:.2f} 0 0 {lh:.2f} {x:.2f} {ly:.2f} cm /Logo Do Q\n")
            x += lh * logo[1] + 16
        heading = fit(self._text(cover.heading), 24, width - x - 2 * MARGIN)
        text_colour = t.band_text_colour if t.band_colour is not None else (0, 0, 0)
        ops.append(
            f"q {text_colour[0]:.3f} {text_colour[1]:.3f} {text_colour[2]:.3f} rg BT /Hv 24 Tf "
            f"1 0 0 1 {x:.2f} {height - block / 2 - 8:.2f} Tm <{self._shown(heading)}> Tj ET Q\n"
        )
        y = height - block - 60
        for i, line in enumerate(cover.lines):
            size = 20.0 if i == 0 else 12.0
            s = fit(self._text(line), size, width - 4 * MARGIN)
            ops.append(
                f"q 0.1 0.1 0.1 rg BT /Hv {size:.1f} Tf 1 0 0 1 {2 * MARGIN:.2f} {y:.2f} Tm "
                f"<{self._shown(s)}> Tj ET Q\n"
            )
            y -= size * 1.8
        page = pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, width, height]),
                CropBox=Array([0, 0, width, height]),
                Rotate=0,
                Resources=Dictionary(XObject=xobjects, Font=fonts),
                Contents=self.pdf.make_stream(self._artifact("".join(ops).encode("latin-1"))),
            )
        )
        self.pdf.pages.insert(self._first_new, page)

    def _finish_font(self) -> None:
        """The glyphless font's ToUnicode map and the band font's glyphs, now that every code
        they show is known."""
        if self._glyphless is not None:
            self._glyphless.ToUnicode.write(to_unicode(self._codes))
        if self._band_font is not None:
            fill_simple_truetype(
                self.pdf,
                self._band_font,
                BAND_FONT,
                Name.WinAnsiEncoding,
                self._band_codes | {32},
            )

    def flush_part(self, path: Path) -> None:
        """Write the pages so far to ``path`` and go on in a new, empty document."""
        self._finish_font()
        self.pdf.save(
            path, compress_streams=True, stream_decode_level=pikepdf.StreamDecodeLevel.none
        )
        self.pdf.close()
        self.parts.append(path)
        self.pdf = pikepdf.Pdf.new()
        self._glyphless = self._band_font = self._logo = None
        self._codes = set()
        self._band_codes = set()

    def _before_save(self) -> None:
        for call in self.before_save:
            call()
        self.before_save.clear()

    def save(
        self, path: Path, *, title: str, created: datetime, placed: Sequence[Placed] = ()
    ) -> None:
        """Write the whole output to ``path``: the parts written so far, then the rest.
        ``placed``: the content pages, for the carriers' targets and links."""
        self._before_save()
        with ExitStack() as stack:
            stack.callback(self.discard_parts)
            if self.parts:
                self.flush_part(path.with_name(f"{path.name}.part{len(self.parts)}"))
                merged = self.pdf
                left: list[FontLeft] = []
                for part in self.parts:
                    opened = stack.enter_context(pikepdf.open(part))
                    merged.pages.extend(opened.pages)
                    intents = opened.Root.get("/OutputIntents")
                    if self.intents is None and isinstance(intents, Array):
                        # a range's part keeps the source's (save_part)
                        self.intents = _copy_in(merged, intents)
                    tree = opened.Root.get(TREE_KEY)
                    if self._tree is None and isinstance(tree, Dictionary):
                        self._tree = cast(Dictionary, _copy_in(merged, tree))
                    left += _fonts_left(merged, opened.Root.get(FONTS_KEY))
                if left:
                    _point_at(merged, fill_left(merged, left))
                share_resources(merged)
            self._write(path, title=title, created=created, placed=placed)

    def save_part(self, path: Path) -> None:
        """Write the pages built so far to ``path`` as a part of a larger output (a page
        range): no metadata, none of the source's own pages or catalog, only what the
        assembly of the whole writes from it: its output intents, and its carriers and
        structure tree made ready (``pipeline.structure``) under keys of their own."""
        self._before_save()
        with ExitStack() as stack:
            stack.callback(self.discard_parts)
            if self.parts:
                self.flush_part(path.with_name(f"{path.name}.part{len(self.parts)}"))
                for part in self.parts:
                    self.pdf.pages.extend(stack.enter_context(pikepdf.open(part)).pages)
            self._finish_font()
            self._take_tree()
            self._drop_source()
            if self._tree is not None:  # for the assembly of the whole, as the carriers
                self.pdf.Root[TREE_KEY] = self._tree
            if self.intents is not None:  # for the assembly of the whole, as the carriers
                self.pdf.Root.OutputIntents = self.intents
            if self.fonts_left:  # filled by the assembly of the whole, with every range's codes
                self.pdf.Root[FONTS_KEY] = Array(
                    [
                        Dictionary(
                            Font=f.font,
                            Stem=pikepdf.String(f.stem),
                            Source=Array(list(f.source)),
                            Codes=Array(sorted(f.codes)),
                        )
                        for f in self.fonts_left
                    ]
                )
            if self.carriers is not None:  # for the assembly of the whole
                from pressroom.pipeline.structure import embed  # (it builds on this module)

                embed(self.pdf, self.carriers)
            self.pdf.save(
                path, compress_streams=True, stream_decode_level=pikepdf.StreamDecodeLevel.none
            )

    def discard_parts(self) -> None:
        for part in self.parts:
            part.unlink(missing_ok=True)

    def _drop_source(self) -> None:
        """Leave only what Pressroom built: the source's pages, catalog entries and metadata
        become unreachable, and qpdf writes only what is reachable."""
        if self._source_pages:
            del self.pdf.pages[: self._source_pages]
            self._source_pages = 0
        root = self.pdf.Root
        for key in list(root.keys()):
            if key not in ("/Type", "/Pages"):
                del root[key]
        pages = root.Pages
        for key in list(pages.keys()):
            if key not in ("/Type", "/Kids", "/Count"):
                del pages[key]
        for key in list(self.pdf.trailer.keys()):
            if key not in ("/Root", "/Size", "/ID"):
                del self.pdf.trailer[key]

    def _write(
        self, path: Path, *, title: str, created: datetime, placed: Sequence[Placed] = ()
    ) -> None:
        self._finish_font()
        self._take_tree()
        self._drop_source()
        from pressroom.pipeline.structure import Carriers, write_carriers  # (builds on this)

        carriers = self.carriers or Carriers()
        # the source's outlines, destinations, links, language and page labels, onto the new
        # pages; the cover is labelled "Cover", the content pages as the source numbered them
        # (from 1 where it did not)
        cover = 0 if self.template.cover is not None else None
        write_carriers(self.pdf, carriers, placed, cover=cover, tree=self._tree)
        with self.pdf.open_metadata(set_pikepdf_as_editor=False) as meta:
            meta["dc:title"] = title
            if carriers.author:
                meta["dc:creator"] = [carriers.author]
            if carriers.subject:
                meta["dc:description"] = carriers.subject
            if carriers.keywords:
                meta["pdf:Keywords"] = carriers.keywords
            meta["pdf:Producer"] = self.producer
            meta["xmp:CreatorTool"] = "Pressroom"
            # the job's acceptance time, as in the info dictionary: a retry writes the same bytes
            stamp = created.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            meta["xmp:CreateDate"] = stamp
            meta["xmp:ModifyDate"] = stamp
            meta["xmp:MetadataDate"] = stamp
            if self.pdfa:
                pdfa_metadata(meta)
        if self.pdfa:
            make_pdfa(self.pdf, source_intents=self.intents)
        elif self.intents is not None:
            self.pdf.Root.OutputIntents = self.intents
        info = self.pdf.docinfo
        info.Title = title
        if carriers.author:
            info.Author = carriers.author
        if carriers.subject:
            info.Subject = carriers.subject
        if carriers.keywords:
            info.Keywords = carriers.keywords
        info.Producer = self.producer
        info.Creator = "Pressroom"
        info.CreationDate = pdf_date(created)
        info.ModDate = pdf_date(created)
        if self.optimize >= 2:
            predict_images(self.pdf)
        # written once as it is, then again from that copy: the second write numbers (and
        # groups in object streams) the objects in the order they are reached from the
        # catalog, not the order they were made in, so one document is the same bytes whether
        # it was built whole, from the source's own file, or put together from page ranges
        raw = path.with_name(f"{path.name}.raw")
        try:
            self.pdf.save(
                raw,
                compress_streams=True,
                stream_decode_level=pikepdf.StreamDecodeLevel.none,
                object_stream_mode=pikepdf.ObjectStreamMode.disable,
            )
            with pikepdf.open(raw) as written, best_flate(self.optimize):
                if "/ID" in written.trailer:  # both of its halves made from the content
                    del written.trailer["/ID"]
                if self.optimize:
                    # every Flate stream again at the best level, where that is smaller
                    recompress(written)
                written.save(
                    path,
                    compress_streams=True,
                    stream_decode_level=pikepdf.StreamDecodeLevel.none,
                    object_stream_mode=pikepdf.ObjectStreamMode.generate,
                    deterministic_id=True,
                )
        finally:
            raw.unlink(missing_ok=True)


# a ToUnicode map's single-code entries (``<code> <unicode>``); a range has three values
_MAPPED = re.compile(rb"^<([0-9A-Fa-f]+)> <[0-9A-Fa-f]+>$", re.MULTILINE)


def _mapped_codes(font: object) -> set[int]:
    if not isinstance(font, Dictionary) or not isinstance(font.get("/ToUnicode"), pikepdf.Stream):
        return set()
    return {int(code, 16) for code in _MAPPED.findall(font.ToUnicode.read_bytes())}


def _fonts_left(merged: pikepdf.Pdf, records: object) -> list[FontLeft]:
    """A part's record of the fonts its range left unfilled, as objects of ``merged`` (the
    part's pages copied in already: each font is the copy its pages use)."""
    out: list[FontLeft] = []
    for record in records if isinstance(records, Array) else []:
        if not isinstance(record, Dictionary) or not isinstance(record.get("/Font"), Dictionary):
            continue
        source = [int(v) for v in record.get("/Source", Array())]
        font = cast(Dictionary, merged.copy_foreign(record.Font))
        codes = frozenset(int(c) for c in record.get("/Codes", Array()))
        out.append(FontLeft(font, str(record.get("/Stem", "")), (source[0], source[1]), codes))
    return out


def _point_at(pdf: pikepdf.Pdf, again: dict[tuple[int, int], Dictionary]) -> None:
    """Every use of a font in ``again`` (a copy of one source font from another range) made
    a use of the one it maps to: the fonts of the pages' forms, at any depth."""
    if not again:
        return
    for obj in pdf.objects:
        if not isinstance(obj, Dictionary | pikepdf.Stream):
            continue
        resources = obj.get("/Resources")
        fonts = resources.get("/Font") if isinstance(resources, Dictionary) else None
        if not isinstance(fonts, Dictionary):
            continue
        for name in list(fonts.keys()):
            used = fonts.get(name)
            if isinstance(used, Dictionary) and used.is_indirect and used.objgen in again:
                fonts[name] = again[used.objgen]


def share_resources(pdf: pikepdf.Pdf) -> None:
    """Pages put together from parts (a long image source written out in pieces, a split
    document's ranges) each bring their part's text-layer font, band font and logo: made
    one of each again, as one builder makes them for a whole document, so the output is the
    same bytes however it was cut (and each font or logo is stored once). Only what the
    builder puts on its own pages is touched (``/Gly``, ``/Hv``, ``/Logo``); a source's
    resources live inside ``/Src``."""
    fonts: list[Dictionary] = []
    xobjects: list[Dictionary] = []
    for page in pdf.pages:
        resources = page.obj.get("/Resources")
        if not isinstance(resources, Dictionary):
            continue
        font, xobject = resources.get("/Font"), resources.get("/XObject")
        if isinstance(font, Dictionary):
            fonts.append(font)
        if isinstance(xobject, Dictionary):
            xobjects.append(xobject)
    glyphless = [f.Gly for f in fonts if "/Gly" in f]
    if len({g.objgen for g in glyphless}) > 1:
        shared = glyphless_font(pdf)
        codes = set().union(*(_mapped_codes(g) for g in glyphless))
        shared.ToUnicode.write(to_unicode(c for c in codes if c > 0xFF))
        for f in fonts:
            if "/Gly" in f:
                f.Gly = shared
    band = [f.Hv for f in fonts if "/Hv" in f]
    if len({b.objgen for b in band}) > 1:
        font = pdf.make_indirect(
            Dictionary(Type=Name.Font, Subtype=Name.TrueType, Encoding=Name.WinAnsiEncoding)
        )
        codes = set().union(*(_mapped_codes(b) for b in band))
        fill_simple_truetype(pdf, font, BAND_FONT, Name.WinAnsiEncoding, codes | {32})
        for f in fonts:
            if "/Hv" in f:
                f.Hv = font
    logos = [x.Logo for x in xobjects if "/Logo" in x]
    if len({lg.objgen for lg in logos}) > 1:
        first = logos[0]
        same = all(
            lg.read_raw_bytes() == first.read_raw_bytes()
            and lg.SMask.read_raw_bytes() == first.SMask.read_raw_bytes()
            for lg in logos
        )
        if same:  # one template's logo, made once a part
            for x in xobjects:
                if "/Logo" in x:
                    x.Logo = first
