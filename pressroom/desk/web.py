"""/review: the reviewer's desk as server-rendered pages over any ``DeskBackend``.

A signed, stateless session cookie (``desk.session``) says who is at the desk; every request
asks the gate again whether that person still may be (a revoked key's session ends at once).
Every change is a form POST carrying the session's CSRF token. The pages show ids, codes, the
check's message, classes, counts and times — never document text — and load nothing but this
package's own script and style sheet (the CSP allows nothing else).
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import re
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from pressroom.api.responses import error_response
from pressroom.api.single import SingleValues, single_form
from pressroom.corrections import MANUAL, Corrections, ReviewSheet, removed_match
from pressroom.desk import session as sessions
from pressroom.desk.backend import DeskBackend, HeldDetail, HeldItem, Viewer, Which
from pressroom.desk.gate import Gate, KeyGate
from pressroom.desk.session import DONE_COOKIE, PRE_COOKIE, SESSION_COOKIE, Session
from pressroom.errors import (
    BadRequest,
    Conflict,
    CsrfRejected,
    Forbidden,
    NotFound,
    PressroomError,
    Refused,
    TransientError,
    Unauthorized,
)

CSP = (
    "default-src 'none'; img-src 'self'; script-src 'self'; style-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
PRIVATE = {"Cache-Control": "private, no-store"}
MIN_W, MAX_W, DEFAULT_W = 200, 1600, 640
PAGE_W = 800  # the width the job page asks for: a column of a 1280 px screen, sharp
MAX_ID = 200
STATIC = {"desk.js": "text/javascript; charset=utf-8", "desk.css": "text/css; charset=utf-8"}
# an Approved.link the page offers as a download; anything else (an offline desk's path) is
# shown as text
LINK_PREFIXES = ("https://", "http://", "/v1/", "/review/")
FORM_LIMITS: dict[str, Any] = {"max_files": 0, "max_fields": 8, "max_part_size": 1 << 20}


@dataclass(frozen=True, slots=True)
class DeskConfig:
    """What the desk runs on: who holds the jobs, who may sign in, the key its cookies are
    signed with, and the time."""

    backend: DeskBackend
    gate: Gate
    secret: bytes
    clock: Callable[[], float] = field(default=time.time)
    secure: bool = False  # Secure cookies whatever the request's scheme (public URL is https)


def desk_secret(signing_key: bytes) -> bytes:
    """A key of the desk's own, derived from the service's link-signing key: a session cookie
    is never a valid download signature, nor the other way round."""
    return hmac.new(signing_key, b"desk", hashlib.sha256).digest()


def config_of(request: Request) -> DeskConfig:
    """``app.state.desk`` when set (the offline desk, tests); else the service's own, built
    per request like every other route's services."""
    given = getattr(request.app.state, "desk", None)
    if given is not None:
        assert isinstance(given, DeskConfig)
        return given
    # the service's backend, loaded when first used (it brings the review service's imports)
    from pressroom.desk.service import ServiceDesk

    services = request.app.state.services
    backend: DeskBackend = ServiceDesk(services)
    return DeskConfig(
        backend,
        KeyGate(services),
        desk_secret(services.signer.secret),
        services.clock,
        secure=services.settings.public_url.startswith("https://"),
    )


# --- every response: the security headers; a refusal as problem+json (or a page for a GET) ---


