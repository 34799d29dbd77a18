"""The CI recall check: a detector regression fails the build (recall and leaks, never time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pressroom.engines.tesseract import TesseractEngine
from pressroom.redact.corpus import Score, corpus, scan_and_redact
from pressroom.redact.policy import parse_policy

pytestmark = pytest.mark.integration


def test_generated_forms_and_letters_lose_every_value_in_context(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    policy = parse_policy("name,address,account-number", now=0)
    score = Score()
    leaks: list[str] = []
    for n, (lines, values, free) in enumerate(corpus(4, seed=5)):
        text, seen, _seconds = scan_and_redact(lines, 300, tmp_path, engine, policy, str(n))
        leaks += score.add(lines, values, free, text, seen)
        # the words around the values are still there for the editor
        assert "within five days" in text or "confirm the details below" in text
    assert leaks == []  # recall 1.0 for every class, on every page (a leak names its value)
    assert score.recall["name"][1] == 12 and score.recall["account-number"][1] >= 8
    assert score.precision >= 0.9
