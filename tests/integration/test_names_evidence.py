"""Negative evidence for names (issue 41, items 4 and 5): capitalised words of a brochure, a
catalogue or a table are not people, a confident person is never dropped, and a document whose
"names" are mostly without any evidence of a person is held NAMES_IMPLAUSIBLE, not delivered
as boxes over product words."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from pressroom.engines.tesseract import TesseractEngine
from pressroom.errors import NamesImplausible
from pressroom.pipeline.core import JobOptions
from pressroom.redact.detect.detector import Detector
from pressroom.redact.detect.evidence import IMPLAUSIBLE_MIN, implausible
from pressroom.redact.engine import redact_document
from pressroom.redact.policy import parse_policy
from pressroom.synth import text_pdf
from pressroom.templates import resolve_template
from tests.e2e.test_cli import run_cli
from tests.helpers import held_by

# a product sheet of our own, of the kind of OCRmyPDF's linn.pdf: product words in capitals,
# title case and camel case, each also written in lower case somewhere, and no person at all
BROCHURE = """The TuneForge Studio
24 Track MIDI Pattern Recorder

The TuneForge Studio is a composition tool for the working musician. Its features include:
* Operation like a tape machine with PLAY, STOP, RECORD and LOCATE controls.
* Each of the 99 patterns holds 24 tracks. Each track may use one of 16 MIDI channels.
* A fast disk drive stores whole songs and holds 90,000 notes.
* Exclusive REPEAT function repeats held notes at a chosen value.

Recording a Pattern
To record a pattern, press RECORD and PLAY, then play your keyboard in time.

Creating a Song
One way to create a song is to record each track all the way through. Then use the
CHAIN SONG function to chain the patterns together.

See your TuneForge dealer today.
TuneForge Instruments, Inc.
"""

_SYLLABLES = (
    "vex quin mar tor zem dre kal orb tav bel gar pel nuv ard kes lum sor fen jor wil ost pra "
    "dun hal brix celt dov ember fral gund hest ivo"
)
_ENDS = ["ora", "ix", "ane", "bla", "on", "ex", "isol", "rin", "vora", "aro", "olo", "enza"]
# made-up capitalised words in a frame the model reads as two people, none with a given name,
# a title or a person's verb: what an over-firing detector makes of a catalogue
MADE_UP = [(a + b).capitalize() for a, b in zip(_SYLLABLES.split(), itertools.cycle(_ENDS))]
OVERFIRING = [f"{a} and {b} were there." for a, b in zip(MADE_UP[::2], MADE_UP[1::2], strict=True)]


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector.for_classes(["name"])


def test_a_brochure_of_product_words_has_no_names(detector: Detector) -> None:
    found = [f for f in detector.find_all(BROCHURE) if f.kind == "name"]
    assert found == [], [(f.recognizer, f.value) for f in found]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        # a cue calls these people, whatever the document does with their words
        ("Mr Song said the song was late. A song and a track.", "Song"),
        ("Name: Rose Track\nThe track ran past a rose bed.", "Rose Track"),
        ("Pattern said the pattern will change. Mrs Pattern agreed.", "Pattern"),
        # a given name before a surname that is also an ordinary word here
        ("Mark Price wrote the report. The price is up; mark it.", "Mark Price"),
        # a person's verb after a word the dictionary lists
        ("The sale was agreed. Baker said it was final.", "Baker"),
    ],
)
def test_a_confident_person_is_never_dropped(detector: Detector, text: str, name: str) -> None:
    at = text.rindex(name)
    spans = [(f.start, f.end) for f in detector.find_all(text) if f.kind == "name"]
    assert any(a <= at and at + len(name) <= b for a, b in spans), spans


def test_names_with_no_evidence_of_a_person_are_counted_and_people_are_not(
    detector: Detector,
) -> None:
    counted = implausible(detector.find_all("\n".join(OVERFIRING)))
    assert counted is not None and counted[0] >= IMPLAUSIBLE_MIN
    # the same words with a title or a person's verb are people
    people = [
        f"Mr {a} said {b} was there." for a, b in zip(MADE_UP[::2], MADE_UP[1::2], strict=True)
    ]
    assert implausible(detector.find_all("\n".join(people))) is None
    # a news page of people
    news = (
        "Ingrid Solberg, who chairs the board, said the vote stands. Tomás Okafor told "
        "reporters the plan was agreed. Solberg and Okafor met in Oslo."
    )
    assert implausible(detector.find_all(news)) is None


def test_an_implausible_document_is_held_with_every_name_burned(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = text_pdf([OVERFIRING], tmp_path / "in.pdf")
    options = JobOptions(template=resolve_template("plain"))
    held = held_by(
        redact_document(src, tmp_path / "out.pdf", options, parse_policy("name", now=0), engine),
        NamesImplausible,
    )
    assert held.code == "NAMES_IMPLAUSIBLE"
    assert "over-firing" in held.message
    assert not any(word in held.message for word in MADE_UP)  # no value in a reason
    names = {f.value for f in held.findings if f.kind == "name"}
    assert len(names) >= IMPLAUSIBLE_MIN and held.sheet is not None


def test_detect_prints_an_implausible_document_and_exits_zero(tmp_path: Path) -> None:
    src = text_pdf([OVERFIRING], tmp_path / "in.pdf")
    done = run_cli("detect", "--redact", "name", str(src), scratch=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert len({line["value"] for line in lines if line["class"] == "name"}) >= IMPLAUSIBLE_MIN
    assert "NAMES_IMPLAUSIBLE" in done.stderr