class DeskRoute(APIRoute):
    """Every desk answer carries the CSP and friends, refusals included."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def run(request: Request) -> Response:
            try:
                response = await handler(request)
            except PressroomError as exc:
                response = _refusal(request, exc)
            response.headers.update(SECURITY_HEADERS)
            return response

        return run


def _refusal(request: Request, exc: PressroomError) -> Response:
    """A page a person reads for a page they asked for; a problem for a form sent or a
    picture, with the same code and, for a failure of the moment, when to come back."""
    if request.method == "GET" and not request.url.path.endswith(".png"):
        body = f'<p data-testid="refusal"><code>{_e(exc.code)}</code> {_e(exc.message)}</p>'
        body += '<p><a href="/review">Back to the held jobs</a></p>'
        heading = "Not found" if exc.http_status == 404 else "Not possible"
        return _html(_shell("Pressroom review", heading, body), exc.http_status)
    headers = None
    if isinstance(exc, Refused):
        headers = {"Retry-After": str(exc.retry_after)}
    elif isinstance(exc, TransientError):
        headers = {"Retry-After": "5"}
    return error_response(exc.code, exc.message, exc.http_status, headers)


router = APIRouter(prefix="/review", include_in_schema=False, route_class=DeskRoute)


# --- sessions ------------------------------------------------------------------------------


def _secure(request: Request, cfg: DeskConfig) -> bool:
    """``Secure`` cookies over https, and whenever the service's public URL is https (behind
    a proxy that ends TLS the request itself may look like plain http)."""
    return cfg.secure or request.url.scheme == "https"


@dataclass(frozen=True, slots=True)
class _Who:
    session: Session | None
    ended: bool  # a cookie came and no longer holds: clear it


async def _who(request: Request, cfg: DeskConfig) -> _Who:
    raw = request.cookies.get(SESSION_COOKIE)
    if raw is None:
        return _Who(None, False)
    found = sessions.decode(raw, cfg.secret, now=cfg.clock())
    if found is None:
        return _Who(None, True)
    viewer = await run_in_threadpool(cfg.gate.still, found.viewer, found.sid)
    if viewer is None:
        return _Who(None, True)
    return _Who(Session(viewer, found.issued, found.expires, found.nonce, found.sid), False)


async def _signed_in_post(request: Request, cfg: DeskConfig) -> tuple[Session, Mapping[str, Any]]:
    """A change: 401 without a live session, 403 without the session's token."""
    who = await _who(request, cfg)
    if who.session is None:
        raise Unauthorized("sign in at /review first; the session has ended or never began")
    form = await single_form(request, **FORM_LIMITS)
    token = form.get("csrf_token")
    if not sessions.csrf_ok(
        cfg.secret, who.session.nonce, token if isinstance(token, str) else None
    ):
        raise CsrfRejected("the form's token does not match this session; reload the page")
    return who.session, form


def _set(response: Response, header: str) -> None:
    response.headers.append("set-cookie", header)


def _item_url(item_id: str) -> str:
    return "/review/jobs/" + quote(item_id, safe="")


def _check_id(item_id: str) -> str:
    if not item_id or len(item_id) > MAX_ID:
        raise BadRequest("no such held job id")
    return item_id


# --- routes ----------------------------------------------------------------------------------


@router.get("")
async def desk_home(request: Request) -> Response:
    cfg = config_of(request)
    who = await _who(request, cfg)
    if who.session is None:
        response = _sign_in(request, cfg)
        if who.ended:
            _set(response, sessions.clear(SESSION_COOKIE, secure=_secure(request, cfg)))
        return response
    s = who.session
    items = await run_in_threadpool(cfg.backend.held, s.viewer)
    token = sessions.csrf_token(cfg.secret, s.nonce)
    return _html(_list_page(cfg.backend.title, s.viewer, items, token, cfg.clock()))


@router.post("/sign-in")
async def sign_in(request: Request) -> Response:
    cfg = config_of(request)
    if not cfg.gate.key_form:
        raise Forbidden("this desk signs in only by the link printed when it started")
    nonce = sessions.decode_pre(request.cookies.get(PRE_COOKIE), cfg.secret, now=cfg.clock())
    form = await single_form(request, **FORM_LIMITS)
    token, key = form.get("csrf_token"), form.get("key")
    if not sessions.csrf_ok(cfg.secret, nonce, token if isinstance(token, str) else None):
        raise CsrfRejected("the sign-in form's token does not match; reload the page")
    viewer = None
    if isinstance(key, str):
        viewer = await run_in_threadpool(cfg.gate.sign_in, key)
    if viewer is None:
        return _sign_in(request, cfg, status=401, failed=True)
    return await _signed_in(request, cfg, viewer)


