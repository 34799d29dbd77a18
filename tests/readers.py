"""Read a PDF's text page by page the way seven PDF readers do, and score it (CER).

A test and benchmark harness, never shipped: it shells out to each reader's own tool, so what
comes back is what a user of that reader would copy, search or hear read aloud.

    poppler      pdftotext, default mode (Evince, Okular, most Linux viewers)
    pdfium       pypdfium2 text page, FPDFText_GetText (Chrome, Edge)
    pdfminer     pdfminer.six extract_text, default LAParams (many Python pipelines)
    pdfjs        pdf.js getTextContent, items joined as its find bar does (Firefox)
    pdfbox       Apache PDFBox 2 ExtractText, default options (Tika, Java pipelines)
    mupdf        mutool draw -F txt (SumatraPDF, zathura-mupdf, PyMuPDF)
    ghostscript  gs -sDEVICE=txtwrite

`make readers` (scripts/ensure-readers.sh) installs all of them. Run as a script it is the
in-process readers' worker: `python tests/readers.py READER FILE.pdf [PAGES]` prints JSON.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

READERS: tuple[str, ...] = (
    "poppler",
    "pdfium",
    "pdfminer",
    "pdfjs",
    "pdfbox",
    "mupdf",
    "ghostscript",
)

TIMEOUT_S = 120.0  # per reader and document
INSTALL_HINT = "run `make readers` (scripts/ensure-readers.sh)"

PDFJS_DIR = Path(__file__).resolve().parent / "tools" / "pdfjs"
PDFJS_MODULE = PDFJS_DIR / "node_modules" / "pdfjs-dist" / "legacy" / "build" / "pdf.mjs"
JAVA_DIR = Path("/usr/share/java")
# Debian/Ubuntu libpdfbox2-java and what it depends on (libfontbox2-java,
# libcommons-logging-java)
PDFBOX_JARS = ("pdfbox2-tools.jar", "pdfbox2.jar", "fontbox2.jar", "commons-logging.jar")
# Quick start for a short-lived JVM: C1 only, one GC thread, no window system.
JAVA_FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.awt.headless=true")

# ExtractText itself, once per page, in one JVM (a JVM start costs ~0.5 s; one per page adds
# up). Java 11+ runs a single source file without javac; the compiler module is in Debian's
# JRE. Each page goes to its own file, so nothing has to guess where a page ends.
PDFBOX_PAGES_JAVA = """\
import java.io.File;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.tools.ExtractText;

public class PdfboxPages {
    public static void main(String[] args) throws Exception {
        String pdf = args[0];
        int pages = Integer.parseInt(args[2]);
        for (int n = 1; n <= pages; n++) {
            String p = Integer.toString(n);
            String out = new File(args[1], "page_" + p + ".txt").getPath();
            ExtractText.main(new String[] {"-startPage", p, "-endPage", p, pdf, out});
        }
    }
}
"""


class ReaderError(RuntimeError):
    """A reader is missing, failed, timed out, or returned the wrong number of pages."""


def _reason_missing(reader: str) -> str | None:
    """Why `reader` cannot run here, or None when it can."""
    if reader not in READERS:
        raise ValueError(f"unknown reader {reader!r}; known: {', '.join(READERS)}")
    if reader == "poppler":
        return None if shutil.which("pdftotext") else "pdftotext not on PATH (poppler-utils)"
    if reader == "pdfium":
        if importlib.util.find_spec("pypdfium2") is None:
            return f"pypdfium2 not importable by {sys.executable}"
        return None
    if reader == "pdfminer":
        if importlib.util.find_spec("pdfminer") is None:
            return f"pdfminer.six not importable by {sys.executable}"
        return None
    if reader == "pdfjs":
        if not shutil.which("node"):
            return "node not on PATH (nodejs)"
        if not PDFJS_MODULE.is_file():
            return f"{PDFJS_MODULE} missing (npm ci in {PDFJS_DIR})"
        return None
    if reader == "pdfbox":
        if not shutil.which("java"):
            return "java not on PATH (default-jre-headless)"
        absent = [jar for jar in PDFBOX_JARS if not (JAVA_DIR / jar).is_file()]
        if absent:
            return f"{', '.join(absent)} not in {JAVA_DIR} (libpdfbox2-java)"
        return None
    if reader == "mupdf":
        return None if shutil.which("mutool") else "mutool not on PATH (mupdf-tools)"
    return None if shutil.which("gs") else "gs not on PATH (ghostscript)"


def missing() -> list[str]:
    """The readers that cannot run here, each as 'name: why'; empty when all can."""
    out = []
    for reader in READERS:
        reason = _reason_missing(reader)
        if reason:
            out.append(f"{reader}: {reason}")
    return out


def page_count(path: Path) -> int:
    """The document's page count, by a parser none of the readers uses (qpdf, via pikepdf)."""
    import pikepdf

    with pikepdf.open(path) as pdf:
        return len(pdf.pages)


