"""`--ocr skip|redo|force` (the API's `ocr` field): what OCR does with PDF pages that carry text
already. skip keeps it; redo takes an earlier, invisible layer out (the page looks the same,
every word a viewer shows stays) and reads the page again; force renders every page and reads
it. Checked as properties over random content, then end to end with Tesseract."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pikepdf
import pytest

from pressroom.engines import pdfium
from pressroom.engines.tesseract import TesseractEngine
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.ocrmode import rework_into
from pressroom.pipeline.plain import read_range
from pressroom.processing import Processing
from pressroom.settings import Limits
from pressroom.synth import draw_page, page_lines, save_png
from pressroom.templates import resolve_template
from tests.helpers import cer, delivered
from tests.layers import digital_page, layered_scan, random_pages

pytestmark = pytest.mark.integration

GARBAGE = "Zebra quartz fjord nymph vex blitz grump"


def words(path: Path, page: int | None = None) -> list[str]:
    args = ["pdftotext", "-layout"]
    if page is not None:
        args += ["-f", str(page + 1), "-l", str(page + 1)]
    return subprocess.run(
        [*args, str(path), "-"], capture_output=True, text=True, check=True
    ).stdout.split()


def rendered(path: Path, page: int) -> np.ndarray:
    with pdfium.RecyclingDocument(path) as doc:
        return np.asarray(pdfium.render_gray(doc, page, 72))


@pytest.mark.parametrize("seed", range(30))
def test_redo_takes_out_every_invisible_word_and_only_those_and_the_page_looks_the_same(
    tmp_path: Path, seed: int
) -> None:
    src = tmp_path / "src.pdf"
    drawn = random_pages(src, seed)
    out = tmp_path / "out.pdf"
    done = rework_into(src, out, "redo", Limits())
    lost = {i for i, d in enumerate(drawn) if d.hidden}
    assert done.reread == frozenset(lost)
    path = done.path if lost else src
    for i, page in enumerate(drawn):
        got = set(words(path, i))
        assert got == page.shown, (seed, i, page)
        assert np.array_equal(rendered(src, i), rendered(path, i))
    if not lost:
        assert done.path == src and not out.exists()


def test_a_form_drawn_under_both_modes_keeps_its_words_where_they_show(tmp_path: Path) -> None:
    """One form, drawn invisibly on page 1 and visibly on page 2 (and the other way round):
    each page loses only what it hid."""
    for first, second in ((3, 0), (0, 3)):
        pdf = pikepdf.new()
        font = pdf.make_indirect(
            pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1,
                               BaseFont=pikepdf.Name.Helvetica)
        )  # fmt: skip
        form = pdf.make_stream(b"BT /F1 12 Tf 10 10 Td (Formword) Tj ET")
        form.Type, form.Subtype = pikepdf.Name.XObject, pikepdf.Name.Form
        form.BBox = pikepdf.Array([0, 0, 200, 50])
        form.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font))
        for mode in (first, second):
            pdf.pages.append(
                pikepdf.Page(
                    pikepdf.Dictionary(
                        Type=pikepdf.Name.Page,
                        MediaBox=pikepdf.Array([0, 0, 300, 300]),
                        Contents=pdf.make_stream(f"{mode} Tr q 1 0 0 1 50 50 cm /X Do Q".encode()),
                        Resources=pikepdf.Dictionary(XObject=pikepdf.Dictionary(X=form)),
                    )
                )
            )
        src = tmp_path / f"shared-{first}.pdf"
        pdf.save(src)
        done = rework_into(src, tmp_path / f"out-{first}.pdf", "redo", Limits())
        hidden_on = 0 if first == 3 else 1
        assert done.reread == {hidden_on}
        assert words(done.path, hidden_on) == []
        assert words(done.path, 1 - hidden_on) == ["Formword"]


def test_force_renders_each_page_of_its_range_at_its_displayed_size(tmp_path: Path) -> None:
    src = digital_page(tmp_path / "d.pdf", "Visible words here", GARBAGE, rotate=90, pages=3)
    done = rework_into(src, tmp_path / "out.pdf", "force", Limits(), only=range(1, 2))
    assert done.pages == 1
    with pikepdf.open(done.path) as pdf:
        kept, page, _ = pdf.pages
        assert "/Font" in kept.obj.Resources and kept.obj.Rotate == 90
        assert "/Font" not in page.obj.Resources and "/Rotate" not in page.obj
        assert [float(v) for v in page.mediabox] == [0, 0, 792, 612]  # as displayed
        (image,) = page.obj.Resources.XObject.values()
        # 300 dpi (PDFium rounds 792 pt x 300/72 up: 3,301)
        assert int(image.Width) in (3300, 3301) and int(image.Height) == 2550
    assert words(done.path, 1) == []  # no text is left on it to read twice
    # and it looks as the page did, turned as a viewer shows it
    assert np.abs(rendered(src, 1).astype(int) - rendered(done.path, 1)).mean() < 3


def test_each_mode_on_a_scan_under_an_earlier_layer(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    """skip keeps the earlier (wrong) layer; redo and force read the scan itself, and the
    earlier words are gone."""
    src = tmp_path / "layered.pdf"
    truth = layered_scan(src, GARBAGE)
    got = {}
    for mode in ("skip", "redo", "force"):
        out = tmp_path / f"{mode}.pdf"
        options = JobOptions(template=resolve_template("plain"), ocr=mode)  # type: ignore[arg-type]
        result = Processing()(src, out, options, engine)
        got[mode] = (result.ocr_pages, result.kept_pages, " ".join(words(out)))
    assert got["skip"] == (0, 1, GARBAGE)
    for mode in ("redo", "force"):
        ocr_pages, kept, text = got[mode]
        assert (ocr_pages, kept) == (1, 0)
        assert "Zebra" not in text
        assert cer(truth, text) < 0.03, (mode, text)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "force.pdf", "layered.pdf", "redo.pdf", "skip.pdf"
    ]  # fmt: skip


def test_redo_of_a_branded_output_reads_its_scan_again_once(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    """A Pressroom output (bands of visible text over a scan, an invisible layer under them)
    processed again with redo: the scan is read again, its words are in the layer once, the
    bands' words stay as they were; with skip nothing is read."""
    scan = draw_page(page_lines(5, 4), dpi=200, height_in=4.0)
    first = tmp_path / "first.pdf"
    brand = JobOptions(template=resolve_template("sample"), title="Quarterly waivers")
    delivered(Processing()(save_png(scan.image, tmp_path / "s.png", 200), first, brand, engine))
    for mode, ocr_pages in (("skip", 0), ("redo", 1)):
        out = tmp_path / f"again-{mode}.pdf"
        options = JobOptions(template=resolve_template("plain"), ocr=mode)  # type: ignore[arg-type]
        result = Processing()(first, out, options, engine)
        assert result.ocr_pages == ocr_pages
        text = subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True).stdout
        for line in scan.lines:
            assert text.count(line) == 1, (mode, line)
        assert text.count("Quarterly waivers") == 2  # the earlier cover's band and page's band


def test_a_range_reads_as_the_whole_document_does(tmp_path: Path, engine: TesseractEngine) -> None:
    """A split job's (or process -j N's) page range under force renders only its own pages."""
    src = digital_page(tmp_path / "d.pdf", "Range words to render", GARBAGE, pages=2)
    options = JobOptions(template=resolve_template("plain"), ocr="force")
    part = tmp_path / "part.pdf"
    read = read_range(src, part, options, engine, range(1, 2))
    assert [p.method for p in read.pages] == ["ocr"]
    assert "Range words to render" in " ".join(words(part))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.pdf", "part.pdf"]


def test_the_mode_is_part_of_the_artifact_digest_and_skip_is_not_named() -> None:
    from pressroom.worker.publish import output_digest

    template = resolve_template("plain")
    skip = output_digest(JobOptions(template=template))
    assert skip == output_digest(JobOptions(template=template, ocr="skip"))
    redo = output_digest(JobOptions(template=template, ocr="redo"))
    force = output_digest(JobOptions(template=template, ocr="force"))
    assert len({skip, redo, force}) == 3 and "ocr=force" in force
