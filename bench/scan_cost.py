"""Scan cost benchmark (not a test): what the malware scan costs per MB of source, beside what OCR
costs per page, in one run.

    .venv-test/bin/python bench/scan_cost.py [--sizes 1,8,32,128] [--rounds 3] [--keep DIR]

A real clamd (Debian ``clamav-daemon``; ``make test-system-deps``) is started as the scanner
tests start it (``tests/clamd.py``: its own config and the suite's two-signature database,
since these machines cannot fetch the official one; with the official one's millions of
signatures each MB costs more, by an amount not measured here) with StreamMaxLength,
MaxFileSize and MaxScanSize past the largest file (and all it unpacks), so every byte is read,
and DisableCache (clamd remembers the hash of a clean file and answers a second scan of it from
memory in a few ms: real uploads are each new). Two clamds: ClamAV's defaults, and
``ScanImageFuzzyHash no`` (measured: the fuzzy hash ClamAV 1.x computes of every image, which
decodes each JPEG, is most of a scanned PDF's cost). Each clean PDF goes through
``scanning.scan_file``, the worker's own call (zINSTREAM over the Unix socket, 256 KiB chunks);
the fastest of ``--rounds`` is kept. Two kinds of PDF per size:

- ``jpeg``: pages of scanner-style JPEG images (DCTDecode) — what a scanner uploads; clamd
  inflates nothing here, but by default decodes each JPEG for its image fuzzy hash;
- ``flate``: pages of Flate-compressed image streams, which clamd's PDF parser inflates and
  scans again — its dearest ordinary case.

Beside them, the OCR cost of one letter page at 300 dpi (one JPEG page in a PDF) through the
project's own OCR path (``pipeline.plain.process_document`` with Tesseract, as ``pressroom
process`` runs it; OMP_THREAD_LIMIT=1), and the scan of that same page's file, so the two
figures are for the same bytes.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
import zlib
from pathlib import Path

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pikepdf
from PIL import Image

from pressroom.engines.tesseract import TesseractEngine
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.plain import process_document
from pressroom.scanning import Clean, scan_file
from pressroom.settings import Settings
from pressroom.synth import distort, draw_page, image_pdf, page_lines
from pressroom.templates import resolve_template
from tests.clamd import hashed_pdf, start_clamd

MB = 1 << 20


def _noise(width: int, height: int, seed: int) -> Image.Image:
    """Grey paper with grain: compresses like a scan (neither blank nor pure noise)."""
    base = Image.effect_noise((width, height), 40 + seed % 7).convert("L")
    return Image.eval(base, lambda v: 160 + v // 3)


def sized_pdf(path: Path, size: int, kind: str) -> Path:
    """A clean PDF of about ``size`` bytes: pages of one image each, until it is that big."""
    pdf = pikepdf.Pdf.new()
    seed = 0
    while True:
        image = _noise(1275, 1650, seed)  # letter at 150 dpi: ~0.3-1 MB a page
        if kind == "jpeg":
            out = io.BytesIO()
            image.save(out, "JPEG", quality=85)
            data, filters = out.getvalue(), pikepdf.Name.DCTDecode
        else:
            data, filters = zlib.compress(image.tobytes(), 6), pikepdf.Name.FlateDecode
        xobject = pdf.make_stream(
            data,
            Type=pikepdf.Name.XObject,
            Subtype=pikepdf.Name.Image,
            Width=image.width,
            Height=image.height,
            ColorSpace=pikepdf.Name.DeviceGray,
            BitsPerComponent=8,
            Filter=filters,
        )
        page = pdf.add_blank_page(page_size=(612, 792))
        page.obj.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=xobject))
        page.obj.Contents = pdf.make_stream(b"q 612 0 0 792 0 0 cm /Im0 Do Q")
        seed += 1
        if seed * len(data) >= size:
            break
    pdf.save(path, stream_decode_level=pikepdf.StreamDecodeLevel.none)
    return path


def fastest_scan(scanner: object, path: Path, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        verdict = scan_file(scanner, path)  # type: ignore[arg-type]
        best = min(best, time.perf_counter() - start)
        assert verdict == Clean(), verdict
    return best


def ocr_page(folder: Path, rounds: int) -> tuple[Path, float]:
    """One 300-dpi letter page (26 lines of text, scanner grain) read by OCR: its file and the
    fastest of ``rounds`` whole runs of the plain pipeline."""
    scan = draw_page(page_lines(4242, 26), font="DejaVuSerif.ttf", font_pt=11)
    source = image_pdf([distort(scan.image, seed=1)], folder / "page300.pdf", 300)
    engine = TesseractEngine(tessdata_prefix=Settings.from_env().tessdata_prefix)
    options = JobOptions(template=resolve_template(None))
    best = float("inf")
    for n in range(rounds):
        start = time.perf_counter()
        result = process_document(source, folder / f"ocr{n}.pdf", options, engine)
        best = min(best, time.perf_counter() - start)
        assert result.ocr_pages == 1
    return source, best


CONFIGS = (("defaults", ()), ("no fuzzy", ("ScanImageFuzzyHash no",)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,8,32,128", help="MB, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="keep the files here")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        limit = f"{max(sizes) * 2 + 16}M"
        # MaxScanSize counts every byte unpacked from the file too (a Flate page inflates to
        # several times its size): reached, it is a finding (AlertExceedsMax), not a pass
        unpacked = f"{max(sizes) * 16 + 64}M"
        hashed = hashed_pdf(folder / "hashed.pdf")
        daemons = [
            start_clamd(
                folder / f"clamd{n}",
                hashed,
                stream_max=limit,
                extra=[
                    f"MaxFileSize {limit}",
                    f"MaxScanSize {unpacked}",
                    "DisableCache yes",
                    *more,
                ],
            )
            for n, (_name, more) in enumerate(CONFIGS)
        ]
        try:
            scanners = [d.scanner(timeout_s=600) for d in daemons]
            print(
                f"clamd: StreamMaxLength/MaxFileSize {limit}, MaxScanSize {unpacked}, "
                "DisableCache yes"
            )
            print(f"{'kind':6} {'MB':>7} " + " ".join(f"{n + ' ms/MB':>17}" for n, _ in CONFIGS))
            for kind in ("jpeg", "flate"):
                for size in sizes:
                    path = sized_pdf(folder / f"{kind}-{size}.pdf", size * MB, kind)
                    mb = path.stat().st_size / MB
                    costs = [fastest_scan(s, path, args.rounds) * 1000 / mb for s in scanners]
                    path.unlink()
                    shown = " ".join(f"{c:17.1f}" for c in costs)
                    print(f"{kind:6} {mb:7.1f} {shown}", flush=True)
            page, ocr_s = ocr_page(folder, args.rounds)
            page_mb = page.stat().st_size / MB
            page_scans = [fastest_scan(s, page, args.rounds) for s in scanners]
        finally:
            for daemon in daemons:
                daemon.stop()
    print()
    print(f"one 300-dpi letter page ({page_mb:.2f} MB PDF): OCR (plain pipeline) {ocr_s:.3f} s")
    for (name, _more), seconds in zip(CONFIGS, page_scans, strict=True):
        print(
            f"the same file through clamd ({name}): {seconds * 1000:.1f} ms, "
            f"{seconds / ocr_s * 100:.1f}% of its OCR"
        )


if __name__ == "__main__":
    main()
