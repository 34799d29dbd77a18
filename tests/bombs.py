"""Hostile PDFs and images, built small: each inflates, nests or claims far more than its bytes.

Shared by the tests and ``bench/bomb_bench.py``. Every builder takes the sizes and depths that
make it dangerous as arguments, so tests can vary them.
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import pikepdf
from pikepdf import Array, Dictionary, Name
from PIL import Image, ImageDraw

from pressroom.synth import save_png

TEXT = b"BT /F1 12 Tf 72 700 Td (This born digital page carries enough real text to keep.) Tj ET"
STROKE = b"0 0 m 1 1 l S\n"  # three operators, one path object in PDFium


def _font(pdf: pikepdf.Pdf) -> pikepdf.Object:
    return pdf.make_indirect(
        Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica)
    )


def _flate(pdf: pikepdf.Pdf, data: bytes, **entries: object) -> pikepdf.Stream:
    stream = pdf.make_stream(zlib.compress(data, 9))
    stream.Filter = Name.FlateDecode
    for key, value in entries.items():
        stream[f"/{key}"] = value
    return stream


def _page(pdf: pikepdf.Pdf, contents: pikepdf.Object, resources: Dictionary, size=(612, 792)):
    pdf.pages.append(
        pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, *size]),
                Resources=resources,
                Contents=contents,
            )
        )
    )


def operator_bomb(path: Path, megabytes: float = 20, unit: bytes = STROKE) -> Path:
    """One page whose Flate content inflates to ``megabytes`` of ``unit`` repeated."""
    pdf = pikepdf.Pdf.new()
    data = unit * int(megabytes * 2**20 / len(unit))
    _page(pdf, _flate(pdf, data), Dictionary())
    pdf.save(path)
    return path


def form_fanout_bomb(path: Path, fanout: int = 10, depth: int = 7) -> Path:
    """A page drawing a form ``fanout`` times, which draws the next ``fanout`` times, and so on
    ``depth`` levels: fanout**depth uses of a three-operator form, from a few hundred bytes."""
    pdf = pikepdf.Pdf.new()
    leaf = pdf.make_stream(STROKE, Type=Name.XObject, Subtype=Name.Form, BBox=[0, 0, 10, 10])
    inner = leaf
    for _ in range(depth - 1):
        inner = pdf.make_stream(
            b"/X Do " * fanout,
            Type=Name.XObject,
            Subtype=Name.Form,
            BBox=Array([0, 0, 10, 10]),
            Resources=Dictionary(XObject=Dictionary(X=inner)),
        )
    _page(
        pdf,
        pdf.make_stream(b"/X Do " * fanout),
        Dictionary(XObject=Dictionary(X=inner)),
    )
    pdf.save(path)
    return path


def text_bomb(path: Path, megabytes: float = 4, hexed: bool = False) -> Path:
    """Few operators, many characters: each string a kilobyte, every one at its own place."""
    pdf = pikepdf.Pdf.new()
    string = b"<" + b"61" * 1000 + b">" if hexed else b"(" + b"a" * 1000 + b")"
    lines = [b"BT /F1 1 Tf"]
    for i in range(int(megabytes * 2**20 / len(string))):
        lines.append(b"1 0 0 1 %d %d Tm %s Tj" % (i % 600, (i // 600) % 790, string))
    lines.append(b"ET")
    _page(pdf, _flate(pdf, b"\n".join(lines)), Dictionary(Font=Dictionary(F1=_font(pdf))))
    pdf.save(path)
    return path


def _empty_image(pdf: pikepdf.Pdf, side: int) -> pikepdf.Stream:
    """A ``side`` x ``side`` grey image declared over a few kilobytes of Flate data."""
    return _flate(
        pdf,
        b"\0" * min(side * 64, 1 << 20),
        Type=Name.XObject,
        Subtype=Name.Image,
        Width=side,
        Height=side,
        ColorSpace=Name.DeviceGray,
        BitsPerComponent=8,
    )


def nested_image_bomb(path: Path, depth: int = 6, side: int = 30_000, via: str = "form") -> Path:
    """A ``side`` x ``side`` image drawn ``depth`` levels down: through forms, or a tiling
    pattern, a Type 3 glyph, a soft mask's group or an annotation's appearance at the end."""
    pdf = pikepdf.Pdf.new()
    image = _empty_image(pdf, side)
    inner: pikepdf.Object = pdf.make_stream(
        b"q 600 0 0 780 0 0 cm /Im Do Q",
        Type=Name.XObject,
        Subtype=Name.Form,
        BBox=Array([0, 0, 612, 792]),
        Resources=Dictionary(XObject=Dictionary(Im=image)),
    )
    for _ in range(depth - 1):
        inner = pdf.make_stream(
            b"/F Do",
            Type=Name.XObject,
            Subtype=Name.Form,
            BBox=Array([0, 0, 612, 792]),
            Resources=Dictionary(XObject=Dictionary(F=inner)),
        )
    resources = Dictionary()
    content = b"/F Do"
    annots = None
    if via == "form":
        resources.XObject = Dictionary(F=inner)
    elif via == "pattern":
        pattern = pdf.make_stream(
            b"/F Do",
            PatternType=1,
            PaintType=1,
            TilingType=1,
            BBox=Array([0, 0, 612, 792]),
            XStep=612,
            YStep=792,
            Resources=Dictionary(XObject=Dictionary(F=inner)),
        )
        resources.Pattern = Dictionary(P=pattern)
        content = b"/Pattern cs /P scn 0 0 612 792 re f"
    elif via == "type3":
        glyph = pdf.make_stream(b"1000 0 d0 /F Do")
        font = Dictionary(
            Type=Name.Font,
            Subtype=Name.Type3,
            FontBBox=Array([0, 0, 1000, 1000]),
            FontMatrix=Array([0.001, 0, 0, 0.001, 0, 0]),
            CharProcs=Dictionary(a=glyph),
            Encoding=Dictionary(Differences=Array([97, Name("/a")])),
            FirstChar=97,
            LastChar=97,
            Widths=Array([1000]),
            Resources=Dictionary(XObject=Dictionary(F=inner)),
        )
        resources.Font = Dictionary(T3=font)
        content = b"BT /T3 100 Tf 72 400 Td (a) Tj ET"
    elif via == "smask":
        group = pdf.make_stream(
            b"/F Do",
            Type=Name.XObject,
            Subtype=Name.Form,
            Group=Dictionary(S=Name.Transparency, CS=Name.DeviceGray),
            BBox=Array([0, 0, 612, 792]),
            Resources=Dictionary(XObject=Dictionary(F=inner)),
        )
        resources.ExtGState = Dictionary(M=Dictionary(SMask=Dictionary(S=Name.Luminosity, G=group)))
        content = b"/M gs 0 0 612 792 re f"
    elif via == "annotation":
        annots = Array(
            [
                Dictionary(
                    Type=Name.Annot,
                    Subtype=Name.Square,
                    Rect=Array([0, 0, 612, 792]),
                    AP=Dictionary(N=inner),
                )
            ]
        )
        content = b"0 0 1 1 re f"
    else:
        raise ValueError(via)
    _page(pdf, pdf.make_stream(content), resources)
    if annots is not None:
        pdf.pages[0].obj.Annots = pdf.make_indirect(annots)
    pdf.save(path)
    return path


def inline_image_bomb(path: Path, side: int = 30_000) -> Path:
    """An inline image declaring ``side`` x ``side`` pixels over a few bytes of Flate data."""
    pdf = pikepdf.Pdf.new()
    data = zlib.compress(b"\0" * 1024)
    content = (
        b"q 600 0 0 780 0 0 cm BI /W %d /H %d /CS /G /BPC 8 /F /Fl ID " % (side, side)
        + data
        + b" EI Q"
    )
    _page(pdf, pdf.make_stream(content), Dictionary())
    pdf.save(path)
    return path


def jpeg_liar(path: Path, declared: int = 100, coded: int = 30_000) -> Path:
    """An image declared ``declared`` pixels square whose JPEG header says ``coded``."""
    pdf = pikepdf.Pdf.new()
    sof = b"\xff\xc0\x00\x0b\x08" + coded.to_bytes(2, "big") * 2 + b"\x01\x01\x11\x00"
    jpeg = b"\xff\xd8" + sof + b"\xff\xd9"
    image = pdf.make_stream(
        jpeg,
        Type=Name.XObject,
        Subtype=Name.Image,
        Width=declared,
        Height=declared,
        ColorSpace=Name.DeviceGray,
        BitsPerComponent=8,
        Filter=Name.DCTDecode,
    )
    _page(
        pdf, pdf.make_stream(b"q 600 0 0 780 0 0 cm /Im Do Q"), Dictionary(XObject={"/Im": image})
    )
    pdf.save(path)
    return path


def many_objects(path: Path, count: int = 20_000) -> Path:
    """A page drawing ``count`` distinct one-operator forms."""
    pdf = pikepdf.Pdf.new()
    xobjects = Dictionary()
    for i in range(count):
        xobjects[f"/F{i}"] = pdf.make_stream(
            b"n", Type=Name.XObject, Subtype=Name.Form, BBox=Array([0, 0, 1, 1])
        )
    content = b" ".join(b"/F%d Do" % i for i in range(count))
    _page(pdf, _flate(pdf, content), Dictionary(XObject=xobjects))
    pdf.save(path)
    return path


def self_drawing_form(path: Path) -> Path:
    """A form that draws itself (PDFium refuses the inner draw): not a bomb, just a cycle."""
    pdf = pikepdf.Pdf.new()
    form = pdf.make_stream(
        b"0 0 100 100 re f /F Do", Type=Name.XObject, Subtype=Name.Form, BBox=[0, 0, 612, 792]
    )
    form.Resources = Dictionary(XObject=Dictionary(F=form))
    _page(pdf, pdf.make_stream(b"/F Do"), Dictionary(XObject=Dictionary(F=form)))
    pdf.save(path)
    return path


def big_text_page(path: Path, side_pt: float = 14_400) -> Path:
    """A born-digital page with real text on a ``side_pt`` square MediaBox (200 in at most)."""
    pdf = pikepdf.Pdf.new()
    content = TEXT.replace(b"72 700 Td", b"72 %d Td" % int(side_pt - 100))
    _page(pdf, pdf.make_stream(content), Dictionary(Font=Dictionary(F1=_font(pdf))), (side_pt,) * 2)
    pdf.save(path)
    return path


def marked(size: tuple[int, int]) -> Image.Image:
    """A white grey page with a few dark strokes on it: not blank, so it is read (a blank page
    is never handed to the engine)."""
    image = Image.new("L", size, 255)
    draw = ImageDraw.Draw(image)
    w, h = size
    for n in range(3):
        top = h // 4 + n * max(h // 10, 4)
        draw.rectangle((w // 10, top, w // 10 + max(w // 5, 8), top + max(h // 60, 3)), fill=0)
    return image


def low_dpi_png(path: Path, side_px: int = 2000, dpi: int = 50) -> Path:
    """A ``side_px`` square PNG with a few strokes, that says it was scanned at ``dpi``."""
    return save_png(marked((side_px, side_px)), path, dpi)


def text_pages(path: Path, count: int, size: tuple[float, float] = (612, 792)) -> Path:
    """``count`` born-digital pages with real text."""
    pdf = pikepdf.Pdf.new()
    font = _font(pdf)
    for _ in range(count):
        _page(pdf, pdf.make_stream(TEXT), Dictionary(Font=Dictionary(F1=font)), size)
    pdf.save(path)
    return path


# -- page trees that lie, written byte by byte (pikepdf would correct them) -----------------


def raw_pdf(path: Path, objects: list[bytes]) -> Path:
    """A PDF of these object bodies (1 is the catalog) with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(bytes(out))
    return path