@router.get("/sign-in")
async def sign_in_by_link(request: Request) -> Response:
    """The offline desk's printed link; a key desk sends the browser to its form."""
    cfg = config_of(request)
    if cfg.gate.key_form:
        return RedirectResponse("/review", status_code=303)
    token = request.query_params.get("token") or ""
    viewer = await run_in_threadpool(cfg.gate.sign_in, token) if token else None
    if viewer is None:
        spent = bool(getattr(cfg.gate, "spent", False))
        text = (
            "This sign-in link was used already: it opens the desk once. Restart the desk "
            "for a new link."
            if spent
            else "This sign-in link is not right. Open the link the desk printed when it started."
        )
        body = f'<p data-testid="link-refused">{_e(text)}</p>'
        return _html(_shell(cfg.backend.title, "Sign-in link refused", body), 403)
    return await _signed_in(request, cfg, viewer)


async def _signed_in(request: Request, cfg: DeskConfig, viewer: Viewer) -> Response:
    now = cfg.clock()
    sid = await run_in_threadpool(
        lambda: cfg.gate.open(viewer, now=now, expires=now + sessions.SESSION_S)
    )
    fresh = sessions.new_session(viewer, now=now, sid=sid)
    response = RedirectResponse("/review", status_code=303)
    secure = _secure(request, cfg)
    value = sessions.encode(fresh, cfg.secret)
    _set(
        response, sessions.cookie(SESSION_COOKIE, value, secure=secure, max_age=sessions.SESSION_S)
    )
    _set(response, sessions.clear(PRE_COOKIE, secure=secure))
    return response


@router.post("/sign-out")
async def sign_out(request: Request) -> Response:
    cfg = config_of(request)
    session, _form = await _signed_in_post(request, cfg)
    # ended on the server: a saved copy of the cookie opens nothing from now on
    await run_in_threadpool(cfg.gate.end, session.sid)
    response = RedirectResponse("/review", status_code=303)
    for name in (SESSION_COOKIE, DONE_COOKIE):
        _set(response, sessions.clear(name, secure=_secure(request, cfg)))
    return response


@router.get("/jobs/{item_id}")
async def job_page(request: Request, item_id: str) -> Response:
    cfg = config_of(request)
    who = await _who(request, cfg)
    if who.session is None:
        response = RedirectResponse("/review", status_code=303)
        if who.ended:
            _set(response, sessions.clear(SESSION_COOKIE, secure=_secure(request, cfg)))
        return response
    s = who.session
    detail = await run_in_threadpool(cfg.backend.detail, s.viewer, _check_id(item_id))
    token = sessions.csrf_token(cfg.secret, s.nonce)
    return _html(_job_page(cfg.backend.title, s.viewer, detail, token, cfg.clock()))


@router.get("/jobs/{item_id}/pages/{n}/{which}.png")
async def page_png(
    request: Request, item_id: str, n: int, which: str, w: int = DEFAULT_W
) -> Response:
    cfg = config_of(request)
    who = await _who(request, cfg)
    if who.session is None:
        raise Unauthorized("sign in at /review first")
    if which not in ("source", "redacted"):
        raise BadRequest("a page image is source.png or redacted.png")
    if not 1 <= n <= 100_000:
        raise BadRequest("pages are numbered from 1")
    width = min(MAX_W, max(MIN_W, w))
    side: Which = "source" if which == "source" else "redacted"
    viewer = who.session.viewer
    png = await run_in_threadpool(
        cfg.backend.page_image, viewer, _check_id(item_id), n, side, width
    )
    return Response(png, media_type="image/png", headers=PRIVATE)


@router.post("/jobs/{item_id}/apply")
async def apply(request: Request, item_id: str) -> Response:
    cfg = config_of(request)
    s, form = await _signed_in_post(request, cfg)
    raw = form.get("corrections")
    if not isinstance(raw, str):
        raise BadRequest("corrections: the form carries no corrections field")
    try:
        parsed = json.loads(raw)
    except ValueError:
        raise BadRequest("corrections: not JSON") from None
    corrections = Corrections.parse(parsed)
    await run_in_threadpool(cfg.backend.apply, s.viewer, _check_id(item_id), corrections)
    return RedirectResponse(_item_url(item_id), status_code=303)


