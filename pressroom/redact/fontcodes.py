"""A font's codes read as text, the way a viewer's text extraction reads them: the font's
ToUnicode CMap first (its code space ranges, bfchar and bfrange), then its encoding (a
predefined one with its ``/Differences``, or glyph names read as the Adobe Glyph List spells
them). ``redact.fonttext`` walks the content streams and decodes each string through these.
Pure parsing."""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterator

import pikepdf
from pikepdf import Array, Dictionary, Name

from pressroom.engines.streams import TooBig, decoded

MAX_CMAP_BYTES = 4 * 1024 * 1024  # a larger CMap is not read: its text counts as unreadable


class Font:
    """How one font's codes read as text."""

    def __init__(
        self,
        lengths: CodeSpace,
        unicode: CMap | None,
        simple: dict[int, str] | None,
    ) -> None:
        self.lengths = lengths
        self.unicode = unicode
        self.simple = simple  # code -> text for one-byte fonts; None: a CID font

    @classmethod
    def of(cls, font: Dictionary) -> Font:
        unicode = _cmap(font.get("/ToUnicode"))
        if font.get("/Subtype") == Name.Type0:
            encoding = font.get("/Encoding")
            if isinstance(encoding, pikepdf.Stream):
                data = _bounded(encoding)
                space = CodeSpace.of(data) if data is not None else CodeSpace.two()
            else:
                space = CodeSpace.two()  # Identity-H/V and the UCS-2/UTF-16 CMaps
            return cls(space, unicode, None)
        return cls(CodeSpace.one(), unicode, _simple_encoding(font))

    def decode(self, data: bytes) -> tuple[str, int]:
        """The text ``data`` shows, and how many of its codes could not be read."""
        out: list[str] = []
        unreadable = 0
        if self.lengths.too_many:
            return "", len(data)
        for code, n in self.lengths.split(data):
            text = self.unicode.get(code, n) if self.unicode is not None else None
            if text is None and self.simple is not None:
                text = self.simple.get(code)
            if text is None:
                unreadable += 1
                continue
            out.append(text)
        return "".join(out), unreadable


class CodeSpace:
    """How a font's strings split into codes: by the CMap's code space ranges (bounds of
    equal length, one to four bytes; others are no range at all)."""

    MAX_RANGES = 1024  # a CMap with more is not one any producer writes: its text is unread

    def __init__(self, ranges: list[tuple[bytes, bytes]]) -> None:
        good = [(lo, hi) for lo, hi in ranges if 1 <= len(lo) == len(hi) <= 4]
        self.ranges = good or [(b"\x00\x00", b"\xff\xff")]
        self.too_many = len(good) > self.MAX_RANGES
        # by first byte, the ranges a code starting with it may fall in
        self._by_first: dict[int, list[tuple[bytes, bytes]]] = {}
        for lo, hi in self.ranges[: self.MAX_RANGES]:
            for first in range(lo[0], hi[0] + 1):
                self._by_first.setdefault(first, []).append((lo, hi))
        self._shortest = min(len(lo) for lo, _hi in self.ranges)

    @classmethod
    def one(cls) -> CodeSpace:
        return cls([(b"\x00", b"\xff")])

    @classmethod
    def two(cls) -> CodeSpace:
        return cls([(b"\x00\x00", b"\xff\xff")])

    @classmethod
    def of(cls, data: bytes) -> CodeSpace:
        ranges = []
        for body in re.findall(rb"begincodespacerange(.*?)endcodespacerange", data, re.S):
            codes = [_hex(h) for h in re.findall(rb"<([0-9A-Fa-f\s]*)>", body)]
            ranges += [(codes[i], codes[i + 1]) for i in range(0, len(codes) - 1, 2)]
        return cls(ranges)

    def split(self, data: bytes) -> Iterator[tuple[int, int]]:
        """Each code of ``data`` and its length in bytes; always moves on, one byte at least."""
        i = 0
        while i < len(data):
            for lo, hi in self._by_first.get(data[i], ()):
                n = len(lo)
                chunk = data[i : i + n]
                if len(chunk) == n and all(
                    a <= c <= b for a, c, b in zip(lo, chunk, hi, strict=True)
                ):
                    yield int.from_bytes(chunk, "big"), n
                    i += n
                    break
            else:
                chunk = data[i : i + self._shortest]
                yield int.from_bytes(chunk, "big"), len(chunk)
                i += max(1, self._shortest)


