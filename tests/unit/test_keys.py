"""One expiry syntax for the CLI and the API, a key's status, the two-signature header and the
overlap's setting."""

from __future__ import annotations

import argparse
import base64

import pytest

from pressroom.cli.admin import expiry
from pressroom.errors import BadConfig
from pressroom.keys import key_status, parse_expiry
from pressroom.notify.webhooks import signature, signatures
from pressroom.settings import Settings

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90d", NOW + 90 * 86400),
        (" 12h ", NOW + 12 * 3600),
        ("30m", NOW + 1800),
        ("2027-01-31", 1801353600.0),
        ("2027-01-31T18:00:00Z", 1801418400.0),
        ("2027-01-31T19:00:00+01:00", 1801418400.0),
        ("2027-01-31T18:00:00", 1801418400.0),  # no zone: UTC
    ],
)
def test_an_expiry_is_a_duration_from_now_or_a_utc_time(text: str, expected: float) -> None:
    assert parse_expiry(text, now=NOW) == expected


@pytest.mark.parametrize("text", ["soon", "90", "90w", "-1d", "", "1234567d", "2027-13-01"])
def test_an_expiry_it_cannot_read_names_what_it_accepts(text: str) -> None:
    with pytest.raises(ValueError, match=r"90d.*2027-01-31"):
        parse_expiry(text, now=NOW)
    with pytest.raises(argparse.ArgumentTypeError, match="give a duration"):
        expiry(text)  # the CLI's --expires: the same rules, the same words


@pytest.mark.parametrize(
    ("revoked_at", "expires_at", "status"),
    [
        (None, None, "live"),
        (None, NOW + 1, "live"),
        (None, NOW, "expired"),
        (NOW - 5, None, "revoked"),
        (NOW - 5, NOW - 9, "revoked"),
    ],
)
def test_a_keys_status(revoked_at: float | None, expires_at: float | None, status: str) -> None:
    assert key_status({"revoked_at": revoked_at, "expires_at": expires_at}, now=NOW) == status


def test_the_signature_header_carries_one_signature_per_secret_in_order() -> None:
    new = "whsec_" + base64.b64encode(b"n" * 32).decode()
    old = "whsec_" + base64.b64encode(b"o" * 32).decode()
    header = signatures((new, old), "msg_1", 1700000000, b"{}")
    assert header == f"{signature(new, 'msg_1', 1700000000, b'{}')} " + signature(
        old, "msg_1", 1700000000, b"{}"
    )
    assert all(part.startswith("v1,") for part in header.split(" "))
    assert signatures((new,), "msg_1", 1, b"{}") == signature(new, "msg_1", 1, b"{}")


def test_the_overlap_defaults_to_a_day_and_refuses_a_negative_value() -> None:
    assert Settings.from_env({}).webhooks.secret_overlap_s == 86400.0
    env = {"PRESSROOM_WEBHOOK_SECRET_OVERLAP_SECONDS": "0"}
    assert Settings.from_env(env).webhooks.secret_overlap_s == 0.0
    with pytest.raises(BadConfig, match="PRESSROOM_WEBHOOK_SECRET_OVERLAP_SECONDS"):
        Settings.from_env({"PRESSROOM_WEBHOOK_SECRET_OVERLAP_SECONDS": "-1"})