def _run(reader: str, cmd: list[str], timeout: float, cwd: Path | None = None) -> str:
    """Run one reader's command; its stdout, or a ReaderError that says what went wrong."""
    shown = " ".join(cmd)
    try:
        done = subprocess.run(
            cmd, cwd=cwd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired as exc:
        raise ReaderError(f"{reader}: timed out after {timeout:g} s: {shown}") from exc
    except OSError as exc:
        raise ReaderError(f"{reader}: cannot run {shown}: {exc}; {INSTALL_HINT}") from exc
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip()[-2000:]
        raise ReaderError(f"{reader}: exit status {done.returncode} from {shown}:\n{err}")
    return _decode(reader, done.stdout)


def _decode(reader: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReaderError(f"{reader}: output is not UTF-8: {exc}") from exc


def _split_ff(reader: str, text: str) -> list[str]:
    """pdftotext and pdfminer end every page, the last too, with a form feed."""
    if not text.endswith("\f"):
        raise ReaderError(f"{reader}: output does not end with a form feed: {text[-80:]!r}")
    return text[:-1].split("\f")


def _page_files(reader: str, folder: Path, count: int) -> list[str]:
    """Per-page output files page_1.txt ... page_N.txt, read in page order."""
    pages = []
    for n in range(1, count + 1):
        file = folder / f"page_{n}.txt"
        if not file.is_file():
            found = sorted(p.name for p in folder.iterdir())
            raise ReaderError(f"{reader}: no output for page {n} (found {found})")
        pages.append(_decode(reader, file.read_bytes()))
    return pages


def _poppler(path: Path, count: int, timeout: float) -> list[str]:
    cmd = ["pdftotext", "-enc", "UTF-8", "-f", "1", "-l", str(count), str(path), "-"]
    return _split_ff("poppler", _run("poppler", cmd, timeout))


def _in_process(reader: str) -> Callable[[Path, int, float], list[str]]:
    """pypdfium2 and pdfminer run in a child Python: a timeout can stop it, a crash is its own."""

    def read(path: Path, count: int, timeout: float) -> list[str]:
        cmd = [sys.executable, "-I", str(Path(__file__).resolve()), reader, str(path), str(count)]
        pages = json.loads(_run(reader, cmd, timeout))
        if not isinstance(pages, list) or not all(isinstance(p, str) for p in pages):
            raise ReaderError(f"{reader}: worker printed something other than a list of text")
        return pages

    return read


def _pdfjs(path: Path, count: int, timeout: float) -> list[str]:
    out = _run("pdfjs", ["node", "read.mjs", str(path.resolve()), str(count)], timeout, PDFJS_DIR)
    return out.split("\f")


def _pdfbox(path: Path, count: int, timeout: float) -> list[str]:
    classpath = ":".join(str(JAVA_DIR / jar) for jar in PDFBOX_JARS)
    with tempfile.TemporaryDirectory(prefix="pdfbox-") as tmp:
        folder = Path(tmp)
        source = folder / "PdfboxPages.java"
        source.write_text(PDFBOX_PAGES_JAVA)
        cmd = ["java", *JAVA_FLAGS, "-cp", classpath, str(source), str(path.resolve())]
        _run("pdfbox", [*cmd, tmp, str(count)], timeout)
        return _page_files("pdfbox", folder, count)


def _mupdf(path: Path, count: int, timeout: float) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="mupdf-") as tmp:
        folder = Path(tmp)
        out = str(folder / "page_%d.txt")
        _run(
            "mupdf",
            ["mutool", "draw", "-q", "-F", "txt", "-o", out, str(path), f"1-{count}"],
            timeout,
        )
        # mutool ends each page's text with a form feed and a newline
        return [
            p.removesuffix("\n").removesuffix("\f") for p in _page_files("mupdf", folder, count)
        ]


def _ghostscript(path: Path, count: int, timeout: float) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="gs-") as tmp:
        folder = Path(tmp)
        cmd = ["gs", "-q", "-dNOPAUSE", "-dBATCH", "-dSAFER", "-sDEVICE=txtwrite"]
        cmd += ["-dFirstPage=1", f"-dLastPage={count}", "-o", str(folder / "page_%d.txt")]
        _run("ghostscript", [*cmd, str(path)], timeout)
        return _page_files("ghostscript", folder, count)


