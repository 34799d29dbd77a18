"""Watch benchmark (not a test): a burst of scans through `pressroom watch --once` beside
`pressroom process` on the same files, side by side in one run.

    .venv-test/bin/python bench/watch_bench.py [--files 10] [--pages 4] [--jobs 2] [--rounds 2]

``--files`` PDFs of ``--pages`` letter-size 300-dpi pages (20 lines of 12 pt text a page, real
Tesseract; the split benchmark's pages) are processed by `process -j N` into one folder, then
copied into a fresh inbox and taken by `watch INBOX -o OUTDIR --once -j N --settle 0`; the
rounds interleave the two. Each figure is pages a minute from the command's start to its exit
(interpreters starting included). What the watcher adds is its own work per file: hashing,
two renames, the ledger's fsync, the group and mode.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.serving import PRESSROOM
from pressroom.synth import draw_page, image_pdf, page_lines


def burst(folder: Path, files: int, pages: int) -> list[Path]:
    folder.mkdir()
    out = []
    for f in range(files):
        drawn = [draw_page(page_lines(2000 + f * pages + n, 20)).image for n in range(pages)]
        out.append(image_pdf(drawn, folder / f"scan{f:03d}.pdf", 300))
    return out


def timed(command: list[str], env: dict[str, str]) -> float:
    start = time.monotonic()
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--pages", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    total = args.files * args.pages
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(folder), "OMP_THREAD_LIMIT": "1"}
        sources = burst(folder / "burst", args.files, args.pages)
        print(f"{args.files} files x {args.pages} pages at 300 dpi; -j {args.jobs}; "
              f"{os.cpu_count()} CPUs", flush=True)  # fmt: skip
        figures: dict[str, list[float]] = {"process": [], "watch": []}
        for r in range(args.rounds):
            out = folder / f"process-{r}"
            took = timed(
                [str(PRESSROOM), "process", *map(str, sources), "-o", str(out), "-q",
                 "-j", str(args.jobs)], env,
            )  # fmt: skip
            figures["process"].append(total / took * 60)
            print(f"  process: {took:6.1f} s  {total / took * 60:6.1f} pages/min", flush=True)
            inbox = folder / f"inbox-{r}"
            inbox.mkdir()
            for source in sources:
                shutil.copy(source, inbox / source.name)
            out = folder / f"watch-{r}"
            took = timed(
                [str(PRESSROOM), "watch", str(inbox), "-o", str(out), "--once", "-q",
                 "--settle", "0", "-j", str(args.jobs)], env,
            )  # fmt: skip
            assert len(list(out.glob("*.pdf"))) == args.files, "the watcher missed a file"
            assert len(list((inbox / ".done").iterdir())) == args.files
            figures["watch"].append(total / took * 60)
            print(f"  watch:   {took:6.1f} s  {total / took * 60:6.1f} pages/min", flush=True)
    for name, values in figures.items():
        print(f"{name}: best {max(values):.1f} pages/min")
    print(f"watch / process: {max(figures['watch']) / max(figures['process']):.2f}")


if __name__ == "__main__":
    main()
