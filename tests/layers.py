"""PDFs that carry a text layer already, as other tools leave them: a scan under an invisible
OCR layer (what OCRmyPDF and every scanner's "searchable PDF" write), a born-digital page with
a hidden layer besides its visible words, and content streams drawn from a seeded random model
of the text state, for the property that ``--ocr redo`` takes out what is invisible and only
that."""

from __future__ import annotations

import io
import random
from dataclasses import dataclass
from pathlib import Path

import pikepdf
from pikepdf import Array, Dictionary, Name

from pressroom.synth import draw_page, page_lines


def helvetica(pdf: pikepdf.Pdf) -> pikepdf.Object:
    return pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name.Helvetica,
            Encoding=Name.WinAnsiEncoding,
        )
    )


def layered_scan(path: Path, hidden: str, *, seed: int = 3, dpi: int = 200) -> str:
    """A one-page scan (JPEG) under an invisible text layer that reads ``hidden`` (an earlier
    OCR's words, wrong on purpose); returns the words the scan really shows."""
    scan = draw_page(page_lines(seed, 4), dpi=dpi, height_in=3.0)
    pdf = pikepdf.new()
    buf = io.BytesIO()
    scan.image.save(buf, format="JPEG", quality=90)
    image = pdf.make_stream(buf.getvalue())
    image.Type, image.Subtype = Name.XObject, Name.Image
    image.Width, image.Height = scan.image.size
    image.ColorSpace, image.BitsPerComponent, image.Filter = Name.DeviceGray, 8, Name.DCTDecode
    w, h = scan.image.width * 72 / dpi, scan.image.height * 72 / dpi
    content = f"q {w} 0 0 {h} 0 0 cm /Im0 Do Q BT 3 Tr /F1 12 Tf 40 100 Td ({hidden}) Tj ET"
    pdf.pages.append(
        pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, w, h]),
                Contents=pdf.make_stream(content.encode()),
                Resources=Dictionary(
                    XObject=Dictionary(Im0=image), Font=Dictionary(F1=helvetica(pdf))
                ),
            )
        )
    )
    pdf.save(path)
    return scan.text


def digital_page(path: Path, shown: str, hidden: str, *, rotate: int = 0, pages: int = 1) -> Path:
    """Born-digital pages that show ``shown`` in Helvetica and hide ``hidden`` (mode 3)."""
    pdf = pikepdf.new()
    font = helvetica(pdf)
    for _ in range(pages):
        content = (
            f"BT /F1 16 Tf 72 700 Td ({shown}) Tj ET BT 3 Tr /F1 12 Tf 72 600 Td ({hidden}) Tj ET"
        )
        page = pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, 612, 792]),
                Contents=pdf.make_stream(content.encode()),
                Resources=Dictionary(Font=Dictionary(F1=font)),
            )
        )
        if rotate:
            page.obj.Rotate = rotate
        pdf.pages.append(page)
    pdf.save(path)
    return path


@dataclass
class Drawn:
    """What a random page draws: the words a viewer shows and those it hides."""

    shown: set[str]
    hidden: set[str]


def random_pages(path: Path, seed: int, pages: int = 3) -> list[Drawn]:
    """Pages whose content mixes q/Q, Tr changes, BT/ET, every text-showing operator and a form
    shared by every page (drawn under whatever mode is in force, so under both): each word is
    unique, and the model follows the text state as PDF defines it (Tr belongs to the graphics
    state: q/Q save it, BT keeps it, a form starts with the mode in force where it is drawn)."""
    rng = random.Random(seed)
    pdf = pikepdf.new()
    font = helvetica(pdf)
    counter = iter(range(10_000))

    def word() -> str:
        return f"W{seed}x{next(counter)}"

    form_words = [word(), word()]
    # the form sets no mode before its first word: that word takes the caller's; then it
    # shows one visibly whatever the caller's mode
    form = pdf.make_stream(
        (
            f"BT /F1 10 Tf 20 20 Td ({form_words[0]}) Tj ET "
            f"BT 0 Tr /F1 10 Tf 20 40 Td ({form_words[1]}) Tj ET"
        ).encode()
    )
    form.Type, form.Subtype = Name.XObject, Name.Form
    form.BBox = Array([0, 0, 300, 100])
    form.Resources = Dictionary(Font=Dictionary(F1=font))
    drawn: list[Drawn] = []
    for _ in range(pages):
        seen = Drawn(set(), set())
        ops: list[str] = []
        mode = 0
        stack: list[int] = []
        y = 760
        for _step in range(rng.randint(6, 14)):
            choice = rng.random()
            if choice < 0.15:
                ops.append("q")
                stack.append(mode)
            elif choice < 0.25 and stack:
                ops.append("Q")
                mode = stack.pop()
            elif choice < 0.45:
                mode = rng.choice((0, 3, 3, 1))
                ops.append(f"{mode} Tr")
            elif choice < 0.55:
                ops.append(f"q 1 0 0 1 72 {y - 80} cm /Fm0 Do Q")
                (seen.hidden if mode == 3 else seen.shown).add(form_words[0])
                seen.shown.add(form_words[1])
                y -= 90
            else:
                text = []
                for _n in range(rng.randint(1, 3)):
                    w = word()
                    (seen.hidden if mode == 3 else seen.shown).add(w)
                    kind = rng.choice(("Tj", "TJ", "'", '"'))
                    if kind == "Tj":
                        text.append(f"T* ({w}) Tj")
                    elif kind == "TJ":
                        text.append(f"T* [({w[:2]}) -20 ({w[2:]})] TJ")
                    elif kind == "'":
                        text.append(f"({w}) '")
                    else:
                        text.append(f'1 0.5 ({w}) "')
                    if mode == 3 and rng.random() < 0.3:
                        mode = 0
                        text.append("0 Tr")
                ops.append(f"BT /F1 11 Tf 14 TL 72 {y} Td " + " ".join(text) + " ET")
                y -= 14 * (len(text) + 1)
            if y < 120:
                break
        pdf.pages.append(
            pikepdf.Page(
                Dictionary(
                    Type=Name.Page,
                    MediaBox=Array([0, 0, 612, 792]),
                    Contents=pdf.make_stream("\n".join(o for o in ops if o).encode()),
                    Resources=Dictionary(Font=Dictionary(F1=font), XObject=Dictionary(Fm0=form)),
                )
            )
        )
        drawn.append(seen)
    pdf.save(path)
    return drawn
