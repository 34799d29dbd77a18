"""A redaction's first pass read by several threads (issue 46, item 3): the same scans as one
thread reads, each page read once, each thread with an engine of its own; a failure stops the
pass and the first failing page's error is the one raised."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from pressroom.engines.tesseract import TesseractEngine
from pressroom.errors import Corrupt
from pressroom.models import PageInfo
from pressroom.pipeline.core import JobOptions
from pressroom.redact.engine import detect_document
from pressroom.redact.pages import read_in_threads
from pressroom.redact.policy import parse_policy
from pressroom.stages import StageTimer
from pressroom.synth import draw_page
from pressroom.templates import resolve_template

pytestmark = pytest.mark.integration


@pytest.fixture(autouse=True)
def threads_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """This file holds the threaded pass: no pass forks (``redact.procs``)."""
    from pressroom.redact import procs

    monkeypatch.setattr(procs, "ALLOWED", False)


LINES = [
    "Minutes of the garden committee",
    "Margaret Thornbury opened the meeting at seven.",
    "The treasurer, Daniel Okafor, read the accounts.",
    "Members agreed to meet again in the spring.",
]


class Twinned:
    """The real engine, counting its twins and which of them read each image."""

    def __init__(self, engine: TesseractEngine, log: list[tuple[int, tuple[int, int]]]) -> None:
        self.engine, self.log = engine, log
        self.twins: list[Twinned] = []

    def twin(self) -> Twinned:
        other = Twinned(self.engine.twin(), self.log)
        self.twins.append(other)
        return other

    def recognize(self, image: Image.Image, **kwargs: Any) -> Any:
        self.log.append((id(self), image.size))
        return self.engine.recognize(image, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.engine, name)


def scanned(path: Path, pages: int) -> Path:
    images = [
        draw_page([f"Page {n + 1}", *LINES], dpi=300, height_in=3.0).image.convert("L")
        for n in range(pages)
    ]
    images[0].save(path, save_all=True, append_images=images[1:], resolution=300.0)
    return path


def test_threads_read_what_one_thread_reads_each_page_once(tmp_path: Path) -> None:
    path = scanned(tmp_path / "scan.pdf", 4)
    policy = parse_policy("name", now=0)
    found = {}
    logs = {}
    engines = {}
    for threads in (1, 2):
        log: list[tuple[int, tuple[int, int]]] = []
        engine = Twinned(TesseractEngine(), log)
        options = JobOptions(template=resolve_template("plain"), page_threads=threads)
        found[threads] = sorted(
            (f.page, f.kind, f.value)
            for f in detect_document(path, policy, engine, options)  # type: ignore[arg-type]
        )
        logs[threads], engines[threads] = log, engine
    assert found[1] == found[2]
    assert {page for page, _kind, _value in found[2]} == {1, 2, 3, 4}
    # each page read whole once (a page is 2550 px wide), whichever the thread count
    whole = {t: [size for _who, size in logs[t] if size[0] >= 2500] for t in (1, 2)}
    assert Counter(whole[1]) == Counter(whole[2]) and len(whole[2]) >= 4
    assert engines[1].twins == [] and len(engines[2].twins) == 1
    # the twin read pages too, with its own recogniser: never two threads on one engine
    readers = {who for who, size in logs[2] if size[0] >= 2500}
    assert readers == {id(engines[2]), id(engines[2].twins[0])}


@dataclass
class StubReader:
    """A ``PageReader`` whose pages fail or succeed as a test says, in the order it says."""

    fail: dict[int, threading.Event | None]  # page index -> wait for this, then fail
    ctx: Any = None
    engine: Any = None
    begun: list[int] = field(default_factory=list)
    failed: threading.Event = field(default_factory=threading.Event)

    def twin(self, engine: Any) -> StubReader:
        return self

    def render(self, page: PageInfo, timer: StageTimer) -> tuple[None, list[Any]]:
        self.begun.append(page.index)
        return None, []

    def read(self, page: PageInfo, raster: Any, words: Any, timer: StageTimer) -> str:
        if page.index in self.fail:
            wait = self.fail[page.index]
            if wait is not None:
                assert wait.wait(10)
            self.failed.set()
            raise Corrupt(f"page {page.index + 1} cannot be read")
        return f"scan {page.index}"


class StubEngine:
    def twin(self) -> StubEngine:
        return StubEngine()


class StubContext:
    def __init__(self, pages: int) -> None:
        self.info = type("Info", (), {"pages": [_page(n) for n in range(pages)]})()
        self.timer = StageTimer()
        self.progress = None


def _page(n: int) -> PageInfo:
    return PageInfo(n, 612.0, 792.0, 0, None, False, 0)


def test_the_first_failing_page_in_page_order_is_raised(tmp_path: Path) -> None:
    later_failed = threading.Event()
    reader = StubReader({0: later_failed, 1: None})
    reader.failed = later_failed
    reader.ctx, reader.engine = StubContext(6), StubEngine()
    with pytest.raises(Corrupt, match="page 1 cannot"):
        read_in_threads(reader, 2)  # type: ignore[arg-type]
    # page 2 failed first (page 1 waited for it), and the pages after were not begun
    assert len(reader.begun) < 6


def test_pages_come_back_in_page_order() -> None:
    reader = StubReader({})
    reader.ctx, reader.engine = StubContext(8), StubEngine()
    plain = reader.read
    last_done = threading.Event()

    def read(page: PageInfo, raster: Any, words: Any, timer: StageTimer) -> str:
        if page.index == 0:
            assert last_done.wait(10)  # the first page ends last: order must not follow the finish
        scan = plain(page, raster, words, timer)
        if page.index == 7:
            last_done.set()
        return scan

    reader.read = read  # type: ignore[method-assign]
    assert read_in_threads(reader, 3) == [f"scan {n}" for n in range(8)]  # type: ignore[arg-type]
