"""Integration tests run real Tesseract; one engine for the whole session, as a worker has."""

from __future__ import annotations

import pytest

from pressroom.engines.tesseract import TesseractEngine
from pressroom.settings import Settings


@pytest.fixture(scope="session")
def engine() -> TesseractEngine:
    return TesseractEngine(tessdata_prefix=Settings.from_env().tessdata_prefix)