_PAGE = b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] " + (
    b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>"
)
_SHARED = [
    b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    b"<< /Length %d >>\nstream\n%s\nendstream" % (len(TEXT), TEXT),
]


def lying_page_tree(path: Path, claimed: int = 5_000_000) -> Path:
    """One real page under a /Pages node that claims ``claimed``."""
    return raw_pdf(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Count %d /Kids [3 0 R] >>" % claimed,
            _PAGE % 2,
            *_SHARED,
        ],
    )


def lying_subtree(path: Path) -> Path:
    """A root that counts right (2) over a subtree that claims 1 of its 2 pages: PDFium finds
    pages by the counts, qpdf by the kids, and they would disagree on which page is which."""
    return raw_pdf(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Count 2 /Kids [6 0 R] >>",
            _PAGE % 6,
            *_SHARED,
            b"<< /Type /Pages /Parent 2 0 R /Count 1 /Kids [3 0 R 7 0 R] >>",
            _PAGE % 6,
        ],
    )


def repeated_kids(path: Path, count: int = 300_000) -> Path:
    """The same page listed ``count`` times: qpdf copies each (a 1.8 MB file took 800 MB)."""
    return raw_pdf(
        path,
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Count %d /Kids [%s] >>" % (count, b" ".join([b"3 0 R"] * count)),
            _PAGE % 2,
            *_SHARED,
        ],
    )


