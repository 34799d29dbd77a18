"""The upload-time check of a policy's classes, light enough for the API process: it names the
classes our recognisers cover without importing them (nor the engine, pikepdf or PDFium)."""

from __future__ import annotations

from collections.abc import Sequence

from pressroom.errors import UnsupportedPolicy
from pressroom.redact.detect.ner import check_installed, model_name
from pressroom.redact.detect.plugins import installed_recognizers
from pressroom.settings import RedactionSettings

# the keys of ``detector.RULES``; a unit test holds the two together
RECOGNIZED_CLASSES = frozenset({"name", "address", "account-number"})


def check_policy_classes(
    classes: Sequence[str], redaction: RedactionSettings | None = None
) -> None:
    """What the API checks at upload, without loading anything heavy: every class has a
    recogniser, the operator's factories load, the configured model is installed."""
    missing = [c for c in classes if c not in RECOGNIZED_CLASSES]
    if missing:
        raise UnsupportedPolicy(f"no recognizer for {', '.join(missing)}")
    installed_recognizers(redaction)
    if "name" in classes:
        check_installed(model_name(redaction))
