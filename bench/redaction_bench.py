"""Redaction benchmark (not a test): recall and precision per class, at 150, 200 and 300 dpi.

    .venv/bin/python bench/redaction_bench.py [--pages 8]

The corpus alternates form pages and letter pages (free text). Form pages carry names, addresses
and account numbers with look-alikes around them; letter pages carry them in running prose
("Dear …,", "on behalf of …", a sign-off, an address and an IBAN mid-sentence). Names are drawn
from lists that are NOT in the 1990 Census gazetteer the recogniser uses (so the gazetteer gets
no help): they can be found only by their context — and one name per page stands in free text
with no context at all, which plain recognisers are expected to miss; those are reported apart
and also folded into an "all names" recall, so the number is not flattered. Addresses are
generated US, Canadian and UK ones.

Figures, per class: value recall (the whole value is gone from the output's text and from OCR of
its pixels), token precision (of the words the output lost, the share that belonged to a value;
OCR misreadings count against it), and the time per page.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from pressroom.engines.tesseract import TesseractEngine
from pressroom.redact.corpus import CLASSES, Score, corpus, scan_and_redact
from pressroom.redact.policy import parse_policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=8)
    args = parser.parse_args()
    engine = TesseractEngine()
    policy = parse_policy("name,address,account-number", now=time.time())
    forms = corpus(args.pages)
    print(
        f"{args.pages} pages, form and letter alternating; per page 3 names in context + 1 name "
        "with no context, 1 address, 1-3 account numbers, with look-alikes"
    )
    with tempfile.TemporaryDirectory(prefix="pressroom-redact-bench-") as tmp:
        folder = Path(tmp)
        for dpi in (150, 200, 300):
            score = Score()
            held = 0
            seconds: list[float] = []
            for n, (lines, values, free) in enumerate(forms):
                t0 = time.perf_counter()
                try:
                    text, seen, took = scan_and_redact(
                        lines, dpi, folder, engine, policy, f"{dpi}-{n}"
                    )
                except Exception as exc:  # held: nothing published
                    held += 1
                    seconds.append(time.perf_counter() - t0)
                    print(f"  page {n} at {dpi} dpi held: {type(exc).__name__}: {exc}")
                    continue
                seconds.append(took)
                score.add(lines, values, free, text, seen)
            seconds.sort()
            p95 = seconds[max(0, round(0.95 * len(seconds)) - 1)]
            parts = "  ".join(f"{k} {score.rate(k):.3f}" for k in CLASSES)
            print(
                f"{dpi} dpi: recall {parts}  all names {score.all_names:.3f} | token precision "
                f"{score.precision:.3f} | no-context names found {score.free_found}/{len(forms)} | "
                f"held {held} | "
                f"p95 {p95:.2f} s/page (median {statistics.median(seconds):.2f})"
            )


if __name__ == "__main__":
    main()
