"""`pressroom process` takes folders as well as files: a folder's scans (with `-r` its subfolders
too, the output tree mirroring the input's), never its hidden files or its non-scans; two inputs
that would get one output name are refused before any work; `--skip-existing` leaves out what
is already done; `-o -` is refused rather than making a folder called `-`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pressroom.errors import BadRequest
from pressroom.offline.process import plan_inputs
from pressroom.synth import save_png
from tests.helpers import small_scan

pytestmark = pytest.mark.integration

PRESSROOM = Path(sys.executable).with_name("pressroom")


def _process(*args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PRESSROOM), "process", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PRESSROOM_SCRATCH_DIR": str(tmp)},
        check=False,
        timeout=300,
    )


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    root = tmp_path / "inbox"
    (root / "week 48" / "late").mkdir(parents=True)
    (root / ".trash").mkdir()
    for n, rel in enumerate(["a.png", "week 48/b.png", "week 48/late/c.png", ".trash/d.png"]):
        save_png(small_scan(seed=60 + n, lines=2, dpi=150).image, root / rel, 150)
    (root / "Thumbs.db").write_bytes(b"not a scan")
    (root / ".DS_Store").write_bytes(b"not a scan")
    return root


def test_a_folder_is_its_scans_and_with_r_its_tree(inbox: Path) -> None:
    top = [(s.relative_to(inbox).as_posix(), o.as_posix()) for s, o in plan_inputs([inbox])]
    assert top == [("a.png", "a.pdf")]
    tree = plan_inputs([inbox], recursive=True)
    assert [(s.relative_to(inbox).as_posix(), o.as_posix()) for s, o in tree] == [
        ("a.png", "a.pdf"),
        ("week 48/b.png", "week 48/b.pdf"),
        ("week 48/late/c.png", "week 48/late/c.pdf"),
    ]


def test_two_inputs_for_one_output_are_refused_before_any_work(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    for folder in (first, second):
        folder.mkdir()
        (folder / "scan.png").write_bytes(b"x")
    with pytest.raises(BadRequest, match=r"would both be written as scan\.pdf"):
        plan_inputs([first, second])
    (first / "letter.pdf").write_bytes(b"x")
    (first / "letter.tiff").write_bytes(b"x")
    with pytest.raises(BadRequest, match=r"letter\.pdf and .*letter\.tiff would both be written"):
        plan_inputs([first])
    out = tmp_path / "out"
    refused = _process(str(first), "-o", str(out), tmp=tmp_path)
    assert refused.returncode == 2
    assert refused.stderr.startswith("BAD_REQUEST: ") and refused.stderr.count("\n") == 1
    assert not out.exists()


def test_process_mirrors_the_tree_then_skips_what_exists(inbox: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = _process(str(inbox), "-r", "-o", str(out), tmp=tmp_path)
    assert done.returncode == 0, done.stderr
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.pdf"))
    assert written == ["a.pdf", "week 48/b.pdf", "week 48/late/c.pdf"]
    assert "3/3 delivered" in done.stdout
    (out / "week 48" / "b.pdf").unlink()
    before = (out / "a.pdf").stat().st_mtime_ns
    again = _process(str(inbox), "-r", "-o", str(out), "--skip-existing", tmp=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("skipped  ") == 2 and "1/1 delivered" in again.stdout
    assert "2 skipped (their output exists)" in again.stdout
    assert (out / "week 48" / "b.pdf").is_file()
    assert (out / "a.pdf").stat().st_mtime_ns == before  # not written again


def test_stdout_as_the_output_is_the_pdf_not_a_folder_called_dash(
    inbox: Path, tmp_path: Path
) -> None:
    piped = subprocess.run(
        [str(PRESSROOM), "process", str(inbox / "a.png"), "-o", "-"],
        capture_output=True,
        env={**os.environ, "PRESSROOM_SCRATCH_DIR": str(tmp_path)},
        check=False,
        timeout=300,
    )
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.startswith(b"%PDF-")
    assert not Path("-").exists()
