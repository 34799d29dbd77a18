"""Redaction's second pass: each page made for the output — rebuilt from pixels with the boxes
burned in where it has a value (or text a reader cannot see), kept as vector content where it
has none — and put into the output by the pipeline core, like any job's pages."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Protocol

import pikepdf
from PIL import Image, ImageDraw

from pressroom.corrections import MANUAL
from pressroom.engines import images
from pressroom.engines.straighten import Encoding, image_stream, level, table_quality
from pressroom.errors import OutputCheckFailed
from pressroom.models import Box, PageText, SourceKind, Word
from pressroom.pipeline.assembly import Assembly
from pressroom.pipeline.core import (
    MarginsBlank,
    blank_margins,
    image_page,
    pdf_page_form,
    remaining,
    square_frame,
)
from pressroom.pipeline.geometry import PageLayout, PlacedSource
from pressroom.pipeline.ocr import rotate_cw
from pressroom.pipeline.stop import between_pages
from pressroom.pipeline.structure import Carriers, read_carriers
from pressroom.pixels import PixelBudget
from pressroom.redact.apply import Found
from pressroom.redact.burn import black_and_white, burn, inked, page_pixels, scaled
from pressroom.redact.context import RunContext
from pressroom.redact.leaks import carries_value, name_texts
from pressroom.redact.plan import boxes_for, covered_words, normalise, visible_words
from pressroom.redact.plan import remaining as remaining_words
from pressroom.redact.scan import PageScan
from pressroom.redact.source import RedactionSource
from pressroom.stages import Stage


@dataclass
class Built:
    """One build of the redacted output, and what its checks need."""

    assembly: Assembly
    burned: list[tuple[int, float, list[Box]]]  # output page, dpi, boxes: to verify
    counts: dict[str, int]  # boxes burned, by class


def build_output(ctx: RunContext, scans: Sequence[PageScan], found: Found) -> Built:
    """Pass two: every occurrence of every value, on every page; build and save the output
    at ``ctx.output``. ``found.applied``: a reviewer's corrections — boxes drawn, by content
    page (from 0), in that scan's pixels, burned exactly there with the words they touch left
    out of the text layer; words a removed box lets stand, left where they are unless another
    finding covers them. The detector runs on the source's carriers' text too (a title naming
    someone the pages do not)."""
    stack, src, info, output, options = ctx.stack, ctx.src, ctx.info, ctx.output, ctx.options
    engine, progress, timer, detector = ctx.engine, ctx.progress, ctx.timer, ctx.detector
    by_kind, tokens, applied = found.by_kind, found.tokens, found.applied
    drawn = applied.drawn
    by_hand = by_kind.get(MANUAL, set())
    found_values = set().union(*by_kind.values())
    total = len(info.pages)
    # a fresh document: nothing of the source comes along but page content, and those of its
    # carriers (title, outlines, destinations, labels) that hold no value found
    carriers = safe_carriers(src.pdf, found_values, tokens, detector)
    out = Assembly(stack, options, total, engine, timer, note="redacted", carriers=carriers)
    built = Built(out, [], {})
    budget = ctx.budget()  # this pass's bitmaps
    frames = src.frames() if info.kind is not SourceKind.PDF else None
    try:
        for scan in scans:
            between_pages()
            remaining(options.deadline)
            frame = next(frames) if frames is not None else None
            with timer.stage(Stage.DETECT):
                k = scan.dpi / 72.0
                hit_ocr = covered_words(scan.ocr, scan.hits_ocr, found_values, tokens)
                hit_ocr -= applied.exempt(scan.info.index, scan.ocr, k)
                hit_text = covered_words(scan.extracted, scan.hits_text, found_values, tokens)
                hit_text -= applied.exempt(scan.info.index, scan.extracted, k)
                visible = visible_words(scan.extracted, scan.ocr)
                shown = {id(w) for w in visible}
                # a finding in text nobody sees (invisible, white, clipped, off the page,
                # covered) leaves the text and gets a box only where the pixels show something:
                # a box over a blank area would tell that hidden text was there
                quantum = options.template.box_quantum * scan.dpi / 72.0
                unseen = boxes_for(
                    scan.extracted,
                    [i for i in hit_text if id(scan.extracted[i]) not in shown],
                    quantum=quantum,
                )
                boxes = boxes_for(scan.ocr, hit_ocr, quantum=quantum) + boxes_for(
                    scan.extracted,
                    [i for i in hit_text if id(scan.extracted[i]) in shown],
                    quantum=quantum,
                )
                mine = list(drawn.get(scan.info.index, ()))
                boxes += mine
            # a born-digital page's value is found twice, in its own text and in its pixels:
            # the same occurrence, counted once (the larger count of the two readings, by
            # value, so one a reading missed still counts)
            seen: dict[tuple[str, str], list[int]] = {}
            pairs = ((scan.hits_ocr, hit_ocr), (scan.hits_text, hit_text))
            for reading, (hits, burning) in enumerate(pairs):
                for h in hits:
                    if h.words and not set(h.words) & burning:
                        continue  # a finding a reviewer let stand here: nothing burned for it
                    key = (h.finding.kind, normalise(h.finding.value))
                    seen.setdefault(key, [0, 0])[reading] += 1
            for (kind, _value), counts in seen.items():
                built.counts[kind] = built.counts.get(kind, 0) + max(counts)
            if mine or by_hand:
                # every box a reviewer asked for: drawn ones, and each word of a value to go
                # wherever it occurs
                words = scan.extracted or scan.ocr
                n = len(mine) + len(covered_words(words, [], by_hand))
                if n:
                    built.counts[MANUAL] = built.counts.get(MANUAL, 0) + n
            # Text a reader cannot see (a hidden layer, white, tiny or off-page text) must not
            # survive in vector content: such pages are rebuilt from pixels too.
            hidden = any(
                sum(c.isalnum() for c in w.text) >= 3
                for w in scan.extracted
                if id(w) not in shown  # (by identity: a list's ``in`` compared every pair)
            )
            placed: PlacedSource | None = None
            margins: MarginsBlank | None = None
            rebuild = bool(boxes or unseen or hidden)
            scan.visible = visible if rebuild else None
            if rebuild:
                with timer.stage(Stage.BURN):
                    placed, text, burned, margins = _rebuilt_page(
                        out.pdf,
                        src,
                        scan,
                        frame,
                        boxes,
                        unseen,
                        budget,
                        margins=options.template.fit == "margin",
                    )
                rotation = 0
                built.burned.append((scan.info.index + out.offset, scan.dpi, burned))
                out.turned[scan.info.index + out.offset] = scan.rotation  # in its pixels
            else:
                # the page's own text is kept as drawn; a page with none (a scan, a page
                # force rendered) takes OCR's words: the source words a rework took out are
                # read for detection only, never kept as text
                words = scan.ocr if not scan.seen_text else []
                text = PageText(
                    index=scan.info.index,
                    method="ocr" if words else "kept",
                    words=tuple(words),
                    width_px=scan.size[0],
                    height_px=scan.size[1],
                    dpi=scan.dpi,
                    rotation=scan.rotation,
                    real_chars=_chars(words or scan.seen_text),
                )
                rotation = scan.rotation
            # a page rebuilt from pixels is levelled in them; one kept as it was, by placement
            layout = out.add(
                placed if placed is not None else partial(_vector_page, out.pdf, src, scan, frame),
                text,
                rotation,
                level=0.0 if rebuild else scan.level,
                margins_blank=margins,
            )
            check_geometry(scan, layout)
            origin = layout.onto(Box(0.0, 0.0, 0.0, 0.0))
            scan.placement = (layout.scale, origin.x0, origin.y0)
            scan.bands = layout.bands
            if progress is not None:
                progress(total + scan.info.index + 1, 2 * total)
    finally:
        if frames is not None:
            frames.close()
    out.finish(output)
    return built


class Finder(Protocol):
    def find(self, text: str) -> Sequence[object]: ...


def readings(text: str) -> list[str]:
    """``text`` and what it spells once its escapes are read: a name's ``#xx``, a web
    address's ``%xx`` and ``+`` (``M%61rgaret%20Thornbury`` is "Margaret Thornbury"). A
    carrier is judged, and searched, in every one of them."""
    out = [text]
    for spelt in (
        *name_texts(text),
        urllib.parse.unquote(text),
        urllib.parse.unquote_plus(text),
        *map(urllib.parse.unquote, name_texts(text)),
    ):
        if spelt not in out:
            out.append(spelt)
    return out


def carrier_texts(carriers: Carriers) -> Iterator[str]:
    """Every text the source's carriers hold, in each of its readings."""
    for text in carriers.texts():
        yield from readings(text)


