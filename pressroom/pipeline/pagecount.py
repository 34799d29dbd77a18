"""An upload's page count for admission, and for a redaction the characters of text PDFium
extracts from its pages (what detection will read, so admission can charge it), read in a
short-lived child process, never in the API.

Parsing a hostile file is the worker's job, in a process that may die without harm. The API
needs only an estimate, but the parsers that give one (qpdf for PDF, Pillow for TIFF) are C
and C++: an abort, a stack overflow or a page tree that takes minutes would take the API with
it. So the count is read by a child with a memory ceiling and a wall-clock limit, and whatever
goes wrong there the answer is one page: the estimate only feeds admission, and the worker's
inspection is the real check (it rejects the file with its reason). The child reads the
upload before any malware scan (the scan is the worker's), so it is given an environment of
its own with none of the API's secrets in it (``CHILD_ENV``).
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
# The child's whole environment. It parses an upload no scanner has read yet (the scan is the
# worker's), so it is given none of the API's: no master key, signing key, database URL or
# cloud credentials for a parser exploit to read. It needs none: the interpreter is named by
# its path and finds its packages beside it (-I), and qpdf, PDFium and Pillow are libraries
# it loads, not programs it runs; PATH and the C locale are there for anything that asks.
CHILD_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C", "LC_ALL": "C"}

_CHILD = """
import resource, sys
limit = int(sys.argv[3])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
seconds = int(sys.argv[4])
resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
path, kind, cap = sys.argv[1], sys.argv[2], int(sys.argv[5])
if kind == "pdf":
    import pikepdf
    with pikepdf.open(path) as pdf:
        print(len(pdf.pages), flush=True)
    if cap:
        # the characters the worker's TEXT_LIMIT check counts, as PDFium extracts them (forms
        # drawn many times, long ToUnicode strings and all), each page's capped where the
        # worker would refuse it; a bomb kills us here, after the page count
        import pypdfium2
        doc = pypdfium2.PdfDocument(path)
        total = 0
        for index in range(len(doc)):
            page = doc[index]
            textpage = page.get_textpage()
            total += min(textpage.count_chars(), cap)
            textpage.close()
            page.close()
        print(total)
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
    return count_work(path, kind, timeout_s=timeout_s, memory_bytes=memory_bytes)[0]


def count_work(
    path: Path,
    kind: str,
    *,
    text_cap: int = 0,
    timeout_s: float = COUNT_TIMEOUT_S,
    memory_bytes: int = COUNT_MEMORY_BYTES,
) -> tuple[int, int | None]:
    """(pages, characters of text): the pages at least 1, and 1 whenever they cannot be read;
    the characters only with ``text_cap`` (each page's counted up to it), for a PDF, and None
    whenever they cannot be counted."""
    if kind not in ("pdf", "tiff"):
        return FALLBACK_PAGES, None
    command = [
        sys.executable,
        "-I",  # no user site, no PYTHON* variables, no working directory on the path
        "-c",
        _CHILD,
        str(path),
        kind,
        str(memory_bytes),
        str(max(1, round(timeout_s))),
        str(max(0, text_cap)),
    ]
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env=CHILD_ENV,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired as late:
        out = late.stdout if isinstance(late.stdout, bytes) else b""
        return _read_counts(out, complete=False, content=text_cap > 0)
    except OSError:
        return FALLBACK_PAGES, None
    # encrypted, corrupt, killed: the worker says why
    return _read_counts(done.stdout, complete=done.returncode == 0, content=text_cap > 0)


def _read_counts(out: bytes, *, complete: bool, content: bool) -> tuple[int, int | None]:
    lines = out.split(b"\n")
    try:
        pages = max(FALLBACK_PAGES, int(lines[0]))
    except ValueError:
        return FALLBACK_PAGES, None
    if not complete:
        # a child that died counting content had printed its page count in full: it stands
        return (pages if content and len(lines) > 1 else FALLBACK_PAGES), None
    try:
        return pages, int(lines[1])
    except (IndexError, ValueError):
        return pages, None
