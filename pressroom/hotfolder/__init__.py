"""A hot folder (`pressroom watch`): each file that lands in INBOX is processed once.

What a file goes through:

1. **Settled.** A file is taken only once its size and modification time have stayed the same
   for ``settle_s`` seconds (by ``clock``, injectable): a scanner writing over SMB or NFS, or a
   copy still under way, is left alone until it is whole. Hidden names (``.x``), editors' and
   browsers' partial files (``~x``, ``*.part``, ``*.tmp``, ``*.crdownload``, ``*.filepart``,
   ``*.swp``), folders, links and second names of a file (hard links) are never taken.
2. **Claimed.** It is moved into the state folder's ``work/`` (``INBOX/.pressroom/`` unless
   ``state`` names another): a second scan does not see it again, and a watcher that stopped
   (SIGKILL, a power cut) finds it there when it starts again and reads it then.
3. **Known?** Its size is checked from ``stat`` (nothing is read of a file over
   ``max_bytes``), then its content's SHA-256 is looked up in the ledger (``ledger`` in the
   state folder, one hash a line, appended and synced once the output is in place). Content
   done before is not done again: the file moves to ``.done/``, ``skipped: duplicate``.
4. **Processed** by the handler (offline, or through the service with the hash as the
   idempotency key, so the service too takes it once).
5. **Moved aside**: into ``INBOX/.done/`` when delivered (or held for review), into
   ``INBOX/.failed/`` when refused, with ``NAME.reason`` beside it (the code and message, one
   line, every control character escaped). A name already there is never written over: the
   file takes ``NAME (2).pdf``. A temporary failure (exit 75: the service down) stays claimed
   and is tried again later, waiting 5 s, then 10, up to 5 min. The sources of a redacting
   watcher leave ``.done/`` after ``keep_done_s``.

Whoever can write INBOX can rename, remove and make folders in it (without its sticky bit),
so the watcher trusts no folder it did not make: each is opened once, with ``O_NOFOLLOW``, and
used through its descriptor (``openat``, ``renameat``, ``fchmod``); it must belong to the
watcher's user and be written by nobody else (``.done/`` and ``.failed/``, which others read,
may be written by the group with the sticky bit). Before each use the name is checked to
still be that folder: one moved, removed or replaced is ``UNSAFE_FOLDER``, one line, and the
watcher stops. Files are made with ``O_CREAT|O_EXCL|O_NOFOLLOW``; a file is read only when
``lstat`` says it is a regular file with one name. The handler reads a claimed file through
``/proc/PID/fd/N/NAME`` (the work folder's descriptor), never through INBOX's names.

Moved files and outputs take the group of the folder they land in and the operator's mode
(``mode``, default 0640; folders made here get the same bits plus search where read is given,
never write for group or others). Two watchers on one inbox are refused (a lock on the state
folder's ``lock`` and on INBOX itself).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import stat
import time
import weakref
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pressroom.errors import BadRequest, UnsafeFolder
from pressroom.fsutil import escaped
from pressroom.settings import Limits

STATE = ".pressroom"
DONE = ".done"
FAILED = ".failed"
DUE = "done-due"  # in the state folder: the sources in .done/ to remove, and when
PARTIAL_SUFFIXES = (".part", ".partial", ".tmp", ".crdownload", ".filepart", ".swp", ".reason")
EXIT_TEMPORARY = 75
RETRY_FIRST_S = 5.0
RETRY_MAX_S = 300.0
MAX_TRIES = 3  # reads of one file that stopped before they ended, crashes of the watcher too
NAME_MAX = 255  # bytes in one name (Linux file systems)
REASON = ".reason"
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


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


def _variant(name: str, n: int) -> str:
    """``name`` (n = 1) or ``stem (n).suffix``, cut short where the name and its ``.reason``
    would not fit in one name."""
    path = Path(name)
    stem, suffix = (path.stem, path.suffix) if path.suffix != name else (name, "")
    tail = suffix if n == 1 else f" ({n}){suffix}"
    room = NAME_MAX - len(REASON) - len(os.fsencode(tail))
    raw = os.fsencode(stem)
    if len(raw) > room:
        stem = os.fsdecode(raw[: max(room, 1)])
    return stem + tail


def _free(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return True
    return False


def _single(st: os.stat_result) -> bool:
    """A regular file with one name: never a link, a device, a FIFO, or a second name of a
    file kept elsewhere (a hard link to a file the dropper may not read)."""
    # (some FUSE and network file systems say 0 links: none other, as far as they know)
    return stat.S_ISREG(st.st_mode) and st.st_nlink <= 1


def _trusted(st: os.stat_result, path: Path, shared: bool) -> None:
    """Refuse (UNSAFE_FOLDER) a folder that is not the watcher's alone: another user's, or
    one group or others may write (``shared``: with the sticky bit they may, as nobody can
    then rename or remove another's file)."""
    euid = os.geteuid()
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeFolder(f"{path}: not a folder")
    if st.st_uid != euid:
        raise UnsafeFolder(
            f"{path}: owned by uid {st.st_uid}, not by the watcher's user (uid {euid}); "
            "it keeps its files only in folders of its own"
        )
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022 and not (shared and mode & stat.S_ISVTX):
        allowed = "no write for group and others, or the sticky bit" if shared else "0700"
        raise UnsafeFolder(
            f"{path}: mode {mode:04o} lets others write in it; the watcher needs {allowed}"
        )


def _own_file(fd: int, path: Path) -> None:
    """A file of the watcher's state: a regular file of its own with one name."""
    st = os.fstat(fd)
    if not _single(st) or st.st_uid != os.geteuid():
        os.close(fd)
        raise UnsafeFolder(f"{path}: not a regular file of the watcher's own")


@dataclass
class _Folder:
    """A folder opened once: its descriptor, and the folder and name it was opened at, so
    each use can check that the name still leads to it."""

    fd: int
    parent: int
    name: str
    path: Path
    shared: bool

    def checked(self) -> int:
        """The descriptor, once the folder is still where it was opened (not moved, removed
        or replaced) and still the watcher's alone; else UNSAFE_FOLDER."""
        try:
            there: os.stat_result | None = os.stat(
                self.name, dir_fd=self.parent, follow_symlinks=False
            )
        except OSError:
            there = None
        st = os.fstat(self.fd)
        if there is None or (there.st_dev, there.st_ino) != (st.st_dev, st.st_ino):
            raise UnsafeFolder(
                f"{self.path}: moved, removed or replaced while the watcher ran; it stops"
            )
        _trusted(st, self.path, self.shared)
        return self.fd


def _open_folder(
    parent: int, name: str, path: Path, *, shared: bool, mode: int, gid: int = -1
) -> _Folder:
    """``name`` in the folder ``parent`` opened without following a link, made (``mode``,
    group ``gid``) where missing, and checked: the watcher's alone."""
    made = False
    fd = -1
    for _attempt in range(3):
        try:
            fd = os.open(name, _DIR, dir_fd=parent)
            break
        except FileNotFoundError:
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o700, dir_fd=parent)
                made = True
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise UnsafeFolder(
                    f"{path}: a symbolic link or not a folder; the watcher keeps its files "
                    "in real folders of its own"
                ) from None
            raise UnsafeFolder(f"{path}: cannot be opened ({exc.strerror})") from None
    if fd < 0:
        raise UnsafeFolder(f"{path}: cannot be made")
    try:
        if made:
            os.fchmod(fd, mode)
            if gid >= 0:
                with contextlib.suppress(OSError):
                    os.fchown(fd, -1, gid)
        _trusted(os.fstat(fd), path, shared)
    except BaseException:
        os.close(fd)
        raise
    return _Folder(fd, parent, name, path, shared)


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    fds.clear()


