"""The hiding-places corpus: PDFs that show a name on their first page and carry it again
somewhere a reader may not look — shared resources, font encodings, unused objects, metadata,
marked content, hidden layers, invisible and covered text, annotations, document-level
structures. Each builder writes one case; ``CASES`` names them all.

A test and benchmark fixture, never shipped (tests/integration/test_hiding_places.py asserts
on it; bench/hiding_bench.py reports leaked/held/delivered per case)."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pikepdf
from pikepdf import Array, Dictionary, Name, String
from PIL import Image, ImageDraw, ImageFont

from pressroom.synth import find_font
from tests.helpers import dejavu_descriptor

NAME = "Jane Whitfield"
SURNAME = "Whitfield"
OPENING = "Thank you for your letter about the garden project."
PAGE2 = ("The committee meets again in the spring.", "Minutes will be sent to every member.")


def _helvetica(pdf: pikepdf.Pdf) -> pikepdf.Object:
    return pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name.Helvetica,
            Encoding=Name.WinAnsiEncoding,
        )
    )


def _line(y: float, text: str, font: str = "/F1", size: float = 12, x: float = 72) -> bytes:
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return f"BT {font} {size} Tf {x} {y} Td ({escaped}) Tj ET\n".encode()


def _page(pdf: pikepdf.Pdf, content: bytes, resources: pikepdf.Object) -> pikepdf.Page:
    page = pikepdf.Page(
        Dictionary(
            Type=Name.Page,
            MediaBox=Array([0, 0, 612, 792]),
            Resources=resources,
            Contents=pdf.make_stream(content),
        )
    )
    pdf.pages.append(page)
    return pdf.pages[-1]


def _letter(pdf: pikepdf.Pdf, resources: pikepdf.Object, *, name_op: bytes | None = None) -> None:
    """Page 1: the name in a letter's opening, set in Helvetica unless ``name_op`` draws it."""
    opening = name_op if name_op is not None else _line(700, f"Dear {NAME},")
    _page(pdf, opening + _line(670, OPENING), resources)


def _second(pdf: pikepdf.Pdf, resources: pikepdf.Object, extra: bytes = b"") -> pikepdf.Page:
    return _page(pdf, _line(700, PAGE2[0]) + _line(680, PAGE2[1]) + extra, resources)


