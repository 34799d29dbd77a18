"""Colour as the source calibrated it (issue 43, item 2): a page's default colour spaces
(which no operator names: device colour is painted in them) and the source's output intent
survive a plain job; a PDF/A output of a CMYK document takes its CMYK intent. On a document
made here, and on OCRmyPDF's ``cmyk.pdf`` where a mirror is at hand."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pikepdf
import pytest
from pikepdf import Array, Dictionary, Name, String

from pressroom.pipeline.archive import pdfa_problems, srgb_profile
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.plain import process_document
from pressroom.templates import resolve_template
from pressroom.testing import FakeOcrEngine
from tests.e2e.test_detect_brochure import ocrmypdf_mirror
from tests.helpers import delivered

pytestmark = pytest.mark.integration


def calibrated_pdf(path: Path) -> Path:
    """A page painting device RGB, with a /DefaultRGB ICC space of its own and an output
    intent (a PDF/X file's, GTS_PDFX) holding the same profile."""
    pdf = pikepdf.Pdf.new()
    profile = pdf.make_stream(srgb_profile())
    profile.N = 3
    font = Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica)
    content = (
        b"0.8 0.1 0.1 rg 72 600 200 100 re f "
        b"BT /F1 12 Tf 72 700 Td (A calibrated page with enough words to be kept.) Tj ET"
    )
    pdf.pages.append(
        pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, 612, 792]),
                Resources=Dictionary(
                    Font=Dictionary(F1=font),
                    ColorSpace=Dictionary(DefaultRGB=Array([Name.ICCBased, profile])),
                ),
                Contents=pdf.make_stream(content),
            )
        )
    )
    pdf.Root.OutputIntents = Array(
        [
            Dictionary(
                Type=Name.OutputIntent,
                S=Name.GTS_PDFX,
                OutputConditionIdentifier=String("sRGB IEC61966-2.1"),
                DestOutputProfile=profile,
                # no part of an intent: left behind
                Private=String("a producer's note"),
            )
        ]
    )
    pdf.save(path)
    return path


def _run(src: Path, out: Path, output_type: str = "pdf") -> Path:
    options = JobOptions(template=resolve_template("plain"), output_type=output_type)
    delivered(process_document(src, out, options, FakeOcrEngine(lines=["never read"])))
    return out


def _src_spaces(pdf: pikepdf.Pdf) -> pikepdf.Dictionary:
    return pdf.pages[0].Resources.XObject.Src.Resources.ColorSpace


def test_default_spaces_and_the_output_intent_survive_a_plain_job(tmp_path: Path) -> None:
    out = _run(calibrated_pdf(tmp_path / "c.pdf"), tmp_path / "out.pdf")
    with pikepdf.open(out) as pdf:
        space = _src_spaces(pdf).DefaultRGB
        assert space[0] == Name.ICCBased
        assert space[1].read_bytes() == srgb_profile()
        (intent,) = pdf.Root.OutputIntents
        assert intent.S == Name.GTS_PDFX
        assert intent.DestOutputProfile.read_bytes() == srgb_profile()
        assert "/Private" not in intent


def test_a_pdfa_output_keeps_the_default_space_and_passes(tmp_path: Path) -> None:
    out = _run(calibrated_pdf(tmp_path / "c.pdf"), tmp_path / "out.pdf", "pdfa")
    assert pdfa_problems(out) == []
    with pikepdf.open(out) as pdf:
        assert _src_spaces(pdf).DefaultRGB[0] == Name.ICCBased
        (intent,) = pdf.Root.OutputIntents
        assert intent.S == Name.GTS_PDFA1


def test_ocrmypdfs_cmyk_pdf_keeps_its_calibration(tmp_path: Path) -> None:
    git_dir = ocrmypdf_mirror()
    if git_dir is None:
        pytest.skip("no local mirror of OCRmyPDF")
    src = tmp_path / "cmyk.pdf"
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", "HEAD:tests/resources/cmyk.pdf"],
        capture_output=True,
        timeout=60,
        check=True,
    )
    src.write_bytes(done.stdout)
    with pikepdf.open(src) as source:
        profile = source.pages[0].Resources.ColorSpace.DefaultCMYK[1].read_bytes()
    plain = _run(src, tmp_path / "plain.pdf")
    archive = _run(src, tmp_path / "archive.pdf", "pdfa")
    with pikepdf.open(plain) as pdf:
        assert _src_spaces(pdf).DefaultCMYK[1].read_bytes() == profile
        (intent,) = pdf.Root.OutputIntents
        assert intent.S == Name.GTS_PDFX and intent.DestOutputProfile.read_bytes() == profile
    assert pdfa_problems(archive) == []
    with pikepdf.open(archive) as pdf:
        (intent,) = pdf.Root.OutputIntents
        assert intent.S == Name.GTS_PDFA1 and intent.DestOutputProfile.N == 4
    # the calibration is most of the file: it is kept once
    assert plain.stat().st_size < src.stat().st_size * 1.05


def test_a_redaction_leaves_the_default_spaces_out(tmp_path: Path, engine: object) -> None:
    """An ICC profile's own text (its description, say) is text no check reads: a redaction's
    copy of a page keeps its device colour and leaves the page's default spaces out (the
    fresh-eyes review's R2: a name in a /DefaultRGB profile's description was delivered)."""
    from pressroom.redact.engine import redact_document
    from pressroom.redact.policy import parse_policy

    src = calibrated_pdf(tmp_path / "c.pdf")
    with pikepdf.open(src, allow_overwriting_input=True) as pdf:
        # the text alone (a red box touching a one-line page's text has it refused
        # UNREADABLE_SCAN under redaction, before this session too: see issue 43's note)
        pdf.pages[0].obj.Contents = pdf.make_stream(
            b"0.8 0.1 0.1 rg BT /F1 12 Tf 72 700 Td "
            b"(A calibrated page with enough words to be kept.) Tj ET"
        )
        pdf.save(src)
    out = tmp_path / "out.pdf"
    options = JobOptions(template=resolve_template("plain"))
    delivered(
        redact_document(
            src,
            out,
            options,
            parse_policy("name", now=0),
            engine,  # type: ignore[arg-type]
        )
    )
    with pikepdf.open(out) as pdf:
        for obj in pdf.objects:
            if isinstance(obj, pikepdf.Stream):
                assert obj.get("/N") is None or b"acsp" not in obj.read_bytes()[:40]
