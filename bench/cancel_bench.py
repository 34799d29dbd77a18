"""Cancel benchmark (not a test): how long a DELETE takes to stop a running 40-page job.

    .venv-test/bin/python bench/cancel_bench.py [--pages 40] [--after 8] [--runs 2]

A ``--pages`` letter-size 300-dpi scan (20 lines of 12 pt text a page, real Tesseract) is
uploaded to `pressroom serve --workers 1` (SQLite, a local data folder; one job, so below
``PRESSROOM_SPLIT_PAGES`` it runs whole, not in ranges); ``--after`` seconds into its run a
``DELETE /v1/jobs/{id}`` is sent, and the time is from that request to the job read back
``rejected``/``CANCELLED`` (polled every 50 ms): at most about one page's reading, where
before every loop over pages asked between pages (pipeline.stop) a cancel waited for the end
of all the job's OCR (75 s on a 40-page job, as a stranger measured it).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.serving import serving
from bench.split_bench import big_scan


def one_run(source: Path, after: float, folder: Path, port: int) -> tuple[float, float]:
    data = folder / f"data-{time.monotonic_ns()}"
    env = {
        **os.environ,
        "PRESSROOM_SIGNING_KEY": "bench-" + "0" * 40,
        "PRESSROOM_SCRATCH_DIR": str(folder),
        "PRESSROOM_MAX_BYTES": str(max(source.stat().st_size * 2, 256 << 20)),
    }
    with serving(port=port, data_dir=data, workers=1, interactive=0, env=env) as client:
        answer = client.post("/v1/jobs", files={"file": ("d", source.read_bytes())})
        assert answer.status_code == 202, answer.text
        job_id = answer.json()["id"]
        while client.get(f"/v1/jobs/{job_id}").json()["state"] != "running":
            time.sleep(0.05)
        started = time.monotonic()
        time.sleep(after)
        asked = time.monotonic()
        sent = client.delete(f"/v1/jobs/{job_id}")
        assert sent.status_code == 202, sent.text  # running: it is asked to stop
        while True:
            job = client.get(f"/v1/jobs/{job_id}").json()
            if job["state"] != "running":
                break
            time.sleep(0.05)
        stopped = time.monotonic() - asked
        assert (job["state"], job["reason"]) == ("rejected", "CANCELLED"), job
        return stopped, asked - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--after", type=float, default=8.0)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPU(s); {args.pages}-page scan, DELETE {args.after:g} s into its run")
    with tempfile.TemporaryDirectory(prefix="pressroom-bench-") as tmp:
        source = big_scan(Path(tmp) / f"scan-{args.pages}.pdf", args.pages)
        took = []
        for n in range(args.runs):
            stopped, ran = one_run(source, args.after, Path(tmp), 18790 + n)
            took.append(stopped)
            print(
                f"  run {n + 1}: DELETE after {ran:.1f} s of running -> CANCELLED in "
                f"{stopped:.2f} s (load average {os.getloadavg()[0]:.1f})",
                flush=True,
            )
        print(f"DELETE to CANCELLED: best {min(took):.2f} s, worst {max(took):.2f} s")


if __name__ == "__main__":
    main()