def _copy_into(src_dir: int, src: str, dst_dir: int, dest: str) -> bool:
    """``src`` copied into a new file ``dest`` (created exclusively: never over a file, never
    through a link), made durable, then ``src`` removed: a move across file systems. False
    when ``dest`` was taken meanwhile."""
    fd_in = os.open(src, _READ, dir_fd=src_dir)
    try:
        st = os.fstat(fd_in)
        if not _single(st):
            raise FileNotFoundError(errno.ENOENT, "not a regular file")
        try:
            fd_out = os.open(dest, _NEW, 0o600, dir_fd=dst_dir)
        except FileExistsError:
            return False
        try:
            with (
                os.fdopen(fd_out, "wb", closefd=False) as out,
                os.fdopen(fd_in, "rb", closefd=False) as fh,
            ):
                shutil.copyfileobj(fh, out, 1 << 20)
                out.flush()
                os.fsync(fd_out)
            os.utime(fd_out, ns=(st.st_atime_ns, st.st_mtime_ns))
        except BaseException:
            os.close(fd_out)
            with contextlib.suppress(OSError):
                os.unlink(dest, dir_fd=dst_dir)
            raise
        os.close(fd_out)
    finally:
        os.close(fd_in)
    os.unlink(src, dir_fd=src_dir)
    return True


def _move(src_dir: int, src: str, dst_dir: int, name: str, *, note: bool = False) -> str:
    """``src`` (in ``src_dir``) moved into ``dst_dir`` as ``name`` or a fresh variant of it
    (``note``: with its ``.reason`` name free too), never over a file already there: a rename
    into a name found free (only the watcher makes names in its folders; in a shared one with
    the sticky bit a name taken meanwhile is skipped), across file systems a copy made
    exclusively. No second name of the file is made on the way: a watcher killed midway
    leaves it in one place. Returns the name it has."""
    for n in range(1, 10_000):
        dest = _variant(name, n)
        if not _free(dst_dir, dest) or (note and not _free(dst_dir, dest + REASON)):
            continue
        try:
            os.rename(src, dest, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
            return dest
        except (FileExistsError, PermissionError, IsADirectoryError):
            # a folder planted at the name meanwhile (a shared .done) is a name taken too
            if _free(dst_dir, dest):
                raise  # not a name taken: the folder itself refuses
            continue  # taken meanwhile by another's file (a sticky folder): the next name
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
        if _copy_into(src_dir, src, dst_dir, dest):
            return dest
    raise UnsafeFolder(f"{name}: no free name for it in its folder")


def move_fresh(src: Path, folder: Path, name: str) -> Path:
    """``src`` moved into ``folder`` as ``name`` or a fresh variant of it, never over a file
    already there (see ``_move``)."""
    src_dir = os.open(src.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    dst_dir = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return folder / _move(src_dir, src.name, dst_dir, name)
    finally:
        os.close(src_dir)
        os.close(dst_dir)


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


def leave_with_parent() -> None:
    """In a process of a pool: exit the moment the process that started it is gone (killed,
    SIGKILL included), whatever this one is doing. The parent is the one recorded at spawn
    (``multiprocessing.parent_process()``, as `serve`'s workers take it): its sentinel, a pipe
    only the parent holds open, reads as ended when the parent dies."""
    import multiprocessing
    import threading

    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        parent.join()  # waits on the sentinel: no polling, no pid that could be reused
        os._exit(EXIT_TEMPORARY)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


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
