"""The reviewer's desk in a real browser (Playwright driving Debian's Chromium) against the real
service app, with real Tesseract doing the work: sign in, open a held job, remove a false box,
draw a missed one, apply, approve, download — and the published PDF read back by every parser.
Screenshots of each step are saved as test artifacts (tests/artifacts/ or
$PRESSROOM_TEST_ARTIFACTS)."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import uvicorn
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.desk.config import DeskConfig
from pressroom.desk.gate import KeyGate
from pressroom.engines.tesseract import TesseractEngine
from pressroom.jobs.model import JobState
from pressroom.redact.leaks import find_leaks
from pressroom.redact.plan import normalise
from pressroom.service import Services
from tests.conftest import FakeClock
from tests.desk_browser import desk_browser, desk_page, shot
from tests.desk_docs import FALSE_POSITIVE, MISSED, PERSON, DeskDoc, desk_scan, grown, texts, work
from tests.integration.test_desk_web import SECRET, FakeDesk, _detail

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

__all__ = ["desk_browser", "desk_page"]  # fixtures, registered by the import
pytestmark = pytest.mark.integration
PRESSROOM = str(Path(sys.executable).with_name("pressroom"))
# how long a rebuild of the offline desk (real Tesseract) may take before a test gives up
REBUILD_MS = 180_000


@pytest.fixture
def engine() -> TesseractEngine:
    return TesseractEngine()


@pytest.fixture
def live(services: Services) -> Iterator[str]:
    """The service app on a loopback port of its own."""
    yield from serve(create_app(services))


def serve(app: Any) -> Iterator[str]:
    """``app`` on a loopback port of its own, served by uvicorn in a thread."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(500):
            if server.started:
                break
            threading.Event().wait(0.01)
        assert server.started
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def on_page(sheet: Locator, doc: DeskDoc, x: float, y: float) -> tuple[float, float]:
    """A point of the page (in points) as a point of the browser's viewport."""
    box = sheet.bounding_box()
    assert box is not None
    return box["x"] + x * box["width"] / doc.width_pt, box["y"] + y * box["height"] / doc.height_pt


def box_over(page: Page, doc: DeskDoc, phrase: str) -> Locator:
    """The finding box drawn over ``phrase`` on page 1 (by its place, never its text)."""
    x0, y0, x1, y1 = doc.boxes[phrase]
    for button in page.locator('[data-testid="sheet-1"] button.box').all():
        bx0, by0, bx1, by1 = (float(v) for v in (button.get_attribute("data-box") or "").split())
        if bx0 < x1 and x0 < bx1 and by0 < y1 and y0 < by1:
            return button
    raise AssertionError(f"no box drawn over the {phrase!r} line")


def points(attr: str | None) -> tuple[float, float, float, float]:
    """A box attribute ("x0 y0 x1 y1", points) as numbers."""
    x0, y0, x1, y1 = (float(v) for v in (attr or "").split())
    return (x0, y0, x1, y1)


def holds(outer: tuple[float, ...], inner: tuple[float, ...]) -> bool:
    return (
        outer[0] <= inner[0]
        and outer[1] <= inner[1]
        and outer[2] >= inner[2]
        and outer[3] >= inner[3]
    )


