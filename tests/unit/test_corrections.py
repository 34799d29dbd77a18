"""A reviewer's corrections and the review sheet as JSON: read back as written, and anything
else refused with a reason that names the bad part; and the corrections applied to what a
redaction's first pass found (``redact.apply``, pure)."""

from __future__ import annotations

import json
from dataclasses import replace
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
from pressroom.models import Box, PageInfo, Word
from pressroom.redact.apply import NOTHING, apply_corrections, chosen, review_sheet
from pressroom.redact.detect import Finding
from pressroom.redact.detection import Hit
from pressroom.redact.findings import DocumentFinding
from pressroom.redact.scan import PageScan

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
        SheetFinding(2, "name", (300.0, 200.0, 360.0, 214.0), doubt=True),
    ),
    corrections=FIXES,
)


def test_a_review_sheet_reads_back_as_written() -> None:
    raw = json.loads(json.dumps(SHEET.as_json()))
    assert ReviewSheet.parse(raw) == SHEET
    # never a value: only places and classes, and a doubtful name marked
    assert set(raw["findings"][0]) == {"page", "class", "box"}
    assert raw["findings"][2]["doubt"] is True


def test_the_desk_marks_a_doubtful_name_and_names_it_to_a_screen_reader() -> None:
    from pressroom.desk.pages import page_items as _page_items

    doubtful = [b for b in _page_items(SHEET, 2)[0] if "doubt" in b["classes"].split()]
    assert len(doubtful) == 1
    [box] = doubtful
    assert box["classes"] == "box k-name doubt"
    assert box["aria"].startswith("doubtful name box 2 on page 2: press to remove")
    # the state the findings rail shows beside the page (no label on the page itself)
    assert box["state"] == "doubt" and box["shown"] == "doubt, burned" and box["name"] == "name"
    assert not [b for b in _page_items(SHEET, 1)[0] if "doubt" in b["classes"]]


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


# --- the corrections applied to what the first pass found (pure: no OCR, no files) ---


def word(text: str, x0: float, y0: float, line: int = 0) -> Word:
    """A word in 300 dpi pixels, 20 px a letter wide, 40 px high."""
    box = Box(x0, y0, x0 + 20 * len(text), y0 + 40)
    return Word(text, 95.0, box, (box.x0, box.y1 - 8), box.width, 40.0, 0.0, line)


def hit(kind: str, value: str, *words: int) -> Hit:
    return Hit(Finding(kind, 0, len(value), value, "test"), words)


def page(index: int, words: list[Word], hits: list[Hit]) -> PageScan:
    """A born-digital page (its own words, OCR reading the same) at 300 dpi, US letter."""
    info = PageInfo(index, 612.0, 792.0, 0, None, True, 100)
    return PageScan(info, 0, 300.0, (2550, 3300), list(words), list(words), list(hits), list(hits))


def pt(b: Box) -> tuple[float, float, float, float]:
    k = 72 / 300
    return (b.x0 * k, b.y0 * k, b.x1 * k, b.y1 * k)


def two_pages() -> tuple[list[PageScan], dict[str, set[str]]]:
    one = [word("Grace", 300, 300), word("Okafor", 420, 300), word("BLUEHERON", 300, 400, 1)]
    two = [
        word("Okafor", 300, 300),
        word("BLUEHERON", 300, 400, 1),
        word("Ref:12345678", 300, 500, 2),
    ]
    scans = [
        page(0, one, [hit("name", "Grace Okafor", 0, 1), hit("name", "BLUEHERON", 2)]),
        page(1, two, [hit("name", "BLUEHERON", 1), hit("account-number", "12345678", 2)]),
    ]
    by_kind = {"name": {"Grace Okafor", "BLUEHERON"}, "account-number": {"12345678"}}
    return scans, by_kind


def test_no_corrections_change_nothing() -> None:
    scans, by_kind = two_pages()
    for fixes in (None, Corrections()):
        assert apply_corrections(fixes, scans, by_kind) == NOTHING
    assert by_kind == two_pages()[1]
    assert [len(s.hits_ocr) for s in scans] == [2, 2]


def test_a_removed_box_lets_its_value_stand_there_and_nowhere_else() -> None:
    """The desk shows page 2's BLUEHERON as its own box, still active: it is still burned."""
    scans, by_kind = two_pages()
    fixes = Corrections(removed=(Area(1, pt(scans[0].ocr[2].box)),))
    applied = apply_corrections(fixes, scans, by_kind)
    assert by_kind == two_pages()[1]  # every value is still looked for everywhere
    assert [len(s.hits_ocr) for s in scans] == [2, 2]
    assert applied.exempt(0, scans[0].ocr, 300 / 72) == {2}
    assert applied.exempt(1, scans[1].ocr, 300 / 72) == set()
    # the document-wide checks leave the value out; each burned box is checked on its own
    assert applied.allowed == {"blueheron"}
    assert applied.lets_stand("Blue-Heron")
    assert applied.tokens(by_kind["name"]) == {"grace", "okafor"}
    assert applied.overridden == ()


