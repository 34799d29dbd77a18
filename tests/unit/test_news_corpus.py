"""The generated news corpus (``corpora.news``): spans in bounds and on whole words, the same
output for the same seed, halves that share no person, every kind present, and no person span
that is an organisation's or a product's string."""

from __future__ import annotations

import re
import unicodedata

import pytest

from corpora.news import KINDS, LICENCES, Doc, Span, documents
from corpora.news import names as nm
from corpora.news import vocab as vc
from corpora.news.cast import PARTICLES, pools, variants
from corpora.news.kinds import NEWS_SENTENCES

N = 3 * len(KINDS)
LABELS = {"PERSON", "ORG", "LOC", "PRODUCT", "MISC"}


@pytest.fixture(scope="module")
def halves() -> dict[str, list[Doc]]:
    return {"train": documents("train", N, seed=7), "held-out": documents("held-out", N, seed=7)}


def _all(halves: dict[str, list[Doc]]) -> list[Doc]:
    return [d for docs in halves.values() for d in docs]


def _texts(docs: list[Doc], label: str) -> set[str]:
    return {d.text[s.start : s.end] for d in docs for s in d.spans if s.label == label}


def test_spans_in_bounds_whole_and_not_overlapping(halves: dict[str, list[Doc]]) -> None:
    for d in _all(halves):
        assert d.text and "\r" not in d.text
        prev = 0
        for s in sorted(d.spans, key=lambda s: s.start):
            assert isinstance(s, Span) and s.label in LABELS
            assert 0 <= s.start < s.end <= len(d.text), (d.id, s)
            value = d.text[s.start : s.end]
            assert value == value.strip() and "\n" not in value and "\t" not in value, (d.id, s)
            # a span starts and ends on a word's edge, never inside one
            before = d.text[s.start - 1] if s.start else " "
            after = d.text[s.end] if s.end < len(d.text) else " "
            assert not before.isalnum(), (d.id, value, before)
            assert not (after.isalnum() or unicodedata.combining(after)), (d.id, value, after)
            assert s.start >= prev, (d.id, s)
            prev = s.end


def test_person_spans_have_no_title_and_start_with_a_letter(halves: dict[str, list[Doc]]) -> None:
    for d in _all(halves):
        for s in d.spans:
            if s.label != "PERSON":
                continue
            value = d.text[s.start : s.end]
            assert value[0].isalpha(), (d.id, value)
            assert value.split()[0].rstrip(".") not in ("Mr", "Ms", "Mrs", "Dr", "MR", "MS")


def test_deterministic_for_a_seed() -> None:
    a = documents("train", 20, seed=3)
    b = documents("train", 20, seed=3)
    assert a == b
    c = documents("train", 20, seed=4)
    assert [d.text for d in a] != [d.text for d in c]


def test_a_surname_alone_follows_the_full_name(halves: dict[str, list[Doc]]) -> None:
    """In prose, a person's surname alone comes after the full name, as a writer puts it."""
    for d in _all(halves):
        if d.kind not in ("news", "profile", "letter", "minutes", "appointments"):
            continue
        people = [d.text[s.start : s.end] for s in sorted(d.spans, key=lambda s: s.start)
                  if s.label == "PERSON"]  # fmt: skip
        for i, name in enumerate(people):
            if " " not in name and any(name in p.split() for p in people if " " in p):
                assert any(name in p.split() for p in people[:i] if " " in p), (d.id, name)


def test_every_kind_in_both_halves(halves: dict[str, list[Doc]]) -> None:
    for docs in halves.values():
        assert {d.kind for d in docs} == set(KINDS)
        assert len(KINDS) >= 8
        # every kind names something
        for d in docs:
            assert d.spans, (d.id, d.kind)


