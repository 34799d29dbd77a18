"""Tarpit benchmark (not a test): the next job's wait behind a webhook endpoint that trickles.

    .venv-test/bin/python bench/tarpit_bench.py [--rounds 5] [--every 4] [--give-up 60]

`pressroom serve` on SQLite with one bulk worker and no interactive one (the tarpit's best
case: a single worker to hold). Each round: tenant A's job carries a webhook to a tarpit
endpoint that answers one byte every ``--every`` seconds and never finishes; once the tarpit is
connected, tenant B submits a one-page scan, and we time B from its acceptance (the 202) to
``complete``, and note whether the tarpit was still connected when B completed. The same without
the webhook is the baseline. A wait longer than ``--give-up`` seconds is reported as such; the
tarpit is then closed so the round can end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.serving import serving
from pressroom.synth import image_pdf
from tests.e2e.conftest import free_port
from tests.helpers import small_scan
from tests.hookservers import Tarpit, wait_until


def _submit(client: httpx.Client, data: bytes, **form: str) -> tuple[str, float]:
    response = client.post("/v1/jobs", files={"file": ("scan.pdf", data)}, data=form)
    response.raise_for_status()
    return str(response.json()["id"]), time.monotonic()


def _wait(
    client: httpx.Client, job_id: str, give_up: float, start: float | None = None
) -> float | None:
    """Seconds from ``start`` (now by default) until the job ends, or None past ``give_up``."""
    start = time.monotonic() if start is None else start
    while time.monotonic() - start < give_up:
        if client.get(f"/v1/jobs/{job_id}").json()["state"] in ("complete", "rejected", "review"):
            return time.monotonic() - start
        time.sleep(0.05)
    return None


def run(rounds: int, every: float, give_up: float, tmp: Path) -> None:
    scans = [
        image_pdf([small_scan(seed=40 + n, lines=3).image], tmp / f"s{n}.pdf", 300).read_bytes()
        for n in range(2 * rounds + 1)
    ]
    env = {**os.environ, "PRESSROOM_WEBHOOK_ALLOW_PRIVATE": "1"}
    figures: dict[str, list[float | None]] = {"baseline": [], "tarpit": []}
    still: list[bool] = []
    for scenario in ("baseline", "tarpit"):
        with serving(
            port=free_port(), data_dir=tmp / scenario, workers=1, interactive=0, env=env
        ) as client:
            warm, _ = _submit(client, scans[-1])  # the worker's first job loads its engine
            _wait(client, warm, 120)
            for r in range(rounds):
                pit = Tarpit(every=every) if scenario == "tarpit" else None
                try:
                    form = {"webhook_url": pit.url} if pit else {}
                    first, _ = _submit(client, scans[2 * r], **form)
                    _wait(client, first, 120)
                    if pit is not None and not wait_until(lambda p=pit: p.open >= 1, 30):
                        raise RuntimeError("the tarpit never got its webhook")
                    second, accepted = _submit(client, scans[2 * r + 1])
                    waited = _wait(client, second, give_up, accepted)
                    figures[scenario].append(waited)
                    if pit is not None:
                        still.append(waited is not None and pit.open >= 1)
                        print(
                            f"  tarpit round {r + 1}: next job "
                            + (f"{waited:.2f} s" if waited is not None else f"> {give_up:.0f} s")
                            + f", tarpit still connected: {pit.open >= 1}",
                            flush=True,
                        )
                finally:
                    if pit is not None:
                        pit.close()
                if waited is None:  # behind the tarpit: it is closed now; how long after?
                    after = _wait(client, second, 120)
                    if after is not None:
                        print(f"    completed {after:.2f} s after the tarpit hung up", flush=True)
    print(f"\nnext job's wait, acceptance to complete, one bulk worker ({rounds} rounds)")
    print(f"  tarpit endpoint: one byte every {every:g} s, never finishing")
    for scenario, waits in figures.items():
        done = [w for w in waits if w is not None]
        line = ", ".join(f"{w:.2f}" if w is not None else f">{give_up:.0f}" for w in waits)
        median = f"median {statistics.median(done):.2f} s" if len(done) == len(waits) else ""
        print(f"  {scenario:<9} {line} s  {median}")
    print(f"  tarpit still connected when the next job completed: {sum(still)}/{len(still)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--every", type=float, default=4.0, help="seconds between tarpit bytes")
    parser.add_argument("--give-up", type=float, default=60.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pressroom-tarpit-") as tmp:
        run(args.rounds, args.every, args.give_up, Path(tmp))


if __name__ == "__main__":
    main()
