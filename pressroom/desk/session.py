"""The desk's signed session cookie: who signed in, until when, the nonce its CSRF token is
bound to, and the id of the session the server keeps (``Gate.open``/``still``/``end``): the
cookie is checked with HMAC-SHA256, and only a session the server still holds makes it good, so
sign-out ends every copy of the cookie at once.

Before sign-in a signed pre-session cookie holds a random nonce whose token the sign-in form
carries, so a sign-in cannot be forged from another site, nor a nonce planted. Pure functions;
the caller gives the time.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass
from typing import Any

from pressroom.deskport import Viewer

SESSION_COOKIE = "desk_session"
PRE_COOKIE = "desk_pre"  # before sign-in: the nonce the sign-in form's token is bound to
DONE_COOKIE = "desk_done"  # what the last approve or reject did, for the page after it
COOKIE_PATH = "/review"
SESSION_S = 12 * 3600  # absolute: a session ends 12 h after sign-in, however busy
PRE_S = 3600
DONE_S = 600
MAX_COOKIE = 4096  # a value longer than a browser keeps is no cookie of ours
ROLES = ("tenant", "reviewer", "operator", "offline")
_NONCE = re.compile(r"^[A-Za-z0-9_-]{22,64}$")


@dataclass(frozen=True, slots=True)
class Session:
    viewer: Viewer
    issued: float
    expires: float
    nonce: str  # the CSRF token of this session is bound to it
    sid: str = ""  # the session the server keeps; none: good for no request


def new_nonce() -> str:
    return secrets.token_urlsafe(24)


def well_formed_nonce(value: str | None) -> bool:
    return value is not None and _NONCE.fullmatch(value) is not None


def new_session(viewer: Viewer, *, now: float, sid: str = "") -> Session:
    """A fresh session with a fresh nonce: a pre-session's nonce is never carried over."""
    return Session(viewer, now, now + SESSION_S, new_nonce(), sid)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _mac(secret: bytes, purpose: str, body: str) -> str:
    return _b64(hmac.new(secret, f"{purpose}:{body}".encode(), hashlib.sha256).digest())


def sign(secret: bytes, purpose: str, payload: dict[str, Any]) -> str:
    """``payload`` as base64url JSON, a dot, and its MAC (bound to ``purpose``)."""
    body = _b64(json.dumps(payload, separators=(",", ":"), sort_keys=True).encode())
    return f"{body}.{_mac(secret, purpose, body)}"


def unsign(secret: bytes, purpose: str, value: str | None) -> dict[str, Any] | None:
    """The payload of a value ``sign`` made with this secret and purpose; None for anything
    else (tampered, another purpose, malformed, oversized)."""
    if not value or len(value) > MAX_COOKIE or value.count(".") != 1:
        return None
    body, mac = value.split(".")
    if not hmac.compare_digest(
        _mac(secret, purpose, body).encode(), mac.encode("ascii", "replace")
    ):
        return None
    try:
        payload = json.loads(_unb64(body))
    except (ValueError, binascii.Error):
        return None
    return payload if isinstance(payload, dict) else None


def encode(session: Session, secret: bytes) -> str:
    v = session.viewer
    return sign(
        secret,
        "session",
        {
            "tenant": v.tenant,
            "key_id": v.key_id,
            "role": v.role,
            "iat": session.issued,
            "exp": session.expires,
            "nonce": session.nonce,
            "sid": session.sid,
        },
    )


def decode(value: str | None, secret: bytes, *, now: float) -> Session | None:
    """The session in a cookie, or None: not ours, altered, expired, or issued for longer than
    a session lasts."""
    p = unsign(secret, "session", value)
    if p is None:
        return None
    tenant, key_id, role = p.get("tenant"), p.get("key_id"), p.get("role")
    issued, expires, nonce = p.get("iat"), p.get("exp"), p.get("nonce")
    sid = p.get("sid", "")
    if not (
        (tenant is None or isinstance(tenant, str))
        and isinstance(key_id, str)
        and role in ROLES
        and isinstance(issued, int | float)
        and isinstance(expires, int | float)
        and isinstance(nonce, str)
        and well_formed_nonce(nonce)
        and isinstance(sid, str)
        and len(sid) <= 64
    ):
        return None
    if not issued <= now < expires or expires - issued > SESSION_S:
        return None
    return Session(Viewer(tenant, key_id, str(role)), float(issued), float(expires), nonce, sid)


def encode_pre(nonce: str, secret: bytes, *, now: float) -> str:
    """The pre-session cookie: its nonce, signed, so a planted value signs no one in."""
    return sign(secret, "pre", {"nonce": nonce, "exp": now + PRE_S})


def decode_pre(value: str | None, secret: bytes, *, now: float) -> str | None:
    """The nonce of a pre-session cookie this desk signed and that has not expired."""
    p = unsign(secret, "pre", value)
    if p is None:
        return None
    nonce, expires = p.get("nonce"), p.get("exp")
    if not isinstance(nonce, str) or not well_formed_nonce(nonce):
        return None
    if not isinstance(expires, int | float) or not now < expires <= now + PRE_S:
        return None
    return nonce


def csrf_token(secret: bytes, nonce: str) -> str:
    """The token the forms of a session (or pre-session) with this nonce carry."""
    return hmac.new(secret, f"csrf:{nonce}".encode(), hashlib.sha256).hexdigest()


def csrf_ok(secret: bytes, nonce: str | None, token: str | None) -> bool:
    if not well_formed_nonce(nonce) or not token:
        return False
    assert nonce is not None
    return hmac.compare_digest(csrf_token(secret, nonce).encode(), token.encode("utf-8", "replace"))


def cookie(name: str, value: str, *, secure: bool, max_age: int) -> str:
    """A ``Set-Cookie`` value: only this desk's paths, never to scripts, never sent from
    another site; ``Secure`` when the request came over https. ``max_age`` 0 clears it."""
    parts = [
        f"{name}={value}",
        f"Path={COOKIE_PATH}",
        f"Max-Age={max_age}",
        "HttpOnly",
        "SameSite=Strict",
    ]
    if max_age == 0:
        parts.append("Expires=Thu, 01 Jan 1970 00:00:00 GMT")
    if secure:
        parts.append("Secure")
    return "; ".join(parts)


def clear(name: str, *, secure: bool) -> str:
    return cookie(name, "", secure=secure, max_age=0)
