"""The workers' heartbeat file and what `pressroom worker --check` makes of it; what `serve`
runs for its flags and the line that says so."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from pressroom.cli import build_parser
from pressroom.cli.service import banner, lanes_to_run
from pressroom.worker import heartbeat
from pressroom.worker.heartbeat import Beat, judge

NOW = 1_800_000_000.0
LIVE = {10, 20}


def _alive(pid: int) -> bool:
    return pid in LIVE


def _beat(pid: int = 10, age: float = 2.0, **lanes: tuple[int, int]) -> Beat:
    return Beat("box", pid, NOW - age, lanes or {"bulk": (2, 2)})


@pytest.mark.parametrize(
    ("beats", "lane", "healthy", "line"),
    [
        ([_beat()], None, True, "ok: 2/2 bulk worker(s) alive, heartbeat 2 s old"),
        ([_beat(age=29)], "bulk", True, "ok: 2/2 bulk worker(s) alive, heartbeat 29 s old"),
        ([], None, False, "no worker pool has a heartbeat on this host"),
        (
            [_beat()],
            "interactive",
            False,
            "no interactive worker pool has a heartbeat on this host",
        ),
        ([_beat(pid=99)], None, False, "the worker pool (pid 99) is gone"),
        (
            [_beat(age=45)],
            None,
            False,
            "the worker pool's heartbeat is 45 s old (stale after 30 s)",
        ),
        (
            [_beat(bulk=(0, 2), interactive=(1, 1))],
            None,
            False,
            "the worker pool has no live worker in: bulk",
        ),
        # the lane asked for is the one judged
        (
            [_beat(bulk=(0, 2), interactive=(1, 1))],
            "interactive",
            True,
            "ok: 1/1 interactive worker(s) alive, heartbeat 2 s old",
        ),
        # a pool killed earlier beside one that runs: the live one answers
        ([_beat(pid=99, age=1), _beat(pid=20, age=4)], None, True, None),
        # of several failing pools, the freshest one's reason is given
        (
            [_beat(pid=99, age=1), _beat(pid=20, age=300)],
            "bulk",
            False,
            "the bulk worker pool (pid 99) is gone",
        ),
    ],
)
def test_judge(beats: list[Beat], lane: str | None, healthy: bool, line: str | None) -> None:
    verdict = judge(beats, now=NOW, lane=lane, alive=_alive)
    assert verdict.healthy is healthy
    if line is not None:
        assert verdict.line == line


def test_a_beat_written_is_read_back_by_its_host_only(tmp_path: Path) -> None:
    where = heartbeat.folder(tmp_path)
    mine = Beat("box", 10, NOW, {"bulk": (1, 2), "interactive": (1, 1)})
    heartbeat.write(where, mine)
    heartbeat.write(where, Beat("other-host", 10, NOW, {"bulk": (1, 1)}))  # a shared volume
    assert heartbeat.read(where, "box") == [mine]
    heartbeat.write(where, Beat("box", 10, NOW + 5, {"bulk": (2, 2)}))  # replaced, not added
    assert [b.at for b in heartbeat.read(where, "box")] == [NOW + 5]
    heartbeat.remove(where, "box", 10)
    assert heartbeat.read(where, "box") == []
    heartbeat.remove(where, "box", 10)  # twice is fine


def test_files_that_are_not_beats_are_ignored(tmp_path: Path) -> None:
    where = heartbeat.folder(tmp_path)
    where.mkdir()
    (where / "box-1.heartbeat").write_text('{"host": "box", "pid": 1')  # cut off
    (where / "box-2.heartbeat").write_text('{"host": "box", "pid": 2, "at": 1, "lanes": [3]}')
    (where / "box-3.heartbeat").write_text("[]")
    (where / "notes.txt").write_text(Beat("box", 4, NOW, {"bulk": (1, 1)}).to_json())
    assert heartbeat.read(where, "box") == []
    assert heartbeat.read(tmp_path / "missing", "box") == []


def test_a_host_name_cannot_lead_the_file_out_of_its_folder(tmp_path: Path) -> None:
    where = heartbeat.folder(tmp_path)
    path = heartbeat.path_for(where, "../../etc/x", 1)
    assert path.parent == where


@pytest.mark.parametrize(
    ("workers", "interactive", "cores", "runs"),
    [
        (None, None, 8, (7, 1)),
        (None, None, 1, (1, 1)),
        (3, None, 8, (3, 1)),
        (0, None, 8, (0, 0)),  # the API alone
        (0, 2, 8, (0, 2)),  # interactive only: asked for by name
        (2, 0, 8, (2, 0)),
        (0, 0, 8, (0, 0)),
    ],
)
def test_what_serve_runs(
    workers: int | None, interactive: int | None, cores: int, runs: tuple[int, int]
) -> None:
    assert lanes_to_run(workers, interactive, cores) == runs


def test_the_banner_says_what_runs() -> None:
    assert banner("0.0.0.0", 8080, 0, 1).endswith(
        "on http://0.0.0.0:8080 (workers: 0 bulk, 1 interactive; docs at /docs)"
    )
    assert "(the API alone, no workers:" in banner("::1", 80, 0, 0)
    assert "http://[::1]:80 " in banner("::1", 80, 0, 0)
    assert banner("127.0.0.1", 8080, 2, 1, docs=False).endswith("(workers: 2 bulk, 1 interactive)")


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--workers", "-1"],
        ["serve", "--interactive", "many"],
        ["worker", "--concurrency", "0"],
        ["worker", "--check", "--lane", "fast"],
    ],
)
def test_counts_that_mean_nothing_are_refused_by_the_parser(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_worker_check_parses_with_or_without_a_lane() -> None:
    args = build_parser().parse_args(["worker", "--check"])
    assert isinstance(args, argparse.Namespace) and args.check and args.lane is None
    assert build_parser().parse_args(["worker", "--check", "--lane", "bulk"]).lane == "bulk"


def test_serve_links_to_its_own_address_when_no_public_url_is_set() -> None:
    import socket

    from pressroom.cli.service import own_url

    assert own_url("127.0.0.1", 8080) == "http://127.0.0.1:8080"
    assert own_url("::1", 9000) == "http://[::1]:9000"
    assert own_url("0.0.0.0", 8080) == f"http://{socket.getfqdn()}:8080"
