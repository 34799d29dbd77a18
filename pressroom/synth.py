"""Synthetic scans with known text, for demos, tests and benchmarks (no binary fixtures needed)."""

from __future__ import annotations

import io
import random
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pikepdf
from pikepdf import Array, Dictionary, Name
from PIL import Image, ImageDraw, ImageFilter, ImageFont

FONT_DIRS = ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu")
FONTS = ("DejaVuSerif.ttf", "DejaVuSans.ttf")

SENTENCES = (
    "Participant waiver and release of liability for the summer sailing programme.",
    "I understand that sailing involves risks including capsizing and cold water.",
    "Payout request form: please transfer the approved amount within ten days.",
    "The undersigned confirms that the information given above is complete.",
    "Return this form to the support desk before the first day of the course.",
    "Medical conditions, allergies and medication must be listed on page two.",
    "Reference 2026-0417 was approved by the finance office on 12 March 2026.",
    "Total amount due: 1,250.00 payable by bank transfer or cheque.",
    "Parents or guardians sign for participants under eighteen years of age.",
    "Photographs taken during events may be used in the annual report.",
    "Claims must be submitted within thirty days of the date of the invoice.",
    "Emergency contact details are kept for the duration of the programme.",
    "Equipment damaged through negligence will be charged at replacement cost.",
    "Signed copies are stored securely and destroyed after seven years.",
    "Questions about this form may be sent to the office during opening hours.",
    "The instructor may refuse participation when weather conditions are unsafe.",
)


def find_font(name: str) -> Path:
    for folder in FONT_DIRS:
        path = Path(folder) / name
        if path.is_file():
            return path
    raise FileNotFoundError(f"font {name} not found; install fonts-dejavu-core")


@dataclass(frozen=True, slots=True)
class Scan:
    """A page image and the text drawn on it, line by line, plus where each word was drawn."""

    image: Image.Image
    lines: tuple[str, ...]
    dpi: int
    word_boxes: tuple[tuple[str, tuple[int, int, int, int]], ...]  # upright page pixels

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def page_lines(seed: int, count: int) -> tuple[str, ...]:
    rng = random.Random(seed)
    return tuple(rng.choice(SENTENCES) for _ in range(count))


def draw_page(
    lines: Sequence[str],
    *,
    dpi: int = 300,
    width_in: float = 8.5,
    height_in: float = 11.0,
    font_pt: float = 12.0,
    font: str = "DejaVuSerif.ttf",
) -> Scan:
    w, h = round(width_in * dpi), round(height_in * dpi)
    image = Image.new("L", (w, h), 255)
    draw = ImageDraw.Draw(image)
    face = ImageFont.truetype(str(find_font(font)), round(font_pt * dpi / 72))
    space = draw.textlength(" ", font=face)
    x0 = round(0.9 * dpi)
    y = round(0.9 * dpi)
    step = round(font_pt * 1.9 * dpi / 72)
    boxes: list[tuple[str, tuple[int, int, int, int]]] = []
    for line in lines:
        x = float(x0)
        for word in line.split():
            draw.text((x, y), word, font=face, fill=0)
            left, top, right, bottom = draw.textbbox((x, y), word, font=face)
            boxes.append((word, (round(left), round(top), round(right), round(bottom))))
            x += draw.textlength(word, font=face) + space
        y += step
    return Scan(image, tuple(lines), dpi, tuple(boxes))


def distort(
    image: Image.Image,
    *,
    rotate: int = 0,
    skew: float = 0.0,
    faint: bool = False,
    noise: float = 0.0,
    seed: int = 0,
) -> Image.Image:
    """A scan's defects: turned (clockwise degrees), skewed (ccw degrees), faint, speckled."""
    out = image
    if skew:
        out = out.rotate(skew, resample=Image.Resampling.BICUBIC, expand=False, fillcolor=255)
    if faint:
        # Light grey ink on an off-white page, softened as by a worn toner cartridge.
        out = out.filter(ImageFilter.GaussianBlur(0.8)).point(lambda v: 175 + v * 62 // 255)
    if noise:
        rng = random.Random(seed)
        px = out.load()
        assert px is not None
        for _ in range(int(out.width * out.height * noise)):
            px[rng.randrange(out.width), rng.randrange(out.height)] = rng.choice((0, 255))
    if rotate % 360:
        out = out.rotate(-rotate, expand=True, fillcolor=255)
    return out


def save_png(image: Image.Image, path: Path, dpi: int) -> Path:
    image.save(path, format="PNG", dpi=(dpi, dpi))
    return path


def save_tiff(images: Sequence[Image.Image], path: Path, dpi: int, *, bilevel: bool = True) -> Path:
    frames = [im.convert("1") if bilevel else im for im in images]
    frames[0].save(
        path,
        format="TIFF",
        save_all=True,
        append_images=frames[1:],
        dpi=(dpi, dpi),
        compression="group4" if bilevel else "tiff_deflate",
    )
    return path


def save_jpeg(image: Image.Image, path: Path, dpi: int, quality: int = 85) -> Path:
    image.save(path, format="JPEG", dpi=(dpi, dpi), quality=quality)
    return path


def image_pdf(images: Sequence[Image.Image], path: Path, dpi: int, *, jpeg: bool = True) -> Path:
    """An image-only PDF, the way a scanner writes one: one full-page image per page."""
    pdf = pikepdf.Pdf.new()
    for im in images:
        gray = im.convert("L")
        if jpeg:
            buf = io.BytesIO()
            gray.save(buf, format="JPEG", quality=85)
            stream = pdf.make_stream(buf.getvalue())
            stream.Filter = Name.DCTDecode
        else:
            stream = pdf.make_stream(zlib.compress(gray.tobytes()))
            stream.Filter = Name.FlateDecode
        stream.Type = Name.XObject
        stream.Subtype = Name.Image
        stream.Width, stream.Height = gray.size
        stream.ColorSpace = Name.DeviceGray
        stream.BitsPerComponent = 8
        w_pt, h_pt = gray.width * 72 / dpi, gray.height * 72 / dpi
        page = pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, w_pt, h_pt]),
                Resources=Dictionary(XObject=Dictionary(Im0=stream)),
                Contents=pdf.make_stream(f"q {w_pt:.3f} 0 0 {h_pt:.3f} 0 0 cm /Im0 Do Q".encode()),
            )
        )
        pdf.pages.append(page)
    pdf.save(path)
    return path


def text_pdf(pages: Sequence[Sequence[str]], path: Path, *, rotate: int = 0) -> Path:
    """A born-digital PDF: real Helvetica text, letter size, optionally with /Rotate."""
    pdf = pikepdf.Pdf.new()
    font = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name.Helvetica,
            Encoding=Name.WinAnsiEncoding,
        )
    )
    for lines in pages:
        ops = ["BT /F1 11 Tf 14 TL 72 720 Td"]
        for line in lines:
            ops.append(f"<{line.encode('cp1252').hex()}> Tj T*")
        ops.append("ET")
        page = pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, 612, 792]),
                Resources=Dictionary(Font=Dictionary(F1=font)),
                Contents=pdf.make_stream("\n".join(ops).encode()),
            )
        )
        if rotate:
            page.obj.Rotate = rotate
        pdf.pages.append(page)
    pdf.save(path)
    return path
