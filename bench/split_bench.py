"""Split benchmark (not a test): one big scanned file, admission to artifact, with 1 and with 2
worker processes.

    .venv-test/bin/python bench/split_bench.py [--pages 400] [--split 50] [--workers 1,2]

A ``--pages`` letter-size 300-dpi scan (20 lines of 12 pt text a page, real Tesseract) is
uploaded to `pressroom serve --workers 0` while `pressroom worker --lane bulk --concurrency N`
waits beside it (SQLite and a local data folder, shared); the time is from the upload's 202 to
the job read back ``complete``. A document over ``--split`` pages is read as ranges of half as
many (``PRESSROOM_SPLIT_PAGES``). Each run starts from a fresh data folder; the runs are done
in the order given (``--workers 1,2,1,2`` interleaves repeats on a shared machine).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.serving import PRESSROOM, serving
from pressroom.synth import draw_page, image_pdf, page_lines

DISTINCT = 25  # pages drawn; the file repeats them (400 different bitmaps would not fit memory)


def big_scan(path: Path, pages: int) -> Path:
    drawn = [draw_page(page_lines(1600 + n, 20)).image for n in range(min(pages, DISTINCT))]
    return image_pdf([drawn[n % len(drawn)] for n in range(pages)], path, 300)


def admission_to_artifact(source: Path, workers: int, split: int, folder: Path) -> float:
    data = folder / f"data-{workers}-{time.monotonic_ns()}"
    env = {
        **os.environ,
        "PRESSROOM_SIGNING_KEY": "bench-" + "0" * 40,
        "PRESSROOM_SPLIT_PAGES": str(split),
        "PRESSROOM_SCRATCH_DIR": str(folder),
        # 400 scanned pages are over the default upload cap (256 MiB)
        "PRESSROOM_MAX_BYTES": str(max(source.stat().st_size * 2, 256 << 20)),
    }
    with serving(port=18779, data_dir=data, workers=0, interactive=0, env=env) as client:
        worker = subprocess.Popen(
            [str(PRESSROOM), "worker", "--lane", "bulk", "--concurrency", str(workers)],
            env={**env, "PRESSROOM_DATA_DIR": str(data)},
            stdout=subprocess.DEVNULL,
            stderr=(folder / f"worker-{workers}.log").open("ab"),
        )
        try:
            time.sleep(5.0)  # the worker processes are up and idle before the upload
            start = time.monotonic()
            answer = client.post("/v1/jobs", files={"file": ("d", source.read_bytes())})
            assert answer.status_code == 202, answer.text
            job_id = answer.json()["id"]
            while True:
                job = client.get(f"/v1/jobs/{job_id}").json()
                if job["state"] not in ("accepted", "running", "retrying"):
                    break
                time.sleep(0.5)
            took = time.monotonic() - start
        finally:
            worker.terminate()
            worker.wait(120)
        assert job["state"] == "complete", job
        listed = client.get("/v1/jobs").json()["jobs"]
        assert [j["id"] for j in listed] == [job_id], "tasks must never show as jobs"
        assert job["pages"] == int(source.stem.split("-")[1]), job
        artifacts = list((data / "blobs" / "artifacts").rglob("*.pdf"))
        assert len(artifacts) <= 1, artifacts  # a local store: exactly one output
        return took


def measure(
    source: Path, pages: int, runs: list[int], split: int, folder: Path
) -> dict[int, float]:
    """Best admission-to-artifact seconds per worker count, the runs in the order given, a
    line printed after each (bench/reading_bench.py runs this too, after its reading halves)."""
    best: dict[int, float] = {}
    for workers in runs:
        took = admission_to_artifact(source, workers, split, folder)
        best[workers] = min(best.get(workers, took), took)
        print(
            f"  {workers} worker process(es): {took:.1f} s admission to artifact "
            f"({pages / took * 60:.1f} pages/min; load average after "
            f"{os.getloadavg()[0]:.1f})",
            flush=True,
        )
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=400)
    parser.add_argument("--split", type=int, default=50)
    parser.add_argument("--workers", default="1,2")
    args = parser.parse_args()
    runs = [int(w) for w in args.workers.split(",")]
    print(f"{os.cpu_count()} CPU(s); {args.pages} pages, PRESSROOM_SPLIT_PAGES={args.split}")
    with tempfile.TemporaryDirectory(prefix="pressroom-bench-") as tmp:
        source = big_scan(Path(tmp) / f"scan-{args.pages}.pdf", args.pages)
        best = measure(source, args.pages, runs, args.split, Path(tmp))
        if 1 in best and 2 in best:
            print(
                f"1 -> 2 worker processes (best of each): {best[1]:.1f} s -> {best[2]:.1f} s, "
                f"{best[1] / best[2]:.2f}x faster"
            )


if __name__ == "__main__":
    main()
