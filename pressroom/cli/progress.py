"""What `process` and `watch` show while they work: one line per file being read (its pages
done of its pages, the time spent on it) and a total (files, pages done of the pages known so
far, pages a minute, the time left), drawn with rich on stderr when it is a terminal. With
``-q`` or stderr sent to a file or a pipe nothing is drawn: the one-line outcomes are the whole
output, as before.

The time left comes from ``Estimate``: a smoothed time a page, shown only once a few pages
and seconds give it ground, over the pages still to read, the files not begun counted at the
pages of those begun (so the time left does not leap as each file's pages become known)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
)
from rich.text import Text

NAME_WIDTH = 24


@dataclass
class Estimate:
    """The run's time left, from the pages read so far. Each time pages are done, the seconds
    since the last were done make one sample of seconds a page, and the estimate moves a share
    ``smoothing`` of the way to it for each page (an exponential moving average over pages):
    with ``-j N`` samples come N at a time, one long and some short, and their mean is the
    run's pace. The first pages done paid for the start-up too and make no sample; nothing is
    said until ``min_pages`` pages and ``min_seconds`` seconds are done. Between samples the
    time left counts down, never below the pages left after the one being read."""

    started: float
    files: int = 0  # the run's files (0: not known, as in watch)
    smoothing: float = 0.25
    min_pages: float = 2.0
    min_seconds: float = 3.0
    done: float = 0.0  # pages (a redaction's pass is half of one)
    known_pages: int = 0  # the pages of the files begun
    begun: int = 0  # files whose pages are known
    per_page: float | None = None  # seconds, smoothed
    last: float | None = None  # when pages were last done
    _pages: dict[object, int] = field(default_factory=dict)

    def begin(self, key: object, pages: int) -> None:
        """A file's pages are known (0: not yet)."""
        before = self._pages.get(key, 0)
        if pages and not before:
            self.begun += 1
        if pages:
            self._pages[key] = pages
            self.known_pages += pages - before

    def pages_of(self, key: object) -> int:
        return self._pages.get(key, 0)

    def advance(self, pages: float, now: float) -> None:
        if pages <= 0:
            return
        if self.last is None:  # the first pages paid for the start-up too: no sample
            self.last = now
            self.done += pages
            return
        sample = max(0.0, now - self.last) / pages
        if self.per_page is None:
            self.per_page = sample
        else:
            weight = 1.0 - (1.0 - self.smoothing) ** pages
            self.per_page += weight * (sample - self.per_page)
        self.last = now
        self.done += pages

    def pages_left(self) -> float:
        left = max(0.0, self.known_pages - self.done)
        unseen = self.files - self.begun if self.files else 0
        if unseen > 0 and self.begun:
            left += unseen * self.known_pages / self.begun
        return left

    def seconds_left(self, now: float) -> float | None:
        """None while there is too little to go on."""
        if self.per_page is None or self.done < self.min_pages:
            return None
        if now - self.started < self.min_seconds:
            return None
        left = self.pages_left()
        since = now - (self.last if self.last is not None else self.started)
        return max(left * self.per_page - since, max(0.0, left - 1.0) * self.per_page, 0.0)


