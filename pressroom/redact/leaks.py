"""The output check for redaction: three independent readings must find no forbidden value.

PDFium reads the text as a viewer would; the pikepdf walk reads every object and stream as
bytes (every string, every decoded stream, every string operand of every content stream), in
several encodings (of a JPEG, every byte but its entropy-coded pixels, which OCR reads: see
``jpeg_text_spans``); the font walk (``redact.fonttext``) decodes every string operand of every
content stream, drawn or not, through the font it is shown in (ToUnicode, encodings and
``/Differences``, Identity-H and other CMaps, Type 3), and counts what it cannot read. Values
are compared normalised: case and accents folded, no spacing or punctuation. Reports say which
parser and how many, never the value.
"""

from __future__ import annotations

import bisect
import re
import urllib.parse
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pikepdf

from pressroom.engines import pdfium
from pressroom.engines.pdfstr import text_of
from pressroom.pipeline.textlayer import BLANK_GLYPH_MAP
from pressroom.redact.fonttext import document_text
from pressroom.redact.plan import ValueSearch, normalise, value_search
from pressroom.redact.syntax import own_entry, syntax_name, xmp_pieces, xmp_stream


@dataclass(frozen=True, slots=True)
class Leak:
    parser: str  # pdfium-text | pikepdf-walk | font-text
    where: str  # page N, object, stream
    count: int
    # codes the font walk could not read as text there (count is then their number): what
    # cannot be read cannot be cleared, so it holds the job as surely as a value found
    unreadable: bool = False


