"""Scratch space is private and never outlives its job."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from pressroom.scratch import PREFIX, job_scratch, sweep_stale


def test_scratch_is_private_and_removed_after_success(tmp_path: Path) -> None:
    with job_scratch(tmp_path) as folder:
        assert folder.name.startswith(PREFIX)
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        (folder / "page.png").write_bytes(b"x")
    assert list(tmp_path.iterdir()) == []


def test_scratch_is_removed_after_failure(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), job_scratch(tmp_path) as folder:
        (folder / "half.pdf").write_bytes(b"%PDF-")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_sweep_removes_only_old_job_folders(tmp_path: Path) -> None:
    old = tmp_path / f"{PREFIX}old"
    young = tmp_path / f"{PREFIX}young"
    other = tmp_path / "someone-elses"
    long_job = tmp_path / f"{PREFIX}{os.getppid()}-abc"  # a live process's, hours old
    for d in (old, young, other, long_job):
        d.mkdir()
    past = time.time() - 7200
    for d in (old, other, long_job):
        os.utime(d, (past, past))
    assert sweep_stale(tmp_path, 3600) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [young.name, other.name, long_job.name]
    )


def test_sweep_removes_a_dead_processs_folder_at_once(tmp_path: Path) -> None:
    import subprocess

    child = subprocess.Popen(["sleep", "0"])
    child.wait()
    dead = tmp_path / f"{PREFIX}{child.pid}-abc"
    alive = tmp_path / f"{PREFIX}{os.getpid()}-def"
    dead.mkdir()
    alive.mkdir()
    assert sweep_stale(tmp_path, 3600) == 1
    assert [p.name for p in tmp_path.iterdir()] == [alive.name]
