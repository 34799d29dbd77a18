"""Which hold a redaction of pages in writing the recognisers do not read ends with, when a
check held it first (``redact.engine._unread_hold``): the script's hold where the check only
says what the script causes, else the check's own code with the writing said after it."""

from __future__ import annotations

from pressroom.corrections import SheetFinding
from pressroom.errors import OutputCheckFailed, RedactionLeak, UnsupportedScriptHeld
from pressroom.redact.engine import _unread_hold
from pressroom.redact.leaks import LABEL_HELD
from pressroom.redact.writing import Unread

UNREAD = Unread({1: "Cyrillic script"}, {"name": frozenset({"en"})})
WHOLE = (0.0, 0.0, 612.0, 792.0)


def test_low_confidence_on_those_pages_is_the_script_hold() -> None:
    low = OutputCheckFailed("page(s) 1 read with too little confidence to judge")
    held = _unread_hold(low, [SheetFinding(1, "low-confidence", WHOLE)], UNREAD)
    assert isinstance(held, UnsupportedScriptHeld) and held.code == "UNSUPPORTED_SCRIPT"
    assert held.message.startswith("written in Cyrillic script (page 1), which the name model")


def test_low_confidence_on_another_page_keeps_its_code() -> None:
    low = OutputCheckFailed("page(s) 2 read with too little confidence to judge")
    held = _unread_hold(low, [SheetFinding(2, "low-confidence", WHOLE)], UNREAD)
    assert held is low and held.code == "OUTPUT_CHECK_FAILED"
    assert "written in Cyrillic script (page 1)" in held.message


def test_a_leak_keeps_its_code_and_says_the_writing() -> None:
    leak = RedactionLeak("detection run again on the output found page 1: 1 leak")
    held = _unread_hold(leak, [SheetFinding(1, "leak", WHOLE)], UNREAD)
    assert held is leak and held.code == "REDACTION_LEAK"
    assert held.message.startswith("detection run again on the output found page 1: 1 leak; ")
    assert "written in Cyrillic script (page 1)" in held.message


def test_the_label_hold_stays_as_the_worker_knows_it() -> None:
    label = RedactionLeak(LABEL_HELD)
    assert _unread_hold(label, [], UNREAD).message == LABEL_HELD
