"""The regression guard for names written with letters beyond ASCII (issue 41, item 1).

Every name of ``corpora.world_names`` (an own list, never trained on: Nordic, Icelandic and
Faroese, Baltic, Polish, Czech and Slovak, Hungarian, German, Turkish, Romanian, Iberian,
French, Irish and Welsh, West African, South Slavic and Vietnamese names) is written in eight
shapes — a prose sentence, a row of a table (tab cells), a byline, a photo caption, a signature
block, the surname alone after the full name, ALL CAPS, and decomposed (Unicode NFD: each base
letter followed by its combining marks) — and read by what ``pressroom detect --jsonl`` runs
(``Detector.for_classes(["name"]).find_all``), in process; a handful of the same texts also go
through the real CLI. A (name, shape) pair counts as found when every letter of every mention of
the name (combining marks included: an accent left readable is part of the name) lies inside a
finding of class ``name``. At least 97 % of the pairs must be found; the message lists the misses.

The sentences around the names are a measuring instrument, not a specification: a rule written
to match them (their verbs, their headers, their layout) passes this test without finding names
anywhere else. Several templates of each shape rotate over the names; on 6 December 2026 rules
then being written from the first half of them found 1474 of 1496 pairs on that half and 883 on
the second half, unseen by them (that half has been added since). Fix what makes a kind of name
missed, then check on sentences of your own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from corpora.world_names import NAMES, REQUIRED_LETTERS, WorldName
from pressroom.redact.detect import Finding, detection_text, plain_letters
from pressroom.redact.detect.detector import Detector
from pressroom.redact.detect.name_cues import NEWS_RE, PAIR_RE, SIGN_OFF_RE

SHAPES = ("prose", "table", "byline", "caption", "signature", "surname", "caps", "nfd")
GOAL = 0.97
Span = tuple[int, int]


@dataclass(frozen=True)
class Case:
    name: WorldName
    shape: str
    text: str
    mentions: tuple[Span, ...]  # every mention of ``name`` in ``text``


def _fill(
    template: str, values: dict[str, str], form: Callable[[str], str]
) -> tuple[str, dict[str, list[Span]]]:
    """``template`` with ``{KEY}`` replaced by ``values[KEY]``, every piece passed through
    ``form``; with the spans each key was written at."""
    out: list[str] = []
    spans: dict[str, list[Span]] = {}
    at = 0
    rest = template
    while "{" in rest:
        head, _, tail = rest.partition("{")
        key, _, rest = tail.partition("}")
        piece = form(head)
        out.append(piece)
        at += len(piece)
        value = form(values[key])
        spans.setdefault(key, []).append((at, at + len(value)))
        out.append(value)
        at += len(value)
    out.append(form(rest))
    return "".join(out), spans


PROSE = (
    "{F}, who chairs the harbour board, said the new quay would open in May.",
    "The prize for local history went to {F} at a ceremony in the town hall on Friday.",
    "On Tuesday evening {F} opened the exhibition of boat models at the library.",
    "The council has appointed {F} as its new head of planning from 1 June.",
    "Residents thanked {F} for organising the clean-up of the beach after the storm.",
    "Last week {F} presented the findings of the survey to the parish committee.",
    "A petition started by {F} has gathered four thousand signatures.",
    "The bakery on Quay Street is run by {F} and her brother.",
    "For a decade {F} has coached the under-twelves on Saturday mornings.",
    "Police would like to speak to {F} about the incident near the station.",
)
TABLE = (
    "Pos\tName\tClub\tTime\n1\t{X}\tHarbour AC\t2:14:05\n2\t{F}\tNorth Bay RC\t2:15:41\n"
    "3\t{Y}\tValley Striders\t2:17:09\n",
    "Rank\tAthlete\tCountry\tPoints\n1\t{F}\tNorway\t1,204\n2\t{X}\tPoland\t1,187\n"
    "3\t{Y}\tGhana\t1,150\n",
    "Ward\tCandidate\tVotes\tShare\nNorth\t{X}\t2,310\t41.2%\nNorth\t{Y}\t1,982\t35.4%\n"
    "North\t{F}\t1,305\t23.4%\n",
    "Seat\tMember\tParty\nHarbour East\t{X}\tIndependent\nHarbour West\t{F}\tLabour\n"
    "Uplands\t{Y}\tGreen\n",
    "Lane\tSwimmer\tNation\tTime\n4\t{F}\tNOR\t52.31\n5\t{X}\tPOL\t52.77\n3\t{Y}\tGHA\t53.02\n",
    "Date\tVisitor\tPurpose\n3 May\t{X}\tDelivery\n3 May\t{Y}\tInspection\n4 May\t{F}\tInterview\n",
)
BYLINE = (
    "Ferry fares to rise in spring\nBy {F}\nHARBOUR TOWN, 4 May - The operator said fares "
    "would rise by four per cent from April.",
    "Library to stay open on Sundays\nBy {F}, Staff Reporter\nThe county has found the money "
    "to keep the reading room open for another year.",
    "Council tax to rise again\nWords: {F}\nThe increase is the third in as many years.",
    "Storm damage worse than feared\n{F} | Local Democracy Reporter\nRepairs to the sea wall "
    "will take months.",
)
CAPTION = (
    "{F} inspects the new ferry terminal on Friday. (Photo: Harbour Post)",
    "Pictured: {F} with the winning quilt at the county show.",
    "Above, {F} (left) and the mayor at the opening of the footbridge.",
    "{F}, 34, at her workshop in the old town.",
    "From left: {F} and the head teacher outside the new classrooms.",
    "Winner {F} receives the trophy from the club president.",
)
SIGNATURE = (
    "Thank you for your letter of 3 March. We will reply in full within ten days.\n\n"
    "Yours sincerely,\n\n{F}\nHead of Planning\nHarbour District Council",
    "The minutes are attached for your records.\n\nKind regards,\n{F}\nOffice Manager",
    "Please find the signed lease enclosed.\n\nBest wishes,\n{F}",
    "I look forward to hearing from you.\n\nWith best wishes,\n\n{F}\nChairperson",
    "Thanks again for your help with the move.\n\nAll the best,\n{F}",
    "Please call if anything is unclear.\n\n{F}\nDirector of Finance\nTel. 01632 960123",
)
SURNAME = (
    "{F} joined the board in 2019. Three years later {A} was named chair, and the plan {A} "
    "drew up for the port was adopted.",
    "{F} won the first stage by two minutes. Afterwards {A} said the wind had helped.",
    "The report by {F} was published on Monday. {A}'s findings surprised the committee.",
    "{F} has run the ferry for a decade. Asked about the new timetable, {A} laughed.",
    "{F} took over the shop in 2020. Since then {A} has doubled its opening hours.",
    "The appeal was lodged by {F} in March. A spokesperson for {A} declined to comment.",
)
CAPS = (
    "Donor\tAmount\n{XU}\t€250\n{FU}\t€100\n{YU}\t€75\n",
    "IN MEMORIAM\n{FU}\n1948 - 2025\nA teacher at the harbour school for thirty years.",
    "Minutes of the meeting of 12 March\n{FU}: The committee met twice in March.\n"
    "CHAIR: Thank you.",
    "SIGNED: {FU}\nDATE: 14 MARCH 2026",
    "ATTENDEES: {FU}, {XU}\nAPOLOGIES: {YU}",
    "WINNER OF THE SHORT STORY PRIZE\n{FU}",
    "{FU}\nCHIEF EXECUTIVE\nHARBOUR TRUST",
    "PAYEE NAME\t{FU}\nSORT CODE\t20-00-00",
)
BASE = {
    "prose": PROSE,
    "table": TABLE,
    "byline": BYLINE,
    "caption": CAPTION,
    "signature": SIGNATURE,
    "surname": SURNAME,
    "caps": CAPS,
}


def _same(text: str) -> str:
    return text


def _nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def cases(names: Sequence[WorldName] = NAMES) -> list[Case]:
    """Every name in every shape; templates and table neighbours rotate with the name's index,
    and the decomposed shape takes each of the other seven shapes in turn."""
    out: list[Case] = []
    for i, name in enumerate(names):
        x, y = names[(i + 7) % len(names)], names[(i + 31) % len(names)]
        values = {
            "F": name.full,
            "A": name.alone,
            "FU": name.full.upper(),
            "X": x.full,
            "Y": y.full,
            "XU": x.full.upper(),
            "YU": y.full.upper(),
        }
        for shape in SHAPES:
            base, form = (shape, _same) if shape != "nfd" else (SHAPES[i % 7], _nfd)
            templates = BASE[base]
            text, spans = _fill(templates[i % len(templates)], values, form)
            mentions = tuple(s for key in ("F", "A", "FU") for s in spans.get(key, ()))
            out.append(Case(name, shape, text, mentions))
    return out


def _is_letter(c: str) -> bool:
    return unicodedata.category(c)[0] in "LM"


def found(case: Case, findings: Sequence[tuple[str, int, int]]) -> bool:
    """Every letter (and combining mark) of every mention inside a ``name`` finding."""
    covered = [(s, e) for kind, s, e in findings if kind == "name"]
    return all(
        any(s <= i < e for s, e in covered)
        for a, b in case.mentions
        for i in range(a, b)
        if _is_letter(case.text[i])
    )


def _share(results: Sequence[tuple[Case, bool]], key: Callable[[Case], str]) -> dict[str, str]:
    total: Counter[str] = Counter()
    hit: Counter[str] = Counter()
    for case, ok in results:
        total[key(case)] += 1
        hit[key(case)] += ok
    return {k: f"{hit[k]}/{total[k]}" for k in sorted(total)}


def _report(results: Sequence[tuple[Case, bool]]) -> str:
    misses = [
        f"  {c.shape:9} {c.name.origin:17} {c.name.full!r} in {c.text!r}"
        for c, ok in results
        if not ok
    ]
    return (
        f"found {sum(ok for _c, ok in results)}/{len(results)}\n"
        f"per shape: {_share(results, lambda c: c.shape)}\n"
        f"per origin: {_share(results, lambda c: c.name.origin)}\n"
        f"misses ({len(misses)}):\n" + "\n".join(misses)
    )


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector.for_classes(["name"])


def test_the_list_covers_every_letter_asked_for() -> None:
    """The guard is only as wide as its list: each letter in lower case and in capitals (a
    name's own capitals, or its ALL-CAPS form), decomposed in the NFD shape."""
    written = " ".join(n.full for n in NAMES)
    capitals = " ".join(n.full.upper() for n in NAMES)
    assert [c for c in REQUIRED_LETTERS if c not in written] == []
    assert [c for c in REQUIRED_LETTERS if c != "ß" and c.upper() not in capitals] == []
    assert any(unicodedata.combining(c) for c in unicodedata.normalize("NFC", written))
    shapes = Counter(c.shape for c in cases())
    assert set(shapes) == set(SHAPES) and len(set(shapes.values())) == 1


def test_found_checks_every_letter_of_every_mention() -> None:
    """The scoring itself: a finding short of one letter, a combining mark left outside, or a
    later mention left readable is a miss."""
    name = WorldName("Olúwaṣeun", "Adébáyọ̀", "test")
    case = next(c for c in cases([name]) if c.shape == "surname")
    (a, b), *later = case.mentions
    everything = [("name", a, b), *(("name", s, e) for s, e in later)]
    assert found(case, everything)
    assert not found(case, [("name", a, b - 1), *everything[1:]])  # the grave accent left
    assert not found(case, everything[:-1])
    assert not found(case, [("address", s, e) for _k, s, e in everything])


def test_non_ascii_names_are_found_in_every_shape(detector: Detector) -> None:
    results = []
    for case in cases():
        findings = [(f.kind, f.start, f.end) for f in detector.find_all(case.text)]
        results.append((case, found(case, findings)))
    share = sum(ok for _c, ok in results) / len(results)
    print(_report(results))
    assert share >= GOAL, _report(results)


def test_the_cli_finds_what_the_detector_finds(detector: Detector) -> None:
    """A handful through the real ``pressroom detect --jsonl --redact name``: the same findings
    as in process (the offsets are the input's, for decomposed text too)."""
    picked = [c for i, c in enumerate(cases()) if i % 97 == 0]
    picked += [c for c in cases(NAMES[-30:]) if c.shape == "nfd"][:4]
    lines = "".join(json.dumps({"id": i, "text": c.text}) + "\n" for i, c in enumerate(picked))
    exe = str(Path(sys.executable).parent / "pressroom")
    result = subprocess.run(
        [exe, "detect", "--jsonl", "--redact", "name"],
        input=lines,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert [a["id"] for a in answers] == list(range(len(picked)))
    for case, answer in zip(picked, answers, strict=True):
        got = [(f["class"], f["start"], f["end"]) for f in answer["findings"]]
        want = [(f.kind, f.start, f.end) for f in detector.find_all(case.text)]
        assert got == want, case.text
        assert all(case.text[f["start"] : f["end"]] == f["value"] for f in answer["findings"])


def test_detection_text_composes_and_maps_back() -> None:
    """Decomposed letters read composed, Yoruba tone marks folded into their letter, and a
    finding on the text read maps back to the whole name in the text given, marks and all."""
    source = "Report by " + _nfd("Émile Lefèvre") + " and Adébáyọ̀ Ọ̀ṣúntókun."
    view = detection_text(source)
    assert view.text == "Report by Émile Lefèvre and Adébáyọ Ọṣúntókun."
    for name in ("Émile Lefèvre", "Adébáyọ Ọṣúntókun"):
        at = view.text.index(name)
        (f,) = view.back([Finding("name", at, at + len(name), name, "test")])
        assert unicodedata.normalize("NFC", f.value).replace("\u0300", "") == name
        assert f.value == source[f.start : f.end]
    assert source[view.span(0, len(view.text))[1] - 1] == "."
    # nothing to compose: the same text, offset for offset, a lone surrogate still replaced
    for plain in ("Øyvind Sørensen", "Nguyễn Thị Ánh", "plain ASCII", "हिन्दी"):
        assert detection_text(plain).spans is None and detection_text(plain).text == plain
    assert detection_text("a\ud800b").text == "a\ufffdb"


def test_plain_letters_keep_every_offset() -> None:
    for written, plain in (
        ("Kjersti Ødegård", "Kjersti Odegard"),
        ("Nguyễn Thị Ánh, Đặng", "Nguyen Thi Anh, Dang"),
        ("Kwabena Ɔpɔku, Nyamekyɛ", "Kwabena Opoku, Nyamekye"),
        ("Łukasz Weiß, Işıl Țurcanu", "Lukasz Weis, Isil Turcanu"),  # noqa: RUF001
        ("Marcel·lí Domènech, col·lega", "Marcel-li Domenech, col-lega"),
        ("Москва, Ελλάδα", "Москва, Ελλάδα"),
    ):
        assert plain_letters(written) == plain and len(plain) == len(written)


def test_name_patterns_take_combining_marks() -> None:
    """A name written decomposed, or with a tone mark Unicode has no composed letter for, is
    one name to the patterns: its marks inside the match, never cut at them."""
    yoruba = "Olúwaṣeun Adébáyọ̀"
    m = NEWS_RE.search(f"The plan was approved, said {yoruba}.")
    assert m is not None and m["after"] == yoruba
    m = SIGN_OFF_RE.search("Yours sincerely,\n" + _nfd("Ödön Szőke") + "\nChair")
    assert m is not None and m["name"] == _nfd("Ödön Szőke")
    m = SIGN_OFF_RE.search("Kind regards,\nMarcel·lí Domènech\nOffice Manager")
    assert m is not None and m["name"] == "Marcel·lí Domènech"  # the Catalan l·l
    pairs = [m["pair"] for m in PAIR_RE.finditer("Present: " + _nfd("Émile Lefèvre") + " only")]
    assert _nfd("Émile Lefèvre") in pairs


def test_a_capital_ocr_has_no_letter_for_is_read_again(detector: Detector) -> None:
    """English Tesseract has no "Ø": a scanned form's emergency contact "Øystein Bråthen" came
    out "@ystein Brathen", found by nobody, and was delivered with the given name readable
    (issue 46's benchmark scans). Read as the plain capital, it is a name; the finding keeps
    the text as written, so the word read "@ystein" is what is burned."""
    for misread in ("@ystein", "0ystein"):
        for text in (
            f"Section 3: Emergency contact\nName {misread} Brathen\nRelationship Sister",
            f"Emergency contact: {misread} Brathen (sister).",
        ):
            view = detection_text(text)
            assert view.text == text.replace(misread, "Oystein") and len(view.text) == len(text)
            names = [f.value for f in detector.find_all(text) if f.kind == "name"]
            assert f"{misread} Brathen" in names
    # an address, a handle's domain, a figure and a number stay as written
    for kept in ("mail bob@example.com", "the 10th", "0.5 ml", "0x1f", "@pressroom.example"):
        assert detection_text(kept).text == kept
