"""The slot for recognizers an operator installs (an NER model, a watch list)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from pressroom.redact.detect.plugins import (
    RecognizerConfigError,
    SpacyNerRecognizer,
    _installed,
    installed_recognizers,
)
from pressroom.redact.engine import recognizers_for
from pressroom.redact.policy import parse_policy


@pytest.fixture(autouse=True)
def fresh_cache() -> None:
    _installed.cache_clear()


def test_nothing_installed_by_default() -> None:
    assert installed_recognizers({}) == ()


def test_factories_load_and_join_only_their_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRESSROOM_RECOGNIZERS", "tests.operator_recognizers:watch_list")
    kinds = [r.kind for r in recognizers_for(parse_policy("name", now=0))]
    assert kinds.count("name") == 2
    # a policy without names does not run the name watch list
    assert [r.kind for r in recognizers_for(parse_policy("account-number", now=0))] == [
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
        installed_recognizers({"PRESSROOM_RECOGNIZERS": spec})


def test_ner_model_without_spacy_is_a_clear_error() -> None:
    # spaCy is not a dependency of Pressroom; either way this environment has it, the error is clear
    try:
        import spacy  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        with pytest.raises(RecognizerConfigError, match="spaCy is not installed"):
            installed_recognizers({"PRESSROOM_NER_MODEL": "en_core_web_sm"})
    else:  # pragma: no cover - an environment with spaCy but without that model
        with pytest.raises(RecognizerConfigError, match="could not load"):
            installed_recognizers({"PRESSROOM_NER_MODEL": "/nonexistent/model"})


@dataclass
class _Ent:
    text: str
    start_char: int
    end_char: int
    label_: str


@dataclass
class _Doc:
    ents: list[_Ent]


def test_person_entities_become_name_findings() -> None:
    text = "Minutes by Ada Okafor at Lagos."

    def nlp(t: str) -> _Doc:  # the shape spaCy's Language.__call__ returns
        return _Doc([_Ent("Ada Okafor", 11, 21, "PERSON"), _Ent("Lagos", 25, 30, "GPE")])

    found = SpacyNerRecognizer(nlp).find(text)
    assert [(f.kind, f.value, text[f.start : f.end]) for f in found] == [
        ("name", "Ada Okafor", "Ada Okafor")
    ]
