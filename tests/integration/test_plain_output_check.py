"""A plain job's output that misses a check is never "held" with nothing to review (issue 43,
item 6: a plain job exited 3 with nothing delivered and nothing held). A text layer that reads
back short of what OCR read is delivered with a warning; a structural miss is refused
OUTPUT_INVALID and a PDF/A clause PDFA_UNREACHABLE (exit 2, nothing written); a redaction's miss
is still held for a person.

The check itself is real everywhere but in the first three tests, where it is made to miss as
a real output check can (a seam: ``assembly.check_output``), to hold the policy around it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pikepdf
import pytest

from pressroom.errors import OutputCheckFailed, OutputInvalid, ReviewRequired, TextReadBack
from pressroom.pipeline import assembly
from pressroom.pipeline.core import JobOptions
from pressroom.processing import Processing
from pressroom.redact.policy import parse_policy
from pressroom.synth import text_pdf
from pressroom.templates import resolve_template
from pressroom.testing import FakeOcrEngine
from tests.helpers import delivered, held_by
from tests.integration.test_archive_colour import cmyk_page

pytestmark = pytest.mark.integration

PRESSROOM = Path(sys.executable).with_name("pressroom")
LINES = ["The committee met on Tuesday to discuss the budget for the year."]
SHORT = "page 1: the text layer extracts back to 93% of what OCR read"


def _missing(exc: Exception):  # type: ignore[no-untyped-def]
    def check(*_args: object) -> None:
        raise exc

    return check


def _source(tmp_path: Path) -> Path:
    return text_pdf([LINES], tmp_path / "letter.pdf")


def test_a_short_read_back_is_delivered_with_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(assembly, "check_output", _missing(TextReadBack(SHORT)))
    out = tmp_path / "out.pdf"
    options = JobOptions(template=resolve_template("plain"))
    result = Processing()(_source(tmp_path), out, options, FakeOcrEngine(lines=LINES))
    assert result.warnings == (SHORT,)
    assert out.is_file()


def test_a_structural_miss_is_refused_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(assembly, "check_output", _missing(OutputCheckFailed("output carries AA")))
    options = JobOptions(template=resolve_template("plain"))
    with pytest.raises(OutputInvalid) as refused:
        delivered(
            Processing()(
                _source(tmp_path), tmp_path / "out.pdf", options, FakeOcrEngine(lines=LINES)
            )
        )
    assert refused.value.code == "OUTPUT_INVALID" and refused.value.exit_code == 2
    assert not isinstance(refused.value, ReviewRequired)


def test_a_redactions_short_read_back_is_still_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(assembly, "check_output", _missing(TextReadBack(SHORT)))
    options = JobOptions(template=resolve_template("plain"))
    processing = Processing(parse_policy("name", now=0))
    held = held_by(
        processing(_source(tmp_path), tmp_path / "out.pdf", options, FakeOcrEngine(lines=LINES)),
        ReviewRequired,
    )
    assert held.code == "OUTPUT_CHECK_FAILED" and held.exit_code == 3


def test_a_pdfa_that_cannot_be_made_is_refused_with_the_way_past_it(tmp_path: Path) -> None:
    """Device CMYK with no CMYK intent to take: the real check names the clause; exit 2, the
    line ends with the flag that delivers it, nothing is written or held."""
    src = tmp_path / "cmyk.pdf"
    with pikepdf.Pdf.new() as pdf:
        cmyk_page(
            pdf,
            b"BT /F1 24 Tf 20 150 Td (Quarterly ink report) Tj ET q 10 0 0 10 20 20 cm /Im0 Do Q\n",
        )
        pdf.pages[0].obj.Resources.Font = pikepdf.Dictionary(
            F1=pikepdf.Dictionary(
                Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica
            )
        )
        pdf.save(src)
    (tmp_path / "scratch").mkdir()
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(tmp_path / "scratch")}
    done = subprocess.run(
        [str(PRESSROOM), "process", str(src), "-o", str(tmp_path / "out"), "--allow-no-text",
         "--output-type", "pdfa"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert line.startswith("PDFA_UNREACHABLE: cmyk.pdf: not PDF/A-2b: "), line
    assert "6.2.4.3: DeviceCMYK colour under an RGB output intent" in line
    assert line.endswith("(try --output-type pdf)") and "\n" not in line
    out = tmp_path / "out"
    assert not out.exists() or list(out.rglob("*")) == []
    again = subprocess.run(
        [str(PRESSROOM), "process", str(src), "-o", str(out), "--allow-no-text"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