# a carrier's text cut into words twice: at spaces and punctuation but keeping a word's own
# apostrophes and hyphens ("O'Brien", "Thornbury-Smith"), and at every non-letter ("Dr.Thornbury",
# "~thornbury/cv.pdf", "m.thornbury@example.org", "Thornbury's")
_COARSE = re.compile(r"[^\w'\u2019-]+")
_FINE = re.compile(r"[\W_]+")


def _pieces(text: str) -> set[str]:
    out: set[str] = set()
    for cut in (_COARSE, _FINE):
        out.update(normalise(piece) for piece in cut.split(text))
    out.discard("")
    return out


def safe_carriers(
    pdf: pikepdf.Pdf | None,
    values: set[str],
    tokens: frozenset[str],
    detector: Finder | None = None,
) -> Carriers | None:
    """What of the source's carriers a redaction may keep, failing closed: each one whose text,
    in any of its readings (escapes decoded), holds a found value (compared as the leak check
    compares), a word of a found name (cut at spaces and at punctuation, apostrophes and
    hyphens kept and not), or anything ``detector`` finds in it, is dropped (an outline item
    with its children, a link whole, a label's prefix, the title), and the kinds dropped are
    named. The structure tree is never kept in a redaction (its alt text would need a reading
    of its own). The leak check reads what is kept like any string of the output
    (``redact.leaks``)."""
    if pdf is None:
        return None
    carriers = read_carriers(pdf)
    words = {key for key in (normalise(t) for t in tokens) if len(key) >= 3}

    def keep(text: str) -> bool:
        for reading in readings(text):
            if carries_value(reading, values):
                return False
            if words & _pieces(reading):
                return False
            if detector is not None and detector.find(reading):
                return False
        return True

    # (the tree, and the marked content it points at, stay out: engines.prune drops marked
    # content from a redaction's copies)
    return replace(carriers.only(keep), tagged=False)


