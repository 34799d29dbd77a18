"""Desk Apply benchmark (not a test): how long the Apply form's POST takes to answer, and how
long until the rebuilt copy is held, on both desks (issue 42: "Apply answers at once").

    .venv-test/bin/python bench/desk_apply_bench.py [--pages 1 10] [--kind scan|digital]

For each page count a letter naming a person on every page is made (``scan``: 300-dpi page
images in a PDF, read by Tesseract, as the stranger's letter was; ``digital``: born-digital
text) and held for review with ``--redact name --review always``:

- offline: ``process_one`` holds it in OUTDIR/review; the desk's own app (``desk_app`` over a
  ``FolderDesk``, signed in through its one-time link) takes the Apply POST in process;
- service: ``POST /v1/jobs``, a worker thread in this process (real Tesseract, polling the
  queue every 20 ms) holds it; the service's desk (signed in with the tenant's key) takes the
  Apply POST, the same worker rebuilds it.

The corrections are one box drawn on page 1. Printed per desk and page count: the POST's
answer time to its 303, the time from the POST until the rebuilt copy is held (the desk's
own state: held again, ``rebuilt_at`` set), the progress steps the desk showed, read every
0.25 s (``--poll``; the job page reloads itself every 2 s), and, offline, the same rebuild
run the old way (synchronously, what the POST used to take). Asserts nothing; figures vary
with the machine and its load.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fastapi.testclient import TestClient  # noqa: E402

from pressroom.corrections import Area, Corrections  # noqa: E402
from pressroom.desk.config import DeskConfig  # noqa: E402
from pressroom.desk.folder import FolderDesk  # noqa: E402
from pressroom.desk.gate import OneTimeGate  # noqa: E402
from pressroom.desk.routes import desk_app  # noqa: E402
from pressroom.deskport import DeskBackend, HeldItem, Viewer  # noqa: E402
from pressroom.engines.tesseract import TesseractEngine  # noqa: E402
from pressroom.offline.folder import Rebuild  # noqa: E402
from pressroom.settings import Settings  # noqa: E402
from pressroom.synth import draw_page, image_pdf, page_lines, text_pdf  # noqa: E402

TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
DRAWN = Corrections(manual=(Area(1, (72.0, 72.0, 200.0, 90.0)),))
VIEWER = Viewer(None, "offline", "offline")


def letter_lines(n: int) -> list[str]:
    return [
        f"Page {n}: a letter for Margaret Okafor about the payout of 3 May.",
        "Dear Margaret Okafor, thank you for your letter of last week.",
        *page_lines(n, 10),
        "Yours sincerely, Tobias Ferreira",
    ]


def document(path: Path, pages: int, kind: str) -> Path:
    if kind == "digital":
        return text_pdf([letter_lines(n) for n in range(1, pages + 1)], path)
    scans = [draw_page(letter_lines(n), dpi=300, font_pt=11).image for n in range(1, pages + 1)]
    return image_pdf(scans, path, 300)


def token_of(client: TestClient, url: str) -> str:
    found = TOKEN.search(client.get(url).text)
    assert found is not None, f"no form token on {url}"
    return found.group(1)


POLL_S = [0.25]  # how often the desk's state is read (--poll)


def watch(
    backend: DeskBackend, viewer: Viewer, item: str, since: float, limit_s: float = 900.0
) -> tuple[float, list[tuple[int, int]], HeldItem]:
    """Poll the desk's own state until the rebuilt copy is held: seconds from ``since``, the
    progress steps seen on the way, the item then."""
    seen: list[tuple[int, int]] = []
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        got = backend.detail(viewer, item).item
        if got.progress is not None and (not seen or seen[-1] != got.progress):
            seen.append(got.progress)
        if got.state == "review" and (got.rebuilt_at is not None or got.apply_failed):
            return time.perf_counter() - since, seen, got
        time.sleep(POLL_S[0])
    raise SystemExit(f"{item}: not held again within {limit_s} s")


def post_apply(client: TestClient, url: str, token: str) -> tuple[float, float]:
    """The Apply form's POST: its answer time, and when it was sent (perf_counter)."""
    sent = time.perf_counter()
    answer = client.post(
        f"{url}/apply",
        data={"csrf_token": token, "corrections": _json(DRAWN)},
        follow_redirects=False,
    )
    took = time.perf_counter() - sent
    assert answer.status_code == 303, (answer.status_code, answer.text[:300])
    return took, sent


def _json(c: Corrections) -> str:
    import json

    return json.dumps(c.as_json())


