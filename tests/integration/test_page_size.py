"""Every output page prints at its source's size, whatever the template's bands: Letter, A4,
A5 landscape, a mixed-size document and a fax with non-square pixels. Every font of every
output is embedded with a ToUnicode map, and the viewer's page numbers match the footer."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pikepdf
import pypdfium2
import pytest
from PIL import Image

from pressroom.engines.tesseract import TesseractEngine
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.geometry import band_scale
from pressroom.processing import Processing
from pressroom.redact.policy import parse_policy
from pressroom.synth import draw_page, image_pdf, text_pdf
from pressroom.templates import resolve_template
from tests.forms import FIELD_VALUE, form_pdf
from tests.helpers import delivered, output_text

pytestmark = pytest.mark.integration

LINES = ["Harbour Lane payout form, reference seven", "Signed by Mr Quentin Alder on the day"]


def fonts(path: Path) -> list[tuple[str, str, str]]:
    """pdffonts' name, 'emb' and 'uni' columns, one row per font."""
    done = subprocess.run(["pdffonts", str(path)], capture_output=True, text=True, check=True)
    rows = []
    for line in done.stdout.splitlines()[2:]:
        cells = line.split()
        rows.append((cells[0], cells[-5], cells[-3]))
    return rows


def sizes(path: Path) -> list[float]:
    """Each page's width and height, one after the other."""
    with pikepdf.open(path) as pdf:
        return [float(v) for p in pdf.pages for v in (p.mediabox[2], p.mediabox[3])]


def labels(path: Path) -> list[str]:
    doc = pypdfium2.PdfDocument(str(path))
    try:
        return [doc.get_page_label(i) for i in range(len(doc))]
    finally:
        doc.close()


def scan_pdf(path: Path, width_in: float, height_in: float, dpi: int = 150) -> Path:
    return image_pdf(
        [draw_page(LINES, dpi=dpi, width_in=width_in, height_in=height_in).image], path, dpi
    )


def big_and_letter(path: Path) -> Path:
    """A Letter page and a 2160 x 2224 pt drawing sheet, both typed."""
    text_pdf([LINES, LINES], path)
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        pdf.pages[1].obj.MediaBox = pikepdf.Array([0, 0, 2160, 2224])
        pdf.save(path)
    return path


def fax_tiff(path: Path) -> Path:
    """A bilevel fax at 204 x 98 dpi: its pixels twice as tall as they are wide."""
    fine = draw_page(LINES, dpi=204, height_in=5.0, font_pt=16).image
    coarse = fine.resize((fine.width, round(fine.height * 98 / 204)), Image.Resampling.BILINEAR)
    coarse.convert("1").save(path, compression="group4", dpi=(204, 98))
    return path


SOURCES = {
    "letter": lambda p: text_pdf([LINES], p / "letter.pdf"),
    "a4": lambda p: scan_pdf(p / "a4.pdf", 8.27, 11.69),
    "a5-landscape": lambda p: scan_pdf(p / "a5.pdf", 8.27, 5.83),
    "mixed": lambda p: big_and_letter(p / "mixed.pdf"),
    "fax": lambda p: fax_tiff(p / "fax.tif"),
    "form": lambda p: form_pdf(p / "form.pdf"),
}
EXPECTED = {
    "letter": [(612.0, 792.0)],
    "a4": [(595.2, 841.92)],  # 1240 x 1754 pixels at 150 dpi
    "a5-landscape": [(595.2, 419.52)],  # 1240 x 874
    "mixed": [(612.0, 792.0), (2160.0, 2224.0)],
    "fax": [(612.0, 360.0)],
    "form": [(612.0, 792.0)],
}


@pytest.mark.parametrize("kind", sorted(SOURCES))
@pytest.mark.parametrize("redact", [False, True], ids=["plain", "redacted"])
def test_each_page_keeps_its_size_and_every_font_is_embedded(
    tmp_path: Path, engine: TesseractEngine, kind: str, redact: bool
) -> None:
    src = SOURCES[kind](tmp_path)
    out = tmp_path / "out.pdf"
    processing = Processing(parse_policy("name", now=0) if redact else None)
    result = processing(src, out, JobOptions(template=resolve_template("sample")), engine)
    got = sizes(out)
    expected = EXPECTED[kind]
    flat = [v for size in expected for v in size]
    assert got[2:] == pytest.approx(flat, abs=0.01)  # page 0 is the cover
    assert got[:2] == pytest.approx(flat[:2], abs=0.01)  # sized like the first page
    assert result.output_pages == len(expected) + 1
    # every font embedded, each with a ToUnicode map (pdffonts: emb and uni)
    rows = fonts(out)
    assert rows and all(emb == "yes" and uni == "yes" for _name, emb, uni in rows), rows
    # the viewer numbers the pages as the footer does
    assert labels(out) == ["Cover", *[str(n) for n in range(1, len(expected) + 1)]]
    # each content page has its words, and the footer's own page number
    for n in range(1, len(expected) + 1):
        text = " ".join(output_text(out, n).split())
        assert f"Page {n} of {len(expected)}" in text
        if kind == "form":
            assert FIELD_VALUE in text and ("QUINCE" in text) is not redact
        else:
            assert "payout form" in text
            assert ("Quentin Alder" in text) is not redact


