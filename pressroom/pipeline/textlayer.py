"""The invisible text layer: each word in render mode 3, glyphless font, scaled to its box."""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from importlib import resources

import pikepdf
from pikepdf import Array, Dictionary, Name

from pressroom.models import Word

FONT_NAME = "/PressroomGlyphless"
# Every glyph of the glyphless font is 500 units wide (DW below); the width of a word at size 1.
_CHAR_WIDTH = 0.5

_TO_UNICODE = b"""/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def
/CMapName /Adobe-Identity-UCS def
/CMapType 2 def
1 begincodespacerange
<0000> <FFFF>
endcodespacerange
1 beginbfrange
<0000> <FFFF> <0000>
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end
"""


def glyphless_font(pdf: pikepdf.Pdf) -> pikepdf.Object:
    """Tesseract's glyphless TrueType as a Type0 font whose CIDs are Unicode code points."""
    ttf = resources.files("pressroom").joinpath("fonts/glyphless.ttf").read_bytes()
    font_file = pdf.make_stream(ttf)
    font_file.Length1 = len(ttf)
    # Every CID draws glyph 1, the one blank glyph.
    cid_to_gid = pdf.make_stream(zlib.compress(b"\x00\x01" * 65536, 9))
    cid_to_gid.Filter = Name.FlateDecode
    descriptor = pdf.make_indirect(
        Dictionary(
            Type=Name.FontDescriptor,
            FontName=Name("/GlyphLessFont"),
            Flags=5,
            FontBBox=Array([0, 0, 500, 1000]),
            ItalicAngle=0,
            Ascent=1000,
            Descent=-1,
            CapHeight=1000,
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
            ToUnicode=pdf.make_stream(_TO_UNICODE),
        )
    )


def _encode(text: str) -> bytes:
    # Two bytes per character; characters outside the BMP have no CID in this font.
    return b"".join(ord(c).to_bytes(2, "big") for c in text if ord(c) < 0x10000)


def _num(v: float) -> str:
    s = f"{v:.3f}".rstrip("0").rstrip(".")
    return "0" if s in ("", "-0") else s


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
    """
    if not words:
        return b""
    sx, sy = scale
    ox, oy = origin
    out = [b"q BT\n3 Tr\n"]
    # One text matrix per line, turned to the line's baseline; words then step along it with
    # Td. Extractors (PDFium, poppler) keep such a line together even on a skewed scan, where
    # one matrix per word made them break lines apart or split words.
    line_start: tuple[float, float] | None = None
    line_id: int | None = None
    cos = sin = 0.0
    for i, w in enumerate(words):
        chars = "".join(c for c in w.text if ord(c) < 0x10000)
        if not chars:
            continue
        last_in_line = i + 1 == len(words) or words[i + 1].line != w.line
        size = max(w.size * sy, 0.5)
        advance = w.advance * sx
        natural = len(chars) * _CHAR_WIDTH * size
        stretch = 100.0 * advance / natural if natural > 0 else 100.0
        x = ox + w.origin[0] * sx
        y = oy + (frame_height_px - w.origin[1]) * sy
        if line_id != w.line or line_start is None:
            line_id = w.line
            th = math.radians(w.angle)
            cos, sin = math.cos(th), math.sin(th)
            move = f"{_num(cos)} {_num(sin)} {_num(-sin)} {_num(cos)} {_num(x)} {_num(y)} Tm"
        else:
            # the step from the previous word's origin, in the line's turned frame
            dx, dy = x - line_start[0], y - line_start[1]
            move = f"{_num(dx * cos + dy * sin)} {_num(-dx * sin + dy * cos)} Td"
        line_start = (x, y)
        # A space after the word (scaled like it) lets every extractor see the word boundary.
        payload = _encode(chars if last_in_line else chars + " ")
        out.append(
            f"{font} {_num(size)} Tf {_num(stretch)} Tz {move} <{payload.hex()}> Tj\n".encode()
        )
    out.append(b"ET Q\n")
    return b"".join(out)
