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
