"""A reviewer's corrections and the review sheet as JSON: read back as written, and anything
else refused with a reason that names the bad part."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pressroom.corrections import (
    MANUAL,
    MAX_AREAS,
    Area,
    Corrections,
    ReviewSheet,
    SheetFinding,
    SheetPage,
)
from pressroom.errors import BadRequest

FIXES = Corrections(
    removed=(Area(1, (10.5, 20.25, 80.0, 32.0)),),
    manual=(Area(2, (100.0, 200.0, 160.75, 214.0)), Area(1, (0.0, 0.0, 612.0, 12.0))),
    every=(Area(3, (72.0, 90.0, 110.0, 101.5)),),
)


def test_corrections_read_back_as_written() -> None:
    raw = json.loads(json.dumps(FIXES.as_json()))
    assert Corrections.parse(raw) == FIXES
    assert FIXES.counts() == {"removed": 1, "manual": 2, "every": 1}
    assert not FIXES.empty


@pytest.mark.parametrize("raw", [{}, {"removed": [], "manual": None}, {"every": []}])
def test_no_corrections_are_empty(raw: dict[str, Any]) -> None:
    fixes = Corrections.parse(raw)
    assert fixes.empty
    assert fixes == Corrections()


def test_integers_are_points_too() -> None:
    fixes = Corrections.parse({"manual": [{"page": 1, "box": [1, 2, 30, 40]}]})
    assert fixes.manual == (Area(1, (1.0, 2.0, 30.0, 40.0)),)


GOOD = {"page": 1, "box": [10, 10, 50, 30]}


@pytest.mark.parametrize(
    ("raw", "names"),
    [
        ([], "corrections: expected an object"),
        ({"removed": [], "added": []}, "unknown field 'added'"),
        ({"manual": {"page": 1}}, "corrections.manual: expected a list"),
        ({"manual": [GOOD] * (MAX_AREAS + 1)}, f"at most {MAX_AREAS}"),
        ({"every": ["box"]}, r"corrections.every\[0\]: expected an object"),
        ({"removed": [GOOD, {"box": [1, 1, 5, 5]}]}, r"corrections.removed\[1\]: page"),
        ({"manual": [{"page": 0, "box": [1, 1, 5, 5]}]}, "page must be"),
        ({"manual": [{"page": True, "box": [1, 1, 5, 5]}]}, "page must be"),
        ({"manual": [{"page": "1", "box": [1, 1, 5, 5]}]}, "page must be"),
        ({"manual": [{"page": 1, "box": [1, 1, 5]}]}, "box must be four numbers"),
        ({"manual": [{"page": 1, "box": "1,1,5,5"}]}, "box must be four numbers"),
        ({"manual": [{"page": 1, "box": [1, 1, 5, True]}]}, "box must be four numbers"),
        ({"manual": [{"page": 1, "box": [1, 1, 5, float("nan")]}]}, "box must be four numbers"),
        ({"manual": [{"page": 1, "box": [-1, 1, 5, 5]}]}, "box must be four numbers"),
        ({"manual": [{"page": 1, "box": [1, 1, 5, 30_000]}]}, "box must be four numbers"),
        ({"manual": [{"page": 1, "box": [5, 1, 1, 5]}]}, "at least 1 pt"),
        ({"manual": [{"page": 1, "box": [1, 1, 1.5, 5]}]}, "at least 1 pt"),
    ],
)
def test_bad_corrections_are_refused_naming_the_part(raw: object, names: str) -> None:
    with pytest.raises(BadRequest, match=names) as refused:
        Corrections.parse(raw)
    assert refused.value.code == "BAD_REQUEST"


def test_a_later_round_keeps_the_first() -> None:
    later = Corrections(manual=(Area(2, (100.0, 200.0, 160.75, 214.0)), Area(4, (1, 1, 9, 9))))
    merged = FIXES.merged(later)
    assert merged.manual == (*FIXES.manual, Area(4, (1, 1, 9, 9)))  # the repeat once
    assert merged.removed == FIXES.removed and merged.every == FIXES.every


SHEET = ReviewSheet(
    pages=(SheetPage(612.0, 792.0), SheetPage(792.0, 612.0, 90, -1.25)),
    findings=(
        SheetFinding(1, "name", (72.0, 63.84, 140.5, 72.24)),
        SheetFinding(2, MANUAL, (100.0, 200.0, 160.75, 214.0)),
    ),
    corrections=FIXES,
)


def test_a_review_sheet_reads_back_as_written() -> None:
    raw = json.loads(json.dumps(SHEET.as_json()))
    assert ReviewSheet.parse(raw) == SHEET
    # never a value: only places and classes
    assert set(raw["findings"][0]) == {"page", "class", "box"}


def test_a_sheet_rounds_once_and_then_reads_back_the_same() -> None:
    fine = ReviewSheet((SheetPage(612.004, 791.996, 0, 0.123456),), (), Corrections())
    once = ReviewSheet.parse(fine.as_json())
    assert once.pages[0] == SheetPage(612.0, 792.0, 0, 0.1235)
    assert ReviewSheet.parse(once.as_json()) == once


def test_an_old_sheet_without_corrections_reads_as_none_applied() -> None:
    raw = SHEET.as_json()
    del raw["corrections"]
    assert ReviewSheet.parse(raw).corrections == Corrections()


def test_a_sheet_with_bad_corrections_is_refused() -> None:
    raw = SHEET.as_json()
    raw["corrections"] = {"manual": [{"page": 1, "box": [1, 1, 1, 1]}]}
    with pytest.raises(BadRequest, match=r"corrections.manual\[0\]"):
        ReviewSheet.parse(raw)
