"""The inbox a hot folder watches and the watcher's own folders beside it: which files have
settled, claiming them into ``work/``, the ledger of content done, the reads that never ended
(``tries/``), moving each aside into ``.done/`` or ``.failed/`` with its reason, and the
retention of redactions' sources in ``.done/``. Two watchers on one inbox are refused (a lock
on the state folder's ``lock`` and on INBOX itself). The folders are opened and checked, and
files moved, as ``pressroom.hotfolder.folders`` says.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import stat
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pressroom.errors import BadRequest, UnsafeFolder
from pressroom.fsutil import escaped
from pressroom.hotfolder.folders import (
    _NEW,
    _READ,
    DONE,
    DUE,
    FAILED,
    REASON,
    STATE,
    _close_all,
    _Folder,
    _move,
    _open_folder,
    _own_file,
    _single,
    dir_mode,
    taken,
)
from pressroom.settings import Limits

RETRY_FIRST_S = 5.0
RETRY_MAX_S = 300.0


class Ledger:
    """The hashes of content done, kept across restarts (``ledger`` in the state folder)."""

    def __init__(self, folder: _Folder) -> None:
        self.folder = folder
        self._done: set[str] = set()
        try:
            fd = os.open("ledger", _READ, dir_fd=folder.checked())
        except FileNotFoundError:
            return
        _own_file(fd, folder.path / "ledger")
        with os.fdopen(fd, encoding="ascii", errors="replace") as fh:
            self._done = {line.strip() for line in fh if line.strip()}

    def __contains__(self, sha: str) -> bool:
        return sha in self._done

    def add(self, sha: str) -> None:
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open("ledger", flags, 0o600, dir_fd=self.folder.checked())
        _own_file(fd, self.folder.path / "ledger")
        try:
            os.write(fd, (sha + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        self._done.add(sha)


@dataclass
class _Seen:
    size: int
    mtime_ns: int
    since: float  # when it was first seen with this size and time


@dataclass
class _Retry:
    at: float
    wait_s: float


class Inbox:
    """The folder watched, the watcher's own folders, and what is known of the files in it.

    ``state``: the folder for the watcher's own files (work, tries, ledger, lock; default
    ``INBOX/.pressroom``); ``max_bytes``: a larger file is refused from its size;
    ``keep_done_s``: how long a redaction's source stays in ``.done/`` (None: kept; 0: removed
    once delivered), by ``wall`` (seconds since the epoch: it outlives a restart)."""

    def __init__(
        self,
        root: Path,
        settle_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        mode: int = 0o640,
        *,
        state: Path | None = None,
        max_bytes: int | None = None,
        keep_done_s: float | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.root = root
        self.settle_s = settle_s
        self.clock = clock
        self.mode = mode
        self.max_bytes = Limits().max_bytes if max_bytes is None else max_bytes
        self.keep_done_s = keep_done_s
        self.wall = wall
        self._seen: dict[str, _Seen] = {}
        self._retry: dict[str, _Retry] = {}
        self._lock: int | None = None
        self._fds: list[int] = []
        self._closer = weakref.finalize(self, _close_all, self._fds)
        try:
            self._root = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            raise BadRequest(f"{root}: no such folder") from None
        self._fds.append(self._root)
        if state is None:
            self.state = root / STATE
            self._state = self._private(self._root, STATE, self.state)
        else:
            self.state = state
            try:
                state.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
                parent = os.open(state.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError as exc:
                raise UnsafeFolder(f"{state}: cannot be made ({exc.strerror})") from None
            self._fds.append(parent)
            self._state = self._private(parent, state.name, state)
        self.work = self.state / "work"
        self.tries = self.state / "tries"
        self._work = self._private(self._state.fd, "work", self.work)
        self._tries = self._private(self._state.fd, "tries", self.tries)
        self.done = root / DONE
        self.failed = root / FAILED
        gid = os.fstat(self._root).st_gid
        shared = dir_mode(mode) & ~0o022
        self._done = self._open(_open_folder(self._root, DONE, self.done, shared=True,
                                             mode=shared, gid=gid))  # fmt: skip
        self._failed = self._open(_open_folder(self._root, FAILED, self.failed, shared=True,
                                               mode=shared, gid=gid))  # fmt: skip
        self.ledger = Ledger(self._state)
        self._due = self._read_due()
        # the handler reads through the work folder's descriptor: a name in INBOX swapped
        # meanwhile leads nowhere else (/proc is there on every Linux this runs on)
        through = Path(f"/proc/{os.getpid()}/fd/{self._work.fd}")
        self.reading = through if through.is_dir() else self.work

    def _open(self, folder: _Folder) -> _Folder:
        self._fds.append(folder.fd)
        return folder

    def _private(self, parent: int, name: str, path: Path) -> _Folder:
        folder = self._open(_open_folder(parent, name, path, shared=False, mode=0o700))
        if stat.S_IMODE(os.fstat(folder.fd).st_mode) & 0o077:
            # its own, and nobody else's to read either (an older watcher left work/ 0750:
            # the inbox's group could list what others dropped, and read the ledger)
            os.fchmod(folder.fd, 0o700)
        return folder

    def close(self) -> None:
        """Every folder's descriptor closed (the lock with them)."""
        self.unlock()
        self._closer()

    def lock(self) -> None:
        """Refuse a second watcher on this inbox or this state folder (BAD_REQUEST)."""
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open("lock", flags, 0o600, dir_fd=self._state.checked())
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafeFolder(f"{self.state / 'lock'}: a symbolic link") from None
            raise
        _own_file(fd, self.state / "lock")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            try:
                fcntl.flock(self._root, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise
            except OSError:
                pass  # a mount without locks on folders: the state folder's lock still holds
        except BlockingIOError:
            os.close(fd)
            raise BadRequest(f"{self.root}: another pressroom watch is watching it") from None
        self._lock = fd

    def unlock(self) -> None:
        if self._lock is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._root, fcntl.LOCK_UN)
            os.close(self._lock)
            self._lock = None

    # --- what is ready -------------------------------------------------------------------

    def settled(self) -> list[Path]:
        """The files in the inbox whose size and time have not changed for ``settle_s``
        (an empty file never: a scanner creates it before it writes), oldest first."""
        now = self.clock()
        ready: list[tuple[int, str, Path]] = []
        present: set[str] = set()
        with os.scandir(self._root) as entries:
            for entry in entries:
                if not taken(entry.name):
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not _single(st):
                    continue
                present.add(entry.name)
                seen = self._seen.get(entry.name)
                if seen is None or (seen.size, seen.mtime_ns) != (st.st_size, st.st_mtime_ns):
                    self._seen[entry.name] = _Seen(st.st_size, st.st_mtime_ns, now)
                    if self.settle_s > 0:
                        continue
                    seen = self._seen[entry.name]
                if st.st_size > 0 and now - seen.since >= self.settle_s:
                    ready.append((st.st_mtime_ns, entry.name, self.root / entry.name))
        for gone in set(self._seen) - present:
            del self._seen[gone]
        return [path for _t, _n, path in sorted(ready)]

    def waiting(self) -> int:
        """Files in the inbox with something in them that have not settled yet (a file
        claimed for a later try, or one that stays empty, does not count)."""
        return sum(1 for seen in self._seen.values() if seen.size > 0)

    def oversize(self, path: Path) -> int | None:
        """The size of ``path`` (a name in the inbox) when it is over ``max_bytes``, from
        ``lstat``: such a file is never read, copied nor hashed."""
        try:
            size = os.stat(path.name, dir_fd=self._root, follow_symlinks=False).st_size
        except FileNotFoundError:
            return None
        return size if size > self.max_bytes else None

    def set_aside(self, path: Path, reason: str) -> Path:
        """``path`` (a name in the inbox) moved to ``.failed`` with its reason, unclaimed."""
        self._seen.pop(path.name, None)
        return self._aside(self._root, path.name, self._failed, path.name, reason)

    def claim(self, path: Path) -> Path | None:
        """``path`` (a name in the inbox) moved into the work folder (None: it went away
        meanwhile, or is no longer a regular file of one name)."""
        name = path.name
        self._seen.pop(name, None)
        work = self._work.checked()
        try:
            if not _single(os.stat(name, dir_fd=self._root, follow_symlinks=False)):
                return None
            moved = _move(self._root, name, work, name)
        except FileNotFoundError:
            return None
        # swapped for a link or a second name between the check and the move: never read
        if not _single(os.stat(moved, dir_fd=work, follow_symlinks=False)):
            os.unlink(moved, dir_fd=work)
            return None
        return self.reading / moved

    def claimed(self) -> list[Path]:
        """Files already claimed (a watcher stopped with them; temporary failures) whose turn
        has come, in name order: regular files of one name only."""
        now = self.clock()
        out = []
        with os.scandir(self._work.checked()) as entries:
            names = sorted(entry.name for entry in entries)
        for name in names:
            try:
                st = os.stat(name, dir_fd=self._work.fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(st.st_mode):
                os.unlink(name, dir_fd=self._work.fd)  # never made here: never followed
                continue
            retry = self._retry.get(name)
            if _single(st) and (retry is None or retry.at <= now):
                out.append(self.reading / name)
        return out

    def left(self) -> int:
        """How many files are claimed (read again on the next start)."""
        with os.scandir(self._work.checked()) as entries:
            return sum(1 for entry in entries if entry.is_file(follow_symlinks=False))

    # --- reads that never ended ----------------------------------------------------------

    @staticmethod
    def _record(claimed: Path) -> str:
        # by a hash of the name: any name fits, ".new" beside it too
        return hashlib.sha256(os.fsencode(claimed.name)).hexdigest()[:40]

    def tries_of(self, claimed: Path) -> int | None:
        """How many reads of a claimed file, each alone in its batch, began and never ended;
        None when no read of it is left unended (0: one in a batch with others)."""
        try:
            fd = os.open(self._record(claimed), _READ, dir_fd=self._tries.checked())
        except FileNotFoundError:
            return None
        try:
            return int(os.read(fd, 32) or 0)
        except (OSError, ValueError):
            return 0
        finally:
            os.close(fd)

    def started(self, claimed: Path, alone: bool) -> int:
        """A read of ``claimed`` begins, kept on disk until it ends (so a read that kills the
        watcher itself is known after a restart). Only a read alone in its batch is counted:
        one among others that never ends makes each of them read alone next, so a file
        that kills its reader is the only one blamed. Returns the count."""
        record = self._record(claimed)
        count = (self.tries_of(claimed) or 0) + (1 if alone else 0)
        tries = self._tries.checked()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(record + ".new", dir_fd=tries)
        fd = os.open(record + ".new", _NEW, 0o600, dir_fd=tries)
        try:
            os.write(fd, str(count).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(record + ".new", record, src_dir_fd=tries, dst_dir_fd=tries)
        return count

    def ended(self, claimed: Path) -> None:
        """A read of ``claimed`` ended (whatever its outcome)."""
        with contextlib.suppress(OSError):
            os.unlink(self._record(claimed), dir_fd=self._tries.checked())

    # --- what becomes of a file ----------------------------------------------------------

    def later(self, claimed: Path) -> None:
        """A temporary failure: the file stays claimed and is tried again after a wait."""
        before = self._retry.get(claimed.name)
        wait_s = RETRY_FIRST_S if before is None else min(before.wait_s * 2, RETRY_MAX_S)
        self._retry[claimed.name] = _Retry(self.clock() + wait_s, wait_s)

    def size(self, claimed: Path) -> int:
        """A claimed file's size, from ``lstat`` (nothing of it read)."""
        return os.stat(claimed.name, dir_fd=self._work.checked(), follow_symlinks=False).st_size

    def finish(
        self,
        claimed: Path,
        name: str,
        ok: bool,
        reason: str | None = None,
        *,
        redacted: bool = False,
    ) -> Path | None:
        """``claimed`` moved to ``.done`` (``ok``) or ``.failed`` as ``name`` (or a fresh
        variant), with ``NAME.reason`` beside it (one line, escaped) when a reason is given.
        ``redacted``: a redaction's source in ``.done`` leaves it after ``keep_done_s`` (at
        once, and None is returned, when that is 0)."""
        self._retry.pop(claimed.name, None)
        expires = ok and redacted and self.keep_done_s is not None
        work = self._work.checked()
        if expires and self.keep_done_s is not None and self.keep_done_s <= 0:
            os.unlink(claimed.name, dir_fd=work)
            return None
        moved = self._aside(work, claimed.name, self._done if ok else self._failed, name, reason)
        if expires and self.keep_done_s is not None:
            self._expire(moved.name, self.wall() + self.keep_done_s)
        return moved

    def _aside(
        self, src_dir: int, src: str, folder: _Folder, name: str, reason: str | None
    ) -> Path:
        moved = _move(src_dir, src, folder.checked(), name, note=reason is not None)
        self._made(folder, moved)
        if reason is not None:
            self._note(folder, moved, escaped(reason.rstrip("\n")) + "\n")
        return folder.path / moved

    def _made(self, folder: _Folder, name: str) -> None:
        """A file moved in takes the operator's mode and the folder's group: on the open
        file, and only on a regular file of one name."""
        try:
            fd = os.open(name, _READ, dir_fd=folder.checked())
        except OSError:
            return  # not readable by the watcher (a dropper's own mode): left as it is
        try:
            st = os.fstat(fd)
            if _single(st):
                with contextlib.suppress(OSError):
                    os.fchmod(fd, self.mode)
                with contextlib.suppress(OSError):
                    os.fchown(fd, -1, os.fstat(folder.fd).st_gid)
        finally:
            os.close(fd)

    def _note(self, folder: _Folder, moved: str, text: str) -> None:
        """``moved.reason`` written beside it, created here (never through a link)."""
        dir_fd = folder.checked()
        for n in range(1, 100):
            note = moved + REASON if n == 1 else f"{moved}.{n}{REASON}"
            try:
                fd = os.open(note, _NEW, 0o600, dir_fd=dir_fd)
            except FileExistsError:
                continue
            try:
                os.write(fd, text.encode("utf-8", "backslashreplace"))
                with contextlib.suppress(OSError):
                    os.fchmod(fd, self.mode)
                with contextlib.suppress(OSError):
                    os.fchown(fd, -1, os.fstat(dir_fd).st_gid)
            finally:
                os.close(fd)
            return

    # --- retention of redactions' sources in .done/ --------------------------------------

    def _read_due(self) -> list[dict[str, object]]:
        try:
            fd = os.open(DUE, _READ, dir_fd=self._state.checked())
        except FileNotFoundError:
            return []
        _own_file(fd, self.state / DUE)
        due = []
        with os.fdopen(fd, encoding="utf-8") as fh:
            for line in fh:
                with contextlib.suppress(ValueError, TypeError):
                    entry = json.loads(line)
                    if isinstance(entry, dict) and {"at", "name", "ino"} <= set(entry):
                        # a line the watcher did not write is dropped, never a traceback
                        float(entry["at"])
                        if isinstance(entry["name"], str) and isinstance(entry["ino"], int):
                            due.append(entry)
        return due

    def _write_due(self) -> None:
        state = self._state.checked()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(DUE + ".new", dir_fd=state)
        fd = os.open(DUE + ".new", _NEW, 0o600, dir_fd=state)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(entry) + "\n" for entry in self._due)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(DUE + ".new", DUE, src_dir_fd=state, dst_dir_fd=state)

    def _expire(self, name: str, at: float) -> None:
        ino = os.stat(name, dir_fd=self._done.checked(), follow_symlinks=False).st_ino
        self._due.append({"at": at, "name": name, "ino": ino})
        self._write_due()

    def sweep(self) -> int:
        """Sources whose time in ``.done/`` is up removed (with their ``.reason``), when they
        are still the files moved there. Returns how many."""
        now = self.wall()
        if not any(float(str(e["at"])) <= now for e in self._due):
            return 0
        done = self._done.checked()
        keep, removed = [], 0
        for entry in self._due:
            if float(str(entry["at"])) > now:
                keep.append(entry)
                continue
            name = str(entry["name"])
            try:
                st = os.stat(name, dir_fd=done, follow_symlinks=False)
            except FileNotFoundError:
                continue
            if _single(st) and st.st_ino == entry["ino"]:
                os.unlink(name, dir_fd=done)
                removed += 1
                with contextlib.suppress(FileNotFoundError):
                    if _single(os.stat(name + REASON, dir_fd=done, follow_symlinks=False)):
                        os.unlink(name + REASON, dir_fd=done)
        self._due = keep
        self._write_due()
        return removed