def test_bands_scale_with_the_page() -> None:
    assert band_scale(612, 792) == band_scale(595, 842) == 1.0
    assert band_scale(2160, 2224) == pytest.approx(2160 / 612)
    assert band_scale(595, 420) == pytest.approx(420 / 595)


def margin_template(folder: Path) -> Path:
    """The sample brand with its bands over blank margins."""
    import shutil

    from pressroom.templates import BUILTIN_DIR

    shutil.copytree(BUILTIN_DIR / "sample", folder)
    toml = folder / "template.toml"
    toml.write_text(toml.read_text() + '\n[page]\nfit = "margin"\n')
    return folder


def test_bands_go_over_blank_margins_and_inside_where_the_margin_has_ink(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    from PIL import ImageDraw

    from pressroom.redact.engine import redact_document

    template = resolve_template(str(margin_template(tmp_path / "brand")))
    assert template.fit == "margin"
    blank = draw_page(LINES, dpi=150).image  # text from an inch down: its margins are blank
    inked = blank.copy()
    ImageDraw.Draw(inked).rectangle((0, 0, inked.width, 20), fill=0)  # a scanner's dark edge
    for image, scaled in ((blank, False), (inked, True)):
        src = image_pdf([image], tmp_path / "scan.pdf", 150)
        out = tmp_path / "out.pdf"
        policy = parse_policy("name", now=0)
        result = redact_document(src, out, JobOptions(template=template), policy, engine)
        assert sizes(out)[2:] == pytest.approx([612, 792], abs=0.01)
        assert result.sheet is not None
        scale = result.sheet.pages[0].placement[0]
        assert (scale < 1.0) is scaled, scale
        text = " ".join(output_text(out, 1).split())
        assert "payout form" in text and "Quentin Alder" not in text
        # a held copy's sidecar, placed from its sheet, is the one its layouts give: the
        # bands' words in neither
        from pressroom.pipeline.sidecar import held_sidecar, sidecar_text

        held = held_sidecar(out, result.sheet)
        assert held == sidecar_text(out, result.layouts, 1)
        assert "Harbour Lane Services" not in held and "Processed" not in held
        # plain, the same choice: the sidecar has the page's text and none of the bands'
        plain = tmp_path / "plain.pdf"
        options = JobOptions(template=template, sidecar=True)
        done = Processing()(src, plain, options, engine)
        assert (done.layouts[0].scale < 1.0) is scaled
        sidecar = (tmp_path / "plain.txt").read_text(encoding="utf-8")
        assert "Quentin Alder" in sidecar and "Harbour Lane Services" not in sidecar


def replaced_font_file(path: Path) -> int:
    """The length of the embedded Pressroom font program standing in for Helvetica."""
    with pikepdf.open(path) as pdf:
        for obj in pdf.objects:
            descriptor = (
                isinstance(obj, pikepdf.Dictionary) and obj.get("/Type") == "/FontDescriptor"
            )
            if descriptor and "PressroomSans" in str(obj.FontName):
                return len(obj.FontFile2.read_bytes())
    raise AssertionError("no Pressroom Sans embedded")


def test_a_replaced_font_carries_the_glyphs_its_text_shows(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = text_pdf([LINES], tmp_path / "typed.pdf")
    out = tmp_path / "out.pdf"
    delivered(Processing()(src, out, JobOptions(template=resolve_template("plain")), engine))
    assert replaced_font_file(out) < 12_000  # a subset, not every Latin glyph (~20 KB)
    assert " ".join(output_text(out, 0).split()) == " ".join(LINES)
    assert all(emb == "yes" and uni == "yes" for _n, emb, uni in fonts(out))


def test_text_in_a_font_the_walk_cannot_tell_keeps_every_glyph(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    """A form XObject that shows text in the font its caller set: the walk cannot tell which
    font's codes those are, so the replaced font keeps every glyph rather than miss one."""
    src = text_pdf([LINES], tmp_path / "typed.pdf")
    with pikepdf.open(src, allow_overwriting_input=True) as pdf:
        page = pdf.pages[0]
        form = pdf.make_stream(
            b"BT 72 400 Td (Drawn in the caller's font) Tj ET",
            Type=pikepdf.Name.XObject,
            Subtype=pikepdf.Name.Form,
            BBox=pikepdf.Array([0, 0, 612, 792]),
        )
        page.obj.Resources.XObject = pikepdf.Dictionary(Fm0=form)
        content = page.obj.Contents.read_bytes()
        page.obj.Contents = pdf.make_stream(content + b" BT /F1 11 Tf ET /Fm0 Do")
        pdf.save(src)
    out = tmp_path / "out.pdf"
    delivered(Processing()(src, out, JobOptions(template=resolve_template("plain")), engine))
    assert replaced_font_file(out) > 15_000
    assert "Drawn in the caller's font" in " ".join(output_text(out, 0).split())
