"""How much of a page the read-back OCRs again (not a test): the floor under a redaction of
one-page scans.

    .venv-test/bin/python bench/readback_share.py [--pages 10] [--core N] [--keep DIR]

The same one-page 300-dpi scans as ``bench/redaction_cost.py --kinds scans`` are redacted
(``--redact name,address,account-number``, one run, in this process); every band of rows the
read-back reads again around burned boxes (``redact.reread.band_words``) is recorded with the
output page it was cut from. Then, on one core, Tesseract (the engine the pipeline uses, as
the pipeline calls it) reads each such output page three ways, the pixels exactly as the
read-back gets them:

- ``whole``: the whole output page (what pass one's reading costs, near enough: the same page
  but for its black boxes);
- ``bands``: the bands the read-back reads (each box's rows, the two lines above and below,
  full width), as it reads them;
- ``strips``: only each box's own line, two line heights each side of the box (what a
  read-back of the changed pixels alone would cost; measured, not used).

It prints, per page and in all, the seconds each took, the rows and the words each read, and
the bands' words as a share of the whole page's: where the bands hold most of a page's words,
the read-back is a second reading of the page, and a redaction costs two OCRs of it before
detection, burning and the checks.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

POLICY = "name,address,account-number"


def _strips(boxes: list[Any], size: tuple[int, int], scale: float) -> list[tuple[int, ...]]:
    """Each box's own line, two line heights each side (pixels), overlapping ones joined."""
    width, height = size
    rects: list[list[float]] = []
    for b in boxes:
        line = min(max(b.y1 - b.y0, 14 * scale), 48 * scale)
        rects.append(
            [
                max(0.0, b.x0 - 2 * line),
                max(0.0, b.y0 - 0.3 * line),
                min(width, b.x1 + 2 * line),
                min(height, b.y1 + 0.3 * line),
            ]
        )
    joined = True
    while joined:
        joined = False
        for i in range(len(rects)):
            for j in range(i + 1, len(rects)):
                a, c = rects[i], rects[j]
                if a[0] <= c[2] and c[0] <= a[2] and a[1] <= c[3] and c[1] <= a[3]:
                    rects[i] = [min(a[0], c[0]), min(a[1], c[1]), max(a[2], c[2]), max(a[3], c[3])]
                    del rects[j]
                    joined = True
                    break
            if joined:
                break
    return [tuple(round(v) for v in r) for r in rects]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=10, help="one-page scans (default 10)")
    parser.add_argument("--core", type=int, default=None, help="CPU to pin to (default: last)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the files here")
    args = parser.parse_args(argv)
    os.environ["OMP_THREAD_LIMIT"] = "1"
    cores = sorted(os.sched_getaffinity(0))
    core = args.core if args.core is not None else cores[-1]
    os.sched_setaffinity(0, {core})

    from bench.redaction_cost import make_documents
    from pressroom.cli import main as cli
    from pressroom.engines.tesseract import TesseractEngine
    from pressroom.pipeline.ocr import normalise_contrast
    from pressroom.redact import reread

    folder = args.keep or Path(tempfile.mkdtemp(prefix="readback-share-"))
    files = make_documents(folder, [args.pages], ["scans"])["scans", args.pages]
    seen: list[dict[str, Any]] = []
    real = reread.band_words

    def band_words(page: Any, scale: float, dpi: float, boxes: Any, *rest: Any) -> Any:
        whole = page.render(scale=scale, grayscale=True).to_pil().convert("L")
        seen.append({"page": whole, "boxes": list(boxes), "dpi": dpi, "scale": scale})
        seen[-1]["bands"] = reread.bands(boxes, whole.height, scale)
        return real(page, scale, dpi, boxes, *rest)

    reread.band_words = band_words  # type: ignore[assignment]
    try:
        inputs = [str(f) for f in sorted(files.glob("*.pdf"))]
        code = cli(
            ["process", *inputs, "-o", str(folder / "out"), "-j", "1", "-q", "--redact", POLICY]
        )
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        reread.band_words = real  # type: ignore[assignment]
    print(f"readback share: {args.pages} one-page scans, core {core}, run exit {code}")
    print(f"  {len(seen)} pages read again by bands (a held page is not)")
    engine = TesseractEngine()

    def read(image: Any, dpi: float) -> tuple[float, int]:
        started = time.perf_counter()
        words = engine.recognize(normalise_contrast(image), dpi=dpi).words
        return time.perf_counter() - started, len(words)

    totals = {k: [0.0, 0, 0] for k in ("whole", "bands", "strips")}
    print("  page boxes | whole s words rows | bands s words rows | strips s words rows")
    for n, s in enumerate(seen, 1):
        page, dpi = s["page"], s["dpi"]
        row: dict[str, tuple[float, int, int]] = {}
        row["whole"] = (*read(page, dpi), page.height)
        t = w = r = 0
        for top, bottom, _k0, _k1 in s["bands"]:
            dt, dw = read(page.crop((0, top, page.width, bottom)), dpi)
            t, w, r = t + dt, w + dw, r + bottom - top
        row["bands"] = (t, w, r)
        t = w = r = 0
        for x0, y0, x1, y1 in _strips(s["boxes"], page.size, s["scale"]):
            dt, dw = read(page.crop((x0, y0, x1, y1)), dpi)
            t, w = t + dt, w + dw
            r += math.ceil((y1 - y0) * (x1 - x0) / page.width)
        row["strips"] = (t, w, r)
        for k, (dt, dw, dr) in row.items():
            totals[k][0] += dt
            totals[k][1] += dw
            totals[k][2] += dr
        print(
            f"  {n:4d} {len(s['boxes']):5d} | "
            + " | ".join(f"{dt:6.2f} {dw:5d} {dr:5d}" for dt, dw, dr in row.values())
        )
    whole_s, whole_w, whole_r = totals["whole"]
    if not seen or not whole_w:
        return 0
    print("  in all (rows of strips: their area as whole rows):")
    for k, (dt, dw, dr) in totals.items():
        print(
            f"    {k:6s} {dt:6.2f} s ({dt / whole_s:4.0%} of whole pages), words {dw} "
            f"({dw / whole_w:4.0%}), rows {dr} ({dr / whole_r:4.0%}), "
            f"{dt / len(seen):.3f} s a page"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
