"""Output size against source size, per kind of input: plain and redacted, without a template
and with the sample one (whose cover, bands, logo and fonts are a fixed cost per document),
PDF and PDF/A, in one run. Each input is a one-page document made here, with a name on it so a
redaction burns something (the page is rebuilt from its pixels).

    .venv-test/bin/python bench/size_bench.py [--pages 1]

Prints a table of output bytes / source bytes; asserts nothing. The target (issue 27): at most
1.3x for scanned input, plain and redacted, without a template.
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pikepdf
from PIL import Image, ImageFilter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pressroom.engines.tesseract import TesseractEngine  # noqa: E402
from pressroom.errors import PressroomError  # noqa: E402
from pressroom.outcomes import Held  # noqa: E402
from pressroom.pipeline.core import JobOptions  # noqa: E402
from pressroom.processing import Processing  # noqa: E402
from pressroom.redact.policy import parse_policy  # noqa: E402
from pressroom.settings import Settings  # noqa: E402
from pressroom.synth import draw_page, save_tiff, text_pdf  # noqa: E402
from pressroom.templates import resolve_template  # noqa: E402

LINES = [
    "Payout form for the spring tournament, section A",
    "Player: Mr Quentin Alder, rating 2140",
    "Address: 14 Harbour Lane, Portsmouth",
    "The organiser confirms the prize was paid in full",
    "and that the player signed for it on the day.",
]


def scanned(dpi: int, seed: int = 7) -> Image.Image:
    """A letter page as a scanner makes it: grey paper, a little noise and blur."""
    page = draw_page(LINES * 4, dpi=dpi).image
    rng = random.Random(seed)
    noise = Image.effect_noise(page.size, 12).point(lambda v: v - 128 + 235)
    page = Image.blend(page.convert("L"), noise, 0.06).filter(ImageFilter.GaussianBlur(0.4))
    del rng
    return page


def jpeg_pdf(path: Path, dpi: int, quality: int = 75) -> Path:
    image = scanned(dpi)
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=quality)
    pdf = pikepdf.Pdf.new()
    w, h = image.width * 72 / dpi, image.height * 72 / dpi
    stream = pdf.make_stream(buf.getvalue())
    stream.Type, stream.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
    stream.Width, stream.Height = image.size
    stream.ColorSpace, stream.BitsPerComponent = pikepdf.Name.DeviceGray, 8
    stream.Filter = pikepdf.Name.DCTDecode
    page = pikepdf.Page(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Page,
            MediaBox=pikepdf.Array([0, 0, w, h]),
            Resources=pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=stream)),
            Contents=pdf.make_stream(f"q {w:.2f} 0 0 {h:.2f} 0 0 cm /Im0 Do Q".encode()),
        )
    )
    pdf.pages.append(page)
    pdf.save(path)
    return path


def fax_tiff(path: Path) -> Path:
    image = scanned(200).point(lambda v: 255 if v > 160 else 0)
    return save_tiff([image], path, 200, bilevel=True)


def grey_png(path: Path) -> Path:
    scanned(300).save(path, dpi=(300, 300))
    return path


def jpeg_file(path: Path) -> Path:
    scanned(200).save(path, format="JPEG", quality=80, dpi=(200, 200))
    return path


def typed(path: Path) -> Path:
    return text_pdf([LINES * 4], path)


INPUTS: dict[str, Callable[[Path], Path]] = {
    "JPEG scan in a PDF, 200 dpi": lambda d: jpeg_pdf(d / "jpeg200.pdf", 200),
    "JPEG scan in a PDF, 300 dpi": lambda d: jpeg_pdf(d / "jpeg300.pdf", 300),
    "bilevel G4 TIFF, 200 dpi": lambda d: fax_tiff(d / "fax.tif"),
    "grey PNG, 300 dpi": lambda d: grey_png(d / "grey.png"),
    "JPEG photo file, 200 dpi": lambda d: jpeg_file(d / "photo.jpg"),
    "born-digital text PDF": lambda d: typed(d / "typed.pdf"),
}
RUNS = [
    ("plain", None, "plain", None, 0),
    ("redacted", "name", "plain", None, 0),
    ("plain, sample", None, "sample", None, 0),
    ("redacted, sample", "name", "sample", None, 0),
    ("plain, PDF/A", None, "plain", "pdfa", 0),
    ("redacted, PDF/A", "name", "plain", "pdfa", 0),
    ("plain, --optimize 1", None, "plain", None, 1),
    ("plain, --optimize 2", None, "plain", None, 2),
    ("redacted, --optimize 2", "name", "plain", None, 2),
]


def main() -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    settings = Settings.from_env()
    engine = TesseractEngine(tessdata_prefix=settings.tessdata_prefix)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for label, make in INPUTS.items():
            src = make(folder)
            size = src.stat().st_size
            cells = []
            for _run, redact, template, output_type, optimize in RUNS:
                out = folder / "out.pdf"
                processing = Processing(parse_policy(redact, now=0) if redact else None)
                options = JobOptions(
                    template=resolve_template(template), output_type=output_type, optimize=optimize
                )
                t0 = time.monotonic()
                try:
                    done = processing(src, out, options, engine)
                    if isinstance(done, Held):
                        raise done.reason
                    cells.append(f"{out.stat().st_size / size:.2f}x")
                except PressroomError as exc:
                    cells.append(exc.code)
                del t0
                out.unlink(missing_ok=True)
            rows.append((label, f"{size / 1024:.0f} KB", cells))
    header = ["input", "source", *[r[0] for r in RUNS]]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for label, size, cells in rows:
        print(f"| {label} | {size} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
