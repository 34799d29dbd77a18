"""Objects with the same content stored once, so that a document put together from page
ranges is the same bytes as the document built whole.

A range's part carries its own copy of every source object its pages use: a font, a colour
space or an ICC profile shared by pages in two ranges arrives twice in the assembly (built
whole, the document holds it once). ``share_copies`` makes such copies one object again, by
content: an object's key is its value with each reference replaced by the key of what it
refers to (a hash tree), so two fonts are one when their dictionaries and font files are the
same. Run on every output before it is written (whole or assembled), both hold one object per
distinct content and are numbered alike by the writer.

Pages, page trees and anything on a cycle of references (an annotation's ``/P``, a structure
element's ``/P``) keep their identity: they are never merged.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pikepdf
from pikepdf import Array, Dictionary, Name, Stream

_KEEP_TYPES = frozenset({"/Page", "/Pages", "/Catalog"})


def share_copies(pdf: pikepdf.Pdf) -> int:
    """Every indirect object whose content equals another's replaced by one of them (the
    lowest object number) wherever it is referred to; returns how many copies were dropped
    (the writer leaves out what nothing refers to)."""
    keys: dict[tuple[int, int], Any] = {}
    busy: set[tuple[int, int]] = set()

    def key_of(obj: Any) -> Any:
        """The content key of a value; an indirect object's is memoised."""
        if isinstance(obj, pikepdf.Object) and obj.is_indirect:
            og = obj.objgen
            if og in keys:
                return keys[og]
            if og in busy:  # on a cycle: this one is known by its identity only
                return ("id", og)
            busy.add(og)
            try:
                made = _own_key(obj, key_of)
            finally:
                busy.discard(og)
            keys[og] = made
            return made
        return _value_key(obj, key_of)

    found: dict[Any, Any] = {}  # key -> the object kept
    replace: dict[tuple[int, int], Any] = {}
    for obj in sorted(
        (o for o in pdf.objects if isinstance(o, pikepdf.Object) and o.is_indirect),
        key=lambda o: o.objgen,
    ):
        if _kept_as_is(obj):
            continue
        key = key_of(obj)
        if key[0] == "id":
            continue
        first = found.setdefault(key, obj)
        if first.objgen != obj.objgen:
            replace[obj.objgen] = first
    if not replace:
        return 0
    for obj in list(pdf.objects):
        if isinstance(obj, pikepdf.Object) and obj.is_indirect:
            _rewrite(obj, replace)
    _rewrite(pdf.trailer, replace)
    return len(replace)


def _kept_as_is(obj: pikepdf.Object) -> bool:
    if isinstance(obj, Dictionary | Stream):
        kind = obj.get("/Type")
        return isinstance(kind, Name) and str(kind) in _KEEP_TYPES
    return False


def _own_key(obj: pikepdf.Object, key_of: Any) -> Any:
    if _kept_as_is(obj):
        return ("id", obj.objgen)
    if isinstance(obj, Stream):
        data = hashlib.sha256(obj.read_raw_bytes()).hexdigest()
        names = [k for k in obj.keys() if k != "/Length"]  # noqa: SIM118 (a PDF dictionary)
        items = tuple(sorted((str(k), key_of(obj.get(k))) for k in names))
        made: Any = ("stream", items, data)
    else:
        made = _value_key(obj, key_of)
    # short, and equal only for equal content (an identity inside, of an object on a cycle
    # below, equal only to the same identity)
    return ("sha256", hashlib.sha256(repr(made).encode()).hexdigest())


def _value_key(obj: Any, key_of: Any) -> Any:
    if isinstance(obj, Dictionary):
        names = list(obj.keys())
        return ("dict", tuple(sorted((str(k), key_of(obj.get(k))) for k in names)))
    if isinstance(obj, Array):
        return ("array", tuple(key_of(v) for v in obj))
    if isinstance(obj, Stream):  # a stream is always indirect; here for completeness
        return ("id", obj.objgen)
    if isinstance(obj, Name):
        return ("name", str(obj))
    if isinstance(obj, pikepdf.String):
        return ("string", bytes(obj))
    if isinstance(obj, pikepdf.Object):
        return ("object", obj.unparse())
    return (type(obj).__name__, str(obj))


def _rewrite(obj: Any, replace: dict[tuple[int, int], Any]) -> None:
    """References to a dropped copy in ``obj`` (and in the direct values it holds) pointed
    at the object kept."""
    if isinstance(obj, Dictionary | Stream):
        for k in list(obj.keys()):
            if k == "/Length" and isinstance(obj, Stream):
                continue
            value = obj.get(k)
            if isinstance(value, pikepdf.Object) and value.is_indirect:
                if value.objgen in replace:
                    obj[k] = replace[value.objgen]
            else:
                _rewrite(value, replace)
    elif isinstance(obj, Array):
        for n, value in enumerate(obj):
            if isinstance(value, pikepdf.Object) and value.is_indirect:
                if value.objgen in replace:
                    obj[n] = replace[value.objgen]
            else:
                _rewrite(value, replace)
