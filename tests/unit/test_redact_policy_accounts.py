"""Redaction policy parsing and account-number recognition: tables of cases."""

from __future__ import annotations

import pytest

from pressroom.errors import PolicyExpired, UnsupportedPolicy
from pressroom.redact.detect.accounts import AccountNumberRecognizer
from pressroom.redact.policy import RedactionPolicy, parse_policy


@pytest.mark.parametrize(
    ("raw", "classes"),
    [
        (None, ()),
        ("", ()),
        ("name", ("name",)),
        ("account-number, NAME,address", ("name", "address", "account-number")),
        ("account_number,account-number", ("account-number",)),
    ],
)
def test_policy_classes(raw: str | None, classes: tuple[str, ...]) -> None:
    assert parse_policy(raw, now=0).classes == classes


@pytest.mark.parametrize("raw", ["names", "email", "name,ssn"])
def test_unknown_class_is_unsupported(raw: str) -> None:
    with pytest.raises(UnsupportedPolicy) as info:
        parse_policy(raw, now=0)
    assert info.value.code == "UNSUPPORTED_POLICY"


def test_expiry() -> None:
    policy = parse_policy("name", "2026-01-01T00:00:00Z", now=0)
    assert policy == RedactionPolicy(("name",), 1767225600.0)
    with pytest.raises(PolicyExpired) as info:
        parse_policy("name", "1000", now=1000)
    assert info.value.code == "EXPIRED"
    with pytest.raises(UnsupportedPolicy):
        parse_policy("name", "next tuesday", now=0)


FOUND = [
    ("Pay to IBAN GB82 WEST 1234 5698 7654 32 by Friday", "GB82 WEST 1234 5698 7654 32", "iban"),
    ("iban:DE89370400440532013000.", "DE89370400440532013000", "iban"),
    ("Card 4111 1111 1111 1111 expires 09/29", "4111 1111 1111 1111", "card-luhn"),
    ("card 5500-0000-0000-0004", "5500-0000-0000-0004", "card-luhn"),
    ("Routing number: 021000021", "021000021", "aba-routing"),
    ("Account number: 12345678", "12345678", "labelled-account"),
    ("Account number: 63049403   Reference REF-7459", "63049403", "labelled-account"),
    ("Acct # 0098-7765-4432", "0098-7765-4432", "labelled-account"),
    ("Sort code: 20-00-00 please", "20-00-00", "sort-code"),
]


@pytest.mark.parametrize(("text", "value", "recognizer"), FOUND)
def test_account_numbers_found(text: str, value: str, recognizer: str) -> None:
    (finding,) = AccountNumberRecognizer().find(text)
    assert (finding.value, finding.recognizer, finding.kind) == (
        value,
        recognizer,
        "account-number",
    )
    assert text[finding.start : finding.end] == value


@pytest.mark.parametrize(
    "text",
    [
        "Reference 2026-0417 was approved on 12 March 2026.",
        "GB82 WEST 1234 5698 7654 33",  # IBAN with a wrong check digit
        "4111 1111 1111 1112",  # fails Luhn
        "Order 021000021 shipped",  # passes the ABA checksum, but no routing label
        "Total amount due: 1,250.00 payable by bank transfer.",
        "Phone 555 0100 2233",
    ],
)
def test_lookalikes_are_not_account_numbers(text: str) -> None:
    assert AccountNumberRecognizer().find(text) == []


def test_geometry_guard_refuses_a_page_that_changed_size() -> None:
    from pressroom.errors import OutputCheckFailed
    from pressroom.models import PageInfo
    from pressroom.pipeline.geometry import PageLayout
    from pressroom.redact.build import check_geometry
    from pressroom.redact.scan import PageScan

    info = PageInfo(0, 612.0, 792.0, 0, 300.0, has_text=False, text_chars=0)
    scan = PageScan(info, 0, 300.0, (2550, 3300), [], [])
    check_geometry(scan, PageLayout(612, 792, (0, 0, 612.4, 791.8)))
    turned = PageScan(info, 90, 300.0, (3300, 2550), [], [])
    check_geometry(turned, PageLayout(792, 612, (0, 0, 792, 612)))
    with pytest.raises(OutputCheckFailed):
        check_geometry(scan, PageLayout(612, 800, (0, 0, 612, 800)))
