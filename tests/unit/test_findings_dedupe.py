"""Findings are de-duplicated, and extracted words matched to OCR's, through an index (grid
cells), with the same result as comparing every pair: properties against the pairwise rules,
and a count of the comparisons made on a page of one name repeated (the security review's
1,240-byte page)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from pressroom.models import Box, Word
from pressroom.redact import findings, plan
from pressroom.redact.findings import DocumentFinding, _dedupe
from pressroom.redact.plan import normalise, overlaps, visible_words


def _pairwise(found: list[DocumentFinding]) -> list[DocumentFinding]:
    """The rule as it was written first: every finding against every finding kept before it."""
    kept: list[DocumentFinding] = []
    for f in sorted(found, key=lambda f: (f.page, f.box[1], f.box[0])):
        same = [
            n
            for n, g in enumerate(kept)
            if g.kind == f.kind
            and g.page == f.page
            and overlaps(Box(*g.box), Box(*f.box))
            and normalise(g.value) == normalise(f.value)
        ]
        if not same:
            kept.append(f)
        elif not f.doubt:
            for n in same:
                kept[n] = replace(kept[n], doubt=False)
    return kept


@st.composite
def _finding(draw: st.DrawFn) -> DocumentFinding:
    x0 = draw(st.floats(0, 600, allow_nan=False))
    y0 = draw(st.floats(0, 800, allow_nan=False))
    # mostly word-sized boxes, now and then one wider than the index's cells allow
    w = draw(st.one_of(st.floats(1, 120), st.floats(400, 900)))
    h = draw(st.one_of(st.floats(1, 30), st.floats(400, 900)))
    return DocumentFinding(
        draw(st.integers(1, 2)),
        draw(st.sampled_from(["name", "address"])),
        (x0, y0, x0 + w, y0 + h),
        draw(st.sampled_from(["Ann Lee", "ANN LEE", "Åsa Berg", "Asa Berg", "Ode"])),
        draw(st.booleans()),
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(_finding(), max_size=40))
def test_the_index_keeps_exactly_what_comparing_every_pair_keeps(
    found: list[DocumentFinding],
) -> None:
    assert _dedupe(found) == _pairwise(found)


def test_a_page_of_one_name_repeated_compares_each_finding_with_its_neighbours_only(
    monkeypatch,
) -> None:
    # 12,000 copies of one name in rows across a page: each is compared with the few kept
    # findings in the grid cells it touches, never with all of them
    found = [
        DocumentFinding(1, "name", (x * 30.0, y * 4.0, x * 30.0 + 28.0, y * 4.0 + 3.5), "Ann Lee")
        for y in range(600)
        for x in range(20)
    ]
    calls = 0
    real = findings.overlaps
    # pairwise comparison would make 12,000 * 11,999 / 2 = 72 million; the index a few dozen
    # a finding (stopped at the bound, so the quadratic rule fails here rather than hangs)
    bound = 50 * len(found)

    def counted(a: Box, b: Box) -> bool:
        nonlocal calls
        calls += 1
        assert calls <= bound, "compared with far more than its neighbours"
        return real(a, b)

    monkeypatch.setattr(findings, "overlaps", counted)
    kept = _dedupe(found)
    assert len(kept) == len(found)  # none overlaps another: all kept
    assert 0 < calls <= bound


def _word(text: str, x0: float, y0: float, w: float, h: float) -> Word:
    box = Box(x0, y0, x0 + w, y0 + h)
    return Word(text, 95.0, box, (x0, y0 + h), w, h, 0.0, 0)


@st.composite
def _words(draw: st.DrawFn) -> list[Word]:
    return [
        _word(
            draw(st.sampled_from(["Ann", "Lee", "Ann.", "Whitfield", "Whitfie1d", "a"])),
            draw(st.floats(-50, 2500, allow_nan=False)),
            draw(st.floats(-50, 3300, allow_nan=False)),
            draw(st.one_of(st.floats(1, 300), st.floats(600, 3000))),
            draw(st.one_of(st.floats(1, 60), st.floats(600, 3000))),
        )
        for _ in range(draw(st.integers(0, 25)))
    ]


@settings(max_examples=300, deadline=None)
@given(_words(), _words())
def test_visible_words_through_the_index_are_those_comparing_every_pair_finds(
    extracted: list[Word], seen: list[Word]
) -> None:
    from pressroom.redact.plan import _similar

    pairwise = [
        w
        for w in extracted
        if any(overlaps(w.box, o.box) and _similar(w.text, o.text) for o in seen)
    ]
    assert visible_words(extracted, seen) == pairwise


def test_visible_words_on_a_page_of_one_word_repeated_compares_neighbours_only(
    monkeypatch,
) -> None:
    # --ocr force reads 12,000 source words against 12,000 OCR words of the same page
    words = [_word("Ann", x * 120.0, y * 16.0, 100.0, 14.0) for y in range(600) for x in range(20)]
    calls = 0
    bound = 50 * len(words)
    real = plan.overlaps

    def counted(a: Box, b: Box) -> bool:
        nonlocal calls
        calls += 1
        assert calls <= bound, "compared with far more than its neighbours"
        return real(a, b)

    monkeypatch.setattr(plan, "overlaps", counted)
    assert len(visible_words(words, words)) == len(words)
