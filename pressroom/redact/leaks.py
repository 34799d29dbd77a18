"""The output check for redaction: three independent readings must find no forbidden value.

PDFium reads the text as a viewer would; the pikepdf walk reads every object and stream as
bytes (every string, every decoded stream, every string operand of every content stream), in
several encodings; the font walk (``redact.fonttext``) decodes every string operand of every
content stream, drawn or not, through the font it is shown in (ToUnicode, encodings and
``/Differences``, Identity-H and other CMaps, Type 3), and counts what it cannot read. Values
are compared normalised: case and accents folded, no spacing or punctuation. Reports say which
parser and how many, never the value.
"""

from __future__ import annotations

import re
import urllib.parse
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pikepdf

from pressroom.engines import pdfium
from pressroom.engines.pdfstr import text_of
from pressroom.redact.fonttext import document_text
from pressroom.redact.plan import normalise


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


def _hits(text: str, wanted: list[str]) -> int:
    squashed = normalise(text)
    return sum(1 for v in wanted if v in squashed)


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
    squashed = normalise(text)
    return any(len(v) >= 3 and v in squashed for v in (normalise(v) for v in values))


def find_leaks(path: Path, values: Iterable[str]) -> list[Leak]:
    wanted = sorted({v for v in (normalise(v) for v in values) if len(v) >= 3})
    if not wanted:
        return []
    leaks: list[Leak] = []
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
                data = bytes(obj.read_raw_bytes())
                n = max(_hits(t, wanted) for t in _decodings(data))
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
                if _is_cmap(data) and _identity_cmap(data):
                    # code numbers mapped to themselves (our own text layer's map): read as
                    # text they spell digit runs, never text
                    n = 0
                else:
                    n = max(_hits(t, wanted) for t in _decodings(data))
                    n = max(n, _content_strings_hits(obj, wanted))
                    if _is_cmap(data):
                        n = max(n, _cmap_hits(data, wanted))
                if n:
                    leaks.append(Leak("pikepdf-walk", "stream", n))
            n = _object_strings_hits(obj, wanted)
            if n:
                leaks.append(Leak("pikepdf-walk", "object", n))
        n = _object_strings_hits(pdf.trailer, wanted)
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


def _cmap_hits(data: bytes, wanted: list[str]) -> int:
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


def name_text(name: str) -> str:
    """A name as the text it spells: ``/Jane#20Whitfield`` is "Jane Whitfield"."""
    raw = re.sub(rb"#([0-9A-Fa-f]{2})", lambda m: bytes([int(m.group(1), 16)]), name.encode())
    return raw.decode("utf-8", errors="replace")


def _object_strings_hits(obj: object, wanted: list[str], depth: int = 0) -> int:
    """Strings and names held directly in an object, keys included (indirect children are
    walked on their own)."""
    if depth > MAX_NESTING:
        return 1  # fail closed
    if isinstance(obj, pikepdf.String):
        raw = bytes(obj)
        said = text_of(obj)
        # a web address's %xx and + read as what they spell, as a browser reads them
        spelt = (urllib.parse.unquote(said), urllib.parse.unquote_plus(said))
        return max(_hits(t, wanted) for t in (said, *spelt, *_decodings(raw)))
    if isinstance(obj, pikepdf.Name):
        named = name_text(text_of(obj))
        return max(_hits(t, wanted) for t in (named, urllib.parse.unquote(named)))
    items: Iterable[object]
    if isinstance(obj, pikepdf.Dictionary | pikepdf.Stream):
        keys = max((_hits(name_text(text_of(k)), wanted) for k in obj), default=0)
        if keys:
            return keys
        items = [v for v in obj.values() if not getattr(v, "is_indirect", False)]
    elif isinstance(obj, pikepdf.Array):
        items = [v for v in obj if not getattr(v, "is_indirect", False)]
    else:
        return 0
    return max((_object_strings_hits(v, wanted, depth + 1) for v in items), default=0)


def _content_strings_hits(stream: pikepdf.Stream, wanted: list[str]) -> int:
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