def offline(source: Path, root: Path, engine: TesseractEngine) -> dict[str, object]:
    from pressroom.offline.process import process_one
    from pressroom.redact.policy import parse_policy
    from pressroom.templates import resolve_template

    settings = dataclasses.replace(Settings.from_env(), scratch_dir=root / "scratch")
    out = root / "out"
    out.mkdir()
    start = time.perf_counter()
    outcome = process_one(
        source,
        out / "letter.pdf",
        resolve_template(None),
        None,
        policy=parse_policy("name", now=0),
        settings=settings,
        template_name=None,
        review_always=True,
    )
    held_s = time.perf_counter() - start
    assert outcome.exit_code == 3, outcome.line
    desk = FolderDesk(out / "review", settings, engine=engine)
    client = TestClient(desk_app(DeskConfig(desk, OneTimeGate("bench"), b"b" * 32)))
    assert client.get("/review/sign-in?token=bench", follow_redirects=False).status_code == 303
    url = "/review/jobs/letter"
    answer_s, sent = post_apply(client, url, token_of(client, url))
    rebuilt_s, seen, item = watch(desk, VIEWER, "letter", sent)
    # the same rebuild, the way the POST used to run it: in the request, to the end
    start = time.perf_counter()
    desk._rebuild("letter", source, _rebuild_of(desk), DRAWN, None)
    old_s = time.perf_counter() - start
    return {
        "first hold s": held_s,
        "POST answer s": answer_s,
        "until rebuilt s": rebuilt_s,
        "old synchronous POST s": old_s,
        "held as": item.reason_code,
        "progress seen": seen,
    }


def _rebuild_of(desk: FolderDesk) -> Rebuild:
    rebuild = Rebuild.parse(desk._note("letter"))
    assert rebuild is not None
    return rebuild


def service(source: Path, root: Path, engine: TesseractEngine) -> dict[str, object]:
    from pressroom.app import create_app
    from pressroom.deskstore import ServiceDesk
    from pressroom.jobs.model import JobState, Lane
    from pressroom.service import open_services
    from pressroom.worker.runner import JobRunner

    settings = Settings(data_dir=root / "data", scratch_dir=root / "scratch")
    settings.scratch_dir.mkdir()
    services = open_services(settings)
    key_id, key = services.store.tenancy.new_key("acme", now=services.clock())
    api = TestClient(create_app(services), client=("127.0.0.1", 50000))
    stop = threading.Event()

    def worker() -> None:
        runner = JobRunner(services, engine, "bench-worker")
        while not stop.is_set():
            if runner.run_next((Lane.INTERACTIVE, Lane.BULK)) is None:
                stop.wait(0.02)

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    try:
        start = time.perf_counter()
        sent = api.post(
            "/v1/jobs",
            headers={"Authorization": f"Bearer {key}"},
            files={"file": ("letter.pdf", source.read_bytes())},
            data={"redact": "name", "review": "always", "lane": "interactive"},
        )
        assert sent.status_code == 202, sent.text
        job_id = sent.json()["id"]
        until(lambda: _state(services, job_id) is JobState.REVIEW)
        held_s = time.perf_counter() - start
        browser = TestClient(create_app(services), client=("127.0.0.1", 50001))
        done = browser.post(
            "/review/sign-in",
            data={"key": key, "csrf_token": token_of(browser, "/review")},
            follow_redirects=False,
        )
        assert done.status_code == 303
        url = f"/review/jobs/{job_id}"
        answer_s, posted = post_apply(browser, url, token_of(browser, url))
        desk = ServiceDesk(services)
        rebuilt_s, seen, item = watch(desk, Viewer("acme", key_id, "tenant"), job_id, posted)
        return {
            "first hold s": held_s,
            "POST answer s": answer_s,
            "until rebuilt s": rebuilt_s,
            "held as": item.reason_code,
            "progress seen": seen,
        }
    finally:
        stop.set()
        thread.join(600)
        services.store.db.engine.dispose()


def _state(services: object, job_id: str) -> object:
    job = services.store.queue.get(job_id)  # type: ignore[attr-defined]
    return None if job is None else job.state


def until(ok: Callable[[], bool], limit_s: float = 900.0) -> None:
    end = time.monotonic() + limit_s
    while not ok():
        if time.monotonic() > end:
            raise SystemExit("timed out waiting for the worker")
        time.sleep(0.05)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--kind", choices=("scan", "digital"), default="scan")
    parser.add_argument("--desks", nargs="+", default=["offline", "service"])
    parser.add_argument("--poll", type=float, default=0.25, help="seconds between reads")
    args = parser.parse_args()
    POLL_S[0] = args.poll
    engine = TesseractEngine()
    rows: list[tuple[str, int, dict[str, object]]] = []
    for pages in args.pages:
        for name in args.desks:
            with tempfile.TemporaryDirectory(prefix="desk-apply-bench-") as tmp:
                root = Path(tmp)
                source = document(root / "letter.pdf", pages, args.kind)
                run = offline if name == "offline" else service
                figures = run(source, root, engine)
                rows.append((name, pages, figures))
                print(f"{name:8} {pages:2} page(s) {args.kind}: " + _line(figures), flush=True)
    print()
    print(f"| desk | pages ({args.kind}) | POST answer | until rebuilt held | old sync POST |")
    print("|---|---|---|---|---|")
    for name, pages, f in rows:
        old = f.get("old synchronous POST s")
        print(
            f"| {name} | {pages} | {float(f['POST answer s']) * 1000:.0f} ms | "  # type: ignore[arg-type]
            f"{float(f['until rebuilt s']):.1f} s | "  # type: ignore[arg-type]
            + (f"{float(old):.1f} s |" if old is not None else "— |")  # type: ignore[arg-type]
        )


def _line(figures: dict[str, object]) -> str:
    parts = []
    for k, v in figures.items():
        parts.append(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}")
    return ", ".join(parts)


if __name__ == "__main__":
    main()
