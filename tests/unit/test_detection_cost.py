"""Detection's cost grows with the text, never with the text times a name list: counted work,
no clocks (seconds belong in bench/)."""

from __future__ import annotations

import pytest

import pressroom.redact.detect.detector as detector
from pressroom.redact.detect import Finding
from pressroom.redact.detect.detector import extend_names


class CountingSet(frozenset[str]):
    """A name list that counts the copies made of it (a union copies the whole list)."""

    copies = 0

    def __or__(self, other: object) -> frozenset[str]:  # type: ignore[override]
        CountingSet.copies += 1
        return frozenset(self) | frozenset(other)  # type: ignore[arg-type]

    __ror__ = __or__  # type: ignore[assignment]


def test_extending_names_never_copies_the_census_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    first = CountingSet({"juliusz", "maria"})
    last = CountingSet({"kwiatkowski", "nowak"})
    monkeypatch.setattr(detector, "census", lambda: (first, last))
    text = "Juliusz A Kwiatkowski met Maria Nowak. " * 500
    found = [
        Finding("name", i, i + len("Kwiatkowski"), "Kwiatkowski", "test")
        for i in range(len("Juliusz A "), len(text), len("Juliusz A Kwiatkowski met Maria Nowak. "))
    ]
    CountingSet.copies = 0
    out = extend_names(text, found)
    assert CountingSet.copies == 0
    assert len(out) == 500
    # and it still grows over the initial and the known given name before it
    assert out[0].value == "Juliusz A Kwiatkowski"
