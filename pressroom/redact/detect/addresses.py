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


ZIP = re.compile(r"^\d{5}(?:-\d{4})?[.,;]?$")


def _usaddress_lines(text: str) -> list[Finding]:
    """US addresses on one line that pyap's patterns miss, found by usaddress's tagger: a house
    number, a street and a ZIP code, in order, make an address (from the number to the ZIP)."""
    import usaddress

    found: list[Finding] = []
    offset = 0
    for line in text.split("\n"):
        if any(c.isdigit() for c in line):
            try:
                tagged = usaddress.parse(line)
            except Exception:  # the tagger's own errors: no address on this line
                tagged = []
            labels = [label for _token, label in tagged]
            if "AddressNumber" in labels and "StreetName" in labels and "ZipCode" in labels:
                first = labels.index("AddressNumber")
                last = len(labels) - 1 - labels[::-1].index("ZipCode")
                if first < labels.index("StreetName") < last and ZIP.match(tagged[last][0]):
                    start = line.find(tagged[first][0])
                    zip_token = tagged[last][0].rstrip(".,;")
                    end = line.find(zip_token, start) + len(zip_token)
                    if 0 <= start < end:
                        found.append(
                            Finding(
                                KIND, offset + start, offset + end, line[start:end], "usaddress"
                            )
                        )
        offset += len(line) + 1
    return found


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
        found += _usaddress_lines(text)
        for m in LABEL_RE.finditer(text):
            value = m.group("value").strip()
            start = m.start("value")
            found.append(Finding(KIND, start, start + len(value), value, "label"))
        return found
