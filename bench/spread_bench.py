"""Spread benchmark (not a test): one 40-page scan through `pressroom process -j 1` and `-j 2`,
side by side in one run, and whether the two outputs are the same bytes.

    .venv-test/bin/python bench/spread_bench.py [--pages 40] [--jobs 1,2,1,2]

A ``--pages`` letter-size 300-dpi scan (20 lines of 12 pt text a page, real Tesseract; the
split benchmark's file) is processed offline with each ``-j`` given, in that order, so repeats
interleave on a shared machine. ``SOURCE_DATE_EPOCH`` pins the output's dates: every run of
the same file must write the same bytes, and the last lines say whether they did. With
``-j 2`` the document's pages are read as two ranges in two processes (``cli.spread``).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.serving import PRESSROOM
from bench.split_bench import big_scan


def one_run(source: Path, jobs: int, folder: Path) -> tuple[float, str]:
    out = folder / f"out-{jobs}-{time.monotonic_ns()}"
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1767225600", "PRESSROOM_SCRATCH_DIR": str(folder)}
    start = time.monotonic()
    subprocess.run(
        [str(PRESSROOM), "process", str(source), "-o", str(out), "-j", str(jobs), "-q"],
        env=env,
        check=True,
    )
    took = time.monotonic() - start
    return took, hashlib.sha256((out / f"{source.stem}.pdf").read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--jobs", default="1,2")
    args = parser.parse_args()
    runs = [int(j) for j in args.jobs.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = big_scan(folder / "scan.pdf", args.pages)
        print(
            f"{args.pages}-page 300-dpi scan, {source.stat().st_size / 1e6:.1f} MB; "
            f"{os.cpu_count()} CPUs",
            flush=True,
        )
        results: dict[int, list[float]] = {}
        digests: set[str] = set()
        for jobs in runs:
            took, digest = one_run(source, jobs, folder)
            results.setdefault(jobs, []).append(took)
            digests.add(digest)
            print(
                f"  -j {jobs}: {took:6.1f} s  {args.pages / took * 60:6.1f} pages/min  "
                f"sha256 {digest[:16]}",
                flush=True,
            )
    best = {jobs: min(times) for jobs, times in results.items()}
    for jobs, took in sorted(best.items()):
        print(f"-j {jobs}: best {took:.1f} s")
    if 1 in best:
        for jobs in sorted(best):
            if jobs != 1:
                print(f"-j {jobs} is {best[1] / best[jobs]:.2f}x -j 1")
    print("outputs identical" if len(digests) == 1 else f"outputs DIFFER: {len(digests)} digests")


if __name__ == "__main__":
    main()
