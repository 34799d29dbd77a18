"""Bombs through the service: the API counts pages in a bounded child, never parsing a hostile
file itself, and the worker rejects each bomb with its code, logging no error."""

from __future__ import annotations

import io
import logging
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from PIL import Image

from pressroom.app import create_app
from pressroom.jobs.model import Lane
from pressroom.pipeline import pagecount
from pressroom.pipeline.pagecount import count_pages, count_work
from pressroom.service import Services
from pressroom.testing import FakeOcrEngine
from pressroom.worker.runner import JobRunner
from tests import bombs

pytestmark = pytest.mark.integration


def test_pages_are_counted_in_a_child(tmp_path: Path) -> None:
    assert count_pages(bombs.text_pages(tmp_path / "three.pdf", 3), "pdf") == 3
    tiff = tmp_path / "two.tif"
    frames = [Image.new("L", (50, 50), 255)] * 2
    frames[0].save(tiff, format="TIFF", save_all=True, append_images=frames[1:])
    assert count_pages(tiff, "tiff") == 2
    assert count_pages(tmp_path / "missing.pdf", "pdf") == 1
    assert count_pages(bombs.lying_page_tree(tmp_path / "tree.pdf"), "pdf") == 1


def test_a_redactions_text_is_counted_in_the_child_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    three = bombs.text_pages(tmp_path / "three.pdf", 3)
    pages, chars = count_work(three, "pdf", text_cap=100_000)
    assert pages == 3 and chars == 3 * len(
        "This born digital page carries enough real text to keep."
    )
    assert count_work(three, "pdf") == (3, None)  # not asked: not read
    # characters as PDFium extracts them, each page's counted up to the cap
    wordy = bombs.text_bomb(tmp_path / "wordy.pdf", megabytes=0.2)
    assert count_work(wordy, "pdf", text_cap=100_000)[1] == 100_000
    assert count_work(wordy, "pdf", text_cap=50_000)[1] == 50_000
    # a child that dies counting keeps the page count it printed, without characters
    monkeypatch.setattr(pagecount, "_CHILD", "import os; print(3, flush=True); os.abort()")
    assert count_work(three, "pdf", text_cap=100_000) == (3, None)
    assert count_work(three, "pdf") == (1, None)  # a count alone from a child that died: no


def test_a_file_that_floods_the_parser_costs_the_api_nothing(tmp_path: Path) -> None:
    """qpdf copies each repeated kid: 1.8 MB of page tree took 800 MB in-process. In the
    child it meets the memory ceiling; the API gets the fallback estimate."""
    src = bombs.repeated_kids(tmp_path / "kids.pdf", 300_000)
    before = _rss_mib()
    assert count_pages(src, "pdf") == 1
    assert _rss_mib() - before < 50


def test_a_parser_that_aborts_or_hangs_leaves_the_api_standing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = bombs.text_pages(tmp_path / "ok.pdf", 2)
    # a C++ abort inside the parser (as a tesserocr or qpdf bug would raise it)
    monkeypatch.setattr(pagecount, "_CHILD", "import os; os.abort()")
    assert count_pages(src, "pdf") == 1
    # a parser that never returns: the child is killed at the timeout, not waited for
    pid_file = tmp_path / "child.pid"
    monkeypatch.setattr(
        pagecount,
        "_CHILD",
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(600)",
    )
    assert count_pages(src, "pdf", timeout_s=1.0) == 1
    assert not Path(f"/proc/{pid_file.read_text()}").exists()


Make = Callable[[Path], Path]
PLAIN: dict[str, str] = {}
REDACT = {"redact": "account-number"}
BOMBS: list[tuple[str, str, Make, dict[str, str]]] = [
    ("tree-claims-5M", "CORRUPT", lambda p: bombs.lying_page_tree(p, 5_000_000), PLAIN),
    ("operators", "CONTENT_LIMIT", lambda p: bombs.operator_bomb(p, 20), PLAIN),
    ("image-8-deep", "PIXEL_LIMIT", lambda p: bombs.nested_image_bomb(p, 8), PLAIN),
    ("huge-text-page", "PIXEL_LIMIT", lambda p: bombs.big_text_page(p, 14_400), REDACT),
]


@pytest.mark.parametrize(
    ("code", "make", "form"), [b[1:] for b in BOMBS], ids=[b[0] for b in BOMBS]
)
def test_the_worker_rejects_each_bomb_with_its_code_and_pages_nobody(
    services: Services,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    code: str,
    make: Make,
    form: dict[str, str],
) -> None:
    key = services.store.tenancy.create_key("acme", now=services.clock())
    client = TestClient(create_app(services), client=("127.0.0.1", 50000))
    data = make(tmp_path / "bomb.pdf").read_bytes()
    response = client.post(
        "/v1/jobs",
        headers={"Authorization": f"Bearer {key}"},
        files={"file": ("bomb.pdf", io.BytesIO(data))},
        data=form,
    )
    assert response.status_code == 202, response.text
    job_id = response.json()["id"]
    caplog.set_level(logging.INFO)
    runner = JobRunner(services, FakeOcrEngine(), "w1")
    while runner.run_next((Lane.BULK, Lane.INTERACTIVE)) is not None:
        pass
    job = client.get(f"/v1/jobs/{job_id}", headers={"Authorization": f"Bearer {key}"}).json()
    assert (job["state"], job["reason"], job["attempts"]) == ("rejected", code, 1)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return 0.0