def _decodings(data: bytes) -> Iterable[str]:
    yield data.decode("latin-1")
    for codec in ("utf-16-be", "utf-16-le"):
        for start in (0, 1):
            chunk = data[start:]
            yield chunk[: len(chunk) // 2 * 2].decode(codec, errors="ignore")


def _hits(text: str, wanted: ValueSearch) -> int:
    return len(wanted.found_in(normalise(text)))


def _stream_bytes(stream: pikepdf.Stream) -> bytes:
    try:
        return bytes(stream.read_bytes())
    except pikepdf.PdfError:
        return bytes(stream.read_raw_bytes())  # a filter we cannot decode: search what is there


# the hold of a job whose label carries a found value (``redact.engine``): fixed words, never
# the value
LABEL_HELD = (
    "the job's label carries a value the redaction removes: the label is withheld (the job "
    "shows none, and its download is named by the job id)"
)


def carries_value(text: str | None, values: Iterable[str]) -> bool:
    """Whether ``text`` (a job's label, say) holds any of ``values``, compared as the leak
    check compares them: case and accents folded, no spacing or punctuation, values of three
    letters or digits or more."""
    if not text:
        return False
    return bool(value_search(values).found_in(normalise(text)))


def find_leaks(
    path: Path, values: Iterable[str], producer: str | None = None, chosen: Iterable[str] = ()
) -> list[Leak]:
    """Every reading's leaks. The values are normalised once and searched for through one
    search for the whole document (``plan.ValueSearch``): each text read costs its length
    (a few passes of it while the values are few), never its length times the values (a
    long document has many of both). The file's own syntax is read past (``redact.syntax``:
    standard PDF names, a parsed XMP's standard names, and ``producer``, the Producer this
    output was written with, where it stands exactly as written); the parts of that Producer
    an operator chose (``chosen``: the template's name and version) are searched still, as
    the metadata carries them."""
    wanted = ValueSearch(values)
    if not wanted.values:
        return []
    leaks: list[Leak] = []
    if producer is not None:
        n = max((_hits(t, wanted) for t in chosen if t in producer), default=0)
        if n:
            leaks.append(Leak("pikepdf-walk", "object", n))
    with pdfium.RecyclingDocument(path) as doc:
        for i in range(len(doc)):
            n = _hits(pdfium.page_text(doc, i), wanted)
            if n:
                leaks.append(Leak("pdfium-text", f"page {i + 1}", n))
    with pikepdf.open(path) as pdf:
        for obj in pdf.objects:
            if isinstance(obj, pikepdf.Stream) and _carries_bytes(obj):
                # a JPEG's or JPEG 2000's own segments and boxes (EXIF, comments, XML) are
                # text in the raw bytes; their pixels are checked by OCR
                n = _hits_any(_image_byte_spans(obj), wanted)
                if n:
                    leaks.append(Leak("pikepdf-walk", "image", n))
            if (
                isinstance(obj, pikepdf.Stream)
                and obj.get("/Subtype") != "/Image"
                and obj.get("/Type") not in ("/ObjStm", "/XRef")
            ):
                # (pixels are not text: what a picture shows is checked by OCR, not here; an
                # object stream's objects are walked one by one below, its raw bytes are PDF
                # syntax — "/ToUnicode" is no leak of a name "Unicode")
                data = _stream_bytes(obj)
                pieces = xmp_pieces(data, producer) if xmp_stream(obj) else None
                if pieces is not None:
                    # an XMP packet that parses: its texts, values and names each on its own,
                    # its standard names and wrapper passed over (anything else: its bytes)
                    n = _hits_any((p.encode() for p in pieces), wanted, pieces)
                elif _is_cmap(data) and _identity_cmap(data):
                    # code numbers mapped to themselves (our own text layer's map): read as
                    # text they spell digit runs, never text
                    n = 0
                elif data == BLANK_GLYPH_MAP:
                    # our text layer's font drawing every code as its blank glyph: these exact
                    # bytes and no others, which spell nothing (read as text and parsed as
                    # content, they were most of a one-page scan's leak check)
                    n = 0
                else:
                    n = max(_hits(t, wanted) for t in _decodings(data))
                    n = max(n, _content_strings_hits(obj, wanted))
                    if _is_cmap(data):
                        n = max(n, _cmap_hits(data, wanted))
                if n:
                    leaks.append(Leak("pikepdf-walk", "stream", n))
            n = _object_strings_hits(obj, wanted, producer=producer)
            if n:
                leaks.append(Leak("pikepdf-walk", "object", n))
        n = _object_strings_hits(pdf.trailer, wanted, producer=producer)
        if n:
            leaks.append(Leak("pikepdf-walk", "trailer", n))
        # the third reading: every string operand decoded through its font, drawn or not
        for shown in document_text(pdf):
            n = _hits("".join(shown.text), wanted)
            if n:
                leaks.append(Leak("font-text", shown.where, n))
            if shown.unreadable:
                leaks.append(Leak("font-text", shown.where, shown.unreadable, unreadable=True))
    return leaks


def _is_cmap(data: bytes) -> bool:
    return b"begincmap" in data[:2048] and b"endcmap" in data


_HEX = re.compile(rb"<([0-9A-Fa-f\s]+)>")


_BLOCK = re.compile(rb"beginbf(char|range)(.*?)endbf(?:char|range)", re.S)
_CODE = re.compile(rb"<([0-9A-Fa-f]*)>|(\[)")


def _identity_cmap(data: bytes) -> bool:
    """Every mapping of the CMap maps a code to the same number: it carries no text."""
    blocks = _BLOCK.findall(data)
    for kind, body in blocks:
        codes = []
        for hexed, bracket in _CODE.findall(body):
            if bracket:
                return False  # a range mapped to an array of strings
            codes.append(int(hexed or b"0", 16))
        step = 2 if kind == b"char" else 3
        if len(codes) % step:
            return False
        for i in range(0, len(codes), step):
            if codes[i] != codes[i + step - 1]:
                return False
    return bool(blocks)


def _cmap_hits(data: bytes, wanted: ValueSearch) -> int:
    """What a CMap can carry beyond code numbers: a code that stands for several characters at
    once. Those destinations are decoded and searched, one by one and joined."""
    targets: list[str] = []
    for match in _HEX.finditer(data):
        digits = re.sub(rb"\s", b"", match.group(1)).decode()
        # an odd number of digits is allowed: the last is followed by a 0
        raw = bytes.fromhex(digits + "0" * (len(digits) % 2))
        if len(raw) >= 4 and len(raw) % 2 == 0:
            targets.append(raw.decode("utf-16-be", errors="ignore"))
    if not targets:
        return 0
    return max(_hits(t, wanted) for t in (*targets, "".join(targets)))


MAX_NESTING = 64  # direct objects nested deeper than this hold the job: nothing checks them


def _carries_bytes(stream: pikepdf.Stream) -> bool:
    found = stream.get("/Filter")
    filters = [found] if isinstance(found, pikepdf.Name) else list(found or [])
    return stream.get("/Subtype") == "/Image" and any(
        text_of(f) in ("/DCTDecode", "/JPXDecode") for f in filters
    )


def _hits_any(spans: Iterable[bytes], wanted: ValueSearch, texts: Iterable[str] = ()) -> int:
    """How many values stand in any of ``spans``, each span read in every decoding on its
    own (never joined: the bytes between them are not searched, so joining would make values
    out of pieces that are not side by side), or in any of ``texts``, each on its own."""
    found: set[str] = set()
    for text in texts:
        found |= wanted.found_in(normalise(text))
    for data in spans:
        if data:
            for t in _decodings(data):
                found |= wanted.found_in(normalise(t))
    return len(found)


def _image_byte_spans(stream: pikepdf.Stream) -> list[bytes]:
    """The bytes of an image stream that can carry text. A JPEG's entropy-coded scan data is
    its pixels (read by OCR, like every picture's): searched as text it spells short values by
    chance on every scanned page, so only the JPEG's other bytes are searched. Anything that
    does not read as a clean JPEG, and JPEG 2000, is searched whole (fail closed)."""
    raw = bytes(stream.read_raw_bytes())
    found = stream.get("/Filter")
    named = [found] if isinstance(found, pikepdf.Name) else list(found or [])
    filters = [text_of(f) for f in named]
    if not filters or filters[-1] != "/DCTDecode" or "/DCTDecode" in filters[:-1]:
        return [raw]
    data = raw
    if len(filters) > 1:
        # a JPEG under general filters (Flate, ASCII85...): its segments are in the JPEG
        # those filters give back, not in their compressed bytes
        unwrapped = _under_filters(raw, filters[:-1], stream.get("/DecodeParms"))
        if unwrapped is None:
            return [raw]
        data = unwrapped
    spans = jpeg_text_spans(data)
    return [raw] if spans is None else spans


def _under_filters(raw: bytes, filters: list[str], parms: object) -> bytes | None:
    """``raw`` decoded through ``filters`` (those before a last DCTDecode), or None where they
    take parameters or cannot be decoded. (QPDF decodes a chain only whole, and a JPEG's
    pixels are not wanted: a scratch stream carries the general filters alone.)"""
    if isinstance(parms, pikepdf.Array):
        if any(p is not None for p in list(parms)[: len(filters)]):
            return None
    elif parms is not None:
        return None
    scratch = pikepdf.Pdf.new()
    inner = scratch.make_stream(raw)
    try:
        inner.Filter = pikepdf.Array([pikepdf.Name(f) for f in filters])
        return bytes(inner.read_bytes())
    except (pikepdf.PdfError, ValueError, TypeError):
        return None  # a filter nobody can apply: the raw bytes are searched


# JPEG markers whose segments only code the pixels (frame and scan headers, Huffman,
# arithmetic and quantisation tables, restart interval, line count, hierarchical progression,
# expansion); C8 (JPG) is reserved, so not among them. Every other segment is searched:
# APPn (JFIF, EXIF, XMP, ICC, Adobe...), COM, and any marker nobody defined.
_PIXEL_CODING = frozenset({*range(0xC0, 0xD0)} - {0xC8} | {0xDA, 0xDB, 0xDC, 0xDD, 0xDE, 0xDF})
_SOS, _EOI, _TEM = 0xDA, 0xD9, 0x01


def jpeg_text_spans(data: bytes) -> list[bytes] | None:
    """The parts of a JPEG where text can stand verbatim: anything before SOI, every marker
    segment that is not pixel coding (marker and length included, neighbours joined as they
    stand in the file), and everything after EOI. None where the bytes are not a clean
    sequence of marker segments (no SOI, a length past the end, bytes between segments, a
    marker out of place, no EOI): the caller then searches them all.

    What is skipped is the entropy-coded data after each SOS header, up to the next marker:
    in it 0xFF is followed only by 0x00 (a stuffed byte) or a restart marker."""
    soi = data.find(b"\xff\xd8")
    if soi < 0:
        return None
    keep: list[tuple[int, int]] = [(0, soi)] if soi else []
    pos, end = soi + 2, len(data)
    while True:
        start = pos
        if pos >= end or data[pos] != 0xFF:
            return None  # bytes between segments, or the end before EOI
        while pos < end and data[pos] == 0xFF:
            pos += 1  # fill bytes before a marker
        if pos >= end:
            return None
        marker = data[pos]
        pos += 1
        if marker == _EOI:
            keep.append((start, end))  # the marker and everything after it
            break
        if marker == _TEM:
            continue
        if marker == 0x00 or 0xD0 <= marker <= 0xD8:
            return None  # a stuffed byte, restart or second SOI outside scan data
        if pos + 2 > end:
            return None
        length = int.from_bytes(data[pos : pos + 2], "big")
        if length < 2 or pos + length > end:
            return None
        pos += length
        if marker not in _PIXEL_CODING:
            keep.append((start, pos))
        if marker == _SOS:
            scan_end = _entropy_end(data, pos)
            if scan_end is None:
                return None
            pos = scan_end
    spans: list[tuple[int, int]] = []
    for a, b in keep:
        if spans and spans[-1][1] == a:
            spans[-1] = (spans[-1][0], b)
        elif b > a:
            spans.append((a, b))
    return [data[a:b] for a, b in spans]


def _entropy_end(data: bytes, pos: int) -> int | None:
    """Where the entropy-coded data that starts at ``pos`` ends: the first 0xFF that is
    neither a stuffed byte (0xFF 0x00) nor a restart marker (0xFF 0xD0-0xD7). None when the
    data ends first."""
    while True:
        pos = data.find(b"\xff", pos)
        if pos < 0 or pos + 1 >= len(data):
            return None
        nxt = data[pos + 1]
        if nxt == 0x00 or 0xD0 <= nxt <= 0xD7:
            pos += 2
            continue
        return pos


def name_texts(name: str) -> tuple[str, ...]:
    """A name as every text it may spell (``/Jane#20Whitfield`` is "Jane Whitfield"): its bytes
    as UTF-8 and, where they are not all ASCII, as Latin-1 too (``/Jos#E9Ruiz`` is "JoséRuiz":
    read as UTF-8 alone it was "Jos\ufffdRuiz", no value at all: review R5)."""
    raw = _name_bytes(name)
    utf8 = raw.decode("utf-8", errors="replace")
    return (utf8,) if raw.isascii() else (utf8, raw.decode("latin-1"))


def _name_bytes(name: str) -> bytes:
    return re.sub(rb"#([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), name.encode())


def _object_strings_hits(
    obj: object, wanted: ValueSearch, depth: int = 0, producer: str | None = None
) -> int:
    """Strings and names held directly in an object, keys included (indirect children are
    walked on their own); a standard PDF name, and Pressroom's own Producer and Creator
    (``producer``: this output's), are syntax, not text (``redact.syntax``)."""
    if depth > MAX_NESTING:
        return 1  # fail closed
    if isinstance(obj, pikepdf.String):
        raw = bytes(obj)
        said = text_of(obj)
        # a web address's %xx and + read as what they spell, as a browser reads them
        spelt = (urllib.parse.unquote(said), urllib.parse.unquote_plus(said))
        return max(_hits(t, wanted) for t in (said, *spelt, *_decodings(raw)))
    if isinstance(obj, pikepdf.Name):
        return _name_hits(text_of(obj), wanted)
    items: Iterable[object]
    if isinstance(obj, pikepdf.Dictionary | pikepdf.Stream):
        keys = max((_name_hits(text_of(k), wanted) for k in obj), default=0)
        if keys:
            return keys
        items = [
            v
            for k, v in obj.items()
            if not getattr(v, "is_indirect", False) and not own_entry(k, v, producer)
        ]
    elif isinstance(obj, pikepdf.Array):
        items = [v for v in obj if not getattr(v, "is_indirect", False)]
    else:
        return 0
    return max((_object_strings_hits(v, wanted, depth + 1, producer) for v in items), default=0)


def _name_hits(name: str, wanted: ValueSearch) -> int:
    """The values a name spells, in each of its readings (``name_texts``, and their ``%xx``
    read), unless it is the file's syntax (``_syntax``)."""
    texts = name_texts(name)
    if _syntax(texts[0], wanted):
        return 0
    return max(_hits(t, wanted) for t in (*texts, *map(urllib.parse.unquote, texts)))


def _syntax(name: str, wanted: ValueSearch) -> bool:
    """A standard PDF name (``syntax.syntax_name``) that is not itself a value searched for: a
    value "Ada" inside ``/Metadata`` is the file's syntax, a value "Ruby" that is the whole
    name ``/Ruby`` may be a person's, carried from the source as a resource or colour name
    (review R5), and is searched."""
    if not syntax_name(name):
        return False
    key = normalise(name)
    at = bisect.bisect_left(wanted.values, key)
    return not (at < len(wanted.values) and wanted.values[at] == key)


def _content_strings_hits(stream: pikepdf.Stream, wanted: ValueSearch) -> int:
    """String operands of a content stream, decoded as text (hex UTF-16 in a text layer)."""
    if stream.get("/Subtype") in ("/Image", "/XML") or "/Length1" in stream:
        return 0  # pictures, metadata and fonts are not content streams
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            instructions = pikepdf.parse_content_stream(stream)
    except (pikepdf.PdfError, TypeError, ValueError):
        return 0
    pieces: list[bytes] = []
    names = 0
    for instruction in instructions:
        if not isinstance(instruction, pikepdf.ContentStreamInstruction):
            # an inline image: its bytes are searched with the stream's, its dictionary here
            try:
                names = max(names, _object_strings_hits(instruction.iimage.obj, wanted))
            except (pikepdf.PdfError, ValueError, TypeError, AttributeError):
                names = max(names, 1)  # a dictionary nobody can read holds the job
            continue
        for op in instruction.operands:
            if isinstance(op, pikepdf.String):
                pieces.append(bytes(op))
            elif isinstance(op, pikepdf.Array):
                pieces += [bytes(x) for x in op if isinstance(x, pikepdf.String)]
            elif isinstance(op, pikepdf.Name | pikepdf.Dictionary):
                names = max(names, _object_strings_hits(op, wanted))
    if not pieces:
        return names
    joined = b"".join(pieces)
    return max(names, *(_hits(t, wanted) for t in _decodings(joined)))
