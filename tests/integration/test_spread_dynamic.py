"""`process -j N` hands a document's pages out in chunks as processes free up: a process held
on a slow page holds only its own chunk, the others read the rest, and the output is the same
bytes as `-j 1`. Counted in chunks and pages read by each process, never timed."""

from __future__ import annotations

import os
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pressroom.cli.progress import Board
from pressroom.offline import process as offline
from pressroom.offline.process import Outcome, OutputChoice
from pressroom.offline.spread import Run, page_chunks, run_spread
from pressroom.settings import Settings
from pressroom.synth import draw_page, image_pdf, page_lines
from pressroom.templates import resolve_template
from pressroom.testing import FakeOcrEngine

pytestmark = pytest.mark.integration

WHEN = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)
LINES = ("Pressroom fake engine reads this line", "Ünïcödé beyond Latin-1: Ωμέγα ŁÓDŹ")
PAGES = 10
HOLD_S = 60.0  # how long the slow page waits for the others before it gives up


@dataclass
class HeldEngine(FakeOcrEngine):
    """The fake engine, noting in a file (the pool's processes get a copy of it) each chunk a
    process starts (``engine_for`` asks it for the job's languages once a chunk, and once for
    the assembly) and each page it reads. The tall page (the document's first) is slow: its
    reading waits until other processes have read ``hold`` pages. Were the pages cut into
    fixed halves, the process holding the first half would wait for pages nobody else has
    to read, and give up."""

    log: Path = Path("/nonexistent")
    hold: int = 0

    def _note(self, what: str) -> None:
        with self.log.open("a") as fh:
            fh.write(f"{what} {os.getpid()}\n")

    def with_languages(self, _languages: tuple[str, ...]) -> HeldEngine:
        self._note("chunk")
        return self

    def _read_by_others(self) -> int:
        me = str(os.getpid())
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        return sum(1 for line in lines if line.startswith("page ") and line.split()[1] != me)

    def recognize(self, image: Any, **kwargs: Any) -> Any:
        self._note("page")
        if image.height > 0.41 * image.width:  # the tall first page (4 in against 3 in)
            deadline = time.monotonic() + HOLD_S
            # waits on the other processes' own notes, not on a clock: polled
            while self._read_by_others() < self.hold:
                if time.monotonic() > deadline:
                    raise TimeoutError("no other process read the rest of the pages")
                time.sleep(0.01)
        return super().recognize(image, **kwargs)


def _source(tmp: Path) -> Path:
    drawn = [
        draw_page(page_lines(60 + n, 4), dpi=100, height_in=4 if n == 0 else 3).image
        for n in range(PAGES)
    ]
    return image_pdf(drawn, tmp / "uneven.pdf", 100)


def _run(tmp: Path) -> Run:
    settings = Settings(data_dir=tmp / "data", scratch_dir=tmp / "scratch")
    return Run(
        resolve_template("sample"),
        "Bundle",
        None,
        False,
        settings,
        "sample",
        False,
        OutputChoice(sidecar=True),
    )


def _chunks_read(log: Path) -> dict[str, list[int]]:
    """Each process's chunks, as the pages it read after each chunk began (the assembly's
    chunk reads none and is left out)."""
    read: dict[str, list[int]] = defaultdict(list)
    for line in log.read_text().splitlines():
        what, pid = line.split()
        if what == "chunk":
            read[pid].append(0)
        else:
            read[pid][-1] += 1
    return {pid: [n for n in sizes if n] for pid, sizes in read.items()}


def test_a_process_held_on_a_slow_page_holds_one_chunk_and_the_others_read_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chunks = page_chunks(PAGES, 2)
    first = chunks[0][1] - chunks[0][0]
    assert [end - start for start, end in chunks] == [3, 2, 2, 1, 1, 1]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(WHEN.timestamp())))
    source = _source(tmp_path)
    run = _run(tmp_path)
    # -j 1 in this process, with the same engine not held
    monkeypatch.setattr(offline, "_ENGINE", HeldEngine(lines=LINES, log=tmp_path / "j1.log"))
    whole = offline.process_one(
        source,
        tmp_path / "whole.pdf",
        run.template,
        run.title,
        None,
        None,
        False,
        run.settings,
        output=run.output,
    )
    assert whole.exit_code == 0, whole.line
    log = tmp_path / "read.log"
    monkeypatch.setattr(offline, "_ENGINE", HeldEngine(lines=LINES, log=log, hold=PAGES - first))
    said: list[Outcome] = []
    (outcome,) = run_spread(
        [(source, tmp_path / "split.pdf")], 2, run, Board(False), lambda _n, o: said.append(o)
    )
    assert outcome.exit_code == 0 and said == [outcome], outcome.line
    by_process = _chunks_read(log)
    assert str(os.getpid()) not in by_process
    # the chunks handed out are page_chunks', each read once
    assert sorted(n for sizes in by_process.values() for n in sizes) == sorted(
        end - start for start, end in chunks
    )
    # the process on the slow page read its one chunk; the other took every chunk after it
    assert sorted(by_process.values(), key=len) == [[first], [2, 2, 1, 1, 1]]
    assert (tmp_path / "split.pdf").read_bytes() == (tmp_path / "whole.pdf").read_bytes()
    assert (tmp_path / "split.txt").read_text() == (tmp_path / "whole.txt").read_text()
    assert list(run.settings.scratch_dir.iterdir()) == []


@dataclass
class FailingEngine(HeldEngine):
    """Reads every page but the tall first one, which it cannot read at all."""

    def recognize(self, image: Any, **kwargs: Any) -> Any:
        if image.height > 0.41 * image.width:
            raise RuntimeError("this page cannot be read")
        return super().recognize(image, **kwargs)


def test_a_chunk_that_fails_fails_its_file_once_and_leaves_no_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first chunk's failure is the file's one outcome, whatever became of the chunks
    other processes were reading or had not yet taken; nothing is delivered, no part stays."""
    source = _source(tmp_path)
    run = _run(tmp_path)
    monkeypatch.setattr(offline, "_ENGINE", FailingEngine(lines=LINES, log=tmp_path / "r.log"))
    said: list[Outcome] = []
    (outcome,) = run_spread(
        [(source, tmp_path / "split.pdf")], 2, run, Board(False), lambda _n, o: said.append(o)
    )
    assert said == [outcome]
    assert outcome.exit_code == 1 and outcome.line == "INTERNAL_ERROR: uneven.pdf: RuntimeError"
    assert not (tmp_path / "split.pdf").exists() and not (tmp_path / "split.txt").exists()
    assert list(run.settings.scratch_dir.iterdir()) == []
