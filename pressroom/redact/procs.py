"""A redaction's first pass over a PDF's pages by several processes at once (``redact.scan``).

Threads (``redact.pages``) overlap only what is not Tesseract: tesserocr reads one image at a
time in a process. Processes read at once. The pass forks ``processes`` children of the
process that runs it: each inherits what is loaded (the detection model, the run's context),
makes a Tesseract of its own (``engine.twin()``) and opens the source again (its own PDFium
document and pikepdf ``Pdf``, ``own_documents``): handles opened before the fork are not used
in a child, for PDFium and qpdf read their file lazily through a file offset the parent and
every child would share. The parent hands out one page at a time, in page order, to whichever
child is free (a page is the unit: a child opened its documents once, so a page handed out
costs a message, not a chunk's setup as ``offline.spread``'s do), and takes back each page's
``PageScan`` and stage seconds as plain pickled data. It gives the scans back in page order,
adds the stage seconds to the run's timer (summed over the processes: a stage's seconds may
pass the pass's wall time) and steps the progress in page order, as one reader would. The
pass's pixel budget is one count across the processes.

A failure on a page stops the pass: no page is handed out after it, the pages being read
finish (a child is not killed mid-page: it may hold the budget's lock), and the first failure
in page order is raised (a ``PressroomError`` as itself, its code kept; a bug's traceback from the
child rides on it as its cause). Every page before it was handed out, so it is the failure
one reader in page order would have raised. A child that dies (killed for memory, a crash in
a C library) fails its page with a ``TransientError``. The parent asks ``between_pages``
before handing out each page, in the context of the job that started the pass; a cancel ends
every child at once.

Where a fork is not safe, the pass reads in threads instead (``fork_refused``): a daemonic
process may not start processes, and a fork copies only the thread that forks, so in a
process with other threads alive (the service's worker renews its lease on a thread, over a
database connection; a tracing exporter; a test's server) a lock one of them holds stays held
in the child forever, and what only their frames held is freed there, destructors included,
on sockets the parent still uses. Only threads known to hold nothing a child touches are let
by: multiprocessing's queue feeders and the parent watch of ``offline.spread``'s pool
processes (``process -j N``, where a lone redaction gets the run's share of processes). A
child ignores Ctrl-C (the parent ends it), exits with its parent, and leaves by ``os._exit``:
nothing the parent opened is flushed, finalised or closed from a child."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import threading
import traceback
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar

from pressroom.errors import PressroomError, TransientError
from pressroom.models import PageInfo
from pressroom.parentwatch import leave_with_parent
from pressroom.pipeline.stop import between_pages, stop_when
from pressroom.pixels import PixelBudget
from pressroom.redact.pages import Reader
from pressroom.redact.source import OriginalText, RedactionSource
from pressroom.stages import Stage, StageTimer

Scan = TypeVar("Scan")

# False: no pass forks (a test of the threaded pass sets it)
ALLOWED = True
# threads that hold nothing a child touches: multiprocessing.Queue's feeder, and the thread
# ``parentwatch.leave_with_parent`` starts in ``offline.spread``'s pool processes
HARMLESS_THREADS = frozenset({"QueueFeederThread", "parent-watch"})
LOCK_WAIT_S = 30.0


def fork_refused() -> str | None:
    """Why this process may not read a pass's pages in processes of its own now; None where
    it may (see the module's doc)."""
    if not ALLOWED:
        return "processes are turned off here"
    if "fork" not in multiprocessing.get_all_start_methods():
        return "this system cannot fork"
    if multiprocessing.current_process().daemon:
        return "a daemonic process may not start processes"
    here = threading.current_thread()
    others = [t for t in threading.enumerate() if t is not here and t.name not in HARMLESS_THREADS]
    if others:
        return f"{len(others)} other thread(s) alive: a fork would copy their locks held"
    return None


def own_documents(reader: Any, stack: ExitStack, spent: Any) -> Any:
    """In a child: ``redact.scan.PageReader`` ``reader`` with documents of its own (the
    source, and the original text of a reworked copy), opened for the length of ``stack``, a
    Tesseract of its own, fresh locks, and the pass's pixel budget counted in ``spent``
    (shared by every process of the pass)."""
    ctx = reader.ctx
    src = RedactionSource(stack, ctx.src.path, ctx.info, ctx.options.limits)
    src.max_pixels = ctx.src.max_pixels
    original = reader.original
    if original is not None:
        original = OriginalText(stack, original.path, original.pages, original.limits)
    mine = replace(
        reader,
        ctx=replace(ctx, stack=stack, src=src, timer=StageTimer(), progress=None),
        original=original,
        budget=SharedBudget(reader.budget, spent),
        turn=threading.RLock(),
        detecting=threading.Lock(),
    )
    return mine.twin(reader.engine.twin())


class SharedBudget(PixelBudget):
    """A pass's pixel budget counted across its processes: ``spent`` is a
    ``multiprocessing.Value`` the parent made before the fork."""

    def __init__(self, budget: PixelBudget, spent: Any) -> None:
        self.max_pixels = budget.max_pixels
        self.max_document_pixels = budget.max_document_pixels
        self.spent = budget.spent
        self.shared = spent

    def take(self, width: int, height: int, what: str) -> None:
        lock = self.shared.get_lock()
        # held for a moment by whoever counts; only a process that died counting holds it on
        if not lock.acquire(timeout=LOCK_WAIT_S):
            raise TransientError("the pass's pixel count is held by a process that stopped")
        try:
            self.spent = self.shared.value
            super().take(width, height, what)
            self.shared.value = self.spent
        finally:
            lock.release()


Reopen = Callable[[Any, ExitStack, Any], Any]


class RemoteTraceback(Exception):
    """The traceback of a failure in a child, as text (the cause of the error raised)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass
class _Child:
    process: Any
    conn: Connection
    page: int | None = None  # the page it reads; None: idle


def read_in_processes(
    reader: Reader[Scan], processes: int, reopen: Reopen = own_documents
) -> list[Scan]:
    """Every page of ``reader``'s PDF read by ``processes`` forked processes (see the module's
    doc); ``reopen`` gives a child its own reader (``own_documents``)."""
    ctx = reader.ctx
    pages: list[PageInfo] = list(ctx.info.pages)
    forks = multiprocessing.get_context("fork")
    budget = getattr(reader, "budget", None)
    spent = forks.Value("q", budget.spent if isinstance(budget, PixelBudget) else 0)
    children: list[_Child] = []
    done: dict[int, tuple[Scan, dict[str, float]]] = {}
    failures: dict[int, BaseException] = {}
    scans: list[Scan] = []
    handed = 0

    def hand(child: _Child) -> None:
        nonlocal handed
        if failures or handed >= len(pages):
            return
        between_pages()
        child.conn.send(pages[handed])
        child.page = handed
        handed += 1

    try:
        for _ in range(min(processes, len(pages))):
            mine, theirs = forks.Pipe()
            siblings = [c.conn for c in children]
            process = forks.Process(
                target=_serve,
                args=(reader, reopen, theirs, spent, siblings),
                name="pressroom-page",
                daemon=True,
            )
            try:
                process.start()
            except OSError as exc:  # EAGAIN under pids.max, EMFILE, ENOMEM
                theirs.close()
                mine.close()
                if children:
                    break  # the pass reads with those started
                raise TransientError(f"no process could start to read pages: {exc}") from None
            theirs.close()
            children.append(_Child(process, mine))
        for child in children:
            hand(child)
        while busy := [c for c in children if c.page is not None]:
            ready = wait([c.conn for c in busy] + [c.process.sentinel for c in busy])
            for child in busy:
                if child.conn not in ready and child.process.sentinel not in ready:
                    continue
                index = child.page
                assert index is not None
                child.page = None
                try:
                    message = child.conn.recv()
                except (EOFError, OSError):
                    failures[index] = TransientError(
                        f"the process reading page {index + 1} stopped before it was read "
                        "(killed, for memory?); try again"
                    )
                    continue
                if message[0] == "page":
                    done[index] = (message[1], message[2])
                else:
                    failures[index] = _rebuilt(message[1])
                while len(scans) in done:  # the pages read so far, in page order
                    scan, totals = done.pop(len(scans))
                    for stage, seconds in totals.items():
                        ctx.timer.add(Stage(stage), seconds)
                    scans.append(scan)
                    if ctx.progress is not None:
                        ctx.progress(len(scans), 2 * len(pages))
                hand(child)
        if failures:
            raise failures[min(failures)]
        if isinstance(budget, PixelBudget):
            budget.spent = spent.value
        for child in children:
            child.conn.send(None)
        for child in children:
            child.process.join(10)
    finally:
        for child in children:
            if child.process.is_alive():
                child.process.kill()
            child.process.join()
            child.conn.close()
    return scans


def _serve(
    reader: Any, reopen: Reopen, conn: Connection, spent: Any, siblings: list[Connection]
) -> None:
    """A child: pages read as the parent hands them out, each sent back (its scan and stage
    seconds, or its failure) until the parent sends None."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent ends the pass
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for other in siblings:
            other.close()
        leave_with_parent()
        with ExitStack() as stack, stop_when(_read_on):
            own: Any = None
            while (page := conn.recv()) is not None:
                try:
                    if own is None:
                        own = reopen(reader, stack, spent)
                    timer = StageTimer()
                    raster, words = own.render(page, timer)
                    scan = own.read(page, raster, words, timer)
                    conn.send(("page", scan, dict(timer.totals)))
                except BaseException as exc:
                    conn.send(("failed", _portable(exc)))
    except BaseException:
        pass  # nothing here may print: the parent sees the pipe end and fails the page
    finally:
        os._exit(0)


