"""The runtime lock installs on every platform the image is built for: CPython 3.11-3.13 on
x86_64 and aarch64 Linux, checked by resolving it again with uv for each (scripts/check-locks.sh;
it needs the package index, as `make test` does). Each kind of broken lock is shown rejected, so
a pass means something."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts" / "check-locks.sh"
UV = ROOT / ".venv-tools" / "bin" / "uv"


def _check(*locks: Path, targets: str | None = None) -> subprocess.CompletedProcess[str]:
    if not UV.exists():  # a missing checker is a failure, never a skip
        pytest.fail(f"{UV} is missing: `make tools-deps` installs it")
    env = {**os.environ, "UV": str(UV)}
    if targets is not None:
        env["TARGETS"] = targets
    return subprocess.run(
        ["bash", str(CHECK), *map(str, locks)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_runtime_lock_installs_from_wheels_on_six_targets() -> None:
    run = _check()
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 6, run.stdout
    for machine in ("x86_64", "aarch64"):
        for version in ("3.11", "3.12", "3.13"):
            assert any(
                line.startswith(f"{machine}-manylinux_2_28 CPython {version}:") for line in lines
            ), run.stdout


def test_a_pin_with_no_wheel_is_refused(tmp_path: Path) -> None:
    lock = tmp_path / "lock.txt"
    lock.write_text("tesserocr==2.6.0\n")  # published as an sdist only, a C extension
    run = _check(lock, targets="aarch64:3.13")
    assert run.returncode == 1
    assert "aarch64-manylinux_2_28 CPython 3.13: the lock does not resolve from wheels" in (
        run.stderr
    )


def test_a_lock_missing_a_dependency_is_refused(tmp_path: Path) -> None:
    pins = (ROOT / "requirements" / "runtime.txt").read_text().splitlines()
    fastapi = next(line.split(" ")[0] for line in pins if line.startswith("fastapi=="))
    lock = tmp_path / "lock.txt"
    lock.write_text(f"{fastapi}\n")  # its dependencies (starlette, pydantic, ...) not pinned
    run = _check(lock, targets="x86_64:3.12")
    assert run.returncode == 1
    assert "resolves to other pins than the lock's" in run.stderr
    assert "+starlette==" in run.stderr