def check_geometry(scan: PageScan, layout: PageLayout) -> None:
    """The output page must keep the source page's size (turned upright) within 1 pt, and the
    content placed on it must be the source at the layout's scale: the checks and the desk
    map every box through that scale."""
    w, h = scan.info.width_pt, scan.info.height_pt
    if scan.rotation in (90, 270):
        w, h = h, w
    x0, y0, x1, y1 = layout.content
    k = layout.scale
    if abs(layout.width - w) > 1.0 or abs(layout.height - h) > 1.0:
        raise OutputCheckFailed(f"page {scan.info.index + 1} changed size in the output")
    if abs((x1 - x0) - w * k) > 1.0 or abs((y1 - y0) - h * k) > 1.0:
        raise OutputCheckFailed(f"page {scan.info.index + 1} is not placed at its scale")


def _rebuilt_page(
    pdf: pikepdf.Pdf,
    src: RedactionSource,
    scan: PageScan,
    frame: Image.Image | None,
    boxes: list[Box],
    unseen: list[Box],
    budget: PixelBudget,
    *,
    margins: bool = False,
) -> tuple[PlacedSource, PageText, list[Box], MarginsBlank | None]:
    """The page from its pixels, ``boxes`` burned in, and each of ``unseen`` where the pixels
    under it show anything; the boxes burned (in ``scan.dpi`` pixels, as given), and (with
    ``margins``) whether its margins are blank.

    The page is rendered once, at the resolution it is stored at: a drawn page stored below
    ``scan.dpi`` is rendered there directly, its boxes scaled to it, rather than rendered at
    ``scan.dpi`` and resampled."""
    encoding, dpi = _storage(src, scan, frame)
    at = scan.dpi  # a scan is levelled and burned in its own reading's pixels
    if src.kind is SourceKind.PDF:
        if encoding is None and dpi < scan.dpi - 0.5:
            at = dpi
        raster, full = page_pixels(src, scan.info.index, budget, at)
    else:
        assert frame is not None
        raster = square_frame(images.flatten(frame).convert("RGB"), scan.info, budget)
        full = raster.size
    k = at / scan.dpi
    upright = level(rotate_cw(raster, scan.rotation), scan.level)
    del raster
    boxes = boxes + [b for b in unseen if inked(upright, b, k)]
    burned = burn(upright, boxes, k)
    # the source page's own size (its pixels are a whole number, a fraction of a point more
    # or less): the output page is exactly the source's
    w, h = scan.info.width_pt, scan.info.height_pt
    width_px, height_px = full
    if scan.rotation in (90, 270):
        w, h = h, w
        width_px, height_px = height_px, width_px
    blank = blank_margins(burned, 0, at) if margins else None
    stored, encoding = _stored(scan, burned, boxes, encoding, dpi, k)
    placed = PlacedSource(image_stream(pdf, stored, encoding), (w, 0.0, 0.0, h, 0.0, 0.0), w, h)
    del stored, burned
    # On born-digital pages the words that stay come from the page's own text (exact).
    kept = remaining_words(scan.seen_text if scan.seen_text else scan.ocr, boxes)
    text = PageText(
        index=scan.info.index,
        method="ocr" if kept else "empty",
        words=tuple(kept),
        width_px=width_px,
        height_px=height_px,
        dpi=scan.dpi,
        real_chars=_chars(kept),
    )
    return placed, text, boxes, blank


