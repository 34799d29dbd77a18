"""Writing an output to a file, and putting one together from parts.

A built output is described (XMP metadata and the info dictionary, PDF/A's parts) and written
twice, so its objects are numbered in the order they are reached: one document is the same bytes
however it was built. A part (a page range's pages, or a long source's pages written out in
pieces) keeps under keys of its own what the whole is assembled from (its structure tree, the
standard fonts it left unfilled); ``take_parts`` puts the parts together again."""

from __future__ import annotations

import re
from collections.abc import Iterable
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pikepdf
from pikepdf import Array, Dictionary, Name

from pressroom.engines.fonts import BAND_FONT, fill_simple_truetype
from pressroom.engines.prune import FontLeft, fill_left
from pressroom.pipeline.archive import make_pdfa, pdfa_metadata
from pressroom.pipeline.optimize import best_flate, predict_images, recompress
from pressroom.pipeline.structure import Carriers
from pressroom.pipeline.textlayer import glyphless_font, to_unicode

# where a page range's part keeps the source's structure tree for the assembly of the whole
TREE_KEY = "/PressroomStructTree"
# a part's replaced standard fonts, each with its source font's number and the codes it showed
FONTS_KEY = "/PressroomFontsLeft"


def pdf_date(when: datetime) -> str:
    return when.astimezone(UTC).strftime("D:%Y%m%d%H%M%SZ")


def describe(
    pdf: pikepdf.Pdf,
    carriers: Carriers,
    *,
    title: str,
    created: datetime,
    producer: str,
    pdfa: bool,
    intents: pikepdf.Object | None,
) -> None:
    """The output's XMP metadata and info dictionary (the title, the source's author,
    subject and keywords, Pressroom as producer, ``created`` as every date), made PDF/A-2b
    with ``pdfa``; the source's output ``intents`` kept (or offered to PDF/A)."""
    with pdf.open_metadata(set_pikepdf_as_editor=False) as meta:
        meta["dc:title"] = title
        if carriers.author:
            meta["dc:creator"] = [carriers.author]
        if carriers.subject:
            meta["dc:description"] = carriers.subject
        if carriers.keywords:
            meta["pdf:Keywords"] = carriers.keywords
        meta["pdf:Producer"] = producer
        meta["xmp:CreatorTool"] = "Pressroom"
        # the job's acceptance time, as in the info dictionary: a retry writes the same bytes
        stamp = created.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        meta["xmp:CreateDate"] = stamp
        meta["xmp:ModifyDate"] = stamp
        meta["xmp:MetadataDate"] = stamp
        if pdfa:
            pdfa_metadata(meta)
    if pdfa:
        make_pdfa(pdf, source_intents=intents)
    elif intents is not None:
        pdf.Root.OutputIntents = intents
    info = pdf.docinfo
    info.Title = title
    if carriers.author:
        info.Author = carriers.author
    if carriers.subject:
        info.Subject = carriers.subject
    if carriers.keywords:
        info.Keywords = carriers.keywords
    info.Producer = producer
    info.Creator = "Pressroom"
    info.CreationDate = pdf_date(created)
    info.ModDate = pdf_date(created)


def save_final(pdf: pikepdf.Pdf, path: Path, optimize: int) -> None:
    """Write ``pdf`` to ``path`` at ``optimize``'s level (``pipeline.optimize``), with the
    same bytes however its objects were made."""
    if optimize >= 2:
        predict_images(pdf)
    # written once as it is, then again from that copy: the second write numbers (and
    # groups in object streams) the objects in the order they are reached from the
    # catalog, not the order they were made in, so one document is the same bytes whether
    # it was built whole, from the source's own file, or put together from page ranges
    raw = path.with_name(f"{path.name}.raw")
    try:
        pdf.save(
            raw,
            compress_streams=True,
            stream_decode_level=pikepdf.StreamDecodeLevel.none,
            object_stream_mode=pikepdf.ObjectStreamMode.disable,
        )
        with pikepdf.open(raw) as written, best_flate(optimize):
            if "/ID" in written.trailer:  # both of its halves made from the content
                del written.trailer["/ID"]
            if optimize:
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


def copy_in(into: pikepdf.Pdf, obj: Any) -> Any:
    """``obj`` of another document copied into ``into`` as it is there: an
    indirect object by ``copy_foreign``, a direct array or dictionary (a catalog's
    /OutputIntents array often is one) made again of its copied items, since qpdf copies
    only indirect objects across documents."""
    if isinstance(obj, pikepdf.Object) and obj.is_indirect:
        return into.copy_foreign(obj)
    if isinstance(obj, pikepdf.Array):
        return pikepdf.Array([copy_in(into, v) for v in obj])
    if isinstance(obj, pikepdf.Dictionary):
        return pikepdf.Dictionary({k: copy_in(into, v) for k, v in obj.items()})
    return obj


def fonts_record(fonts_left: Iterable[FontLeft]) -> Array:
    """What a part keeps under FONTS_KEY of the standard fonts its range left unfilled, for
    the assembly of the whole to fill with every range's codes."""
    return Array(
        [
            Dictionary(
                Font=f.font,
                Stem=pikepdf.String(f.stem),
                Source=Array(list(f.source)),
                Codes=Array(sorted(f.codes)),
            )
            for f in fonts_left
        ]
    )


def take_parts(
    merged: pikepdf.Pdf,
    parts: Iterable[Path],
    stack: ExitStack,
    *,
    intents: pikepdf.Object | None,
    tree: Dictionary | None,
) -> tuple[pikepdf.Object | None, Dictionary | None]:
    """The pages of ``parts`` (opened on ``stack``) appended to ``merged``, the fonts the
    ranges left unfilled filled once, and the builder's resources shared again. Returns the
    output intents and structure tree: ``intents`` and ``tree`` where given, else the first
    part's."""
    left: list[FontLeft] = []
    for part in parts:
        opened = stack.enter_context(pikepdf.open(part))
        merged.pages.extend(opened.pages)
        kept = opened.Root.get("/OutputIntents")
        if intents is None and isinstance(kept, Array):
            # a range's part keeps the source's (OutputBuilder.save_part)
            intents = copy_in(merged, kept)
        kept_tree = opened.Root.get(TREE_KEY)
        if tree is None and isinstance(kept_tree, Dictionary):
            tree = cast(Dictionary, copy_in(merged, kept_tree))
        left += _fonts_left(merged, opened.Root.get(FONTS_KEY))
    if left:
        _point_at(merged, fill_left(merged, left))
    share_resources(merged)
    return intents, tree


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
