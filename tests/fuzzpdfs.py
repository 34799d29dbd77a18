"""Small PDFs from the suite's own fixtures, and seeded ways to damage them: truncated,
bit-flipped, objects swapped, encryption dictionaries added, the cross-reference table broken,
streams with a wrong /Length, dictionary values of the wrong type. Every seed is one small page
(a few hundred points a side, small pixel sizes), so a case costs a fraction of a second when
it is refused and about a second when it goes through OCR."""

from __future__ import annotations

import io
import random
import re
import warnings
import zlib
from collections.abc import Callable
from pathlib import Path

import pikepdf
from pikepdf import Array, Dictionary, Name, String
from PIL import Image, ImageDraw, ImageFont

from pressroom.synth import find_font
from tests.forms import form_pdf

ROOT = Path(__file__).resolve().parent.parent
PERSON = "Jane Whitfield"
LINES = (f"Dear {PERSON},", "Account 4417 1234 5678 9113", "12 Harbour Road, Leeds LS1 4AB")


def _save(pdf: pikepdf.Pdf, path: Path, *, compact: bool = False) -> Path:
    """Saved readable (no object streams, streams as they are) unless ``compact``: then with
    object streams and a cross-reference stream, so those are damaged too."""
    if compact:
        pdf.save(path, object_stream_mode=pikepdf.ObjectStreamMode.generate, deterministic_id=True)
    else:
        pdf.save(
            path,
            object_stream_mode=pikepdf.ObjectStreamMode.disable,
            compress_streams=False,
            deterministic_id=True,
        )
    return path


def _letter(folder: Path) -> Path:
    """samples/letter.pdf cut to its first lines."""
    with pikepdf.open(ROOT / "samples" / "letter.pdf") as pdf:
        pdf.pages[0].obj.MediaBox = Array([60, 660, 400, 735])
        return _save(pdf, folder / "letter.pdf")


def _subset_font(pdf: pikepdf.Pdf) -> pikepdf.Object:
    """DejaVu Sans cut down to the letters the seeds draw, embedded as TrueType."""
    from fontTools import subset

    font = subset.load_font(str(find_font("DejaVuSans.ttf")), subset.Options())
    try:
        cutter = subset.Subsetter(subset.Options())
        cutter.populate(text="".join(LINES) + "abcdefghijklmnopqrstuvwxyz")
        cutter.subset(font)
        buf = io.BytesIO()
        font.save(buf)
    finally:
        font.close()
    data = buf.getvalue()
    file = pdf.make_stream(zlib.compress(data), Filter=Name.FlateDecode, Length1=len(data))
    descriptor = pdf.make_indirect(
        Dictionary(
            Type=Name.FontDescriptor,
            FontName=Name("/ABCDEF+DejaVuSans"),
            Flags=32,
            FontBBox=Array([-1021, -463, 1793, 1232]),
            ItalicAngle=0,
            Ascent=928,
            Descent=-236,
            CapHeight=729,
            StemV=80,
            FontFile2=file,
        )
    )
    return pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.TrueType,
            BaseFont=Name("/ABCDEF+DejaVuSans"),
            FirstChar=32,
            LastChar=126,
            Widths=Array([600] * 95),
            Encoding=Name.WinAnsiEncoding,
            FontDescriptor=descriptor,
        )
    )