# a born-digital page rebuilt from its pixels is stored at this resolution (text stays
# legible in grey; bilevel it reads like a fine fax), unless its images have a finer one
TEXT_DPI = 200.0
MIN_STORED_DPI = 150.0
MIN_JPEG = 60  # the lowest JPEG quality a burned page is stored at


def _storage(
    src: RedactionSource, scan: PageScan, frame: Image.Image | None
) -> tuple[Encoding | None, float]:
    """How the burned page is stored: the source's own encoding class where it is a scan
    (None: drawn, the pixels decide) and the resolution: the source's own, or for a drawn page
    the lowest that keeps its text legible (unless its images have a finer one)."""
    encoding: Encoding | None = None
    native = scan.info.native_dpi
    if src.kind is not SourceKind.PDF and frame is not None:
        encoding = images.frame_encoding(src.kind, frame)
    elif src.pdf is not None and scan.info.plain_scan:
        encoding = images.scan_encoding(src.pdf.pages[scan.info.index])
    if encoding is None:  # drawn, not scanned: its text is vectors (or several images)
        native = max(native or 0.0, TEXT_DPI)
    return encoding, min(scan.dpi, max(native or scan.dpi, MIN_STORED_DPI))


def _stored(
    scan: PageScan,
    burned: Image.Image,
    boxes: Sequence[Box],
    encoding: Encoding | None,
    dpi: float,
    k: float,
) -> tuple[Image.Image, Encoding]:
    """The burned page as it is stored (``_storage``): a JPEG scan stays JPEG with the
    source's tables, a bilevel one bilevel in CCITT group 4; a drawn page black and white where
    it is, else grey or colour, losslessly. ``burned`` is at ``k`` times ``scan.dpi``; one
    burned finer than ``dpi`` is resampled and every box burned again at that resolution, so
    none is softened by the resampling."""
    if encoding is None:
        encoding = Encoding("bilevel") if black_and_white(burned) else Encoding("lossless")
    image = burned
    if dpi < scan.dpi * k - 0.5:
        k = dpi / scan.dpi
        size = (max(1, round(burned.width * k)), max(1, round(burned.height * k)))
        image = burned.resize(size, Image.Resampling.BOX)
        draw = ImageDraw.Draw(image)
        for b in boxes:
            draw.rectangle(scaled(b, k), fill=0)
    if (
        encoding.kind == "jpeg"
        and encoding.qtables
        and table_quality(encoding.qtables[0]) < MIN_JPEG
    ):
        # a coarse scan's tables would ring into its boxes: a burned page is stored finer
        encoding = Encoding("jpeg", quality=MIN_JPEG)
    if (
        encoding.kind == "jpeg"
        and image.mode == "L"
        and encoding.qtables
        and len(encoding.qtables) > 1
    ):
        # a colour JPEG's page burned grey: its luminance table alone
        encoding = replace(encoding, qtables={0: encoding.qtables[0]}, subsampling=-1)
    return image, encoding


def _vector_page(
    pdf: pikepdf.Pdf, src: RedactionSource, scan: PageScan, frame: Image.Image | None
) -> PlacedSource:
    """The source page placed as it is, copied into the fresh output."""
    if src.kind is SourceKind.PDF:
        assert src.cleaner is not None
        placed, _page = pdf_page_form(src.cleaner, scan.info)
        return PlacedSource(
            pdf.copy_foreign(placed.xobject), placed.to_frame, placed.width, placed.height
        )
    assert frame is not None
    return image_page(pdf, src.kind, src.path, frame, scan.info, single=src.single)


def _chars(words: Sequence[Word]) -> int:
    return sum(c.isalnum() for w in words for c in w.text)
