"""A document's processing comes to a checked output or a hold, and a hold is a value: ``Held``
says why (the check's error: its code, message and exit status) and carries what the person
who judges the held copy needs (every finding, the review sheet, what became of the text). It
travels up from the redaction engine through ``processing`` to whoever keeps the copy (the
worker, the offline ``process``, the review folder); ``ReviewRequired`` is only the error that
names the reason, never a carrier of the engine's results."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pressroom.corrections import ReviewSheet
from pressroom.errors import ReviewRequired


@dataclass(frozen=True, slots=True)
class Held:
    """An output kept back for a person: ``reason`` (a ``ReviewRequired``), the findings
    (``redact.findings.DocumentFinding``, values included: they stay with the held copy),
    the review sheet (boxes and classes, never text), and the result a finished job keeps
    (``text_layer``) when the hold knows it."""

    reason: ReviewRequired
    findings: Sequence[Any] = ()
    sheet: ReviewSheet | None = None
    result: Mapping[str, Any] | None = None

    @property
    def code(self) -> str:
        return self.reason.code

    @property
    def message(self) -> str:
        return self.reason.message

    @property
    def exit_code(self) -> int:
        return self.reason.exit_code