def _text(folder: Path, *, compact: bool) -> Path:
    """A born-digital page in two fonts (Helvetica and an embedded TrueType subset), a
    ToUnicode map, a form XObject and an optional content group."""
    pdf = pikepdf.Pdf.new()
    helv = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name.Helvetica,
            Encoding=Name.WinAnsiEncoding,
        )
    )
    tt = _subset_font(pdf)
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /X def "
        b"1 begincodespacerange <00> <FF> endcodespacerange "
        b"1 beginbfrange <20> <7E> <0020> endbfrange endcmap "
        b"CMapName currentdict /CMap defineresource pop end end"
    )
    tt.ToUnicode = pdf.make_stream(cmap)
    form = pdf.make_stream(
        f"BT /F1 9 Tf 0 0 Td ({LINES[2]}) Tj ET".encode(),
        Type=Name.XObject,
        Subtype=Name.Form,
        BBox=Array([0, 0, 300, 20]),
        Resources=Dictionary(Font=Dictionary(F1=helv)),
    )
    ocg = pdf.make_indirect(Dictionary(Type=Name.OCG, Name=String("Layer")))
    pdf.Root.OCProperties = Dictionary(OCGs=Array([ocg]), D=Dictionary(ON=Array([ocg])))
    ops = (
        f"BT /F1 11 Tf 10 70 Td ({LINES[0]}) Tj ET\n"
        f"/OC /L0 BDC BT /F2 10 Tf 10 50 Td ({LINES[1]}) Tj ET EMC\n"
        "q 1 0 0 1 10 25 cm /X0 Do Q\n"
        "0.5 g 10 10 100 5 re f\n"
    )
    pdf.pages.append(
        pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, 260, 90]),
                Resources=Dictionary(
                    Font=Dictionary(F1=helv, F2=tt),
                    XObject=Dictionary(X0=form),
                    Properties=Dictionary(L0=ocg),
                ),
                Contents=pdf.make_stream(ops.encode()),
            )
        )
    )
    pdf.docinfo.Title = String("A letter")
    name = "text-compact.pdf" if compact else "text.pdf"
    return _save(pdf, folder / name, compact=compact)


def _scan(folder: Path) -> Path:
    """An image-only page (grey JPEG, 150 dpi) and a bilevel Flate one: pages OCR reads."""
    font = ImageFont.truetype(str(find_font("DejaVuSans.ttf")), 22)
    image = Image.new("L", (520, 130), 255)
    draw = ImageDraw.Draw(image)
    for i, line in enumerate(LINES):
        draw.text((10, 8 + 38 * i), line, font=font, fill=0)
    pdf = pikepdf.Pdf.new()
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=80)
    jpeg = pdf.make_stream(
        buf.getvalue(),
        Type=Name.XObject,
        Subtype=Name.Image,
        Width=image.width,
        Height=image.height,
        ColorSpace=Name.DeviceGray,
        BitsPerComponent=8,
        Filter=Name.DCTDecode,
    )
    bilevel = image.convert("1")
    mono = pdf.make_stream(
        zlib.compress(bilevel.tobytes()),
        Type=Name.XObject,
        Subtype=Name.Image,
        Width=image.width,
        Height=image.height,
        ColorSpace=Name.DeviceGray,
        BitsPerComponent=1,
        Decode=Array([1, 0]),
        Filter=Name.FlateDecode,
    )
    w, h = image.width * 72 / 150, image.height * 72 / 150
    for stream in (jpeg, mono):
        pdf.pages.append(
            pikepdf.Page(
                Dictionary(
                    Type=Name.Page,
                    MediaBox=Array([0, 0, w, h]),
                    Resources=Dictionary(XObject=Dictionary(Im0=stream)),
                    Contents=pdf.make_stream(f"q {w:.3f} 0 0 {h:.3f} 0 0 cm /Im0 Do Q".encode()),
                )
            )
        )
    return _save(pdf, folder / "scan.pdf")


def _form(folder: Path) -> Path:
    """tests/forms.py's form (a field without an appearance, a check box, a stamp, hidden
    annotations, a sticky note), cut to the part of the page that holds them."""
    path = form_pdf(folder / "form-full.pdf")
    with pikepdf.open(path) as pdf:
        pdf.pages[0].obj.MediaBox = Array([60, 540, 380, 740])
        out = _save(pdf, folder / "form.pdf")
    path.unlink()
    return out


