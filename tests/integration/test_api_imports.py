"""The API process stays light: importing the app loads neither the PDF libraries nor the
redaction engine and detector (the upload check of a policy needs none of them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HEAVY = ("pikepdf", "pypdfium2", "pressroom.redact.engine", "pressroom.redact.detect.detector")


def test_importing_the_app_loads_no_pdf_library_nor_the_redaction_engine() -> None:
    code = (
        "import json, sys\n"
        "import pressroom.app\n"
        f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
