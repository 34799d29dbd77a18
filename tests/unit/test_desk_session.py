"""The desk's session cookie: signed (any change refuses it), bound to one secret, ended 12 h
after sign-in however it is presented, and its CSRF token good for its own nonce only."""

from __future__ import annotations

import base64
import json

import pytest

from pressroom.desk import session as s
from pressroom.deskport import Viewer

SECRET = b"k" * 32
NOW = 1_800_000_000.0
TENANT = Viewer("acme", "k_0123456789ab", "tenant")


def test_a_session_comes_back_as_it_was_signed() -> None:
    fresh = s.new_session(TENANT, now=NOW)
    back = s.decode(s.encode(fresh, SECRET), SECRET, now=NOW + 60)
    assert back == fresh
    assert back is not None and back.expires == NOW + 12 * 3600
    operator = s.new_session(Viewer(None, "k_ffffffffffff", "operator"), now=NOW)
    assert s.decode(s.encode(operator, SECRET), SECRET, now=NOW) == operator


def test_each_session_has_its_own_nonce() -> None:
    assert s.new_session(TENANT, now=NOW).nonce != s.new_session(TENANT, now=NOW).nonce


def _payload(value: str) -> dict[str, object]:
    body = value.split(".")[0]
    decoded: dict[str, object] = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    return decoded


def _forge(payload: dict[str, object], mac: str) -> str:
    body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(body).rstrip(b"=").decode() + "." + mac


def test_a_changed_payload_is_refused() -> None:
    value = s.encode(s.new_session(TENANT, now=NOW), SECRET)
    mac = value.split(".")[1]
    for change in ({"tenant": "other"}, {"role": "operator", "tenant": None}, {"exp": NOW + 1e9}):
        assert s.decode(_forge({**_payload(value), **change}, mac), SECRET, now=NOW) is None


@pytest.mark.parametrize(
    "value",
    ["", "x", "a.b", "a.b.c", "é.é", "." * 10, "A" * 5000, "e30.AAAA"],
)
def test_anything_not_signed_by_us_is_refused(value: str) -> None:
    assert s.decode(value, SECRET, now=NOW) is None


def test_another_secret_or_purpose_is_refused() -> None:
    value = s.encode(s.new_session(TENANT, now=NOW), SECRET)
    assert s.decode(value, b"x" * 32, now=NOW) is None
    # a signed value made for another purpose (the outcome cookie) is no session
    other = s.sign(SECRET, "done", _payload(value))
    assert s.decode(other, SECRET, now=NOW) is None
    assert s.unsign(SECRET, "done", other) == _payload(value)


def test_a_session_ends_12_hours_after_sign_in() -> None:
    value = s.encode(s.new_session(TENANT, now=NOW), SECRET)
    assert s.decode(value, SECRET, now=NOW + 12 * 3600 - 1) is not None
    assert s.decode(value, SECRET, now=NOW + 12 * 3600) is None
    # issued in the future (a clock set back, a forged time): not yet a session
    assert s.decode(value, SECRET, now=NOW - 60) is None


def test_a_signed_session_longer_than_12_hours_is_refused() -> None:
    long = s.Session(TENANT, NOW, NOW + 13 * 3600, s.new_nonce())
    assert s.decode(s.encode(long, SECRET), SECRET, now=NOW + 60) is None


def test_an_unknown_role_or_a_malformed_nonce_is_refused() -> None:
    bad_role = s.Session(Viewer("acme", "k_1", "admin"), NOW, NOW + 60, s.new_nonce())
    assert s.decode(s.encode(bad_role, SECRET), SECRET, now=NOW) is None
    bad_nonce = s.Session(TENANT, NOW, NOW + 60, "short")
    assert s.decode(s.encode(bad_nonce, SECRET), SECRET, now=NOW) is None


def test_the_csrf_token_is_bound_to_its_nonce_and_secret() -> None:
    nonce, other = s.new_nonce(), s.new_nonce()
    token = s.csrf_token(SECRET, nonce)
    assert s.csrf_ok(SECRET, nonce, token)
    assert not s.csrf_ok(SECRET, other, token)
    assert not s.csrf_ok(b"x" * 32, nonce, token)
    assert not s.csrf_ok(SECRET, nonce, None)
    assert not s.csrf_ok(SECRET, nonce, "")
    assert not s.csrf_ok(SECRET, nonce, token[:-1])
    assert not s.csrf_ok(SECRET, None, token)
    assert not s.csrf_ok(SECRET, "bad nonce", s.csrf_token(SECRET, "bad nonce"))
    assert not s.csrf_ok(SECRET, nonce, "é" * 64)


def test_cookies_stay_on_the_desk_away_from_scripts_and_other_sites() -> None:
    plain = s.cookie(s.SESSION_COOKIE, "v.m", secure=False, max_age=60)
    parts = plain.split("; ")
    assert parts[0] == "desk_session=v.m"
    assert {"Path=/review", "HttpOnly", "SameSite=Strict", "Max-Age=60"} <= set(parts)
    assert "Secure" not in parts
    assert "Secure" in s.cookie(s.SESSION_COOKIE, "v.m", secure=True, max_age=60).split("; ")
    cleared = s.clear(s.PRE_COOKIE, secure=True).split("; ")
    assert cleared[0] == "desk_pre=" and "Max-Age=0" in cleared and "Secure" in cleared
