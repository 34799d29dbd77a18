"""Detectors: find the values a policy names in a page's text, as character spans."""

from __future__ import annotations

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
