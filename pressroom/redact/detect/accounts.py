"""Account numbers: validated by checksum where one exists (IBAN, card Luhn, US ABA routing),
label-anchored where none does (account numbers, UK sort codes)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from stdnum import iban, luhn
from stdnum.us import rtn

from pressroom.redact.detect import Finding

KIND = "account-number"
_SEP = r"[ \-\u00a0]?"
IBAN_RE = re.compile(r"\b[A-Z]{2}\d{2}(?:" + _SEP + r"[A-Z0-9]{1,4}){3,8}\b")
CARD_RE = re.compile(r"(?<![\d-])\d(?:" + _SEP + r"\d){12,18}(?![\d-])")
ABA_RE = re.compile(r"(?<!\d)\d{9}(?!\d)")
LABEL_RE = re.compile(
    r"(?i)\b(?:account|acct|a/c)\.?\s*(?:no\.?|number|num\.?|#)?\s*[:#]?\s*"
    # digits in groups (single spaces or hyphens): "Account number: 1234 5678   Reference …"
    r"(?P<value>\d(?:[ \-]?\d){3,29})"
)
SORT_RE = re.compile(r"(?i)\bsort\s*code\s*[:#]?\s*(?P<value>\d{2}[ \-]?\d{2}[ \-]?\d{2})\b")
ROUTING_LABEL_RE = re.compile(r"(?i)\b(?:routing|aba|rtn)\b")


def _digits(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z]", "", text)


@dataclass(frozen=True, slots=True)
class AccountNumberRecognizer:
    kind: str = KIND

    def find(self, text: str) -> list[Finding]:
        found: list[Finding] = []
        for m in IBAN_RE.finditer(text):
            if iban.is_valid(_digits(m.group()).upper()):
                found.append(Finding(KIND, m.start(), m.end(), m.group(), "iban"))
        for m in CARD_RE.finditer(text):
            number = _digits(m.group())
            if 13 <= len(number) <= 19 and luhn.is_valid(number):
                found.append(Finding(KIND, m.start(), m.end(), m.group(), "card-luhn"))
        for m in ABA_RE.finditer(text):
            # nine digits pass the ABA checksum one time in ten by chance: a routing number
            # needs its label nearby as well
            window = text[max(0, m.start() - 40) : m.start()]
            if rtn.is_valid(m.group()) and ROUTING_LABEL_RE.search(window):
                found.append(Finding(KIND, m.start(), m.end(), m.group(), "aba-routing"))
        for m in LABEL_RE.finditer(text):
            value = m.group("value").strip()
            if sum(c.isdigit() for c in value) >= 4:
                start = m.start("value")
                found.append(Finding(KIND, start, start + len(value), value, "labelled-account"))
        for m in SORT_RE.finditer(text):
            found.append(
                Finding(KIND, m.start("value"), m.end("value"), m.group("value"), "sort-code")
            )
        return [
            Finding(f.kind, f.start, f.end, text[f.start : f.end], f.recognizer)
            for f in _merge(found)
        ]


def _merge(found: list[Finding]) -> list[Finding]:
    """Overlapping findings become one span (named after the one that starts first)."""
    found.sort(key=lambda f: (f.start, -(f.end - f.start)))
    merged: list[Finding] = []
    for f in found:
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            if f.end > last.end:
                merged[-1] = Finding(last.kind, last.start, f.end, last.value, last.recognizer)
            continue
        merged.append(f)
    return merged
