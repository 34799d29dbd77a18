"""Scale-out benchmark (not a test): PostgreSQL vs SQLite, and pages/min with 1 vs 2 workers.

    .venv-test/bin/python bench/scaleout_bench.py [--rounds 2] [--jobs 3000] [--docs 8 --pages 3]

1. claim+complete throughput of the job store (no document work: the queue's own cost) with
   1, 2 and 4 worker processes, PostgreSQL (127.0.0.1:5432, a fresh database per run) and SQLite
   side by side, interleaved, best of ``--rounds``;
2. end to end on the scaled-out configuration (PostgreSQL + S3 on moto's server): ``--docs``
   scanned documents of ``--pages`` pages each, drained by `pressroom worker` with 1 and then
   2 worker processes; pages per minute from the first claim to the last completion.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.service_bench import queue_throughput
from bench.serving import PRESSROOM, serving
from pressroom.synth import draw_page, image_pdf, page_lines
from tests.s3server import running_s3

ADMIN = os.environ.get("PRESSROOM_BENCH_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
BIN = PRESSROOM


class Database:
    """A throwaway PostgreSQL database."""

    def __init__(self) -> None:
        self.name = f"pressroom_bench_{uuid.uuid4().hex[:10]}"

    def __enter__(self) -> str:
        with psycopg.connect(ADMIN, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.name}"')  # type: ignore[arg-type]
        return ADMIN.rsplit("/", 1)[0] + "/" + self.name

    def __exit__(self, *_exc: object) -> None:
        with psycopg.connect(ADMIN, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')  # type: ignore[arg-type]


def store_throughput(rounds: int, jobs: int) -> None:
    best: dict[tuple[str, int], float] = {}
    with tempfile.TemporaryDirectory(prefix="pressroom-bench-") as tmp:
        for r in range(rounds):
            for workers in (1, 2, 4):
                with Database() as url:
                    pg = queue_throughput(Path(tmp), workers, jobs, url)
                round_dir = Path(tmp) / f"r{r}"
                round_dir.mkdir(exist_ok=True)
                lite = queue_throughput(round_dir, workers, jobs)
                for key, rate in ((("PostgreSQL", workers), pg), (("SQLite", workers), lite)):
                    best[key] = max(best.get(key, 0.0), rate)
                print(
                    f"  round {r + 1}: {workers} process(es): PostgreSQL {pg:,.0f} jobs/s, "
                    f"SQLite {lite:,.0f} jobs/s",
                    flush=True,
                )
                for f in Path(tmp, f"r{r}").glob("*.db*"):
                    f.unlink()
    print(f"claim+complete, {jobs} jobs, best of {rounds}:")
    print("  worker processes   PostgreSQL   SQLite")
    for workers in (1, 2, 4):
        print(
            f"  {workers:>16}   {best[('PostgreSQL', workers)]:>7,.0f}/s  "
            f"{best[('SQLite', workers)]:>6,.0f}/s"
        )


def pages_per_minute(docs: int, pages: int, workers: int, folder: Path, s3: object) -> float:
    from tests.s3server import S3Server

    assert isinstance(s3, S3Server)
    bucket = s3.new_bucket()
    with Database() as url:
        env = {
            **os.environ,
            **s3.env(bucket),
            "PRESSROOM_DATABASE_URL": url,
            "PRESSROOM_SIGNING_KEY": "bench",
        }
        with serving(
            port=18777, data_dir=folder / f"api-{workers}", workers=0, interactive=0, env=env
        ) as client:
            ids = []
            for d in range(docs):
                images = [
                    draw_page(page_lines(300 + d * pages + p, 20)).image for p in range(pages)
                ]
                src = image_pdf(images, folder / f"doc{d}.pdf", 300)
                ids.append(
                    client.post("/v1/jobs", files={"file": ("d", src.read_bytes())}).json()["id"]
                )
            worker = subprocess.Popen(
                [str(BIN), "worker", "--lane", "bulk", "--concurrency", str(workers)],
                env={**env, "PRESSROOM_DATA_DIR": str(folder / f"w-{workers}")},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                while True:
                    with psycopg.connect(url) as conn:
                        row = conn.execute(
                            "select count(*) filter (where state in "
                            "('complete','rejected','review')),"
                            " min(started_at), max(finished_at), sum(pages) from jobs"
                        ).fetchone()
                    assert row is not None
                    if row[0] == docs:
                        break
                    time.sleep(0.5)
            finally:
                worker.terminate()
                worker.wait(60)
            states = {client.get(f"/v1/jobs/{i}").json()["state"] for i in ids}
            assert states == {"complete"}, states
            return float(row[3]) / ((float(row[2]) - float(row[1])) / 60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=3000)
    parser.add_argument("--docs", type=int, default=8)
    parser.add_argument("--pages", type=int, default=3)
    parser.add_argument("--skip-store", action="store_true")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPU(s)")
    if not args.skip_store:
        store_throughput(args.rounds, args.jobs)
    with tempfile.TemporaryDirectory(prefix="pressroom-bench-") as tmp, running_s3() as s3:
        rates = {}
        for workers in (1, 2):
            rates[workers] = pages_per_minute(args.docs, args.pages, workers, Path(tmp), s3)
            print(
                f"PostgreSQL + S3, {args.docs} documents x {args.pages} pages (300 dpi scans), "
                f"{workers} worker process(es): {rates[workers]:.1f} pages/min",
                flush=True,
            )
        print(f"scaling 1 -> 2 worker processes: {rates[2] / rates[1]:.2f}x")


if __name__ == "__main__":
    main()
