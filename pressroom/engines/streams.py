"""PDF streams decoded under a byte cap: a few kilobytes of Flate can inflate to gigabytes, and
qpdf and Pillow decode a whole stream into memory before anyone can look at its size.

Flate is inflated in chunks with ``max_length`` and stopped one byte past the cap; LZW and
RunLength are decoded here (small, old streams only); the ASCII filters' output size is known
from their input. Also the sizes image decoders really allocate, read from JPEG and JPEG 2000
headers without decoding them.
"""

from __future__ import annotations

import base64
import binascii
import zlib

import pikepdf

from pressroom.engines.pdfstr import text_of

CHUNK = 1 << 22  # compressed bytes fed to the inflater at a time
# LZW and RunLength are decoded here in Python (one step per code): cheap for the small
# content streams of old PDFs that use them, slow for a hostile large one, so not past this.
MAX_SLOW_ENCODED = 4 * 1024 * 1024
_WHITE = b"\x00\t\n\x0c\r "


class TooBig(Exception):
    """A stream inflates past the cap it was decoded under."""


def decoded(stream: pikepdf.Stream, limit: int) -> bytes:
    """The stream's data as a content parser gets it; ``TooBig`` as soon as it would pass
    ``limit`` bytes (no more than that is ever held)."""
    data, predicted = _through_filters(stream, limit)
    if predicted:
        # A predictor only shrinks what came out (its tag bytes go), so the full decode is
        # bounded now; operators must be counted on the real bytes.
        try:
            return stream.read_bytes()
        except pikepdf.PdfError:
            return data
    return data


def fits(stream: pikepdf.Stream, limit: int) -> bool:
    """Whether the stream's general filters inflate to ``limit`` bytes or fewer, learnt
    without holding more than that. An image codec's own output is not measured here: that
    is the image's size (``image_pixels``)."""
    filters, _ = _filters(stream)
    if filters and filters[-1] not in _STAGES:
        limit = max(limit, len(stream.read_raw_bytes()))  # compressed: at most as it is
    try:
        _through_filters(stream, limit)
    except TooBig:
        return False
    return True


def _through_filters(stream: pikepdf.Stream, limit: int) -> tuple[bytes, bool]:
    filters, parms = _filters(stream)
    data = stream.read_raw_bytes()
    predicted = False
    for i, (name, parm) in enumerate(zip(filters, parms, strict=False)):
        cap = limit if i == len(filters) - 1 else 2 * limit
        stage = _STAGES.get(name)
        if stage is None:
            break  # an image codec: parsers stop decoding there too
        data = stage(data, cap, parm)
        predictor = parm.get("/Predictor", 1) if isinstance(parm, pikepdf.Dictionary) else 1
        predicted = predicted or (isinstance(predictor, int) and predictor > 1)
    if len(data) > limit:
        raise TooBig
    return data, predicted


def _filters(stream: pikepdf.Stream) -> tuple[list[str], list[pikepdf.Object | None]]:
    raw = stream.get("/Filter")
    names = list(raw) if isinstance(raw, pikepdf.Array) else [] if raw is None else [raw]
    parms_raw = stream.get("/DecodeParms")
    parms: list[pikepdf.Object | None] = (
        list(parms_raw) if isinstance(parms_raw, pikepdf.Array) else [parms_raw] * len(names)
    )
    parms += [None] * (len(names) - len(parms))
    return [text_of(n) for n in names], parms


def _inflate(data: bytes, limit: int, _parm: object) -> bytes:
    out = bytearray()
    inflater = zlib.decompressobj()
    pending = memoryview(data)
    try:
        while True:
            chunk = inflater.unconsumed_tail or pending[:CHUNK]
            if not inflater.unconsumed_tail:
                pending = pending[CHUNK:]
            piece = inflater.decompress(chunk, limit + 1 - len(out))
            out += piece
            if len(out) > limit:
                raise TooBig
            if inflater.eof or (not piece and not chunk):
                break
    except zlib.error:
        pass  # damaged: what came out before the damage is what a renderer gets too
    return bytes(out)


