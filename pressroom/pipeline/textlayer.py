"""The invisible text layer: each word in render mode 3, glyphless font, scaled to its box."""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources

import pikepdf
from pikepdf import Array, Dictionary, Name

from pressroom.models import Word

FONT_NAME = "/PressroomGlyphless"
# Every glyph of the glyphless font is 500 units wide (DW below); the width of a word at size 1.
_CHAR_WIDTH = 0.5


def to_unicode(codes: Iterable[int] = ()) -> bytes:
    """The ToUnicode map of the glyphless font, whose CIDs are code points: one range for
    U+0000-00FF and one entry for each other code point in ``codes`` (the ones a document
    uses). In a range only the last byte may vary, as the CMap format asks; Ghostscript reads a
    range whose destination starts with another byte wrongly (U+2019 as "9"), and one range
    over the whole plane breaks that rule."""
    extra = sorted({c for c in codes if 0x100 <= c < 0x10000 and not 0xD800 <= c <= 0xDFFF})
    chars = [f"<{c:04X}> <{c:04X}>" for c in extra]
    body = "1 beginbfrange\n<0000> <00FF> <0000>\nendbfrange\n" + "".join(
        f"{len(chunk)} beginbfchar\n" + "\n".join(chunk) + "\nendbfchar\n"
        for chunk in (chars[i : i + 100] for i in range(0, len(chars), 100))
    )
    return (
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
        "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
        + body
        + "endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n"
    ).encode()


# Every CID draws glyph 1, the one blank glyph: the font's CIDToGIDMap, 2 bytes a CID. Binary,
# never text (the leak check knows it by these bytes: read as UTF-16 it spells one letter
# 65,536 times, and parsed as a content stream 65,536 operators).
BLANK_GLYPH_MAP = b"\x00\x01" * 65536


def glyphless_font(pdf: pikepdf.Pdf) -> pikepdf.Object:
    """Tesseract's glyphless TrueType as a Type0 font whose CIDs are Unicode code points."""
    ttf = resources.files("pressroom").joinpath("fonts/glyphless.ttf").read_bytes()
    font_file = pdf.make_stream(ttf)
    font_file.Length1 = len(ttf)
    cid_to_gid = pdf.make_stream(zlib.compress(BLANK_GLYPH_MAP, 9))
    cid_to_gid.Filter = Name.FlateDecode
    descriptor = pdf.make_indirect(
        Dictionary(
            Type=Name.FontDescriptor,
            FontName=Name("/GlyphLessFont"),
            Flags=5,
            # the metrics of ordinary type: readers size each glyph's box from these, and a box
            # that sits on the baseline and spans an em groups lines into paragraphs as the
            # print does
            FontBBox=Array([0, -200, 500, 800]),
            ItalicAngle=0,
            Ascent=800,
            Descent=-200,
            CapHeight=700,
            StemV=80,
            FontFile2=font_file,
        )
    )
    cid_font = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.CIDFontType2,
            BaseFont=Name("/GlyphLessFont"),
            CIDSystemInfo=Dictionary(Registry="Adobe", Ordering="Identity", Supplement=0),
            FontDescriptor=descriptor,
            DW=int(1000 * _CHAR_WIDTH),
            CIDToGIDMap=cid_to_gid,
        )
    )
    return pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type0,
            BaseFont=Name("/GlyphLessFont"),
            Encoding=Name("/Identity-H"),
            DescendantFonts=Array([cid_font]),
            ToUnicode=pdf.make_stream(to_unicode()),
        )
    )


def _encode(text: str) -> bytes:
    # Two bytes per character; characters outside the BMP have no CID in this font.
    return b"".join(ord(c).to_bytes(2, "big") for c in text if ord(c) < 0x10000)


def _num(v: float) -> str:
    s = f"{v:.3f}".rstrip("0").rstrip(".")
    return "0" if s in ("", "-0") else s


@dataclass(frozen=True, slots=True)
class _Placed:
    text: str
    x0: float  # left end on the line's baseline, frame pixels
    x1: float  # right end


@dataclass(frozen=True, slots=True)
class TextLine:
    """One line of the text layer: words left to right on one horizontal baseline."""

    words: tuple[_Placed, ...]
    baseline: float  # y of the baseline, frame pixels (y down)
    size: float  # font size, frame pixels


