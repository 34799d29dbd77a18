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
import json
import time
from collections.abc import Callable, Coroutine, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from pressroom.corrections import (
    MANUAL,
    RECHECK_KINDS,
    Corrections,
    ReviewSheet,
    burned_counts,
    parse_json,
    removed_findings,
    removed_match,
    total_counts,
    unlisted_manual,
)
from pressroom.desk import session as sessions
from pressroom.deskport import DeadLetters, DeskBackend, HeldDetail, HeldItem, Viewer, Which
from pressroom.desk.gate import Gate, KeyGate
from pressroom.desk.session import DONE_COOKIE, PRE_COOKIE, SESSION_COOKIE, Session
from pressroom.desk.views import item_url as _item_url
from pressroom.desk.views import kind_class, render
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
from pressroom.web.problems import error_response
from pressroom.web.single import SingleValues, refuse_unknown, single_form

if TYPE_CHECKING:
    from pressroom.service import Services

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
# a page picture's width in pixels: any in this range is asked for, nothing outside it (400);
# a picture past 16 MP (a tall page) comes back narrower, its aspect kept (render.py)
MIN_W, MAX_W, DEFAULT_W = 16, 4000, 640
PAGE_W = 1000  # the first picture the job page asks for (desk.js asks again for its size)
THUMB_W = 160
MAX_ID = 200
STATIC = {"desk.js": "text/javascript; charset=utf-8", "desk.css": "text/css; charset=utf-8"}
# an Approved.link the page offers as a download; anything else (an offline desk's path) is
# shown as text
LINK_PREFIXES = ("https://", "http://", "/v1/", "/review/")
FORM_LIMITS: dict[str, Any] = {"max_files": 0, "max_fields": 8, "max_part_size": 1 << 20}
# the fields each desk form sends: any other is refused naming it (a misspelt field is never
# quietly ignored), like the API's
TOKEN_ONLY = frozenset({"csrf_token"})
SIGN_IN_FIELDS = frozenset({"csrf_token", "key"})
APPLY_FIELDS = frozenset({"csrf_token", "corrections"})
APPROVE_FIELDS = frozenset({"csrf_token", "confirm", "pending", "held", "acknowledge"})


@dataclass(frozen=True, slots=True)
class DeskConfig:
    """What the desk runs on: who holds the jobs, who may sign in, the key its cookies are
    signed with, and the time."""

    backend: DeskBackend
    gate: Gate
    secret: bytes
    clock: Callable[[], float] = field(default=time.time)
    secure: bool = False  # Secure cookies whatever the request's scheme (public URL is https)
    templates: str | None = None  # a folder of page templates replacing the package's


def desk_secret(signing_key: bytes) -> bytes:
    """A key of the desk's own, derived from the service's link-signing key: a session cookie
    is never a valid download signature, nor the other way round."""
    return hmac.new(signing_key, b"desk", hashlib.sha256).digest()


def config_of(request: Request) -> DeskConfig:
    """``app.state.desk``: a ``DeskConfig`` (the offline desk, tests), or a function of the
    request that builds one (the service's, set by ``pressroom.app``, built per request like
    every other route's services). The desk itself knows no store."""
    given = getattr(request.app.state, "desk", None)
    if callable(given):
        given = given(request)
    if not isinstance(given, DeskConfig):
        raise NotFound("no desk is configured here")
    return given


def service_config(backend: DeskBackend, services: Services) -> DeskConfig:
    """The desk the service runs: ``backend`` over the store, keys checked against the tenancy,
    the session cookie signed with a key derived from the link-signing key."""
    return DeskConfig(
        backend,
        KeyGate(services),
        desk_secret(services.signer.secret),
        services.clock,
        secure=services.settings.public_url.startswith("https://"),
        templates=services.settings.desk_templates or None,
    )


# --- every response: the security headers; a refusal as problem+json (or a page for a GET) ---


