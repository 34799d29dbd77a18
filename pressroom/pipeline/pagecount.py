"""An upload's page count for admission, read in a short-lived child process, never in the API.

Parsing a hostile file is the worker's job, in a process that may die without harm. The API
needs only an estimate, but the parsers that give one (qpdf for PDF, Pillow for TIFF) are C
and C++: an abort, a stack overflow or a page tree that takes minutes would take the API with
it. So the count is read by a child with a memory ceiling and a wall-clock limit, and whatever
goes wrong there the answer is one page: the estimate only feeds admission, and the worker's
inspection is the real check (it rejects the file with its reason).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# qpdf reading a 2,000-page PDF's page tree takes well under a second and ~60 MB; a file that
# needs more is not one admission should wait for.
COUNT_TIMEOUT_S = 10.0
# Address space of the child (Python with pikepdf and Pillow maps ~50 MB of it at start).
COUNT_MEMORY_BYTES = 512 * 1024 * 1024
FALLBACK_PAGES = 1

_CHILD = """
import resource, sys
limit = int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
seconds = int(sys.argv[4])
resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
path, kind = sys.argv[1], sys.argv[2]
if kind == "pdf":
    import pikepdf
    with pikepdf.open(path) as pdf:
        print(len(pdf.pages))
else:
    from PIL import Image
    Image.MAX_IMAGE_PIXELS = None
    with Image.open(path) as image:
        print(getattr(image, "n_frames", 1))
"""


def count_pages(
    path: Path,
    kind: str,
    *,
    timeout_s: float = COUNT_TIMEOUT_S,
    memory_bytes: int = COUNT_MEMORY_BYTES,
) -> int:
    """A cheap page count for the estimate: at least 1, and 1 whenever it cannot be read."""
    if kind not in ("pdf", "tiff"):
        return FALLBACK_PAGES
    command = [
        sys.executable,
        "-I",  # no user site, no PYTHON* variables, no working directory on the path
        "-c",
        _CHILD,
        str(path),
        kind,
        str(memory_bytes),
        str(max(1, round(timeout_s))),
    ]
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except (subprocess.TimeoutExpired, OSError):
        return FALLBACK_PAGES
    if done.returncode != 0:
        return FALLBACK_PAGES  # encrypted, corrupt, killed: the worker says why
    try:
        return max(FALLBACK_PAGES, int(done.stdout.strip()))
    except ValueError:
        return FALLBACK_PAGES
