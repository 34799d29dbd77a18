"""Names that the shapes of lists and tables give (``redact/detect/structure.py``), without the
model: scorecards, scorers in brackets, results lists, a column of names; and the table words,
places and document parts those shapes must not take for people."""

from __future__ import annotations

from pressroom.redact.detect import Finding
from pressroom.redact.detect.detector import Detector
from pressroom.redact.detect.structure import STRONG, WEAK, structured_names


def _found(text: str, found: list[Finding] | None = None) -> dict[str, tuple[str, float]]:
    return {f.value: (f.recognizer, f.score) for f in structured_names(text, found or [])}


def test_a_scorecard_names_batter_fielder_and_bowler() -> None:
    card = (
        "England 1st innings\nA. Cook c Carey b Starc 45\nJ Root lbw b Lyon 12\n"
        "B. Stokes run out (Head) 5\nS Broad not out 3\nM Wood c & b Cummins 0\n"
        "Extras 12\nTotal 240"
    )
    found = _found(card)
    assert set(found) == {
        "A. Cook", "Carey", "Starc", "J Root", "Lyon", "B. Stokes", "Head", "S Broad",
        "M Wood", "Cummins",
    }  # fmt: skip
    assert {score for _source, score in found.values()} == {STRONG}


def test_scorers_in_brackets_after_a_score() -> None:
    text = "Leeds 2 (Okonkwo 12, Brennan 77 pen) Derby 1 (Maddox 45+2)"
    assert set(_found(text)) == {"Okonkwo", "Brennan", "Maddox"}
    # numbered parts of a document are not scorers
    assert _found("See clause 2 (Section 12, Article 4) and item 3 (Page 7).") == {}


def test_a_results_line_is_believed_when_the_bracket_names_a_country_or_a_code() -> None:
    text = (
        "Women's 400 metres\n1. Marta Kowalczyk (Poland) 50.12\n2 Aisha Bello (NGR) 50.48\n"
        "3. Lindqvist (Sweden) 50.97\n4. Jo Park (Harriers AC) 51.20"
    )
    found = _found(text)
    assert found["Marta Kowalczyk"] == ("results", STRONG)
    assert found["Aisha Bello"] == ("results", STRONG)
    assert found["Lindqvist"] == ("results", WEAK)  # one word: half believed
    assert found["Jo Park"] == ("results", WEAK)  # a club in brackets tells less
    assert _found("1. Kenya (KEN) 12 gold\n3 Ways To Save (Money) 20") == {}


def test_a_column_of_names_is_evidence_for_its_neighbours() -> None:
    text = "Top scorers\n1 Tomasz Wrobel 14\n2 Lwazi Dube 12\n3 Ingrid Halvorsen 11\n"
    at = text.index
    one = [Finding("name", at("Ingrid"), at("Ingrid") + 16, "Ingrid Halvorsen", "census")]
    assert _found(text, one) == {}  # one name found is not a column
    two = [*one, Finding("name", at("Lwazi"), at("Lwazi") + 10, "Lwazi Dube", "ner", 0.9)]
    assert _found(text, two) == {"Tomasz Wrobel": ("column", WEAK)}
    # doubtful neighbours are no evidence; places in the column stay
    doubtful = [one[0], Finding("name", at("Lwazi"), at("Lwazi") + 10, "Lwazi Dube", "ner", 0.6)]
    assert _found(text, doubtful) == {}
    table = "1 Brazil 9\n2 Tomasz Wrobel 7\n3 Lwazi Dube 5\n"
    names = [
        Finding("name", table.index("Tomasz"), table.index("Tomasz") + 13, "x", "ner", 0.9),
        Finding("name", table.index("Lwazi"), table.index("Lwazi") + 10, "x", "ner", 0.9),
    ]
    assert _found(table, names) == {}


def test_a_column_headed_for_people_is_read_whole_and_its_header_is_no_name() -> None:
    """A roll of votes or a donor list: names in capitals, surname first, under a header that
    says whose column it is; the header's words are never a name."""
    text = (
        "MEMBER\tWARD\tVOTE\n"
        "AGYƐMAN, ABENA\tAksaray\tAYE\n"
        "REDDY, ADITYA\tItaperuna\tABSTAIN\n"
        "KWON YU-NA\tArtux\tNO\n"
        "KREJČÍ, KATEŘINA\tCabanatuan City\tAYE\n"
    )
    found = Detector.for_classes(["name"]).find_all(text)
    names = [f.value for f in found if f.kind == "name"]
    for person in ("AGYƐMAN, ABENA", "REDDY, ADITYA", "KWON YU-NA", "KREJČÍ, KATEŘINA"):
        assert person in names, names
    assert not any(word in value for value in names for word in ("MEMBER", "WARD", "VOTE", "AYE"))
    # no header: a column is read once two of its cells hold a name found otherwise
    plain = "Mr Olu Bakare\t2,000\nMrs Ines Duarte\t1,500\nTomasz Wrzesień\t900\n"
    values = [f.value for f in structured_names(plain, Detector.for_classes(["name"]).find(plain))]
    assert "Tomasz Wrzesień" in values


def test_an_own_goal_or_a_penalty_keeps_the_scorers_in_brackets() -> None:
    text = "Kalnėnai Celtic 2 (Pärn 26 pen, Ó Riordáin 37 og)"
    assert sorted(_found(text)) == ["Pärn", "Ó Riordáin"]


def test_scorers_on_a_line_of_their_own_line_ups_and_leaders() -> None:
    text = (
        "CARROWMORE HARRIERS 0 DEPORTIVO FARNLEY 3\n"
        "de Groot 41 pen, Sepúlveda 67, Bjørklund 86\n"
        "WESTMARCH (5-3-2): Hwang; Rahman, O'Donoghue (Ndiaye 56); Bălan, Shackleton.\n"
        "Bench: Chaouki, Agyɛman.\n"
        "25 - Diop (Torrefría United)\n"
        "Extras 12\n"
        "Section 4, Article 12\n"
    )
    assert sorted(_found(text)) == sorted(
        [
            "de Groot",
            "Sepúlveda",
            "Bjørklund",
            "Hwang",
            "Rahman",
            "O'Donoghue",
            "Ndiaye",
            "Bălan",
            "Shackleton",
            "Chaouki",
            "Agyɛman",
            "Diop",
        ]
    )
