"""Recognizers an operator installs: any class behind the ``Recognizer`` shape.

``PRESSROOM_RECOGNIZERS`` lists factories as ``module:callable`` (comma-separated); each is called
once per process with no arguments and returns one recognizer or a list of them. Each recognizer
says which policy class it serves (its ``kind``); its findings are redacted exactly like the
built-in ones (every occurrence, on every page) and are looked for again in the output.

The named-entity model is not one of these: it fills the model slot (``ner.py``,
``PRESSROOM_NER_MODEL``), in the default install.

A factory that cannot be loaded is a configuration error, raised where the policy is first
checked (at upload), so a job is never accepted with a recognizer silently missing.
"""

from __future__ import annotations

import importlib
from functools import lru_cache

from pressroom.errors import RecognizerConfigError
from pressroom.redact.detect import Recognizer
from pressroom.settings import RedactionSettings

ENV_FACTORIES = "PRESSROOM_RECOGNIZERS"


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
def _installed(factories: str) -> tuple[Recognizer, ...]:
    loaded: list[Recognizer] = []
    for spec in filter(None, (s.strip() for s in factories.split(","))):
        loaded += _load_factory(spec)
    return tuple(loaded)


def installed_recognizers(redaction: RedactionSettings | None = None) -> tuple[Recognizer, ...]:
    """The operator's recognizers, loaded once per process (models are slow to load).
    ``redaction``: the entry point's settings; None reads them (``PRESSROOM_RECOGNIZERS``)."""
    return _installed(",".join(RedactionSettings.given(redaction).recognizers))
