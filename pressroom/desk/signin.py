"""Who is at the desk: the session cookie read and asked of the gate again on every request,
a change's form checked against the session's CSRF token and the fields it may send, the
sign-in form with its pre-session cookie, and the session cookie set once a person signs in.
The cookies themselves are ``desk.session``'s; who may sit at the desk is ``desk.gate``'s."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from pressroom.desk import session as sessions
from pressroom.desk.config import DeskConfig
from pressroom.desk.pages import html_page
from pressroom.desk.session import PRE_COOKIE, SESSION_COOKIE, Session
from pressroom.deskport import Viewer
from pressroom.errors import CsrfRejected, Unauthorized
from pressroom.web.single import refuse_unknown, single_form

FORM_LIMITS: dict[str, Any] = {"max_files": 0, "max_fields": 8, "max_part_size": 1 << 20}
# the fields each desk form sends: any other is refused naming it (a misspelt field is never
# quietly ignored), like the API's
TOKEN_ONLY = frozenset({"csrf_token"})
SIGN_IN_FIELDS = frozenset({"csrf_token", "key"})
APPLY_FIELDS = frozenset({"csrf_token", "corrections"})
APPROVE_FIELDS = frozenset({"csrf_token", "confirm", "pending", "held", "acknowledge"})


def secure_cookies(request: Request, cfg: DeskConfig) -> bool:
    """``Secure`` cookies over https, and whenever the service's public URL is https (behind
    a proxy that ends TLS the request itself may look like plain http)."""
    return cfg.secure or request.url.scheme == "https"


@dataclass(frozen=True, slots=True)
class Who:
    """Who a request comes from: its live session, if any."""

    session: Session | None
    ended: bool  # a cookie came and no longer holds: clear it


async def who_is_in(request: Request, cfg: DeskConfig) -> Who:
    """The session the request's cookie holds, if the gate still lets its viewer in."""
    raw = request.cookies.get(SESSION_COOKIE)
    if raw is None:
        return Who(None, False)
    found = sessions.decode(raw, cfg.secret, now=cfg.clock())
    if found is None:
        return Who(None, True)
    viewer = await run_in_threadpool(cfg.gate.still, found.viewer, found.sid)
    if viewer is None:
        return Who(None, True)
    return Who(Session(viewer, found.issued, found.expires, found.nonce, found.sid), False)


async def signed_in_post(
    request: Request, cfg: DeskConfig, known: frozenset[str] = TOKEN_ONLY
) -> tuple[Session, Mapping[str, Any]]:
    """A change: 401 without a live session, 403 without the session's token, then 400 for
    a field the form does not send (``known``)."""
    who = await who_is_in(request, cfg)
    if who.session is None:
        raise Unauthorized("sign in at /review first; the session has ended or never began")
    form = await single_form(request, **FORM_LIMITS)
    token = form.get("csrf_token")
    if not sessions.csrf_ok(
        cfg.secret, who.session.nonce, token if isinstance(token, str) else None
    ):
        raise CsrfRejected("the form's token does not match this session; reload the page")
    refuse_unknown(form.keys(), known)
    return who.session, form


def to_sign_in(request: Request, cfg: DeskConfig, who: Who) -> Response:
    """A page that needs a session, asked for without one: to the sign-in page, clearing a
    cookie that no longer holds."""
    response = RedirectResponse("/review", status_code=303)
    if who.ended:
        set_cookie(response, sessions.clear(SESSION_COOKIE, secure=secure_cookies(request, cfg)))
    return response


def set_cookie(response: Response, header: str) -> None:
    """Add a ``Set-Cookie`` header (a response may carry several)."""
    response.headers.append("set-cookie", header)


def sign_in_page(
    request: Request, cfg: DeskConfig, *, status: int = 200, failed: bool = False
) -> Response:
    """The sign-in page: a key form whose token rides in a pre-session cookie (set unless
    the request brought a live one), or, on a desk that signs in by its printed link only,
    the page that says so."""
    title = cfg.backend.title
    if not cfg.gate.key_form:
        return html_page("sign_in.html", title, "Sign in", status=status, key_form=False)
    nonce = sessions.decode_pre(request.cookies.get(PRE_COOKIE), cfg.secret, now=cfg.clock())
    keep = nonce is not None
    if nonce is None:
        nonce = sessions.new_nonce()
    token = sessions.csrf_token(cfg.secret, nonce)
    response = html_page(
        "sign_in.html",
        title,
        "Sign in",
        status=status,
        key_form=True,
        failed=failed,
        token=token,
    )
    if not keep:
        set_cookie(
            response,
            sessions.cookie(
                PRE_COOKIE,
                sessions.encode_pre(nonce, cfg.secret, now=cfg.clock()),
                secure=secure_cookies(request, cfg),
                max_age=sessions.PRE_S,
            ),
        )
    return response


async def signed_in(request: Request, cfg: DeskConfig, viewer: Viewer) -> Response:
    """``viewer`` let in: a session opened at the gate, its cookie set, the pre-session
    cookie cleared, and back to the list."""
    now = cfg.clock()
    sid = await run_in_threadpool(
        lambda: cfg.gate.open(viewer, now=now, expires=now + sessions.SESSION_S)
    )
    fresh = sessions.new_session(viewer, now=now, sid=sid)
    response = RedirectResponse("/review", status_code=303)
    secure = secure_cookies(request, cfg)
    value = sessions.encode(fresh, cfg.secret)
    set_cookie(
        response, sessions.cookie(SESSION_COOKIE, value, secure=secure, max_age=sessions.SESSION_S)
    )
    set_cookie(response, sessions.clear(PRE_COOKIE, secure=secure))
    return response
