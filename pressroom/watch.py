"""A hot folder (`pressroom watch`): each file that lands in INBOX is processed once.

What a file goes through:

1. **Settled.** A file is taken only once its size and modification time have stayed the same
   for ``settle_s`` seconds (by ``clock``, injectable): a scanner writing over SMB or NFS, or a
   copy still under way, is left alone until it is whole. Hidden names (``.x``), editors' and
   browsers' partial files (``~x``, ``*.part``, ``*.tmp``, ``*.crdownload``, ``*.filepart``,
   ``*.swp``) and folders are never taken.
2. **Claimed.** It is moved into ``INBOX/.pressroom/work/`` (a rename in one file system): a
   second scan does not see it again, and a watcher that stopped (SIGKILL, a power cut) finds
   it there when it starts again and reads it then: nothing is lost.
3. **Known?** Its content's SHA-256 is looked up in the ledger (``INBOX/.pressroom/ledger``,
   one hash a line, appended and synced once the output is in place). Content done before is
   not done again: the file moves to ``.done/`` and its line says ``skipped: duplicate``.
4. **Processed** by the handler (offline, or through the service with the hash as the
   idempotency key, so the service too takes it once).
5. **Moved aside**: into ``INBOX/.done/`` when delivered (or held for review), into
   ``INBOX/.failed/`` when refused, with ``NAME.reason`` beside it (the code and message, one
   line). A name already there is never written over: the file takes ``NAME (2).pdf``. A
   temporary failure (exit 75: the service down) stays claimed and is tried again later,
   waiting 5 s, then 10, up to 5 min.

Moved files and outputs take the group of the folder they land in and the operator's mode
(``mode``, default 0640; folders made here get the same bits plus search where read is given).
Two watchers on one inbox are refused (a lock on ``INBOX/.pressroom/lock``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

from pressroom.errors import BadRequest
from pressroom.pipeline.inspect import file_sha256

STATE = ".pressroom"
DONE = ".done"
FAILED = ".failed"
PARTIAL_SUFFIXES = (".part", ".partial", ".tmp", ".crdownload", ".filepart", ".swp", ".reason")
EXIT_TEMPORARY = 75
RETRY_FIRST_S = 5.0
RETRY_MAX_S = 300.0
MAX_TRIES = 3  # reads of one file that stopped before they ended, crashes of the watcher too


@dataclass(frozen=True, slots=True)
class Handled:
    """What became of one file: its exit code (0 delivered, 3 held, 75 try again, else
    refused) and its one line."""

    exit_code: int
    line: str
    # the process reading it died before it ended (killed for memory, say): tried again,
    # and counted, so a file that kills every reader is set aside, not read forever
    crashed: bool = False


class Handler(Protocol):
    def __call__(
        self, files: Sequence[tuple[Path, str, str]], finished: Callable[[int, Handled], None]
    ) -> None:
        """Each claimed file (its path, its name as it arrived, its content's SHA-256)
        processed; ``finished(n, handled)`` told of file ``n`` the moment it ends, so a file
        delivered before the watcher dies is known as done (and never done again)."""
        ...


def taken(name: str) -> bool:
    """Whether a name in the inbox is one the watcher takes (not hidden, not partial)."""
    return not (
        name.startswith((".", "~")) or name.lower().endswith(PARTIAL_SUFFIXES) or name == ""
    )


def dir_mode(mode: int) -> int:
    """A folder's mode for files of ``mode``: search wherever read is given (0640 → 0750)."""
    return mode | ((mode & 0o444) >> 2)


def fresh_name(
    folder: Path, name: str, promised: Collection[Path] = (), beside: Sequence[str] = ()
) -> Path:
    """``folder/name``, or ``name (2)``, ``name (3)``… the first neither there yet nor in
    ``promised`` (names promised to other files of one batch), nor with a file of its stem
    and a suffix of ``beside`` there (an output's sidecar ``NAME.txt``)."""
    candidate = folder / name
    stem, suffix = Path(name).stem, Path(name).suffix

    def free(path: Path) -> bool:
        return path not in promised and not (path.exists() or path.is_symlink())

    n = 1
    while not (free(candidate) and all(free(candidate.with_suffix(s)) for s in beside)):
        n += 1
        candidate = folder / f"{stem} ({n}){suffix}"
    return candidate


def move_fresh(src: Path, folder: Path, name: str) -> Path:
    """``src`` moved into ``folder`` as ``name`` or a fresh variant of it, never over a file
    already there (a hard link that fails if the name is taken, then the old name removed;
    where links are not allowed, as on some SMB mounts, a rename after a check)."""
    while True:
        dest = fresh_name(folder, name)
        try:
            os.link(src, dest)
        except FileExistsError:
            continue  # taken between the check and the link: the next name
        except OSError as exc:
            if exc.errno == errno.EXDEV:  # the folder is on another file system (a mount)
                return _copy_fresh(src, folder, name)
            if dest.exists():
                continue
            try:
                src.rename(dest)
            except OSError as again:
                if again.errno != errno.EXDEV:
                    raise
                return _copy_fresh(src, folder, name)
            return dest
        src.unlink()
        return dest


def _copy_fresh(src: Path, folder: Path, name: str) -> Path:
    """``src`` copied into ``folder`` under a fresh name (created exclusively: never over a
    file), made durable, then removed: a move across file systems."""
    import shutil

    while True:
        dest = fresh_name(folder, name)
        try:
            fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        try:
            with os.fdopen(fd, "wb") as out, src.open("rb") as fh:
                shutil.copyfileobj(fh, out, 1 << 20)
                out.flush()
                os.fsync(out.fileno())
            shutil.copystat(src, dest)
        except BaseException:
            dest.unlink(missing_ok=True)
            raise
        src.unlink()
        return dest


class Ledger:
    """The hashes of content done, kept across restarts."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._done: set[str] = set()
        if path.exists():
            self._done = {line.strip() for line in path.read_text().splitlines() if line.strip()}

    def __contains__(self, sha: str) -> bool:
        return sha in self._done

    def add(self, sha: str) -> None:
        with self.path.open("a") as fh:
            fh.write(sha + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self._done.add(sha)


def _real(folder: Path) -> None:
    """Refuse a state folder that is a symbolic link (whoever can write the inbox could point
    .failed at another folder and have files moved there)."""
    if folder.is_symlink():
        raise BadRequest(
            f"{folder} is a symbolic link; the watcher keeps its files in real folders"
        )


@dataclass
class _Seen:
    size: int
    mtime_ns: int
    since: float  # when it was first seen with this size and time


@dataclass
class _Retry:
    at: float
    wait_s: float


@dataclass
class Inbox:
    """The folder watched, and what is known of the files in it."""

    root: Path
    settle_s: float = 5.0
    clock: Callable[[], float] = time.monotonic
    mode: int = 0o640
    _seen: dict[str, _Seen] = field(default_factory=dict)
    _retry: dict[str, _Retry] = field(default_factory=dict)
    _lock: IO[str] | None = None

    def __post_init__(self) -> None:
        if not self.root.is_dir():
            raise BadRequest(f"{self.root}: no such folder")
        self.state = self.root / STATE
        self.work = self.state / "work"
        self.tries = self.state / "tries"
        self.done = self.root / DONE
        self.failed = self.root / FAILED
        for folder in (self.state, self.work, self.tries, self.done, self.failed):
            _real(folder)
        for folder in (self.state, self.work, self.tries):
            folder.mkdir(mode=0o700, exist_ok=True)
        for folder in (self.done, self.failed):
            self._folder(folder)
        self.ledger = Ledger(self.state / "ledger")

    def _folder(self, folder: Path) -> None:
        if not folder.is_dir():
            folder.mkdir(exist_ok=True)
            folder.chmod(dir_mode(self.mode))
            self._group(folder, folder.parent)

    @staticmethod
    def _group(path: Path, like: Path) -> None:
        """``path`` in the group of ``like`` (allowed where the user is in that group)."""
        with contextlib.suppress(OSError):
            os.chown(path, -1, like.stat().st_gid)

    def lock(self) -> None:
        """Refuse a second watcher on this inbox (BAD_REQUEST)."""
        handle = (self.state / "lock").open("w")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise BadRequest(f"{self.root}: another pressroom watch is watching it") from None
        self._lock = handle

    def unlock(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    # --- what is ready -------------------------------------------------------------------

    def settled(self) -> list[Path]:
        """The files in the inbox whose size and time have not changed for ``settle_s``
        (an empty file never: a scanner creates it before it writes), oldest first."""
        now = self.clock()
        ready: list[tuple[int, str, Path]] = []
        present: set[str] = set()
        with os.scandir(self.root) as entries:
            for entry in entries:
                if not taken(entry.name):
                    continue
                try:
                    if not entry.is_file(follow_symlinks=False):
                        continue
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                present.add(entry.name)
                seen = self._seen.get(entry.name)
                if seen is None or (seen.size, seen.mtime_ns) != (st.st_size, st.st_mtime_ns):
                    self._seen[entry.name] = _Seen(st.st_size, st.st_mtime_ns, now)
                    if self.settle_s > 0:
                        continue
                    seen = self._seen[entry.name]
                if st.st_size > 0 and now - seen.since >= self.settle_s:
                    ready.append((st.st_mtime_ns, entry.name, Path(entry.path)))
        for gone in set(self._seen) - present:
            del self._seen[gone]
        return [path for _t, _n, path in sorted(ready)]

    def waiting(self) -> int:
        """Files in the inbox with something in them that have not settled yet (a file
        claimed for a later try, or one that stays empty, does not count)."""
        return sum(1 for seen in self._seen.values() if seen.size > 0)

    def claim(self, path: Path) -> Path | None:
        """``path`` moved into the work folder (None: it went away meanwhile)."""
        self._seen.pop(path.name, None)
        try:
            return move_fresh(path, self.work, path.name)
        except FileNotFoundError:
            return None

    def claimed(self) -> list[Path]:
        """Files already claimed (a watcher stopped with them; temporary failures) whose turn
        has come, in name order."""
        now = self.clock()
        out = []
        for path in sorted(self.work.iterdir()):
            retry = self._retry.get(path.name)
            if path.is_file() and (retry is None or retry.at <= now):
                out.append(path)
        return out

    # --- reads that never ended ----------------------------------------------------------

    def tries_of(self, claimed: Path) -> int | None:
        """How many reads of a claimed file, each alone in its batch, began and never ended;
        None when no read of it is left unended (0: one in a batch with others)."""
        try:
            return int((self.tries / claimed.name).read_text() or 0)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return 0

    def started(self, claimed: Path, alone: bool) -> int:
        """A read of ``claimed`` begins, kept on disk until it ends (so a read that kills the
        watcher itself is known after a restart). Only a read alone in its batch is counted:
        one among others that never ends makes each of them read alone next, so a file
        that kills its reader is the only one blamed. Returns the count."""
        record = self.tries / claimed.name
        count = (self.tries_of(claimed) or 0) + (1 if alone else 0)
        fresh = record.with_name(record.name + ".new")
        with fresh.open("w") as fh:
            fh.write(str(count))
            fh.flush()
            os.fsync(fh.fileno())
        fresh.replace(record)
        return count

    def ended(self, claimed: Path) -> None:
        """A read of ``claimed`` ended (whatever its outcome)."""
        with contextlib.suppress(OSError):
            (self.tries / claimed.name).unlink()

    # --- what becomes of a file ----------------------------------------------------------

    def later(self, claimed: Path) -> None:
        """A temporary failure: the file stays claimed and is tried again after a wait."""
        before = self._retry.get(claimed.name)
        wait_s = RETRY_FIRST_S if before is None else min(before.wait_s * 2, RETRY_MAX_S)
        self._retry[claimed.name] = _Retry(self.clock() + wait_s, wait_s)

    def finish(self, claimed: Path, name: str, ok: bool, reason: str | None = None) -> Path:
        """``claimed`` moved to ``.done`` (``ok``) or ``.failed`` as ``name`` (or a fresh
        variant), with ``NAME.reason`` beside it when a reason is given."""
        self._retry.pop(claimed.name, None)
        folder = self.done if ok else self.failed
        _real(folder)  # swapped for a link since the start: never followed
        self._folder(folder)
        moved = move_fresh(claimed, folder, name)
        self._made(moved)
        if reason is not None:
            note = moved.with_name(moved.name + ".reason")
            note.write_text(reason.rstrip("\n") + "\n", encoding="utf-8")
            self._made(note)
        return moved

    def _made(self, path: Path) -> None:
        with contextlib.suppress(OSError):
            path.chmod(self.mode)
        self._group(path, path.parent)


@dataclass
class Watcher:
    """The loop: claim what is settled, skip content done before, hand the rest to
    ``handler`` a batch at a time (``batch`` files), move each aside. ``report`` gets every
    line."""

    inbox: Inbox
    handler: Handler
    report: Callable[[Handled], None]
    batch: int = 1
    stats: dict[str, int] = field(
        default_factory=lambda: {"done": 0, "failed": 0, "duplicate": 0, "later": 0}
    )
    _as_read: dict[Path, tuple[int, int]] = field(default_factory=dict)  # size, mtime

    def step(self, stop: Callable[[], bool] = lambda: False) -> int:
        """One pass: the files whose turn it is, handled a batch at a time until ``stop()``
        says so (the rest stay claimed for the next start). Returns how many were."""
        inbox = self.inbox
        for path in inbox.settled():
            inbox.claim(path)
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

    def _handle(self, files: list[Path]) -> None:
        inbox = self.inbox
        work: list[tuple[Path, str, str]] = []
        hashes: set[str] = set()
        for path in files:
            name = path.name
            try:
                self._as_read[path] = _stamp(path)
                sha = file_sha256(path)
            except OSError as exc:  # unreadable (its mode, a vanished mount): aside, not stuck
                with contextlib.suppress(OSError):
                    line = f"BAD_REQUEST: {name}: cannot be read ({exc.strerror})"
                    inbox.finish(path, name, ok=False, reason=line)
                    self.stats["failed"] += 1
                    self.report(Handled(2, line))
                continue
            if sha in hashes:
                continue  # a twin in this batch: it waits for the first one's outcome
            if sha in inbox.ledger:
                moved = inbox.finish(path, name, ok=True)
                self.stats["duplicate"] += 1
                self.report(
                    Handled(0, f"skipped: duplicate  {name}  (its content is done already; "
                            f"moved to {moved})")
                )  # fmt: skip
                continue
            hashes.add(sha)
            work.append((path, name, sha))
        alone = len(work) == 1
        for path, name, sha in list(work):
            tries = inbox.started(path, alone)
            if tries > MAX_TRIES:
                line = (
                    f"RETRIES_EXHAUSTED: {name}: {tries - 1} reads of it alone stopped before "
                    "they ended (a process killed, for memory?)"
                )
                inbox.ended(path)
                inbox.finish(path, name, ok=False, reason=line)
                self.stats["failed"] += 1
                self.report(Handled(2, line))
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
            inbox.finish(path, name, ok=True, reason=held)
            self.stats["done"] += 1
        else:
            inbox.finish(path, name, ok=False, reason=handled.line)
            self.stats["failed"] += 1
        self.report(handled)

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