def image_drawn_as(path: Path, draw: bytes, side: int = 30_000) -> Path:
    """A ``side`` x ``side`` image in the page's resources as ``/Im``, drawn by ``draw`` (a
    content stream spelling ``/Im Do`` in some lawful but unusual way)."""
    pdf = pikepdf.Pdf.new()
    image = _empty_image(pdf, side)
    _page(
        pdf,
        pdf.make_stream(b"q 600 0 0 780 0 0 cm " + draw + b" Q"),
        Dictionary(XObject=Dictionary(Im=image)),
    )
    pdf.save(path)
    return path


def inline_image_spelled(path: Path, head: bytes, side: int = 30_000) -> Path:
    """An inline image whose dictionary is written ``head`` (``%d`` twice for the sides)."""
    pdf = pikepdf.Pdf.new()
    data = zlib.compress(b"\0" * 1024)
    content = b"q 600 0 0 780 0 0 cm " + head % (side, side) + b" ID " + data + b" EI Q"
    _page(pdf, pdf.make_stream(content), Dictionary())
    pdf.save(path)
    return path


def deep_tree_inherited_image(path: Path, depth: int = 63, side: int = 30_000) -> Path:
    """One page at the bottom of a ``depth``-deep page tree whose only /Resources (holding a
    huge image) sit on the root, inherited all the way down."""
    pdf = pikepdf.Pdf.new()
    image = _empty_image(pdf, side)
    _page(pdf, pdf.make_stream(b"q 600 0 0 780 0 0 cm /Im Do Q"), Dictionary())
    root = pdf.Root.Pages
    page = pdf.pages[0].obj
    del page["/Resources"]
    leaf_parent = root
    chain = []
    for _ in range(depth - 1):
        node = pdf.make_indirect(Dictionary(Type=Name.Pages, Count=1, Kids=Array([])))
        chain.append(node)
    parent = root
    for node in chain:
        node.Parent = parent
        parent.Kids = Array([node])
        parent = node
    leaf_parent = parent
    leaf_parent.Kids = Array([page])
    page.Parent = leaf_parent
    root.Resources = Dictionary(XObject=Dictionary(Im=image))
    pdf.save(path)
    return path


