"""The API's pure parts, tables of cases: an upload's fields (``parse_submit``), the headers with
a grammar of their own, and the key an approved copy is published under."""

from __future__ import annotations

import pytest

from pressroom.api.headers import MAX_PREFER_WAIT_S, parse_traceparent, prefer_wait
from pressroom.errors import BadRequest, PressroomError, UnknownTemplate
from pressroom.intake import MAX_DEADLINE_S, SubmitRequest, parse_submit
from pressroom.jobs.model import Lane
from pressroom.redact.detect.registry import CLASSES, REGISTRY
from pressroom.redact.policy import CLASSES as POLICY_CLASSES
from pressroom.redact.policy import RedactionPolicy, UnsupportedPolicy
from pressroom.review import held_digest, published_key
from pressroom.storage import artifact_key, review_key

NOW = 1_800_000_000.0


def parse(
    allowed: frozenset[str] | None = None, idempotency_key: str | None = None, **fields: str
) -> SubmitRequest:
    return parse_submit(fields, allowed=allowed, idempotency_key=idempotency_key, now=NOW)


def test_an_empty_form_asks_for_the_plain_template_in_the_bulk_lane() -> None:
    assert parse() == SubmitRequest(
        template="plain",
        lane=Lane.BULK,
        title=None,
        deadline=None,
        customer=None,
        policy=RedactionPolicy(()),
        keep_pixels=False,
        webhook_url=None,
        idempotency_key=None,
    )


def test_every_field_is_read_into_the_request() -> None:
    got = parse(
        idempotency_key="k-1",
        template="sample",
        lane="interactive",
        title="Forms",
        deadline="90",
        customer="c.1@x",
        redact="address, name",
        expires_at=str(NOW + 60),
        keep_pixels="true",
        webhook_url="https://hooks.example/p",
        review="always",
    )
    assert got == SubmitRequest(
        template="sample",
        lane=Lane.INTERACTIVE,
        title="Forms",
        deadline=90.0,
        customer="c.1@x",
        policy=RedactionPolicy(("name", "address"), NOW + 60),
        keep_pixels=True,
        webhook_url="https://hooks.example/p",
        idempotency_key="k-1",
        review_always=True,
    )


@pytest.mark.parametrize(
    ("fields", "idempotency_key", "error", "says"),
    [
        ({"template": "../evil"}, None, UnknownTemplate, "registered template"),
        ({"template": "Sample"}, None, UnknownTemplate, "registered template"),
        ({"template": "other"}, None, UnknownTemplate, "unknown template"),
        ({"lane": "fast"}, None, BadRequest, "lane"),
        ({"title": "x" * 201}, None, BadRequest, "title"),
        ({"title": "a\x00b"}, None, BadRequest, "title"),
        ({}, "", BadRequest, "Idempotency-Key"),
        ({}, "   ", BadRequest, "Idempotency-Key"),
        ({}, "k" * 256, BadRequest, "Idempotency-Key"),
        ({"deadline": "soon"}, None, BadRequest, "number of seconds"),
        ({"deadline": "0"}, None, BadRequest, "between"),
        ({"deadline": "nan"}, None, BadRequest, "between"),
        ({"deadline": "inf"}, None, BadRequest, "between"),
        ({"deadline": str(MAX_DEADLINE_S + 1)}, None, BadRequest, "between"),
        ({"customer": "-leading"}, None, BadRequest, "customer"),
        ({"customer": "a" * 129}, None, BadRequest, "customer"),
        ({"redact": "faces"}, None, UnsupportedPolicy, "cannot redact"),
        ({"redact": "name", "expires_at": str(NOW - 1)}, None, PressroomError, "expired"),
        ({"keep_pixels": "yes"}, None, BadRequest, "keep_pixels"),
        ({"review": "sometimes", "redact": "name"}, None, BadRequest, "review must be"),
        ({"review": "always"}, None, BadRequest, "needs a redaction policy"),
        ({"webhook_url": "ftp://x"}, None, BadRequest, "webhook_url"),
        ({"webhook_url": "https://x/" + "a" * 2048}, None, BadRequest, "webhook_url"),
    ],
)
def test_a_bad_field_is_refused_with_what_is_wrong(
    fields: dict[str, str], idempotency_key: str | None, error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=says):
        parse(frozenset({"plain", "sample"}), idempotency_key, **fields)


def test_the_first_bad_field_in_a_fixed_order_is_the_one_named() -> None:
    with pytest.raises(UnknownTemplate):
        parse(template="../x", lane="fast", title="x" * 500)
    with pytest.raises(BadRequest, match="lane"):
        parse(lane="fast", title="x" * 500, deadline="soon")


def test_any_template_name_passes_when_the_tenant_has_no_allow_list() -> None:
    assert parse(None, template="anything-1").template == "anything-1"


@pytest.mark.parametrize(
    ("header", "trace", "span"),
    [
        (
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "4bf92f3577b34da6a3ce929d0e0e4736",
            "00f067aa0ba902b7",
        ),
        (
            " 00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-00 ",
            "4bf92f3577b34da6a3ce929d0e0e4736",
            "00f067aa0ba902b7",
        ),
        ("00-00000000000000000000000000000000-00f067aa0ba902b7-01", None, None),
        ("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", None, None),
        ("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None, None),
        ("garbage", None, None),
        (None, None, None),
    ],
)
def test_traceparent_continues_a_valid_trace_else_starts_one(
    header: str | None, trace: str | None, span: str | None
) -> None:
    got_trace, got_span = parse_traceparent(header)
    assert got_span == span
    if trace is None:
        assert len(got_trace) == 32 and set(got_trace) != {"0"}
    else:
        assert got_trace == trace


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        (None, None),
        ("", None),
        ("return=minimal", None),
        ("wait=5", 5.0),
        ("respond-async, wait=2.5", 2.5),
        ('return=minimal; WAIT="3"', 3.0),
        ("wait=-4", 0.0),
        ("wait=9999", MAX_PREFER_WAIT_S),
        ("wait=soon", None),
    ],
)
def test_prefer_wait_reads_seconds_capped(header: str | None, seconds: float | None) -> None:
    assert prefer_wait(header) == seconds


def test_an_approved_copy_is_published_where_a_complete_jobs_output_would_be() -> None:
    digest = "ab" * 32
    held = review_key("acme", "job-1", digest)
    assert held_digest(held) == digest
    assert published_key("acme", "job-1", held) == artifact_key("acme", "job-1", digest)
    # the key a reviewer's approval has always published under
    assert published_key("acme", "job-1", held) == held.replace("review/", "artifacts/", 1)


def test_the_upload_check_names_exactly_the_classes_the_detector_has_recognisers_for() -> None:
    # one registry: the policy's classes are its classes, each with a recogniser of its kind
    assert POLICY_CLASSES == CLASSES == ("name", "address", "account-number")
    assert [REGISTRY[c].recognizer().kind for c in CLASSES] == list(CLASSES)
