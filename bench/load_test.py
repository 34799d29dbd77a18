"""Load test (not a test): a bulk burst with interactive one-page jobs arriving throughout.

    .venv-test/bin/python bench/load_test.py [--docs 24 --pages 10] [--every 3] [--workers 1]

Starts `pressroom serve` (SQLite, local disk: the embedded default) with ``--workers`` bulk
worker processes and one interactive worker, uploads ``--docs`` documents of ``--pages`` scanned
pages each into the bulk lane as fast as the API takes them, and meanwhile sends a one-page
interactive job every ``--every`` seconds until the bulk burst is done. Reports bulk pages/min
(first upload to last completion), interactive admission-to-artifact p50/p95 (upload start to
the signed download answering), and refusals (429) per lane.

The issue asks for a burst of about 3,000 pages; on a 2-core machine that is ~40 minutes of
work, so the default burst is scaled down to 240 pages (a few minutes). Pass --docs 300 for the
full size.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.serving import serving
from pressroom.synth import draw_page, image_pdf, page_lines, save_png

PORT = 18790


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(q * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=24)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--every", type=float, default=3.0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--bulk-deadline", type=float, default=None, help="deadline (s) on each bulk upload"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pressroom-load-") as tmp:
        folder = Path(tmp)
        images = [draw_page(page_lines(500 + i, 20)).image for i in range(4)]
        doc = image_pdf(
            [images[i % 4] for i in range(args.pages)], folder / "doc.pdf", 300
        ).read_bytes()
        one = save_png(
            draw_page(page_lines(999, 8), height_in=4).image, folder / "one.png", 300
        ).read_bytes()
        env = {**os.environ, "PRESSROOM_SCRATCH_DIR": tmp}
        with serving(
            port=PORT, data_dir=folder / "data", workers=args.workers, interactive=1, env=env
        ) as client:
            url = str(client.base_url).rstrip("/")
            headers = dict(client.headers)
            refused = {"bulk": 0, "interactive": 0}
            bulk_ids: list[str] = []
            quick: list[float] = []
            done = threading.Event()

            def interactive() -> None:
                with httpx.Client(base_url=url, headers=headers, timeout=120) as mine:
                    while not done.is_set():
                        t0 = time.perf_counter()
                        r = mine.post(
                            "/v1/jobs", files={"file": ("o", one)}, data={"lane": "interactive"}
                        )
                        if r.status_code == 429:
                            refused["interactive"] += 1
                        else:
                            job_id = r.json()["id"]
                            while (body := mine.get(f"/v1/jobs/{job_id}").json())["state"] not in (
                                "complete",
                                "rejected",
                                "review",
                            ):
                                time.sleep(0.05)
                            if body["state"] == "complete":
                                assert mine.get(body["artifact_url"]).status_code == 200
                                quick.append(time.perf_counter() - t0)
                        time.sleep(max(0.0, args.every - (time.perf_counter() - t0)))

            thread = threading.Thread(target=interactive)
            start = time.perf_counter()
            thread.start()
            for _ in range(args.docs):
                form = {"deadline": str(args.bulk_deadline)} if args.bulk_deadline else {}
                r = client.post("/v1/jobs", files={"file": ("d", doc)}, data=form)
                if r.status_code == 429:
                    refused["bulk"] += 1
                else:
                    bulk_ids.append(r.json()["id"])
            uploaded = time.perf_counter() - start
            pending = set(bulk_ids)
            states: dict[str, str] = {}
            while pending:
                for job_id in list(pending):
                    state = client.get(f"/v1/jobs/{job_id}").json()["state"]
                    if state in ("complete", "rejected", "review"):
                        states[job_id] = state
                        pending.discard(job_id)
                time.sleep(1.0)
            elapsed = time.perf_counter() - start
            done.set()
            thread.join()
    pages = sum(args.pages for s in states.values() if s == "complete")
    print(f"{os.cpu_count()} CPU(s); serve with {args.workers} bulk + 1 interactive worker process")
    print(
        f"bulk burst: {len(bulk_ids)} documents x {args.pages} pages accepted in {uploaded:.1f} s, "
        f"{pages} pages complete in {elapsed:.0f} s -> {60 * pages / elapsed:.1f} pages/min"
    )
    if quick:
        print(
            f"interactive 1-page jobs during the burst: {len(quick)}, admission to artifact "
            f"p50 {statistics.median(quick):.2f} s, p95 {percentile(quick, 0.95):.2f} s, "
            f"max {max(quick):.2f} s"
        )
    deadline = f" (bulk deadline {args.bulk_deadline:g} s)" if args.bulk_deadline else ""
    print(f"refused (429): bulk {refused['bulk']}, interactive {refused['interactive']}{deadline}")


if __name__ == "__main__":
    main()
