"""The CI recall check for names the way news, tables and lists write them, with the shipped
model (``pressroom_names_en``) and every rule: lists and tables, bylines, a surname alone after
the full name, and organisations and places that must stay. Texts written here, not taken from
any benchmark corpus (``bench/names_bench.py`` measures those)."""

from __future__ import annotations

import pytest

from pressroom.redact.detect.detector import Detector


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector.for_classes(["name"])


def _names(detector: Detector, text: str) -> list[str]:
    return [f.value for f in detector.find_all(text) if f.kind == "name"]


def test_a_byline_alone_on_its_line(detector: Detector) -> None:
    text = (
        "Rail strike talks collapse\nBy Priya Raman\n"
        "LONDON, March 3 - Talks between the union and the operator collapsed on Tuesday."
    )
    assert _names(detector, text) == ["Priya Raman"]


def test_a_surname_alone_after_the_full_name(detector: Detector) -> None:
    text = (
        "Joanna Whitcombe, the chief executive, said the plan was sound. "
        "Whitcombe added that costs would fall, and Whitcombe's deputy agreed."
    )
    assert _names(detector, text) == ["Joanna Whitcombe", "Whitcombe", "Whitcombe's"]


def test_lines_of_a_results_list(detector: Detector) -> None:
    text = (
        "Women's 400 metres final\n1. Marta Kowalczyk (Poland) 50.12\n"
        "2. Aisha Bello (Nigeria) 50.48\n3. Hanna Lindqvist (SWE) 50.97"
    )
    assert _names(detector, text) == ["Marta Kowalczyk", "Aisha Bello", "Hanna Lindqvist"]


def test_a_scorecard_and_scorers_in_brackets(detector: Detector) -> None:
    card = "A. Cook c Carey b Starc 45\nJ Root lbw b Lyon 12\nB. Stokes run out (Head) 5"
    assert _names(detector, card) == [
        "A. Cook", "Carey", "Starc", "J Root", "Lyon", "B. Stokes", "Head",
    ]  # fmt: skip
    found = _names(detector, "Leeds 2 (Okonkwo 12, Brennan 77) Derby 1 (Maddox 45)")
    assert found == ["Okonkwo", "Brennan", "Maddox"]


def test_a_name_in_a_table_cell_stops_at_the_cell(detector: Detector) -> None:
    # the clubs beside the names are sometimes taken for people (a gazetteer of organisations
    # and places is the next step), but a name never runs over the gap between two cells
    for club in ("Valencia CF", "Ajax Amsterdam", "Hull City"):
        found = _names(detector, f"Name\tTeam\tGoals\nTomas Herrera\t{club}\t14\n")
        assert found[0] == "Tomas Herrera" and not any("\t" in v for v in found), found


def test_organisations_and_places_stay(detector: Detector) -> None:
    text = (
        "The Confederation of British Industry and Barclays said exports to New Zealand and "
        "Buenos Aires rose. Manchester United fans travelled from Leeds to see the match."
    )
    assert _names(detector, text) == []
