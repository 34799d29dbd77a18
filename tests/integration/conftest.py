"""Integration tests run real Tesseract; one engine for the whole session, as a worker has."""

from __future__ import annotations

import pytest

from pressroom.engines.tesseract import TesseractEngine


@pytest.fixture(scope="session")
def engine() -> TesseractEngine:
    return TesseractEngine()
