"""Archive-grade output: PDF/A-2b on request (the structural check on every kind of input, and
a check that fails where it should), the sidecar text, and documents without text."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pikepdf
import pytest
from PIL import Image

from pressroom.engines.tesseract import TesseractEngine
from pressroom.errors import NoText, UnreadableScan
from pressroom.pipeline.archive import pdfa_problems, srgb_profile
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.sidecar import sidecar_path
from pressroom.processing import Processing
from pressroom.redact.policy import parse_policy
from pressroom.synth import text_pdf
from pressroom.templates import resolve_template
from tests.helpers import delivered, held_by, hostile_pdf
from tests.integration.test_page_size import SOURCES

pytestmark = pytest.mark.integration


def options(template: str = "sample", **kw: object) -> JobOptions:
    return JobOptions(template=resolve_template(template), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", sorted(SOURCES))
@pytest.mark.parametrize("redact", [False, True], ids=["plain", "redacted"])
def test_every_kind_of_input_makes_pdfa_2b(
    tmp_path: Path, engine: TesseractEngine, kind: str, redact: bool
) -> None:
    src = SOURCES[kind](tmp_path)
    out = tmp_path / "out.pdf"
    processing = Processing(parse_policy("name", now=0) if redact else None)
    delivered(processing(src, out, options(output_type="pdfa"), engine))
    assert pdfa_problems(out) == []
    with pikepdf.open(out) as pdf:
        meta = pdf.open_metadata()
        assert (meta["pdfaid:part"], meta["pdfaid:conformance"]) == ("2", "B")
        assert meta["dc:title"] == str(pdf.docinfo.Title)
        (intent,) = pdf.Root.OutputIntents
        assert intent.S == "/GTS_PDFA1" and intent.DestOutputProfile.N == 3


def test_a_plain_pdf_is_not_pdfa_and_the_check_says_why(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = text_pdf(
        [["A letter typed in Helvetica, which the source does not embed."]], tmp_path / "a.pdf"
    )
    out = tmp_path / "out.pdf"
    delivered(Processing()(src, out, options("plain"), engine))
    problems = pdfa_problems(out)
    assert any(p.startswith("6.6.4") for p in problems)  # no pdfaid
    assert any(p.startswith("6.2.3") for p in problems)  # no output intent
    # the source itself breaks the font, script and attachment clauses
    hostile = hostile_pdf(tmp_path / "hostile.pdf")
    found = " ".join(pdfa_problems(hostile))
    assert "6.2.11.4" in found and "OpenAction" in found and "embedded files" in found


def test_the_srgb_profile_is_the_same_every_time() -> None:
    first = srgb_profile()
    srgb_profile.cache_clear()
    assert srgb_profile() == first and first[36:40] == b"acsp" and first[16:20] == b"RGB "


def pdftotext_page(path: Path, page: int) -> str:
    done = subprocess.run(
        ["pdftotext", "-f", str(page), "-l", str(page), str(path), "-"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@pytest.mark.parametrize("redact", [False, True], ids=["plain", "redacted"])
def test_the_sidecar_is_the_text_layer_page_by_page(
    tmp_path: Path, engine: TesseractEngine, redact: bool
) -> None:
    src = SOURCES["mixed"](tmp_path)
    out = tmp_path / "out.pdf"
    processing = Processing(parse_policy("name", now=0) if redact else None)
    result = processing(src, out, options("plain", sidecar=True), engine)
    pages = sidecar_path(out).read_text(encoding="utf-8").split("\f")
    assert len(pages) == result.pages == 2
    for n, text in enumerate(pages, 1):
        # another reader's text of the same page, without the bands (plain has none)
        assert text.split() == pdftotext_page(out, n).split()
        assert "payout form" in text
        assert ("Quentin Alder" in text) is not redact


def test_a_template_may_ask_for_a_sidecar_and_a_job_may_decline(tmp_path: Path) -> None:
    template = resolve_template("sample")
    assert JobOptions(template=template).wants_sidecar is template.sidecar is False
    assert JobOptions(template=template, sidecar=True).wants_sidecar
    assert not JobOptions(template=template, output_type="pdf").archive
    assert JobOptions(template=template, output_type="pdfa").archive


def blank(path: Path) -> Path:
    Image.new("L", (850, 1100), 235).save(path, dpi=(100, 100))
    return path


def test_a_document_without_text_is_refused_unless_allowed(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = blank(tmp_path / "photo.png")
    with pytest.raises(UnreadableScan):
        delivered(Processing()(src, tmp_path / "a.pdf", options("plain"), engine))
    out = tmp_path / "b.pdf"
    result = Processing()(src, out, options("plain", allow_no_text=True, sidecar=True), engine)
    assert result.text_layer == "empty" and result.pages == 1
    assert sidecar_path(out).read_text(encoding="utf-8").strip() == ""
    held = held_by(  # a redaction of one is held for a person
        Processing(parse_policy("name", now=0))(
            src, tmp_path / "c.pdf", options("plain", allow_no_text=True), engine
        ),
        NoText,
    )
    assert held.code == "NO_TEXT" and held.sheet is not None


def test_cmyk_colour_anywhere_breaks_pdfa(tmp_path: Path) -> None:
    """Set by an operator in a content stream, or under an Indexed colour space."""
    src = text_pdf([["A page in CMYK ink."]], tmp_path / "cmyk.pdf")
    with pikepdf.open(src, allow_overwriting_input=True) as pdf:
        page = pdf.pages[0]
        page.obj.Contents = pdf.make_stream(b"0 0 0 1 k " + page.obj.Contents.read_bytes())
        pdf.save(src)
    assert any("content stream" in p for p in pdfa_problems(src))
    indexed = tmp_path / "indexed.pdf"
    with pikepdf.open(text_pdf([["An indexed image."]], tmp_path / "i.pdf")) as pdf:
        image = pdf.make_stream(
            b"\x00",
            Type=pikepdf.Name.XObject,
            Subtype=pikepdf.Name.Image,
            Width=1,
            Height=1,
            BitsPerComponent=8,
            ColorSpace=pikepdf.Array(
                [pikepdf.Name.Indexed, pikepdf.Name.DeviceCMYK, 0, pikepdf.String(b"\0\0\0\xff")]
            ),
        )
        pdf.pages[0].obj.Resources.XObject = pikepdf.Dictionary(Im0=image)
        pdf.save(indexed)
    assert any(p.startswith("6.2.4.3") for p in pdfa_problems(indexed))