class DeskRoute(APIRoute):
    """Every desk answer carries the CSP and friends, refusals included."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def run(request: Request) -> Response:
            mark = _overrides.set(_templates_of(request))
            try:
                try:
                    response = await handler(request)
                except PressroomError as exc:
                    response = _refusal(request, exc)
            finally:
                _overrides.reset(mark)
            response.headers.update(SECURITY_HEADERS)
            return response

        return run


# the folder of page templates replacing the package's, for the request being answered
_overrides: ContextVar[str | None] = ContextVar("desk_templates", default=None)


def _templates_of(request: Request) -> str | None:
    given = getattr(request.app.state, "desk", None)
    if isinstance(given, DeskConfig):
        return given.templates
    services = getattr(request.app.state, "services", None)
    return (services.settings.desk_templates or None) if services is not None else None


def _refusal(request: Request, exc: PressroomError) -> Response:
    """A page a person reads for a page they asked for, and for a form a browser sent (a
    second Apply while the first rebuilds: said, with the way back to the job); a problem
    for a program's request or a picture, with the same code and status, and for a failure
    of the moment when to come back."""
    picture = request.url.path.endswith(".png")
    browser = "text/html" in request.headers.get("accept", "")
    if not picture and (request.method == "GET" or browser):
        heading = "Not found" if exc.http_status == 404 else "Not possible"
        parts = request.url.path.split("/")
        back = None
        if request.method == "POST" and len(parts) >= 5 and parts[2] == "jobs":
            back = _item_url(unquote(parts[3]))
        return _page(
            "refusal.html",
            "Pressroom review",
            heading,
            status=exc.http_status,
            code=exc.code,
            message=exc.message,
            back=back,
        )
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


async def _signed_in_post(
    request: Request, cfg: DeskConfig, known: frozenset[str] = TOKEN_ONLY
) -> tuple[Session, Mapping[str, Any]]:
    """A change: 401 without a live session, 403 without the session's token, then 400 for
    a field the form does not send (``known``)."""
    who = await _who(request, cfg)
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


def _to_sign_in(request: Request, cfg: DeskConfig, who: _Who) -> Response:
    """A page that needs a session, asked for without one: to the sign-in page, clearing a
    cookie that no longer holds."""
    response = RedirectResponse("/review", status_code=303)
    if who.ended:
        _set(response, sessions.clear(SESSION_COOKIE, secure=_secure(request, cfg)))
    return response


def _set(response: Response, header: str) -> None:
    response.headers.append("set-cookie", header)


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
    return _list_page(cfg.backend.title, s.viewer, items, token, cfg.clock())


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
    refuse_unknown(form.keys(), SIGN_IN_FIELDS)
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
        return _page(
            "link_refused.html", cfg.backend.title, "Sign-in link refused", status=403, spent=spent
        )
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
        return _to_sign_in(request, cfg, who)
    s = who.session
    detail = await run_in_threadpool(cfg.backend.detail, s.viewer, _check_id(item_id))
    return _job_page(
        cfg.backend.title,
        s.viewer,
        detail,
        sessions.csrf_token(cfg.secret, s.nonce),
        cfg.clock(),
    )


@router.get("/jobs/{item_id}/pages/{n}/{which}.png")
async def page_png(
    request: Request, item_id: str, n: int, which: str, w: int = DEFAULT_W, frame: str = "page"
) -> Response:
    """A page picture ``w`` pixels wide (16 to 4,000; anything else is 400), or narrower
    where that width would make it more than 16 MP (a tall page: its aspect kept, the desk
    sizes it by CSS); at most two are drawn at a time per process, a third waits its turn
    (429 ``OVERLOADED`` with Retry-After after 30 s). ``redacted.png?frame=sheet``: the
    output's page cut and scaled to the page as the redaction read it, so the review sheet's
    boxes lie on it as on ``source.png``."""
    cfg = config_of(request)
    who = await _who(request, cfg)
    if who.session is None:
        raise Unauthorized("sign in at /review first")
    if which not in ("source", "redacted"):
        raise BadRequest("a page image is source.png or redacted.png")
    if not 1 <= n <= 100_000:
        raise BadRequest("pages are numbered from 1")
    if not MIN_W <= w <= MAX_W:
        raise BadRequest(f"w: a page picture is {MIN_W} to {MAX_W} pixels wide")
    if frame not in ("page", "sheet"):
        raise BadRequest("frame is page (the output page as it is) or sheet (aligned)")
    side: Which = "source" if which == "source" else "redacted"
    viewer = who.session.viewer
    png = await run_in_threadpool(
        cfg.backend.page_image,
        viewer,
        _check_id(item_id),
        n,
        side,
        w,
        frame == "sheet" and side == "redacted",
    )
    return Response(png, media_type="image/png", headers=PRIVATE)


@router.post("/jobs/{item_id}/apply")
async def apply(request: Request, item_id: str) -> Response:
    cfg = config_of(request)
    s, form = await _signed_in_post(request, cfg, APPLY_FIELDS)
    raw = form.get("corrections")
    if not isinstance(raw, str):
        raise BadRequest("corrections: the form carries no corrections field")
    corrections = Corrections.parse(parse_json(raw))
    await run_in_threadpool(cfg.backend.apply, s.viewer, _check_id(item_id), corrections)
    return RedirectResponse(_item_url(item_id), status_code=303)


@router.post("/jobs/{item_id}/approve")
async def approve(request: Request, item_id: str) -> Response:
    """Approve in two steps: a form without ``confirm=yes`` (the button, Shift+A, a plain
    client) gets the confirmation page, which names what will be published and whose form
    posts here again with ``confirm=yes``."""
    cfg = config_of(request)
    s, form = await _signed_in_post(request, cfg, APPROVE_FIELDS)
    item_id = _check_id(item_id)
    detail = await run_in_threadpool(cfg.backend.detail, s.viewer, item_id)
    found_again = _found_again(detail)
    confirmed = form.get("confirm") == "yes"
    if confirmed and form.get("held") != _held_version(detail):
        # the copy the confirmation named is not the one held now (another tab applied
        # corrections, a retry changed it): nothing is published unseen
        raise Conflict("the held copy changed since this step was shown; look at it again")
    unacknowledged = (
        confirmed and found_again is not None and form.get("acknowledge") != ACKNOWLEDGE
    )
    if not confirmed or unacknowledged:
        pending = form.get("pending")
        unapplied = int(pending) if isinstance(pending, str) and pending.isdigit() else 0
        token = sessions.csrf_token(cfg.secret, s.nonce)
        return _page(
            "confirm.html",
            cfg.backend.title,
            f"Approve job {detail.item.label or detail.item.id}?",
            # sent without the acknowledgement: the same step again, saying what it needs
            status=400 if unacknowledged else 200,
            viewer=s.viewer,
            token=token,
            item=detail.item,
            **_published(detail),
            unapplied=min(unapplied, 9999),
            held_version=_held_version(detail),
            found_again=found_again,
            acknowledge=ACKNOWLEDGE,
            unacknowledged=unacknowledged,
        )
    done = await run_in_threadpool(cfg.backend.approve, s.viewer, item_id)
    return _done(request, cfg, s, item_id, "approved", done.message, done.link)


@router.get("/jobs/{item_id}/redrive")
async def redrive_page(request: Request, item_id: str) -> Response:
    """The dashboard's Redrive button lands here: an operator's session sees what will be
    sent round again and confirms it with the session's token (the dashboard, readable from
    loopback without a key, holds no session and acts on nothing)."""
    cfg = config_of(request)
    who = await _who(request, cfg)
    if who.session is None:
        return _to_sign_in(request, cfg, who)
    s = who.session
    dead = await run_in_threadpool(_dead_letters(cfg).dead_letter, s.viewer, _check_id(item_id))
    return _page(
        "redrive.html",
        cfg.backend.title,
        f"Redrive job {dead.label or dead.id}?",
        viewer=s.viewer,
        token=sessions.csrf_token(cfg.secret, s.nonce),
        dead=dead,
    )


@router.post("/jobs/{item_id}/redrive")
async def redrive(request: Request, item_id: str) -> Response:
    cfg = config_of(request)
    s, _form = await _signed_in_post(request, cfg)
    await run_in_threadpool(_dead_letters(cfg).redrive, s.viewer, _check_id(item_id))
    message = "Sent round again: it waits in its lane with its attempts reset."
    return _done(request, cfg, s, item_id, "redriven", message, None)


def _dead_letters(cfg: DeskConfig) -> DeadLetters:
    if not isinstance(cfg.backend, DeadLetters):
        raise NotFound("this desk has no queue to redrive from")
    return cfg.backend


def _published(detail: HeldDetail) -> dict[str, Any]:
    """What the held copy burns, as the approve step names it: by class over the document
    and by page (``burned_counts``, the count the desk and the held reason use)."""
    if detail.sheet is None:
        return {"counts": dict(detail.item.counts), "by_page": []}
    by_page = burned_counts(detail.sheet)
    return {
        "counts": total_counts(by_page),
        "by_page": [{"page": p, "counts": kinds} for p, kinds in by_page.items()],
    }


# what the approve step's checkbox sends for a copy a check found something again in
ACKNOWLEDGE = "leak"


def _found_again(detail: HeldDetail) -> list[dict[str, Any]] | None:
    """What the check that held the copy found again, for the approve step to name, by page
    and class with counts; None when no acknowledgement is asked (no leak hold, nothing found
    again). A leak hold that knows no place (a value in the file's objects) is one line with
    no page."""
    sheet = detail.sheet
    counts = sheet.rechecked_counts() if sheet is not None else {}
    if not counts and detail.item.reason_code != "REDACTION_LEAK":
        return None
    return [
        {"page": page, "counts": dict(sorted(kinds.items()))}
        for page, kinds in sorted(counts.items())
    ]


def _held_version(detail: HeldDetail) -> str:
    """Which held copy a confirmation is for: when it was held, why, after how many
    decisions (an Apply holds a new copy, and records itself)."""
    item = detail.item
    return f"{item.held_since!r}/{item.state}/{item.reason_code}/{len(detail.decisions)}"


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
    fresh = p is not None and p.get("nonce") == s.nonce and float(p.get("exp") or 0) > cfg.clock()
    return _page(
        "done.html",
        cfg.backend.title,
        "Decided",
        viewer=s.viewer,
        token=token,
        outcome=_outcome(p) if p is not None and fresh else None,
    )


@router.get("/static/{name}")
async def static_file(name: str) -> Response:
    media = STATIC.get(name)
    if media is None:
        raise NotFound("no such file")
    data = resources.files("pressroom.desk").joinpath("static", name).read_bytes()
    return Response(data, media_type=media, headers={"Cache-Control": "no-cache"})


def desk_app(config: DeskConfig, *, title: str = "Pressroom review") -> FastAPI:
    """The offline desk: only /review, with the API's problem+json answers."""
    from pressroom.web.problems import install_error_handlers

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


# --- HTML: the pages come from template files (``desk.views``), autoescaped ---------------


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status, headers={"Cache-Control": "no-store"})