def _rich(folder: Path) -> Path:
    """What a page can draw besides text in simple fonts: a composite font (Identity-H with a
    ToUnicode map), a Type 3 font, an inline image, a tiling pattern, a shading and a soft
    mask."""
    pdf = pikepdf.Pdf.new()
    tt = _subset_font(pdf)
    descriptor = tt.FontDescriptor
    cid = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.CIDFontType2,
            BaseFont=Name("/ABCDEF+DejaVuSans"),
            CIDSystemInfo=Dictionary(
                Registry=String("Adobe"), Ordering=String("Identity"), Supplement=0
            ),
            FontDescriptor=descriptor,
            DW=600,
            CIDToGIDMap=Name.Identity,
        )
    )
    to_unicode = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Y def "
        b"1 begincodespacerange <0000> <FFFF> endcodespacerange "
        b"2 beginbfchar <0024> <004A> <0025> <0061> endbfchar "
        b"1 beginbfrange <0026> <0030> <0062> endbfrange endcmap "
        b"CMapName currentdict /CMap defineresource pop end end"
    )
    type0 = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type0,
            BaseFont=Name("/ABCDEF+DejaVuSans"),
            Encoding=Name("/Identity-H"),
            DescendantFonts=Array([cid]),
            ToUnicode=pdf.make_stream(to_unicode),
        )
    )
    glyph = pdf.make_stream(b"500 0 0 0 500 500 d1 0 0 500 500 re f")
    type3 = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type3,
            FontBBox=Array([0, 0, 500, 500]),
            FontMatrix=Array([0.001, 0, 0, 0.001, 0, 0]),
            CharProcs=Dictionary(box=glyph),
            Encoding=Dictionary(Type=Name.Encoding, Differences=Array([65, Name.box])),
            FirstChar=65,
            LastChar=65,
            Widths=Array([500]),
        )
    )
    tile = pdf.make_stream(
        b"0 0 4 4 re f",
        PatternType=1,
        PaintType=1,
        TilingType=1,
        BBox=Array([0, 0, 8, 8]),
        XStep=8,
        YStep=8,
        Resources=Dictionary(),
    )
    shading = Dictionary(
        ShadingType=2,
        ColorSpace=Name.DeviceRGB,
        Coords=Array([0, 0, 100, 0]),
        Function=Dictionary(
            FunctionType=2, Domain=Array([0, 1]), C0=Array([1, 1, 1]), C1=Array([0, 0, 1]), N=1
        ),
    )
    mask = pdf.make_stream(
        b"0.5 g 0 0 300 90 re f",
        Type=Name.XObject,
        Subtype=Name.Form,
        BBox=Array([0, 0, 300, 90]),
        Group=Dictionary(S=Name.Transparency, CS=Name.DeviceGray),
    )
    ops = (
        b"q /GS0 gs /Pattern cs /P0 scn 200 60 40 20 re f Q\n"
        b"q 1 0 0 1 200 10 cm /Sh0 sh Q\n"
        b"BT /F1 10 Tf 10 70 Td <0024002500260027> Tj ET\n"
        b"BT /F3 10 Tf 10 50 Td (AAA) Tj ET\n"
        b"BT /F2 10 Tf 10 30 Td (Dear Jane Whitfield,) Tj ET\n"
        b"BT /F2 10 Tf 10 95 Td (The meeting is on Tuesday at the harbour office.) Tj ET\n"
        b"q 20 0 0 10 120 10 cm BI /W 4 /H 2 /CS /G /BPC 8 ID \x00\x40\x80\xff"
        b"\xff\x80\x40\x00 EI Q"
    )
    helv = Dictionary(
        Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica, Encoding=Name.WinAnsiEncoding
    )
    pdf.pages.append(
        pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, 300, 110]),
                Resources=Dictionary(
                    Font=Dictionary(F1=type0, F2=helv, F3=type3),
                    Pattern=Dictionary(P0=tile),
                    Shading=Dictionary(Sh0=shading),
                    ExtGState=Dictionary(
                        GS0=Dictionary(SMask=Dictionary(S=Name.Luminosity, G=mask), ca=0.8)
                    ),
                ),
                Contents=pdf.make_stream(ops),
            )
        )
    )
    return _save(pdf, folder / "rich.pdf")


