"""Text as a PDF shows it: every string operand of every content stream, decoded through the
font it is shown in.

The bytes of a string are codes, not characters: through an Identity-H font (how Word,
LibreOffice and browsers write text) they are glyph numbers, through a simple font with a
``/Differences`` encoding they may be 1, 2, 3… A byte search finds no name in them. Here each
code is read the way a viewer's text extraction reads it: the font's ToUnicode map first, then
its encoding (a predefined one, or glyph names read as the Adobe Glyph List spells them), so
the leak check can compare text with text. A code that none of these can read is counted:
the check holds what it cannot read (fail closed) rather than guess.

Every content stream is read — a page's, forms', tiling patterns', Type 3 glyphs', annotation
appearances' — whether or not anything draws it. Pure parsing; nothing is rendered. How a
font's codes read as text (CMaps, code spaces, encodings, glyph names): ``redact.fontcodes``."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field

import pikepdf
from pikepdf import Array, Dictionary, Name

from pressroom.engines.pdfstr import text_of
from pressroom.engines.prune import content_streams, inherited
from pressroom.engines.streams import TooBig, decoded
from pressroom.redact.fontcodes import FALLBACK, UNREADABLE, Font

MAX_CONTENT_BYTES = 64 * 1024 * 1024
_SHOW = frozenset({"Tj", "'", '"', "TJ"})


@dataclass
class StreamText:
    """What one content stream shows: its text, and how many codes could not be read."""

    where: str  # "page N" or "an undrawn form" and the like: never a value
    text: list[str] = field(default_factory=list)
    unreadable: int = 0


def document_text(pdf: pikepdf.Pdf) -> Iterator[StreamText]:
    """Each content stream's shown text, pages first, then every other content stream."""
    seen: set[tuple[int, int]] = set()
    fonts: dict[tuple[int, int], Font] = {}
    for n, page in enumerate(pdf.pages, start=1):
        resources = inherited(page.obj, "/Resources")
        out = StreamText(f"page {n}")
        for stream in content_streams(page.obj.get("/Contents")):
            if stream.is_indirect:
                seen.add(stream.objgen)
            _read(pdf, stream, resources, out, fonts)
        yield out
        yield from _forms_below(pdf, resources, f"page {n}", seen, fonts, 0)
        annots = page.obj.get("/Annots")
        for annot in annots if isinstance(annots, Array) else []:
            if isinstance(annot, Dictionary):
                for stream in _appearances(annot.get("/AP")):
                    yield from _one(pdf, stream, None, f"page {n} annotation", seen, fonts)
    for obj in pdf.objects:
        if isinstance(obj, pikepdf.Stream) and obj.objgen not in seen and _is_content(obj):
            yield from _one(pdf, obj, None, "an undrawn form", seen, fonts)
        elif (
            isinstance(obj, Dictionary)
            and obj.get("/Subtype") == Name.Type3
            and isinstance(obj.get("/CharProcs"), Dictionary)
        ):
            own = obj.get("/Resources")
            for proc in obj.CharProcs.values():
                if isinstance(proc, pikepdf.Stream):
                    yield from _one(pdf, proc, own, "a Type 3 glyph", seen, fonts)


def _one(
    pdf: pikepdf.Pdf,
    stream: pikepdf.Stream,
    parent: pikepdf.Object | None,
    where: str,
    seen: set[tuple[int, int]],
    fonts: dict[tuple[int, int], Font],
    depth: int = 0,
) -> Iterator[StreamText]:
    if stream.is_indirect:
        if stream.objgen in seen:
            return
        seen.add(stream.objgen)
    own = stream.get("/Resources")
    resources = own if isinstance(own, Dictionary) else parent
    out = StreamText(where)
    _read(pdf, stream, resources, out, fonts)
    yield out
    if depth < 40:
        yield from _forms_below(pdf, resources, where, seen, fonts, depth + 1)


