"""Detectors: find the values a policy names in a page's text, as character spans."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

# a name finding scored below this is half believed: burned all the same (fail closed), marked
# ``doubt`` for the reviewer, and never spread to the other mentions of its words
DOUBT_BELOW = 0.7


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str  # a policy class: name | address | account-number
    start: int  # character span in the text that was searched
    end: int
    value: str
    recognizer: str
    score: float = 1.0

    @property
    def doubt(self) -> bool:
        """A half-believed name. Only names: an operator's recogniser scoring an account
        number low must not take it out of propagation and the leak checks."""
        return self.kind == "name" and self.score < DOUBT_BELOW


class Recognizer(Protocol):
    @property
    def kind(self) -> str: ...

    def find(self, text: str) -> list[Finding]: ...


# UTF-16 code units that are not a character on their own; a Python string can hold them
# (a font's ToUnicode map or PDFium may hand one over), UTF-8 cannot, and every tokeniser that
# hashes or encodes its words (spaCy's) fails on them
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def valid_text(text: str) -> str:
    """``text`` as valid Unicode, each lone surrogate replaced by U+FFFD: the same length, so
    every offset into it is an offset into the text it came from."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(REPLACEMENT, text)
    return text


def joined_utf16(text: str) -> str:
    """Text read one UTF-16 code unit at a time (PDFium's characters): each high surrogate
    followed by a low one joined into the character the two make, and every surrogate left
    alone replaced by U+FFFD. Shorter than ``text`` where a pair was joined: for whole words,
    never for text that offsets point into (``valid_text`` is for that)."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