def form_measured_under_small_resources(path: Path, side: int = 30_000) -> Path:
    """A form without resources of its own, drawn first from a caller whose ``/X`` is a 1-pixel
    image and then from one whose ``/X`` is huge."""
    pdf = pikepdf.Pdf.new()
    form = pdf.make_stream(
        b"q 600 0 0 780 0 0 cm /X Do Q",
        Type=Name.XObject,
        Subtype=Name.Form,
        BBox=Array([0, 0, 612, 792]),
    )

    def caller(image: pikepdf.Stream) -> pikepdf.Stream:
        return pdf.make_stream(
            b"/F Do",
            Type=Name.XObject,
            Subtype=Name.Form,
            BBox=Array([0, 0, 612, 792]),
            Resources=Dictionary(XObject=Dictionary(F=form, X=image)),
        )

    small, big = caller(_empty_image(pdf, 1)), caller(_empty_image(pdf, side))
    _page(pdf, pdf.make_stream(b"/A Do /B Do"), Dictionary(XObject=Dictionary(A=small, B=big)))
    pdf.save(path)
    return path


def xref_size_liar(path: Path, claimed: int = 20_000_000) -> Path:
    """A one-page PDF whose trailer claims ``claimed`` objects: qpdf sizes its table by it."""
    text_pages(path, 1)
    data = path.read_bytes()
    head, sep, tail = data.rpartition(b"trailer")
    assert sep, "pikepdf wrote a cross-reference stream; expected a table"
    tail = re.sub(rb"/Size \d+", b"/Size %d" % claimed, tail, count=1)
    path.write_bytes(head + sep + tail)
    return path
