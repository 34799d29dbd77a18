"""The artifact key names what made the output: another engine or detector version is another
key, so a retry after an upgrade is a new output, never mistaken for a changed one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pressroom import ENGINE_VERSION
from pressroom.redact.detect.ner import model_identity
from pressroom.redact.policy import RedactionPolicy
from pressroom.settings import RedactionSettings
from pressroom.storage import artifact_key, versioned_artifact_key
from pressroom.worker import publish
from pressroom.worker.publish import artifact_digest, detector_identity

NONE = RedactionPolicy(())
NAMES = RedactionPolicy(("name",))


def digest(**changes: object) -> str:
    args: dict[str, object] = {
        "source_sha256": "a" * 64,
        "template_hash": "t1",
        "policy": NAMES,
        "engine": "tesseract-5.3.0",
        "detector": "model 1",
        "keep_pixels": False,
    }
    args.update(changes)
    return artifact_digest(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "change",
    [
        {"engine": "tesseract-5.3.4"},
        {"detector": "model 2"},
        {"detector": ""},
        {"keep_pixels": True},
        {"template_hash": "t2"},
        {"policy": RedactionPolicy(("name", "email"))},
        {"source_sha256": "b" * 64},
    ],
)
def test_each_input_of_an_output_changes_its_key(change: dict[str, object]) -> None:
    assert digest(**change) != digest()
    assert digest() == digest()  # and nothing else does: a retry finds the same key


def test_our_engine_version_changes_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    before = digest()
    monkeypatch.setattr(publish, "ENGINE_VERSION", ENGINE_VERSION + "-next")
    assert digest() != before


def test_the_detector_is_named_only_when_something_is_redacted(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "meta.json").write_text(json.dumps({"version": "3.8.0"}))
    settings = RedactionSettings(ner_model=str(model))
    assert detector_identity(NONE, settings) == ""
    named = detector_identity(NAMES, settings)
    assert model_identity(str(model)) == f"{model} 3.8.0" and f"{model} 3.8.0" in named
    (model / "meta.json").write_text(json.dumps({"version": "3.8.1"}))
    assert detector_identity(NAMES, settings) != named
    extras = RedactionSettings(ner_model=str(model), recognizers=("ours:factory",))
    assert detector_identity(NAMES, extras) != detector_identity(NAMES, settings)


def test_versioned_keys_sit_beside_the_first_output_and_start_at_two() -> None:
    assert artifact_key("acme", "j1", "d") == "artifacts/acme/j1/d.pdf"
    assert versioned_artifact_key("acme", "j1", "d", 2) == "artifacts/acme/j1/d.v2.pdf"
    assert versioned_artifact_key("acme", "j1", "d", 3) == "artifacts/acme/j1/d.v3.pdf"
    with pytest.raises(ValueError):
        versioned_artifact_key("acme", "j1", "d", 1)
