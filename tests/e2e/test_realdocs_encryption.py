"""A PDF with only an owner password (permissions) is processed, as OCRmyPDF processes it; one
that needs a password to open stays refused ``ENCRYPTED`` (issue 43, item 6: six such PDFs of
a held-out set of real documents were refused)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pikepdf
import pytest

from pressroom.synth import text_pdf

pytestmark = pytest.mark.e2e

PRESSROOM = Path(sys.executable).with_name("pressroom")
LETTER = "A typed letter about the quarterly figures, with enough characters to keep."


def _run(*args: str, scratch: Path) -> subprocess.CompletedProcess[str]:
    scratch.mkdir(exist_ok=True)
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(scratch)}
    return subprocess.run(
        [str(PRESSROOM), *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def _locked(tmp_path: Path, name: str, encryption: pikepdf.Encryption) -> Path:
    src = text_pdf([[LETTER]], tmp_path / f"{name}.plain.pdf")
    path = tmp_path / f"{name}.pdf"
    with pikepdf.open(src) as pdf:
        pdf.save(path, encryption=encryption)
    return path


# permissions that forbid everything a reader could be stopped by (copying text included)
NOTHING_ALLOWED = pikepdf.Permissions(
    accessibility=False,
    extract=False,
    modify_annotation=False,
    modify_assembly=False,
    modify_form=False,
    modify_other=False,
    print_lowres=False,
    print_highres=False,
)


@pytest.mark.parametrize("revision", [4, 6])  # RC4/AES-128 and AES-256
def test_an_owner_password_alone_does_not_stop_processing(tmp_path: Path, revision: int) -> None:
    src = _locked(
        tmp_path, "owner", pikepdf.Encryption(owner="x", user="", R=revision, allow=NOTHING_ALLOWED)
    )
    with pikepdf.open(src) as pdf:
        assert pdf.is_encrypted  # the fixture is what it claims
    out = tmp_path / "out"
    done = _run("process", str(src), "-o", str(out), scratch=tmp_path / "scratch")
    assert done.returncode == 0, done.stderr
    delivered = out / "owner.pdf"
    with pikepdf.open(delivered) as pdf:
        assert not pdf.is_encrypted
        assert "/Encrypt" not in pdf.trailer
    text = subprocess.run(
        ["pdftotext", str(delivered), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert LETTER in " ".join(text.split())
    assert list((tmp_path / "scratch").iterdir()) == []


def test_a_pdf_that_needs_a_password_to_open_is_refused_encrypted(tmp_path: Path) -> None:
    src = _locked(tmp_path, "user", pikepdf.Encryption(owner="x", user="y"))
    out = tmp_path / "out"
    done = _run("process", str(src), "-o", str(out), scratch=tmp_path / "scratch")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ENCRYPTED: "), done.stderr
    assert list(out.iterdir()) == []
