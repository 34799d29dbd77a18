"""One value per name: a query parameter, a JSON key or a form field given twice is refused.

Frameworks keep the last of a repeated field, while a gateway, an audit log or a proxy in front
may read the first: ``redact=name … redact=`` would be redacted in one reading and not in the
other. Nothing here picks a winner; the request is answered 400 ``BAD_REQUEST`` naming the
field (never its values), whatever the order of the fields. Uploads' multipart fields are
judged where they are parsed (``api.uploads``), the desk's forms by ``single_form``."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pressroom.api.responses import error_response
from pressroom.errors import BadRequest, TooLarge

MAX_JSON_BYTES = 1 << 20  # every JSON body the API takes is a few hundred bytes
# bodies judged where they are parsed (uploads, the desk's forms); every other body is read
# here as JSON whatever its type says, as a route may (``request.json()`` reads any type)
_FORMS = (b"multipart/form-data", b"application/x-www-form-urlencoded")


def repeated(names: Iterable[str]) -> str | None:
    """The first name that comes twice, or None."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


class _Repeated(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    twice = repeated(k for k, _v in pairs)
    if twice is not None:
        raise _Repeated(twice)
    return dict(pairs)


def json_repeated_key(body: bytes) -> str | None:
    """A key given twice in one object anywhere in ``body``, or None (a body that does not
    parse is the route's to refuse)."""
    try:
        json.loads(body, object_pairs_hook=_pairs)
    except _Repeated as exc:
        return exc.key
    except ValueError:
        return None
    return None


def _printable(name: str) -> str:
    return repr(name[:64])


class SingleValues:
    """ASGI middleware: repeated query parameters, a repeated ``Content-Type`` and repeated
    JSON keys (in any body that is not a form) are a bad request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        query = scope.get("query_string", b"").decode("latin-1")
        twice = repeated(k for k, _v in parse_qsl(query, keep_blank_values=True))
        if twice is not None:
            await self._refuse(f"query parameter {_printable(twice)} is given more than once")(
                scope, receive, send
            )
            return
        types = [v for k, v in scope.get("headers", []) if k.lower() == b"content-type"]
        if len(types) > 1:
            await self._refuse("header 'content-type' is given more than once")(
                scope, receive, send
            )
            return
        kind = (types[0] if types else b"").split(b";")[0].strip().lower()
        if kind in _FORMS or scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            # forms are judged where they are parsed; these carry no body to judge
            await self.app(scope, receive, send)
            return
        if kind != b"application/json" and not kind.endswith(b"+json"):
            # a body of another type is judged when (and if) a route reads it: a route that
            # answers before reading (401 without a key) must not wait for it
            await self.app(scope, _judged_when_read(receive), send)
            return
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([message], receive), send)
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > MAX_JSON_BYTES:
                await error_response(
                    "TOO_LARGE", f"a JSON body is at most {MAX_JSON_BYTES:,} bytes", 413
                )(scope, receive, send)
                return
        key = json_repeated_key(bytes(body))
        if key is not None:
            await self._refuse(f"JSON key {_printable(key)} is given more than once")(
                scope, receive, send
            )
            return
        whole: Message = {"type": "http.request", "body": bytes(body), "more_body": False}
        await self.app(scope, _replay([whole], receive), send)

    @staticmethod
    def _refuse(message: str) -> ASGIApp:
        return error_response("BAD_REQUEST", message, 400)


def _judged_when_read(receive: Receive) -> Receive:
    """``receive``, the body read whole on the first call and judged as JSON: a repeated key
    raises ``BadRequest`` inside the route that reads it (answered 400 naming it)."""
    done = False

    async def judged() -> Message:
        nonlocal done
        if done:
            return await receive()
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return message
            body += message.get("body", b"")
            if len(body) > MAX_JSON_BYTES:
                raise TooLarge(f"a body that is not a form is at most {MAX_JSON_BYTES:,} bytes")
            if not message.get("more_body", False):
                break
        done = True
        key = json_repeated_key(bytes(body))
        if key is not None:
            raise BadRequest(f"JSON key {_printable(key)} is given more than once")
        return {"type": "http.request", "body": bytes(body), "more_body": False}

    return judged


def _replay(messages: list[Message], then: Receive) -> Receive:
    """The messages already read, then the connection's own (its disconnect, in time)."""
    queue = list(messages)

    async def receive() -> Message:
        if queue:
            return queue.pop(0)
        return await then()

    return receive


async def single_form(request: Request, **limits: Any) -> FormData:
    """The request's form, each field at most once (``BadRequest`` naming the first repeated)."""
    form = await request.form(**limits)
    twice = repeated(k for k, _v in form.multi_items())
    if twice is not None:
        raise BadRequest(f"form field {_printable(twice)} is given more than once")
    return form