def _lzw(data: bytes, limit: int, parm: object) -> bytes:
    if len(data) > MAX_SLOW_ENCODED:
        raise TooBig
    early = parm.get("/EarlyChange", 1) if isinstance(parm, pikepdf.Dictionary) else 1
    early = 1 if not isinstance(early, int) else early
    out = bytearray()
    table = [bytes([i]) for i in range(256)] + [b"", b""]
    width, buffered, bits = 9, 0, 0
    previous: bytes | None = None
    for byte in data:
        buffered = (buffered << 8) | byte
        bits += 8
        while bits >= width:
            bits -= width
            code = buffered >> bits
            buffered &= (1 << bits) - 1
            if code == 256:
                table, width, previous = table[:258], 9, None
                continue
            if code == 257:
                return bytes(out)
            if code < len(table):
                entry = table[code]
            elif code == len(table) and previous is not None:
                entry = previous + previous[:1]
            else:
                return bytes(out)  # damaged
            out += entry
            if len(out) > limit:
                raise TooBig
            if previous is not None and len(table) < 4096:
                table.append(previous + entry[:1])
            previous = entry
            if len(table) + early >= (1 << width) and width < 12:
                width += 1
    return bytes(out)


def _run_length(data: bytes, limit: int, _parm: object) -> bytes:
    if len(data) > MAX_SLOW_ENCODED:
        raise TooBig
    out = bytearray()
    i = 0
    while i < len(data):
        n = data[i]
        if n == 128:
            break
        if n < 128:
            out += data[i + 1 : i + 2 + n]
            i += n + 2
        else:
            out += data[i + 1 : i + 2] * (257 - n)
            i += 2
        if len(out) > limit:
            raise TooBig
    return bytes(out)


def _hex(data: bytes, limit: int, _parm: object) -> bytes:
    digits = data.split(b">", 1)[0].translate(None, _WHITE)
    if len(digits) // 2 > limit:
        raise TooBig
    if len(digits) % 2:
        digits += b"0"
    try:
        return binascii.unhexlify(digits)
    except binascii.Error:
        return b""


def _a85(data: bytes, limit: int, _parm: object) -> bytes:
    body = data.translate(None, _WHITE)
    if body.startswith(b"<~"):
        body = body[2:]
    body = body.split(b"~>", 1)[0]
    zeros = body.count(b"z")
    if zeros * 4 + (len(body) - zeros) * 4 // 5 > limit:
        raise TooBig
    try:
        return base64.a85decode(body)
    except ValueError:
        return b""


def _identity(data: bytes, limit: int, _parm: object) -> bytes:
    if len(data) > limit:
        raise TooBig
    return data


_STAGES = {
    "/FlateDecode": _inflate,
    "/Fl": _inflate,
    "/LZWDecode": _lzw,
    "/LZW": _lzw,
    "/RunLengthDecode": _run_length,
    "/RL": _run_length,
    "/ASCIIHexDecode": _hex,
    "/AHx": _hex,
    "/ASCII85Decode": _a85,
    "/A85": _a85,
    "/Crypt": _identity,
}


# -- images ---------------------------------------------------------------------------------


def image_pixels(image: pikepdf.Stream) -> int:
    """Pixels a decoder allocates for this image: its declared size, or the size coded in a
    JPEG or JPEG 2000 stream where that is larger (decoders believe the codestream)."""
    w, h = image.get("/Width"), image.get("/Height")
    declared = w * h if isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0 else 0
    filters, _ = _filters(image)
    coded = None
    if filters and filters[-1] in ("/DCTDecode", "/DCT", "/JPXDecode"):
        try:
            raw = image.read_raw_bytes() if len(filters) == 1 else b""
        except pikepdf.PdfError:
            raw = b""
        coded = jpeg_size(raw) if filters[-1] != "/JPXDecode" else jpx_size(raw)
    if coded is not None:
        return max(declared, coded[0] * coded[1])
    return declared


def jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a JPEG's frame header, without decoding it."""
    i = 2 if data[:2] == b"\xff\xd8" else -1
    while 0 <= i < len(data) - 9:
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker == 0xFF:
            i += 1
            continue
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h = int.from_bytes(data[i + 5 : i + 7], "big")
            w = int.from_bytes(data[i + 7 : i + 9], "big")
            return w, h
        if marker == 0xDA:
            return None
        i += 2 + length
    return None


def jpx_size(data: bytes) -> tuple[int, int] | None:
    """Width and height from a JPEG 2000 codestream's SIZ segment (inside a JP2 box or bare)."""
    at = data.find(b"\xff\x4f\xff\x51", 0, 1 << 16)
    if at < 0 or len(data) < at + 24:
        return None
    x, y, x0, y0 = (int.from_bytes(data[at + 8 + 4 * k : at + 12 + 4 * k], "big") for k in range(4))
    return max(0, x - x0), max(0, y - y0)
