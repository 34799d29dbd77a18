"""Recognizers an operator installs: an NER model, or any class behind the ``Recognizer`` shape.

``PRESSROOM_RECOGNIZERS`` lists factories as ``module:callable`` (comma-separated); each is called
once per process with no arguments and returns one recognizer or a list of them. Each recognizer
says which policy class it serves (its ``kind``); its findings are redacted exactly like the
built-in ones (every occurrence, on every page) and are looked for again in the output.

``PRESSROOM_NER_MODEL`` names a spaCy pipeline (an installed package such as ``en_core_web_sm``
or a directory); its ``PERSON`` entities become ``name`` findings. spaCy itself is not a
dependency of Pressroom: installing it and the model is the operator's choice.

A factory that cannot be loaded is a configuration error, raised where the policy is first
checked (at upload), so a job is never accepted with a recognizer silently missing.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pressroom.errors import PressroomError
from pressroom.redact.detect import Finding, Recognizer

ENV_FACTORIES = "PRESSROOM_RECOGNIZERS"
ENV_NER_MODEL = "PRESSROOM_NER_MODEL"
NER_LABELS = {"PERSON": "name", "PER": "name"}


class RecognizerConfigError(PressroomError):
    code = "INTERNAL_ERROR"
    http_status = 500


@dataclass(frozen=True)
class SpacyNerRecognizer:
    """PERSON entities of a spaCy pipeline (or anything called like one) as ``name`` findings."""

    nlp: Callable[[str], Any]
    kind: str = "name"

    def find(self, text: str) -> list[Finding]:
        doc = self.nlp(text)
        return [
            Finding(self.kind, ent.start_char, ent.end_char, ent.text, "ner", 0.85)
            for ent in doc.ents
            if NER_LABELS.get(ent.label_) == self.kind and ent.text.strip()
        ]


def spacy_ner(model: str) -> SpacyNerRecognizer:
    try:
        import spacy  # type: ignore[import-not-found]  # optional, the operator's install
    except ImportError as exc:
        raise RecognizerConfigError(
            f"{ENV_NER_MODEL} is set but spaCy is not installed in this environment"
        ) from exc
    try:
        nlp = spacy.load(model)
    except OSError as exc:
        raise RecognizerConfigError(
            f"spaCy could not load the model named in {ENV_NER_MODEL}"
        ) from exc
    return SpacyNerRecognizer(nlp)


def _load_factory(spec: str) -> list[Recognizer]:
    module_name, _, attr = spec.strip().partition(":")
    if not module_name or not attr:
        raise RecognizerConfigError(f"{ENV_FACTORIES}: expected module:callable, got {spec!r}")
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise RecognizerConfigError(f"{ENV_FACTORIES}: cannot load {spec!r}") from exc
    made = factory()
    found = list(made) if isinstance(made, list | tuple) else [made]
    for recognizer in found:
        if not callable(getattr(recognizer, "find", None)) or not isinstance(
            getattr(recognizer, "kind", None), str
        ):
            raise RecognizerConfigError(
                f"{ENV_FACTORIES}: {spec!r} made something without kind/find"
            )
    return found


@lru_cache(maxsize=4)
def _installed(factories: str, ner_model: str) -> tuple[Recognizer, ...]:
    loaded: list[Recognizer] = []
    for spec in filter(None, (s.strip() for s in factories.split(","))):
        loaded += _load_factory(spec)
    if ner_model:
        loaded.append(spacy_ner(ner_model))
    return tuple(loaded)


def installed_recognizers(env: Mapping[str, str] | None = None) -> tuple[Recognizer, ...]:
    """The operator's recognizers, loaded once per process (models are slow to load)."""
    env = os.environ if env is None else env
    return _installed(env.get(ENV_FACTORIES, ""), env.get(ENV_NER_MODEL, "").strip())