@router.post("/jobs/{item_id}/approve")
async def approve(request: Request, item_id: str) -> Response:
    """Approve in two steps: a form without ``confirm=yes`` (the button, Shift+A, a plain
    client) gets the confirmation page, which names what will be published and whose form
    posts here again with ``confirm=yes``."""
    cfg = config_of(request)
    s, form = await _signed_in_post(request, cfg)
    item_id = _check_id(item_id)
    detail = await run_in_threadpool(cfg.backend.detail, s.viewer, item_id)
    if form.get("confirm") != "yes":
        pending = form.get("pending")
        unapplied = int(pending) if isinstance(pending, str) and pending.isdigit() else 0
        token = sessions.csrf_token(cfg.secret, s.nonce)
        return _html(_confirm_page(cfg.backend.title, s.viewer, detail, token, unapplied))
    if form.get("held") != _held_version(detail):
        # the copy the confirmation named is not the one held now (another tab applied
        # corrections, a retry changed it): nothing is published unseen
        raise Conflict("the held copy changed since this step was shown; look at it again")
    done = await run_in_threadpool(cfg.backend.approve, s.viewer, item_id)
    return _done(request, cfg, s, item_id, "approved", done.message, done.link)


def _held_version(detail: HeldDetail) -> str:
    """Which held copy a confirmation is for: when it was held, why, after how many
    decisions (an Apply holds a new copy, and records itself)."""
    item = detail.item
    return f"{item.held_since!r}/{item.state}/{item.reason_code}/{len(detail.decisions)}"


def _confirm_page(
    title: str, viewer: Viewer, detail: HeldDetail, token: str, unapplied: int
) -> str:
    item = detail.item
    url = _item_url(item.id)
    pages = item.pages if item.pages is not None else "—"
    warn = (
        f'<p class="error" role="alert" data-testid="unapplied">{min(unapplied, 9999)} '
        "change(s) made on the page were not applied: they are not in what will be published. "
        "Go back and apply them first, or publish the held copy as it is.</p>"
        if unapplied
        else ""
    )
    body = (
        f'<p data-testid="confirm-what">Publish the held copy of job <code>{_e(item.id)}</code>'
        f" as the desk shows it now: {_e(pages)} page(s), the boxes burned in it "
        f"(findings: {_counts(item.counts)}), held as <code>{_e(item.reason_code)}</code>. "
        "Once published it is released to the tenant and cannot be taken back.</p>"
        f"{warn}"
        f'<form method="post" action="{_e(url)}/approve" data-testid="confirm-form">'
        f'<input type="hidden" name="csrf_token" value="{_e(token)}">'
        '<input type="hidden" name="confirm" value="yes">'
        f'<input type="hidden" name="held" value="{_e(_held_version(detail))}">'
        '<button type="submit" data-testid="confirm-approve" autofocus>Publish it</button> '
        f'<a href="{_e(url)}" data-testid="confirm-cancel">Back to the job</a></form>'
    )
    return _shell(title, f"Approve job {item.id}?", body, viewer=viewer, token=token)


@router.post("/jobs/{item_id}/reject")
async def reject(request: Request, item_id: str) -> Response:
    cfg = config_of(request)
    s, _form = await _signed_in_post(request, cfg)
    await run_in_threadpool(cfg.backend.reject, s.viewer, _check_id(item_id))
    message = "Rejected: the held output is not released."
    return _done(request, cfg, s, item_id, "rejected", message, None)


def _done(
    request: Request,
    cfg: DeskConfig,
    s: Session,
    item_id: str,
    action: str,
    message: str,
    link: str | None,
) -> Response:
    """303 to /review/done, which says what happened; the outcome rides in a short-lived
    signed cookie bound to this session (never in the URL, which logs keep)."""
    now = cfg.clock()
    value = sessions.sign(
        cfg.secret,
        "done",
        {
            "id": item_id,
            "action": action,
            "message": message,
            "link": link,
            "nonce": s.nonce,
            "exp": now + sessions.DONE_S,
        },
    )
    response = RedirectResponse("/review/done", status_code=303)
    secure = _secure(request, cfg)
    _set(response, sessions.cookie(DONE_COOKIE, value, secure=secure, max_age=sessions.DONE_S))
    return response