def clock_text(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class _PagesPerMinute(ProgressColumn):
    """The total's pages a minute since the run began (a file's own line leaves it blank)."""

    def render(self, task: Task) -> Text:
        if not task.fields.get("total_line"):
            return Text("")
        elapsed = task.elapsed or 0.0
        rate = task.completed / elapsed * 60.0 if elapsed > 0 else 0.0
        return Text(f"{rate:4.0f} pages/min")


class _TimeColumn(ProgressColumn):
    """The total's time left (``eta …`` until there is ground for one); a file's line, the
    time spent on it, so a one-page file shows it is being read."""

    def __init__(self, board: Board) -> None:
        super().__init__()
        self.board = board

    def render(self, task: Task) -> Text:
        now = self.board.clock()
        if task.fields.get("total_line"):
            left = self.board.estimate.seconds_left(now)
            return Text("eta " + ("…" if left is None else clock_text(left)))
        return Text(clock_text(task.elapsed or 0.0), style="dim")


class Board:
    """Lines on a terminal for the files being read and the run's total. ``enabled`` False:
    every call does nothing. Files are keyed by any hashable the caller picks."""

    def __init__(
        self,
        enabled: bool,
        *,
        files: int = 0,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.enabled = enabled
        self.files = files  # how many the run has (0: not known, as in watch)
        self.done_files = 0
        self.clock = clock
        self._started = clock()
        self.estimate = Estimate(self._started, files=files)
        self._tasks: dict[object, TaskID] = {}
        self._progress: Progress | None = None
        self._total: TaskID | None = None
        if enabled:
            console = Console(file=stream or sys.stderr, highlight=False)
            self._progress = Progress(
                TextColumn("{task.description}", style="bold"),
                BarColumn(bar_width=16),
                MofNCompleteColumn(),
                TextColumn("pages"),
                _PagesPerMinute(),
                _TimeColumn(self),
                console=console,
                get_time=clock,
                transient=True,  # the outcome lines stay; the bars go when the run ends
                # lines printed meanwhile go above the bars when stdout is this terminal too;
                # stdout sent to a file or a pipe is left alone (the outcomes are for it)
                redirect_stdout=sys.stdout.isatty(),
                redirect_stderr=False,
            )
            self._total = self._progress.add_task(self._total_name(), total=0, total_line=True)

    def _total_name(self) -> str:
        files = f"{self.done_files}/{self.files}" if self.files else str(self.done_files)
        return f"{'total (' + files + ' files)':<{NAME_WIDTH}}"

    def __enter__(self) -> Board:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def begin(self, key: object, name: str, pages: int) -> None:
        """A file whose ``pages`` pages are about to be read (0: not known yet)."""
        if self._progress is None or self._total is None:
            return
        label = name if len(name) <= NAME_WIDTH else name[: NAME_WIDTH - 1] + "…"
        if key in self._tasks:
            self._progress.update(self._tasks[key], total=pages or None)
        else:
            self._tasks[key] = self._progress.add_task(
                f"{label:<{NAME_WIDTH}}", total=pages or None
            )
        self.estimate.begin(key, pages)
        self._progress.update(self._total, total=self.estimate.known_pages)

    def advance(self, key: object, pages: float = 1) -> None:
        if self._progress is None or self._total is None:
            return
        task = self._tasks.get(key)
        if task is not None:
            self._progress.advance(task, pages)
        self._progress.advance(self._total, pages)
        self.estimate.advance(pages, self.clock())

    def end(self, key: object) -> None:
        """The file is done (delivered, held or refused): its line goes, the total counts it."""
        self.done_files += 1
        if self._progress is None or self._total is None:
            return
        task = self._tasks.pop(key, None)
        if task is not None:
            self._progress.remove_task(task)
        self._progress.update(self._total, description=self._total_name())

    def step(self, key: object, name: str, steps: int, passes: int = 1) -> None:
        """One step of a file's reading done, of ``steps`` in all; a redaction reads each page
        in ``passes`` (2: its scan, then its build), so a step is that part of a page."""
        if self._progress is None:
            return
        pages = max(1, steps // passes)
        if key not in self._tasks or self.estimate.pages_of(key) != pages:
            self.begin(key, name, pages)
        self.advance(key, 1 / passes)

    def pages_callback(self, key: object, name: str, passes: int = 1) -> Callable[[int, int], None]:
        """A pipeline ``progress(done, steps)``, called once a step is done, for one file read
        in this process. Its line shows from now, its pages not yet known, with the time spent
        on it, and counts from the first step (which says how many there are)."""
        self.begin(key, name, 0)

        def tick(_done: int, steps: int) -> None:
            self.step(key, name, steps, passes)

        return tick
