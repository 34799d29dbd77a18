"""Detection's cost grows with the text, never with the text times a name list, the findings
or pyap's appetite for digits: counted work (characters scanned, tokens read, comparisons), no
clocks (seconds belong in bench/detect_cost_bench.py)."""

from __future__ import annotations

import random
import re
import string
import sys
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

import pressroom.redact.detect.addresses as addresses
import pressroom.redact.detect.detector as detector
import pressroom.redact.detection as detection
import pressroom.redact.plan as plan
from pressroom.models import Box, Word
from pressroom.redact.detect import Finding
from pressroom.redact.detect.detector import extend_names
from pressroom.redact.detect.ner import QUIET_MARGIN, NerRecognizer, quieten
from tests.counting import steps


class CountingSet(frozenset[str]):
    """A name list that counts the copies made of it (a union copies the whole list)."""

    copies = 0

    def __or__(self, other: object) -> frozenset[str]:  # type: ignore[override]
        CountingSet.copies += 1
        return frozenset(self) | frozenset(other)  # type: ignore[arg-type]

    __ror__ = __or__  # type: ignore[assignment]


def test_extending_names_never_copies_the_census_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    first = CountingSet({"juliusz", "maria"})
    last = CountingSet({"kwiatkowski", "nowak"})
    monkeypatch.setattr(detector, "census", lambda: (first, last))
    text = "Juliusz A Kwiatkowski met Maria Nowak. " * 500
    found = [
        Finding("name", i, i + len("Kwiatkowski"), "Kwiatkowski", "test")
        for i in range(len("Juliusz A "), len(text), len("Juliusz A Kwiatkowski met Maria Nowak. "))
    ]
    CountingSet.copies = 0
    out = extend_names(text, found)
    assert CountingSet.copies == 0
    assert len(out) == 500
    # and it still grows over the initial and the known given name before it
    assert out[0].value == "Juliusz A Kwiatkowski"


# --------------------------------------------------------------- adversarial pages, counted work

CAP = 20_000  # characters: the growth, not the size, is what these tests look at


def _sized(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n]


def _census_caps(n: int) -> str:
    first, last = detector.census()
    given, family = sorted(first)[:500], sorted(last)[:500]
    pairs = (f"{given[i % 500].title()} {family[(7 * i) % 500].title()}" for i in range(n))
    return " ".join(pairs)[:n]


ADVERSARIAL = {
    "tiny words": lambda n: _sized(
        "Alpha Beta said that Gamma Delta wrote this note for the office ", n
    ),
    "one-letter words": lambda n: _sized("a b c d e f g h ", n),
    "capitalised census names": _census_caps,
    "digits and spaces": lambda n: " ".join(str(i % 10) for i in range(n))[:n],
    "digit pairs": lambda n: _sized("12 34 56 78 90 ", n),
    "run of dots": lambda n: "." * n,
    "run of tabs": lambda n: "\t" * n,
    "spaces and tabs": lambda n: _sized(" \t", n),
    "line without spaces": lambda n: _sized("A1b2C3d4E5", n),
    "street lines": lambda n: _sized("12 Elm Street, Leeds LS1 4DY\n", n),
    "US addresses": lambda n: _sized("1600 Main Street, Springfield, IL 62701 ", n),
}
NO_ADDRESS_PART = (
    "digits and spaces",
    "digit pairs",
    "run of dots",
    "run of tabs",
    "spaces and tabs",
)


