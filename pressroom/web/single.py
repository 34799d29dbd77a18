"""One value per name, and only names the route knows: a query parameter, a JSON key or a form
field given twice, or one the route does not read, is refused; so is JSON nested too deep.

Frameworks keep the last of a repeated field, while a gateway, an audit log or a proxy in front
may read the first: ``redact=name … redact=`` would be redacted in one reading and not in the
other. Nothing here picks a winner; the request is answered 400 ``BAD_REQUEST`` naming the
field (never its values), whatever the order of the fields. Uploads' multipart fields are
judged where they are parsed (``api.uploads``), the desk's forms by ``single_form``.

A field the route does not read is refused the same way (``refuse_unknown``): ignored, a typo
such as ``redaction=name`` or ``Redact=name`` would turn redaction off and publish the names it
was sent to burn. The answer names the field, and the known field it resembles when there is
one (``unknown field 'redaction': did you mean 'redact'?``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from difflib import SequenceMatcher
from typing import Any
from urllib.parse import parse_qsl

from fastapi.routing import APIRoute
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pressroom.errors import BadRequest, TooLarge
from pressroom.jsondepth import json_too_deep as nested_too_deep
from pressroom.web.problems import error_response

MAX_JSON_BYTES = 1 << 20  # every JSON body the API takes is a few hundred bytes
# the deepest JSON any route reads is 4 levels (corrections: object, list, area, box); past
# this a body is refused before a parser recurses into it
MAX_JSON_DEPTH = 32
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
    parse, or is nested too deep to parse, is the route's to refuse)."""
    if json_too_deep(body):
        return None
    try:
        json.loads(body, object_pairs_hook=_pairs)
    except _Repeated as exc:
        return exc.key
    except (ValueError, RecursionError):
        return None
    return None


def _printable(name: str) -> str:
    return repr(name[:64])


# --- fields a route does not know ---------------------------------------------------------------


def _folded(name: str) -> str:
    """A name as a near miss is judged: case and ``-`` for ``_`` are no difference."""
    return name.casefold().replace("-", "_")


def _distance(a: str, b: str) -> int:
    """Edits from ``a`` to ``b``: a letter added, dropped, changed, or two neighbours swapped."""
    before: list[int] = []
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        here = [i] + [0] * len(b)
        for j, y in enumerate(b, 1):
            here[j] = min(row[j] + 1, here[j - 1] + 1, row[j - 1] + (x != y))
            if i > 1 and j > 1 and x == b[j - 2] and a[i - 2] == y:
                here[j] = min(here[j], before[j - 2] + 1)
        before, row = row, here
    return row[-1]


