"""Atomic file placement (a durable private copy beside the destination, then one rename), and
names shown safely: a file's name as one line a terminal, a journal or a file may take."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def staged_copy(src: Path, folder: Path, prefix: str, mode: int = 0o600) -> Path:
    """A fsynced copy of ``src`` in ``folder`` (``mode``, named ``prefix…`` and random, made
    with ``O_EXCL|O_NOFOLLOW``), ready to be moved in. The mode is set on the open file: a
    link someone swaps in for the name meanwhile is never followed."""
    fd, name = tempfile.mkstemp(prefix=prefix, dir=folder)
    try:
        with os.fdopen(fd, "wb") as out, src.open("rb") as fh:
            shutil.copyfileobj(fh, out, 1 << 20)
            out.flush()
            if mode != 0o600:
                os.fchmod(out.fileno(), mode)
            os.fsync(out.fileno())
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return Path(name)


def place_copy(src: Path, dest: Path, *, mode: int, prefix: str = ".pressroom-") -> None:
    """A copy of ``src`` moved into place at ``dest`` with ``mode``, atomically: readers see all
    of it or nothing, and a failure leaves no staged file behind."""
    tmp = staged_copy(src, dest.parent, prefix, mode)
    try:
        tmp.replace(dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def escaped(text: str) -> str:
    """``text`` with every character a terminal or a journal would act on shown as an escape
    (``\\x1b``, ``\\n``, ``\\u202e``): C0 and C1 controls, DEL, line and paragraph separators,
    format characters such as bidi overrides, and the lone surrogates that stand for a name's
    bytes that are not UTF-8. Printable text, accented letters included, is left as it is."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else _escape(c) for c in text)


def _escape(char: str) -> str:
    shown = repr(char)[1:-1]
    # repr leaves some unprintable characters as they are (U+2028 in some builds): by number
    return shown if shown != char else f"\\u{ord(char):04x}"
