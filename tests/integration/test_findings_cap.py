"""A page with more findings than a person could judge is held TOO_MANY_FINDINGS, with every
finding burned in the held copy and listed for the reviewer; at the cap it is delivered."""

from __future__ import annotations

from pathlib import Path

import pytest

from pressroom.engines.tesseract import TesseractEngine
from pressroom.errors import TooManyFindings
from pressroom.pipeline.core import JobOptions
from pressroom.redact.engine import redact_document
from pressroom.redact.policy import parse_policy
from pressroom.settings import Limits
from pressroom.synth import text_pdf
from pressroom.templates import resolve_template
from tests.helpers import delivered, held_by, output_text

pytestmark = pytest.mark.integration

ACCOUNTS = ["12345678", "23456789", "34567890", "45678901", "56789012"]


def test_a_page_past_the_cap_is_held_with_every_finding_burned(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    lines = ["Refunds paid this week:", *(f"Account number: {a}" for a in ACCOUNTS)]
    src = text_pdf([lines, ["Account number: 67890123"]], tmp_path / "in.pdf")
    policy = parse_policy("account-number", now=0)

    def options(cap: int) -> JobOptions:
        return JobOptions(template=resolve_template(None), limits=Limits(max_page_findings=cap))

    # page 1 carries five findings, page 2 one: a cap of five delivers it
    result = delivered(redact_document(src, tmp_path / "five.pdf", options(5), policy, engine))
    assert result.sheet is not None and len(result.sheet.findings) == 6
    held = held_by(
        redact_document(src, tmp_path / "four.pdf", options(4), policy, engine), TooManyFindings
    )
    assert held.code == "TOO_MANY_FINDINGS"
    assert "page 1: 5" in held.message and "page 2" not in held.message
    # the reviewer sees every finding, and the held copy has each of them burned
    assert len(held.findings) == 6
    assert held.sheet is not None and len(held.sheet.findings) == 6
    text = output_text(tmp_path / "four.pdf")
    assert "Refunds paid this week" in text
    for value in [*ACCOUNTS, "67890123"]:
        assert value not in text