def _on_page_two(path: Path, extra: bytes) -> Path:
    """The letter, and a second page in Helvetica whose content ends with ``extra``."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    _second(pdf, Dictionary(Font=Dictionary(F1=helv)), extra)
    pdf.save(path)
    return path


def _form(pdf: pikepdf.Pdf, content: bytes, resources: pikepdf.Object) -> pikepdf.Stream:
    form = pdf.make_stream(content)
    form.Type, form.Subtype = Name.XObject, Name.Form
    form.BBox = Array([0, 0, 612, 792])
    form.Resources = resources
    return form


def _identity_h(pdf: pikepdf.Pdf, text: str) -> tuple[pikepdf.Object, bytes]:
    """An embedded DejaVu Sans as a Type0/Identity-H font, ToUnicode one ``bfchar`` a glyph
    (as Word, LibreOffice and browsers write text), and ``text`` in its codes."""
    from fontTools.ttLib import TTFont

    path = find_font("DejaVuSans.ttf")
    tt = TTFont(str(path))
    cmap = tt.getBestCmap()
    gids = [tt.getGlyphID(cmap[ord(c)]) for c in text]
    scale = 1000 / tt["head"].unitsPerEm
    widths = Array()
    for gid, c in sorted(set(zip(gids, text, strict=True))):
        widths.extend([gid, Array([round(tt["hmtx"][cmap[ord(c)]][0] * scale)])])
    descriptor = dejavu_descriptor(pdf)
    cid = Dictionary(
        Type=Name.Font,
        Subtype=Name.CIDFontType2,
        BaseFont=Name("/DejaVuSans"),
        CIDSystemInfo=Dictionary(Registry="Adobe", Ordering="Identity", Supplement=0),
        FontDescriptor=descriptor,
        CIDToGIDMap=Name.Identity,
        W=widths,
    )
    pairs = sorted(set(zip(gids, text, strict=True)))
    body = "".join(f"<{g:04X}> <{ord(c):04X}>\n" for g, c in pairs)
    to_unicode = (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        "/CMapName /Custom def /CMapType 2 def\n"
        "1 begincodespacerange <0000> <FFFF> endcodespacerange\n"
        f"{len(pairs)} beginbfchar\n{body}endbfchar\n"
        "endcmap CMapName currentdict /CMap defineresource pop end end\n"
    ).encode()
    font = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type0,
            BaseFont=Name("/DejaVuSans"),
            Encoding=Name("/Identity-H"),
            DescendantFonts=Array([pdf.make_indirect(cid)]),
            ToUnicode=pdf.make_stream(to_unicode),
        )
    )
    return font, b"".join(g.to_bytes(2, "big") for g in gids)


def _differences(pdf: pikepdf.Pdf, text: str) -> tuple[pikepdf.Object, bytes]:
    """Helvetica with a ``/Differences`` encoding: ``text`` shown as codes 1, 2, 3…"""
    letters = sorted(set(text))
    names: list[object] = [1]
    for c in letters:
        names.append(Name("/space") if c == " " else Name("/" + c))
    font = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name.Helvetica,
            Encoding=Dictionary(Type=Name.Encoding, Differences=Array(names)),
        )
    )
    return font, bytes(1 + letters.index(c) for c in text)


def _hex(codes: bytes) -> bytes:
    return b"<" + codes.hex().encode() + b">"


# -- the cases ------------------------------------------------------------------------------


def shared_identity_h(path: Path) -> Path:
    """Pages share one /Resources; page 1 draws a form showing the name through an embedded
    Identity-H font; page 2 draws no name."""
    pdf = pikepdf.Pdf.new()
    cid, codes = _identity_h(pdf, NAME)
    shared = pdf.make_indirect(Dictionary(Font=Dictionary(F1=_helvetica(pdf), T0=cid)))
    fx = _form(pdf, b"BT /T0 14 Tf 110 700 Td " + _hex(codes) + b" Tj ET", shared)
    shared.XObject = Dictionary(Fx=fx)
    _letter(pdf, shared, name_op=_line(700, "Dear") + b"q /Fx Do Q\n")
    _second(pdf, shared)
    pdf.save(path)
    return path


def shared_differences(path: Path) -> Path:
    """As ``shared_identity_h``, the form's font a simple one with codes 1…12."""
    pdf = pikepdf.Pdf.new()
    font, codes = _differences(pdf, NAME)
    shared = pdf.make_indirect(Dictionary(Font=Dictionary(F1=_helvetica(pdf), D0=font)))
    fx = _form(pdf, b"BT /D0 12 Tf 105 700 Td " + _hex(codes) + b" Tj ET", shared)
    shared.XObject = Dictionary(Fx=fx)
    _letter(pdf, shared, name_op=_line(700, "Dear") + b"q /Fx Do Q\n")
    _second(pdf, shared)
    pdf.save(path)
    return path


def _type3(pdf: pikepdf.Pdf, text: str, proc: Callable[[str], bytes]) -> pikepdf.Object:
    letters = sorted(set(text))
    procs = Dictionary()
    names: list[object] = [1]
    for c in letters:
        glyph = "space" if c == " " else c
        names.append(Name("/" + glyph))
        procs[Name("/" + glyph)] = pdf.make_stream(proc(c))
    return pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type3,
            FontBBox=Array([0, 0, 1000, 1000]),
            FontMatrix=Array([0.001, 0, 0, 0.001, 0, 0]),
            CharProcs=procs,
            Encoding=Dictionary(Type=Name.Encoding, Differences=Array(names)),
            FirstChar=1,
            LastChar=len(letters),
            Widths=Array([600] * len(letters)),
            Resources=Dictionary(),
        )
    )


