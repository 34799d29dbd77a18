"""A redaction's first pass over a PDF's pages by several threads at once (``redact.scan``).

Reading a page is rendering it (PDFium), telling what a reader sees of it (``redact.seen``, or
OCR and faint print: Tesseract) and detection. The pages are independent until every one is
read, so the pass hands them to ``threads`` threads,
each with an engine of its own (a Tesseract API object reads one image at a time), and takes
the results back in page order: the scans, the stage seconds (summed over the threads: a
stage's seconds may pass the pass's wall time) and the progress steps, as one thread would
have given them. PDFium and pikepdf are not thread-safe: a thread holds the reader's ``turn``
for every call into them; detection (the model, the recognisers' caches) is taken one thread
at a time too. What needs the whole document — the values found, propagated to every page;
the source's words a reworked page keeps; building and every check after — stays whole, after
the pass.

A failure on any page stops the pass: pages not begun are not read, those being read finish,
and the first failure in page order is raised, as one thread reading them in order would have
raised it. A thread asks ``between_pages`` before each page, in the context of the job that
started the pass (a cancel ends it within a page of each thread).

Measured (2 cores, ``OMP_THREAD_LIMIT=1``, a 10-page 300-dpi scan): 27.4 s with one thread,
23.9 s with two. Not twice: Tesseract through tesserocr does not read two images at once in
one process here (two API objects on two threads, four pages: 3.12 s one after the other,
2.93 s side by side), so what overlaps is the rest of a page's reading. So the pass reads
in forked processes where this process may fork (``redact.procs``, with the same results,
order, seconds, progress and failures as here), and in threads, here, where it may not: a
daemonic process, or one with other threads alive (the service's worker; see
``procs.fork_refused``)."""

from __future__ import annotations

import contextvars
import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, Protocol, TypeVar

from pressroom.models import PageInfo
from pressroom.pipeline.ocr import OcrEngine
from pressroom.pipeline.stop import between_pages
from pressroom.stages import Stage, StageTimer

Scan = TypeVar("Scan")
Scan_co = TypeVar("Scan_co", covariant=True)
Self = TypeVar("Self", bound="Reader[Any]")


class Reader(Protocol[Scan_co]):
    """What reads one page (``redact.scan.PageReader``): the run's context and engine, a twin
    of itself with another engine, and the page's rendering and reading."""

    @property
    def ctx(self) -> Any: ...

    @property
    def engine(self) -> OcrEngine: ...

    def twin(self: Self, engine: OcrEngine) -> Self: ...

    def render(self, page: PageInfo, timer: StageTimer) -> tuple[Any, Any]: ...

    def read(self, page: PageInfo, raster: Any, words: Any, timer: StageTimer) -> Scan_co: ...


class _Stopped(Exception):
    """A page not begun because another failed first."""


def twinnable(engine: OcrEngine) -> bool:
    """Whether ``engine`` can give engines of its own kind for other threads (``twin``)."""
    return callable(getattr(engine, "twin", None))


def read_in_threads(reader: Reader[Scan], threads: int) -> list[Scan]:
    """Every page of ``reader``'s PDF read by ``threads`` threads (see the module's doc)."""
    ctx = reader.ctx
    pages = ctx.info.pages
    engines: queue.SimpleQueue[OcrEngine] = queue.SimpleQueue()
    engines.put(reader.engine)  # the caller's thread waits meanwhile: one thread may read with it
    for _ in range(threads - 1):
        engines.put(reader.engine.twin())  # type: ignore[attr-defined]
    mine = threading.local()
    stop = threading.Event()

    def one(page: PageInfo) -> tuple[Scan, StageTimer]:
        if stop.is_set():
            raise _Stopped
        own = getattr(mine, "reader", None)
        if own is None:
            own = mine.reader = reader.twin(engines.get_nowait())
        try:
            between_pages()
            timer = StageTimer()
            raster, words = own.render(page, timer)
            return own.read(page, raster, words, timer), timer
        except BaseException:
            stop.set()  # the pages not begun are not read
            raise

    scans: list[Scan] = []
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="pressroom-page") as pool:
        futures: list[Future[tuple[Scan, StageTimer]]] = [
            pool.submit(contextvars.copy_context().run, one, page) for page in pages
        ]
        try:
            for n, future in enumerate(futures):
                try:
                    scan, timer = future.result()
                except _Stopped:
                    raise _first_failure(futures) from None
                for stage, seconds in timer.totals.items():
                    ctx.timer.add(Stage(stage), seconds)
                scans.append(scan)
                if ctx.progress is not None:
                    ctx.progress(n + 1, 2 * len(pages))
        except BaseException:
            stop.set()
            for future in futures:
                future.cancel()
            raise
    return scans


def _first_failure(futures: list[Future[tuple[Any, StageTimer]]]) -> BaseException:
    """The failure, in page order, that stopped the pass (every page begun is waited for)."""
    wait(futures)
    for future in futures:
        if future.cancelled():
            continue
        failure = future.exception()
        if failure is not None and not isinstance(failure, _Stopped):
            return failure
    return RuntimeError("a page's reading stopped with no failure to say why")
