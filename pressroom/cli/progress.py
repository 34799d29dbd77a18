"""What `process` and `watch` show while they work: one line per file being read (its pages
done of its pages) and a total (files, pages done of the pages known so far, pages a minute,
the time left), drawn with rich on stderr when it is a terminal. With ``-q`` or stderr sent to
a file or a pipe nothing is drawn: the one-line outcomes are the whole output, as before."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
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
    TimeRemainingColumn,
)
from rich.text import Text

NAME_WIDTH = 24


class _PagesPerMinute(ProgressColumn):
    """The total's pages a minute since the run began (a file's own line leaves it blank)."""

    def render(self, task: Task) -> Text:
        if not task.fields.get("total_line"):
            return Text("")
        elapsed = task.elapsed or 0.0
        rate = task.completed / elapsed * 60.0 if elapsed > 0 else 0.0
        return Text(f"{rate:4.0f} pages/min")


class Board:
    """Lines on a terminal for the files being read and the run's total. ``enabled`` False:
    every call does nothing. Files are keyed by any hashable the caller picks."""

    def __init__(self, enabled: bool, *, files: int = 0, stream: TextIO | None = None) -> None:
        self.enabled = enabled
        self.files = files  # how many the run has (0: not known, as in watch)
        self.done_files = 0
        self._started = time.monotonic()
        self._tasks: dict[object, TaskID] = {}
        self._progress: Progress | None = None
        self._total: TaskID | None = None
        self._known_pages = 0
        if enabled:
            console = Console(file=stream or sys.stderr, highlight=False)
            self._progress = Progress(
                TextColumn("{task.description}", style="bold"),
                BarColumn(bar_width=16),
                MofNCompleteColumn(),
                TextColumn("pages"),
                _PagesPerMinute(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                console=console,
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
        self._grow(pages)

    def _grow(self, pages: int) -> None:
        if self._progress is not None and self._total is not None and pages:
            self._known_pages += pages
            self._progress.update(self._total, total=self._known_pages)

    def advance(self, key: object, pages: float = 1) -> None:
        if self._progress is None or self._total is None:
            return
        task = self._tasks.get(key)
        if task is not None:
            self._progress.advance(task, pages)
        self._progress.advance(self._total, pages)

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
        if key not in self._tasks:
            self.begin(key, name, max(1, steps // passes))
        self.advance(key, 1 / passes)

    def pages_callback(self, key: object, name: str, passes: int = 1) -> Callable[[int, int], None]:
        """A pipeline ``progress(done, steps)``, called once a step is done, for one file read
        in this process: its line begins at the first step."""

        def tick(_done: int, steps: int) -> None:
            self.step(key, name, steps, passes)

        return tick
