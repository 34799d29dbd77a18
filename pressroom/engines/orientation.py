"""What an engine's orientation detector answers: a type of its own, shared by the OCR stage that
asks and the engines that answer, so neither imports the other."""

from __future__ import annotations

from typing import NamedTuple


class Orientation(NamedTuple):
    """What an engine's orientation detector found: the clockwise turn that makes the page
    upright and its confidence, and the script it saw, with its confidence. ``foreign``: the
    script was seen with confidence and none of the engine's languages reads it, so no turn
    of the page can read as text (a Chinese scan read with ``eng``)."""

    turn: int
    confidence: float
    script: str = ""
    script_confidence: float = 0.0
    foreign: bool = False