def shared_type3(path: Path) -> Path:
    """Page 1 shows the name in a Type 3 font held in resources both pages share."""
    pdf = pikepdf.Pdf.new()
    font = _type3(
        pdf, NAME, lambda c: b"600 0 0 0 500 700 d1 0 0 500 700 re f" if c != " " else b"600 0 d0"
    )
    letters = sorted(set(NAME))
    codes = bytes(1 + letters.index(c) for c in NAME)
    shared = pdf.make_indirect(Dictionary(Font=Dictionary(F1=_helvetica(pdf), G3=font)))
    _letter(
        pdf,
        shared,
        name_op=_line(700, "Dear") + b"BT /G3 12 Tf 105 700 Td " + _hex(codes) + b" Tj ET\n",
    )
    _second(pdf, shared)
    pdf.save(path)
    return path


def type3_glyph_text(path: Path) -> Path:
    """Page 2 draws a Type 3 glyph whose procedure itself shows the name as text, at a size
    nobody reads."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    font = _type3(
        pdf,
        "x",
        lambda c: b"600 0 0 0 500 700 d1 BT /F1 1 Tf 0 0 Td (" + NAME.encode() + b") Tj ET",
    )
    font.Resources = Dictionary(Font=Dictionary(F1=helv))
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    _second(
        pdf, Dictionary(Font=Dictionary(F1=helv, G3=font)), b"BT /G3 2 Tf 72 600 Td <01> Tj ET\n"
    )
    pdf.save(path)
    return path


def unused_form(path: Path) -> Path:
    """Page 2's resources hold a form, drawn nowhere, that shows the name as plain text."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    fy = _form(pdf, _line(500, NAME), Dictionary(Font=Dictionary(F1=helv)))
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    _second(pdf, Dictionary(Font=Dictionary(F1=helv), XObject=Dictionary(Fy=fy)))
    pdf.save(path)
    return path


def _grey_image(pdf: pikepdf.Pdf, size: int = 8, value: int = 128) -> pikepdf.Stream:
    image = pdf.make_stream(zlib.compress(bytes([value]) * size * size))
    image.Type, image.Subtype = Name.XObject, Name.Image
    image.Width = image.Height = size
    image.ColorSpace, image.BitsPerComponent = Name.DeviceGray, 8
    image.Filter = Name.FlateDecode
    return image


def _xmp(pdf: pikepdf.Pdf, creator: str) -> pikepdf.Stream:
    xmp = (
        '<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?>'
        '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF '
        'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
        '<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">'
        f"<dc:creator><rdf:Seq><rdf:li>{creator}</rdf:li></rdf:Seq></dc:creator>"
        '</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>'
    ).encode()
    meta = pdf.make_stream(xmp)
    meta.Type, meta.Subtype = Name.Metadata, Name.XML
    return meta


def image_xmp(path: Path) -> Path:
    """Page 2 draws a small image whose own XMP names its creator."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    image = _grey_image(pdf)
    image.Metadata = _xmp(pdf, NAME)
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    _second(
        pdf,
        Dictionary(Font=Dictionary(F1=helv), XObject=Dictionary(Im0=image)),
        b"q 40 0 0 40 72 560 cm /Im0 Do Q\n",
    )
    pdf.save(path)
    return path


def form_private_keys(path: Path) -> Path:
    """Page 2 draws a form that carries the name in /PieceInfo, /Metadata and a private key."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    fz = _form(pdf, b"0 0 1 rg 72 560 40 10 re f", Dictionary())
    fz.PieceInfo = Dictionary(Editor=Dictionary(Private=String(f"drawn for {NAME}")))
    fz.Metadata = _xmp(pdf, NAME)
    fz[Name("/ACME_Owner")] = String(NAME)
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    _second(pdf, Dictionary(Font=Dictionary(F1=helv), XObject=Dictionary(Fz=fz)), b"q /Fz Do Q\n")
    pdf.save(path)
    return path


def content_comment(path: Path) -> Path:
    """Page 2's content stream holds a comment naming the person."""
    return _on_page_two(path, f"% prepared for {NAME}\n".encode())


def actual_text(path: Path) -> Path:
    """Page 2 shows initials marked with an /ActualText that spells the name."""
    return _on_page_two(
        path,
        b"/Span << /ActualText (" + NAME.encode() + b") >> BDC " + _line(640, "J. W.") + b"EMC\n",
    )