def seeds(folder: Path) -> list[Path]:
    """The seed PDFs, written into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    return [
        _letter(folder),
        _text(folder, compact=False),
        _text(folder, compact=True),
        _scan(folder),
        _form(folder),
        _rich(folder),
    ]


def image_seeds() -> list[bytes]:
    """Small scans as the other inputs come: PNG, JPEG, a bilevel G4 TIFF, an LZW TIFF and a
    TIFF of two frames."""
    font = ImageFont.truetype(str(find_font("DejaVuSans.ttf")), 16)
    image = Image.new("L", (300, 60), 255)
    ImageDraw.Draw(image).text((5, 20), LINES[0], font=font, fill=0)
    out = []
    for fmt, options in (
        ("PNG", {}),
        ("JPEG", {"quality": 70}),
        ("TIFF", {"compression": "group4"}),
        ("TIFF", {"compression": "tiff_lzw"}),
        ("TIFF", {"save_all": True, "append_images": [image]}),
    ):
        buf = io.BytesIO()
        frame = image.convert("1") if options.get("compression") == "group4" else image
        frame.save(buf, format=fmt, dpi=(150, 150), **options)
        out.append(buf.getvalue())
    return out


def image_mutant(seed_bytes: bytes, case: int) -> tuple[bytes, str]:
    """Case ``case``'s damaged copy of an image: bytes flipped, cut or overwritten."""
    rng = random.Random(case)
    data, done = seed_bytes, []
    for _ in range(rng.choice((1, 1, 2))):
        mutation = rng.choice([flip_bits, flip_bits, truncate, junk_bytes])
        data = mutation(data, rng)
        done.append(mutation.__name__)
    return data, "+".join(done)


# -- mutations: each takes the bytes and a seeded Random, and says what it did ---------------

Mutation = Callable[[bytes, random.Random], bytes]
_OBJ = re.compile(rb"(\d+) (\d+) obj\b")
_LENGTH = re.compile(rb"/Length (\d+)")
_NUMBER = re.compile(rb"(?<![\w./])-?\d+(?:\.\d+)?(?![\w.])")
_NAME = re.compile(rb"/[A-Za-z][A-Za-z0-9]*")
_STARTXREF = re.compile(rb"startxref\s+(\d+)")
_TRAILER = re.compile(rb"trailer\s*<<")
_NAMES = [
    b"/Page",
    b"/Pages",
    b"/Font",
    b"/XObject",
    b"/Image",
    b"/Form",
    b"/FlateDecode",
    b"/DCTDecode",
    b"/LZWDecode",
    b"/RunLengthDecode",
    b"/CCITTFaxDecode",
    b"/JBIG2Decode",
    b"/ASCII85Decode",
    b"/ASCIIHexDecode",
    b"/Crypt",
    b"/Type0",
    b"/Type3",
    b"/TrueType",
    b"/CIDFontType2",
    b"/Identity-H",
    b"/DeviceCMYK",
    b"/Indexed",
    b"/ICCBased",
    b"/Pattern",
    b"/Separation",
    b"/Widget",
    b"/Annot",
    b"/Kids",
    b"/Parent",
    b"/Resources",
    b"/Contents",
    b"/Null",
]
_ODD_NUMBERS = [b"0", b"-1", b"-2147483649", b"4294967297", b"99999999999", b"1e308", b"0.0"]
_ODD_VALUES = [
    b"null",
    b"[]",
    b"<<>>",
    b"()",
    b"<>",
    b"[[[[[[[[]]]]]]]]",
    b"1 0 R",
    b"999 0 R",
    b"/Foo",
    b"true",
    b"-0",
]
# encryption dictionaries a file may claim: an unknown handler, a broken standard one, a
# handler version past the specification, a public-key one
_ENCRYPT = [
    b"/Encrypt << /Filter /Standard /V 1 /R 2 /O <00> /U <00> /P -4 >>",
    b"/Encrypt << /Filter /Standard /V 5 /R 6 /Length 256 /O (x) /U (y) /P -1 >>",
    b"/Encrypt << /Filter /Standard /V 9 /R 9 /O <> /U <> /P 0 >>",
    b"/Encrypt << /Filter /Adobe.PubSec /SubFilter /adbe.pkcs7.s5 /V 4 /R 4 >>",
    b"/Encrypt << /Filter /Nonsense >>",
    b"/Encrypt 1 0 R",
    b"/Encrypt null",
]


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(1, len(data))]


