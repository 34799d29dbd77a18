"""Odd values in three places the fuzzer reached through other doors: names whose bytes are not
UTF-8 in the leak check and in the redo rework, and a scan one pixel wide."""

from __future__ import annotations

from pathlib import Path

import pikepdf
import pytest
from PIL import Image

from pressroom.pipeline.ocrmode import reworked
from pressroom.pipeline.resolution import measure_text
from pressroom.redact.leaks import find_leaks
from pressroom.synth import text_pdf


def _with_odd_bytes(path: Path, name_bytes: bytes) -> Path:
    """A text page whose resources, info and content carry a name that is not UTF-8."""
    src = text_pdf([["Dear Ann Whitfield,", "Thank you for your letter."]], path)
    with pikepdf.open(src, allow_overwriting_input=True) as pdf:
        page = pdf.pages[0]
        odd = pikepdf.Name("/" + name_bytes.decode("latin-1"))
        pdf.Root[pikepdf.Name("/Extra")] = pikepdf.Dictionary({"/Kind": odd})
        pdf.Root.Extra[odd] = pikepdf.String(b"caf\xe9 Whitfield")
        # the name as an operand, and its bytes again as an operator of their own
        extra = b"\n/" + name_bytes + b" gs\nq " + name_bytes + b" Q\n"
        page.Contents.write(page.Contents.read_bytes() + extra)
        pdf.save(path)
    return path


def test_the_leak_check_reads_names_and_strings_that_are_not_utf8(tmp_path: Path) -> None:
    src = _with_odd_bytes(tmp_path / "odd.pdf", b"J\xe9\x93ne")
    # before: UnicodeDecodeError out of str(name), an INTERNAL_ERROR on a redaction job
    leaks = find_leaks(src, ["Whitfield"])
    assert leaks  # the value is still found where it stands, and nothing raised


def test_redo_reads_an_operator_that_is_not_utf8(tmp_path: Path) -> None:
    src = _with_odd_bytes(tmp_path / "odd.pdf", b"G\x93s")
    with reworked(src, tmp_path / "scratch", "redo") as pages:
        assert pages.path.exists()


@pytest.mark.parametrize("size", [(1, 40), (40, 1), (1, 1)])
def test_a_scan_one_pixel_wide_or_high_is_blank_not_a_warning(size: tuple[int, int]) -> None:
    assert measure_text(Image.new("L", size, 255)).blank