class CMap:
    """A ToUnicode map: single codes and ranges, by code length."""

    def __init__(self) -> None:
        self.chars: dict[tuple[int, int], str] = {}
        self.starts: list[tuple[int, int]] = []  # (length, low), sorted
        self.ranges: list[tuple[int, int, int, bytes | list[str]]] = []

    def get(self, code: int, n: int) -> str | None:
        text = self.chars.get((n, code))
        if text is not None:
            return text
        i = bisect.bisect_right(self.starts, (n, code)) - 1
        if i < 0:
            return None
        length, lo, hi, dest = self.ranges[i]
        if length != n or not lo <= code <= hi:
            return None
        if isinstance(dest, list):
            return dest[code - lo] if code - lo < len(dest) else None
        # the last byte of the destination counts up with the code
        value = int.from_bytes(dest, "big") + (code - lo)
        if value >= 1 << (8 * len(dest)):
            return None  # past what the destination can hold: no character
        return _utf16(value.to_bytes(len(dest), "big"))


def _cmap(obj: object) -> CMap | None:
    if not isinstance(obj, pikepdf.Stream):
        return None
    data = _bounded(obj)
    if data is None:
        return None
    cmap = CMap()
    token = re.compile(rb"<([0-9A-Fa-f\s]*)>|(\[)|(\])|/([^\s/<>\[\]()]+)")
    ranges: list[tuple[int, int, int, bytes | list[str]]] = []
    for kind, body in re.findall(rb"beginbf(char|range)(.*?)endbf(?:char|range)", data, re.S):
        items: list[object] = []
        stack: list[object] | None = None
        for hexed, open_, close, name in (m.groups() for m in token.finditer(body)):
            if open_:
                stack = []
                continue
            if close:
                items.append(stack or [])
                stack = None
                continue
            value: object = (
                _hex(hexed) if hexed is not None else _glyph_text(name.decode("latin-1"))
            )
            if stack is not None:
                stack.append(value)
            else:
                items.append(value)
        step = 2 if kind == b"char" else 3
        for i in range(0, len(items) - step + 1, step):
            src = items[i]
            if not isinstance(src, bytes):
                continue
            n = len(src)
            if step == 2:
                dest = items[i + 1]
                text = _utf16(dest) if isinstance(dest, bytes) else dest
                if isinstance(text, str):
                    cmap.chars[(n, int.from_bytes(src, "big"))] = text
                continue
            hi, dest = items[i + 1], items[i + 2]
            if not isinstance(hi, bytes):
                continue
            lo_code, hi_code = int.from_bytes(src, "big"), int.from_bytes(hi, "big")
            if isinstance(dest, list):
                texts = [_utf16(d) if isinstance(d, bytes) else str(d or "") for d in dest]
                ranges.append((n, lo_code, hi_code, texts))
            elif isinstance(dest, bytes) and dest:
                ranges.append((n, lo_code, hi_code, dest))
    ranges.sort(key=lambda r: (r[0], r[1]))
    cmap.ranges = ranges
    cmap.starts = [(r[0], r[1]) for r in ranges]
    return cmap


def _bounded(stream: pikepdf.Stream) -> bytes | None:
    try:
        return decoded(stream, MAX_CMAP_BYTES)
    except (TooBig, pikepdf.PdfError):
        return None


def _hex(digits: bytes) -> bytes:
    clean = re.sub(rb"\s", b"", digits).decode()
    return bytes.fromhex(clean + "0" * (len(clean) % 2))


