"""Redaction benchmark (not a test): recall of forbidden account numbers and survival of
look-alikes, at 150, 200 and 300 dpi scans, beside the time per page.

    .venv/bin/python bench/redaction_bench.py [--pages 8]

Values are generated (random, checksum-valid IBANs and card numbers, labelled account numbers,
sort codes) with decoys that fail the checksums or lack a label (dates, amounts, phone numbers,
references). A value counts as recalled when it is neither in the output's text (PDFium) nor
readable by OCR of the output's pixels; a decoy counts as kept when its text is still there.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from stdnum import iban, luhn

from pressroom.engines import pdfium
from pressroom.engines.tesseract import TesseractEngine
from pressroom.pipeline.runner import JobOptions
from pressroom.redact.engine import redact_document
from pressroom.redact.plan import normalise
from pressroom.redact.policy import parse_policy
from pressroom.synth import SENTENCES, draw_page, image_pdf
from pressroom.templates import resolve_template


def make_iban(rng: random.Random) -> str:
    bban = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(4)) + "".join(
        rng.choice("0123456789") for _ in range(14)
    )
    digits = iban.calc_check_digits("GB00" + bban)
    raw = f"GB{digits}{bban}"
    return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4))


def make_card(rng: random.Random) -> str:
    body = "4" + "".join(rng.choice("0123456789") for _ in range(14))
    number = body + luhn.calc_check_digit(body)
    return " ".join(number[i : i + 4] for i in range(0, 16, 4))


def page(rng: random.Random) -> tuple[list[str], list[str], list[str]]:
    values = [
        make_iban(rng),
        make_card(rng),
        "".join(rng.choice("0123456789") for _ in range(8)),
        f"{rng.randint(10, 99)}-{rng.randint(10, 99)}-{rng.randint(10, 99)}",
    ]
    bad_card = values[1][:-1] + str((int(values[1][-1]) + 1) % 10)
    decoys = [
        bad_card,
        f"0{rng.randint(100, 999)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}",
        f"{rng.randint(1, 28)}/{rng.randint(1, 12)}/2026",
        f"{rng.randint(100, 9999)}.00",
        f"REF-{rng.randint(100000, 999999)}",
    ]
    lines = [
        rng.choice(SENTENCES),
        f"Pay into IBAN {values[0]} by the end of the month.",
        f"Card on file: {values[1]}",
        f"Account number: {values[2]}  Sort code: {values[3]}",
        f"Not a card: {decoys[0]}  Phone: {decoys[1]}",
        f"Dated {decoys[2]}, amount {decoys[3]}, reference {decoys[4]}.",
        rng.choice(SENTENCES),
    ]
    return lines, values, decoys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=8)
    args = parser.parse_args()
    engine = TesseractEngine()
    policy = parse_policy("account-number", now=time.time())
    rng = random.Random(7)
    forms = [page(rng) for _ in range(args.pages)]
    print(f"{args.pages} generated form pages, 4 account values and 5 decoys each")
    print(f"{'dpi':>5}{'recall':>9}{'decoys kept':>13}{'held':>6}{'p95 s/page':>12}")
    with tempfile.TemporaryDirectory(prefix="pressroom-redact-bench-") as tmp:
        folder = Path(tmp)
        for dpi in (150, 200, 300):
            recalled = total = kept = decoy_total = held = 0
            seconds: list[float] = []
            for n, (lines, values, decoys) in enumerate(forms):
                scan = draw_page(lines, dpi=dpi, height_in=4.0, font_pt=11)
                src = image_pdf([scan.image], folder / f"{dpi}-{n}.pdf", dpi)
                out = folder / f"{dpi}-{n}-out.pdf"
                t0 = time.perf_counter()
                try:
                    redact_document(
                        src, out, JobOptions(template=resolve_template(None)), policy, engine
                    )
                except Exception as exc:  # held for review: nothing was published
                    held += 1
                    seconds.append(time.perf_counter() - t0)
                    total += len(values)
                    recalled += len(values)
                    decoy_total += len(decoys)
                    print(f"  page {n} at {dpi} dpi held: {type(exc).__name__}")
                    continue
                seconds.append(time.perf_counter() - t0)
                with pdfium.open_pdf(out) as doc:
                    text = normalise(pdfium.page_text(doc, 0))
                    image = doc[0].render(scale=300 / 72, grayscale=True).to_pil()
                seen = normalise(engine.recognize(image.convert("L"), dpi=300).text)
                for v in values:
                    total += 1
                    recalled += normalise(v) not in text and normalise(v) not in seen
                for d in decoys:
                    decoy_total += 1
                    kept += normalise(d) in text
            seconds.sort()
            p95 = seconds[max(0, round(0.95 * len(seconds)) - 1)]
            print(
                f"{dpi:>5}{recalled / total:>9.3f}{kept / decoy_total:>13.3f}{held:>6}"
                f"{p95:>12.2f}   (median {statistics.median(seconds):.2f} s)"
            )


if __name__ == "__main__":
    main()
