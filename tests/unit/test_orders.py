"""A job's order: one JSON form, every old row's fallback in ``from_json``, and a stored value
not understood refused rather than guessed."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import pytest

from pressroom.corrections import Corrections
from pressroom.errors import BadRequest, PermanentError, UnsupportedPolicy
from pressroom.orders import POLICY_CLASSES, JobOrder
from pressroom.pipeline.core import JobOptions
from pressroom.redact.detect.registry import CLASSES
from pressroom.settings import Settings
from pressroom.templates import registered_template

FIX = {"removed": [], "manual": [{"page": 1, "box": [10.0, 10.0, 50.0, 30.0]}], "every": []}


def test_the_order_names_the_classes_the_api_takes() -> None:
    assert POLICY_CLASSES == CLASSES


def test_every_choice_round_trips_through_its_json() -> None:
    order = JobOrder(
        template="letterhead",
        redact=("name", "account-number"),
        expires_at=1_900_000_000.0,
        keep_pixels=True,
        output_type="pdfa",
        sidecar=True,
        allow_no_text=True,
        optimize=2,
        ocr="redo",
        languages=("eng", "deu"),
        review_always=True,
        webhook_url="https://hooks.example.org/x",
        corrections=Corrections.parse(FIX),
    )
    stored = order.to_json()
    assert stored == {
        "v": 1,
        "redact": ["name", "account-number"],
        "expires_at": 1_900_000_000.0,
        "keep_pixels": True,
        "output_type": "pdfa",
        "sidecar": True,
        "allow_no_text": True,
        "optimize": 2,
        "ocr": "redo",
        "languages": "eng+deu",
        "review": "always",
        "webhook_url": "https://hooks.example.org/x",
        "corrections": FIX,
    }
    assert JobOrder.from_json(stored, template="letterhead") == order


def test_a_plain_order_stores_only_its_version_and_languages() -> None:
    order = JobOrder(template="plain", output_type="pdf", sidecar=False, languages=("eng",))
    assert order.to_json() == {"v": 1, "languages": "eng"}
    assert JobOrder.from_json(order.to_json(), template="plain") == order


def test_an_old_row_reads_with_the_defaults_it_was_stored_under() -> None:
    # a row from before the version key, the output choices and per-job languages
    order = JobOrder.from_json({"redact": ["name"], "expires_at": None}, template="plain")
    assert order.redact == ("name",) and order.expires_at is None
    assert (order.output_type, order.sidecar) == ("pdf", False)
    assert (order.ocr, order.optimize) == ("skip", 0)
    assert order.review_always is False and order.corrections is None
    assert order.languages == ()
    # the one rule for stored-without languages: the reading process's setting
    assert order.languages_or(("deu",)) == ("deu",)
    assert replace(order, languages=("fra",)).languages_or(("deu",)) == ("fra",)
    assert JobOrder.from_json(None, template="plain") == JobOrder(
        template="plain", output_type="pdf", sidecar=False
    )


@pytest.mark.parametrize(
    ("stored", "error"),
    [
        ({"redact": ["nmae"]}, UnsupportedPolicy),  # misspelt: never a silent non-redaction
        ({"redact": "name"}, BadRequest),
        ({"output_type": "docx"}, BadRequest),
        ({"optimize": 3}, BadRequest),
        ({"ocr": "sometimes"}, BadRequest),
        ({"review": "alwys"}, BadRequest),
        ({"sidecar": "false"}, BadRequest),
        ({"languages": "eng+"}, BadRequest),
        ({"expires_at": "soon"}, BadRequest),
        ({"corrections": {"moved": []}}, BadRequest),
        ({"v": 2}, BadRequest),
        ({"v": 1, "watermark": True}, BadRequest),
    ],
)
def test_a_stored_value_not_understood_is_refused(
    stored: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error):
        JobOrder.from_json(stored, template="plain")
    # a store handing the row out does not raise: the refusal travels with the order, and
    # whoever acts on it gets it with its code
    kept = JobOrder.stored(stored, template="plain")
    assert kept.refused is not None and kept.redact == ()
    with pytest.raises(PermanentError) as refused:
        kept.check()
    assert refused.value.code == error.code  # type: ignore[attr-defined]
    with pytest.raises(ValueError):
        kept.to_json()


def test_job_options_of_an_order() -> None:
    template = registered_template("plain")
    settings = Settings(languages=("deu",))
    when = datetime(2026, 1, 2, tzinfo=UTC)
    order = JobOrder(template="plain", keep_pixels=True, output_type="pdfa", optimize=1)
    options = JobOptions.of(order, template, settings, title="T", when=when, deadline=5.0)
    assert options.template is template and options.title == "T" and options.when == when
    assert options.keep_pixels and options.archive and options.optimize == 1
    assert options.languages == ("deu",) and options.deadline == 5.0
    assert options.limits is settings.limits and options.redaction is settings.redaction
    # an offline order that chose no output: the template's defaults
    assert JobOptions.of(JobOrder(), template, settings).output_type is None