_READ: dict[str, Callable[[Path, int, float], list[str]]] = {
    "poppler": _poppler,
    "pdfium": _in_process("pdfium"),
    "pdfminer": _in_process("pdfminer"),
    "pdfjs": _pdfjs,
    "pdfbox": _pdfbox,
    "mupdf": _mupdf,
    "ghostscript": _ghostscript,
}


def read_pages(
    path: Path, reader: str, pages: int | None = None, *, timeout: float = TIMEOUT_S
) -> list[str]:
    """The text of each page (the first `pages` pages when given), in order, as `reader` reads it.

    Line ends are normalised to "\\n"; nothing else is touched. Raises ReaderError when the reader
    is missing, fails, runs past `timeout` seconds, or returns a different number of pages.
    """
    reason = _reason_missing(reader)
    if reason:
        raise ReaderError(f"{reader}: not installed: {reason}; {INSTALL_HINT}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(path)
    total = page_count(path)
    count = total if pages is None else min(pages, total)
    if count < 1:
        return []
    got = _READ[reader](path, count, timeout)
    if len(got) != count:
        raise ReaderError(f"{reader}: {len(got)} pages of text from {path}, expected {count}")
    return [page.replace("\r\n", "\n") for page in got]


def read_all(path: Path, pages: int | None = None) -> dict[str, list[str]]:
    """Every reader's pages (run side by side), keyed in READERS order."""
    with ThreadPoolExecutor(max_workers=len(READERS)) as pool:
        futures = {r: pool.submit(read_pages, path, r, pages) for r in READERS}
        return {reader: future.result() for reader, future in futures.items()}


_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Every run of whitespace (newlines, form feeds, tabs) as one space; none at either end."""
    return _SPACE.sub(" ", text).strip()


def cer(truth: str, got: str) -> float:
    """Character error rate: Levenshtein distance / len(truth), whitespace runs collapsed.

    With an empty truth it is 0.0 when `got` is empty too and 1.0 otherwise.
    """
    from rapidfuzz.distance import Levenshtein

    want, have = normalise(truth), normalise(got)
    if not want:
        return 0.0 if not have else 1.0
    return Levenshtein.distance(want, have) / len(want)


def _worker(reader: str, path: str, count: int) -> list[str]:
    if reader == "pdfium":
        import pypdfium2

        doc = pypdfium2.PdfDocument(path)
        try:
            out = []
            for i in range(count):
                page = doc[i]
                textpage = page.get_textpage()
                out.append(textpage.get_text_range())
                textpage.close()
                page.close()
            return out
        finally:
            doc.close()
    if reader == "pdfminer":
        from pdfminer.high_level import extract_text

        return _split_ff(reader, extract_text(path, maxpages=count))
    raise SystemExit(f"no in-process worker for {reader!r}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit("usage: python tests/readers.py pdfium|pdfminer FILE.pdf PAGES")
    sys.stdout.write(json.dumps(_worker(sys.argv[1], sys.argv[2], int(sys.argv[3]))))
