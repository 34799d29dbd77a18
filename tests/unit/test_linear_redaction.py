"""A long document costs its pages, never its pages times the values found in it: propagation,
the desk's findings and review sheet, the corrections, the leak check's readings and the
carriers' judging, each counted at 10 and 40 pages (lines of the redaction's own code run, as
``test_detection_cost`` counts detection), never timed. Each value is found on one page, so a
document of four times the pages holds four times the values: every page searched for every
value again is sixteen times the work, and fails here.

And the one search per document (``plan.ValueSearch``) finds exactly what searching for each
value in turn finds."""

from __future__ import annotations

import gc
import random
import string
from pathlib import Path
from typing import Any

import pikepdf
from hypothesis import given, settings
from hypothesis import strategies as st

import pressroom.corrections as corrections
import pressroom.redact.apply as apply
import pressroom.redact.detection as detection
import pressroom.redact.findings as findings
import pressroom.redact.leaks as leaks
import pressroom.redact.plan as plan
from pressroom.corrections import Area, Corrections
from pressroom.models import Box, PageInfo, Word
from pressroom.redact.apply import apply_corrections, review_sheet
from pressroom.redact.detect import Finding
from pressroom.redact.detect.detector import name_tokens
from pressroom.redact.detection import Hit
from pressroom.redact.findings import page_findings
from pressroom.redact.leaks import carries_value, find_leaks
from pressroom.redact.plan import covered_words
from pressroom.redact.scan import PageScan
from tests.counting import steps

SMALL, BIG = 10, 40  # pages
# four times the pages, four times the work, and a tenth more: a page's automaton steps a
# character grow a little with its values (deeper states, more fail links), never with them
SLACK = 1.1


def grows_with_pages(small: int, big: int) -> bool:
    return big <= SLACK * BIG / SMALL * small


# ------------------------------------------------------------------------- a document, made up


def word(text: str, x0: float, y0: float, line: int) -> Word:
    """A word in 300 dpi pixels, 20 px a letter wide, 40 px high."""
    box = Box(x0, y0, x0 + 20 * len(text), y0 + 40)
    return Word(text, 95.0, box, (box.x0, box.y1 - 8), box.width, 40.0, 0.0, line)


def _letters(rnd: random.Random, k: int) -> str:
    return "".join(rnd.choices(string.ascii_lowercase, k=k))


def document(
    pages: int, per_page: int
) -> tuple[list[PageScan], dict[str, set[str]], frozenset[str]]:
    """``pages`` pages, each with ``per_page`` people and ``per_page`` account numbers found
    on it (one a line, between lines of plain words), and every value found, by class."""
    rnd = random.Random(pages)
    scans: list[PageScan] = []
    by_kind: dict[str, set[str]] = {"name": set(), "account-number": set()}
    for p in range(pages):
        words: list[Word] = []
        hits: list[Hit] = []
        for k in range(per_page):
            line = 3 * k
            given, surname = _letters(rnd, 7).title(), _letters(rnd, 8).title()
            account = "".join(rnd.choices(string.digits, k=10))
            for n, text in enumerate(["the", "payment", "of", "today"]):
                words.append(word(text, 300 + 200 * n, 300 + 150 * line, line))
            words += [word(given, 300, 450 + 150 * line, line + 1)]
            words += [word(surname, 500, 450 + 150 * line, line + 1)]
            words += [word(f"Ref:{account}", 300, 600 + 150 * line, line + 2)]
            at = len(words)
            hits.append(Hit(Finding("name", 0, 0, f"{given} {surname}", "test"), (at - 3, at - 2)))
            hits.append(Hit(Finding("account-number", 0, 0, account, "test"), (at - 1,)))
            by_kind["name"].add(f"{given} {surname}")
            by_kind["account-number"].add(account)
        info = PageInfo(p, 612.0, 792.0, 0, None, True, 100)
        scans.append(PageScan(info, 0, 300.0, (2550, 3300), words, list(words), hits, list(hits)))
    return scans, by_kind, name_tokens(by_kind["name"])


def _corners(a: Box, b: Box) -> tuple[float, float, float, float]:
    """The box from ``a``'s top left to ``b``'s bottom right."""
    return (a.x0, a.y0, b.x1, b.y1)


def pt(b: Box) -> tuple[float, float, float, float]:
    k = 72 / 300
    return (b.x0 * k, b.y0 * k, b.x1 * k, b.y1 * k)


# ---------------------------------------------------------------------------------- propagation


def _propagation_steps(pages: int) -> int:
    """Every page's words covered by every value and name found anywhere, as the build burns
    them (its values one set for the document, like ``build_output``'s)."""
    scans, by_kind, tokens = document(pages, 3)
    values = set().union(*by_kind.values())
    covered: list[set[int]] = []

    def run() -> None:
        for scan in scans:
            covered.append(covered_words(scan.ocr, scan.hits_ocr, values, tokens))
            covered.append(covered_words(scan.extracted, scan.hits_text, values, tokens))

    n = steps(run, plan, detection)
    # each page's people and accounts, and nothing else
    want = [{i for h in s.hits_ocr for i in h.words} for s in scans for _ in range(2)]
    assert covered == want
    return n


