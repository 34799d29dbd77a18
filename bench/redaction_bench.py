"""Redaction benchmark (not a test): recall and precision per class, at 150, 200 and 300 dpi.

    .venv/bin/python bench/redaction_bench.py [--pages 8]

Each generated form page carries names, addresses and account numbers with look-alikes around
them. Names are drawn from lists that are NOT in the 1990 Census gazetteer the recogniser uses
(so the gazetteer gets no help): they can be found only by their context (labels, "I, …,",
honorifics) — and one name per page stands in free text with no context, which the recognisers
are expected to miss; it is counted. Addresses are generated US, Canadian and UK ones.

Figures, per class: value recall (the whole value is gone from the output's text and from OCR of
its pixels), token precision (of the words the output lost, the share that belonged to a value;
OCR misreadings count against it), and the time per page.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections import Counter
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

FIRST = [
    "Olusegun",
    "Tomasz",
    "Siobhan",
    "Wei",
    "Amara",
    "Priya",
    "Kwabena",
    "Oksana",
    "Dagny",
    "Thanh",
    "Ifeoma",
    "Radek",
    "Aroha",
    "Bilal",
    "Yusra",
    "Eero",
]
LAST = [
    "Adebayo",
    "Wieczorek",
    "Okafor",
    "Raghunathan",
    "Nakashima",
    "Oyelaran",
    "Kowalczyk",
    "Thorvaldsen",
    "Achterberg",
    "Mbeki",
    "Szabo",
    "Haddad",
    "Nyambura",
    "Lindqvist",
]
STREETS = [
    "Maple Avenue",
    "Harbour Road",
    "Elm Street",
    "Kings Road",
    "Station Road",
    "Willow Drive",
    "Queen Street",
    "Lakeview Boulevard",
]
US_CITIES = [
    ("Springfield", "IL", "62704"),
    ("Portland", "OR", "97205"),
    ("Austin", "TX", "78701"),
    ("Madison", "WI", "53703"),
]
UK_TOWNS = [("Leeds", "LS1 4DY"), ("Bristol", "BS1 5TR"), ("Norwich", "NR2 1TR")]
CA_CITIES = [("Toronto", "ON", "M5V 2T6"), ("Halifax", "NS", "B3H 1T2")]


def make_iban(rng: random.Random) -> str:
    bban = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") for _ in range(4)) + "".join(
        rng.choice("0123456789") for _ in range(14)
    )
    raw = f"GB{iban.calc_check_digits('GB00' + bban)}{bban}"
    return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4))


def make_card(rng: random.Random) -> str:
    body = "4" + "".join(rng.choice("0123456789") for _ in range(14))
    number = body + luhn.calc_check_digit(body)
    return " ".join(number[i : i + 4] for i in range(0, 16, 4))


def make_address(rng: random.Random) -> str:
    n, street = rng.randint(2, 990), rng.choice(STREETS)
    kind = rng.choice(("US", "UK", "CA"))
    if kind == "US":
        city, state, zip_code = rng.choice(US_CITIES)
        return f"{n} {street}, {city}, {state} {zip_code}"
    if kind == "UK":
        town, postcode = rng.choice(UK_TOWNS)
        return f"{n} {street}, {town} {postcode}"
    city, province, postal = rng.choice(CA_CITIES)
    return f"{n} {street}, {city}, {province} {postal}"


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def form(rng: random.Random) -> tuple[list[str], dict[str, list[str]], str]:
    names = [person(rng) for _ in range(3)]
    free = person(rng)
    addresses = [make_address(rng)]
    accounts = [make_iban(rng), make_card(rng), "".join(rng.choice("0123456789") for _ in range(8))]
    lines = [
        rng.choice(SENTENCES),
        f"Payee: {names[0]}",
        f"I, {names[1]}, confirm the details below are correct.",
        f"Witnessed by Mr {names[2]} at the office.",
        f"Send the cheque to {addresses[0]} by post.",
        f"IBAN {accounts[0]}   Card {accounts[1]}",
        f"Account number: {accounts[2]}   Reference REF-{rng.randint(1000, 9999)}",
        f"Dated {rng.randint(1, 28)}/{rng.randint(1, 12)}/2026 for {rng.randint(10, 999)}.00"
        " in Leeds Hall.",
        f"We thank {free} for the photographs.",  # no context: expected to be missed
        rng.choice(SENTENCES),
    ]
    return lines, {"name": names, "address": addresses, "account-number": accounts}, free


def tokens(text: str) -> Counter[str]:
    return Counter(t for t in (normalise(w) for w in text.split()) if t)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=8)
    args = parser.parse_args()
    engine = TesseractEngine()
    policy = parse_policy("name,address,account-number", now=time.time())
    rng = random.Random(11)
    forms = [form(rng) for _ in range(args.pages)]
    print(
        f"{args.pages} form pages; per page 3 names in context + 1 free-text name, "
        "1 address, 3 account numbers, with look-alikes"
    )
    with tempfile.TemporaryDirectory(prefix="pressroom-redact-bench-") as tmp:
        folder = Path(tmp)
        for dpi in (150, 200, 300):
            recall = {k: [0, 0] for k in ("name", "address", "account-number")}
            free_found = 0
            removed_true = removed_false = 0
            held = 0
            seconds: list[float] = []
            for n, (lines, values, free) in enumerate(forms):
                scan = draw_page(lines, dpi=dpi, height_in=4.5, font_pt=11)
                src = image_pdf([scan.image], folder / f"{dpi}-{n}.pdf", dpi)
                out = folder / f"{dpi}-{n}-out.pdf"
                t0 = time.perf_counter()
                try:
                    redact_document(
                        src, out, JobOptions(template=resolve_template(None)), policy, engine
                    )
                except Exception as exc:  # held: nothing published
                    held += 1
                    seconds.append(time.perf_counter() - t0)
                    print(f"  page {n} at {dpi} dpi held: {type(exc).__name__}: {exc}")
                    continue
                seconds.append(time.perf_counter() - t0)
                with pdfium.open_pdf(out) as doc:
                    text = pdfium.page_text(doc, 0)
                    image = doc[0].render(scale=300 / 72, grayscale=True).to_pil()
                seen = normalise(engine.recognize(image.convert("L"), dpi=300).text)
                flat = normalise(text)
                for kind, vals in values.items():
                    for v in vals:
                        recall[kind][1] += 1
                        recall[kind][0] += normalise(v) not in flat and normalise(v) not in seen
                free_found += normalise(free) not in flat
                # a free-text name is a name too: redacting it is right, missing it is counted
                value_tokens = tokens(" ".join([free] + [v for vs in values.values() for v in vs]))
                lost = tokens("\n".join(lines)) - tokens(text)
                for token, count in lost.items():
                    true = min(count, value_tokens.get(token, 0))
                    removed_true += true
                    removed_false += count - true
            seconds.sort()
            p95 = seconds[max(0, round(0.95 * len(seconds)) - 1)]
            precision = removed_true / max(removed_true + removed_false, 1)
            parts = "  ".join(f"{k} {a / max(b, 1):.3f}" for k, (a, b) in recall.items())
            print(
                f"{dpi} dpi: recall {parts}  | token precision {precision:.3f} | "
                f"free-text names found {free_found}/{len(forms)} | held {held} | "
                f"p95 {p95:.2f} s/page (median {statistics.median(seconds):.2f})"
            )


if __name__ == "__main__":
    main()
