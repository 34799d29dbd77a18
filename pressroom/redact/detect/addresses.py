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
                while start < end and text[start].isspace():
                    start += 1
                found.append(Finding(KIND, start, end, text[start:end], f"pyap-{country}"))
        for m in LABEL_RE.finditer(text):
            value = m.group("value").strip()
            start = m.start("value")
            found.append(Finding(KIND, start, start + len(value), value, "label"))
        return found
