"""A recognizer an operator might install: names from their own watch list (used by the tests
through ``PRESSROOM_RECOGNIZERS=tests.operator_recognizers:watch_list``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pressroom.redact.detect import Finding

WATCHED = ("Zephyrine Quillfeather",)


@dataclass(frozen=True)
class WatchList:
    kind: str = "name"

    def find(self, text: str) -> list[Finding]:
        return [
            Finding(self.kind, m.start(), m.end(), m.group(), "watch-list")
            for name in WATCHED
            for m in re.finditer(re.escape(name), text)
        ]


def watch_list() -> WatchList:
    return WatchList()


def not_a_recognizer() -> object:
    return object()


@dataclass(frozen=True)
class ContextDependent:
    """Like a model whose reading depends on context: "Lighthouse" is a name only when the
    watched name is not beside it. Redacting the watched name changes its mind on the output;
    the engine learns the new value and builds once more."""

    kind: str = "name"
    word: str = "Lighthouse"

    def find(self, text: str) -> list[Finding]:
        if any(name in text for name in WATCHED):
            return []
        return [
            Finding(self.kind, m.start(), m.end(), m.group(), "context")
            for m in re.finditer(re.escape(self.word), text)
        ]


@dataclass(frozen=True)
class Restless:
    """A detector that never settles: without the watched name beside it, the first word of
    four letters or more that it has not burned yet is a name (a capitalised word alone would
    settle once a line's few were burned). Every build shows it something new, so the document
    must end with a person."""

    kind: str = "name"

    def find(self, text: str) -> list[Finding]:
        if any(name in text for name in WATCHED):
            return []
        m = re.search(r"\b(?!The\b)[A-Za-z]{4,}\b", text)
        return [Finding(self.kind, m.start(), m.end(), m.group(), "restless")] if m else []


def watch_list_and_context() -> list[object]:
    return [WatchList(), ContextDependent()]


def watch_list_and_late() -> list[object]:
    """A name only the output shows, and one no other recogniser takes for a name (it starts
    lower-case): learnt from the read-back alone."""
    return [WatchList(), ContextDependent(word="vanQuaymer")]


def watch_list_and_restless() -> list[object]:
    return [WatchList(), Restless()]


@dataclass(frozen=True)
class Hesitant:
    """A recogniser that half believes its one call: the watched surname where "said" follows
    it, scored below the doubt line; its other mentions it does not call."""

    kind: str = "name"

    def find(self, text: str) -> list[Finding]:
        return [
            Finding(self.kind, m.start(), m.end(), m.group(), "hesitant", 0.6)
            for m in re.finditer(r"Quillfeather(?= said)", text)
        ]


def hesitant() -> Hesitant:
    return Hesitant()