class CountingPattern:
    """A compiled pattern that counts the characters it is asked to scan."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern = pattern
        self.scanned = 0

    def finditer(self, text: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[Any]:
        self.scanned += min(endpos, len(text)) - pos
        return self.pattern.finditer(text, pos, endpos)


def _pyap_scanned(monkeypatch: pytest.MonkeyPatch, text: str) -> dict[str, int]:
    counters: dict[str, CountingPattern] = {}

    def patterns(country: str) -> addresses.PyapPatterns:
        real = real_patterns(country)
        counters[country] = counters.get(country) or CountingPattern(real.full)
        return addresses.PyapPatterns(counters[country], real.anchor)  # type: ignore[arg-type]

    real_patterns = addresses.pyap_patterns
    with monkeypatch.context() as m:
        m.setattr(addresses, "pyap_patterns", patterns)
        addresses.AddressRecognizer().find(text)
    return {c: counters[c].scanned for c in addresses.COUNTRIES}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_pyap_reads_each_character_at_most_once_a_country(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    make = ADVERSARIAL[name]
    small = _pyap_scanned(monkeypatch, make(CAP))
    big = _pyap_scanned(monkeypatch, make(2 * CAP))
    for country in addresses.COUNTRIES:
        assert small[country] <= CAP and big[country] <= 2 * CAP
        assert big[country] <= 2 * small[country] + 2 * addresses.PYAP_BEFORE
    if name in NO_ADDRESS_PART:
        # "1 2 3 …" cost 0.2 ms a character in pyap's US pattern: nothing there can be a US,
        # Canadian or British address, so pyap reads none of it
        assert big == {c: 0 for c in addresses.COUNTRIES}


def test_pyap_in_windows_finds_what_pyap_finds_in_the_whole_text() -> None:
    filler = "The committee met on a wet afternoon and talked about the budget at length. "
    places = [
        "Send it to 12 Elm Street, Leeds LS1 4DY before Friday.",
        "Our office: 1600 Main Street, Springfield, IL 62701.",
        "Write to 200 Bay Street, Toronto, ON M5J 2J2 please.",
        "PO Box 4512, Austin, TX 78701",
        # a state or ZIP code is looked for only just after a town's letters
        "Ship to 55 Pine Road, Dover, DE 19901 - attention: stores.",
        "Deliver to 9 Oak Avenue Boise - ID 83702, then 7 Elm Lane, Reno NV89501.",
        "Paid from DE89 3704 0044 0532 0130 00, batch 12345 67890 24680 at 350 Fifth Avenue,"
        " New York, NY 10118-0110, U.S.A.",
    ]
    text = ""
    for k in range(40):
        text += filler * (k % 7) + places[k % len(places)] + "\n"
    clean, _where = addresses.normalised_with_map(text)
    for country in addresses.COUNTRIES:
        whole = [
            (m.start(), m.end()) for m in addresses.pyap_patterns(country).full.finditer(clean)
        ]
        windowed = [
            (m.start(), m.end())
            for a, b in addresses.pyap_windows(clean, addresses.pyap_patterns(country).anchor)
            for m in addresses.pyap_patterns(country).full.finditer(clean, a, b)
        ]
        assert whole and windowed == whole
        scanned = sum(
            b - a for a, b in addresses.pyap_windows(clean, addresses.pyap_patterns(country).anchor)
        )
        if country == "GB":  # the filler far from any postcode is never read
            assert scanned < len(clean) / 2


@pytest.mark.parametrize(
    "page",
    [
        " ".join(str(10_000 + 7919 * i % 90_000) for i in range(CAP // 6)),  # ZIP-like numbers
        "DE89 3704 0044 0532 0130 00 " * (CAP // 28),  # IBANs: "DE" reads as Delaware
    ],
    ids=["five-digit runs", "IBANs"],
)
def test_pyap_reads_no_us_window_where_no_town_precedes_a_state_or_zip(
    monkeypatch: pytest.MonkeyPatch, page: str
) -> None:
    # each of these was one window of the whole page for pyap's US pattern (~0.1 ms a
    # character: 10 s a page); no town (letters) stands before any of its states or ZIP codes
    assert _pyap_scanned(monkeypatch, page)["US"] == 0
    assert _pyap_scanned(monkeypatch, page + "\n1 Elm Street, Dover, DE 19901")["US"] < 700


class FakeNlp:
    """A model that finds nothing and counts the tokens it is given (spaCy's cost is per token;
    a run of spaces is one token)."""

    max_length = 1_000_000

    def __init__(self) -> None:
        self.tokens = 0

    def __call__(self, text: str) -> Any:
        self.tokens += len(text.split())
        return SimpleNamespace(ents=[])


def _model_tokens(text: str) -> int:
    nlp = FakeNlp()
    NerRecognizer(nlp).find(text)
    return nlp.tokens


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_the_model_reads_at_most_linearly_more_tokens(name: str) -> None:
    make = ADVERSARIAL[name]
    small, big = _model_tokens(make(CAP)), _model_tokens(make(2 * CAP))
    assert big <= 2 * small + 100


@pytest.mark.parametrize("name", ["digits and spaces", "digit pairs", "one-letter words"])
def test_the_model_never_reads_a_page_without_capitals(name: str) -> None:
    # 50,000 tokens of "1 2 3" took the model ~5 s; without a capital letter nothing it finds
    # can be a name, nor overrule one, so it reads only the page's two ends
    make = ADVERSARIAL[name]
    assert _model_tokens(make(2 * CAP)) == _model_tokens(make(CAP)) <= 2 * QUIET_MARGIN


def test_quieten_keeps_everything_near_a_capital_and_every_offset() -> None:
    text = "x " * 200 + "Okafor" + " y" * 200
    out = quieten(text)
    assert len(out) == len(text)
    at = text.index("Okafor")  # its capital: what lies within QUIET_MARGIN of it stays
    kept = [i for i, c in enumerate(out) if c != " "]
    assert (
        out[at - QUIET_MARGIN : at + QUIET_MARGIN + 1]
        == text[at - QUIET_MARGIN : at + QUIET_MARGIN + 1]
    )
    assert all(
        i < QUIET_MARGIN or abs(i - at) <= QUIET_MARGIN or i >= len(text) - QUIET_MARGIN
        for i in kept
    )
    assert out[at + QUIET_MARGIN + 1 : -QUIET_MARGIN].strip() == ""
    prose = "Dear Ms Okafor, the payment to Mr Adebayo arrived. " * 40
    assert quieten(prose) == prose  # ordinary text: a capital every few words, nothing blanked


class CountingInt(int):
    """An offset that counts the comparisons made with it."""

    compared = 0

    def __lt__(self, other: object) -> bool:
        CountingInt.compared += 1
        return int(self) < int(other)  # type: ignore[call-overload]

    def __le__(self, other: object) -> bool:
        CountingInt.compared += 1
        return int(self) <= int(other)  # type: ignore[call-overload]

    def __gt__(self, other: object) -> bool:
        CountingInt.compared += 1
        return int(self) > int(other)  # type: ignore[call-overload]

    def __ge__(self, other: object) -> bool:
        CountingInt.compared += 1
        return int(self) >= int(other)  # type: ignore[call-overload]


def _resolve_comparisons(n: int) -> int:
    """Comparisons resolve makes on ``n`` weak names beside the model's ``n`` places and people
    and ``n`` addresses (a page of capitalised census names gave 15,000 findings)."""
    found: list[Finding] = []
    others: list[tuple[int, int]] = []
    for i in range(n):
        at = CountingInt(30 * i)
        found.append(Finding("name", at, CountingInt(at + 10), "Mary Smith", "census"))
        found.append(Finding("name", CountingInt(at + 12), CountingInt(at + 20), "Jo Lee", "ner"))
        found.append(
            Finding("address", CountingInt(at + 21), CountingInt(at + 29), "1 A St", "street")
        )
        others.append((CountingInt(at + 5), CountingInt(at + 11)))
    CountingInt.compared = 0
    detector.resolve(found, others)
    return CountingInt.compared


def test_resolving_findings_never_compares_every_pair() -> None:
    small, big = _resolve_comparisons(500), _resolve_comparisons(1000)
    assert big <= 2.5 * small


def test_address_blocks_read_a_long_line_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Findings on one long line (no line breaks) each looked for the block above them by
    copying the line: characters read grew with findings x line length."""
    read = {"chars": 0}
    real = addresses._left_cell

    def counting(text: str, start: int, end: int) -> tuple[int, int]:
        read["chars"] += end - start
        return real(text, start, end)

    monkeypatch.setattr(addresses, "_left_cell", counting)

    def chars(n: int) -> int:
        read["chars"] = 0
        text = _sized("12 Elm Street, Leeds LS1 4DY ", n)  # each one a last line
        addresses.AddressRecognizer().find(text)
        return read["chars"]

    small, big = chars(CAP), chars(2 * CAP)
    assert big <= 2 * small + 100 and big <= 8 * CAP


