"""The dashboard in a real browser: headless Chromium loads it, a screenshot is kept."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from PIL import Image, ImageStat

from pressroom.synth import save_png
from tests.desk_browser import CHROMIUM_ARGS
from tests.e2e.conftest import Server
from tests.helpers import small_scan

pytestmark = pytest.mark.e2e
ARTIFACTS = Path(
    os.environ.get("PRESSROOM_TEST_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts")
)
CHROMIUM_FLAGS = CHROMIUM_ARGS


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "chromium is missing: `make test` installs the Debian package"
    return found


def browse(url: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args, url],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_dashboard_loads_in_chromium_and_shows_both_lanes(server: Server, tmp_path: Path) -> None:
    png = save_png(small_scan(seed=3, dpi=150, lines=2).image, tmp_path / "p.png", 150).read_bytes()
    ids = [
        server.client.post("/v1/jobs", files={"file": ("x", png)}, data={"lane": lane}).json()["id"]
        for lane in ("bulk", "interactive")
    ]
    broken = server.client.post(
        "/v1/jobs", files={"file": ("x", b"%PDF-1.7\n%broken")}, data={"label": "Case 77-B"}
    ).json()["id"]
    for job_id in [*ids, broken]:
        server.wait_for(job_id, {"complete", "rejected", "review"})

    url = f"{server.url}/dashboard"
    dom = browse(url, tmp_path, "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    page = dom.stdout
    assert 'id="lane-bulk"' in page and 'id="lane-interactive"' in page
    assert "bulk lane" in page and "interactive lane" in page
    assert "CORRUPT" in page and broken in page  # the dead letter, with its reason
    assert "Case 77-B" in page and f"/review/jobs/{broken}/redrive" in page  # label, button
    # the service's own worker processes, by host, with their lanes
    workers = page.split('id="workers"')[1].split("</section>")[0]
    assert socket.gethostname()[:24] in workers and "bulk" in workers, workers
    assert "<svg" in page and 'http-equiv="refresh"' in page
    for section in ("throughput", "stages", "retries", "dead", "review", "workers", "scratch"):
        assert f'id="{section}"' in page

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "dashboard.png"
    shot.unlink(missing_ok=True)
    taken = browse(url, tmp_path, f"--screenshot={shot}", "--window-size=1400,1600")
    assert taken.returncode == 0 and shot.is_file(), taken.stderr[-2000:]
    with Image.open(shot) as image:
        assert image.size == (1400, 1600)
        # a rendered page, not a blank one: the cards and charts vary the pixels
        assert max(ImageStat.Stat(image.convert("L")).stddev) > 10
