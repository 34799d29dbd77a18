"""A redaction's first pass read by several processes (issue 46, item 3): the same scans as one
reader, each page read once and in a process other than the parent's; progress and stage
seconds in page order; the first failing page's error raised as itself; a child that dies
fails its page; a cancel ends the pass; one pixel budget for the whole pass; threads where
this process may not fork."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from pressroom.engines.tesseract import TesseractEngine
from pressroom.errors import Corrupt, PixelLimit, TransientError
from pressroom.models import PageInfo
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.ocr import OcrStage
from pressroom.pipeline.prepare import Prepared
from pressroom.pipeline.stop import stop_when
from pressroom.redact import procs
from pressroom.redact.context import RunContext
from pressroom.redact.detect.detector import Detector
from pressroom.redact.policy import parse_policy
from pressroom.redact.procs import RemoteTraceback, fork_refused, read_in_processes
from pressroom.redact.scan import PageScan, scan_pages
from pressroom.redact.source import REDACT_DPI, RedactionSource
from pressroom.settings import Limits
from pressroom.stages import Stage, StageTimer
from pressroom.synth import text_pdf
from pressroom.templates import resolve_template
from tests.integration.test_redaction_threads import LINES, scanned

pytestmark = pytest.mark.integration

FORKS = multiprocessing.get_context("fork")


class Logged:
    """The real engine, writing down in ``log`` the process that read each whole page (a
    page is 2550 px wide): a file, for a forked child's engine writes there too."""

    def __init__(self, engine: TesseractEngine, log: Path) -> None:
        self.engine, self.log = engine, log

    def twin(self) -> Logged:
        return Logged(self.engine.twin(), self.log)

    def recognize(self, image: Image.Image, **kwargs: Any) -> Any:
        if image.size[0] >= 2500:
            fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                os.write(fd, f"{os.getpid()}\n".encode())
            finally:
                os.close(fd)
        return self.engine.recognize(image, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)


def readers(log: Path) -> list[int]:
    return [int(line) for line in log.read_text().split()] if log.exists() else []


def scan(
    path: Path,
    threads: int,
    log: Path,
    *,
    limits: Limits | None = None,
    steps: list[tuple[int, int]] | None = None,
) -> tuple[list[PageScan], StageTimer]:
    """``path``'s first pass, as a redaction runs it, read with ``threads`` readers."""
    options = JobOptions(
        template=resolve_template("plain"), page_threads=threads, limits=limits or Limits()
    )
    engine = Logged(TesseractEngine(), log)
    detector = Detector.for_classes(parse_policy("name", now=0).classes, options.redaction)
    timer = StageTimer()
    with ExitStack() as stack:
        ready = Prepared.as_is(path)
        info = ready.inspect(Limits(), every_page_dpi=REDACT_DPI)
        src = RedactionSource(stack, ready.path, info, options.limits)
        progress = None if steps is None else (lambda done, of: steps.append((done, of)))
        ctx = RunContext(
            stack,
            src,
            path.with_name("unbuilt.pdf"),
            options,
            engine,  # type: ignore[arg-type]
            OcrStage(engine),  # type: ignore[arg-type]
            detector,
            timer,
            progress,
        )
        return scan_pages(ctx), timer


