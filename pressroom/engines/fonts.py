"""Fonts Pressroom embeds: its own band text, and the standard fonts a source leaves out.

What Pressroom writes in brand bands and on the cover is set in Pressroom Sans, and a kept page
whose text uses one of the standard fonts without embedding it (a form's Helvetica, a letter's
Times) gets the metric-compatible Pressroom font embedded in its place, so the page looks and
prints the same in every viewer and on every printer, and an archive (PDF/A) may keep it.
Pressroom Sans, Serif and Mono are the Liberation fonts (SIL OFL 1.1) cut down to the Latin
glyphs and renamed (``scripts/build_fonts.py``, ``pressroom/fonts/OFL.txt``).

Every font is a simple TrueType font with an explicit encoding, the glyphs it needs subset
into it (fontTools), the widths its text was laid out with, and a ToUnicode map, so every
reader extracts the same text.
"""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from functools import cache, lru_cache
from pathlib import Path

import pikepdf
from pikepdf import Array, Dictionary, Name

FONTS_DIR = Path(__file__).resolve().parent.parent / "fonts"
BAND_FONT = "PressroomSans-Regular"

# the standard 14's text fonts and their everyday names, by family and style
_FAMILIES = (
    (re.compile(r"helvetica|arial|liberationsans|arimo"), "Sans"),
    (re.compile(r"times|liberationserif|tinos"), "Serif"),
    (re.compile(r"courier|liberationmono|cousine"), "Mono"),
)
_BOLD = re.compile(r"bold|semibold|demi")
_OTHER_CUTS = re.compile(
    r"narrow|condensed|compressed|extended|expanded|light|thin|black|heavy|medium|neue|rounded"
)
_ITALIC = re.compile(r"italic|oblique")


DINGBATS = "PressroomDingbats-Regular"


def _zapf() -> dict[int, int]:
    """ZapfDingbats' built-in encoding: code to Unicode (the Dingbats block follows its order;
    the glyphs Unicode had already are mapped where it put them)."""
    table = {c: 0x2700 + c - 0x20 for c in range(0x21, 0x7F)}
    table.update(
        {0x25: 0x260E, 0x2A: 0x261B, 0x2B: 0x261E, 0x48: 0x2605, 0x6C: 0x25CF, 0x6E: 0x25A0}
    )
    table.update({0x73: 0x25B2, 0x74: 0x25BC, 0x75: 0x25C6, 0x77: 0x25D7, 0x20: 0x20})
    table.update({c: 0x2768 + c - 0x80 for c in range(0x80, 0x8E)})
    table.update({c: 0x2761 + c - 0xA1 for c in range(0xA1, 0xA8)})
    table.update({0xA8: 0x2663, 0xA9: 0x2666, 0xAA: 0x2665, 0xAB: 0x2660})
    table.update({c: 0x2460 + c - 0xAC for c in range(0xAC, 0xB6)})
    table.update({c: 0x2776 + c - 0xB6 for c in range(0xB6, 0xFF) if c != 0xF0})
    table.update({0xD5: 0x2192, 0xD6: 0x2194, 0xD7: 0x2195})
    return table


ZAPF_UNICODE = _zapf()


def substitute(base_font: str) -> str | None:
    """The Pressroom font that stands in for a non-embedded font of this name, or None (a
    font we have no metric-compatible face for: Symbol, ZapfDingbats, anything else)."""
    name = base_font.lstrip("/")
    if re.match(r"[A-Z]{6}\+", name):
        name = name[7:]
    key = re.sub(r"[\s,_-]", "", name).lower()
    if _OTHER_CUTS.search(key):
        return None  # a narrow, light or black cut: Liberation's widths are not its widths
    if key in ("zapfdingbats", "itczapfdingbats", "zapfdingbatsitc", "dingbats"):
        return DINGBATS
    for pattern, family in _FAMILIES:
        if pattern.match(key):
            rest = pattern.sub("", key, count=1)
            bold, italic = bool(_BOLD.search(rest)), bool(_ITALIC.search(rest))
            style = {(False, False): "Regular", (True, False): "Bold"}.get(
                (bold, italic), "BoldItalic" if bold else "Italic"
            )
            return f"Pressroom{family}-{style}"
    return None


@cache
def _font_bytes(stem: str) -> bytes:
    return (FONTS_DIR / f"{stem}.ttf").read_bytes()


@cache
def winansi_names() -> tuple[str, ...]:
    """Glyph names of WinAnsiEncoding's 256 codes (.notdef where it has none)."""
    from fontTools.agl import UV2AGL

    names = []
    for code in range(256):
        try:
            char = bytes([code]).decode("cp1252")
        except UnicodeDecodeError:
            names.append(".notdef")
            continue
        if code < 0x20:
            names.append(".notdef")
            continue
        names.append(UV2AGL.get(ord(char), f"uni{ord(char):04X}"))
    names[0xA0] = "space"  # a no-break space shows as a space
    names[0xAD] = "hyphen"
    return tuple(names)