@router.get("/done")
async def done_page(request: Request) -> Response:
    cfg = config_of(request)
    who = await _who(request, cfg)
    if who.session is None:
        return RedirectResponse("/review", status_code=303)
    s = who.session
    p = sessions.unsign(cfg.secret, "done", request.cookies.get(DONE_COOKIE))
    token = sessions.csrf_token(cfg.secret, s.nonce)
    if p is None or p.get("nonce") != s.nonce or not float(p.get("exp") or 0) > cfg.clock():
        body = '<p data-testid="outcome">Nothing decided in this session lately.</p>'
    else:
        body = _outcome(p)
    body += '<p><a href="/review" data-testid="back">Back to the held jobs</a></p>'
    return _html(_shell(cfg.backend.title, "Decided", body, viewer=s.viewer, token=token))


@router.get("/static/{name}")
async def static_file(name: str) -> Response:
    media = STATIC.get(name)
    if media is None:
        raise NotFound("no such file")
    data = resources.files("pressroom.desk").joinpath("static", name).read_bytes()
    return Response(data, media_type=media, headers={"Cache-Control": "no-cache"})


def desk_app(config: DeskConfig, *, title: str = "Pressroom review") -> FastAPI:
    """The offline desk: only /review, with the API's problem+json answers."""
    from pressroom.api.problems import install_error_handlers

    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None)
    # a trailing-slash redirect would build its Location from the Host header the client wrote
    app.router.redirect_slashes = False
    app.add_middleware(SingleValues)
    app.state.desk = config
    install_error_handlers(app)
    app.include_router(router)

    @app.get("/", include_in_schema=False)
    async def root() -> Response:
        return RedirectResponse("/review", status_code=303)

    return app


# --- HTML --------------------------------------------------------------------------------------


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status, headers={"Cache-Control": "no-store"})


def _shell(
    title: str,
    heading: str,
    body: str,
    *,
    viewer: Viewer | None = None,
    token: str | None = None,
    head: str = "",
) -> str:
    who = ""
    if viewer is not None and token is not None:
        whom = {
            "operator": "operator (every tenant)",
            "offline": "this computer",
            "reviewer": f"reviewer for tenant {viewer.tenant}",
        }.get(viewer.role, f"tenant {viewer.tenant}")
        who = (
            f'<span class="who">signed in: {_e(whom)}, key <code>{_e(viewer.key_id)}</code>'
            "</span>"
            '<form method="post" action="/review/sign-out" class="inline">'
            f'<input type="hidden" name="csrf_token" value="{_e(token)}">'
            '<button type="submit" data-testid="sign-out">Sign out</button></form>'
        )
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"{head}<title>{_e(heading)} · {_e(title)}</title>"
        '<link rel="stylesheet" href="/review/static/desk.css">'
        '<script src="/review/static/desk.js" defer></script></head><body>'
        f'<header><a class="home" href="/review">{_e(title)}</a>{who}</header>'
        f"<main><h1>{_e(heading)}</h1>{body}</main></body></html>"
    )


def _sign_in(
    request: Request, cfg: DeskConfig, *, status: int = 200, failed: bool = False
) -> Response:
    title = cfg.backend.title
    if not cfg.gate.key_form:
        body = (
            '<p data-testid="open-link">Open the link this desk printed when it started: it '
            "signs this browser in. The link works once.</p>"
        )
        return _html(_shell(title, "Sign in", body), status)
    nonce = sessions.decode_pre(request.cookies.get(PRE_COOKIE), cfg.secret, now=cfg.clock())
    keep = nonce is not None
    if nonce is None:
        nonce = sessions.new_nonce()
    token = sessions.csrf_token(cfg.secret, nonce)
    note = (
        '<p class="error" role="alert" data-testid="sign-in-failed">That key is unknown, '
        "expired or revoked.</p>"
        if failed
        else ""
    )
    body = (
        f"{note}<p>Sign in with an API key: a tenant's key shows that tenant's held jobs, an "
        "operator's key every tenant's.</p>"
        '<form method="post" action="/review/sign-in" class="sign-in" data-testid="sign-in">'
        f'<input type="hidden" name="csrf_token" value="{_e(token)}">'
        '<label for="key">API key</label> '
        '<input type="password" id="key" name="key" autocomplete="current-password" required> '
        '<button type="submit">Sign in</button></form>'
    )
    response = _html(_shell(title, "Sign in", body), status)
    if not keep:
        _set(
            response,
            sessions.cookie(
                PRE_COOKIE,
                sessions.encode_pre(nonce, cfg.secret, now=cfg.clock()),
                secure=_secure(request, cfg),
                max_age=sessions.PRE_S,
            ),
        )
    return response


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(at))


