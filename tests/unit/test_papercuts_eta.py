"""The progress total's time left, with a clock the test moves (the arithmetic, not time):
smoothed, said only on some ground, steady as files' pages become known (review S10: "0:00:03,
then 0:00:30")."""

from __future__ import annotations

import io
import itertools

import pytest

from pressroom.cli.progress import Board, Estimate, _TimeColumn, clock_text


def test_nothing_is_said_until_a_few_pages_and_seconds_give_ground() -> None:
    eta = Estimate(started=0.0, min_pages=2, min_seconds=3.0)
    eta.begin("a", 10)
    eta.advance(1, now=5.0)  # the first page paid for the start-up: no sample
    assert eta.seconds_left(5.0) is None
    eta.advance(1, now=7.0)
    assert eta.seconds_left(7.0) == pytest.approx(8 * 2.0)


def test_one_slow_page_moves_the_estimate_by_the_smoothing_share_only() -> None:
    eta = Estimate(started=0.0, smoothing=0.25)
    eta.begin("a", 100)
    now = 0.0
    for _ in range(10):
        now += 2.0
        eta.advance(1, now)
    assert eta.per_page == pytest.approx(2.0)
    now += 20.0  # one page ten times as slow
    eta.advance(1, now)
    assert eta.per_page == pytest.approx(2.0 + 0.25 * 18.0)
    for _ in range(10):
        now += 2.0
        eta.advance(1, now)
    assert eta.per_page == pytest.approx(2.0, abs=0.5)


def test_pages_done_two_at_a_time_by_two_processes_give_the_runs_pace() -> None:
    """-j 2: each process reads a page in 4 s, so the run does one every 2 s on average."""
    eta = Estimate(started=0.0)
    eta.begin("a", 40)
    now = 0.0
    for _ in range(15):
        now += 3.9
        eta.advance(1, now)
        now += 0.1
        eta.advance(1, now)
    assert eta.per_page == pytest.approx(2.0, rel=0.25)
    assert eta.seconds_left(now) == pytest.approx(10 * 2.0, rel=0.25)


def test_files_not_begun_count_at_the_pages_of_those_begun_so_it_does_not_leap() -> None:
    """Ten files of 3 pages, a page a second: the time left falls by a second a page, rather
    than leaping each time a file's pages become known."""
    eta = Estimate(started=0.0, files=10, min_pages=2, min_seconds=0.0)
    said = []
    now = 0.0
    for n in range(10):
        eta.begin(n, 3)
        for _ in range(3):
            now += 1.0
            eta.advance(1, now)
            left = eta.seconds_left(now)
            if left is not None:
                said.append(left)
    assert said[0] == pytest.approx(28.0)
    steps = [a - b for a, b in itertools.pairwise(said)]
    assert all(step == pytest.approx(1.0) for step in steps), said


def test_between_pages_it_counts_down_but_not_past_the_page_being_read() -> None:
    eta = Estimate(started=0.0, min_seconds=0.0)
    eta.begin("a", 10)
    eta.advance(1, 2.0)
    eta.advance(1, 4.0)  # 2 s a page, 8 pages left: 16 s
    assert eta.seconds_left(5.0) == pytest.approx(15.0)
    assert eta.seconds_left(6.0) == pytest.approx(14.0)
    assert eta.seconds_left(30.0) == pytest.approx(7 * 2.0)  # page 3 overdue: 7 after it


def test_a_file_begun_twice_counts_its_pages_once() -> None:
    eta = Estimate(started=0.0, files=2)
    eta.begin("a", 0)  # not known yet
    eta.begin("a", 4)
    eta.begin("a", 4)
    assert (eta.known_pages, eta.begun) == (4, 1)
    assert eta.pages_left() == 8.0


def test_the_total_line_says_eta_once_there_is_ground_and_a_file_line_its_time() -> None:
    now = [0.0]
    board = Board(True, files=1, stream=io.StringIO(), clock=lambda: now[0])
    column = _TimeColumn(board)
    board.begin("a", "a.pdf", 1)
    tasks = {t.description.strip(): t for t in board._progress.tasks}  # type: ignore[union-attr]
    total = next(t for name, t in tasks.items() if name.startswith("total"))
    assert column.render(total).plain == "eta …"
    board.begin("a", "a.pdf", 5)
    for _ in range(3):
        now[0] += 2.0
        board.advance("a")
    now[0] += 1.0
    assert column.render(total).plain == "eta 0:00:03"  # 2 pages at 2 s, 1 s into the next
    assert column.render(tasks["a.pdf"]).plain == clock_text(7.0) == "0:00:07"


def test_a_file_read_here_shows_its_line_from_the_start_and_counts_from_its_first_step() -> None:
    """A one-page file does not wait unseen until it is done: its line and its time show at
    once; the first step says how many pages it has."""
    now = [0.0]
    board = Board(True, files=1, stream=io.StringIO(), clock=lambda: now[0])
    tick = board.pages_callback("a", "a.pdf", passes=2)  # a redaction: two passes a page
    progress = board._progress
    assert progress is not None
    line = next(t for t in progress.tasks if t.description.strip() == "a.pdf")
    assert line.total is None and line.completed == 0
    now[0] += 4.0
    assert _TimeColumn(board).render(line).plain == "0:00:04"
    tick(1, 2)  # the scan pass of its one page
    line = next(t for t in progress.tasks if t.description.strip() == "a.pdf")
    assert (line.total, line.completed) == (1, 0.5)
    assert board.estimate.known_pages == 1
