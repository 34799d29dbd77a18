"""The classes of personal data a redaction can remove, each with our recogniser for it: the
one list a policy (``redact.policy``), the upload check and the detector read. Light enough for
the API process: the recognisers' modules are plain Python (the engine, pikepdf, PDFium and
the model are never loaded by a check at upload).

A new built-in class is one row of ``REGISTRY`` (and documents with ground truth in
``corpora/documents/``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pressroom.errors import UnsupportedPolicy
from pressroom.redact.detect import Recognizer
from pressroom.redact.detect.accounts import AccountNumberRecognizer
from pressroom.redact.detect.addresses import AddressRecognizer
from pressroom.redact.detect.names import NameRecognizer
from pressroom.redact.detect.ner import check_installed, model_name
from pressroom.redact.detect.plugins import installed_recognizers
from pressroom.settings import RedactionSettings


@dataclass(frozen=True, slots=True)
class RedactionClass:
    """A class of personal data and our recogniser for it (made with no arguments; its
    ``kind`` is the class's name)."""

    name: str
    recognizer: Callable[[], Recognizer]


# in the order a policy lists them (and the detector runs them)
REGISTRY = {
    c.name: c
    for c in (
        RedactionClass("name", NameRecognizer),
        RedactionClass("address", AddressRecognizer),
        RedactionClass("account-number", AccountNumberRecognizer),
    )
}
CLASSES = tuple(REGISTRY)


def check_policy_classes(
    classes: Sequence[str], redaction: RedactionSettings | None = None
) -> None:
    """What the API checks at upload, without loading anything heavy: every class has a
    recogniser, the operator's factories load, the configured model is installed."""
    missing = [c for c in classes if c not in REGISTRY]
    if missing:
        raise UnsupportedPolicy(f"no recognizer for {', '.join(missing)}")
    installed_recognizers(redaction)
    if "name" in classes:
        check_installed(model_name(redaction))
