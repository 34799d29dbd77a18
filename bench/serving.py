"""`pressroom serve` for the benchmarks: started, waited for, stopped."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

PRESSROOM = Path(sys.executable).with_name("pressroom")


@contextmanager
def serving(
    *, port: int, data_dir: Path, workers: int, interactive: int, env: Mapping[str, str]
) -> Iterator[httpx.Client]:
    """A client (base URL and API key set) for a `serve` running until the block ends."""
    process = subprocess.Popen(
        [
            str(PRESSROOM),
            "serve",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--interactive",
            str(interactive),
        ],
        env={**env, "PRESSROOM_DATA_DIR": str(data_dir)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("pressroom serve did not start")
            time.sleep(0.25)
        key = (data_dir / "api-key").read_text().strip()
        with httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120
        ) as client:
            yield client
    finally:
        process.terminate()
        process.wait(60)
