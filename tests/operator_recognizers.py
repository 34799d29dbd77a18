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
