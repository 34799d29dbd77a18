"""A redaction's fixed cost, counted: what every process pays once before its first page (pattern
compiles, the model's load) is paid once, only where a page needs it, and the cheaper ways of
paying it find exactly what the old ones found. Counted work and equal results, no clocks
(seconds belong in bench/redaction_cost.py)."""

from __future__ import annotations

import importlib
import re
import sys
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from PIL import Image

import pressroom.redact.detect.addresses as addresses
import pressroom.redact.detect.ner as ner
import pressroom.redact.faint as faint
from pressroom.models import OcrResult, Word
from pressroom.pipeline.ocr import normalise_contrast
from pressroom.redact.detect import name_cues
from pressroom.redact.detect.detector import Detector

POLICY = ("name", "address", "account-number")
US = "Write to Dana Whitfield at 1600 Main Street, Springfield, IL 62701 by Friday."
CANADA = "Our office is at 200 Bay Street, Toronto, ON M5J 2J2 until spring."
# re's compiler (not in the type stubs): counted where a pattern is compiled
_compiler: Any = importlib.import_module("re._compiler")
NO_ADDRESS = "The committee met on a wet afternoon and talked about the budget at length."


# ------------------------------------------------------------------- pyap: compiled where needed


def _compiled_countries() -> int:
    return addresses._full_pattern.cache_info().currsize


def test_a_country_full_address_pattern_is_compiled_only_for_a_text_that_anchors_it() -> None:
    addresses._full_pattern.cache_clear()
    recognizer = addresses.AddressRecognizer()
    recognizer.find(NO_ADDRESS * 20)
    assert _compiled_countries() == 0  # no state, ZIP, province or postcode: nothing compiled
    found = recognizer.find(US)
    assert _compiled_countries() == 1  # the US pattern alone
    assert any(f.recognizer == "pyap-US" and "1600 Main Street" in f.value for f in found)
    recognizer.find(CANADA)
    assert _compiled_countries() == 2


def test_full_address_patterns_are_compiled_once_per_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    addresses._full_pattern.cache_clear()
    compiled: list[str] = []
    real = _compiler.compile

    def counting(p: Any, flags: int = 0) -> Any:
        compiled.append(p if isinstance(p, str) else "")
        return real(p, flags)

    recognizer = addresses.AddressRecognizer()
    recognizer.find(US + "\n" + CANADA)
    monkeypatch.setattr(_compiler, "compile", counting)
    re.purge()  # re's own cache would hide a second compile
    for _ in range(3):
        recognizer.find(US + "\n" + CANADA)
    pyap_sources = {addresses._source(c).full_address for c in addresses.COUNTRIES}
    assert not [p for p in compiled if p in pyap_sources]


# --------------------------------------------------------------------------- the model, once


def test_the_model_is_loaded_once_for_every_detector_of_a_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import spacy

    loads: list[str] = []
    real = spacy.load

    def counting(name: Any, *args: Any, **kwargs: Any) -> Any:
        loads.append(str(name))
        return real(name, *args, **kwargs)

    monkeypatch.setattr(spacy, "load", counting)
    ner._recognizer.cache_clear()
    ner.load_model.cache_clear()
    detectors = [Detector.for_classes(POLICY) for _ in range(3)]
    for d in detectors:
        d.find_all(US)
    assert len(loads) == 1
    assert detectors[0].model is detectors[2].model


def test_a_second_detector_compiles_no_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every pattern detection uses is compiled by the first page; later detectors and pages
    of the process compile none."""
    text = US + "\n" + CANADA + "\nMs Ngozi Adeyemi, who chairs the board, said IBAN GB29 NWBK "
    text += "6016 1331 9268 19 was hers.\nPAYMENT TO T YAMAMOTO 45.00\n"
    Detector.for_classes(POLICY).find_all(text)
    compiled: list[Any] = []
    real = _compiler.compile

    def counting(p: Any, flags: int = 0) -> Any:
        compiled.append(p)
        return real(p, flags)

    monkeypatch.setattr(_compiler, "compile", counting)
    for _ in range(2):
        Detector.for_classes(POLICY).find_all(text.replace("Ngozi", "Chidinma"))
    assert compiled == []


# ---------------------------------------------------------------- cheaper, and the same findings


def test_capitals_are_every_upper_and_title_case_character() -> None:
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    expected = [i for i, c in enumerate(every) if c.isupper() or c.istitle()]
    assert list(ner.capitals(every)) == expected
    assert list(ner.capitals("ab Ödön ǅemal ß Σ x")) == [3, 8, 16]


def test_letter_classes_written_as_runs_match_the_letters_they_list() -> None:
    cases = [
        (name_cues.UPPER_SET, name_cues.UPPER_LETTERS),
        (name_cues.LETTER_SET, name_cues.UPPER_LETTERS + name_cues.LOWER_LETTERS),
        (name_cues.CAPS_SET, name_cues.UPPER_LETTERS + name_cues.MARKS),
        (name_cues.MARK[1:-1], name_cues.MARKS),
    ]
    every = "".join(map(chr, range(0x10000)))
    for runs, letters in cases:
        assert len(runs) < len(letters)
        listed = re.compile(f"[{re.escape(letters)}]")
        assert [m.start() for m in re.finditer(f"[{runs}]", every)] == [
            m.start() for m in listed.finditer(every)
        ]
    # inside another class too, as the patterns use them
    assert re.fullmatch(f"[{name_cues.LETTER_SET}'\\-]+", "Ngọ̀zi-O'Neill")


@pytest.mark.parametrize("factor", [1, 2, 3, 4])
def test_block_minimum_is_the_darkest_pixel_of_each_block(factor: int) -> None:
    rng = np.random.default_rng(factor)
    pixels = rng.integers(0, 256, size=(101, 67), dtype=np.uint8)
    h, w = 101 // factor * factor, 67 // factor * factor
    blocks = pixels[:h, :w].reshape(h // factor, factor, w // factor, factor).min(axis=(1, 3))
    assert np.array_equal(faint.block_min(pixels, factor), blocks)


# ------------------------------------------------------------------------- faint print's reading


class CountingEngine:
    """An OCR engine that reads nothing and counts what it is asked to read."""

    def __init__(self) -> None:
        self.calls = 0

    def recognize(self, image: Image.Image, **kwargs: Any) -> OcrResult:
        self.calls += 1
        return OcrResult(words=(), mean_confidence=0.0)


def _scanned(kind: str) -> Image.Image:
    from corpora.documents.kinds import documents
    from corpora.documents.model import SCAN
    from corpora.documents.render import page_image

    doc = next(d for d in documents("dev", 18) if d.kind == kind)
    doc = replace(doc, medium=SCAN, noise=4.5, skews=[0.0] * len(doc.pages), fmt="pdf")
    return page_image(doc, 0, 300)


def test_a_scan_without_faint_print_is_read_no_second_time() -> None:
    """Scanner grain, specks and the anti-aliased edges of dark print make no grey band."""
    engine = CountingEngine()
    page = _scanned("news")
    known: list[Word] = []
    assert faint.faint_words(page, known, engine, 300) == []  # type: ignore[arg-type]
    assert faint.grey_bands(normalise_contrast(page))[0] == []
    assert engine.calls == 0


def test_faint_print_is_still_read_again() -> None:
    engine = CountingEngine()
    page = _scanned("faint")
    bands, _paper = faint.grey_bands(normalise_contrast(page))
    faint.faint_words(page, [], engine, 300)  # type: ignore[arg-type]
    assert bands and engine.calls == len(bands)