def alt_text(path: Path) -> Path:
    """Page 2 draws a picture marked with alternate text naming who it shows."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    image = _grey_image(pdf)
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    _second(
        pdf,
        Dictionary(
            Font=Dictionary(F1=helv),
            XObject=Dictionary(Im0=image),
            Properties=Dictionary(P0=Dictionary(Alt=String(f"Photo of {NAME}"))),
        ),
        b"/Figure /P0 BDC q 40 0 0 40 72 560 cm /Im0 Do Q EMC\n"
        b"/Figure << /Alt (Portrait of " + NAME.encode() + b") /E (JW) >> BDC EMC\n",
    )
    pdf.save(path)
    return path


def hidden_layer(path: Path) -> Path:
    """Page 2 shows the name in an optional-content group hidden in the default view, and
    draws a form hidden the same way."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    ocg = pdf.make_indirect(Dictionary(Type=Name.OCG, Name=String("notes")))
    hidden_form = _form(pdf, _line(560, NAME), Dictionary(Font=Dictionary(F1=helv)))
    hidden_form.OC = ocg
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    _second(
        pdf,
        Dictionary(
            Font=Dictionary(F1=helv),
            Properties=Dictionary(oc1=ocg),
            XObject=Dictionary(Fh=hidden_form),
        ),
        b"/OC /oc1 BDC " + _line(620, NAME) + b"EMC q /Fh Do Q\n",
    )
    pdf.Root.OCProperties = Dictionary(OCGs=Array([ocg]), D=Dictionary(OFF=Array([ocg])))
    pdf.save(path)
    return path


def annotation_appearance(path: Path) -> Path:
    """Page 2 carries a free-text annotation whose appearance and contents name the person."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    page = _second(pdf, Dictionary(Font=Dictionary(F1=helv)))
    ap = _form(pdf, _line(5, NAME, x=2), Dictionary(Font=Dictionary(F1=helv)))
    ap.BBox = Array([0, 0, 200, 20])
    page.obj.Annots = Array(
        [
            pdf.make_indirect(
                Dictionary(
                    Type=Name.Annot,
                    Subtype=Name.FreeText,
                    Rect=Array([72, 540, 272, 560]),
                    Contents=String(f"Ask {NAME}"),
                    DA=String("/Helv 12 Tf 0 g"),
                    AP=Dictionary(N=ap),
                )
            )
        ]
    )
    pdf.save(path)
    return path


def _name_png(text: str) -> Image.Image:
    font = ImageFont.truetype(str(find_font("DejaVuSans.ttf")), 40)
    image = Image.new("L", (600, 70), 255)
    ImageDraw.Draw(image).text((10, 10), text, font=font, fill=0)
    return image


def inline_image(path: Path) -> Path:
    """Page 2 shows the name as the pixels of an inline image."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    image = _name_png(NAME)
    data = zlib.compress(image.tobytes())
    inline = (
        (
            f"q 216 0 0 25.2 72 600 cm BI /W {image.width} /H {image.height} "
            "/CS /G /BPC 8 /F /Fl ID "
        ).encode()
        + data
        + b" EI Q\n"
    )
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    _second(pdf, Dictionary(Font=Dictionary(F1=helv)), inline)
    pdf.save(path)
    return path


def clipped_text(path: Path) -> Path:
    """Page 2 shows the name in render mode 7 (a clip, nothing painted)."""
    return _on_page_two(path, b"q BT 7 Tr /F1 12 Tf 72 620 Td (" + NAME.encode() + b") Tj ET Q\n")


def invisible_text(path: Path) -> Path:
    """Page 2 shows the name in render mode 3 (invisible), as an OCR layer would."""
    return _on_page_two(path, b"BT 3 Tr /F1 12 Tf 72 620 Td (" + NAME.encode() + b") Tj ET\n")


def off_page(path: Path) -> Path:
    """Page 2 shows the name beyond the page's edge."""
    return _on_page_two(path, _line(900, NAME, x=700))


def white_text(path: Path) -> Path:
    """Page 2 shows the name white on white."""
    return _on_page_two(path, b"1 1 1 rg " + _line(620, NAME) + b"0 0 0 rg\n")


