"""The leak check reads a JPEG where text can stand in it (issue 46): its marker segments that
carry bytes verbatim, and what lies before SOI and after EOI, never the entropy-coded pixels,
which spell short values by chance on every scanned page. A JPEG that is not a clean marker
sequence is searched whole. Work is counted in bytes searched, never timed."""

from __future__ import annotations

import io
import random
import re
import unicodedata
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path

import pikepdf
import pytest
from pikepdf import Array, Dictionary, Name
from PIL import Image

from pressroom.redact import leaks
from pressroom.redact.leaks import find_leaks, jpeg_text_spans
from pressroom.redact.plan import normalise

NAME = "Whitfield"


def _jpeg(size: tuple[int, int] = (96, 96), **save: object) -> bytes:
    """A greyscale JPEG with grain, as a scanner writes one (fixed seed: the same bytes)."""
    random.seed(46)
    image = Image.new("L", size)
    image.putdata([random.randrange(256) for _ in range(size[0] * size[1])])
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=85, **save)
    return buffer.getvalue()


def _segment(marker: int, payload: bytes) -> bytes:
    return bytes([0xFF, marker]) + (len(payload) + 2).to_bytes(2, "big") + payload


def _after_soi(jpeg: bytes, segment: bytes) -> bytes:
    assert jpeg[:2] == b"\xff\xd8"
    return jpeg[:2] + segment + jpeg[2:]


def _scan_data(jpeg: bytes) -> tuple[int, int]:
    """Where the entropy-coded data of the (single) scan starts and ends."""
    sos = jpeg.index(b"\xff\xda")
    start = sos + 2 + int.from_bytes(jpeg[sos + 2 : sos + 4], "big")
    return start, jpeg.rindex(b"\xff\xd9")


def _in_scan_data(jpeg: bytes, planted: bytes) -> bytes:
    """``planted`` written over the middle of the entropy-coded data (no 0xFF next to it, so
    the marker sequence stays clean; the pixels there change, nothing else)."""
    start, end = _scan_data(jpeg)
    at = (start + end) // 2
    while b"\xff" in jpeg[at - 1 : at + len(planted) + 1]:
        at += 1
    assert at + len(planted) < end
    return jpeg[:at] + planted + jpeg[at + len(planted) :]


def _pdf(path: Path, data: bytes, filters: list[str] | None = None) -> Path:
    """One page drawing one greyscale image stored as ``data`` under ``filters``."""
    pdf = pikepdf.Pdf.new()
    image = pdf.make_stream(data)
    image.Type, image.Subtype = Name.XObject, Name.Image
    image.Width = image.Height = 96
    image.ColorSpace, image.BitsPerComponent = Name.DeviceGray, 8
    names = [Name(f) for f in filters or ["/DCTDecode"]]
    image.Filter = names[0] if len(names) == 1 else Array(names)
    pdf.pages.append(
        pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, 96, 96]),
                Resources=Dictionary(XObject=Dictionary(Im0=image)),
                Contents=pdf.make_stream(b"q 96 0 0 96 0 0 cm /Im0 Do Q"),
            )
        )
    )
    pdf.save(path)
    return path


def _image_leaks(path: Path, values: list[str]) -> list[leaks.Leak]:
    return [x for x in find_leaks(path, values) if x.where == "image"]


XMP = (
    b"http://ns.adobe.com/xap/1.0/\x00<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF>"
    b"<rdf:Description "
    b"xmlns:dc='http://purl.org/dc/elements/1.1/'><dc:creator>Ann Whitfield</dc:creator>"
    b"</rdf:Description></rdf:RDF></x:xmpmeta>"
)