def _span(seconds: float) -> str:
    seconds = abs(seconds)
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    if seconds < 36 * 3600:
        return f"{round(seconds / 3600)} h"
    return f"{round(seconds / 86400)} d"


def _held(item: HeldItem, now: float) -> str:
    return "—" if item.held_since is None else f"held {_span(now - item.held_since)} ago"


def _deadline(item: HeldItem, now: float) -> str:
    if item.deadline is None:
        return "—"
    left = item.deadline - now
    rel = f"in {_span(left)}" if left > 0 else f"{_span(left)} overdue"
    return f'<time datetime="{_e(_iso(item.deadline))}">{_e(_when(item.deadline))}</time> ({rel})'


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def _counts(counts: Mapping[str, int]) -> str:
    if not counts:
        return "none"
    return ", ".join(
        f'<span class="k {_kind_class(k)}">{_e(k)}</span> {int(n)}'
        for k, n in sorted(counts.items())
    )


def _kind_class(kind: str) -> str:
    return "k-" + (re.sub(r"[^a-z0-9-]", "-", kind.lower())[:40] or "x")


def _list_page(title: str, viewer: Viewer, items: list[HeldItem], token: str, now: float) -> str:
    every = viewer.tenant is None
    rows = []
    for it in items:
        state = (
            ' <span class="state" data-testid="rebuilding">applying corrections…</span>'
            if it.state == "rebuilding"
            else ""
        )
        tenant = f"<td>{_e(it.tenant or '—')}</td>" if every else ""
        rows.append(
            f'<tr data-testid="held-row" data-item="{_e(it.id)}">'
            f'<td><a href="{_e(_item_url(it.id))}" data-testid="job-link"><code>{_e(it.id)}</code>'
            f"</a>{state}</td>{tenant}"
            f"<td><code>{_e(it.reason_code)}</code> {_e(it.reason)}</td>"
            f"<td>{_counts(it.counts)}</td><td>{_e(it.pages if it.pages is not None else '—')}</td>"
            f"<td>{_e(_held(it, now))}</td><td>{_deadline(it, now)}</td></tr>"
        )
    head = "<th>job</th>" + ("<th>tenant</th>" if every else "")
    head += "<th>why held</th><th>findings</th><th>pages</th><th>held</th><th>decide by</th>"
    if rows:
        body = (
            f'<table class="held" data-testid="held-list"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>"
        )
    else:
        body = '<p data-testid="nothing-held">Nothing is held for review.</p>'
    n = len(items)
    heading = f"{n} held job{'s' if n != 1 else ''}"
    return _shell(title, heading, body, viewer=viewer, token=token)


def _box_attr(box: tuple[float, float, float, float]) -> str:
    return " ".join(f"{round(v, 2):g}" for v in box)


def _box_button(
    page: int,
    number: int,
    kind: str,
    box: tuple[float, float, float, float],
    *,
    origin: str,
    removed: bool,
    enabled: bool,
    doubt: bool = False,
) -> str:
    label = "finding" if origin == "kept" else f"{kind}?" if doubt else kind
    what = {"every": "every-occurrence area", MANUAL: "manual box"}.get(kind, f"{kind} box")
    # a half-believed name: burned like any other, marked so the reviewer looks at it
    what = f"doubtful {what}" if doubt else what
    ident = f"{what} {number} on page {page}"
    if not enabled:
        aria = ident
    elif removed:
        aria = f"{ident}: removed, the text stays; press to redact it again"
    else:
        aria = f"{ident}: press to remove; the text stays"
    classes = (
        f"box {_kind_class(kind)}" + (" doubt" if doubt else "") + (" removed" if removed else "")
    )
    return (
        f'<button type="button" class="{classes}" data-kind="{_e(kind)}" '
        f'data-origin="{origin}" data-page="{page}" data-box="{_box_attr(box)}" '
        f'data-label="{_e(label)}" data-ident="{_e(ident)}" '
        f'data-testid="box-{page}-{number}" aria-pressed="{"true" if removed else "false"}" '
        f'aria-label="{_e(aria)}"{"" if enabled else " disabled"}>'
        f'<span class="label">{_e("kept" if removed else label)}</span></button>'
    )