def _who_shown(viewer: Viewer | None, token: str | None) -> dict[str, str] | None:
    if viewer is None or token is None:
        return None
    whom = {
        "operator": "operator (every tenant)",
        "offline": "this computer",
        "reviewer": f"reviewer for tenant {viewer.tenant}",
    }.get(viewer.role, f"tenant {viewer.tenant}")
    return {"whom": whom, "key_id": viewer.key_id, "token": token}


def _page(
    name: str,
    title: str,
    heading: str,
    *,
    status: int = 200,
    viewer: Viewer | None = None,
    token: str | None = None,
    refresh: int | None = None,
    **values: Any,
) -> HTMLResponse:
    text = render(
        name,
        _overrides.get(),
        title=title,
        heading=heading,
        who=_who_shown(viewer, token),
        token=token,
        refresh=refresh,
        **values,
    )
    return _html(text, status)


def _sign_in(
    request: Request, cfg: DeskConfig, *, status: int = 200, failed: bool = False
) -> Response:
    title = cfg.backend.title
    if not cfg.gate.key_form:
        return _page("sign_in.html", title, "Sign in", status=status, key_form=False)
    nonce = sessions.decode_pre(request.cookies.get(PRE_COOKIE), cfg.secret, now=cfg.clock())
    keep = nonce is not None
    if nonce is None:
        nonce = sessions.new_nonce()
    token = sessions.csrf_token(cfg.secret, nonce)
    response = _page(
        "sign_in.html",
        title,
        "Sign in",
        status=status,
        key_form=True,
        failed=failed,
        token=token,
    )
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