def _utf16(raw: bytes) -> str:
    return (
        raw[: len(raw) // 2 * 2].decode("utf-16-be", errors="replace")
        if len(raw) > 1
        else (raw.decode("latin-1"))
    )


# -- simple fonts ---------------------------------------------------------------------------

_BASE = {
    "/WinAnsiEncoding": "cp1252",
    "/MacRomanEncoding": "mac_roman",
    "/StandardEncoding": "latin-1",  # letters and digits sit where ASCII has them
    "/PDFDocEncoding": "latin-1",
    "/MacExpertEncoding": "latin-1",
}


def _simple_encoding(font: Dictionary) -> dict[int, str]:
    encoding = font.get("/Encoding")
    base = "latin-1"  # a font's built-in encoding: as the old byte search read it
    differences: Array | None = None
    if isinstance(encoding, Name):
        base = _BASE.get(str(encoding), base)
    elif isinstance(encoding, Dictionary):
        named = encoding.get("/BaseEncoding")
        if isinstance(named, Name):
            base = _BASE.get(str(named), base)
        found = encoding.get("/Differences")
        differences = found if isinstance(found, Array) else None
    table: dict[int, str] = {}
    for code in range(256):
        char = bytes([code]).decode(base, errors="ignore")
        if char:
            table[code] = char
    if font.get("/Subtype") == Name.Type3:
        table = {}  # a Type 3 font draws only what its encoding names
    if differences is not None:
        code = 0
        for item in differences:
            if isinstance(item, int):  # (pikepdf hands numbers over as Python's)
                code = item
            elif isinstance(item, Name):
                text = _glyph_text(str(item)[1:])
                if text is None:
                    table.pop(code, None)
                else:
                    table[code] = text
                code += 1
    return table


_NAMED = {
    "space": " ",
    "exclam": "!",
    "quotedbl": '"',
    "numbersign": "#",
    "dollar": "$",
    "percent": "%",
    "ampersand": "&",
    "quotesingle": "'",
    "quoteright": "\u2019",
    "quoteleft": "\u2018",
    "parenleft": "(",
    "parenright": ")",
    "asterisk": "*",
    "plus": "+",
    "comma": ",",
    "hyphen": "-",
    "minus": "\u2212",
    "period": ".",
    "slash": "/",
    "colon": ":",
    "semicolon": ";",
    "less": "<",
    "equal": "=",
    "greater": ">",
    "question": "?",
    "at": "@",
    "bracketleft": "[",
    "backslash": "\\",
    "bracketright": "]",
    "asciicircum": "^",
    "underscore": "_",
    "grave": "`",
    "braceleft": "{",
    "bar": "|",
    "braceright": "}",
    "asciitilde": "~",
    "endash": "\u2013",
    "emdash": "\u2014",
    "bullet": "\u2022",
    "quotedblleft": "\u201c",
    "quotedblright": "\u201d",
    "quotesinglbase": "\u201a",
    "quotedblbase": "\u201e",
    "ellipsis": "\u2026",
    "nbspace": "\u00a0",
    "periodcentered": "·",
    "zero": "0",
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "germandbls": "ß",
    "ae": "æ",
    "AE": "Æ",
    "oe": "œ",
    "OE": "Œ",
    "oslash": "ø",
    "Oslash": "Ø",
    "thorn": "þ",
    "Thorn": "Þ",
    "eth": "ð",
    "Eth": "Ð",
    "dotlessi": "\u0131",
    "lslash": "ł",
    "Lslash": "Ł",
    "fi": "fi",
    "fl": "fl",
    "ff": "ff",
    "ffi": "ffi",
    "ffl": "ffl",
    "section": "§",
    "paragraph": "¶",
    "copyright": "©",
    "registered": "®",
    "trademark": "™",
    "degree": "°",
    "sterling": "£",
    "yen": "¥",
    "Euro": "€",
    "euro": "€",
    "cent": "¢",
    "dagger": "†",
    "daggerdbl": "‡",
    "florin": "ƒ",
    "guillemotleft": "«",
    "guillemotright": "»",
    "guilsinglleft": "\u2039",
    "guilsinglright": "\u203a",
    "exclamdown": "¡",
    "questiondown": "¿",
    "multiply": "\u00d7",
    "divide": "÷",
    "dcroat": "đ",
}
_ACCENTS = {
    "acute": "ACUTE",
    "grave": "GRAVE",
    "circumflex": "CIRCUMFLEX",
    "dieresis": "DIAERESIS",
    "tilde": "TILDE",
    "ring": "RING ABOVE",
    "cedilla": "CEDILLA",
    "caron": "CARON",
    "macron": "MACRON",
    "breve": "BREVE",
    "ogonek": "OGONEK",
    "dotaccent": "DOT ABOVE",
    "hungarumlaut": "DOUBLE ACUTE",
    "commaaccent": "CEDILLA",
}
_ACCENTED = re.compile(r"([A-Za-z])(" + "|".join(_ACCENTS) + r")")


def _glyph_text(name: str) -> str | None:
    """A glyph name as the Adobe Glyph List reads it, for the names text is set in; None for
    a name that says nothing (``g42``, ``cid17``, ``a1``)."""
    base = name.split(".", 1)[0]
    if not base:
        return None
    if "_" in base:
        parts = [_glyph_text(p) for p in base.split("_")]
        return None if any(p is None for p in parts) else "".join(p or "" for p in parts)
    if base in _NAMED:
        return _NAMED[base]
    if len(base) == 1 and base.isascii() and base.isalpha():
        return base
    m = re.fullmatch(r"uni((?:[0-9A-F]{4})+)", base)
    if m:
        return "".join(chr(int(m.group(1)[i : i + 4], 16)) for i in range(0, len(m.group(1)), 4))
    m = re.fullmatch(r"u([0-9A-F]{4,6})", base)
    if m and int(m.group(1), 16) <= 0x10FFFF:
        return chr(int(m.group(1), 16))
    m = _ACCENTED.fullmatch(base)
    if m:
        letter, accent = m.groups()
        case = "CAPITAL" if letter.isupper() else "SMALL"
        try:
            return unicodedata.lookup(
                f"LATIN {case} LETTER {letter.upper()} WITH {_ACCENTS[accent]}"
            )
        except KeyError:
            return letter
    return None


class _Raw(Font):
    """Text shown with no font set: its bytes as Latin-1, as the old byte search read them."""

    def __init__(self) -> None:
        super().__init__(CodeSpace.one(), None, {c: chr(c) for c in range(256)})


FALLBACK = _Raw()
UNREADABLE = Font(CodeSpace.one(), None, {})