def test_a_reviewer_corrects_applies_approves_and_downloads_in_the_browser(
    live: str, services: Services, engine: TesseractEngine, desk_page: Page, tmp_path: Path
) -> None:
    page = desk_page
    doc = desk_scan(tmp_path / "page.png")
    key_id, key = services.store.tenancy.new_key("acme", now=services.clock())
    api = TestClient(create_app(services), client=("127.0.0.1", 50000))
    sent = api.post(
        "/v1/jobs",
        headers={"Authorization": f"Bearer {key}"},
        files={"file": ("page.png", doc.path.read_bytes())},
        data={"redact": "name", "review": "always"},
    )
    assert sent.status_code == 202, sent.text
    job_id = sent.json()["id"]
    work(services, engine)

    # sign in
    page.goto(f"{live}/review")
    shot(page, "desk-1-sign-in")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    row = page.locator(f'[data-testid="held-row"][data-item="{job_id}"]')
    assert "REVIEW_REQUESTED" in row.inner_text()
    shot(page, "desk-2-held-list")

    # open the job: the source's text is never in the page, only boxes and classes
    row.get_by_test_id("job-link").click()
    page.wait_for_selector('[data-testid="sheet-1"] button.box')
    html = page.content()
    for word in ("Okafor", "Lovelace", MISSED, "codeword"):
        assert word not in html
    page.locator('[data-testid="sheet-1"] img').evaluate("img => img.decode()")
    shot(page, "desk-3-job")

    # remove the false box: it says kept
    false_box = box_over(page, doc, FALSE_POSITIVE)
    false_box.click()
    assert false_box.get_attribute("aria-pressed") == "true"
    # draw the missed one
    sheet = page.get_by_test_id("sheet-1")
    x0, y0, x1, y1 = grown(doc.boxes[MISSED], 2.0)
    start, end = on_page(sheet, doc, x0, y0), on_page(sheet, doc, x1, y1)
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
    page.mouse.move(*end)
    page.mouse.up()
    assert page.locator('[data-testid="sheet-1"] button.box[data-kind="manual"]').count() == 1
    shot(page, "desk-4-corrected")

    page.get_by_test_id("apply").click()
    page.wait_for_selector('[data-testid="rebuilding"]')
    shot(page, "desk-5-applying")
    work(services, engine)  # the interactive lane's worker rebuilds it
    # the page reloads itself while it rebuilds: its own "rebuilt" notice, never a navigation
    # of ours (it would race the page's reload)
    page.get_by_test_id("rebuilt").wait_for(timeout=REBUILD_MS)
    assert "CORRECTED" in page.get_by_test_id("reason").inner_text()
    page.get_by_test_id("show-output").click()  # the rebuilt output, in the same frame
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"sheet-1\"] img').src.includes('redacted')"
    )
    page.locator('[data-testid="sheet-1"] img').evaluate("img => img.decode()")
    shot(page, "desk-6-rebuilt")

    page.keyboard.press("Shift+A")  # approve from the keyboard: first the confirmation step
    page.get_by_test_id("confirm-what").wait_for()
    assert job_id in page.get_by_test_id("confirm-what").inner_text()
    shot(page, "desk-7-confirm")
    page.get_by_test_id("confirm-approve").click()
    link = page.get_by_test_id("download")
    link.wait_for()
    shot(page, "desk-8-approved")
    with page.expect_download() as download:
        link.click()
    out = tmp_path / "published.pdf"
    download.value.save_as(out)

    job = services.store.queue.get(job_id)
    assert job is not None and job.state is JobState.COMPLETE
    assert [(d.action, d.key_id) for d in job.decisions] == [
        ("apply", key_id),
        ("approve", key_id),
    ]
    assert find_leaks(out, [PERSON, MISSED]) == []
    for reader, text in texts(out).items():
        assert normalise(FALSE_POSITIVE) in text, reader  # the removed box's words searchable
        assert normalise(MISSED) not in text, reader  # the manual box's word gone
        assert normalise("Okafor") not in text, reader