def _list_page(
    title: str, viewer: Viewer, items: list[HeldItem], token: str, now: float
) -> HTMLResponse:
    n = len(items)
    return _page(
        "list.html",
        title,
        f"{n} held job{'s' if n != 1 else ''}",
        viewer=viewer,
        token=token,
        items=items,
        every=viewer.tenant is None,
        now=now,
    )


Points = tuple[float, float, float, float]


def _box_attr(box: Points) -> str:
    return " ".join(f"{round(v, 2):g}" for v in box)


@dataclass(slots=True)
class _Item:
    """One thing the reviewer may press on a page: a finding, a removed area no finding
    matches any more, or an every-occurrence area applied before. Drawn as one box per line
    of its words; listed once in the rail."""

    kind: str
    box: Points  # its whole box: what a removed correction sends
    parts: tuple[Points, ...]  # one box per line: what is drawn (what the build burns)
    finding: str  # the id its boxes share (``data-finding``)
    origin: str  # finding | kept | applied
    removed: bool = False
    doubt: bool = False
    counted: bool = True  # counted in what will be burned (an every area's words are)
    locked: bool = False  # burned for another correction's sake: not a toggle of its own
    group: str = ""


def _items(sheet: ReviewSheet, page: int) -> list[_Item]:
    """What stands on a page for the reviewer, in the order the rail lists it: findings (a
    removed one shown kept, as ``removed_findings`` decides for the build), removed areas no
    finding matches any more, and the every-occurrence areas applied before. A box drawn by
    hand before is a finding of class ``manual`` in the sheet: shown once, as applied."""
    applied = sheet.corrections
    gone = removed_findings(sheet)
    drawn = {a.box for a in applied.manual if a.page == page}
    out: list[_Item] = []
    matched: list[Points] = []
    for i, f in enumerate(sheet.findings):
        if f.page != page:
            continue
        removed = i in gone
        if removed:
            matched.append(f.box)
        by_hand = f.kind == MANUAL and f.box in drawn
        out.append(
            _Item(
                f.kind,
                f.box,
                f.parts,
                "",
                "applied" if by_hand else "finding",
                removed=removed,
                doubt=f.doubt,
                # the words of an every-occurrence area: burned while the area stands
                locked=f.kind == MANUAL and not by_hand,
            )
        )
    for a in unlisted_manual(sheet):
        if a.page == page:
            out.append(_Item(MANUAL, a.box, (a.box,), "", "applied"))
    for r in (a.box for a in applied.removed if a.page == page):
        if removed_match(matched, r) is None:
            out.append(_Item("finding", r, (r,), "", "kept", removed=True, counted=False))
    for a in applied.every:
        if a.page == page:
            out.append(_Item("every", a.box, (a.box,), "", "applied", counted=False))
    for n, item in enumerate(out, 1):
        prefix = {"kept": "k", "applied": "e" if item.kind == "every" else "m"}.get(
            item.origin, "f"
        )
        item.finding = f"{prefix}{page}-{n}"
    _group(out, page)
    return out


