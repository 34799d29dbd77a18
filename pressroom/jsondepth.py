"""How deep a JSON text nests, judged without parsing it: a parser recurses once a level, so
5,000 levels are a ``RecursionError`` (a 500) where a person's mistake deserves a 400. The API's
bodies (``api/single``) and the desk's corrections field (``corrections``) are judged here."""

from __future__ import annotations

import json
import re
from itertools import accumulate

_JSON_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"?', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_NESTING = [0] * 256
for _open, _close in (b"[]", b"{}"):
    _NESTING[_open], _NESTING[_close] = 1, -1


def json_too_deep(body: bytes | str, limit: int) -> bool:
    """Whether ``body`` opens more than ``limit`` arrays or objects inside one another.
    Strings are skipped, escapes and all; linear in the body, tens of milliseconds a MiB."""
    raw = body.encode("utf-8", errors="surrogatepass") if isinstance(body, str) else _utf8(body)
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    brackets = _JSON_STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_NESTING.__getitem__, brackets)), default=0) > limit


def _utf8(body: bytes) -> bytes:
    """``body`` as UTF-8, read as a JSON parser reads bytes (it takes UTF-16 and UTF-32 too:
    there a quote's byte can stand inside another character, and a scan of the raw bytes
    would take it for a string that hides every bracket after it). A body that does not
    decode is left as it is: no parser reads it either."""
    encoding = json.detect_encoding(body)
    if encoding in ("utf-8", "utf-8-sig"):
        return body  # no byte of a multi-byte UTF-8 character is a quote or a bracket
    try:
        return body.decode(encoding).encode("utf-8", errors="surrogatepass")
    except (UnicodeDecodeError, LookupError):
        return body
