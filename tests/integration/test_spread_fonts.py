"""A born-digital document read in page ranges is the same bytes as read whole (issue 43, item
3): a standard font Pressroom replaces with an embedded one is cut to the characters its text
shows, and a range's walk knows only its own pages; so each range leaves its fonts unfilled and
says what it showed, and the assembly fills each font once with every range's characters."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pikepdf
import pytest

from pressroom.synth import text_pdf

pytestmark = pytest.mark.integration

PRESSROOM = Path(sys.executable).with_name("pressroom")


def _pages() -> list[list[str]]:
    # different characters on different pages: a range's own would be a different cut
    return [
        [f"Page {n} of the report: the committee met on Tuesday {n}.", line]
        for n, line in enumerate(
            ["It agreed the plans.", "Zebras & quartz jumped!", "Vexing, wry fjords.", "XY 4"] * 2,
            start=1,
        )
    ]


def _process(src: Path, out: Path, jobs: str, scratch: Path) -> bytes:
    scratch.mkdir(exist_ok=True)
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(scratch), "SOURCE_DATE_EPOCH": "1700000000"}
    done = subprocess.run(
        [str(PRESSROOM), "process", str(src), "-o", str(out), "-j", jobs, "--template", "sample"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return (out / src.name).read_bytes()


def test_shared_replaced_fonts_make_the_same_bytes_in_ranges(tmp_path: Path) -> None:
    src = text_pdf(_pages(), tmp_path / "report.pdf")
    whole = _process(src, tmp_path / "one", "1", tmp_path / "s1")
    split = _process(src, tmp_path / "two", "2", tmp_path / "s2")
    assert hashlib.sha256(split).hexdigest() == hashlib.sha256(whole).hexdigest()
    with pikepdf.open(tmp_path / "two" / "report.pdf") as pdf:
        fonts = {
            font.objgen
            for page in pdf.pages
            if "/Src" in page.Resources.XObject  # (not the cover)
            for font in page.Resources.XObject.Src.Resources.get("/Font", {}).values()
        }
        assert len(fonts) == 1  # one embedded font, as one walk makes it
        assert "/PressroomFontsLeft" not in pdf.Root


def test_an_image_every_page_draws_is_stored_once_in_ranges(tmp_path: Path) -> None:
    """A logo every page draws came once with each range's part: stored once again
    (same_objects.share_copies over what pages draw), the same bytes as read whole."""
    src = text_pdf([[f"Page {n}: the committee met to discuss the budget."] for n in range(1, 7)],
                   tmp_path / "base.pdf")  # fmt: skip
    with pikepdf.open(src) as pdf:
        logo = pdf.make_stream(
            bytes(range(256)) * 16,
            Type=pikepdf.Name.XObject,
            Subtype=pikepdf.Name.Image,
            Width=64,
            Height=64,
            ColorSpace=pikepdf.Name.DeviceGray,
            BitsPerComponent=8,
        )
        for page in pdf.pages:
            page.obj.Resources.XObject = pikepdf.Dictionary(Logo=logo)
            drawn = page.obj.Contents.read_bytes() + b" q 50 0 0 50 500 700 cm /Logo Do Q"
            page.obj.Contents = pdf.make_stream(drawn)
        pdf.save(tmp_path / "logo.pdf")
    whole = _process(tmp_path / "logo.pdf", tmp_path / "one", "1", tmp_path / "s1")
    split = _process(tmp_path / "logo.pdf", tmp_path / "two", "2", tmp_path / "s2")
    assert len(split) == len(whole) and split == whole
