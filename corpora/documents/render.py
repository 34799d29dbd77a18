"""Rendering a document as it arrives: a noisy, skewed scan at a resolution (image PDF, PNG,
JPEG or TIFF) or a born-digital PDF with real text in embedded DejaVu."""

from __future__ import annotations

import zlib
from functools import cache
from pathlib import Path

import numpy as np
import pikepdf
from pikepdf import Array, Dictionary, Name
from PIL import Image, ImageDraw, ImageFilter

from corpora.documents.fonts import FONT_FILES, font, pillow_font
from corpora.documents.model import DIGITAL, Box, Document
from pressroom.synth import image_pdf, save_jpeg, save_png, save_tiff


def _skew_point(x: float, y: float, w: float, h: float, degrees: float) -> tuple[float, float]:
    """Where (x, y) of a w x h frame lands when the frame's content is turned ``degrees``
    counter-clockwise about its centre (as ``Image.rotate`` does), y down."""
    t = np.radians(degrees)
    dx, dy = x - w / 2, y - h / 2
    return (
        w / 2 + dx * float(np.cos(t)) + dy * float(np.sin(t)),
        h / 2 - dx * float(np.sin(t)) + dy * float(np.cos(t)),
    )


def skewed(box: Box, w: float, h: float, degrees: float) -> Box:
    if not degrees:
        return box
    pts = [_skew_point(x, y, w, h, degrees) for x in (box[0], box[2]) for y in (box[1], box[3])]
    return (
        min(p[0] for p in pts),
        min(p[1] for p in pts),
        max(p[0] for p in pts),
        max(p[1] for p in pts),
    )


def page_image(doc: Document, index: int, dpi: float) -> Image.Image:
    """One page as the scanner saw it: grey, with paper tone, blur, noise and a slight skew,
    turned as it lay on the glass."""
    page = doc.pages[index]
    k = dpi / 72.0
    image = Image.new("L", (round(page.width * k), round(page.height * k)), 255)
    draw = ImageDraw.Draw(image)
    for r in page.rules:
        draw.line(
            (r.x0 * k, r.y0 * k, r.x1 * k, r.y1 * k), fill=r.grey, width=max(1, round(r.width * k))
        )
    for g in page.glyphs:
        draw.text(
            (g.x * k, g.base * k),
            g.text,
            font=pillow_font(g.font, g.size * k),
            fill=g.grey,
            anchor="ls",
        )
    if doc.medium == DIGITAL:
        return image
    rng = np.random.default_rng(doc.seed + 7919 * index)
    image = image.filter(ImageFilter.GaussianBlur(0.35 * dpi / 300))
    paper = float(rng.uniform(238, 250))
    a = np.asarray(image, dtype=np.float32) * (paper / 255.0)
    a += rng.normal(0.0, doc.noise, a.shape).astype(np.float32)
    specks = rng.integers(0, a.size, size=int(a.size * 2e-5))
    a.flat[specks] = rng.uniform(30, 120, size=specks.size)
    image = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8), "L")
    if doc.skews[index]:
        image = image.rotate(
            doc.skews[index], resample=Image.Resampling.BICUBIC, fillcolor=round(paper)
        )
    if page.scan_turn:
        image = image.rotate(-page.scan_turn, expand=True)
    return image


def render(doc: Document, folder: Path, dpi: int = 300) -> Path:
    """Write ``doc`` as it would arrive: a scan at ``dpi`` in its format, or a born-digital
    PDF (``dpi`` does not matter then). Returns the file."""
    folder.mkdir(parents=True, exist_ok=True)
    if doc.medium == DIGITAL:
        return digital_pdf(doc, folder / f"{doc.id}.pdf")
    images = [page_image(doc, n, dpi) for n in range(len(doc.pages))]
    stem = folder / f"{doc.id}-{dpi}"
    if doc.fmt == "png" and len(images) == 1:
        return save_png(images[0], stem.with_suffix(".png"), dpi)
    if doc.fmt == "jpeg" and len(images) == 1:
        return save_jpeg(images[0], stem.with_suffix(".jpg"), dpi, quality=82)
    if doc.fmt == "tiff":
        return save_tiff(images, stem.with_suffix(".tif"), dpi, bilevel=False)
    return image_pdf(images, stem.with_suffix(".pdf"), dpi)


