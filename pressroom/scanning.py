"""The malware scanner's port: what a scanner answers about a stream of bytes, and the one rule
that turns its answer into a pass or a refusal — fail closed. A stored source is scanned before
anything reads it (the worker's ``scan`` stage, the offline ``process`` and the hot folder), so
a scan that cannot run, or that the scanner cuts short, is never a pass.

The adapter (``engines/clamd.py``) raises ``ScannerUnavailable`` when the scanner is down,
refuses, times out or answers what it never answers; what it did answer comes back as a
``Verdict``. ``service.open_scanner`` picks the adapter from the settings."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pressroom.errors import MalwareFound, ScannerUnavailable, ScanTooLarge

log = logging.getLogger("pressroom.scanning")

CHUNK = 256 * 1024  # bytes read from the source and sent at a time: never the whole file

# what a scan ended as, the label of the scans metric (every one exported from zero)
CLEAN, FOUND, TOO_LARGE, UNAVAILABLE = "clean", "found", "too_large", "unavailable"
OUTCOMES = (CLEAN, FOUND, TOO_LARGE, UNAVAILABLE)
# the code a scan's log line carries (the logs' allow-list has codes, never a signature)
LOGGED = {
    CLEAN: "CLEAN",
    FOUND: MalwareFound.code,
    TOO_LARGE: ScanTooLarge.code,
    UNAVAILABLE: ScannerUnavailable.code,
}


@dataclass(frozen=True, slots=True)
class Clean:
    """The scanner read the whole stream and found nothing."""


@dataclass(frozen=True, slots=True)
class Found:
    """The scanner found ``signature`` (its own name for it, never the file's)."""

    signature: str


@dataclass(frozen=True, slots=True)
class TooLong:
    """The scanner stopped reading: the stream is longer than it scans (StreamMaxLength)."""


Verdict = Clean | Found | TooLong


class Scanner(Protocol):
    """A malware scanner reached over the network or a socket."""

    def scan(self, chunks: Iterable[bytes], timeout_s: float | None = None) -> Verdict:
        """The verdict on the bytes of ``chunks``, sent as they come; ``ScannerUnavailable``
        when no verdict came (down, refused, timed out, an answer it never gives).
        ``timeout_s``: at most this instead of the scanner's own timeout (never more)."""
        ...

    def ping(self, timeout_s: float | None = None) -> None:
        """Returns when the scanner answers (within ``timeout_s``, or the scanner's own
        timeout); ``ScannerUnavailable`` otherwise."""
        ...


def chunks_of(path: Path, size: int = CHUNK) -> Iterator[bytes]:
    """The file's bytes, ``size`` at a time."""
    with path.open("rb") as source:
        while block := source.read(size):
            yield block


def outcome(verdict: Verdict | None) -> str:
    """The metric's label for a verdict (None: no verdict came)."""
    if isinstance(verdict, Clean):
        return CLEAN
    if isinstance(verdict, Found):
        return FOUND
    if isinstance(verdict, TooLong):
        return TOO_LARGE
    return UNAVAILABLE


def judge(verdict: Verdict) -> None:
    """A clean verdict passes; any other is the refusal it stands for."""
    if isinstance(verdict, Clean):
        return
    if isinstance(verdict, Found):
        raise MalwareFound(f"the malware scanner found {verdict.signature}")
    raise ScanTooLarge(
        "the malware scanner stopped reading the source: it is longer than the scanner scans "
        "(clamd's StreamMaxLength)"
    )


def scan_file(
    scanner: Scanner,
    path: Path,
    record: Callable[[str], None] | None = None,
    timeout_s: float | None = None,
) -> Verdict:
    """``path`` streamed through ``scanner`` and judged: returns a clean verdict, raises the
    refusal for any other (``MalwareFound``, ``ScanTooLarge``), or ``ScannerUnavailable``.
    ``record`` is told the outcome either way (the metric); ``timeout_s``: the scan's
    timeout cut to it (``Scanner.scan``). Logs carry the outcome, the byte count and the
    time, never a name or a path."""
    start = time.monotonic()
    verdict: Verdict | None = None
    size = path.stat().st_size
    try:
        if timeout_s is None:
            verdict = scanner.scan(chunks_of(path))
        else:
            verdict = scanner.scan(chunks_of(path), timeout_s=timeout_s)
    finally:
        said = outcome(verdict)
        log.info(
            "scanned",
            extra={"code": LOGGED[said], "bytes": size, "seconds": time.monotonic() - start},
        )
        if record is not None:
            record(said)
    judge(verdict)
    return verdict


def scan_patiently(
    scanner: Scanner,
    path: Path,
    budget_s: float,
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    first_wait_s: float = 1.0,
) -> Verdict:
    """``scan_file`` for a command with nobody's queue behind it (``process``, ``watch``): a
    scanner that cannot be reached is tried again, waits doubling from ``first_wait_s``,
    until ``budget_s`` has passed; then its ``ScannerUnavailable`` is raised. The first try
    has the scanner's own timeout (a big file's honest scan takes what it takes); each later
    try's is cut to what is left of the budget, so a scanner that hangs holds the command
    at most the longer of the two, never their sum."""
    end = clock() + budget_s
    wait = first_wait_s
    cap: float | None = None  # the first try: the scanner's own timeout
    while True:
        try:
            return scan_file(scanner, path, timeout_s=cap)
        except ScannerUnavailable:
            left = end - clock()
            if left <= 0:
                raise
            sleep(min(wait, left))
            wait *= 2
            cap = end - clock()
            if cap <= 0:
                raise