def _forms_below(
    pdf: pikepdf.Pdf,
    resources: object,
    where: str,
    seen: set[tuple[int, int]],
    fonts: dict[tuple[int, int], Font],
    depth: int,
) -> Iterator[StreamText]:
    """Forms and tiling patterns named in ``resources``, read with the resources they
    inherit when they have none of their own."""
    if not isinstance(resources, Dictionary):
        return
    for category in ("/XObject", "/Pattern"):
        group = resources.get(category)
        if not isinstance(group, Dictionary):
            continue
        for target in group.values():
            if isinstance(target, pikepdf.Stream) and _is_content(target):
                yield from _one(pdf, target, resources, where, seen, fonts, depth)


def _appearances(ap: object) -> Iterator[pikepdf.Stream]:
    if not isinstance(ap, Dictionary):
        return
    for state in ap.values():
        if isinstance(state, pikepdf.Stream):
            yield state
        elif isinstance(state, Dictionary):
            yield from (s for s in state.values() if isinstance(s, pikepdf.Stream))


def _is_content(stream: pikepdf.Stream) -> bool:
    if stream.get("/Subtype") == Name.Form:
        return True
    return stream.get("/PatternType") == 1


def _read(
    pdf: pikepdf.Pdf,
    stream: pikepdf.Stream,
    resources: object,
    out: StreamText,
    fonts: dict[tuple[int, int], Font],
) -> None:
    try:
        data = decoded(stream, MAX_CONTENT_BYTES)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            instructions = pikepdf.parse_content_stream(pikepdf.Stream(pdf, data))
    except (TooBig, pikepdf.PdfError, TypeError, ValueError):
        out.unreadable += 1  # a stream nobody can parse is a stream nobody can check
        return
    font: Font | None = None
    saved: list[Font | None] = []  # q pushes the font with the rest of the graphics state
    for instruction in instructions:
        if not isinstance(instruction, pikepdf.ContentStreamInstruction):
            continue
        op = text_of(instruction.operator)
        operands = instruction.operands
        if op == "q":
            saved.append(font)
        elif op == "Q":
            font = saved.pop() if saved else font
        elif op == "Tf" and operands:
            font = _font(resources, operands[0], fonts)
        elif op == "gs" and operands:
            font = _state_font(resources, operands[0], fonts) or font
        elif op in _SHOW and operands:
            shown = operands[-1]
            strings = (
                [bytes(s) for s in shown if isinstance(s, pikepdf.String)]
                if isinstance(shown, Array)
                else [bytes(shown)]
                if isinstance(shown, pikepdf.String)
                else []
            )
            for raw in strings:
                if font is None:
                    # shown in a font set by whoever draws this stream: read as bytes, and
                    # counted as unread (which font a viewer uses cannot be told from here)
                    text, unreadable = FALLBACK.decode(raw)[0], len(raw)
                else:
                    try:
                        text, unreadable = font.decode(raw)
                    except (ValueError, OverflowError, IndexError):
                        text, unreadable = "", len(raw)
                out.text.append(text)
                out.unreadable += unreadable


def _state_font(resources: object, name: object, fonts: dict[tuple[int, int], Font]) -> Font | None:
    """The font an ExtGState sets (``/Font [font size]``), if it sets one."""
    if not isinstance(resources, Dictionary) or not isinstance(name, Name):
        return None
    states = resources.get("/ExtGState")
    state = states.get(str(name)) if isinstance(states, Dictionary) else None
    pair = state.get("/Font") if isinstance(state, Dictionary) else None
    if isinstance(pair, Array) and len(pair) == 2 and isinstance(pair[0], Dictionary):
        return _font_of(pair[0], fonts)
    return None


def _font(resources: object, name: object, fonts: dict[tuple[int, int], Font]) -> Font | None:
    if not isinstance(resources, Dictionary) or not isinstance(name, Name):
        return None
    group = resources.get("/Font")
    obj = group.get(str(name)) if isinstance(group, Dictionary) else None
    if not isinstance(obj, Dictionary):
        return None
    return _font_of(obj, fonts)


def _font_of(obj: Dictionary, fonts: dict[tuple[int, int], Font]) -> Font:
    key = obj.objgen if obj.is_indirect else None
    if key is not None and key in fonts:
        return fonts[key]
    try:
        font = Font.of(obj)
    except (pikepdf.PdfError, ValueError, TypeError, OverflowError, IndexError):
        font = UNREADABLE  # a font nobody can read: its text counts as unread
    if key is not None:
        fonts[key] = font
    return font