def under_rectangle(path: Path) -> Path:
    """Page 2 shows the name, then paints a white rectangle over it (a paper white-out)."""
    return _on_page_two(path, _line(620, NAME) + b"q 1 1 1 rg 66 612 110 24 re f Q\n")


def under_image(path: Path) -> Path:
    """Page 2 shows the name, then draws an opaque picture over it."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    image = _grey_image(pdf, 16, 150)
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    _second(
        pdf,
        Dictionary(Font=Dictionary(F1=helv), XObject=Dictionary(Im0=image)),
        _line(620, NAME) + b"q 120 0 0 30 66 610 cm /Im0 Do Q\n",
    )
    pdf.save(path)
    return path


def document_level(path: Path) -> Path:
    """The name in an outline, a named destination, a link's URI, the structure tree's alt
    text, a page label's prefix and an embedded file."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    page = _second(pdf, Dictionary(Font=Dictionary(F1=helv)))
    first = pdf.pages[0].obj
    outline = pdf.make_indirect(
        Dictionary(Title=String(f"Letter to {NAME}"), Dest=Array([first, Name.Fit]))
    )
    pdf.Root.Outlines = pdf.make_indirect(
        Dictionary(Type=Name.Outlines, First=outline, Last=outline, Count=1)
    )
    attachment = pdf.make_stream(f"notes about {NAME}".encode())
    attachment.Type = Name.EmbeddedFile
    pdf.Root.Names = Dictionary(
        Dests=Dictionary(Names=Array([String(NAME.replace(" ", "")), Array([first, Name.Fit])])),
        EmbeddedFiles=Dictionary(
            Names=Array(
                [
                    String("notes.txt"),
                    Dictionary(
                        Type=Name.Filespec, F=String("notes.txt"), EF=Dictionary(F=attachment)
                    ),
                ]
            )
        ),
    )
    page.obj.Annots = Array(
        [
            pdf.make_indirect(
                Dictionary(
                    Type=Name.Annot,
                    Subtype=Name.Link,
                    Rect=Array([72, 690, 300, 712]),
                    A=Dictionary(S=Name.URI, URI=String("https://people.example/JaneWhitfield")),
                )
            )
        ]
    )
    pdf.Root.StructTreeRoot = pdf.make_indirect(
        Dictionary(
            Type=Name.StructTreeRoot,
            K=Dictionary(Type=Name.StructElem, S=Name.Figure, Alt=String(f"Photo of {NAME}")),
        )
    )
    pdf.Root.PageLabels = Dictionary(Nums=Array([0, Dictionary(S=Name.D, P=String(f"{NAME} - "))]))
    pdf.save(path)
    return path


def jpeg_exif(path: Path) -> Path:
    """Page 2 draws a photo whose JPEG bytes name the person: EXIF Artist and a comment."""
    import io

    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    image = Image.new("RGB", (64, 64), (120, 160, 200))
    exif = Image.Exif()
    exif[0x013B] = NAME  # Artist
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", exif=exif.tobytes(), comment=f"photo of {NAME}".encode())
    photo = pdf.make_stream(buffer.getvalue())
    photo.Type, photo.Subtype = Name.XObject, Name.Image
    photo.Width = photo.Height = 64
    photo.ColorSpace, photo.BitsPerComponent, photo.Filter = Name.DeviceRGB, 8, Name.DCTDecode
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    _second(
        pdf,
        Dictionary(Font=Dictionary(F1=helv), XObject=Dictionary(Im1=photo)),
        b"q 64 0 0 64 72 500 cm /Im1 Do Q\n",
    )
    pdf.save(path)
    return path


def named_after(path: Path) -> Path:
    """Page 2 names a resource and a marked-content tag after the person (#20 for a space)."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    key = "/Jane#20Whitfield#20passport"
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    _second(
        pdf,
        Dictionary(Font=Dictionary(F1=helv), XObject=Dictionary({key: _grey_image(pdf)})),
        b"q 64 0 0 64 72 500 cm " + key.encode() + b" Do Q\n/Jane#20Whitfield BMC 0 0 m EMC\n",
    )
    pdf.save(path)
    return path


def private_key_deep(path: Path) -> Path:
    """Page 2's font carries the name ten arrays deep under a private key."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    other = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name.Helvetica,
            Encoding=Name.WinAnsiEncoding,
        )
    )
    value: pikepdf.Object = String(NAME)
    for _ in range(10):
        value = Array([value])
    other[Name("/Owner")] = value
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    _second(pdf, Dictionary(Font=Dictionary(F1=other)))
    pdf.save(path)
    return path