def test_a_surname_clicked_away_stands_only_where_it_was_clicked() -> None:
    scans, by_kind = two_pages()
    # page 2's "Okafor" was found only as a token of the person on page 1
    fixes = Corrections(removed=(Area(2, pt(scans[1].ocr[0].box)),))
    applied = apply_corrections(fixes, scans, by_kind)
    assert applied.exempt(1, scans[1].ocr, 300 / 72) == {0}
    assert applied.exempt(0, scans[0].ocr, 300 / 72) == set()  # page 1's "Okafor" burns
    assert applied.tokens(by_kind["name"]) == {"grace", "blueheron"}
    assert "Grace Okafor" in by_kind["name"]  # the whole name still goes where it is written


def test_a_value_inside_a_longer_token_is_let_stand_with_it() -> None:
    scans, by_kind = two_pages()
    fixes = Corrections(removed=(Area(2, pt(scans[1].ocr[2].box)),))
    applied = apply_corrections(fixes, scans, by_kind)
    assert "12345678" in applied.allowed
    assert applied.exempt(1, scans[1].ocr, 300 / 72) == {2}


def test_removing_the_outer_of_nested_findings_leaves_the_inner_burning() -> None:
    """An address finding that starts with a date holds another address finding: removing the
    outer box (to keep the date) keeps the date only; the inner address is still burned, and
    the outcome is told so."""
    words = [
        word("14", 100, 300),
        word("November", 160, 300),
        word("2026", 340, 300),
        word("1600", 440, 300),
        word("Penn", 540, 300),
        word("Avenue", 640, 300),
    ]
    outer = hit("address", "14 November 2026 1600 Penn Avenue", 0, 1, 2, 3, 4, 5)
    inner = hit("address", "1600 Penn Avenue", 3, 4, 5)
    scans = [page(0, words, [outer, inner])]
    by_kind = {"address": {outer.finding.value, inner.finding.value}}
    outer_box = Box(words[0].box.x0, 300, words[5].box.x1, 340)
    applied = apply_corrections(Corrections(removed=(Area(1, pt(outer_box)),)), scans, by_kind)
    assert applied.exempt(0, words, 300 / 72) == {0, 1, 2}  # the date stands
    assert applied.overridden == ((1, "address"),)
    # removing the inner one as well lets the whole line stand
    inner_box = Box(words[3].box.x0, 300, words[5].box.x1, 340)
    both = Corrections(removed=(Area(1, pt(outer_box)), Area(1, pt(inner_box))))
    applied = apply_corrections(both, scans, by_kind)
    assert applied.exempt(0, words, 300 / 72) == set(range(6))
    assert applied.overridden == ()
    # and removing only the inner one keeps everything burned (the outer covers it)
    applied = apply_corrections(Corrections(removed=(Area(1, pt(inner_box)),)), scans, by_kind)
    assert applied.exempt(0, words, 300 / 72) == set()
    assert applied.overridden == ((1, "address"),)


def test_every_occurrence_adds_the_words_under_the_area_as_a_value() -> None:
    scans, by_kind = two_pages()
    scans[0].ocr[2] = word("BLUEHER0N", 300, 400, 1)  # OCR read it differently
    area = Area(1, pt(scans[0].extracted[2].box))
    applied = apply_corrections(Corrections(removed=(area,), every=(area,)), scans, by_kind)
    assert by_kind[MANUAL] == {"BLUEHERON", "BLUEHER0N"}  # both readings go
    assert "blueheron" not in applied.allowed  # asked to go everywhere: not also let stand


def test_a_drawn_box_is_burned_in_the_scan_pixels_within_the_page() -> None:
    scans, by_kind = two_pages()
    fixes = Corrections(
        manual=(
            Area(2, (72.0, 72.0, 144.0, 90.0)),
            Area(2, (600.0, 780.0, 700.0, 800.0)),  # partly off the page
            Area(1, (700.0, 10.0, 750.0, 20.0)),  # wholly off the page
        )
    )
    applied = apply_corrections(fixes, scans, by_kind)
    assert list(applied.drawn) == list(applied.drawn_pt) == [1]
    assert [rounded(b) for b in applied.drawn[1]] == [
        (300, 300, 600, 375),
        (2500, 3250, 2550, 3300),
    ]
    assert [rounded(b) for b in applied.drawn_pt[1]] == [(72, 72, 144, 90), (600, 780, 612, 792)]
    assert by_kind == two_pages()[1]  # nothing found changes