# Words carry their line's ascent (baseline to the top of its tallest letter, about 0.7 em in
# Latin type). The layer's font size is 1.5 ascents, about the height of a single-spaced line:
# pdfminer then groups a column's lines into one block and reads two columns one after the
# other (measured on a two-column page not our own: 14.8 % CER at 1.33 ascents, 2.0 % at 1.5,
# 3.3 % at 1.7; poppler interleaved columns at 1.9), and a glyph's box (baseline - 0.2 size to
# + 0.8 size) still stays clear of the next line's.
_SIZE_PER_ASCENT = 1.5
# The narrowest space kept between two words, as a share of the line's size: readers must
# see a gap as well as a space glyph, or some of them glue the words together.
_MIN_GAP = 0.08


# A word's ascent (baseline to the top of its box) above this many times its line's typical
# one is not print but a speck or a fax's streak inside the word's box, and does not size the
# line. Measured on held-out faxes: print 24-28 px, such words 35-85 px (a streak through
# "appeal" read as "srbeal", 83); an accented capital stands about 1.25 times a plain one.
_SPECK_ASCENT = 1.4
# Characters no taller than an x-height: a word of only these does not set a line's typical
# ascent (a line of "are on a" is all x-height; "Judge" is not).
_SHORT = frozenset("acegmnopqrsuvwxyz.,:;-\u2013\u2014_~=+*")


def _ascent(w: Word) -> float:
    """Baseline to the top of the word's own box (the box is upright; a sloped word's baseline
    is highest at one end)."""
    rise = math.sin(math.radians(w.angle)) * w.advance
    return min(w.origin[1], w.origin[1] - rise) - w.box.y0