def test_propagation_grows_with_the_pages_not_pages_times_values() -> None:
    # each page's call normalised every value of the document and built an automaton of them
    small, big = _propagation_steps(SMALL), _propagation_steps(BIG)
    assert grows_with_pages(small, big), (small, big)


def test_a_set_of_values_that_grows_is_searched_for_whole() -> None:
    # the search kept for a set is made again once the set changes (a value learnt from the
    # output joins the document's set in place): never a search for what it held before
    scans, by_kind, _ = document(2, 1)
    values = {h.finding.value for h in scans[0].hits_ocr}
    scan = scans[1]
    assert covered_words(scan.ocr, [], values) == set()  # page 2's person is not page 1's
    values |= by_kind["name"] | {next(iter(by_kind["account-number"]))}
    values.update(h.finding.value for h in scan.hits_ocr)
    assert covered_words(scan.ocr, [], values) == {i for h in scan.hits_ocr for i in h.words}


# ------------------------------------------------------------------ the desk: findings and sheet


def _desk_steps(pages: int) -> int:
    """The findings of every page and the review sheet, then a reviewer's corrections (one
    finding removed on each page) applied, as the engine and the next build do."""
    scans, by_kind, tokens = document(pages, 3)
    # the first person of each page: given name and surname, as the desk draws the finding
    fixes = Corrections(
        removed=tuple(
            Area(s.info.index + 1, pt(Box(*_corners(s.ocr[4].box, s.ocr[5].box)))) for s in scans
        )
    )
    out: list[Any] = []

    def run() -> None:
        found = [f for s in scans for f in page_findings(s, by_kind, tokens)]
        out.append(review_sheet(scans, found, fixes))
        out.append(apply_corrections(fixes, scans, by_kind))

    n = steps(run, plan, detection, findings, apply, corrections)
    sheet, applied = out
    assert len(sheet.findings) == 6 * pages  # each person and account once
    assert len(applied.allowed) == pages  # each page's removed person lets that one stand
    return n


def test_the_desks_findings_and_corrections_grow_with_the_pages() -> None:
    # each page's findings built an automaton of every value of each class; each page with a
    # removed box went through every removed box of the document
    small, big = _desk_steps(SMALL), _desk_steps(BIG)
    assert grows_with_pages(small, big), (small, big)


def _crowded_page_steps(rows: int) -> int:
    """One page of ``rows`` people, every other one removed by a reviewer: which finding each
    box removes, what stays burned over its words, and which words stand on the page."""
    scans, by_kind, tokens = document(1, rows)
    scan = scans[0]
    found = page_findings(scan, by_kind, tokens)
    names = [f for f in found if f.kind == "name"]
    fixes = Corrections(removed=tuple(Area(1, f.box) for f in names[::2]))
    out: list[set[int]] = []

    def run() -> None:
        applied = apply_corrections(fixes, scans, by_kind)
        out.append(applied.exempt(0, scan.ocr, 300 / 72))

    # (the page's findings themselves are counted above: here what the corrections add)
    n = steps(run, apply, corrections)
    assert len(out[0]) == 2 * len(fixes.removed)  # the removed people's words, and only those
    return n


def test_a_page_of_many_findings_judges_each_correction_near_it() -> None:
    # each removed box was matched against every finding of its page, each removed finding
    # compared with every other, and each word with every finding's box
    small, big = _crowded_page_steps(50), _crowded_page_steps(200)
    assert grows_with_pages(small, big), (small, big)


# ---------------------------------------------------------------------------- the leak check


def _pdf(path: Path, pages: int) -> Path:
    """``pages`` pages of plain words (Helvetica, WinAnsi), none of them a value."""
    rnd = random.Random(pages + 1)
    pdf = pikepdf.Pdf.new()
    font = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font,
            Subtype=pikepdf.Name.Type1,
            BaseFont=pikepdf.Name.Helvetica,
            Encoding=pikepdf.Name.WinAnsiEncoding,
        )
    )
    for _ in range(pages):
        lines = [" ".join(_letters(rnd, 5) for _ in range(8)) for _ in range(20)]
        shown = b" ".join(b"(" + line.encode() + b") '" for line in lines)
        page = pdf.add_blank_page(page_size=(612, 792))
        page.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font))
        page.Contents = pdf.make_stream(b"BT /F1 10 Tf 50 750 Td 14 TL " + shown + b" ET")
    pdf.save(path)
    return path


