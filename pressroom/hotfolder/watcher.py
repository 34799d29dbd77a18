"""The hot folder's loop: each pass claims what has settled in the inbox, skips content done
before, hands the rest to the handler a batch at a time (offline, or through the service with
the content's hash as the idempotency key) and moves each file aside by what became of it. A
file whose read never ended is read alone next, and set aside after ``MAX_TRIES``; one that
changed while it was read is read again; a temporary failure (exit 75) is tried again later.
Also the wait between passes (inotify, or polling a network mount) and a pool process's tie
to its parent.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pressroom.errors import UnsafeFolder
from pressroom.fsutil import escaped
from pressroom.hotfolder.inbox import Inbox

EXIT_TEMPORARY = 75
MAX_TRIES = 3  # reads of one file that stopped before they ended, crashes of the watcher too


@dataclass(frozen=True, slots=True)
class Handled:
    """What became of one file: its exit code (0 delivered, 3 held, 75 try again, else
    refused) and its one line; ``redacted``: its output is a redaction (its source then
    leaves ``.done/`` after the retention)."""

    exit_code: int
    line: str
    # the process reading it died before it ended (killed for memory, say): tried again,
    # and counted, so a file that kills every reader is set aside, not read forever
    crashed: bool = False
    redacted: bool = False


class Handler(Protocol):
    def __call__(
        self, files: Sequence[tuple[Path, str, str]], finished: Callable[[int, Handled], None]
    ) -> None:
        """Each claimed file (its path, its name as it arrived, its content's SHA-256)
        processed; ``finished(n, handled)`` told of file ``n`` the moment it ends, so a file
        delivered before the watcher dies is known as done (and never done again)."""
        ...


@dataclass
class Watcher:
    """The loop: claim what is settled, skip content done before, hand the rest to
    ``handler`` a batch at a time (``batch`` files), move each aside. ``report`` gets every
    line, escaped. ``redacts``: the handler redacts (a duplicate's source then expires in
    ``.done/`` as a redaction's does)."""

    inbox: Inbox
    handler: Handler
    report: Callable[[Handled], None]
    batch: int = 1
    redacts: bool = False
    stats: dict[str, int] = field(
        default_factory=lambda: {"done": 0, "failed": 0, "duplicate": 0, "later": 0}
    )
    _as_read: dict[Path, tuple[int, int]] = field(default_factory=dict)  # size, mtime

    def _say(self, handled: Handled) -> None:
        """A line as it may reach a terminal or a journal: no control character of a name."""
        self.report(Handled(handled.exit_code, escaped(handled.line), handled.crashed,
                            handled.redacted))  # fmt: skip

    def step(self, stop: Callable[[], bool] = lambda: False) -> int:
        """One pass: the files whose turn it is, handled a batch at a time until ``stop()``
        says so (the rest stay claimed for the next start). Returns how many were."""
        inbox = self.inbox
        inbox.sweep()
        for path in inbox.settled():
            size = inbox.oversize(path)
            if size is None:
                inbox.claim(path)
            else:  # refused from its size: nothing of it is read, copied or hashed
                line = _too_large(path.name, size, inbox.max_bytes)
                inbox.set_aside(path, line)
                self.stats["failed"] += 1
                self._say(Handled(2, line))
        todo = inbox.claimed()
        size = max(1, self.batch)
        # a file whose last read never ended is read alone: which one kills its reader
        suspects = [[path] for path in todo if inbox.tries_of(path) is not None]
        rest = [path for path in todo if inbox.tries_of(path) is None]
        batches = suspects + [rest[i : i + size] for i in range(0, len(rest), size)]
        handled = 0
        for files in batches:
            if stop():
                break
            self._handle(files)
            handled += len(files)
        return handled

    def _refuse(self, path: Path, name: str, line: str) -> None:
        self.inbox.finish(path, name, ok=False, reason=line)
        self.stats["failed"] += 1
        self._say(Handled(2, line))

    def _handle(self, files: list[Path]) -> None:
        inbox = self.inbox
        work: list[tuple[Path, str, str]] = []
        hashes: set[str] = set()
        for path in files:
            name = path.name
            try:
                size = inbox.size(path)
                if size > inbox.max_bytes:  # from its size: nothing of it is read
                    self._refuse(path, name, _too_large(name, size, inbox.max_bytes))
                    continue
                self._as_read[path] = _stamp(path)
                sha = _sha256_within(path, inbox.max_bytes)
                if sha is None:  # it grew past the limit after its size was judged
                    self._refuse(path, name, _too_large(name, inbox.max_bytes + 1, inbox.max_bytes))
                    continue
            except FileNotFoundError:
                continue  # gone from the work folder (removed by hand): nothing to do
            except OSError as exc:  # unreadable (its mode, a vanished mount): aside, not stuck
                with contextlib.suppress(OSError):
                    self._refuse(path, name, f"BAD_REQUEST: {name}: cannot be read "
                                 f"({exc.strerror})")  # fmt: skip
                continue
            if sha in hashes:
                continue  # a twin in this batch: it waits for the first one's outcome
            if sha in inbox.ledger:
                moved = inbox.finish(path, name, ok=True, redacted=self.redacts)
                self.stats["duplicate"] += 1
                where = f"moved to {moved}" if moved is not None else "removed"
                self._say(
                    Handled(0, f"skipped: duplicate  {name}  (its content is done already; "
                               f"{where})")
                )  # fmt: skip
                continue
            hashes.add(sha)
            work.append((path, name, sha))
        alone = len(work) == 1
        for path, name, sha in list(work):
            tries = inbox.started(path, alone)
            if tries > MAX_TRIES:
                inbox.ended(path)
                line = (
                    f"RETRIES_EXHAUSTED: {name}: {tries - 1} reads of it alone stopped before "
                    "they ended (a process killed, for memory?)"
                )
                self._refuse(path, name, line)
                work.remove((path, name, sha))
        if not work:
            return
        ended: set[int] = set()

        def finished(n: int, handled: Handled) -> None:
            ended.add(n)
            self._finished(*work[n], handled)

        try:
            self.handler(work, finished)
        except Exception as exc:  # the handler failed (a bug): every file left is tried again
            if isinstance(exc, UnsafeFolder):
                raise  # a folder swapped under the watcher: it stops
            for n, (_path, name, _sha) in enumerate(work):
                if n not in ended:
                    why = f"INTERNAL_ERROR: {name}: {type(exc).__name__}; tried again later"
                    self._finished(*work[n], Handled(EXIT_TEMPORARY, why, crashed=True))
            return
        for n, (_path, name, _sha) in enumerate(work):
            if n not in ended:  # a handler that said nothing of it: tried again, counted
                why = f"UNAVAILABLE: {name}: its read did not end; tried again later"
                self._finished(*work[n], Handled(EXIT_TEMPORARY, why, crashed=True))

    def _finished(self, path: Path, name: str, sha: str, handled: Handled) -> None:
        inbox = self.inbox
        if not handled.crashed:
            inbox.ended(path)
        read_as = self._as_read.pop(path, None)
        if handled.exit_code != EXIT_TEMPORARY and read_as is not None and _changed(path, read_as):
            # still being written (a scanner that paused longer than --settle): what was
            # read is not the file; it is read again once it has settled
            handled = Handled(
                EXIT_TEMPORARY, f"UNAVAILABLE: {name}: it changed while it was read; read again"
            )
        if handled.exit_code == EXIT_TEMPORARY:
            inbox.later(path)
            self.stats["later"] += 1
        elif handled.exit_code in (0, 3):  # delivered, or held for a person to judge
            inbox.ledger.add(sha)
            held = handled.line if handled.exit_code else None
            inbox.finish(path, name, ok=True, reason=held, redacted=handled.redacted)
            self.stats["done"] += 1
        else:
            inbox.finish(path, name, ok=False, reason=handled.line)
            self.stats["failed"] += 1
        self._say(handled)

    def run(
        self,
        *,
        stop: Callable[[], bool],
        wait: Callable[[float], None],
        once: bool = False,
        interval_s: float = 1.0,
    ) -> None:
        """Passes until ``stop()`` says so (checked between batches' passes: the file being
        read is finished first); ``once``: until the inbox has nothing more to take."""
        while not stop():
            handled = self.step(stop)
            if once and not handled and not self.inbox.waiting():
                return
            if not handled:
                wait(interval_s)


def _sha256_within(path: Path, limit: int) -> str | None:
    """The content's SHA-256, or None once more than ``limit`` bytes were read: a dropper
    who kept the file open may grow it (``ftruncate`` to a terabyte of holes) after its size
    was judged, and nothing past the limit is ever read."""
    digest = hashlib.sha256()
    read = 0
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            read += len(block)
            if read > limit:
                return None
            digest.update(block)
    return digest.hexdigest()


def _too_large(name: str, size: int, limit: int) -> str:
    return f"TOO_LARGE: {name}: {size:,} bytes; the limit is {limit:,} (PRESSROOM_MAX_BYTES)"


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def _changed(path: Path, read_as: tuple[int, int]) -> bool:
    try:
        return _stamp(path) != read_as
    except OSError:
        return False  # gone: nothing to read again


@contextlib.contextmanager
def watching(root: Path, *, poll: bool, poll_s: float) -> Iterator[Callable[[float], None]]:
    """A wait that returns early when something changes in ``root`` (watchdog: inotify, or
    polling every ``poll_s`` for a network mount, where inotify hears nothing)."""
    import threading

    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers import Observer
    from watchdog.observers.polling import PollingObserver

    changed = threading.Event()

    class _Wake(FileSystemEventHandler):
        def on_any_event(self, event: FileSystemEvent) -> None:
            changed.set()

    observer = PollingObserver(timeout=poll_s) if poll else Observer()
    observer.schedule(_Wake(), str(root), recursive=False)
    observer.start()

    def wait(timeout_s: float) -> None:
        changed.wait(timeout_s)
        changed.clear()

    try:
        yield wait
    finally:
        observer.stop()
        observer.join(timeout=5)
