"""Fairness benchmark (not a test): how long tenant B's single job waits in the queue while
tenant A's burst is queued, beside the same job with nothing else queued, in one run.

    .venv-test/bin/python bench/fairness_bench.py [--burst 8] [--pages 2] [--rounds 2]
                                                   [--interactive 1]

`pressroom serve` (the API) and `pressroom worker --lane interactive --concurrency N` beside it
(``--interactive``; real Tesseract,
SQLite and a local data folder, fresh for every run). In the *burst* run tenant A uploads
``--burst`` scans of ``--pages`` letter pages each (20 lines of 12 pt text at 300 dpi), and
once A's first is running tenant B uploads one scan of the same size; in the *alone* run B's
scan is the only upload. B's queue wait is its job's ``started_at - created_at`` as the job
table records it; its total is from its upload's 202 to ``complete``. The security review's
reproduction (before fair claiming): B waited 8.4 s behind A's eight two-page scans and was
done at 9.7 s. Runs alternate alone / burst for ``--rounds`` rounds (a shared machine).
Then what one fair claim costs with ``--claim-waiting`` jobs queued (SQLite, and PostgreSQL
with ``--pg-url``): the tenant is chosen first, so a claim does not sort the lane.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.serving import PRESSROOM, serving
from pressroom.synth import draw_page, image_pdf, page_lines

UNFINISHED = ("accepted", "running", "retrying")


def scan(path: Path, pages: int, seed: int) -> bytes:
    drawn = [draw_page(page_lines(seed + n, 20)).image for n in range(pages)]
    return image_pdf(drawn, path, 300).read_bytes()


def upload(client: httpx.Client, data: bytes, key: str | None = None) -> str:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    answer = client.post(
        "/v1/jobs", files={"file": ("d", data)}, data={"lane": "interactive"}, headers=headers
    )
    assert answer.status_code == 202, answer.text
    return str(answer.json()["id"])


def wait_for(client: httpx.Client, job_id: str, key: str, *, running: bool = False) -> dict:
    headers = {"Authorization": f"Bearer {key}"}
    while True:
        job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
        if job["state"] not in UNFINISHED or (running and job["state"] == "running"):
            return dict(job)
        time.sleep(0.05)


@contextmanager
def _worker(data: Path, env: dict[str, str], workers: int) -> Iterator[None]:
    """``pressroom worker`` on the interactive lane beside the API (as `serve` would run it)."""
    process = subprocess.Popen(
        [str(PRESSROOM), "worker", "--lane", "interactive", "--concurrency", str(workers)],
        env={**env, "PRESSROOM_DATA_DIR": str(data)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        process.terminate()
        process.wait(120)


def one_run(
    folder: Path, burst: list[bytes], single: bytes, workers: int, port: int
) -> dict[str, float]:
    data = folder / f"data-{time.monotonic_ns()}"
    env = {
        **os.environ,
        "PRESSROOM_SIGNING_KEY": "bench-" + "0" * 40,
        "PRESSROOM_SCRATCH_DIR": str(folder),
    }
    with (
        serving(port=port, data_dir=data, workers=0, interactive=0, env=env) as client,
        _worker(data, env, workers),
    ):
        made = subprocess.run(
            [str(PRESSROOM), "keys", "create", "--tenant", "b"],
            env={**env, "PRESSROOM_DATA_DIR": str(data)},
            capture_output=True,
            text=True,
            check=True,
        )
        b_key = made.stdout.strip().splitlines()[-1]
        a_key = str(client.headers["Authorization"]).removeprefix("Bearer ")
        time.sleep(3.0)  # the workers are up and idle
        a_jobs = [upload(client, doc) for doc in burst]
        if a_jobs:
            wait_for(client, a_jobs[0], a_key, running=True)
        start = time.monotonic()
        b_job = upload(client, single, b_key)
        done = wait_for(client, b_job, b_key)
        total = time.monotonic() - start
        assert done["state"] == "complete", done
        for job_id in a_jobs:
            assert wait_for(client, job_id, a_key)["state"] == "complete"
    engine = create_engine(f"sqlite:///{data / 'pressroom.db'}")
    with engine.connect() as conn:
        created, started = conn.execute(
            text("SELECT created_at, started_at FROM jobs WHERE id = :id"), {"id": b_job}
        ).one()
        order = [
            str(t)
            for (t,) in conn.execute(text("SELECT tenant FROM jobs ORDER BY started_at")).all()
        ]
    engine.dispose()
    return {"wait": float(started) - float(created), "total": total, "b_turn": order.index("b")}


def claim_cost(url: str | None, waiting: int, claims: int = 50) -> float:
    """Milliseconds per fair claim with ``waiting`` two-page jobs queued in the bulk lane,
    80 % of them one tenant's, the rest spread over 50 others (rows written directly)."""
    from pressroom.jobs.claims import ensure_share
    from pressroom.jobs.model import Lane
    from pressroom.jobs.schema import jobs
    from pressroom.service import open_services
    from pressroom.settings import Settings

    with tempfile.TemporaryDirectory(prefix="claim-cost-") as tmp:
        settings = Settings(data_dir=Path(tmp) / "d", scratch_dir=Path(tmp), database_url=url)
        store = open_services(settings).store
        rows = [
            {
                "id": f"{n:08d}-0000-4000-8000-000000000000",
                "tenant": "a" if n % 10 < 8 else f"t{n % 50}",
                "lane": "bulk",
                "state": "accepted",
                "attempts": 0,
                "max_attempts": 4,
                "source_key": "k",
                "source_sha256": "0" * 64,
                "source_bytes": 1,
                "kind": "pdf",
                "template": "plain",
                "options": {},
                "created_at": float(n),
                "updated_at": float(n),
                "next_eligible_at": float(n),
                "pages_estimate": 2,
            }
            for n in range(waiting)
        ]
        with store.db.tx() as conn:
            conn.execute(jobs.insert(), rows)
            for tenant in {str(r["tenant"]) for r in rows}:
                ensure_share(store.db, conn, "bulk", tenant)
        start = time.perf_counter()
        for _ in range(claims):
            store.tasks.claim_next((Lane.BULK,), "w", now=1e9, lease_s=60)
        took = (time.perf_counter() - start) / claims * 1000
        store.db.engine.dispose()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--burst", type=int, default=8, help="tenant A's jobs queued")
    parser.add_argument("--pages", type=int, default=2, help="pages per scan")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--interactive", type=int, default=1, help="interactive workers")
    parser.add_argument("--port", type=int, default=18781)
    parser.add_argument(
        "--claim-waiting", type=int, default=20_000, help="jobs queued for the claim cost; 0 skips"
    )
    parser.add_argument("--pg-url", help="also measure the claim cost on this empty PostgreSQL")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fairness-bench-") as tmp:
        folder = Path(tmp)
        burst = [scan(folder / f"a{n}.pdf", args.pages, 100 + 10 * n) for n in range(args.burst)]
        single = scan(folder / "b.pdf", args.pages, 7)
        figures: dict[str, list[dict[str, float]]] = {"alone": [], "burst": []}
        for _ in range(args.rounds):
            figures["alone"].append(one_run(folder, [], single, args.interactive, args.port))
            figures["burst"].append(one_run(folder, burst, single, args.interactive, args.port))
    print(
        f"B's one {args.pages}-page scan on the interactive lane, {args.interactive} worker(s), "
        f"{args.rounds} round(s); A's burst: {args.burst} scans of {args.pages} pages"
    )
    print(f"{'run':<8} {'queue wait s (median)':>22} {'total s (median)':>17} {'B started as':>13}")
    for name, runs in figures.items():
        wait = statistics.median(r["wait"] for r in runs)
        total = statistics.median(r["total"] for r in runs)
        turns = sorted({int(r["b_turn"]) + 1 for r in runs})
        print(f"{name:<8} {wait:>22.2f} {total:>17.2f} {'/'.join(map(str, turns)):>13}")
    alone = statistics.median(r["total"] for r in figures["alone"])
    burst_total = statistics.median(r["total"] for r in figures["burst"])
    print(f"B's total with A's burst queued: {burst_total / alone:.2f}x its total alone")
    if args.claim_waiting:
        for name, url in (("sqlite", None), ("postgresql", args.pg_url)):
            if name == "sqlite" or url:
                ms = claim_cost(url, args.claim_waiting)
                print(f"fair claim, {args.claim_waiting:,} jobs waiting, {name}: {ms:.1f} ms")


if __name__ == "__main__":
    main()