def test_halves_share_no_person_organisation_or_phrasing(halves: dict[str, list[Doc]]) -> None:
    train = halves["train"]
    held = halves["held-out"]
    people_train = {w.casefold() for t in _texts(train, "PERSON") for w in t.split()}
    people_held = {w.casefold() for t in _texts(held, "PERSON") for w in t.split()}
    assert people_train and people_held
    shared = {
        w for w in people_train & people_held if "." not in w and any(ch.isalpha() for ch in w)
    }
    # initials ("A.") and particles ("van") are no one
    shared = {w for w in shared if len(w.rstrip(".")) > 1 and w not in PARTICLES}
    assert not shared
    assert not _texts(train, "ORG") & _texts(held, "ORG")
    assert not _texts(train, "PRODUCT") & _texts(held, "PRODUCT")
    # the pools themselves are disjoint, and the phrasings differ
    pt, ph = pools("train"), pools("held-out")
    assert not set(pt.org_prefix) & set(ph.org_prefix)
    assert not set(pt.places) & set(ph.places)
    n = len(NEWS_SENTENCES)
    assert set(variants("news.sentences", n, "train")).isdisjoint(
        variants("news.sentences", n, "held-out")
    )
    assert {d.text for d in train}.isdisjoint({d.text for d in held})


def test_no_person_span_is_an_organisation_or_product(halves: dict[str, list[Doc]]) -> None:
    docs = _all(halves)
    people = {t.casefold() for t in _texts(docs, "PERSON")}
    things = {t.casefold() for t in _texts(docs, "ORG") | _texts(docs, "PRODUCT")}
    assert not people & things
    # a firm named after people is labelled whole, as an organisation
    firms = [t for t in _texts(docs, "ORG") if t.endswith(("Brothers Ltd", "& Sons", "& Co."))]
    assert firms


def test_the_kinds_that_fail_are_there(halves: dict[str, list[Doc]]) -> None:
    docs = _all(halves)
    text = "\n".join(d.text for d in docs)
    # scorers in brackets, tables of abbreviations, tabs, capitals, non-ASCII letters
    assert any(h in text for h in ("POS\tTEAM\tP\tW", "Pos\tClub\tPld", "RK\tTEAM"))
    caps = [t for t in _texts(docs, "PERSON") if t.isupper() and len(t) > 3]
    assert caps
    assert any(ch in "".join(_texts(docs, "PERSON")) for ch in "øåłśőğşățřūėɔɛọ")
    # surnames alone after first mention
    singles = {t for t in _texts(docs, "PERSON") if " " not in t}
    assert singles
    # hard negatives stay unlabelled: product copy's capitalised nouns and UI labels
    brochure = [d for d in docs if d.kind == "brochure"]
    for d in brochure:
        assert not any(s.label == "PERSON" for s in d.spans)
    labelled = {t for t in _texts(docs, "PERSON")} | _texts(docs, "ORG")
    assert "PLAY" not in labelled and "Song" not in labelled


def test_some_documents_are_written_decomposed() -> None:
    docs = documents("train", 120, seed=1)
    nfd = [d for d in docs if d.text != unicodedata.normalize("NFC", d.text)]
    assert nfd and len(nfd) < len(docs) // 3
    for d in nfd:
        assert d.text == unicodedata.normalize("NFD", d.text)


def test_no_name_or_organisation_word_left_unlabelled() -> None:
    """Everything unlabelled is not an entity: no word of a person's name, an organisation's
    or club's made-up part, a brand or a country stands outside a span."""
    words: set[str] = set()
    for o in nm.ORIGINS:
        for w in (*o.given_f, *o.given_m, *o.family, *o.family_f, *o.family_m):
            words.update(w.split())
    words |= {*vc.ORG_PREFIX, *vc.TOWN, *vc.BRAND, *vc.FOUNDERS, *vc.AGENCY, *vc.COUNTRIES}
    words = {w for w in words if len(w) > 2 and w.casefold() not in PARTICLES}
    n = 8 * len(KINDS)
    more = documents("train", n, seed=11) + documents("held-out", n, seed=11)
    for d in more:
        covered = {i for s in d.spans for i in range(s.start, s.end)}
        for m in re.finditer(r"[^\W\d_][\w'\u2019-]*", d.text):
            if m.group() in words:
                assert m.start() in covered, (d.id, d.kind, m.group())


def test_licences_recorded() -> None:
    assert any("CC0" in v for v in LICENCES.values())
    assert any("GeoNames" in v for v in LICENCES.values())


def test_bad_half_refused() -> None:
    with pytest.raises(ValueError):
        documents("dev", 1)  # type: ignore[arg-type]