def _base_names(name: object) -> list[str]:
    from fontTools.encodings.MacRoman import MacRoman
    from fontTools.encodings.StandardEncoding import StandardEncoding

    if name == Name.MacRomanEncoding:
        return list(MacRoman)
    if name == Name.WinAnsiEncoding:
        return list(winansi_names())
    return list(StandardEncoding)  # a standard text font's own encoding


def code_names(encoding: object) -> list[str]:
    """The glyph name of each of the 256 codes of a simple font with this /Encoding (a name,
    a dictionary with /BaseEncoding and /Differences, or none: StandardEncoding)."""
    if isinstance(encoding, Dictionary):
        names = _base_names(encoding.get("/BaseEncoding"))
        code = 0
        for item in encoding.get("/Differences", Array()):
            if isinstance(item, int | float | Decimal) and not isinstance(item, bool):
                code = int(item)  # a real number counts as its whole part, as PDFium reads it
            elif isinstance(item, Name) and 0 <= code < 256:
                names[code] = str(item)[1:]
                code += 1
        return names
    return _base_names(encoding)


def _unicode(glyph: str) -> str:
    from fontTools.agl import toUnicode

    return "" if glyph == ".notdef" else toUnicode(glyph)


@lru_cache(maxsize=64)
def _subset(stem: str, unicodes: frozenset[int], codes: frozenset[int] = frozenset()) -> bytes:
    """The font cut to ``unicodes``; for a symbolic font, ``codes`` are its own codes, kept in
    its (3,0) and (1,0) cmaps (a subsetter keeps a cmap's entries by code, not by glyph)."""
    from fontTools import subset

    options = subset.Options()
    options.symbol_cmap = options.legacy_cmap = bool(codes)
    options.hinting = False
    options.notdef_outline = True
    options.recalc_timestamp = False
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 7, 13, 14]  # its copyright and licence go with it
    options.layout_features = []
    options.drop_tables += ["FFTM", "GDEF", "GPOS", "GSUB", "kern"]
    font = subset.load_font(io.BytesIO(_font_bytes(stem)), options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=unicodes | codes | {0xF000 + c for c in codes})
    subsetter.subset(font)
    out = io.BytesIO()
    subset.save_font(font, out, options)
    return out.getvalue()


@cache
def _metrics(stem: str) -> tuple[dict[int, int], dict[str, object]]:
    """Advance widths by code point (1/1000 em) and the descriptor's numbers."""
    from fontTools.ttLib import TTFont

    font = TTFont(io.BytesIO(_font_bytes(stem)))
    upm = font["head"].unitsPerEm
    k = 1000.0 / upm
    cmap = font.getBestCmap()
    hmtx = font["hmtx"]
    widths = {cp: round(hmtx[glyph][0] * k) for cp, glyph in cmap.items()}
    head, hhea, post, os2 = font["head"], font["hhea"], font["post"], font["OS/2"]
    numbers: dict[str, object] = {
        "bbox": [round(v * k) for v in (head.xMin, head.yMin, head.xMax, head.yMax)],
        "ascent": round(hhea.ascent * k),
        "descent": round(hhea.descent * k),
        "cap": round(getattr(os2, "sCapHeight", hhea.ascent) * k),
        "italic": float(post.italicAngle),
        "fixed": bool(post.isFixedPitch),
        "bold": "Bold" in stem,
    }
    return widths, numbers


def _tag(stem: str, unicodes: Iterable[int]) -> str:
    digest = hashlib.sha256((stem + ",".join(map(str, sorted(unicodes)))).encode()).digest()
    return "".join(chr(ord("A") + b % 26) for b in digest[:6])


def _to_unicode(by_code: Mapping[int, str]) -> bytes:
    lines = [
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap",
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
        "/CMapName /Adobe-Identity-UCS def /CMapType 2 def",
        "1 begincodespacerange <00> <FF> endcodespacerange",
    ]
    items = sorted((c, t) for c, t in by_code.items() if t)
    for start in range(0, len(items), 100):
        chunk = items[start : start + 100]
        lines.append(f"{len(chunk)} beginbfchar")
        lines += [f"<{c:02X}> <{t.encode('utf-16-be').hex().upper()}>" for c, t in chunk]
        lines.append("endbfchar")
    lines += ["endcmap CMapName currentdict /CMap defineresource pop end end"]
    return "\n".join(lines).encode("ascii")