def rounded(b: Box) -> tuple[float, ...]:
    return tuple(round(v, 6) for v in (b.x0, b.y0, b.x1, b.y1))


def test_a_correction_on_a_page_the_document_lacks_is_refused() -> None:
    scans, by_kind = two_pages()
    with pytest.raises(BadRequest, match="page 3"):
        apply_corrections(Corrections(every=(Area(3, (1, 1, 9, 9)),)), scans, by_kind)


def test_detection_on_the_output_ignores_only_what_was_let_stand_where_it_stands() -> None:
    scans, by_kind = two_pages()
    clicked = scans[0].ocr[2].box
    applied = apply_corrections(Corrections(removed=(Area(1, pt(clicked)),)), scans, by_kind)
    here = [Box(*pt(clicked))]
    out = [word("BLUE", 300, 400), word("HERON", 380, 400), word("Wanda", 300, 600)]
    assert applied.ignored(hit("name", "BLUEHERON", 0, 1), out, here, 300 / 72)
    # a misreading at the same place is the same let-stand value
    misread = [word("BLUF", 300, 400), word("HERON", 380, 400)]
    assert applied.ignored(hit("name", "BLUF HERON", 0, 1), misread, here, 300 / 72)
    # the same value somewhere else (another page: no removed box there) is found again
    assert not applied.ignored(hit("name", "BLUEHERON", 0, 1), out, [], 300 / 72)
    assert not applied.ignored(hit("name", "Wanda", 2), out, here, 300 / 72)


def test_the_sheet_shows_each_page_its_findings_and_the_drawn_boxes() -> None:
    scans, _ = two_pages()
    scans[1].rotation, scans[1].level = 90, -0.5
    fixes = Corrections(manual=(Area(2, (72.0, 72.0, 144.0, 90.0)),))
    found = [DocumentFinding(1, "name", (72.0, 72.0, 120.0, 82.0), "Grace Okafor")]
    sheet = review_sheet(scans, found, fixes)
    assert sheet.pages == (SheetPage(612.0, 792.0), SheetPage(612.0, 792.0, 90, -0.5))
    assert sheet.findings == (
        SheetFinding(1, "name", (72.0, 72.0, 120.0, 82.0)),
        SheetFinding(2, MANUAL, (72.0, 72.0, 144.0, 90.0)),
    )
    assert sheet.corrections == fixes
    assert "Grace" not in json.dumps(sheet.as_json())


@pytest.mark.parametrize(
    ("area", "picked"),
    [
        (Box(90, 0, 210, 40), True),  # around it
        (Box(150, 10, 170, 30), True),  # inside it: a drag over part of the word
        (Box(100, 0, 160, 40), True),  # its left half
        (Box(160, 0, 260, 40), False),  # grazing its right end on the way to the next word
        (Box(0, 35, 300, 90), False),  # the line below, touching its foot
        (Box(200, 0, 300, 40), False),  # beside it
    ],
)
def test_an_area_picks_what_lies_mostly_in_it(area: Box, picked: bool) -> None:
    assert chosen(Box(100, 0, 200, 40), area) is picked


def test_a_drag_grazing_the_next_word_takes_only_the_word_chosen() -> None:
    scans, by_kind = two_pages()
    grace, okafor = scans[0].ocr[0].box, scans[0].ocr[1].box
    area = Box(grace.x0 - 5, grace.y0 - 5, okafor.x0 + 10, grace.y1 + 5)
    apply_corrections(Corrections(every=(Area(1, pt(area)),)), scans, by_kind)
    assert by_kind[MANUAL] == {"Grace"}


def test_a_value_either_reading_believes_is_not_marked_doubtful() -> None:
    from pressroom.redact.findings import _dedupe

    ocr = DocumentFinding(1, "name", (72.0, 100.0, 130.0, 112.0), "Okafor", doubt=True)
    text = DocumentFinding(1, "name", (72.4, 100.2, 130.1, 112.3), "Okafor", doubt=False)
    # whichever comes first, the one place is shown once, and believed
    assert _dedupe([ocr, text]) == _dedupe([text, ocr]) == [replace(ocr, doubt=False)]
    alone = DocumentFinding(1, "name", (300.0, 100.0, 330.0, 112.0), "Lyon", doubt=True)
    assert _dedupe([ocr, alone]) == [ocr, alone]