def _group(items: list[_Item], page: int) -> None:
    """Findings whose boxes overlap (an address and the postcode found inside it) form one
    group, ``g{page}-{k}``: listed together, each still its own toggle."""
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    # by the boxes of their lines: a wrapped name's whole box spans every word on the lines
    # between its two parts, which are no part of it
    for i, a in enumerate(items):
        for j in range(i + 1, len(items)):
            if any(_overlap(p, q) for p in a.parts for q in items[j].parts):
                parent[root(j)] = root(i)
    sizes: dict[int, int] = {}
    for i in range(len(items)):
        sizes[root(i)] = sizes.get(root(i), 0) + 1
    names: dict[int, str] = {}
    for i, item in enumerate(items):
        r = root(i)
        if sizes[r] > 1:
            item.group = names.setdefault(r, f"g{page}-{len(names) + 1}")


def _overlap(a: Points, b: Points) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _state(item: _Item) -> str:
    return "kept" if item.removed else "doubt" if item.doubt else "burned"


def _what(item: _Item) -> str:
    what = {"every": "every-occurrence area", MANUAL: "manual box"}.get(
        item.kind, f"{item.kind} box"
    )
    return f"doubtful {what}" if item.doubt else what


def _box(page: int, number: int, item: _Item, line: int, part: Points) -> dict[str, Any]:
    """One box over the page as the template draws it: a button with no text on it (the class
    is named in the findings rail beside the page and in the button's accessible name), one
    per line of its finding, all pressed together."""
    ident = f"{_what(item)} {number} on page {page}"
    if item.locked:
        aria = f"{ident}: burned for an every-occurrence area; remove that area to keep it"
    elif item.removed:
        aria = f"{ident}: removed, the text stays; press to redact it again"
    else:
        aria = f"{ident}: press to remove; the text stays"
    classes = (
        f"box {kind_class(item.kind)}"
        + (" doubt" if item.doubt else "")
        + (" removed" if item.removed else "")
        + (" member" if item.group else "")
    )
    return {
        "number": number,
        "line": line,
        "testid": f"box-{page}-{number}" + (f"-{line}" if line > 1 else ""),
        "kind": item.kind,
        "name": "finding" if item.origin == "kept" else item.kind,
        "origin": item.origin,
        "box": _box_attr(part),
        "removes": _box_attr(item.box),
        "finding": item.finding,
        "group": item.group,
        "counted": 1 if item.counted else 0,
        "locked": item.locked,
        "ident": ident,
        "aria": aria,
        "classes": classes,
        "removed": item.removed,
        "state": _state(item),
        "shown": "kept" if item.removed else "doubt, burned" if item.doubt else "burned",
    }


