"""Every error as an RFC 9457 problem: Pressroom's own family, the framework's refusals and a
parameter a route's declaration refuses. One table, installed on the API and on the offline
desk alike: both faces import it from this web kit, neither imports the other."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from pressroom.errors import PressroomError, Refused, TransientError

log = logging.getLogger("pressroom.api")

PROBLEM = "application/problem+json"
PROBLEM_TYPE = "urn:pressroom:problem:"  # + the code: one type per code, as RFC 9457 asks


def problem(code: str, detail: str, status: int) -> dict[str, Any]:
    """An RFC 9457 problem: ``type`` and ``title`` name the code, ``detail`` this occurrence;
    ``code`` is ours, the same stable reason code the CLI prints and jobs record."""
    return {
        "type": PROBLEM_TYPE + code.lower().replace("_", "-"),
        "title": code.replace("_", " ").capitalize(),
        "status": status,
        "detail": detail,
        "code": code,
    }


def error_response(
    code: str, message: str, status: int, headers: dict[str, str] | None = None
) -> JSONResponse:
    """Every error the API answers, ours and the framework's, in one shape."""
    if status == 401:
        headers = {**(headers or {}), "WWW-Authenticate": 'Bearer realm="pressroom"'}
    return JSONResponse(
        problem(code, message, status), status_code=status, headers=headers, media_type=PROBLEM
    )


async def pressroom_error(_request: Request, exc: Exception) -> JSONResponse:
    """One handler for the whole family: the class says the status, a refusal or a transient
    failure says when to come back."""
    assert isinstance(exc, PressroomError)
    headers = None
    if isinstance(exc, Refused):
        headers = {"Retry-After": str(exc.retry_after)}
    elif isinstance(exc, TransientError):
        headers = {"Retry-After": "30" if exc.code == "STORAGE_FULL" else "5"}
        log.warning("request refused for now", extra={"code": exc.code})
    return error_response(exc.code, exc.message, exc.http_status, headers)


# the framework's own refusals, with the code each gets
FRAMEWORK_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "TOO_LARGE",
    415: "BAD_MIME",
}


async def framework_error(_request: Request, exc: Exception) -> JSONResponse:
    """Starlette's HTTP errors (an unknown path, a method a path does not take) as problems."""
    assert isinstance(exc, StarletteHTTPException)
    code = FRAMEWORK_CODES.get(exc.status_code, f"HTTP_{exc.status_code}")
    detail = exc.detail if isinstance(exc.detail, str) else code
    return error_response(code, detail, exc.status_code, dict(exc.headers or {}))


async def validation_error(_request: Request, exc: Exception) -> JSONResponse:
    """A parameter the route's declaration refuses (a query value of the wrong type): a bad
    request like any other, naming the parameter, never echoing the value."""
    assert isinstance(exc, RequestValidationError)
    where = sorted({".".join(str(p) for p in e.get("loc", ())[1:]) for e in exc.errors()})
    return error_response("BAD_REQUEST", f"invalid {', '.join(where) or 'request'}", 400)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(PressroomError, pressroom_error)
    app.add_exception_handler(StarletteHTTPException, framework_error)
    app.add_exception_handler(RequestValidationError, validation_error)
