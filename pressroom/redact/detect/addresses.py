"""Postal addresses (US, Canada, UK): pyap2 finds them in free text; an "Address:" label
anchors the rest of its line even when pyap2 does not recognise the format."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pressroom.redact.detect import Finding

KIND = "address"
COUNTRIES: tuple[Literal["US", "CA", "GB"], ...] = ("US", "CA", "GB")
LABEL_RE = re.compile(
    r"(?i)\b(?:home\s+|postal\s+|mailing\s+|street\s+)?address\s*[:\-]\s*(?P<value>[^\n]{6,120})"
)


HOUSE_NUMBER = re.compile(r"\b\d+[A-Za-z]?\b")


def _trim_start(text: str, start: int, end: int) -> int:
    """pyap's UK pattern can start mid-word or on the line before ("r Jane at the office.\n
    Send to 12 Elm Street, Leeds LS1 4DY"): start at the house number then."""
    while start < end and text[start].isspace():
        start += 1
    value = text[start:end]
    number = HOUSE_NUMBER.search(value)
    if number is not None and number.start() > 0:
        prefix = value[: number.start()]
        begins_mid_word = start > 0 and text[start - 1].isalnum()
        if "\n" in prefix or begins_mid_word or not value[:1].isupper():
            start += number.start()
    return start


@dataclass(frozen=True, slots=True)
class AddressRecognizer:
    kind: str = KIND

    def find(self, text: str) -> list[Finding]:
        import pyap  # lazily: only address jobs pay for it

        found: list[Finding] = []
        for country in COUNTRIES:
            for address in pyap.parse(text, country=country):
                start, end = address.match_start, address.match_end
                if start is None or end is None:
                    continue
                start = _trim_start(text, start, end)
                found.append(Finding(KIND, start, end, text[start:end], f"pyap-{country}"))
        for m in LABEL_RE.finditer(text):
            value = m.group("value").strip()
            start = m.start("value")
            found.append(Finding(KIND, start, start + len(value), value, "label"))
        return found