def inline_image_dict(path: Path) -> Path:
    """Page 2's inline image carries the name in its dictionary, as UTF-16 hex."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    hexed = ("\ufeff" + NAME).encode("utf-16-be").hex().encode()
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    _second(
        pdf,
        Dictionary(Font=Dictionary(F1=helv)),
        b"q 8 0 0 8 72 500 cm BI /W 1 /H 1 /BPC 8 /CS /G /Note <" + hexed + b"> ID \x80 EI Q\n",
    )
    pdf.save(path)
    return path


def faint_on_white(path: Path) -> Path:
    """Page 2 shows the name in a very light grey: faint, but there to see."""
    return _on_page_two(path, b"0.93 g " + _line(600, NAME, 14) + b"0 g\n")


def dark_on_black(path: Path) -> Path:
    """Page 2 shows the name in near-black on a black band."""
    return _on_page_two(path, b"0 g 60 580 300 50 re f 0.075 g " + _line(600, NAME, 14) + b"0 g\n")


def _layer(path: Path, mode: str) -> Path:
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    ocg = pdf.make_indirect(Dictionary(Type=Name.OCG, Name=String("notes")))
    if mode == "VE":
        mark = pdf.make_indirect(Dictionary(Type=Name.OCMD, VE=Array([Name.And, ocg])))
        view = Dictionary(OFF=Array([ocg]))
    else:  # auto-state: the group's view usage is off
        ocg.Usage = Dictionary(View=Dictionary(ViewState=Name.OFF))
        mark = ocg
        view = Dictionary(
            AS=Array([Dictionary(Event=Name.View, Category=Array([Name.View]), OCGs=Array([ocg]))])
        )
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    _second(
        pdf,
        Dictionary(Font=Dictionary(F1=helv), Properties=Dictionary(oc1=mark)),
        b"/OC /oc1 BDC " + _line(620, NAME) + b"EMC\n",
    )
    pdf.Root.OCProperties = Dictionary(OCGs=Array([ocg]), D=view)
    pdf.save(path)
    return path


def layer_by_expression(path: Path) -> Path:
    """Page 2's name is in a layer hidden through a visibility expression (/VE)."""
    return _layer(path, "VE")


def layer_by_auto_state(path: Path) -> Path:
    """Page 2's name is in a layer the viewer hides on opening (/AS, view usage off)."""
    return _layer(path, "AS")


# read back with the levels stretched too: a person with an image editor sees them
LOW_CONTRAST = {"faint grey on white", "near-black on black"}


def _annotation(rect: list[float], appearance: pikepdf.Stream, **more: object) -> Dictionary:
    return Dictionary(
        Type=Name.Annot,
        Subtype=Name.FreeText,
        Rect=Array(rect),
        AP=Dictionary(N=appearance),
        **more,
    )


def noview_annotation(path: Path) -> Path:
    """Page 2 carries an annotation a viewer never shows (NoView) whose appearance draws the
    name through an Identity-H font: flattening must leave it out, and nothing of it remain."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    cid, codes = _identity_h(pdf, NAME)
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    page = _second(pdf, Dictionary(Font=Dictionary(F1=helv)))
    ap = _form(
        pdf, b"BT /T0 12 Tf 2 5 Td " + _hex(codes) + b" Tj ET", Dictionary(Font=Dictionary(T0=cid))
    )
    ap.BBox = Array([0, 0, 200, 20])
    page.obj.Annots = Array([pdf.make_indirect(_annotation([72, 540, 272, 560], ap, F=32))])
    pdf.save(path)
    return path


def shared_appearance(path: Path) -> Path:
    """One appearance stream, drawing the name through an Identity-H font, shared by an
    annotation on each page: flattened onto both, burned on both."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    cid, codes = _identity_h(pdf, NAME)
    ap = _form(
        pdf, b"BT /T0 12 Tf 2 5 Td " + _hex(codes) + b" Tj ET", Dictionary(Font=Dictionary(T0=cid))
    )
    ap.BBox = Array([0, 0, 200, 20])
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    page = _second(pdf, Dictionary(Font=Dictionary(F1=helv)))
    for p in (pdf.pages[0], page):
        p.obj.Annots = Array([pdf.make_indirect(_annotation([72, 540, 272, 560], ap, F=4))])
    pdf.save(path)
    return path


