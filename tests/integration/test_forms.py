"""Forms and annotations are flattened, never dropped: what a viewer shows of them is in the
output, searchable and in its pixels, plain and redacted; what a viewer hides is not; an XFA-only
form is refused; the interactive objects and the flattened copy are gone."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pikepdf
import pytest

from pressroom.engines import pdfium
from pressroom.engines.tesseract import TesseractEngine
from pressroom.errors import UnsupportedForm
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.flatten import flatten_into, flattened
from pressroom.pipeline.plain import read_range
from pressroom.processing import Processing
from pressroom.redact.leaks import find_leaks
from pressroom.redact.policy import parse_policy
from pressroom.synth import text_pdf
from pressroom.templates import resolve_template
from tests.forms import (
    CHECKBOX_RECT,
    FIELD_VALUE,
    HIDDEN,
    INTRO,
    NOTE,
    NOVIEW,
    STAMP,
    field_pdf,
    form_pdf,
    free_text_pdf,
    needs_rendering_pdf,
    xfa_pdf,
)
from tests.helpers import delivered

pytestmark = pytest.mark.integration


def pdftotext(path: Path) -> str:
    return subprocess.run(
        ["pdftotext", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


def squashed(text: str) -> str:
    return " ".join(text.split())


def checkbox_ink(path: Path, page: int = 0) -> float:
    """The darkest grey level inside the checkbox (0 black, 255 white)."""
    x0, y0, x1, y1 = CHECKBOX_RECT
    with pdfium.open_pdf(path) as doc:
        p = doc[page]
        height = p.get_height()
        image = np.asarray(p.render(scale=2.0, grayscale=True).to_pil().convert("L"))
    crop = image[round((height - y1) * 2) + 2 : round((height - y0) * 2) - 2, round(x0 * 2) + 2 :]
    return float(crop[:, : round((x1 - x0) * 2) - 4].min())


def test_what_a_viewer_shows_of_a_form_is_kept_in_a_plain_output(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = form_pdf(tmp_path / "form.pdf")
    out = tmp_path / "scratch" / "out.pdf"
    out.parent.mkdir()
    result = Processing()(src, out, JobOptions(template=resolve_template("plain")), engine)
    text = squashed(pdftotext(out))
    assert FIELD_VALUE in text  # a value with no appearance of its own is drawn
    assert STAMP in text and INTRO in text
    assert HIDDEN not in text and NOVIEW not in text  # what a viewer hides stays hidden
    assert NOTE not in text  # a sticky note is no part of the page: counted, not drawn
    assert checkbox_ink(out) < 60  # the tick is in the pixels
    assert result.flattened == 3 and result.notes == 1
    with pikepdf.open(src) as s:
        from pressroom.pipeline.inspect import file_sha256

        assert result.source_sha256 == file_sha256(src) and len(s.pages) == 1
    with pikepdf.open(out) as pdf:
        assert "/AcroForm" not in pdf.Root
        assert all("/Annots" not in p.obj for p in pdf.pages)
    assert sorted(p.name for p in out.parent.iterdir()) == ["out.pdf"]  # no copy left


def test_a_form_is_redacted_like_the_rest_of_its_page(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = form_pdf(tmp_path / "form.pdf")
    out = tmp_path / "out.pdf"
    policy = parse_policy("name", now=0)
    result = Processing(policy)(src, out, JobOptions(template=resolve_template("plain")), engine)
    text = squashed(pdftotext(out))
    assert "Quince" not in text and find_leaks(out, ["Quince"]) == []  # the stamp's name
    assert FIELD_VALUE in text and "APPROVED BY" in text  # the rest stays readable
    assert result.redacted.get("name", 0) >= 1
    assert checkbox_ink(out) < 60


def test_a_page_range_is_flattened_as_a_whole_document_is(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = form_pdf(tmp_path / "form.pdf")
    part = tmp_path / "part.pdf"
    read_range(src, part, JobOptions(template=resolve_template("plain")), engine, range(0, 1))
    assert FIELD_VALUE in squashed(pdftotext(part))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["form.pdf", "part.pdf"]


@pytest.mark.parametrize("make", [xfa_pdf, needs_rendering_pdf], ids=["xfa", "needs-rendering"])
def test_an_xfa_only_form_is_refused_not_emptied(
    tmp_path: Path, engine: TesseractEngine, make: Callable[[Path], Path]
) -> None:
    src = make(tmp_path / "xfa.pdf")
    out = tmp_path / "out.pdf"
    with pytest.raises(UnsupportedForm) as caught:
        delivered(Processing()(src, out, JobOptions(template=resolve_template("plain")), engine))
    assert caught.value.code == "UNSUPPORTED_FORM"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["xfa.pdf"]


def test_a_pdf_without_forms_is_read_as_it_is(tmp_path: Path) -> None:
    src = text_pdf([[INTRO]], tmp_path / "plain.pdf")
    with flattened(src, tmp_path / "out.pdf") as flat:
        assert flat.path == src and flat.flattened == 0 and flat.notes == ()
    assert flatten_into(src, tmp_path / "x.pdf").path == src
    assert not (tmp_path / "x.pdf").exists()


def test_a_pdf_that_does_not_open_is_left_to_inspection(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.7\nnot really a pdf")
    assert flatten_into(bad, tmp_path / "x.pdf").path == bad


def test_the_cli_says_what_it_flattened(tmp_path: Path) -> None:
    import sys

    pressroom = Path(sys.executable).with_name("pressroom")
    src = form_pdf(tmp_path / "form.pdf")
    done = subprocess.run(
        [str(pressroom), "process", str(src), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "3 form fields and annotations drawn in, 1 sticky note" in done.stdout


def flat_text(src: Path, tmp: Path) -> str:
    with flattened(src, tmp / "out.pdf") as flat:
        return squashed(pdftotext(flat.path))


def test_an_appearance_the_source_has_is_kept_not_redrawn_from_the_value(
    tmp_path: Path,
) -> None:
    """A password field shows its mask, not its value, even when the form asks viewers to
    redraw (NeedAppearances): the source's appearance is what a person saw."""
    for need in (False, True):
        src = field_pdf(
            tmp_path / "pw.pdf",
            value="hunter2-Secret!",
            flags=8192,
            appearance="***************",
            need_appearances=need,
        )
        text = flat_text(src, tmp_path)
        assert "***************" in text and "hunter2" not in text


