"""Service benchmark (not a test): accept latency under load, queue throughput, lane isolation.

    .venv-test/bin/python bench/service_bench.py

1. claim+complete throughput of the SQLite job store with 1, 2 and 4 worker processes
   (no document work: the queue's own cost);
2. `pressroom serve` with one bulk and one interactive worker: a bulk batch keeps the bulk
   worker busy while the API's accept latency (POST /v1/jobs, 1-page PNG) is measured, and a
   1-page interactive job's submit-to-complete time is measured in the middle of the batch.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.serving import serving  # noqa: E402
from pressroom.jobs.migrate import upgrade  # noqa: E402
from pressroom.jobs.model import Lane, NewJob  # noqa: E402
from pressroom.jobs.sql import SqlJobStore  # noqa: E402
from pressroom.jobs.transport import make_engine  # noqa: E402
from pressroom.synth import draw_page, image_pdf, page_lines, save_png  # noqa: E402


def _drain(url: str, seconds: float, out: mp.Queue) -> None:  # type: ignore[type-arg]
    store = SqlJobStore(make_engine(url))
    owner = f"bench-{os.getpid()}"
    done = 0
    end = time.time() + seconds
    while time.time() < end:
        job = store.queue.claim((Lane.BULK,), owner, now=time.time(), lease_s=30)
        if job is None:
            break
        store.queue.complete(
            job.id,
            owner,
            artifact_key=f"a/{job.id}.pdf",
            artifact_sha256="0" * 64,
            pages=1,
            now=time.time(),
        )
        done += 1
    out.put(done)


def queue_throughput(folder: Path, workers: int, jobs: int = 3000, url: str = "") -> float:
    """claim+complete jobs/s with ``workers`` processes draining ``jobs`` (SQLite by default)."""
    url = url or f"sqlite:///{folder / f'q{workers}.db'}"
    engine = make_engine(url)
    upgrade(engine)
    store = SqlJobStore(engine)
    for _ in range(jobs):
        job_id = str(uuid.uuid4())
        store.queue.insert(
            NewJob(
                id=job_id,
                tenant="t",
                lane=Lane.BULK,
                source_key=f"s/{job_id}",
                source_sha256="0" * 64,
                source_bytes=1,
                kind="pdf",
                template="plain",
            ),
            now=0.0,
            max_attempts=4,
        )
    ctx = mp.get_context("spawn")
    out: mp.Queue = ctx.Queue()  # type: ignore[type-arg]
    procs = [ctx.Process(target=_drain, args=(url, 20.0, out)) for _ in range(workers)]
    start = time.perf_counter()
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    elapsed = time.perf_counter() - start
    total = sum(out.get() for _ in procs)
    engine.dispose()
    assert total == jobs, (total, jobs)
    return total / elapsed


def service_run(folder: Path, batch_pages: int = 40) -> dict[str, object]:
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(folder)}
    with serving(port=18765, data_dir=folder / "data", workers=1, interactive=1, env=env) as client:
        pages = [draw_page(page_lines(900 + i, 20)).image for i in range(4)]
        batch = image_pdf([pages[i % 4] for i in range(batch_pages)], folder / "batch.pdf", 300)
        one = save_png(draw_page(page_lines(999, 8), height_in=4).image, folder / "one.png", 300)
        batch_bytes = batch.read_bytes()
        one_bytes = one.read_bytes()
        bulk = [
            client.post("/v1/jobs", files={"file": ("b", batch_bytes)}).json()["id"]
            for _ in range(2)
        ]
        time.sleep(5)  # the bulk worker is deep in the batch now
        latencies = []
        for _ in range(40):
            t0 = time.perf_counter()
            r = client.post("/v1/jobs", files={"file": ("o", one_bytes)}, data={"lane": "bulk"})
            latencies.append(time.perf_counter() - t0)
            assert r.status_code == 202
        t0 = time.perf_counter()
        job_id = client.post(
            "/v1/jobs", files={"file": ("o", one_bytes)}, data={"lane": "interactive"}
        ).json()["id"]
        while client.get(f"/v1/jobs/{job_id}").json()["state"] not in ("complete", "rejected"):
            time.sleep(0.05)
        interactive_s = time.perf_counter() - t0
        bulk_state = client.get(f"/v1/jobs/{bulk[0]}").json()["state"]
        latencies.sort()
        return {
            "accept_p50_ms": 1000 * statistics.median(latencies),
            "accept_p95_ms": 1000 * latencies[int(0.95 * len(latencies)) - 1],
            "interactive_s": interactive_s,
            "bulk_state_then": bulk_state,
        }


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="pressroom-bench-") as tmp:
        folder = Path(tmp)
        for workers in (1, 2, 4):
            rate = queue_throughput(folder, workers)
            print(
                f"SQLite claim+complete, {workers} worker process(es): {rate:,.0f} jobs/s",
                flush=True,
            )
        result = service_run(folder)
        print(
            f"accept latency while the bulk worker is busy: p50 {result['accept_p50_ms']:.1f} ms,"
            f" p95 {result['accept_p95_ms']:.1f} ms (40 uploads of a 1-page PNG)"
        )
        print(
            f"1-page interactive job, submit to complete, during a bulk batch: "
            f"{result['interactive_s']:.2f} s (bulk job was {result['bulk_state_then']})"
        )


if __name__ == "__main__":
    main()