@pytest.fixture
def offline_desk(tmp_path: Path) -> Iterator[tuple[str, DeskDoc, Path]]:
    """``pressroom process --review always`` held the page; ``pressroom review`` serves the
    folder: the one-time link it printed, the document, OUTDIR."""
    doc = desk_scan(tmp_path / "page.png")
    outdir = tmp_path / "out"
    done = subprocess.run(
        [
            PRESSROOM,
            "process",
            str(doc.path),
            "-o",
            str(outdir),
            "--redact=name",
            "--review=always",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 3 and "REVIEW_REQUESTED" in done.stderr, done.stderr
    # the desk's output to a file: a pipe nobody reads fills up and stops the desk mid-test
    printed = tmp_path / "desk.out"
    with printed.open("w") as sink:
        desk = subprocess.Popen(
            [PRESSROOM, "review", str(outdir / "review")], stdout=sink, stderr=subprocess.STDOUT
        )
    try:
        for _ in range(600):
            first = printed.read_text().partition("\n")
            if first[1]:
                break
            time.sleep(0.05)
        assert first[0].startswith("Review desk: http://127.0.0.1:"), first[0]
        yield first[0].split(": ", 1)[1].strip(), doc, outdir
    finally:
        desk.send_signal(signal.SIGINT)
        assert desk.wait(30) == 0


def test_the_offline_desk_signs_in_once_and_approve_writes_the_file(
    offline_desk: tuple[str, DeskDoc, Path], desk_page: Page
) -> None:
    link, doc, outdir = offline_desk
    page = desk_page
    page.goto(link)
    row = page.locator('[data-testid="held-row"][data-item="page"]')
    assert "REVIEW_REQUESTED" in row.inner_text()
    shot(page, "offline-1-held-list")
    row.get_by_test_id("job-link").click()
    page.wait_for_selector('[data-testid="sheet-1"] button.box')
    # the sheet's picture decoded before a box is drawn on it (its size places the drag), as
    # in the service desk's test: CI once drew before it and the drag made no box
    page.locator('[data-testid="sheet-1"] img').evaluate("img => img.decode()")
    false_box = box_over(page, doc, FALSE_POSITIVE)
    false_box.click()
    assert false_box.get_attribute("aria-pressed") == "true"
    sheet = page.get_by_test_id("sheet-1")
    x0, y0, x1, y1 = grown(doc.boxes[MISSED], 2.0)
    start, end = on_page(sheet, doc, x0, y0), on_page(sheet, doc, x1, y1)
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move((start[0] + end[0]) / 2, (start[1] + end[1]) / 2)
    page.mouse.move(*end)
    page.mouse.up()
    # the drawn box is on the sheet before the corrections go: a drag that made none would
    # send "0 drawn" and publish the missed name as the reviewer never marked it
    assert page.locator('[data-testid="sheet-1"] button.box[data-kind="manual"]').count() == 1
    shot(page, "offline-2-corrected")
    page.get_by_test_id("apply").click()  # rebuilt in the desk's own process, in the background
    # the page shows the rebuild and reloads itself until its own "rebuilt" notice comes
    page.get_by_test_id("rebuilt").wait_for(timeout=REBUILD_MS)
    assert "CORRECTED" in page.get_by_test_id("reason").inner_text()
    shot(page, "offline-3-rebuilt")
    page.get_by_test_id("approve").click()
    page.get_by_test_id("confirm-approve").click()  # the step that names what is published
    assert "page.pdf" in page.get_by_test_id("outcome").inner_text()
    shot(page, "offline-4-approved")
    out = outdir / "page.pdf"
    assert out.is_file() and not (outdir / "review" / "page.pdf").exists()
    assert find_leaks(out, [PERSON, MISSED]) == []
    for reader, text in texts(out).items():
        assert normalise(FALSE_POSITIVE) in text, reader
        assert normalise(MISSED) not in text, reader
    # the link was spent on the first visit: a second browser cannot use it
    other = page.context.browser
    assert other is not None
    again = other.new_context().new_page()
    assert again.goto(link).status == 403  # type: ignore[union-attr]
    again.context.close()


def test_the_desk_is_used_from_the_keyboard_at_1280x800(
    services: Services, clock: FakeClock, desk_page: Page
) -> None:
    """Two held pages (a scripted backend): n and p turn pages, j and k walk the findings across
    pages and Space on one presses it (the counts follow), a click on a finding only finds its
    box, Tab reaches a box and Space removes it, Shift+A approves; nothing scrolls sideways at
    1280x800."""
    fake = FakeDesk([_detail("j_acme1", "acme", now=clock())])
    app = create_app(services)
    app.state.desk = DeskConfig(fake, KeyGate(services), SECRET, services.clock)
    _, key = services.store.tenancy.new_key("acme", now=services.clock())
    for url in serve(app):
        page = desk_page
        page.goto(f"{url}/review")
        page.get_by_label("API key").fill(key)
        page.keyboard.press("Enter")
        page.get_by_test_id("job-link").click()
        page.wait_for_load_state("load")  # desk.js is deferred: its keys come with the load
        counter = page.get_by_test_id("page-counter")
        assert counter.inner_text() == "page 1 of 2"
        page.keyboard.press("n")
        assert counter.inner_text() == "page 2 of 2"
        assert page.get_by_test_id("page-2").is_visible()
        assert not page.get_by_test_id("page-1").is_visible()
        page.keyboard.press("p")
        assert counter.inner_text() == "page 1 of 2"
        # j / k walk the findings in the rail, across pages, each box flashed where it stands
        focused = "e => e === document.activeElement"
        page.keyboard.press("j")
        assert page.get_by_test_id("finding-1-1").evaluate(focused)
        page.wait_for_selector('[data-testid="box-1-1"].flash')
        page.keyboard.press("j")
        page.keyboard.press("j")
        assert counter.inner_text() == "page 2 of 2"
        assert page.get_by_test_id("finding-2-1").evaluate(focused)
        page.keyboard.press("k")
        page.keyboard.press("k")
        assert counter.inner_text() == "page 1 of 2"
        assert page.get_by_test_id("finding-1-1").evaluate(focused)
        # Space on the finding presses it: kept, and one fewer to burn on the page and in all
        first = page.get_by_test_id("box-1-1")
        burn = page.get_by_test_id("page-count-1")
        thumb = page.get_by_test_id("thumb-count-1")
        name = page.locator('[data-testid="counts"] [data-count-kind="name"] b')
        assert (burn.inner_text(), thumb.inner_text(), name.inner_text()) == ("1", "1", "1")
        page.keyboard.press("Space")
        assert first.get_attribute("aria-pressed") == "true"
        assert first.get_attribute("data-state") == "kept"
        assert page.get_by_test_id("state-1-1").inner_text() == "kept"
        assert (burn.inner_text(), thumb.inner_text(), name.inner_text()) == ("0", "0", "0")
        page.keyboard.press("Space")  # again: burned again
        assert first.get_attribute("data-state") == "burned"
        assert (burn.inner_text(), thumb.inner_text(), name.inner_text()) == ("1", "1", "1")
        # a click on the entry finds its box and presses nothing
        page.get_by_test_id("finding-1-1").click()
        page.wait_for_selector('[data-testid="box-1-1"].flash')
        assert first.get_attribute("data-state") == "burned"
        page.evaluate("document.activeElement.blur()")
        # Tab to the first box on page 1 and remove it with Space
        for _ in range(40):
            page.keyboard.press("Tab")
            if first.evaluate("b => b === document.activeElement"):
                break
        else:
            raise AssertionError("Tab never reached the first box")
        page.keyboard.press("Space")
        assert first.get_attribute("aria-pressed") == "true"
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1280
        shot(page, "keyboard-1-box-removed")
        page.keyboard.press("Shift+A")
        # the confirmation step says a change was made and not applied; a leak hold asks for
        # its acknowledgement (Space ticks it); then Enter publishes
        page.get_by_test_id("unapplied").wait_for()
        assert fake.changes == []
        page.get_by_test_id("acknowledge").press("Space")
        page.get_by_test_id("confirm-approve").press("Enter")
        page.get_by_test_id("outcome").wait_for()
        assert fake.changes == [("approve", "j_acme1", None)]


def test_nested_boxes_stay_apart_in_chromium_and_the_inner_one_is_burned(
    live: str, services: Services, desk_page: Page, tmp_path: Path
) -> None:
    """An address finding holding another, at the desk: two boxes, each its own button; the
    reviewer removes the outer one only; the inner stays shown active, Apply burns it, and the
    held reason says so before anything is published."""
    from corpora.documents.kinds import document
    from corpora.documents.render import digital_pdf
    from tests.echo_ocr import EchoOcrEngine

    page = desk_page
    source = digital_pdf(document("form", "dev", 0), tmp_path / "form.pdf")
    engine = EchoOcrEngine(source)
    key_id, key = services.store.tenancy.new_key("acme", now=services.clock())
    api = TestClient(create_app(services), client=("127.0.0.1", 50000))
    sent = api.post(
        "/v1/jobs",
        headers={"Authorization": f"Bearer {key}"},
        files={"file": ("form.pdf", source.read_bytes())},
        data={"redact": "address", "review": "always", "lane": "interactive"},
    )
    job_id = sent.json()["id"]
    work(services, engine)
    page.goto(f"{live}/review")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.goto(f"{live}/review/jobs/{job_id}")
    page.wait_for_selector('[data-testid="sheet-1"] button.box')
    # each finding's line boxes, and its whole box (what a removed correction sends)
    lines: dict[str, list[Locator]] = {}
    for b in page.locator('[data-testid="sheet-1"] button.box[data-origin="finding"]').all():
        lines.setdefault(b.get_attribute("data-finding") or "", []).append(b)
    whole = {f: points(bs[0].get_attribute("data-removes")) for f, bs in lines.items()}
    pairs = [
        (o, i) for o in whole for i in whole if whole[o] != whole[i] and holds(whole[o], whole[i])
    ]
    assert pairs, "no nested findings on the form"
    outer, inner = pairs[0]
    assert all(b.is_visible() for b in lines[outer] + lines[inner])
    # one group: the outer finding drawn as any box, the inner one as a thin edge inside it
    group = lines[outer][0].get_attribute("data-group")
    assert group and lines[inner][0].get_attribute("data-group") == group
    assert "inner" in (lines[inner][0].get_attribute("class") or "").split()
    shot(page, "nested-1-both-boxes")
    # the outer finding removed: by a click on a line only it has, else from the keyboard (where
    # the two share a line, the inner one's box takes the click)
    shared = {b.get_attribute("data-box") for b in lines[inner]}
    own = [b for b in lines[outer] if b.get_attribute("data-box") not in shared]
    if own:
        own[0].click()
    else:
        lines[outer][0].focus()
        page.keyboard.press("Space")
    assert all(b.get_attribute("aria-pressed") == "true" for b in lines[outer])
    assert all(b.get_attribute("data-state") == "kept" for b in lines[outer])
    # the inner one is still shown active, every line of it
    assert all(b.get_attribute("aria-pressed") == "false" for b in lines[inner])
    inner_boxes = [points(b.get_attribute("data-box")) for b in lines[inner]]
    shot(page, "nested-2-outer-removed")
    page.get_by_test_id("apply").click()
    page.wait_for_selector('[data-testid="rebuilding"]')
    work(services, engine)
    page.get_by_test_id("rebuilt").wait_for(timeout=REBUILD_MS)
    reason = page.get_by_test_id("reason").inner_text()
    assert "CORRECTED" in reason and "page 1: address" in reason, reason
    assert "every check passed" not in reason
    shot(page, "nested-3-rebuilt")
    page.get_by_test_id("approve").click()
    page.get_by_test_id("confirm-approve").click()
    page.get_by_test_id("download").wait_for()
    job = services.store.queue.get(job_id)
    assert job is not None and job.state is JobState.COMPLETE
    got = api.get(page.get_by_test_id("download").get_attribute("href") or "")
    out = tmp_path / "published.pdf"
    out.write_bytes(got.content)
    # the inner finding's words (each of its lines) are not in the published text
    from pressroom.engines import pdfium
    from pressroom.redact.text import extracted_words

    with pdfium.open_pdf(out) as doc:
        p = doc[0]
        try:
            words = extracted_words(p, 1.0)
        finally:
            p.close()
    assert not [
        w
        for w in words
        for x0, y0, x1, y1 in inner_boxes
        if x0 <= (w.box.x0 + w.box.x1) / 2 <= x1 and y0 <= (w.box.y0 + w.box.y1) / 2 <= y1
    ]
    assert key_id in {d.key_id for d in job.decisions}