def resembles(name: str, known: Iterable[str]) -> list[str]:
    """The known names ``name`` is a near miss of, the fewest edits first (ties all named, in
    order): the same but for case or ``-``/``_``; within two edits (one for a name of four
    letters or fewer: ``page`` is no ``lane``); or mostly the same (``difflib``'s ratio at
    least 0.8: ``redaction`` for ``redact``)."""
    folded = _folded(name)
    found: list[tuple[int, str]] = []
    for candidate in sorted(set(known)):
        other = _folded(candidate)
        near = 1 if len(other) <= 4 else 2
        if abs(len(folded) - len(other)) > max(near, len(other) // 2):
            continue  # also keeps the cost of a long unknown name to nothing
        edits = _distance(folded, other)
        if edits <= near or SequenceMatcher(None, folded, other).ratio() >= 0.8:
            found.append((edits, candidate))
    least = min((edits for edits, _name in found), default=None)
    return [candidate for edits, candidate in found if edits == least]


def unknown_message(name: str, known: Iterable[str], where: str = "field") -> str:
    """``unknown field 'redaction': did you mean 'redact'?``; without a near miss, the names
    known (or that there are none)."""
    names = sorted(set(known))
    near = resembles(name, names)
    if near:
        return f"unknown {where} {_printable(name)}: did you mean {' or '.join(map(repr, near))}?"
    if not names:
        return f"unknown {where} {_printable(name)}: this takes none"
    return f"unknown {where} {_printable(name)}; known: {', '.join(names)}"


def refuse_unknown(names: Iterable[str], known: Iterable[str], where: str = "field") -> None:
    """``BadRequest`` naming the first of ``names`` not among ``known`` (and the known name it
    resembles): for a form's fields, a query string's parameters, a JSON object's keys.
    ``where`` is what a name is called in the answer: ``field``, ``query parameter``,
    ``JSON key``, ``corrections.manual[0] field``."""
    allowed = frozenset(known)
    for name in names:
        if name not in allowed:
            raise BadRequest(unknown_message(name, allowed, where))


def refuse_unknown_keys(value: object, schema: Mapping[str, Any], where: str) -> None:
    """Every object in the JSON ``value`` that ``schema`` closes (``additionalProperties:
    false``) holds only the keys the schema declares, down through its properties and array
    items (a schema of its own, no ``$ref``): what the OpenAPI document promises, held."""
    properties = schema.get("properties")
    if isinstance(value, dict) and isinstance(properties, Mapping):
        if schema.get("additionalProperties") is False:
            refuse_unknown(value, properties, f"{where} field")
        for name, inner in properties.items():
            if name in value and isinstance(inner, Mapping):
                refuse_unknown_keys(value[name], inner, f"{where}.{name}")
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for i, item in enumerate(value):
            refuse_unknown_keys(item, schema["items"], f"{where}[{i}]")


def _declared_query(route: APIRoute) -> set[str]:
    """The query parameters a route declares, its dependencies' included (what the OpenAPI
    document lists for it)."""
    names: set[str] = set()
    stack = [route.dependant]
    while stack:
        dependant = stack.pop()
        names.update(param.alias for param in dependant.query_params)
        stack.extend(dependant.dependencies)
    return names


async def known_query(request: Request) -> None:
    """A router's dependency: a query parameter its route does not declare is 400 naming it.
    Put on a router (``APIRouter(dependencies=[Depends(known_query)])``), it runs before the
    route's key check, as the refusal of a repeated parameter does."""
    route = request.scope.get("route")
    if isinstance(route, APIRoute):
        refuse_unknown(request.query_params.keys(), _declared_query(route), "query parameter")


async def no_body(request: Request) -> None:
    """Awaited first by a route that reads no body, after its key check (approve, reject,
    retry, rotate, the deletes): none, or ``{}``, is taken; a JSON object's keys are unknown
    fields; anything else is refused (a client that sends something expects it read)."""
    body = (await _body(request)).strip()
    if not body or body == b"{}":
        return
    value = _loads(body, "this takes no body")
    if isinstance(value, dict):
        refuse_unknown(value, (), "JSON key")
    raise BadRequest("this takes no body")


# --- JSON nested too deep -------------------------------------------------------------------------


def json_too_deep(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``body`` nests arrays or objects more than ``limit`` deep (``jsondepth``)."""
    return nested_too_deep(body, limit)


def _too_deep() -> BadRequest:
    return BadRequest(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")


def _loads(body: bytes, what: str) -> Any:
    if json_too_deep(body):
        raise _too_deep()
    try:
        return json.loads(body)
    except ValueError:  # UnicodeDecodeError included
        raise BadRequest(what) from None
    except RecursionError:  # past what the depth scan judges: still the client's mistake
        raise _too_deep() from None


async def _body(request: Request) -> bytes:
    """The body, at most ``MAX_JSON_BYTES`` (``TooLarge`` past it, before the rest is read)."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_JSON_BYTES:
            raise TooLarge(f"a JSON body is at most {MAX_JSON_BYTES:,} bytes")
    return bytes(body)


async def read_json(request: Request, what: str = "the body") -> Any:
    """The request's body as JSON, whatever its type says: ``BadRequest`` for one that is not
    JSON or is nested deeper than ``MAX_JSON_DEPTH``, ``TooLarge`` past ``MAX_JSON_BYTES``."""
    return _loads(await _body(request), f"{what}: not JSON")


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
        if json_too_deep(bytes(body)):
            await self._refuse(str(_too_deep()))(scope, receive, send)
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
        if json_too_deep(bytes(body)):
            raise _too_deep()
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


async def single_form(
    request: Request, *, known: Iterable[str] | None = None, **limits: Any
) -> FormData:
    """The request's form, each field at most once (``BadRequest`` naming the first repeated)
    and, with ``known``, only those fields (``BadRequest`` naming the first other one, and the
    known field it resembles); ``known=None`` checks no names."""
    form = await request.form(**limits)
    names = [k for k, _v in form.multi_items()]
    twice = repeated(names)
    if twice is not None:
        raise BadRequest(f"form field {_printable(twice)} is given more than once")
    if known is not None:
        refuse_unknown(names, known)
    return form
