"""Where a name hides in a PDF, and what a redaction job makes of each hiding place.

Each case of the hiding-places corpus (``tests/hiding.py``) shows a name on its first page and
carries it again somewhere else: shared resources, font encodings (Identity-H, /Differences,
Type 3), unused objects, XMP, comments, marked content, hidden layers, invisible, clipped,
off-page and covered text, annotations, document-level structures. Each is redacted for names
with the real Tesseract engine, and what was written (the published output, or the held copy)
is read back by pdftotext, PDFium, pdfminer, pdf.js, the leak check's object walk and
``qpdf --qdf | strings``. Printed per case: delivered or held (with the reason code), and the
readers that still find the name. A case is leaked when it was delivered with the name inside.

    .venv-test/bin/python bench/hiding_bench.py [--only SUBSTRING ...]

Prints figures; asserts nothing (tests/integration/test_hiding_places.py does). About a minute.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.hiding import CASES, judge  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[], help="cases whose name holds this")
    args = parser.parse_args()
    from pressroom.engines.tesseract import TesseractEngine
    from pressroom.settings import Settings

    engine = TesseractEngine(tessdata_prefix=Settings.from_env().tessdata_prefix)
    tally = {"leaked": 0, "held": 0, "delivered clean": 0}
    width = max(len(c) for c in CASES)
    print(f"{'case':<{width}}  outcome    reader(s) still finding the name")
    with tempfile.TemporaryDirectory(prefix="hiding-bench-") as tmp:
        for n, case in enumerate(CASES):
            if args.only and not any(s in case for s in args.only):
                continue
            outcome = judge(case, Path(tmp) / str(n), engine)
            state = outcome.state
            if outcome.state == "held":
                state = "held " + outcome.reason.split(":")[0]
                tally["held"] += 1
            elif outcome.leaked:
                state = "LEAKED"
                tally["leaked"] += 1
            else:
                tally["delivered clean"] += 1
            where = ", ".join(outcome.found_in) or "-"
            print(f"{case:<{width}}  {state:<9}  {where}")
    print("summary: " + ", ".join(f"{k} {v}" for k, v in tally.items()))


if __name__ == "__main__":
    main()
