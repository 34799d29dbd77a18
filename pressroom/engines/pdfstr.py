"""A pikepdf value as text, without raising: pikepdf decodes a name, an operator or a string
as UTF-8 when it is made a ``str``, and a file's bytes need not be UTF-8 (a name ``/A#93``,
an operator of junk bytes, a string with a UTF-8 mark and Latin-1 after it). Each such
``str()`` in the pipeline was an exception no code named (INTERNAL_ERROR, "a bug")."""

from __future__ import annotations

from typing import Any, cast


def text_of(value: object) -> str:
    """``str(value)``; where its bytes are not UTF-8, the bytes read as Latin-1 (one
    character a byte: it compares unequal to every name and operator Pressroom knows)."""
    try:
        return str(value)
    except UnicodeDecodeError:
        try:
            raw = bytes(cast(Any, value))  # a pikepdf name, operator or string
        except (TypeError, ValueError):
            return ""
        if raw.startswith(b"\xef\xbb\xbf"):  # a PDF 2.0 UTF-8 string's mark
            return raw[3:].decode("utf-8", errors="replace")
        return raw.decode("latin-1")
