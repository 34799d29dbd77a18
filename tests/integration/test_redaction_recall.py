"""The CI recall check: a detector regression fails the build (recall and leaks, never time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpora.forms import Score, corpus, scan_and_redact
from pressroom.engines.tesseract import TesseractEngine
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


@pytest.mark.parametrize("index", [0, 1, 2], ids=["prose-capitals", "table-wrapped", "faint"])
def test_documents_as_a_reader_sees_them_lose_every_mention(
    tmp_path: Path, engine: TesseractEngine, index: int
) -> None:
    """Names in prose (surnames alone, possessives, speaker labels in capitals), a statement
    table (sort code in its own cell, an IBAN without spaces, payees in capitals), an IBAN
    wrapped over two lines, and a name and an account number in faint grey: every mention is
    gone from every reader (PDFium, poppler, OCR of the pixels) and burned where it stood, the
    document is delivered (not held), and the text that must stay is still searchable."""
    from corpora.documents.kinds import ci_documents
    from corpora.documents.scoring import redact_and_score

    doc = ci_documents()[index]
    policy = parse_policy("name,address,account-number", now=0)
    outcome = redact_and_score(doc, tmp_path, 300, engine, policy)
    assert outcome.error is None
    assert outcome.held is None, outcome.held
    assert [s.mention.text for s in outcome.missed()] == []
    assert [s.mention.text for s in outcome.dropped()] == []
