"""The error taxonomy: every error class says whether a retry can help, and lives in one module."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pressroom
from pressroom import errors
from pressroom.errors import (
    BadConfig,
    NerModelError,
    PermanentError,
    PressroomError,
    RecognizerConfigError,
    Refused,
    ReviewRequired,
    TransientError,
)

FAMILIES = (PermanentError, TransientError, ReviewRequired)
API_ONLY = (errors.Unauthorized, errors.NotFound, errors.Forbidden, errors.Conflict, Refused)


def _classes() -> list[type[PressroomError]]:
    return [
        c
        for _, c in inspect.getmembers(errors, inspect.isclass)
        if issubclass(c, PressroomError) and c.__module__ == errors.__name__
    ]


def test_every_error_is_permanent_transient_review_or_an_api_refusal() -> None:
    loose = [
        c.__name__
        for c in _classes()
        if c not in (PressroomError, *FAMILIES) and not issubclass(c, FAMILIES + API_ONLY)
    ]
    assert loose == []


def test_a_bad_recogniser_or_model_is_permanent_with_its_own_code() -> None:
    for cls in (RecognizerConfigError, NerModelError):
        assert issubclass(cls, PermanentError) and issubclass(cls, BadConfig)
        assert cls("x").code == "RECOGNIZER_CONFIG"
    assert BadConfig("x").exit_code == 2 and BadConfig("x").http_status == 500


def test_no_error_class_is_defined_outside_errors_py() -> None:
    """Private control flow (``_Late``, ``LeaseLost``, ``TooBig``) may stay beside its one use;
    anything built on ``PressroomError`` belongs in errors.py."""
    names = {c.__name__ for c in _classes()} | {"PressroomError", "Exception"}
    outside: list[str] = []
    for path in Path(pressroom.__file__).parent.rglob("*.py"):
        if path.name == "errors.py" and path.parent.name == "pressroom":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = {b.id for b in node.bases if isinstance(b, ast.Name)}
                if bases & (names - {"Exception"}):
                    outside.append(f"{path.name}:{node.name}")
    assert outside == []