def _read_on() -> None:
    """A child's ``between_pages``: the parent asks the job's own before each page."""


def _portable(exc: BaseException) -> bytes:
    """``exc`` as bytes the parent rebuilds it from, its type kept: its class, arguments and
    attributes (rebuilt without calling its ``__init__``, whatever that takes), and for a
    failure not ours, the child's traceback."""
    remote = None if isinstance(exc, PressroomError) else "".join(traceback.format_exception(exc))
    forms: list[tuple[type[BaseException], tuple[Any, ...], dict[str, Any]]] = [
        (type(exc), exc.args, dict(getattr(exc, "__dict__", {}))),
        (type(exc), (str(exc),), {}),
        (RuntimeError, (f"{type(exc).__name__} in a page's reading",), {}),
    ]
    for form in forms:
        try:
            return pickle.dumps((form, remote))
        except Exception:
            continue  # the next, plainer form
    raise AssertionError("unreachable: the last form is plain")


def _rebuilt(data: bytes) -> BaseException:
    try:
        (cls, args, state), remote = pickle.loads(data)
        exc: BaseException = cls.__new__(cls, *args)
        exc.args = args
        exc.__dict__.update(state)
    except Exception:
        return RuntimeError("a page's reading failed in a way that could not be told back")
    if remote is not None:
        exc.__cause__ = RemoteTraceback(remote)
    return exc