def field_value_only(path: Path) -> Path:
    """Page 2 has a text field whose value is the name and which has no appearance of its
    own: flattening draws it (as a viewer would), and the redaction burns it."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    _letter(pdf, Dictionary(Font=Dictionary(F1=helv)))
    page = _second(pdf, Dictionary(Font=Dictionary(F1=helv)))
    field = pdf.make_indirect(
        Dictionary(
            Type=Name.Annot,
            Subtype=Name.Widget,
            FT=Name.Tx,
            T=String("contact"),
            V=String(NAME),
            Rect=Array([72, 540, 372, 560]),
            DA=String("/Helv 12 Tf 0 g"),
            F=4,
            P=page.obj,
        )
    )
    page.obj.Annots = Array([field])
    pdf.Root.AcroForm = Dictionary(
        Fields=Array([field]),
        DA=String("/Helv 0 Tf 0 g"),
        DR=Dictionary(Font=Dictionary(Helv=helv)),
    )
    pdf.save(path)
    return path


CASES: dict[str, Callable[[Path], Path]] = {
    "shared resources, Identity-H font": shared_identity_h,
    "shared resources, /Differences font": shared_differences,
    "shared resources, Type 3 font": shared_type3,
    "Type 3 glyph that shows text": type3_glyph_text,
    "unused form XObject": unused_form,
    "image XMP": image_xmp,
    "form /PieceInfo, /Metadata, private key": form_private_keys,
    "content-stream comment": content_comment,
    "marked content /ActualText": actual_text,
    "marked content /Alt and /E": alt_text,
    "optional-content layer (hidden)": hidden_layer,
    "annotation appearance and contents": annotation_appearance,
    "inline image of the name": inline_image,
    "text clipped (Tr 7)": clipped_text,
    "invisible text (Tr 3)": invisible_text,
    "text drawn off the page": off_page,
    "white text on white": white_text,
    "text under a white rectangle": under_rectangle,
    "text under a picture": under_image,
    "document level: outline, destination, URI, alt text, label, attachment": document_level,
    "JPEG EXIF and comment": jpeg_exif,
    "resource and tag named after the person": named_after,
    "private key ten arrays deep": private_key_deep,
    "inline image dictionary": inline_image_dict,
    "faint grey on white": faint_on_white,
    "near-black on black": dark_on_black,
    "layer hidden by a visibility expression": layer_by_expression,
    "layer hidden by auto-state": layer_by_auto_state,
    "annotation never viewed (NoView), Identity-H": noview_annotation,
    "one appearance shared by two pages, Identity-H": shared_appearance,
    "field value with no appearance": field_value_only,
}


# -- judging one case -----------------------------------------------------------------------

TEXT_READERS = ("poppler", "pdfium", "pdfminer", "pdfjs")


@dataclass
class Outcome:
    """What became of one case: delivered or held (with the reason), and where the name
    could still be read in what was written (the published output or the held copy)."""

    case: str
    state: str  # delivered | held
    reason: str = ""
    found_in: list[str] = field(default_factory=list)

    @property
    def leaked(self) -> bool:
        return self.state == "delivered" and bool(self.found_in)


def _squash(text: str) -> str:
    return "".join(c for c in text.casefold() if c.isalnum())


def _stretched(image: Image.Image) -> list[Image.Image]:
    """The page as someone with a levels slider sees it: light greys and near-blacks
    stretched to black on white."""
    import numpy as np

    a = np.asarray(image, dtype=np.float32)
    light = np.clip((a - 200.0) * (255.0 / 55.0), 0, 255)
    dark = 255.0 - np.clip(a * (255.0 / 60.0), 0, 255)
    return [Image.fromarray(x.astype(np.uint8)) for x in (light, dark)]


def where_readable(
    path: Path, value: str = NAME, engine: object = None, *, stretch: bool = False
) -> list[str]:
    """Every reading of ``path`` that still holds ``value`` (or its surname alone): four
    text readers, the leak check's object walk, ``qpdf --qdf`` bytes through ``strings``, and
    (given an OCR ``engine``) recognition of every page rendered at 300 dpi."""
    import subprocess

    from pressroom.redact.leaks import find_leaks
    from tests.readers import read_pages

    found = []
    wanted = {_squash(value), _squash(value.split()[-1])}
    for reader in TEXT_READERS:
        text = _squash("".join(read_pages(path, reader)))
        if any(w in text for w in wanted):
            found.append(reader)
    if find_leaks(path, [value, value.split()[-1]]):
        found.append("object walk")
    qdf = subprocess.run(
        ["qpdf", "--qdf", "--object-streams=disable", str(path), "-"],
        capture_output=True,
        check=False,
    ).stdout
    if any(w in _squash(qdf.decode("latin-1")) for w in wanted):
        found.append("qpdf --qdf | strings")
    if any(w in _squash(forms_alone(path)) for w in wanted):
        found.append("every form drawn alone (pdftotext)")
    if engine is not None:
        import pypdfium2

        doc = pypdfium2.PdfDocument(path)
        try:
            for page in doc:
                image = page.render(scale=300 / 72).to_pil().convert("L")
                for shown in [image, *(_stretched(image) if stretch else [])]:
                    read = engine.recognize(shown, dpi=300)  # type: ignore[attr-defined]
                    if any(w in _squash(read.text) for w in wanted):
                        found.append("OCR of the pixels")
                        break
                if "OCR of the pixels" in found:
                    break
        finally:
            doc.close()
    return found


def forms_alone(path: Path) -> str:
    """What pdftotext reads when every form XObject of ``path``, drawn or not, is drawn on a
    page of its own: text a viewer never shows is still in the file."""
    import subprocess
    import tempfile

    with pikepdf.open(path) as pdf, tempfile.TemporaryDirectory() as tmp:
        forms = [
            o
            for o in pdf.objects
            if isinstance(o, pikepdf.Stream) and o.get("/Subtype") == Name.Form
        ]
        if not forms:
            return ""
        out = pikepdf.Pdf.new()
        for form in forms:
            copied = out.copy_foreign(form)
            out.pages.append(
                pikepdf.Page(
                    Dictionary(
                        Type=Name.Page,
                        MediaBox=Array([0, 0, 2000, 2000]),
                        Resources=Dictionary(XObject=Dictionary(F=copied)),
                        Contents=out.make_stream(b"q /F Do Q"),
                    )
                )
            )
        alone = Path(tmp) / "forms.pdf"
        out.save(alone)
        return subprocess.run(
            ["pdftotext", str(alone), "-"], capture_output=True, text=True, check=False
        ).stdout


def judge(case: str, folder: Path, engine: object) -> Outcome:
    """Redact ``case`` for names as a job would (forms and annotations flattened first), and
    read back what was written."""
    from pressroom.outcomes import Held
    from pressroom.pipeline.core import JobOptions
    from pressroom.processing import Processing
    from pressroom.redact.policy import parse_policy
    from pressroom.templates import resolve_template

    folder.mkdir(parents=True, exist_ok=True)
    source = CASES[case](folder / "source.pdf")
    output = folder / "out.pdf"
    options = JobOptions(template=resolve_template("plain"))
    done = Processing(parse_policy("name", now=0))(source, output, options, engine)  # type: ignore[arg-type]
    if isinstance(done, Held):
        held = Outcome(case, "held", f"{done.code}: {done.reason}")
        if output.exists():
            held.found_in = where_readable(output, engine=engine, stretch=case in LOW_CONTRAST)
        return held
    found = where_readable(output, engine=engine, stretch=case in LOW_CONTRAST)
    return Outcome(case, "delivered", found_in=found)
