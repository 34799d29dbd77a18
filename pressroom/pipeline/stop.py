"""Stopping between pages: the worker sets what to ask (has this job's tenant cancelled it?)
around the work, and every loop over pages asks it before each page — inspection, OCR and
composition, the redaction's scan, the output's check. A cancel then ends a long document
within a page instead of after all of its OCR.

A context variable, not a parameter: the loops are many layers down, in code the offline CLI
and the tests share, where nothing is set and ``between_pages`` costs one lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_ask: ContextVar[Callable[[], None] | None] = ContextVar("pressroom_stop", default=None)


@contextmanager
def stop_when(check: Callable[[], None]) -> Iterator[None]:
    """Within the block, ``between_pages`` calls ``check``, which raises to stop the work."""
    token = _ask.set(check)
    try:
        yield
    finally:
        _ask.reset(token)


def between_pages() -> None:
    """Before each page of a loop over pages: raises what the worker's check raises."""
    check = _ask.get()
    if check is not None:
        check()