@cache
def _font_file(key: str) -> bytes:
    return zlib.compress(font(key).data, 6)


def _to_unicode(used: dict[int, str]) -> bytes:
    lines = [
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap",
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
        "/CMapName /Adobe-Identity-UCS def /CMapType 2 def",
        "1 begincodespacerange <0000> <FFFF> endcodespacerange",
    ]
    items = sorted(used.items())
    for start in range(0, len(items), 100):
        chunk = items[start : start + 100]
        lines.append(f"{len(chunk)} beginbfchar")
        lines += [f"<{g:04X}> <{ch.encode('utf-16-be').hex().upper()}>" for g, ch in chunk]
        lines.append("endbfchar")
    lines.append("endcmap CMapName currentdict /CMap defineresource pop end end")
    return "\n".join(lines).encode()


def digital_pdf(doc: Document, path: Path) -> Path:
    """A born-digital PDF: real text in embedded DejaVu (Type0, Identity-H, with ToUnicode),
    every glyph where the ground truth says it is."""
    pdf = pikepdf.Pdf.new()
    used: dict[str, dict[int, str]] = {}
    contents: list[bytes] = []
    for page in doc.pages:
        ops: list[str] = []
        for r in page.rules:
            ops.append(
                f"{r.grey / 255:.3f} G {r.width:.2f} w {r.x0:.2f} {page.height - r.y0:.2f} m "
                f"{r.x1:.2f} {page.height - r.y1:.2f} l S"
            )
        for g in page.glyphs:
            f = font(g.font)
            mine = used.setdefault(g.font, {})
            codes = []
            for ch in g.text:
                gid = f.gid(ch)
                mine[gid] = ch
                codes.append(f"{gid:04X}")
            name = "F" + str(list(FONT_FILES).index(g.font))
            ops.append(
                f"BT /{name} {g.size:.2f} Tf {g.grey / 255:.3f} g 1 0 0 1 {g.x:.2f} "
                f"{page.height - g.base:.2f} Tm <{''.join(codes)}> Tj ET"
            )
        contents.append("\n".join(ops).encode())
    fonts = Dictionary()
    for key, glyphs in used.items():
        f = font(key)
        stream = pdf.make_stream(_font_file(key))
        stream.Filter = Name.FlateDecode
        stream.Length1 = len(f.data)
        base = Name("/" + f.path.stem.replace("-", ""))
        widths = Array()
        for gid in sorted(glyphs):
            widths.append(gid)
            widths.append(Array([round(f.advance(glyphs[gid]))]))
        descriptor = Dictionary(
            Type=Name.FontDescriptor,
            FontName=base,
            Flags=32,
            FontBBox=Array([-1000, -400, 2000, 1200]),
            ItalicAngle=0,
            Ascent=round(f.ascent * 1000),
            Descent=-round(f.descent * 1000),
            CapHeight=730,
            StemV=80,
            FontFile2=stream,
        )
        cid = Dictionary(
            Type=Name.Font,
            Subtype=Name.CIDFontType2,
            BaseFont=base,
            CIDSystemInfo=Dictionary(Registry="Adobe", Ordering="Identity", Supplement=0),
            FontDescriptor=pdf.make_indirect(descriptor),
            CIDToGIDMap=Name.Identity,
            W=widths,
        )
        fonts[Name("/F" + str(list(FONT_FILES).index(key)))] = pdf.make_indirect(
            Dictionary(
                Type=Name.Font,
                Subtype=Name.Type0,
                BaseFont=base,
                Encoding=Name("/Identity-H"),
                DescendantFonts=Array([pdf.make_indirect(cid)]),
                ToUnicode=pdf.make_stream(_to_unicode(glyphs)),
            )
        )
    for page, content in zip(doc.pages, contents, strict=True):
        pdf.pages.append(
            pikepdf.Page(
                Dictionary(
                    Type=Name.Page,
                    MediaBox=Array([0, 0, page.width, page.height]),
                    Resources=Dictionary(Font=fonts),
                    Contents=pdf.make_stream(content),
                )
            )
        )
    pdf.save(path)
    return path