@pytest.mark.parametrize(
    "field",
    [
        {"value": "hunter2-Secret!", "flags": 8192},  # a password a viewer would mask
        {"value": "123456789", "actions": True},  # a value a script formats
        {"value": "Ирина Петрова"},  # outside what qpdf's appearances can draw
        {"value": "line one\nline two", "flags": 4096},  # multi-line
    ],
    ids=["password", "formatted", "cyrillic", "multiline"],
)
def test_a_value_that_cannot_be_drawn_as_a_viewer_shows_it_is_refused(
    tmp_path: Path, field: dict[str, object]
) -> None:
    src = field_pdf(tmp_path / "f.pdf", **field)  # type: ignore[arg-type]
    with pytest.raises(UnsupportedForm):
        flat_text(src, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.pdf"]


def test_a_plain_value_without_an_appearance_is_drawn(tmp_path: Path) -> None:
    src = field_pdf(tmp_path / "f.pdf", value="2140 FIDE, Section A")
    assert "2140 FIDE, Section A" in flat_text(src, tmp_path)


def test_an_annotation_a_viewer_would_draw_but_that_has_no_appearance_is_refused(
    tmp_path: Path,
) -> None:
    with pytest.raises(UnsupportedForm):
        flat_text(free_text_pdf(tmp_path / "n.pdf"), tmp_path)


def test_a_form_with_only_an_owner_password_is_flattened_and_delivered_unencrypted(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    # permissions alone (an empty user password) do not stop reading, as in OCRmyPDF
    src = form_pdf(tmp_path / "form.pdf")
    locked = tmp_path / "locked.pdf"
    with pikepdf.open(src) as pdf:
        pdf.save(locked, encryption=pikepdf.Encryption(owner="owner", user="", R=6))
    out = tmp_path / "out.pdf"
    delivered(Processing()(locked, out, JobOptions(template=resolve_template("plain")), engine))
    with pikepdf.open(out) as pdf:
        assert not pdf.is_encrypted
        assert all("/Annots" not in page.obj for page in pdf.pages)
    assert FIELD_VALUE in squashed(pdftotext(out))


def test_a_form_that_needs_a_password_to_open_is_refused_encrypted(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    from pressroom.errors import Encrypted

    src = form_pdf(tmp_path / "form.pdf")
    locked = tmp_path / "locked.pdf"
    with pikepdf.open(src) as pdf:
        pdf.save(locked, encryption=pikepdf.Encryption(owner="owner", user="user", R=6))
    with pytest.raises(Encrypted):
        delivered(
            Processing()(
                locked, tmp_path / "out.pdf", JobOptions(template=resolve_template("plain")), engine
            )
        )
