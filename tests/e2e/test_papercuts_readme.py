"""The README's offline examples run as written on a fresh clone (issue 43 item 7, review S10:
its first example named a `waivers/` folder that does not exist). Each shell block marked
``<!-- tested -->`` is run by bash in a folder holding a copy of ``samples/`` and a
``.venv/bin/pressroom`` that is this suite's, and must exit 0 with its output written."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import PRESSROOM

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
TESTED = re.compile(r"^<!-- tested -->\n```sh\n(.*?)^```", re.S | re.M)


def marked_blocks() -> list[str]:
    return TESTED.findall(README.read_text())


def test_the_readme_marks_its_offline_examples() -> None:
    """The marks are the test: a block that lost its mark would not be run."""
    blocks = marked_blocks()
    assert len(blocks) >= 4
    commands = " ".join(blocks)
    assert "pressroom process" in commands and "pressroom detect" in commands


@pytest.mark.parametrize("block", marked_blocks(), ids=lambda b: b.split("\n")[0][19:60])
def test_a_readme_example_runs_as_written(block: str, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "pressroom").symlink_to(PRESSROOM)
    scratch = tmp_path / ".scratch"
    scratch.mkdir()
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(scratch)}
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    for outdir in re.findall(r" -o (\S+)", block):
        written = sorted(p.name for p in (tmp_path / outdir).glob("*.pdf"))
        assert written, f"{outdir} holds no PDF: {done.stdout}"