HIDDEN: dict[str, Callable[[bytes], bytes]] = {
    "COM segment": lambda j: _after_soi(j, _segment(0xFE, b"scan of Ann Whitfield")),
    "APP1 XMP": lambda j: _after_soi(j, _segment(0xE1, XMP)),
    "unknown APP11": lambda j: _after_soi(j, _segment(0xEB, b"vendor\x00Whitfield")),
    "reserved JPG5 segment": lambda j: _after_soi(j, _segment(0xF5, b"Whitfield")),
    "UTF-16 in a COM segment": lambda j: _after_soi(
        j, _segment(0xFE, "Ann Whitfield".encode("utf-16-be"))
    ),
    "after EOI": lambda j: j + b"Ann Whitfield",
    "after EOI, a second picture's comment": lambda j: (
        j + _after_soi(j, _segment(0xFE, b"Whitfield"))
    ),
    "before SOI": lambda j: b"Whitfield\n" + j,
    "EXIF by Pillow": lambda j: _jpeg(exif=_exif()),
    "comment by Pillow": lambda j: _jpeg(comment=b"photo of Ann Whitfield"),
}


def _exif() -> bytes:
    exif = Image.Exif()
    exif[0x013B] = "Ann Whitfield"  # Artist
    return exif.tobytes()


@pytest.mark.parametrize("place", sorted(HIDDEN))
def test_a_value_where_a_jpeg_carries_text_is_still_caught(tmp_path: Path, place: str) -> None:
    data = HIDDEN[place](_jpeg())
    assert jpeg_text_spans(data) is not None  # read as a clean JPEG, not by the fallback
    assert _image_leaks(_pdf(tmp_path / "p.pdf", data), [NAME])


def test_a_jpeg_under_flate_is_read_through_its_filter(tmp_path: Path) -> None:
    """Before: the deflated bytes were searched, where no comment can be read."""
    flat = io.BytesIO()
    Image.new("L", (96, 96), 200).save(flat, "JPEG")  # compressible: no stored block
    data = zlib.compress(_after_soi(flat.getvalue(), _segment(0xFE, b"Ann Whitfield")), 9)
    assert NAME.encode() not in data
    src = _pdf(tmp_path / "p.pdf", data, ["/FlateDecode", "/DCTDecode"])
    assert _image_leaks(src, [NAME])


@pytest.mark.parametrize("filters", [["/Unknown", "/DCTDecode"], ["/DCTDecode", "/DCTDecode"]])
def test_a_jpeg_under_a_filter_nobody_applies_is_searched_whole(
    tmp_path: Path, filters: list[str]
) -> None:
    data = _in_scan_data(_jpeg(), NAME.encode())
    assert _image_leaks(_pdf(tmp_path / "p.pdf", data, filters), [NAME])


def _drop_eoi(j: bytes) -> bytes:
    return j[: j.rindex(b"\xff\xd9")]


def _app0_length(j: bytes, length: int) -> bytes:
    assert j[2:4] == b"\xff\xe0"
    return j[:4] + length.to_bytes(2, "big") + j[6:]