def fill_simple_truetype(
    pdf: pikepdf.Pdf,
    font: Dictionary,
    stem: str,
    encoding: object,
    codes: Iterable[int],
    *,
    widths: Array | None = None,
    first_char: int | None = None,
    shared: dict[tuple[str, frozenset[int]], pikepdf.Object] | None = None,
) -> None:
    """Make ``font`` (a dictionary in ``pdf``) the shipped font ``stem`` as a simple TrueType
    font for ``codes`` under ``encoding`` (kept as it is): the glyphs those codes name subset
    into it, its widths (``widths`` from ``first_char`` where the text was laid out with its
    own), a descriptor and a ToUnicode map."""
    symbolic = stem == DINGBATS
    if symbolic:  # its own built-in encoding, whatever the dictionary says
        by_code = {c: chr(ZAPF_UNICODE[c]) for c in sorted(set(codes)) if c in ZAPF_UNICODE}
    else:
        names = code_names(encoding)
        by_code = {c: _unicode(names[c]) for c in sorted(set(codes)) if 0 <= c < 256}
    unicodes = frozenset(ord(t) for t in by_code.values() if len(t) == 1)
    own, numbers = _metrics(stem)
    tag = _tag(stem, unicodes)
    # one subset's file and descriptor serve every font of the document that uses it
    descriptor = shared.get((stem, unicodes)) if shared is not None else None
    if descriptor is None:
        data = _subset(stem, unicodes, frozenset(by_code) if symbolic else frozenset())
        file = pdf.make_stream(data)
        file.Length1 = len(data)
        flags = (
            4 if symbolic else 32 | (1 if numbers["fixed"] else 0) | (2 if "Serif" in stem else 0)
        )
        if numbers["italic"]:
            flags |= 64
        descriptor = pdf.make_indirect(
            Dictionary(
                Type=Name.FontDescriptor,
                FontName=Name(f"/{tag}+{stem}"),
                Flags=flags,
                FontBBox=Array(list(numbers["bbox"])),  # type: ignore[call-overload]
                ItalicAngle=numbers["italic"],
                Ascent=numbers["ascent"],
                Descent=numbers["descent"],
                CapHeight=numbers["cap"],
                StemV=120 if numbers["bold"] else 80,
                FontFile2=file,
            )
        )
        if shared is not None:
            shared[(stem, unicodes)] = descriptor
    for key in list(font.keys()):
        if key not in ("/Type", "/Encoding", "/Widths", "/FirstChar", "/LastChar", "/ToUnicode"):
            del font[key]
    font.Type = Name.Font
    font.Subtype = Name.TrueType
    font.BaseFont = Name(f"/{tag}+{stem}")
    font.FontDescriptor = descriptor
    if symbolic:
        if "/Encoding" in font:  # a symbolic TrueType font's codes are its cmap's
            del font["/Encoding"]
    elif encoding not in (Name.WinAnsiEncoding, Name.MacRomanEncoding):
        # the encoding said as a TrueType font must say it (PDF/A 6.2.11.6): WinAnsi, and
        # the differences from it by glyph name; a code the source's encoding leaves empty
        # draws a space, not WinAnsi's glyph
        differences: list[object] = []
        win = winansi_names()
        for c, name in enumerate(names):
            if c < 32 or name == win[c]:
                continue
            differences += [c, Name(f"/{'space' if name == '.notdef' else name}")]
        font.Encoding = Dictionary(
            Type=Name.Encoding, BaseEncoding=Name.WinAnsiEncoding, Differences=Array(differences)
        )
    if widths is None or first_char is None:
        first, last = (min(by_code), max(by_code)) if by_code else (32, 32)
        font.FirstChar, font.LastChar = first, last
        font.Widths = Array(
            [
                own.get(ord(by_code[c]), 0) if len(by_code.get(c, "")) == 1 else 0
                for c in range(first, last + 1)
            ]
        )
    if "/ToUnicode" not in font:
        font.ToUnicode = pdf.make_stream(_to_unicode(by_code))


def embedded(font: object) -> bool:
    """Whether a font dictionary carries its own glyphs (or draws them: Type 3)."""
    if not isinstance(font, Dictionary):
        return True
    if font.get("/Subtype") == Name.Type3:
        return True
    if font.get("/Subtype") == Name.Type0:
        kids = font.get("/DescendantFonts")
        if not isinstance(kids, Array) or len(kids) == 0:
            return False
        font = kids[0]
        if not isinstance(font, Dictionary):
            return False
    descriptor = font.get("/FontDescriptor")
    return isinstance(descriptor, Dictionary) and any(
        k in descriptor for k in ("/FontFile", "/FontFile2", "/FontFile3")
    )
