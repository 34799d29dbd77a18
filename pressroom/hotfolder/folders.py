"""The hot folder's folders and moves: which names are taken, the folders the watcher trusts,
and files moved into them without ever landing on a file or through a link.

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
never write for group or others).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from pressroom.errors import UnsafeFolder

STATE = ".pressroom"
DONE = ".done"
FAILED = ".failed"
DUE = "done-due"  # in the state folder: the sources in .done/ to remove, and when
PARTIAL_SUFFIXES = (".part", ".partial", ".tmp", ".crdownload", ".filepart", ".swp", ".reason")
NAME_MAX = 255  # bytes in one name (Linux file systems)
REASON = ".reason"
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


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
