"""The `ok` line says what was done in words a user can check against the file: pages read by
OCR, pages that kept their own text, under ``--redact`` the values burned by class, and "no
text" only for a text layer that holds none (issue 43, items 4 and 7; review S8, S10)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from pressroom.synth import draw_page, image_pdf, save_png, text_pdf

pytestmark = pytest.mark.e2e

PRESSROOM = Path(sys.executable).with_name("pressroom")
LETTER = [
    "Dear John Smith, your account is ready.",
    "We write to you at 12 Main Street, Springfield.",
    "Kind regards from the office team here today.",
]


def run_cli(*args: str, scratch: Path) -> subprocess.CompletedProcess[str]:
    scratch.mkdir(exist_ok=True)
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(scratch)}
    return subprocess.run(
        [str(PRESSROOM), *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def ok_lines(stdout: str) -> dict[str, str]:
    """Each ok line by its output's file name, the words after the name (the time cut off)."""
    lines = {}
    for line in stdout.splitlines():
        if line.startswith("ok  "):
            _ok, dest, words, _seconds = line.split("  ")
            lines[Path(dest).name] = words
    return lines


def test_a_born_digital_page_says_it_kept_its_text_and_a_scan_that_ocr_read_it(
    tmp_path: Path,
) -> None:
    letter = text_pdf([LETTER], tmp_path / "letter.pdf")
    scan = image_pdf([draw_page(LETTER, dpi=200, height_in=3).image], tmp_path / "scan.pdf", 200)
    done = run_cli(
        "process", str(letter), str(scan), "-o", str(tmp_path / "out"), scratch=tmp_path / "s"
    )
    assert done.returncode == 0, done.stderr
    said = ok_lines(done.stdout)
    assert said["letter.pdf"] == "1 page(s): 0 read by OCR, 1 own text kept"
    assert said["scan.pdf"] == "1 page(s): 1 read by OCR, 0 own text kept"


def test_allow_no_text_says_no_text_only_when_the_text_layer_holds_none(tmp_path: Path) -> None:
    """kcs.pdf's case: a short scan whose text layer reads "7 Desktop Test" is not "no text";
    a blank page is."""
    short = draw_page(["7 Desktop Test"], dpi=200, height_in=2, font_pt=20)
    save_png(short.image, tmp_path / "short.png", 200)
    save_png(Image.new("L", (400, 300), 255), tmp_path / "blank.png", 100)
    out = tmp_path / "out"
    done = run_cli(
        "process",
        str(tmp_path / "short.png"),
        str(tmp_path / "blank.png"),
        "-o",
        str(out),
        "--allow-no-text",
        scratch=tmp_path / "s",
    )
    assert done.returncode == 0, done.stderr
    said = ok_lines(done.stdout)
    assert "no text" not in said["short.pdf"]
    assert said["short.pdf"].endswith(
        ", little text (12 letters or digits, too few to search; as allowed)"
    )
    assert said["blank.pdf"].endswith(", no text (an empty text layer, as allowed)")


@pytest.fixture(scope="module")
def redacted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One redaction run over a born-digital letter, the same letter scanned, and a page with
    nothing to burn: their ok lines."""
    tmp = tmp_path_factory.mktemp("redacted")
    letter = text_pdf([LETTER], tmp / "letter.pdf")
    scan = image_pdf([draw_page(LETTER, dpi=200, height_in=3).image], tmp / "scan.pdf", 200)
    plain = text_pdf([["Plain words on a page with nothing private in them."]], tmp / "plain.pdf")
    done = run_cli(
        "process",
        str(letter),
        str(scan),
        str(plain),
        "-o",
        str(tmp / "out"),
        "--redact",
        "name,address",
        scratch=tmp / "s",
    )
    assert done.returncode == 0, done.stderr
    return ok_lines(done.stdout)


def test_a_redacted_scan_counts_the_values_burned_by_class(redacted: dict[str, str]) -> None:
    assert (
        redacted["scan.pdf"]
        == "1 page(s): 1 read by OCR, 0 own text kept, burned: address 1, name 1"
    )


def test_a_redaction_that_finds_nothing_says_nothing_was_burned(redacted: dict[str, str]) -> None:
    assert redacted["plain.pdf"].endswith(", burned: nothing")


def test_a_redacted_born_digital_page_says_its_own_text_was_kept(
    redacted: dict[str, str],
) -> None:
    assert redacted["letter.pdf"].startswith("1 page(s): 0 read by OCR, 1 own text kept")


def test_a_redacted_born_digital_page_counts_each_value_once(redacted: dict[str, str]) -> None:
    assert redacted["letter.pdf"].endswith(", burned: address 1, name 1")


def test_a_redaction_names_the_carriers_it_dropped(tmp_path: Path) -> None:
    """The source's title, an outline item and a link held the name: the ok line says they were
    dropped (their kinds, never their text)."""
    from tests.e2e.test_structure_carriers import structured_pdf

    src = structured_pdf(tmp_path / "report.pdf", secret="Margaret Thornbury")
    done = run_cli(
        "process", str(src), "-o", str(tmp_path / "out"), "--redact", "name",
        scratch=tmp_path / "s",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = ok_lines(done.stdout)["report.pdf"]
    assert said.endswith(
        ", dropped: title, links, outlines (they held a value the redaction removes)"
    ), said
    assert "Thornbury" not in done.stdout + done.stderr


def test_a_redacted_scan_turned_upright_says_so(tmp_path: Path) -> None:
    """A redaction rebuilds a scan from its pixels turned upright, placing it with no turn
    left: the ok line counts the turn it was read at, as a plain job's does (the fresh-eyes
    review's R1)."""
    page = draw_page(LETTER, dpi=200, height_in=3).image.rotate(180)
    src = save_png(page, tmp_path / "upside.png", 200)
    said = {}
    for args, out in (((), "plain"), (("--redact", "name"), "redacted")):
        done = run_cli(
            "process", str(src), "-o", str(tmp_path / out), *args, scratch=tmp_path / "s"
        )
        assert done.returncode == 0, done.stderr
        said[out] = ok_lines(done.stdout)["upside.pdf"]
    assert ", 1 turned upright" in said["plain"]
    assert ", 1 turned upright" in said["redacted"], said
