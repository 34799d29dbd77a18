"""A generated corpus for measuring redaction: forms and letters with known personal values.

Used by the CI recall check (``tests/integration/test_redaction_recall.py``): a detector
regression fails the build. Names are drawn from lists that are NOT in the 1990 Census
gazetteer the name recogniser uses, so they are found by their context or not at all.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from stdnum import iban, luhn

from corpora.documents.scoring import _within
from pressroom.engines import pdfium
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.ocr import OcrEngine
from pressroom.redact.plan import normalise
from pressroom.redact.policy import RedactionPolicy
from pressroom.synth import SENTENCES, draw_page, image_pdf
from pressroom.templates import resolve_template

CLASSES = ("name", "address", "account-number")

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


def letter(rng: random.Random) -> tuple[list[str], dict[str, list[str]], str]:
    names = [person(rng) for _ in range(3)]
    free = person(rng)
    addresses = [make_address(rng)]
    accounts = [make_iban(rng)]
    lines = [
        f"Dear {names[0]},",
        rng.choice(SENTENCES),
        f"The refund of {rng.randint(10, 999)}.00 was paid on behalf of {names[1]} last week.",
        f"It goes to IBAN {accounts[0]} within five days.",
        f"Please write to us at {addresses[0]} if anything changes.",
        f"We spoke with {free} about the delay.",  # no context: expected to be missed
        rng.choice(SENTENCES),
        "Kind regards,",
        names[2],
    ]
    return lines, {"name": names, "address": addresses, "account-number": accounts}, free


def tokens(text: str) -> Counter[str]:
    return Counter(t for t in (normalise(w) for w in text.split()) if t)


def corpus(pages: int, seed: int = 11) -> list[tuple[list[str], dict[str, list[str]], str]]:
    """``pages`` pages, form and letter alternating: (lines, values per class, no-context name)."""
    rng = random.Random(seed)
    return [(form if n % 2 == 0 else letter)(rng) for n in range(pages)]


@dataclass
class Score:
    """Value recall per class, no-context names found, and token precision, over many pages."""

    recall: dict[str, list[int]] = field(default_factory=lambda: {k: [0, 0] for k in CLASSES})
    pages: int = 0
    free_found: int = 0
    removed_true: int = 0
    removed_false: int = 0

    def add(
        self,
        lines: list[str],
        values: dict[str, list[str]],
        free: str,
        output_text: str,
        output_ocr: str,
    ) -> list[str]:
        """Count one page; returns the values still readable (the leaks). A value OCR misreads
        ("GBO6" for "GB06") is still readable to a person, and every reading of the same pixels
        may misread it the same way: it counts as readable within an OCR slip or two."""
        self.pages += 1
        flat, seen = normalise(output_text), normalise(output_ocr)
        leaks = []
        for kind, vals in values.items():
            for v in vals:
                gone = not _within(flat, normalise(v)) and not _within(seen, normalise(v))
                self.recall[kind][1] += 1
                self.recall[kind][0] += gone
                if not gone:
                    leaks.append(v)
        self.free_found += normalise(free) not in flat
        # a no-context name is a name too: redacting it is right, missing it is counted
        value_tokens = tokens(" ".join([free] + [v for vs in values.values() for v in vs]))
        lost = tokens("\n".join(lines)) - tokens(output_text)
        for token, count in lost.items():
            true = min(count, value_tokens.get(token, 0))
            self.removed_true += true
            self.removed_false += count - true
        return leaks

    def rate(self, kind: str) -> float:
        found, total = self.recall[kind]
        return found / max(total, 1)

    @property
    def all_names(self) -> float:
        found, total = self.recall["name"]
        return (found + self.free_found) / max(total + self.pages, 1)

    @property
    def precision(self) -> float:
        return self.removed_true / max(self.removed_true + self.removed_false, 1)


def scan_and_redact(
    lines: list[str],
    dpi: int,
    folder: Path,
    engine: OcrEngine,
    policy: RedactionPolicy,
    stem: str,
) -> tuple[str, str, float]:
    """Scan ``lines`` at ``dpi``, redact, and read the output back two ways: its text layer,
    and OCR of its pixels at 300 dpi; with the seconds the redaction took. A hold raises its
    reason (``ReviewRequired``), as a refusal raises its error."""
    from pressroom.outcomes import Held
    from pressroom.redact.engine import redact_document

    scan = draw_page(lines, dpi=dpi, height_in=4.5, font_pt=11)
    src = image_pdf([scan.image], folder / f"{stem}.pdf", dpi)
    out = folder / f"{stem}-out.pdf"
    start = time.perf_counter()
    done = redact_document(src, out, JobOptions(template=resolve_template(None)), policy, engine)
    if isinstance(done, Held):
        raise done.reason
    seconds = time.perf_counter() - start
    with pdfium.open_pdf(out) as doc:
        text = pdfium.page_text(doc, 0)
        image = doc[0].render(scale=300 / 72, grayscale=True).to_pil()
    seen = engine.recognize(image.convert("L"), dpi=300).text
    return text, seen, seconds
