"""Font metrics straight from the TrueType tables, so scans (Pillow) and born-digital PDFs
(an embedded Type0 font) put every glyph in the same place and the ground truth is exact."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from PIL import ImageFont

from pressroom.synth import find_font

FONT_FILES = {
    "sans": "DejaVuSans.ttf",
    "sans-bold": "DejaVuSans-Bold.ttf",
    "serif": "DejaVuSerif.ttf",
    "serif-bold": "DejaVuSerif-Bold.ttf",
    "mono": "DejaVuSansMono.ttf",
}


@dataclass(frozen=True)
class Font:
    key: str
    path: Path
    data: bytes
    units: int
    ascent: float  # of the em, positive
    descent: float  # of the em, positive (below the baseline)
    cmap: dict[int, int]
    advances: tuple[int, ...]

    def gid(self, char: str) -> int:
        g = self.cmap.get(ord(char), 0)
        if g == 0 and not char.isspace():
            raise ValueError(f"{self.path.name} has no glyph for {char!r}")
        return g

    def advance(self, char: str) -> float:
        """Advance of ``char`` in thousandths of the em."""
        g = self.gid(char)
        return self.advances[min(g, len(self.advances) - 1)] * 1000.0 / self.units

    def width(self, text: str, size: float) -> float:
        return sum(self.advance(c) for c in text) * size / 1000.0

    def covers(self, text: str) -> bool:
        return all(c.isspace() or ord(c) in self.cmap for c in text)


def _tables(data: bytes) -> dict[str, tuple[int, int]]:
    count = struct.unpack_from(">H", data, 4)[0]
    out: dict[str, tuple[int, int]] = {}
    for i in range(count):
        tag, _sum, offset, length = struct.unpack_from(">4sIII", data, 12 + 16 * i)
        out[tag.decode("latin-1")] = (offset, length)
    return out


def _cmap(data: bytes, offset: int) -> dict[int, int]:
    """The Unicode BMP subtable (format 4) of a TrueType ``cmap``."""
    count = struct.unpack_from(">H", data, offset + 2)[0]
    sub = None
    for i in range(count):
        platform, encoding, where = struct.unpack_from(">HHI", data, offset + 4 + 8 * i)
        if (platform, encoding) in ((3, 1), (0, 3)) and struct.unpack_from(
            ">H", data, offset + where
        )[0] == 4:
            sub = offset + where
            break
    if sub is None:
        raise ValueError("no format 4 Unicode cmap")
    segments = struct.unpack_from(">H", data, sub + 6)[0] // 2
    ends = struct.unpack_from(f">{segments}H", data, sub + 14)
    starts_at = sub + 16 + 2 * segments
    starts = struct.unpack_from(f">{segments}H", data, starts_at)
    deltas = struct.unpack_from(f">{segments}h", data, starts_at + 2 * segments)
    ranges_at = starts_at + 4 * segments
    ranges = struct.unpack_from(f">{segments}H", data, ranges_at)
    out: dict[int, int] = {}
    for i in range(segments):
        for code in range(starts[i], ends[i] + 1):
            if code == 0xFFFF:
                continue
            if ranges[i] == 0:
                g = (code + deltas[i]) & 0xFFFF
            else:
                at = ranges_at + 2 * i + ranges[i] + 2 * (code - starts[i])
                g = struct.unpack_from(">H", data, at)[0]
                if g:
                    g = (g + deltas[i]) & 0xFFFF
            if g:
                out[code] = g
    return out


@cache
def font(key: str) -> Font:
    path = find_font(FONT_FILES[key])
    data = path.read_bytes()
    tables = _tables(data)
    units = struct.unpack_from(">H", data, tables["head"][0] + 18)[0]
    hhea = tables["hhea"][0]
    ascender, descender = struct.unpack_from(">hh", data, hhea + 4)
    metrics = struct.unpack_from(">H", data, hhea + 34)[0]
    hmtx = tables["hmtx"][0]
    advances = tuple(struct.unpack_from(">H", data, hmtx + 4 * i)[0] for i in range(metrics))
    return Font(
        key,
        path,
        data,
        units,
        ascender / units,
        -descender / units,
        _cmap(data, tables["cmap"][0]),
        advances,
    )


def pick(face: str, text: str) -> Font:
    """The face, or DejaVu Sans where the face has no glyph (Sans Mono has no Vietnamese)."""
    f = font(face)
    return f if f.covers(text) else font("sans")


@cache
def pillow_font(key: str, px: float) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(font(key).path), px)
