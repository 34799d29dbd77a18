"""`process -j N` (and `watch -j N`): every core on the work, one big document or many small.

The pages of a plain document of more than one page are handed out in chunks as processes
free up, each chunk read in whichever process takes it (``pipeline.plain.read_range``, as the
service's workers read a split job's ranges), and the parts are put together and checked as
one document (``pipeline.assembly.assemble``): the same bytes as ``-j 1`` but for the dates. Pages
cost what their print costs (a dense 300-dpi page many seconds, a light one a fraction, a
born-digital one almost nothing), so fixed ranges of ⌈pages/N⌉ left a process idle while
another read the dense half; chunks that shrink toward the end (``page_chunks``) leave at most
about a page's work for the last process. Several files share the N processes, the chunks of
each queued in file order, so the first file is done first. A redaction, and a document of one
page, is read whole in one process: a redaction must see the whole document to decide what to
burn.

Everything that crosses into a process is plain data; each process keeps one Tesseract. What
each process reads is sent back a page at a time over a queue, for the progress lines.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import shutil
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pressroom.errors import EXIT_INTERNAL, EXIT_TEMPORARY, PressroomError
from pressroom.hints import for_cli
from pressroom.offline.process import (
    Outcome,
    OutputChoice,
    current_engine,
    delivered,
    job_options,
    private_folder,
    process_one,
    scanned_copy,
    scans,
    shared_engine,
    use_engine,
)
from pressroom.settings import Settings

if TYPE_CHECKING:
    from pressroom.pipeline.core import JobOptions
    from pressroom.redact.policy import RedactionPolicy
    from pressroom.templates import Template


class Board(Protocol):
    """Where a run's progress is shown (``cli.progress.Board`` on a terminal): a file begins
    with its pages, steps as they are read, and ends."""

    def begin(self, key: object, name: str, pages: int) -> None: ...

    def step(self, key: object, name: str, steps: int, passes: int = 1) -> None: ...

    def end(self, key: object) -> None: ...


@dataclass(frozen=True, slots=True)
class Run:
    """What every file of one `process` run shares."""

    template: Template
    title: str | None
    policy: RedactionPolicy | None
    keep_pixels: bool
    settings: Settings
    template_name: str | None
    review_always: bool
    output: OutputChoice
    mode: int = 0o644  # of each output (watch: the operator's --mode)
    scan: bool | None = None  # the malware scanner first (``process_one``'s ``scan``)

    @property
    def redacts(self) -> bool:
        return self.policy is not None and not self.policy.empty


# Chunks: a pool process takes at most 1/(GUIDE*processes) of the pages left when it takes
# its chunk (guided self-scheduling), never under one page nor over MOST_PAGES.
GUIDE = 2
MOST_PAGES = 8


def page_chunks(pages: int, processes: int) -> list[tuple[int, int]]:
    """``pages`` cut into the chunks handed out, in page order: each ⌈left/(GUIDE*processes)⌉
    of the pages not yet handed out, at most MOST_PAGES; one page each at the end.

    Why this size: each chunk is a ``read_range`` that opens the whole source, draws its
    forms, inspects every page and writes a part, and the assembly opens each part again.
    Measured on a 24-page 12 MB mixed scan (``bench/spread_bench.py --model``), a chunk's
    fixed cost is 0.05-0.07 s of CPU, most of it the source's inspection (0.065 s, about 3 ms
    a page of the document, so more for a longer one), against 0.25-0.4 s to read a light
    page and 1.2 s a dense one. A chunk a page would be cheap here but its cost grows as
    pages² on long documents; shrinking chunks keep the count small (24
    pages on 2 processes: 9 chunks, 6 5 4 3 2 1 1 1 1) while the last ones are single pages,
    so when one process takes the last chunk the others have about a page's work left,
    wherever the dense pages are. On that file, by its pages' measured CPU, two processes
    taking chunks as they free up end in 8.3 s (1.87x one process); fixed halves took 12.0 s
    (1.30x), the first process waiting 8.3 s for the other.
    MOST_PAGES bounds what one early chunk can hold when all its pages are dense (8 pages,
    about 10 s; 400 pages: 56 chunks)."""
    chunks, first = [], 0
    share = GUIDE * max(1, processes)
    while first < pages:
        size = min(MOST_PAGES, -(-(pages - first) // share))
        chunks.append((first, first + size))
        first += size
    return chunks


# --- what runs in the pool's processes -----------------------------------------------------

_EVENTS: Any = None  # this process's end of the run's progress queue


def _joined(events: Any, engine: Any) -> None:
    """A pool process starts: where its progress goes, and the engine its parent was given
    before the pool started (None: the process makes its own Tesseract at first use)."""
    global _EVENTS
    _EVENTS = events
    if engine is not None:
        use_engine(engine)
    # a pool process exits the moment its parent is gone (a SIGKILL, the OOM killer): it
    # would read on, then wait for work, with nobody left to end it
    from pressroom.hotfolder import leave_with_parent

    leave_with_parent()


def _ticks(key: tuple[int, int]) -> Callable[[int, int], None]:
    def tick(_done: int, steps: int) -> None:
        if _EVENTS is not None:
            _EVENTS.put((key, steps))

    return tick


def _failed(path: Path, exc: BaseException) -> Outcome:
    if isinstance(exc, PressroomError):
        return Outcome(exc.exit_code, f"{exc.code}: {path.name}: {for_cli(exc.code, exc.message)}")
    return Outcome(EXIT_INTERNAL, f"INTERNAL_ERROR: {path.name}: {type(exc).__name__}")


def _count(
    path: Path, settings: Settings, scan: bool | None = None, folder: Path | None = None
) -> tuple[int, Path] | Outcome:
    """Its pages, and what later steps read: with a scanner, its copy scanned in ``folder``."""
    from pressroom.pipeline.inspect import inspect_source

    if not path.is_file():
        return Outcome(2, f"NOT_FOUND: {path}: no such file")
    try:
        source = path if folder is None else scanned_copy(path, folder, settings, scan)
        return len(inspect_source(source, settings.limits).pages), source
    except Exception as exc:
        return _failed(path, exc)


@dataclass(frozen=True, slots=True)
class _RangeDone:
    part: Path
    records: list[dict[str, Any]]
    levelled: int
    flattened: int
    notes: tuple[tuple[int, str], ...]


def _read(
    key: tuple[int, int],
    path: Path,
    part: Path,
    options: JobOptions,
    settings: Settings,
    span: range,
) -> _RangeDone | Outcome:
    from pressroom.pipeline.assembly import page_records
    from pressroom.pipeline.ocr import engine_for
    from pressroom.pipeline.plain import read_range

    try:
        engine = engine_for(shared_engine(settings), options.languages)
        read = read_range(path, part, options, engine, span, progress=_ticks(key))
        return _RangeDone(part, page_records(read.pages), read.levelled, read.flattened, read.notes)
    except Exception as exc:
        part.unlink(missing_ok=True)
        return _failed(path, exc)


def _assemble(
    path: Path,
    dest: Path,
    folder: Path,
    done: list[_RangeDone],
    options: JobOptions,
    settings: Settings,
    started: float,
    mode: int = 0o644,
) -> Outcome:
    """The parts made one checked output and delivered, as ``process_one`` delivers."""
    from pressroom.fsutil import place_copy
    from pressroom.pipeline.assembly import assemble, read_page_records
    from pressroom.pipeline.inspect import file_sha256
    from pressroom.pipeline.ocr import engine_for
    from pressroom.pipeline.sidecar import sidecar_path, sidecar_text
    from pressroom.pipeline.sniff import sniff_file
    from pressroom.stages import StageTimer

    try:
        built = folder / "output.pdf"
        pages = [p for d in done for p in read_page_records(d.records)]
        result = assemble(
            [d.part for d in done],
            pages,
            built,
            options,
            engine_for(shared_engine(settings), options.languages),
            StageTimer(),
            source_sha256=file_sha256(path),
            kind=sniff_file(path),
        )
        first = done[0]  # every range drew the whole document's forms in: the same counts
        result = replace(
            result,
            levelled_pages=sum(d.levelled for d in done),
            flattened=first.flattened,
            notes=len(first.notes),
        )
        if options.wants_sidecar:
            text = sidecar_text(
                built, result.layouts, result.output_pages - result.pages, first.notes
            )
            sidecar_path(built).write_text(text, encoding="utf-8")
            place_copy(sidecar_path(built), dest.with_suffix(".txt"), mode=mode)
        place_copy(built, dest, mode=mode)
    except Exception as exc:
        return _failed(path, exc)
    return delivered(dest, result, options, time.monotonic() - started)


def run_one(
    run: Run, path: Path, dest: Path, progress: Callable[[int, int], None] | None
) -> Outcome:
    """One file read whole in this process, under the run's choices."""
    return process_one(
        path,
        dest,
        run.template,
        run.title,
        progress,
        run.policy,
        run.keep_pixels,
        run.settings,
        run.template_name,
        run.review_always,
        run.output,
        run.mode,
        run.scan,
    )