def _values(pages: int, per_page: int) -> set[str]:
    rnd = random.Random(f"values {pages}")
    return {
        f"{_letters(rnd, 6).title()} {_letters(rnd, 7).title()}" for _ in range(pages * per_page)
    }


def _leak_steps(tmp_path: Path, pages: int) -> int:
    # (15 values a page: more than are searched for one by one, ``plan.FEW_VALUES``)
    path = _pdf(tmp_path / f"{pages}.pdf", pages)
    values = _values(pages, 15)
    out: list[list[leaks.Leak]] = []
    n = steps(lambda: out.append(find_leaks(path, values)), leaks, plan)
    assert out == [[]]
    return n


def test_the_leak_check_grows_with_the_pages_not_pages_times_values(tmp_path: Path) -> None:
    # every page's text, every object's strings and every stream in five decodings were
    # searched for each value in turn
    small, big = _leak_steps(tmp_path, SMALL), _leak_steps(tmp_path, BIG)
    assert grows_with_pages(small, big), (small, big)


def test_the_leak_check_finds_the_same_whichever_way_it_searches(tmp_path, monkeypatch) -> None:
    path = _pdf(tmp_path / "doc.pdf", 3)
    with pikepdf.open(path) as pdf:
        shown = bytes(pdf.pages[2].Contents.read_bytes())
    here = shown.split(b"(")[5].split(b")")[0].decode().split()
    values = _values(3, 60) | {f"{here[2].title()} {here[3]}", here[6][:4]}
    monkeypatch.setattr(plan, "FEW_VALUES", 10**9)  # each value in turn
    one_by_one = find_leaks(path, values)
    monkeypatch.setattr(plan, "FEW_VALUES", 0)  # through the trie's pattern
    assert find_leaks(path, values) == one_by_one
    assert {(x.parser, x.where) for x in one_by_one} >= {("pdfium-text", "page 3")}


def _label_steps(carriers: int) -> int:
    """Each of a document's carriers (a title, an outline item, a link) judged against every
    value found, as ``build.safe_carriers`` and the label check judge them."""
    rnd = random.Random(carriers)
    values = _values(carriers, 15)  # (more than are searched for one by one)
    texts = [" ".join(_letters(rnd, 6) for _ in range(6)) for _ in range(carriers)]
    said: list[bool] = []
    n = steps(lambda: said.extend(carries_value(t, values) for t in texts), leaks, plan)
    assert not any(said)
    return n


def test_carriers_are_judged_without_normalising_every_value_again() -> None:
    small, big = _label_steps(SMALL), _label_steps(BIG)
    assert grows_with_pages(small, big), (small, big)


# ------------------------------------------------------------- one search, the same as each value


_KEYS = st.text(alphabet="abé1-", min_size=1, max_size=7)


@settings(max_examples=400, deadline=None)
@given(st.lists(_KEYS, max_size=200), st.text(alphabet="abé1 -", max_size=120))
def test_one_pattern_finds_exactly_the_values_each_search_finds(
    values: list[str], text: str
) -> None:
    search = plan.ValueSearch(values)
    squashed = plan.normalise(text)
    each = {v for v in search.values if v in squashed}
    assert plan.FEW_VALUES > 0
    few, plan.FEW_VALUES = plan.FEW_VALUES, 0
    try:
        assert search.found_in(squashed) == each
    finally:
        plan.FEW_VALUES = few
    assert search.found_in(squashed) == each


@settings(max_examples=200, deadline=None)
@given(st.lists(_KEYS, max_size=40), st.lists(st.text(alphabet="abé1 -", max_size=40)))
def test_a_search_kept_for_a_set_ends_values_where_a_fresh_one_does(
    values: list[str], texts: list[str]
) -> None:
    kept = plan.value_search(set(values))
    for text in (plan.normalise(t) for t in texts):
        assert kept.least_ends(text) == plan._least_ends(text, kept.values)


def test_values_nested_too_deep_for_one_pattern_are_searched_one_by_one(monkeypatch) -> None:
    # each a prefix of the next: one group inside another, past what a pattern may nest
    values = ["ab" * k for k in range(2, 300)] + ["cab", "bab"]
    text = "xx" + "ab" * 40 + "c" + "ab" * 2
    search = plan.ValueSearch(values)
    monkeypatch.setattr(plan, "FEW_VALUES", 0)
    assert search.found_in(text) == {v for v in search.values if v in text}
    assert search._pattern is None  # (made one by one, and not tried again)
    assert len(search.found_in(text)) == 41


def test_a_search_is_made_once_for_a_set_and_let_go_with_it() -> None:
    values = {"Grace Okafor", "12345678"}
    first = plan.value_search(values)
    assert plan.value_search(values) is first
    values.add("Whitfield")
    assert plan.value_search(values) is not first  # changed: searched for whole again
    held = len(plan._MADE)
    del values
    gc.collect()
    assert len(plan._MADE) < held  # nothing of a document's values outlives them
