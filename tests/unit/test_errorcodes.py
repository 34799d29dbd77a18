"""docs/errors.md lists every reason code with its status, family and retry, and is current."""

from __future__ import annotations

from pathlib import Path

from pressroom import errorcodes
from pressroom.errorcodes import codes, error_classes, markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "errors.md"


def test_the_committed_page_is_what_the_table_generates() -> None:
    assert DOC.read_text() == markdown(), (
        "docs/errors.md is stale: python -m pressroom.errorcodes --markdown > docs/errors.md"
    )


def test_every_code_of_every_error_class_has_a_row_with_its_status() -> None:
    rows = {code.code: code for code in codes()}
    for cls in error_classes():
        assert cls.code in rows, cls.__name__
        assert cls.http_status in rows[cls.code].statuses, cls.__name__
    assert set(errorcodes.LOOSE_CODES) <= set(rows)


def test_the_retry_column_follows_the_class() -> None:
    rows = {code.code: code for code in codes()}
    assert rows["STORE_UNAVAILABLE"].retried == "yes, with backoff"
    assert rows["CORRUPT"].retried == "no: dead letter"
    assert rows["REDACTION_LEAK"].retried == "no: held for review"
    assert rows["MEMORY_LIMIT"].retried == "once, then dead letter"
    assert rows["UNAUTHORIZED"].families == ("refusal",)
    assert rows["QUOTA_EXCEEDED"].statuses == (413, 429)
    assert "| `BAD_MIME` | 415 | permanent | no: dead letter |" in markdown()