def _whole(key: tuple[int, int], path: Path, dest: Path, run: Run) -> Outcome:
    return run_one(run, path, dest, _ticks(key))


# --- the run, in the command's process -----------------------------------------------------


@dataclass
class _File:
    key: int
    path: Path
    dest: Path
    started: float = field(default_factory=time.monotonic)
    options: JobOptions | None = None  # one set for all its chunks and their assembly
    folder: Path | None = None  # its parts (and its scanned copy), private (0700)
    source: Path | None = None  # what its chunks read: the scanned copy, or the input
    chunks: list[tuple[int, int]] = field(default_factory=list)  # in page order
    done: dict[int, _RangeDone] = field(default_factory=dict)
    failure: Outcome | None = None


def run_spread(
    work: list[tuple[Path, Path]],
    processes: int,
    run: Run,
    board: Board,
    report: Callable[[int, Outcome], None],
) -> list[Outcome]:
    """Every file of ``work`` (source, output path) processed over ``processes`` processes;
    each outcome is reported (with the file's place in ``work``) as it is known. Parts never
    outlive the run."""
    with Spreader(processes) as spreader:
        return spreader.run(work, run, board, report)


class Spreader:
    """A pool of ``processes`` processes kept for many runs (a hot folder's batches): each
    keeps its Tesseract from one batch to the next."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        # processes started by a server forked before any thread (rich's, watchdog's) runs
        # here: a fork of a threaded process may inherit a lock some thread held
        self._context = multiprocessing.get_context("forkserver")
        self._events = self._context.Queue()
        self._runs = 0  # each run's events carry its number: a late one is not another's
        self._pool = self._new_pool()

    def _new_pool(self) -> ProcessPoolExecutor:
        pool = ProcessPoolExecutor(
            max_workers=self.processes,
            mp_context=self._context,
            initializer=_joined,
            initargs=(self._events, current_engine()),
        )
        # a forkserver's pool starts a process only when no process is idle: as many calls
        # at once start them all now, so the first document's chunks each find one
        for started in [pool.submit(os.getpid) for _ in range(self.processes)]:
            started.result()
        return pool

    def __enter__(self) -> Spreader:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self, *, at_once: bool = False) -> None:
        """The pool shut down once its processes finish what they read; ``at_once``: they
        are stopped now (a second Ctrl-C)."""
        if at_once:
            # ProcessPoolExecutor has no public way to stop a running call (3.14 adds
            # terminate_workers): its processes are ended here
            for process in list(getattr(self._pool, "_processes", {}).values()):
                process.terminate()
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._events.close()

    def run(
        self,
        work: list[tuple[Path, Path]],
        run: Run,
        board: Board,
        report: Callable[[int, Outcome], None],
    ) -> list[Outcome]:
        """``work``'s files processed; their outcomes reported as each ends, and returned in
        ``work``'s order."""
        pool, events, processes = self._pool, self._events, self.processes
        self._runs += 1
        tag = self._runs
        outcomes: dict[int, Outcome] = {}
        files = [_File(n, path, dest) for n, (path, dest) in enumerate(work)]
        pending: dict[Future[Any], tuple[str, _File, int]] = {}
        passes = 2 if run.redacts else 1

        def finish(f: _File, outcome: Outcome) -> None:
            if f.folder is not None:
                shutil.rmtree(f.folder, ignore_errors=True)
                f.folder = None
            board.end(f.key)
            outcomes[f.key] = outcome
            report(f.key, outcome)

        try:
            for f in files:
                if run.redacts:
                    whole = pool.submit(_whole, (tag, f.key), f.path, f.dest, run)
                    pending[whole] = ("whole", f, 0)
                else:  # scanned: a copy in its folder, which its chunks then read
                    scanned = scans(run.settings, run.scan)
                    f.folder = private_folder(run.settings) if scanned else None
                    counting = pool.submit(_count, f.path, run.settings, run.scan, f.folder)
                    pending[counting] = ("count", f, 0)
            while pending:
                ready, _ = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                _drain(events, files, board, passes, tag, outcomes)
                for future in ready:
                    kind, f, number = pending.pop(future)
                    value = future.result()
                    if kind == "count":
                        _counted(f, value, pool, pending, processes, run, board, finish, tag)
                    elif kind == "range":
                        if isinstance(value, Outcome):
                            f.failure = f.failure or value
                            _drop_unstarted(f, pending)
                        else:
                            f.done[number] = value
                        if not any(g is f for _k, g, _n in pending.values()):
                            _ranges_done(f, pool, pending, run, finish)
                    else:  # whole, assembly
                        _drain(events, files, board, passes, tag, outcomes)
                        finish(f, value)
        except BrokenProcessPool:
            # a process died (killed for memory, say): the pool is lost with it. The files
            # not ended are to be tried again, in a fresh pool
            pending.clear()
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
            for f in files:
                if f.key not in outcomes:
                    why = "the process reading it stopped (killed, for memory?); try again"
                    finish(f, Outcome(EXIT_TEMPORARY, f"UNAVAILABLE: {f.path.name}: {why}",
                                      crashed=True))  # fmt: skip
        finally:
            for future in pending:
                future.cancel()
            for f in files:
                if f.folder is not None:
                    shutil.rmtree(f.folder, ignore_errors=True)
        return [outcomes[key] for key in sorted(outcomes)]