def test_card_numbers_are_not_tested_against_every_iban(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each card-shaped number was compared with every IBAN-shaped run on the page."""
    from pressroom.redact.detect import accounts

    def comparisons(n: int) -> int:
        text = "DE89 3704 0044 0532 0130 00 and 4111 1111 1111 1111\n" * n
        CountingInt.compared = 0
        real = accounts._iban_candidates
        with monkeypatch.context() as m:
            m.setattr(
                accounts,
                "_iban_candidates",
                lambda t: [(CountingInt(a), CountingInt(b), v) for a, b, v in real(t)],
            )
            accounts.AccountNumberRecognizer().find(text)
        return CountingInt.compared

    small, big = comparisons(200), comparisons(400)
    assert big <= 2.5 * small


# ----------------------------------------------------------------- plan: words found and covered


def _steps_in_plan(fn: Callable[[], object]) -> int:
    """Lines of ``pressroom.redact.plan`` and ``pressroom.redact.detection`` (what it moved
    to) run while ``fn`` runs: their work, whatever the clock."""
    return steps(fn, plan, detection)


def _line_of_words(texts: list[str], per_line: int) -> list[Word]:
    """Words laid out as a reader gives them, ``per_line`` a line."""
    words: list[Word] = []
    x = 0.0
    for k, text in enumerate(texts):
        row = k // per_line
        if k % per_line == 0:
            x = 0.0
        box = Box(x, row * 12.0, x + 6.0 * len(text), row * 12.0 + 10.0)
        words.append(Word(text, 95.0, box, (x, row * 12.0 + 10.0), box.width, 10.0, 0.0, row))
        x = box.x1 + 6.0
    return words


def _capitalised(n: int) -> list[str]:
    rnd = random.Random(2)
    return ["".join(rnd.choices(string.ascii_lowercase, k=6)).title() for _ in range(n)]


def _covering_steps(n: int) -> int:
    """covered_words on ``n`` capitalised words, a value found in every fourth pair of them
    (a page of capitalised census names gave thousands of values)."""
    texts = _capitalised(n)
    words = _line_of_words(texts, 15)
    values = [f"{texts[i]} {texts[i + 1]}" for i in range(0, n - 1, 8)]
    covered: set[int] = set()
    steps = _steps_in_plan(lambda: covered.update(plan.covered_words(words, [], values)))
    assert len(covered) == 2 * len(values)  # every value is still covered, and only those
    return steps


def test_covering_values_grows_with_the_words_not_words_times_values() -> None:
    # each word's run of the next 16 words was tested against every value found
    small, big = _covering_steps(2_000), _covering_steps(4_000)
    assert big <= 2.2 * small


class EveryWordDetector:
    """A detector that finds every word of a text: a finding per word for ``detection.detect``."""

    def find(self, text: str, model: bool = True) -> list[Finding]:
        return [
            Finding("name", m.start(), m.end(), m.group(), "test")
            for m in re.finditer(r"\S+", text)
        ]


def _detect_steps(n: int) -> int:
    words = _line_of_words(_capitalised(n), n)  # one long row: a line without line breaks
    hits: list[detection.Hit] = []
    steps = _steps_in_plan(lambda: hits.extend(detection.detect(words, EveryWordDetector())))  # type: ignore[arg-type]
    assert [h.words for h in hits] == [(i,) for i in range(n)]
    return steps


def test_words_of_findings_are_found_without_reading_every_word_each_time() -> None:
    # each finding read every word of the page for the words it touches, and each word of a
    # long row summed the row read so far
    small, big = _detect_steps(2_000), _detect_steps(4_000)
    assert big <= 2.2 * small