def flip_bits(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.choice((1, 2, 4, 8, 32))):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out)


def junk_bytes(data: bytes, rng: random.Random) -> bytes:
    """A run of random bytes written over, or inserted into, the file."""
    i = rng.randrange(len(data))
    junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    if rng.random() < 0.5:
        return data[:i] + junk + data[i + len(junk) :]
    return data[:i] + junk + data[i:]


def swap_objects(data: bytes, rng: random.Random) -> bytes:
    """Two objects' numbers exchanged in their headers: the cross-reference table points at
    the wrong one (qpdf then reconstructs, or reads the swap as written)."""
    found = list(_OBJ.finditer(data))
    if len(found) < 2:
        return flip_bits(data, rng)
    a, b = rng.sample(found, 2)
    if a.start() > b.start():
        a, b = b, a
    head_a, head_b = a.group(0), b.group(0)
    return data[: a.start()] + head_b + data[a.end() : b.start()] + head_a + data[b.end() :]


def renumber_reference(data: bytes, rng: random.Random) -> bytes:
    """One reference made to point at another object (or at one that does not exist)."""
    refs = list(re.finditer(rb"(\d+) 0 R", data))
    if not refs:
        return flip_bits(data, rng)
    m = rng.choice(refs)
    target = rng.choice([b"1", b"2", b"3", b"4", b"0", b"65535", m.group(1)])
    return data[: m.start(1)] + target + data[m.end(1) :]