MALFORMED: dict[str, Callable[[bytes], bytes]] = {
    "truncated in the scan data": lambda j: j[: (_scan_data(j)[0] + _scan_data(j)[1]) // 2 + 40],
    "no EOI": _drop_eoi,
    "a length past the end": lambda j: _app0_length(j, 0xFFF0),
    "a length under two": lambda j: _app0_length(j, 1),
    "bytes between segments": lambda j: j[:2] + b"junk" + j[2:],
    "a second SOI outside the scan": lambda j: j[:2] + b"\xff\xd8" + j[2:],
    "a restart marker outside the scan": lambda j: j[:2] + b"\xff\xd3" + j[2:],
    "no SOI at all": lambda j: j[2:],
    "the end inside a segment header": lambda j: _drop_eoi(j) + b"\xff\xfe\x00",
    "the end in fill bytes": lambda j: _drop_eoi(j) + b"\xff\xff",
}


@pytest.mark.parametrize("damage", sorted(MALFORMED))
def test_a_jpeg_that_does_not_parse_is_searched_whole(tmp_path: Path, damage: str) -> None:
    data = MALFORMED[damage](_in_scan_data(_jpeg(), NAME.encode()))
    assert NAME.encode() in data
    assert jpeg_text_spans(data) is None
    assert _image_leaks(_pdf(tmp_path / "p.pdf", data), [NAME])


def test_entropy_data_that_spells_a_short_name_is_not_a_leak(tmp_path: Path) -> None:
    """Before: a scanned page whose compressed pixels held "duc" (or "van", "tran": on
    nearly every 300-dpi page) was held REDACTION_LEAK for nothing."""
    data = _in_scan_data(_jpeg(), b"xDuCx")
    assert jpeg_text_spans(data) is not None
    src = _pdf(tmp_path / "p.pdf", data)
    assert find_leaks(src, ["Duc", "Anh Duc"]) == []
    # the same bytes in a comment are a leak
    src = _pdf(tmp_path / "c.pdf", _after_soi(data, _segment(0xFE, b"xDuCx")))
    assert _image_leaks(src, ["Duc"])


def test_a_jpx_stream_is_still_searched_whole(tmp_path: Path) -> None:
    src = _pdf(tmp_path / "p.pdf", b"\x00\x00\x00\x0cjP  \r\n\x87\n" + b"Whitfield", ["/JPXDecode"])
    assert _image_leaks(src, [NAME])


def test_a_scan_page_is_searched_for_its_metadata_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bytes the leak check reads as text on a one-page scan: the page's JPEG segments
    (here JFIF and EOI, 20 bytes) and its small objects, not its 100 KB of pixels."""
    jpeg = _jpeg((400, 520))
    assert len(jpeg) > 100_000
    src = _pdf(tmp_path / "scan.pdf", jpeg)
    searched: list[int] = []
    real = leaks._decodings

    def counting(data: bytes) -> Iterable[str]:
        searched.append(len(data))
        return real(data)

    monkeypatch.setattr(leaks, "_decodings", counting)
    find_leaks(src, ["Duc", NAME])
    spans = jpeg_text_spans(jpeg)
    assert spans is not None and sum(map(len, spans)) == 20  # APP0 (JFIF) 18, EOI 2
    assert sum(searched) < 1_000  # before: over len(jpeg), every byte five ways


def _normalise_slow(text: str) -> str:
    """``plan.normalise`` as it was before its ASCII path."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in decomposed if not unicodedata.combining(c))
    return re.sub(r"[\W_]+", "", kept.casefold())


def test_normalise_ascii_path_gives_what_the_full_path_gives() -> None:
    rng = random.Random(46)
    tricky = (
        "\u00df\u0130\u0131\ufb01\u01c4\u212a\u212b\u00c5\u00e9\u00e8\u0301\u0327_"
        "\uff0d\uff11\u00b2\u2163\u03a3\u03c3\u03c2\u00c6\u0153\u00a0\u200b\u2028"
        "\uff21\uff5a\u0414\u0436\u4e2d\u6587\u0663\u0660\u1e9e\u2126"
    )
    samples = [
        "".join(map(chr, range(128))),
        "Ann Whitfield, 12 Quince Lane_Apt #4",
        "",
        "___",
        *(
            "".join(chr(rng.randrange(128)) for _ in range(rng.randrange(1, 40)))
            for _ in range(3000)
        ),
        *(
            "".join(chr(rng.randrange(256)) for _ in range(rng.randrange(1, 40)))
            for _ in range(2000)
        ),
        *(
            "".join(rng.choice(tricky + "abcXYZ09 .-_") for _ in range(rng.randrange(1, 20)))
            for _ in range(2000)
        ),
        *(
            "".join(chr(rng.randrange(0x3000)) for _ in range(rng.randrange(1, 20)))
            for _ in range(2000)
        ),
        bytes(range(256)).decode("latin-1"),
        _jpeg().decode("latin-1"),
    ]
    ascii_seen = 0
    for text in samples:
        assert normalise(text) == _normalise_slow(text), ascii(text)
        ascii_seen += text.isascii()
    assert ascii_seen > 3000