def _line_size(members: Sequence[Word]) -> float:
    """The size of an engine line: its words' size, unless a speck or streak inside one word's
    box made that word far taller than the others; then the tallest of the rest.

    The engine sizes a line by its tallest word, so one word grown by a speck made the whole
    line two or three times the size of its neighbours. Its glyph boxes then reached over the
    lines above, and poppler and pdfminer read the lines out of order (poppler read a
    held-out fax page at 14.8 % CER where the other readers read 1.2 %)."""
    size = max(w.size for w in members)
    ascents = [(_ascent(w), w.text) for w in members]
    tallest = max(a for a, _t in ascents)
    typical = sorted(a for a, t in ascents if not set(t) <= _SHORT) or sorted(
        a for a, _t in ascents
    )
    reference = typical[(len(typical) - 1) // 2]  # the lower median: one of two may be a speck
    kept = [a for a, _t in ascents if a <= _SPECK_ASCENT * reference]
    if reference <= 0 or not kept or len(kept) == len(ascents):
        return size
    return size * max(kept) / tallest


@dataclass(slots=True)
class _Row:
    """A line before placement: its words' spans (text, x0, x1, baseline under the middle)."""

    spans: list[tuple[str, float, float, float]]
    sizes: list[tuple[float, int]]  # (size, characters) of each line merged into this one

    @property
    def baseline(self) -> float:
        weight = sum(x1 - x0 for _t, x0, x1, _y in self.spans)
        return sum((x1 - x0) * y for _t, x0, x1, y in self.spans) / weight

    @property
    def size(self) -> float:
        """The size most of the line's characters have (a speck read as a tall letter on a
        short stretch of the line does not make the whole line tall)."""
        total = sum(n for _s, n in self.sizes)
        seen = 0
        for size, n in sorted(self.sizes):
            seen += n
            if 2 * seen >= total:
                return size
        return self.sizes[-1][0]


def _rows(words: Sequence[Word]) -> list[_Row]:
    groups: dict[int, list[Word]] = {}
    for w in words:
        if any(ord(c) < 0x10000 and not c.isspace() for c in w.text):
            groups.setdefault(w.line, []).append(w)
    rows: list[_Row] = []
    for members in groups.values():
        members.sort(key=lambda w: w.origin[0])
        spans: list[tuple[str, float, float, float]] = []
        for w in members:
            th = math.radians(w.angle)
            x0 = w.origin[0]
            x1 = x0 + max(w.advance * math.cos(th), 1.0)
            # the baseline's height under the word's middle (y down; a positive angle climbs)
            y = w.origin[1] - math.sin(th) * w.advance / 2
            text = "".join(c for c in w.text if ord(c) < 0x10000 and not c.isspace())
            spans.append((text, x0, x1, y))
        row = _Row(spans, [(_line_size(members), sum(len(t) for t, *_ in spans))])
        head = _head(rows, row)
        if head is not None:
            # The engine split one printed line in two (a wide gap, a speck): one line again,
            # or readers that sort by baseline put its halves in either order.
            head.spans += row.spans
            head.sizes += row.sizes
        else:
            rows.append(row)
    return rows


# A line the engine split may come back after a line it read in between (a fax's streak
# through "had": "... the defendant nt", then "years." below, then "d failed to ..."). Its
# second half rejoins the first only when it starts closer than a word space after it, in
# line sizes (that one: 0.04; a word space 0.4): a column beside it on the same baseline, or
# a list's items read after their numbers (1.0 or more on a small-print page), start further away.
_REJOIN_GAP = 0.25
# How many rows back a split line's first half is looked for: the engine reads a line or two in
# between, not a page. Looking through every row made a page read column by column quadratic
# (2,400 one-word lines: 5.5 s).
_REJOIN_BACK = 4


def _head(rows: Sequence[_Row], row: _Row) -> _Row | None:
    """The row that ``row`` continues: the last row when ``row`` starts right of its end on
    its baseline; failing that, one of the few before it on its baseline that ends just before
    it."""
    start = row.spans[0][1]
    for i in range(len(rows) - 1, max(-1, len(rows) - 1 - _REJOIN_BACK), -1):
        other = rows[i]
        end = other.spans[-1][2]
        size = min(row.size, other.size)
        if abs(row.baseline - other.baseline) > 0.5 * size or start < end:
            continue
        if i == len(rows) - 1 or start - end <= _REJOIN_GAP * size:
            return other
    return None


def text_lines(words: Sequence[Word]) -> list[TextLine]:
    """Words grouped into their lines (in the order lines first appear), each line levelled.

    A line's words all sit on its mean baseline with one font size: readers group glyphs into
    lines by baseline and height, so a line that climbs (a skewed scan kept as it is) or changes
    size mid-way is read as several lines and interleaved with its neighbours. On a straightened
    scan the baseline moves by a pixel or two; on a kept skewed one each word stays at its own
    x, and the text sits at most half the line's rise away from its ink. Consecutive lines on
    one row, the second to the right of the first, are one line; so is a line whose second
    half came back after another line, starting where its first half ends.
    """
    lines: list[TextLine] = []
    for row in _rows(words):
        size = row.size
        spans = row.spans
        placed: list[_Placed] = []
        gap = _MIN_GAP * size
        for i, (text, x0, x1, _y) in enumerate(spans):
            if placed:
                # never start before the previous word has ended plus a gap
                x0 = max(x0, placed[-1].x1 + gap)
            if i + 1 < len(spans):
                x1 = min(x1, spans[i + 1][1] - gap)
            # a word squeezed by overlapping neighbours still gets some width
            x1 = max(x1, x0 + 0.1 * size * len(text))
            placed.append(_Placed(text, x0, x1))
        lines.append(TextLine(tuple(placed), row.baseline, size))
    return lines


def text_layer_ops(
    words: Sequence[Word],
    *,
    font: str,
    origin: tuple[float, float],
    frame_height_px: float,
    scale: tuple[float, float],
) -> bytes:
    """Content-stream operators laying ``words`` (upright pixel frame) onto the page.

    ``origin`` is where the frame's bottom-left corner lands on the page (points) and ``scale``
    the points per pixel along x and y.

    One text object per line, in reading order, on one horizontal baseline at one size. Each
    word is shown once, stretched (Tz) to its width; between words a real space glyph stretched
    to fill the gap exactly, so every extractor sees both the glyph and the gap and none splits
    a word or glues two together. Glyph advances alone carry the position along the line.
    """
    sx, sy = scale
    ox, oy = origin
    out: list[bytes] = []
    for line in text_lines(words):
        size = max(line.size * _SIZE_PER_ASCENT * sy, 0.5)
        em = _CHAR_WIDTH * size  # one glyph's width at 100 % scaling, points
        first = line.words[0]
        x = ox + first.x0 * sx
        y = oy + (frame_height_px - line.baseline) * sy
        ops = [f"BT 3 Tr {font} {_num(size)} Tf 1 0 0 1 {_num(x)} {_num(y)} Tm"]
        for i, word in enumerate(line.words):
            width = (word.x1 - word.x0) * sx
            ops.append(
                f"{_tz(100.0 * width / (len(word.text) * em))} Tz <{_encode(word.text).hex()}> Tj"
            )
            if i + 1 < len(line.words):
                gap = (line.words[i + 1].x0 - word.x1) * sx
                ops.append(f"{_tz(100.0 * gap / em)} Tz <0020> Tj")
        ops.append("ET\n")
        out.append("\n".join(ops).encode())
    if not out:
        return b""
    return b"q\n" + b"".join(out) + b"Q\n"


def _tz(v: float) -> str:
    return f"{v:.4f}".rstrip("0").rstrip(".")
