"""/review: the reviewer's desk as server-rendered pages over any ``DeskBackend``.

A signed, stateless session cookie (``desk.session``) says who is at the desk; every request
asks the gate again whether that person still may be (a revoked key's session ends at once,
``desk.signin``). Every change is a form POST carrying the session's CSRF token. The pages
(``desk.pages``) show ids, codes, the check's message, classes, counts and times — never
document text — and load nothing but this package's own script and style sheet (the CSP allows
nothing else). ``desk_app`` is the offline desk; the service mounts ``router`` (``pressroom.app``).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from importlib import resources
from typing import Any
from urllib.parse import unquote

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.routing import APIRoute
from starlette.concurrency import run_in_threadpool

from pressroom.corrections import Corrections, parse_json
from pressroom.desk import pages
from pressroom.desk import session as sessions
from pressroom.desk.config import DeskConfig, config_of, templates_of
from pressroom.desk.session import DONE_COOKIE, PRE_COOKIE, SESSION_COOKIE, Session
from pressroom.desk.signin import (
    APPLY_FIELDS,
    APPROVE_FIELDS,
    FORM_LIMITS,
    SIGN_IN_FIELDS,
    secure_cookies,
    set_cookie,
    sign_in_page,
    signed_in,
    signed_in_post,
    to_sign_in,
    who_is_in,
)
from pressroom.desk.views import item_url as _item_url
from pressroom.deskport import DeadLetters, Which
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
# a picture past 16 MP (a tall page) comes back narrower, its aspect kept (pipeline.pictures)
MIN_W, MAX_W, DEFAULT_W = 16, 4000, 640
MAX_ID = 200
STATIC = {"desk.js": "text/javascript; charset=utf-8", "desk.css": "text/css; charset=utf-8"}


# --- every response: the security headers; a refusal as problem+json (or a page for a GET) ---


class DeskRoute(APIRoute):
    """Every desk answer carries the CSP and friends, refusals included."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def run(request: Request) -> Response:
            mark = pages.overrides.set(templates_of(request))
            try:
                try:
                    response = await handler(request)
                except PressroomError as exc:
                    response = _refusal(request, exc)
            finally:
                pages.overrides.reset(mark)
            response.headers.update(SECURITY_HEADERS)
            return response

        return run


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
        return pages.html_page(
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


def _check_id(item_id: str) -> str:
    if not item_id or len(item_id) > MAX_ID:
        raise BadRequest("no such held job id")
    return item_id


@router.get("")
async def desk_home(request: Request) -> Response:
    cfg = config_of(request)
    who = await who_is_in(request, cfg)
    if who.session is None:
        response = sign_in_page(request, cfg)
        if who.ended:
            set_cookie(
                response, sessions.clear(SESSION_COOKIE, secure=secure_cookies(request, cfg))
            )
        return response
    s = who.session
    items = await run_in_threadpool(cfg.backend.held, s.viewer)
    token = sessions.csrf_token(cfg.secret, s.nonce)
    return pages.list_page(cfg.backend.title, s.viewer, items, token, cfg.clock())


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
        return sign_in_page(request, cfg, status=401, failed=True)
    return await signed_in(request, cfg, viewer)


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
        return pages.html_page(
            "link_refused.html", cfg.backend.title, "Sign-in link refused", status=403, spent=spent
        )
    return await signed_in(request, cfg, viewer)


@router.post("/sign-out")
async def sign_out(request: Request) -> Response:
    cfg = config_of(request)
    session, _form = await signed_in_post(request, cfg)
    # ended on the server: a saved copy of the cookie opens nothing from now on
    await run_in_threadpool(cfg.gate.end, session.sid)
    response = RedirectResponse("/review", status_code=303)
    for name in (SESSION_COOKIE, DONE_COOKIE):
        set_cookie(response, sessions.clear(name, secure=secure_cookies(request, cfg)))
    return response


@router.get("/jobs/{item_id}")
async def job_page(request: Request, item_id: str) -> Response:
    cfg = config_of(request)
    who = await who_is_in(request, cfg)
    if who.session is None:
        return to_sign_in(request, cfg, who)
    s = who.session
    detail = await run_in_threadpool(cfg.backend.detail, s.viewer, _check_id(item_id))
    return pages.job_page(
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
    who = await who_is_in(request, cfg)
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
    s, form = await signed_in_post(request, cfg, APPLY_FIELDS)
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
    s, form = await signed_in_post(request, cfg, APPROVE_FIELDS)
    item_id = _check_id(item_id)
    detail = await run_in_threadpool(cfg.backend.detail, s.viewer, item_id)
    found_again = pages.found_again(detail)
    confirmed = form.get("confirm") == "yes"
    if confirmed and form.get("held") != pages.held_version(detail):
        # the copy the confirmation named is not the one held now (another tab applied
        # corrections, a retry changed it): nothing is published unseen
        raise Conflict("the held copy changed since this step was shown; look at it again")
    unacknowledged = (
        confirmed and found_again is not None and form.get("acknowledge") != pages.ACKNOWLEDGE
    )
    if not confirmed or unacknowledged:
        pending = form.get("pending")
        unapplied = int(pending) if isinstance(pending, str) and pending.isdigit() else 0
        token = sessions.csrf_token(cfg.secret, s.nonce)
        return pages.html_page(
            "confirm.html",
            cfg.backend.title,
            f"Approve job {detail.item.label or detail.item.id}?",
            # sent without the acknowledgement: the same step again, saying what it needs
            status=400 if unacknowledged else 200,
            viewer=s.viewer,
            token=token,
            item=detail.item,
            **pages.published(detail),
            unapplied=min(unapplied, 9999),
            held_version=pages.held_version(detail),
            found_again=found_again,
            acknowledge=pages.ACKNOWLEDGE,
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
    who = await who_is_in(request, cfg)
    if who.session is None:
        return to_sign_in(request, cfg, who)
    s = who.session
    dead = await run_in_threadpool(_dead_letters(cfg).dead_letter, s.viewer, _check_id(item_id))
    return pages.html_page(
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
    s, _form = await signed_in_post(request, cfg)
    await run_in_threadpool(_dead_letters(cfg).redrive, s.viewer, _check_id(item_id))
    message = "Sent round again: it waits in its lane with its attempts reset."
    return _done(request, cfg, s, item_id, "redriven", message, None)


def _dead_letters(cfg: DeskConfig) -> DeadLetters:
    if not isinstance(cfg.backend, DeadLetters):
        raise NotFound("this desk has no queue to redrive from")
    return cfg.backend


@router.post("/jobs/{item_id}/reject")
async def reject(request: Request, item_id: str) -> Response:
    cfg = config_of(request)
    s, _form = await signed_in_post(request, cfg)
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
    secure = secure_cookies(request, cfg)
    set_cookie(
        response, sessions.cookie(DONE_COOKIE, value, secure=secure, max_age=sessions.DONE_S)
    )
    return response


@router.get("/done")
async def done_page(request: Request) -> Response:
    cfg = config_of(request)
    who = await who_is_in(request, cfg)
    if who.session is None:
        return RedirectResponse("/review", status_code=303)
    s = who.session
    p = sessions.unsign(cfg.secret, "done", request.cookies.get(DONE_COOKIE))
    token = sessions.csrf_token(cfg.secret, s.nonce)
    fresh = p is not None and p.get("nonce") == s.nonce and float(p.get("exp") or 0) > cfg.clock()
    return pages.html_page(
        "done.html",
        cfg.backend.title,
        "Decided",
        viewer=s.viewer,
        token=token,
        outcome=pages.outcome(p) if p is not None and fresh else None,
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