@pytest.fixture
def no_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test runs where a fork is allowed: a thread an earlier test left alive (a test
    server) is let by for it, never skipped over (the children touch none of its locks)."""
    here = threading.current_thread()
    alive = {t.name for t in threading.enumerate() if t is not here}
    monkeypatch.setattr(procs, "HARMLESS_THREADS", procs.HARMLESS_THREADS | alive)
    assert fork_refused() is None


def test_processes_read_what_one_reader_reads_each_page_once_elsewhere(
    tmp_path: Path, no_threads: None
) -> None:
    path = scanned(tmp_path / "scan.pdf", 4)
    one, one_timer = scan(path, 1, tmp_path / "one.log")
    steps: list[tuple[int, int]] = []
    two, two_timer = scan(path, 2, tmp_path / "two.log", steps=steps)
    assert two == one  # words, findings, frames: the same scans, in page order
    assert [s.info.index for s in two] == [0, 1, 2, 3]
    assert {h.finding.value for s in two for h in s.hits_ocr} >= {"Margaret Thornbury"}
    # each page read whole once, as one reader reads them; in processes other than this one
    whole_one, whole_two = readers(tmp_path / "one.log"), readers(tmp_path / "two.log")
    assert len(whole_two) == len(whole_one) >= 4
    assert set(whole_one) == {os.getpid()}
    assert os.getpid() not in whole_two and 1 <= len(set(whole_two)) <= 2
    assert steps == [(1, 8), (2, 8), (3, 8), (4, 8)]
    assert set(two_timer.totals) == set(one_timer.totals) >= {"raster", "ocr", "detect"}
    assert multiprocessing.active_children() == []  # every child ended with the pass


def test_born_digital_pages_read_from_their_text_alike(tmp_path: Path, no_threads: None) -> None:
    # read from their own text (``redact.seen``: the child's own PDFium and pikepdf handles)
    path = text_pdf([[f"Page {n + 1}", *LINES] for n in range(3)], tmp_path / "digital.pdf")
    one, _ = scan(path, 1, tmp_path / "one.log")
    two, _ = scan(path, 2, tmp_path / "two.log")
    assert two == one and all(s.from_text for s in two)
    assert {h.finding.value for s in two for h in s.hits_text} >= {"Margaret Thornbury"}


def test_one_pixel_budget_for_the_pass_across_its_processes(
    tmp_path: Path, no_threads: None
) -> None:
    path = scanned(tmp_path / "scan.pdf", 4)
    page = 2550 * 900  # 8.5 by 3 inches at 300 dpi
    # three and a half pages' worth: one reader is refused at the fourth page; two processes
    # reading two pages each would each stay under it if each counted its own
    limits = Limits(max_document_pixels=page * 7 // 2)
    with pytest.raises(PixelLimit, match="past"):
        scan(path, 1, tmp_path / "one.log", limits=limits)
    with pytest.raises(PixelLimit, match="past"):
        scan(path, 2, tmp_path / "two.log", limits=limits)


def test_threads_where_this_process_may_not_fork(tmp_path: Path) -> None:
    path = scanned(tmp_path / "scan.pdf", 3)
    one, _ = scan(path, 1, tmp_path / "one.log")
    release = threading.Event()
    other = threading.Thread(target=release.wait, name="a test's server")
    other.start()
    try:
        assert fork_refused() is not None  # a fork would copy the locks that thread holds
        threaded, _ = scan(path, 2, tmp_path / "two.log")
    finally:
        release.set()
        other.join()
    assert threaded == one
    assert set(readers(tmp_path / "two.log")) == {os.getpid()}  # no process forked


def test_a_process_of_process_j_may_fork(monkeypatch: pytest.MonkeyPatch) -> None:
    # where ``process -j N`` reads a lone redaction (``offline.spread``'s pool, with the
    # thread that watches its parent): the pages go to processes there too
    from pressroom.offline import process
    from pressroom.offline.spread import Spreader

    # as a `process` run starts: no engine made yet in this process (an earlier test's
    # would be handed to the pool, and a Tesseract does not pickle)
    monkeypatch.setattr(process, "_ENGINE", None)

    with Spreader(1) as spreader:
        assert spreader._pool.submit(fork_refused).result() is None


def test_turned_off_it_reads_in_threads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(procs, "ALLOWED", False)
    assert fork_refused() is not None
    path = scanned(tmp_path / "scan.pdf", 2)
    scan(path, 2, tmp_path / "two.log")
    assert set(readers(tmp_path / "two.log")) == {os.getpid()}


# --- the pass's machinery, with a reader that does as a test says -------------------------


def _page(n: int) -> PageInfo:
    return PageInfo(n, 612.0, 792.0, 0, None, False, 0)


class StubContext:
    def __init__(self, pages: int) -> None:
        self.info = type("Info", (), {"pages": [_page(n) for n in range(pages)]})()
        self.timer = StageTimer()
        self.steps: list[tuple[int, int]] = []
        self.progress = lambda done, of: self.steps.append((done, of))


@dataclass
class StubReader:
    """Reads page n as ``(n, pid)``, one second of raster and two of OCR on its timer; a page
    in ``fail`` raises what it holds, after ``waits[n]`` is set where there is one."""

    ctx: StubContext
    fail: dict[int, BaseException] = field(default_factory=dict)
    waits: dict[int, Any] = field(default_factory=dict)  # page -> event set before it ends
    sets: dict[int, Any] = field(default_factory=dict)  # page -> event it sets when done
    die: int | None = None  # the page whose process is killed while reading it
    begun: Any = field(default_factory=lambda: FORKS.Value("i", 0))
    engine: Any = None

    def twin(self, engine: Any) -> StubReader:
        return self

    def render(self, page: PageInfo, timer: StageTimer) -> tuple[None, list[Any]]:
        with self.begun.get_lock():
            self.begun.value += 1
        timer.add(Stage.RASTER, 1.0)
        return None, []

    def read(self, page: PageInfo, raster: Any, words: Any, timer: StageTimer) -> Any:
        n = page.index
        if n in self.waits:
            assert self.waits[n].wait(10)
        if n == self.die:
            os.kill(os.getpid(), signal.SIGKILL)
        try:
            if n in self.fail:
                raise self.fail[n]
            timer.add(Stage.OCR, 2.0)
            return (n, os.getpid())
        finally:
            if n in self.sets:
                self.sets[n].set()


def as_is(reader: Any, _stack: ExitStack, _spent: Any) -> Any:
    return reader


def test_pages_come_back_in_page_order_with_their_steps_and_seconds() -> None:
    last_done = FORKS.Event()
    ctx = StubContext(8)
    # the first page ends last: order must not follow the finish
    reader = StubReader(ctx, waits={0: last_done}, sets={7: last_done})
    got = read_in_processes(reader, 2, as_is)  # type: ignore[arg-type]
    assert [n for n, _pid in got] == list(range(8))
    pids = {pid for _n, pid in got}
    assert os.getpid() not in pids and len(pids) == 2
    assert ctx.steps == [(n, 16) for n in range(1, 9)]
    assert ctx.timer.totals == {"raster": 8.0, "ocr": 16.0}


def test_the_first_failing_page_in_page_order_is_raised_as_itself() -> None:
    later_failed = FORKS.Event()
    reader = StubReader(
        StubContext(6),
        fail={0: Corrupt("page 1 cannot be read", code="PAGE_BROKEN"), 1: Corrupt("page 2")},
        waits={0: later_failed},  # page 2 fails first; page 1 fails after it
        sets={1: later_failed},
    )
    with pytest.raises(Corrupt, match="page 1 cannot") as raised:
        read_in_processes(reader, 2, as_is)  # type: ignore[arg-type]
    assert raised.value.code == "PAGE_BROKEN" and raised.value.exit_code == 2
    assert raised.value.__cause__ is None  # an error of ours carries no child's traceback
    assert reader.begun.value == 2  # no page handed out after the failure


def test_a_bug_in_a_child_arrives_as_itself_with_the_childs_traceback() -> None:
    reader = StubReader(StubContext(4), fail={2: KeyError("missing")})
    with pytest.raises(KeyError) as raised:
        read_in_processes(reader, 2, as_is)  # type: ignore[arg-type]
    assert isinstance(raised.value.__cause__, RemoteTraceback)
    assert "KeyError" in str(raised.value.__cause__)


def test_a_child_that_dies_fails_its_page_and_the_pass() -> None:
    reader = StubReader(StubContext(4), die=1)
    with pytest.raises(TransientError, match="page 2"):
        read_in_processes(reader, 2, as_is)  # type: ignore[arg-type]
    assert multiprocessing.active_children() == []


class Cancelled(Exception):
    pass


def test_a_cancel_between_pages_ends_every_child() -> None:
    asked: list[int] = []

    def check() -> None:
        asked.append(1)
        if len(asked) == 3:  # the third page to hand out
            raise Cancelled

    first_held = FORKS.Event()  # never set: page 1's child is still reading at the cancel
    reader = StubReader(StubContext(6), waits={0: first_held})
    with stop_when(check), pytest.raises(Cancelled):
        read_in_processes(reader, 2, as_is)  # type: ignore[arg-type]
    assert len(asked) == 3
    assert multiprocessing.active_children() == []


def _refusal(conn: Any) -> None:
    conn.send(fork_refused())


def test_a_daemonic_process_may_not_fork() -> None:
    mine, theirs = FORKS.Pipe()
    daemonic = FORKS.Process(target=_refusal, args=(theirs,), daemon=True)
    daemonic.start()
    try:
        assert mine.recv() == "a daemonic process may not start processes"
    finally:
        daemonic.join()