def _counted(
    f: _File,
    value: tuple[int, Path] | Outcome,
    pool: ProcessPoolExecutor,
    pending: dict[Future[Any], tuple[str, _File, int]],
    processes: int,
    run: Run,
    board: Board,
    finish: Callable[[_File, Outcome], None],
    tag: int,
) -> None:
    if isinstance(value, Outcome):
        finish(f, value)
        return
    f.started = time.monotonic()
    pages, f.source = value
    board.begin(f.key, f.path.name, pages)
    if pages <= 1:
        whole = pool.submit(_whole, (tag, f.key), f.source, f.dest, replace(run, scan=False))
        pending[whole] = ("whole", f, 0)  # scanned by its count
        return
    f.options = job_options(run.template, run.title, run.settings, run.keep_pixels, run.output)
    f.folder = f.folder or private_folder(run.settings)
    # every chunk queued now, in page order: the pool gives the next to whichever process
    # frees up first (its queue is first in, first out), so this file's chunks come before
    # the next file's and a process held on a dense chunk holds no others
    f.chunks = page_chunks(pages, processes)
    for number, (first, end) in enumerate(f.chunks):
        part = f.folder / f"part{number:04d}.pdf"
        span = range(first, end)
        future = pool.submit(_read, (tag, f.key), f.source, part, f.options, run.settings, span)
        pending[future] = ("range", f, number)


