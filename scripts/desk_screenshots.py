"""Remake the review desk's and the dashboard's screenshots in docs/images/ from the browser
tests that drive them (Playwright in Debian's Chromium against the real service):

    .venv-test/bin/python scripts/desk_screenshots.py

The held list, a ten-page job at fit width and at 200 %, the output in the same frame, and the
operator's dashboard. Nothing in the pictures is real data: the tests make their documents.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "images"
WANTED = {
    "ten-service-1-list.png": "desk-list.png",
    "ten-service-2-fit.png": "desk-job-fit-width.png",
    "ten-service-3-zoomed.png": "desk-job-200.png",
    "ten-service-4-output.png": "desk-job-output.png",
    "dashboard.png": "dashboard.png",
}
TESTS = [
    "tests/integration/test_desk_ten_pages.py::test_the_service_desk_through_ten_pages",
    "tests/e2e/test_dashboard.py",
]


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "PRESSROOM_TEST_ARTIFACTS": folder}
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *TESTS],
            cwd=ROOT,
            env=env,
            check=False,
        )
        if done.returncode != 0:
            print("the browser tests failed: no screenshots replaced", file=sys.stderr)
            return done.returncode
        OUT.mkdir(parents=True, exist_ok=True)
        for made, name in WANTED.items():
            found = [Path(folder) / made, ROOT / "tests" / "artifacts" / made]
            source = next((p for p in found if p.is_file()), None)
            if source is None:
                print(f"missing: {made}", file=sys.stderr)
                return 1
            shutil.copyfile(source, OUT / name)
            print(f"docs/images/{name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