def wrong_length(data: bytes, rng: random.Random) -> bytes:
    found = list(_LENGTH.finditer(data))
    if not found:
        return truncate(data, rng)
    m = rng.choice(found)
    old = int(m.group(1))
    new = rng.choice([0, 1, old - 1, old + 1, old * 2, old // 2, 2**31, 10**12])
    return data[: m.start(1)] + str(new).encode() + data[m.end(1) :]


def break_xref(data: bytes, rng: random.Random) -> bytes:
    """startxref pointing elsewhere, an xref entry rewritten, or the table cut out."""
    how = rng.randrange(3)
    m = _STARTXREF.search(data)
    if how == 0 and m:
        new = str(rng.choice([0, 1, len(data), len(data) * 10, int(m.group(1)) + 7])).encode()
        return data[: m.start(1)] + new + data[m.end(1) :]
    entries = list(re.finditer(rb"\d{10} \d{5} [nf]", data))
    if how == 1 and entries:
        e = rng.choice(entries)
        entry = f"{rng.randrange(10**10):010d} {rng.randrange(65536):05d} {rng.choice('nf')}"
        return data[: e.start()] + entry.encode() + data[e.end() :]
    start = data.rfind(b"xref")
    if start > 0:
        end = data.find(b"trailer", start)
        return data[:start] + (data[end:] if end > 0 else b"")
    return truncate(data, rng)


def add_encryption(data: bytes, rng: random.Random) -> bytes:
    m = _TRAILER.search(data)
    if m is None:  # a cross-reference stream: its dictionary is the trailer
        m = re.search(rb"/Type\s*/XRef", data)
    if m is None:
        return flip_bits(data, rng)
    return data[: m.end()] + b" " + rng.choice(_ENCRYPT) + b" " + data[m.end() :]


def replace_name(data: bytes, rng: random.Random) -> bytes:
    found = list(_NAME.finditer(data))
    if not found:
        return flip_bits(data, rng)
    m = rng.choice(found)
    return data[: m.start()] + rng.choice(_NAMES) + data[m.end() :]


def replace_number(data: bytes, rng: random.Random) -> bytes:
    found = list(_NUMBER.finditer(data))
    if not found:
        return flip_bits(data, rng)
    m = rng.choice(found)
    return data[: m.start()] + rng.choice(_ODD_NUMBERS) + data[m.end() :]


def replace_value(data: bytes, rng: random.Random) -> bytes:
    """The value after a dictionary key made something of another type."""
    found = list(re.finditer(rb"(/[A-Za-z0-9]+)\s+(\d+ 0 R|/[A-Za-z0-9]+|\d+|\[[^\[\]]*\])", data))
    if not found:
        return flip_bits(data, rng)
    m = rng.choice(found)
    return data[: m.start(2)] + rng.choice(_ODD_VALUES) + data[m.end(2) :]


def damage_stream(data: bytes, rng: random.Random) -> bytes:
    """Bytes inside one stream's data changed (a compressed stream then fails to inflate;
    an uncompressed content stream gets odd operators)."""
    found = list(re.finditer(rb"stream\r?\n", data))
    if not found:
        return flip_bits(data, rng)
    m = rng.choice(found)
    end = data.find(b"endstream", m.end())
    if end <= m.end():
        return flip_bits(data, rng)
    i = rng.randrange(m.end(), end)
    junk = rng.choice(
        [
            b"\x00\xff\x00\xff",
            b" 99999 99999 re f ",
            b" q q q q q ",
            b" Q Q Q ",
            b" /X0 Do ",
            b" BI /W 9999 /H 9999 /BPC 8 /CS /G ID \x00 EI ",
            b" [(a) 1e30 (b)] TJ ",
            b" /F9 12 Tf ",
            b" 1e38 0 0 1e38 0 0 cm ",
            b" (\\",
            b" <FEFF D800> Tj ",
        ]
    )
    return data[:i] + junk + data[i:]


def structural(data: bytes, rng: random.Random) -> bytes:
    """A page or resource dictionary given odd values through pikepdf (the file stays well
    formed: what breaks is what the values mean)."""
    try:
        pdf = pikepdf.open(io.BytesIO(data))
    except pikepdf.PdfError:
        return flip_bits(data, rng)
    with pdf, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pikepdf's advice on copying pages with forms
        page = pdf.pages[0].obj
        choice = rng.randrange(12)
        if choice == 0:
            page.MediaBox = Array(rng.choice([[0, 0, 0, 0], [0, 0, -50, 10], [0, 0, 1e9, 1e9]]))
        elif choice == 1:
            page.Rotate = rng.choice([45, -90, 3600, 2**40])
        elif choice == 2:
            page.Resources = rng.choice([Array(), Dictionary(), String("x")])
        elif choice == 3:
            page.Contents = rng.choice([Array([1, 2]), Dictionary(), Array([])])
        elif choice == 4:
            page.CropBox = Array([0, 0, 1, 1])
        elif choice == 5:
            page.UserUnit = rng.choice([0, 75000, -1])
        elif choice == 6:
            pdf.Root.Pages.Count = rng.choice([0, 2, -1])
        elif choice == 7:
            res = page.get("/Resources")
            if isinstance(res, Dictionary):
                res.Font = Dictionary(F1=Dictionary(Type=Name.Font, Subtype=Name.Type0))
        elif choice == 8:
            page.Annots = Array(
                [Dictionary(Type=Name.Annot, Subtype=Name.Square, Rect=Array([0, 0, 1]))]
            )
        elif choice == 9:
            pdf.Root.AcroForm = Dictionary(Fields=Array([page]), XFA=String("<xdp/>"))
        elif choice == 10:
            res = page.get("/Resources")
            if isinstance(res, Dictionary):
                res.XObject = Dictionary(
                    X0=pdf.make_stream(b"\x00" * 10, Subtype=Name.Image, Width=5, Height=5)
                )
        else:
            page.Group = Dictionary(S=Name.Transparency, CS=Name.DeviceCMYK)
        out = io.BytesIO()
        pdf.save(out)
        return out.getvalue()


def _odd_object(pdf: pikepdf.Pdf, rng: random.Random, others: list[pikepdf.Object]) -> object:
    choice = rng.randrange(10)
    if choice == 0:
        return None
    if choice == 1:
        return rng.choice([0, -1, 2**31, -(2**63), 10**18, 0.5, -1e30])
    if choice == 2:
        return Name(rng.choice([n.decode() for n in _NAMES]))
    if choice == 3:
        return String(
            rng.choice([b"", b"x" * 300, b"\xfe\xff\xd8\x00", b"\xef\xbb\xbf\x93", b"(\\"])
        )
    if choice == 4:
        return Array([rng.choice([0, 1, -1, 1e9]) for _ in range(rng.randrange(0, 7))])
    if choice == 5:
        return Dictionary()
    if choice == 6:
        return pdf.make_stream(bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40))))
    if choice == 7:
        return True
    # a reference to another object of the file: a loop, or a thing of the wrong kind
    return rng.choice(others) if others else None