def _drop_unstarted(f: _File, pending: dict[Future[Any], tuple[str, _File, int]]) -> None:
    """A chunk of ``f`` refused it: its chunks no process has taken yet are not read (the
    file is refused whatever they hold); those being read end as they end."""
    for future, (kind, g, _number) in list(pending.items()):
        if kind == "range" and g is f and future.cancel():
            del pending[future]


def _ranges_done(
    f: _File,
    pool: ProcessPoolExecutor,
    pending: dict[Future[Any], tuple[str, _File, int]],
    run: Run,
    finish: Callable[[_File, Outcome], None],
) -> None:
    if f.failure is not None:
        finish(f, f.failure)
        return
    assert f.options is not None and f.folder is not None and f.source is not None
    parts = [f.done[n] for n in range(len(f.chunks))]
    future = pool.submit(
        _assemble, f.source, f.dest, f.folder, parts, f.options, run.settings, f.started, run.mode
    )
    pending[future] = ("assembly", f, 0)


def _drain(
    events: Any,
    files: list[_File],
    board: Board,
    passes: int,
    tag: int,
    ended: dict[int, Outcome],
) -> None:
    """Every page read so far, onto the progress lines; a tick that arrives after its file
    ended, or from an earlier run of the pool, is dropped."""
    while True:
        try:
            (run, key), steps = events.get_nowait()
        except (queue.Empty, OSError, ValueError):
            return
        if run != tag or not 0 <= key < len(files) or key in ended:
            continue
        f = files[key]
        board.step(f.key, f.path.name, steps, passes)
