"""What the desk's job page is built from (``desk.pages.page_items``): one box per line of a
finding, all sharing the finding's id; overlapping findings as one group with each member its
own toggle; a box drawn by hand shown once; the words of an every-occurrence area locked to it."""

from __future__ import annotations

from pressroom.corrections import Area, Corrections, ReviewSheet, SheetFinding, SheetPage
from pressroom.desk.pages import page_items as _page_items

PAGE = SheetPage(612, 792)
WRAPPED = SheetFinding(
    1, "name", (60, 100, 540, 130), lines=((480, 100, 540, 112), (60, 118, 120, 130))
)
OUTER = SheetFinding(1, "address", (72, 200, 300, 250))
INNER = SheetFinding(1, "address", (72, 236, 160, 250))
ALONE = SheetFinding(1, "account-number", (72, 400, 260, 414))
DRAWN = SheetFinding(1, "manual", (300, 500, 360, 520))
EVERY_WORD = SheetFinding(1, "manual", (100, 600, 140, 612))


def sheet(corrections: Corrections | None = None) -> ReviewSheet:
    shown = (WRAPPED, OUTER, INNER, ALONE, DRAWN, EVERY_WORD)
    return ReviewSheet((PAGE,), shown, corrections or Corrections())


def test_a_wrapped_finding_is_a_box_per_line_and_one_entry() -> None:
    boxes, entries = _page_items(sheet(), 1)
    mine = [b for b in boxes if b["finding"] == "f1-1"]
    assert [b["box"] for b in mine] == ["480 100 540 112", "60 118 120 130"]
    assert [b["testid"] for b in mine] == ["box-1-1", "box-1-1-2"]
    # each line box is what a removed correction sends for the whole finding
    assert {b["removes"] for b in mine} == {"60 100 540 130"}
    assert len([e for e in entries if e["finding"] == "f1-1"]) == 1


def test_nested_findings_are_one_group_each_its_own_toggle() -> None:
    boxes, entries = _page_items(sheet(), 1)
    outer, inner = (next(b for b in boxes if b["finding"] == f) for f in ("f1-2", "f1-3"))
    assert outer["group"] == inner["group"] != ""
    assert next(b for b in boxes if b["finding"] == "f1-4")["group"] == ""
    listed = [e for e in entries if e["group"] == outer["group"]]
    assert [e["members"] for e in listed] == [2, 0]  # the first names how many
    # the group's members stand together in the rail
    at = [e["finding"] for e in entries]
    assert at.index("f1-3") == at.index("f1-2") + 1


def test_states_ids_and_counting() -> None:
    fixes = Corrections(
        removed=(Area(1, OUTER.box), Area(1, (10, 700, 50, 720))),
        manual=(Area(1, DRAWN.box),),
        every=(Area(1, EVERY_WORD.box),),
    )
    boxes, entries = _page_items(sheet(fixes), 1)
    state = {b["finding"]: b["state"] for b in boxes}
    assert state["f1-2"] == "kept" and state["f1-3"] == "burned"
    # the drawn box is shown once, as applied; the every area's word is locked to it
    drawn = [b for b in boxes if b["removes"] == "300 500 360 520"]
    assert len(drawn) == 1 and drawn[0]["origin"] == "applied" and drawn[0]["finding"][0] == "m"
    word = next(b for b in boxes if b["removes"] == "100 600 140 612" and b["origin"] == "finding")
    assert word["locked"] and word["counted"] == 1
    # a removed area no finding matches: kept, not counted; the every area: not counted
    kept = next(b for b in boxes if b["origin"] == "kept")
    assert kept["finding"].startswith("k1-") and kept["counted"] == 0 and kept["state"] == "kept"
    every = next(b for b in boxes if b["kind"] == "every")
    assert every["finding"].startswith("e1-") and every["counted"] == 0
    # ids are unique per item, every entry names a box that exists
    ids = {b["finding"] for b in boxes}
    assert len(ids) == len(entries)
    testids = {b["testid"] for b in boxes}
    assert all(e["for"] in testids for e in entries)