def random_value(data: bytes, rng: random.Random) -> bytes:
    """One key of one dictionary anywhere in the file given a value of another kind, or a
    reference to another object (loops included)."""
    try:
        pdf = pikepdf.open(io.BytesIO(data))
    except pikepdf.PdfError:
        return flip_bits(data, rng)
    with pdf, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        holders = [o for o in pdf.objects if isinstance(o, Dictionary | pikepdf.Stream)]
        holders += [p.obj for p in pdf.pages]
        for _ in range(rng.choice((1, 1, 2, 4))):
            target = rng.choice(holders)
            keys = [k for k in target.keys() if k != "/Length"]  # noqa: SIM118
            if not keys:
                continue
            key = rng.choice(sorted(keys))
            value = _odd_object(pdf, rng, holders)
            if value is None:
                del target[key]
            else:
                target[key] = value
        out = io.BytesIO()
        try:
            pdf.save(out)
        except (pikepdf.PdfError, ValueError, TypeError, RuntimeError):
            return flip_bits(data, rng)
        return out.getvalue()


MUTATIONS: list[Mutation] = [
    random_value,
    random_value,
    truncate,
    flip_bits,
    junk_bytes,
    swap_objects,
    renumber_reference,
    wrong_length,
    break_xref,
    add_encryption,
    replace_name,
    replace_number,
    replace_value,
    damage_stream,
    structural,
]


def _guarded(mutation: Mutation) -> Mutation:
    """A mutation that reads the file with pikepdf may meet what an earlier one broke: then
    it flips bits instead."""

    def run(data: bytes, rng: random.Random) -> bytes:
        try:
            return mutation(data, rng)
        except Exception:  # the mutator's own trouble, not the pipeline's
            return flip_bits(data, rng)

    run.__name__ = mutation.__name__
    return run


MUTATIONS = [_guarded(m) for m in MUTATIONS]


def mutant(seed_bytes: bytes, case: int) -> tuple[bytes, str]:
    """Case ``case``'s damaged copy of a seed: one to three mutations, chosen by the case's
    own seeded Random (the same case number gives the same bytes)."""
    rng = random.Random(case)
    data = seed_bytes
    done = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        mutation = rng.choice(MUTATIONS)
        data = mutation(data, rng) or data[:1]
        done.append(mutation.__name__)
    return data, "+".join(done)
