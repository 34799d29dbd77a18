"""Forms and annotations others made: is every word a person sees in the source visible in the
output (OCR of the rendered page) and searchable (pdftotext), plain and redacted?

The sources are OCRmyPDF's own test resources, read from a local git mirror (``fetch``
github:ocrmypdf/OCRmyPDF, or ``--ocrmypdf-repo DIR``), never copied here: every PDF there with
a form or annotations, plus any named with ``--file``. The source is rendered as a viewer shows
it (PDFium with its form fields drawn) and read with Tesseract; so is the output, page for page
(the cover aside). A word counts as seen when Tesseract reads it on the source with confidence;
it is kept when the output's OCR reads it too, and searchable when pdftotext finds it.

    .venv-test/bin/python bench/forms_bench.py [--ocrmypdf-repo DIR] [--redact name]

Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pikepdf
import pypdfium2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pressroom.engines.tesseract import TesseractEngine  # noqa: E402
from pressroom.errors import PressroomError  # noqa: E402
from pressroom.outcomes import Held  # noqa: E402
from pressroom.pipeline.core import JobOptions  # noqa: E402
from pressroom.pipeline.ocr import OcrStage  # noqa: E402
from pressroom.processing import Processing  # noqa: E402
from pressroom.redact.policy import parse_policy  # noqa: E402
from pressroom.settings import Settings  # noqa: E402
from pressroom.templates import resolve_template  # noqa: E402

MIRROR = Path("/work/.mirror/ocrmypdf+OCRmyPDF/repo")
DPI = 200.0


def resources(repo: Path) -> dict[str, bytes]:
    """Every PDF under tests/resources at HEAD with a form or annotations."""
    names = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "--name-only", "HEAD", "tests/resources/"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    found = {}
    for name in names:
        if not name.endswith(".pdf"):
            continue
        data = subprocess.run(
            ["git", "-C", str(repo), "show", f"HEAD:{name}"], capture_output=True, check=True
        ).stdout
        try:
            with pikepdf.open(__import__("io").BytesIO(data)) as pdf:
                if "/AcroForm" in pdf.Root or any("/Annots" in p.obj for p in pdf.pages):
                    found[Path(name).name] = data
        except pikepdf.PdfError:
            continue
    return found


def seen_words(path: Path, ocr: OcrStage, *, forms: bool, skip: int = 0) -> list[set[str]]:
    """Per page, the words Tesseract reads with confidence on the page as a viewer shows it."""
    doc = pypdfium2.PdfDocument(str(path))
    try:
        if forms:
            doc.init_forms()
        pages = []
        for i in range(skip, len(doc)):
            page = doc[i]
            image = page.render(scale=DPI / 72.0, may_draw_forms=forms, grayscale=True).to_pil()
            reading = ocr.read_as_is(image.convert("L"), DPI)
            pages.append(
                {
                    _norm(w.text)
                    for w in reading.result.words
                    if w.confidence >= 70 and len(_norm(w.text)) >= 2
                }
            )
        return pages
    finally:
        doc.close()


def _norm(text: str) -> str:
    return re.sub(r"[^\w]", "", text).casefold()


def searchable(path: Path, page: int) -> set[str]:
    done = subprocess.run(
        ["pdftotext", "-f", str(page), "-l", str(page), str(path), "-"],
        capture_output=True,
        text=True,
        check=False,
    )
    return {_norm(w) for w in done.stdout.split()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ocrmypdf-repo", type=Path, default=MIRROR)
    parser.add_argument("--redact", default="name")
    parser.add_argument("--file", type=Path, action="append", default=[])
    args = parser.parse_args()
    if not (args.ocrmypdf_repo / ".git").exists() and not (args.ocrmypdf_repo / "HEAD").exists():
        print(f"no OCRmyPDF mirror at {args.ocrmypdf_repo}: fetch github:ocrmypdf/OCRmyPDF")
        return 2
    settings = Settings.from_env()
    engine = TesseractEngine(tessdata_prefix=settings.tessdata_prefix)
    ocr = OcrStage(engine)
    sources = resources(args.ocrmypdf_repo)
    sources.update({f.name: f.read_bytes() for f in args.file})
    print(
        "| source | run | words seen | visible in output | searchable in output "
        "| searchable in source | result |"
    )
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, data in sorted(sources.items()):
            src = folder / name
            src.write_bytes(data)
            before = seen_words(src, ocr, forms=True)
            own = sum(len(w & searchable(src, n + 1)) for n, w in enumerate(before))
            for run, policy in (("plain", None), ("redacted", args.redact)):
                out = folder / "out.pdf"
                processing = Processing(parse_policy(policy, now=0) if policy else None)
                try:
                    result = processing(
                        src, out, JobOptions(template=resolve_template("plain")), engine
                    )
                    if isinstance(result, Held):
                        raise result.reason
                except PressroomError as exc:
                    seen = sum(map(len, before))
                    print(f"| {name} | {run} | {seen} | — | — | {own} | {exc.code} |")
                    continue
                after = seen_words(out, ocr, forms=False)
                seen = kept = found = 0
                for n, words in enumerate(before):
                    seen += len(words)
                    kept += len(words & after[n]) if n < len(after) else 0
                    found += len(words & searchable(out, n + 1))
                note = f"{result.flattened} flattened, {result.notes} notes"
                if policy:
                    note += f", {sum(result.redacted.values())} boxes"
                print(f"| {name} | {run} | {seen} | {kept} | {found} | {own} | {note} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
