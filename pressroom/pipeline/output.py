"""Compose output pages: the untouched source, its invisible text, and brand bands around it.

Where the source lands is ``pipeline.geometry``'s; how the built document is written, and put
together from parts, is ``pipeline.writing``'s."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path

import pikepdf
from pikepdf import Array, Dictionary, Name

from pressroom.engines.fonts import BAND_FONT, fill_simple_truetype
from pressroom.engines.images import logo_xobject
from pressroom.engines.prune import FontLeft
from pressroom.models import PageText
from pressroom.pipeline.geometry import (
    PageLayout,
    PlacedSource,
    band_scale,
    compose,
    fit,
    levelling,
    turn_cw,
)
from pressroom.pipeline.helvetica import text_width, winansi
from pressroom.pipeline.structure import (
    Carriers,
    Placed,
    embed,
    keep_tree,
    output_intents,
    write_carriers,
)
from pressroom.pipeline.textlayer import glyphless_font, text_layer_ops, to_unicode
from pressroom.pipeline.writing import (
    FONTS_KEY,
    TREE_KEY,
    describe,
    fonts_record,
    save_final,
    take_parts,
)
from pressroom.templates import Band, Template

MARGIN = 18.0  # the bands' and the cover's margin, points (at band_scale 1)


def _fmt(m: tuple[float, ...]) -> str:
    return " ".join(f"{v:.4f}".rstrip("0").rstrip(".") or "0" for v in m)


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
        data = winansi(text)
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
        upright = compose(source.to_frame, turn)
        clip = ""
        content = (dx, dy, dx + w * scale, dy + h * scale)
        if level:
            upright = compose(upright, levelling(level, w, h))
            # the turned corners must not reach past the source's own frame (into the bands)
            x0, y0, x1, y1 = content
            clip = f"{x0:.4f} {y0:.4f} {x1 - x0:.4f} {y1 - y0:.4f} re W n "
        placement = compose(upright, (scale, 0.0, 0.0, scale, dx, dy))
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
                self.intents, self._tree = take_parts(
                    self.pdf, self.parts, stack, intents=self.intents, tree=self._tree
                )
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
                self.pdf.Root[FONTS_KEY] = fonts_record(self.fonts_left)
            if self.carriers is not None:  # for the assembly of the whole
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
        carriers = self.carriers or Carriers()
        # the source's outlines, destinations, links, language and page labels, onto the new
        # pages; the cover is labelled "Cover", the content pages as the source numbered them
        # (from 1 where it did not)
        cover = 0 if self.template.cover is not None else None
        write_carriers(self.pdf, carriers, placed, cover=cover, tree=self._tree)
        describe(
            self.pdf,
            carriers,
            title=title,
            created=created,
            producer=self.producer,
            pdfa=self.pdfa,
            intents=self.intents,
        )
        save_final(self.pdf, path, self.optimize)