def _overlay(sheet: ReviewSheet, page: int, enabled: bool) -> str:
    """The buttons over the source page: findings (a removed one shown kept), removed areas
    no finding matches any more, and the manual and every-occurrence boxes applied before."""
    applied = sheet.corrections
    removed_here = [a.box for a in applied.removed if a.page == page]
    parts: list[str] = []
    number = 0
    matched: list[tuple[float, float, float, float]] = []
    mine = [f for f in sheet.findings if f.page == page]
    # each removed area takes out the one finding the build takes out for it
    taken = {removed_match([f.box for f in mine], r) for r in removed_here} - {None}
    for n, f in enumerate(mine):
        number += 1
        gone = n in taken
        if gone:
            matched.append(f.box)
        parts.append(
            _box_button(
                page,
                number,
                f.kind,
                f.box,
                origin="finding",
                removed=gone,
                enabled=enabled,
                doubt=f.doubt,
            )
        )
    for r in removed_here:
        if removed_match(matched, r) is not None:
            continue
        number += 1
        parts.append(
            _box_button(page, number, "finding", r, origin="kept", removed=True, enabled=enabled)
        )
    for kind, areas in ((MANUAL, applied.manual), ("every", applied.every)):
        for a in areas:
            if a.page == page:
                number += 1
                parts.append(
                    _box_button(
                        page, number, kind, a.box, origin="applied", removed=False, enabled=enabled
                    )
                )
    return "".join(parts)


def _decisions(detail: HeldDetail) -> str:
    if not detail.decisions:
        return '<p class="muted" data-testid="decisions">No decisions yet.</p>'
    items = "".join(
        f"<li>{_e(d.action)} by key <code>{_e(d.key_id)}</code> at "
        f'<time datetime="{_e(_iso(d.at))}">{_e(_when(d.at))}</time></li>'
        for d in detail.decisions
    )
    return (
        f'<details data-testid="decisions"><summary>Decisions ({len(detail.decisions)})'
        f"</summary><ol>{items}</ol></details>"
    )


