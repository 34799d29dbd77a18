"""Backup benchmark (not a test): `pressroom db backup` of a live SQLite store while another
process keeps committing, then `db restore` into an empty data dir and with `--force` over an
idle one, side by side in one run.

    .venv-test/bin/python bench/backup_bench.py [--mb 250] [--runs 2]

The store is Pressroom's schema (made by the code's migrations) grown to ``--mb`` MiB with a
filler table of random bytes; during each backup a writer process commits a row every
millisecond or so into it. Each line is one command's wall time (its interpreter's start-up
included), and whether the copy passed SQLite's integrity check.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.serving import PRESSROOM

WRITER = """
import os, sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], timeout=30)
conn.execute("PRAGMA journal_mode=WAL")
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    conn.execute("INSERT INTO bench_filler (data) VALUES (?)", (os.urandom(4096),))
    conn.commit()
"""


def make_store(data: Path, mib: int) -> Path:
    env = {**os.environ, "PRESSROOM_DATA_DIR": str(data)}
    subprocess.run([str(PRESSROOM), "db", "upgrade"], env=env, check=True, capture_output=True)
    db = data / "pressroom.db"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE bench_filler (id INTEGER PRIMARY KEY, data BLOB)")
        block = [(os.urandom(64 * 1024),) for _ in range(16)]  # 1 MiB a round
        for _ in range(mib):
            conn.executemany("INSERT INTO bench_filler (data) VALUES (?)", block)
        conn.commit()
    return db


def timed(*args: str, data: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    env = {**os.environ, "PRESSROOM_DATA_DIR": str(data)}
    start = time.monotonic()
    done = subprocess.run(
        [str(PRESSROOM), *args], env=env, capture_output=True, text=True, check=False
    )
    return time.monotonic() - start, done


def intact(path: Path) -> bool:
    with sqlite3.connect(path) as conn:
        return bool(conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=250)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pressroom-backup-bench-") as tmp:
        folder = Path(tmp)
        live = folder / "live"
        db = make_store(live, args.mb)
        print(f"store: {db.stat().st_size / 2**20:,.0f} MiB; {os.cpu_count()} CPU(s)")
        for run in range(1, args.runs + 1):
            dest = folder / f"backup-{run}.db"
            writer = subprocess.Popen([sys.executable, "-c", WRITER, str(db), "60"])
            try:
                time.sleep(0.5)  # the writer is committing
                took, done = timed("db", "backup", str(dest), data=live)
            finally:
                writer.kill()
                writer.wait()
            assert done.returncode == 0, done.stderr
            size = dest.stat().st_size / 2**20
            print(
                f"  run {run}: backup while writing  {took:5.2f} s  {size:,.0f} MiB  "
                f"integrity {'ok' if intact(dest) else 'FAILED'}"
            )
            fresh = folder / f"fresh-{run}"
            took, done = timed("db", "restore", str(dest), data=fresh)
            assert done.returncode == 0, done.stderr
            print(f"  run {run}: restore, empty dir     {took:5.2f} s")
            took, done = timed("db", "restore", "--force", str(dest), data=fresh)
            assert done.returncode == 0, done.stderr
            print(f"  run {run}: restore --force, idle  {took:5.2f} s")


if __name__ == "__main__":
    main()