def _entry(page: int, number: int, item: _Item, members: int) -> dict[str, Any]:
    """A finding's line in the rail: its class, page and state, and the place of its words
    for a crop of the page picture (never the words themselves)."""
    return {
        "number": number,
        "testid": f"finding-{page}-{number}",
        "for": f"box-{page}-{number}",
        "kind": item.kind,
        "name": "finding" if item.origin == "kept" else item.kind,
        "finding": item.finding,
        "crop": _box_attr(item.box),
        "group": item.group,
        "members": members,
        "locked": item.locked,
        "state": _state(item),
        "shown": "kept" if item.removed else "doubt, burned" if item.doubt else "burned",
    }


def _page_items(sheet: ReviewSheet, page: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The page's boxes (one per line) and its rail entries (one per item, a group's members
    together, the group's first carrying how many there are)."""
    items = _items(sheet, page)
    boxes = [
        _box(page, n, item, line, part)
        for n, item in enumerate(items, 1)
        for line, part in enumerate(item.parts, 1)
    ]
    size: dict[str, int] = {}
    for item in items:
        if item.group:
            size[item.group] = size.get(item.group, 0) + 1
    order: list[tuple[int, _Item]] = []
    placed: set[str] = set()
    numbered = list(enumerate(items, 1))
    for n, item in numbered:
        if not item.group:
            order.append((n, item))
        elif item.group not in placed:
            placed.add(item.group)
            order += [(m, other) for m, other in numbered if other.group == item.group]
    entries = []
    seen: set[str] = set()
    for n, item in order:
        first = bool(item.group) and item.group not in seen
        seen.add(item.group)
        entries.append(_entry(page, n, item, size[item.group] if first else 0))
    return boxes, entries


def _again(sheet: ReviewSheet, page: int) -> list[dict[str, Any]]:
    """What the check that held the copy found again on a page: boxes of their own kind,
    drawn over the page and listed in the rail, never a correction (pressing one changes
    nothing: what stands there is for the reviewer to see, then remove or approve)."""
    out: list[dict[str, Any]] = []
    for f in (f for f in sheet.rechecked if f.page == page):
        number = len(out) + 1
        what = RECHECK_KINDS.get(f.kind, f"{f.kind} found again on the output")
        out.append(
            {
                "number": number,
                "kind": f.kind,
                "box": _box_attr(f.box),
                "finding": f"a{page}-{number}",
                "state": "leak",
                "classes": f"box again {kind_class(f.kind)}",
                "ident": f"found again {number} on page {page}: {what}",
            }
        )
    return out


def _job_page(
    title: str, viewer: Viewer, detail: HeldDetail, token: str, now: float
) -> HTMLResponse:
    item = detail.item
    url = _item_url(item.id)
    sheet = detail.sheet
    rebuilding = item.state == "rebuilding"
    count = len(sheet.pages) if sheet is not None and sheet.pages else (item.pages or 1)
    by_page = burned_counts(sheet) if sheet is not None else {}
    pages = []
    for n in range(1, count + 1):
        sp = sheet.pages[n - 1] if sheet is not None and n <= len(sheet.pages) else None
        source = f"{url}/pages/{n}/source.png"
        # the output's page cut to the page as the redaction read it (its factor and offset
        # on the output page undone): a box lies on the same words in both pictures
        output = f"{url}/pages/{n}/redacted.png" + ("?frame=sheet" if sp is not None else "")
        boxes, entries = _page_items(sheet, n) if sheet is not None and sp is not None else ([], [])
        pages.append(
            {
                "n": n,
                "size": (f"{sp.width_pt:g}", f"{sp.height_pt:g}") if sp is not None else None,
                "boxes": boxes,
                "entries": entries,
                "count": sum(by_page.get(n, {}).values()),
                "again": _again(sheet, n) if sheet is not None and sp is not None else [],
                "source": source,
                "output": output,
                "first": f"{source}?w={PAGE_W}",
                "thumb": f"{source}?w={THUMB_W}",
            }
        )
    current = (sheet.corrections if sheet is not None else Corrections()).as_json()
    return _page(
        "job.html",
        title,
        f"Job {item.label or item.id}",
        viewer=viewer,
        token=token,
        refresh=2 if rebuilding else None,
        item=item,
        now=now,
        show_tenant=viewer.tenant is None,
        decisions=detail.decisions,
        rebuilding=rebuilding,
        editable=detail.can_apply and sheet is not None,
        can_apply=detail.can_apply,
        pages=pages,
        counts=total_counts(by_page) if sheet is not None else dict(item.counts),
        by_page=[{"page": p, "counts": kinds} for p, kinds in by_page.items()],
        again=len(sheet.rechecked) if sheet is not None else 0,
        corrections_json=json.dumps(current, separators=(",", ":")),
    )


def _outcome(p: Mapping[str, Any]) -> dict[str, Any]:
    link = p.get("link")
    link = link if isinstance(link, str) and link else None
    return {
        "id": str(p.get("id", "")),
        "action": str(p.get("action", "")),
        "message": str(p.get("message", "")),
        "link": link,
        "linkable": link is not None and link.startswith(LINK_PREFIXES),
    }