def _job_page(title: str, viewer: Viewer, detail: HeldDetail, token: str, now: float) -> str:
    item = detail.item
    url = _item_url(item.id)
    tenant = f" · tenant {_e(item.tenant)}" if viewer.tenant is None and item.tenant else ""
    facts = (
        f'<p class="reason" data-testid="reason">Held: <code>{_e(item.reason_code)}</code> '
        f"{_e(item.reason)}</p>"
        f'<p class="facts">findings: {_counts(item.counts)} · pages: '
        f"{_e(item.pages if item.pages is not None else '—')} · {_e(_held(item, now))} · "
        f"decide by: {_deadline(item, now)}{tenant}</p>{_decisions(detail)}"
    )
    heading = f"Job {item.id}"
    if item.state == "rebuilding":
        body = facts + (
            '<p class="rebuilding" role="status" data-testid="rebuilding">Applying corrections… '
            "this page reloads itself until the new output is ready.</p>"
        )
        return _shell(
            title,
            heading,
            body,
            viewer=viewer,
            token=token,
            head='<meta http-equiv="refresh" content="2">',
        )
    sheet = detail.sheet
    count = len(sheet.pages) if sheet is not None and sheet.pages else (item.pages or 1)
    editable = detail.can_apply and sheet is not None
    pages = []
    for n in range(1, count + 1):
        src = f"{url}/pages/{n}/source.png?w={PAGE_W}"
        out = f"{url}/pages/{n}/redacted.png?w={PAGE_W}"
        size = ""
        overlay = ""
        if sheet is not None and n <= len(sheet.pages):
            sp = sheet.pages[n - 1]
            size = f' data-width-pt="{sp.width_pt:g}" data-height-pt="{sp.height_pt:g}"'
            overlay = _overlay(sheet, n, editable)
        hidden = "" if n == 1 else " hidden"
        pages.append(
            f'<section class="page" data-page="{n}" data-testid="page-{n}"{hidden}>'
            f'<figure class="col"><figcaption>Source, page {n}</figcaption>'
            f'<div class="sheet" data-page="{n}"{size} data-testid="sheet-{n}">'
            f'<img src="{_e(src)}" alt="source page {n}, the boxes found drawn over it" '
            f'loading="lazy" draggable="false">{overlay}</div></figure>'
            f'<figure class="col"><figcaption>Redacted, page {n}</figcaption>'
            f'<div class="sheet out"><img src="{_e(out)}" alt="redacted page {n}" loading="lazy">'
            "</div></figure></section>"
        )
    csrf = f'<input type="hidden" name="csrf_token" value="{_e(token)}">'
    current = (sheet.corrections if sheet is not None else Corrections()).as_json()
    if detail.can_apply:
        apply_form = (
            f'<form method="post" action="{_e(url)}/apply" id="apply-form" '
            f'data-testid="apply-form">{csrf}'
            f'<input type="hidden" name="corrections" id="corrections" '
            f'value="{_e(json.dumps(current, separators=(",", ":")))}">'
            '<button type="submit" data-testid="apply">Apply corrections</button></form>'
        )
    else:
        apply_form = (
            '<p class="muted" data-testid="no-apply">Corrections cannot be applied here: the '
            "source is no longer kept to rebuild from. Approve or reject the output as it is.</p>"
        )
    draw = (
        '<span class="every"><input type="checkbox" id="every-next" data-testid="every-next">'
        '<label for="every-next">redact every occurrence of the words in the next box I draw'
        "</label></span>"
        if editable
        else ""
    )
    hint = (
        "Press a box to keep its text (press again to redact it); drag on the source page to "
        "draw a box. Keys: n / → next page, p / ← previous page, Shift+A approve."
        if editable
        else "Keys: n / → next page, p / ← previous page, Shift+A approve."
    )
    toolbar = (
        '<div class="toolbar">'
        '<button type="button" id="prev" data-testid="prev" aria-label="previous page">← '
        "Previous</button>"
        f'<span id="counter" data-testid="page-counter" aria-live="polite">page 1 of {count}'
        "</span>"
        '<button type="button" id="next" data-testid="next" aria-label="next page">Next →'
        f"</button>{draw}</div>"
    )
    actions = (
        f'<div class="actions">{apply_form}'
        f'<form method="post" action="{_e(url)}/approve" id="approve-form" '
        f'data-testid="approve-form">{csrf}'
        '<input type="hidden" name="pending" id="pending" value="0">'
        '<button type="submit" data-testid="approve">Approve…</button></form>'
        f'<form method="post" action="{_e(url)}/reject" id="reject-form" '
        f'data-testid="reject-form">{csrf}'
        '<button type="submit" data-testid="reject">Reject</button></form></div>'
    )
    body = (
        f'{facts}<p class="hint muted">{_e(hint)}</p><div class="bar">{toolbar}{actions}</div>'
        f'<div id="pages" data-pages="{count}" data-editable="{"1" if editable else "0"}">'
        f"{''.join(pages)}</div>"
    )
    return _shell(title, heading, body, viewer=viewer, token=token)


def _outcome(p: Mapping[str, Any]) -> str:
    item, action = str(p.get("id", "")), str(p.get("action", ""))
    out = (
        f'<p data-testid="outcome">Job <code>{_e(item)}</code> {_e(action)}. '
        f"{_e(p.get('message', ''))}</p>"
    )
    link = p.get("link")
    if isinstance(link, str) and link:
        if link.startswith(LINK_PREFIXES):
            out += (
                f'<p><a href="{_e(link)}" data-testid="download" download>'
                "Download the output</a></p>"
            )
        else:
            out += f'<p data-testid="download">Written to <code>{_e(link)}</code></p>'
    return out
