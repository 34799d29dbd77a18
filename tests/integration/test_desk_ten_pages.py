"""Both desks (the service's and the offline one) driven in Chromium through a ten-page held
document: the page is drawn at least 900 px wide at fit width in a 1280x900 window; no text of
the page's own (a class label, a rail entry, a toolbar) lies over any box; thumbnails jump to
their page; at 200 % a finding's words are read back by OCR from a screenshot of the zoomed
page; the source and the output are one view in one frame; one box removed and one drawn,
applied, approved, and the output downloaded under its label with neither name in it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.engines import pdfium
from pressroom.engines.tesseract import TesseractEngine
from pressroom.redact.leaks import find_leaks
from pressroom.redact.plan import normalise
from pressroom.redact.text import extracted_words
from pressroom.service import Services
from pressroom.synth import text_pdf
from tests.desk_browser import desk_browser, shot
from tests.desk_docs import FALSE_POSITIVE, LINES, MISSED, PERSON, texts, work
from tests.integration.test_desk_browser import REBUILD_MS, serve

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

__all__ = ["desk_browser"]  # the fixture, registered by the import
pytestmark = pytest.mark.integration
PRESSROOM = str(Path(sys.executable).with_name("pressroom"))
PAGES = 10
LABEL = "Payout batch 2026-12.pdf"
WINDOW = {"width": 1280, "height": 900}

# what stands over any box: every element with text of its own that is shown, clipped to the
# page's scrolling viewport for the boxes (a box scrolled out of view is not over anything)
OVERLAPS = """() => {
  const view = document.getElementById('viewport').getBoundingClientRect();
  const cut = (r) => ({l: Math.max(r.left, view.left), t: Math.max(r.top, view.top),
    r: Math.min(r.right, view.right), b: Math.min(r.bottom, view.bottom)});
  const boxes = [...document.querySelectorAll('section.page:not([hidden]) button.box')]
    .map((b) => cut(b.getBoundingClientRect())).filter((b) => b.r > b.l && b.b > b.t);
  const texts = [];
  for (const el of document.querySelectorAll('body *')) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    if (!own || el.closest('[hidden]')) continue;
    const s = getComputedStyle(el);
    if (s.visibility === 'hidden' || s.display === 'none') continue;
    const r = el.getBoundingClientRect();
    if (r.width && r.height) texts.push([el.tagName + '.' + el.className, r]);
  }
  const hits = [];
  for (const b of boxes) for (const [name, r] of texts)
    if (r.left < b.r && b.l < r.right && r.top < b.b && b.t < r.bottom) hits.push(name);
  return {boxes: boxes.length, hits};
}"""


def ten_pages(path: Path) -> Path:
    """Ten letter pages of born-digital text: each names the person and the building; page 1
    also carries the code word no recogniser knows (the box the reviewer draws)."""
    rest = [line for line in LINES if MISSED not in line]
    return text_pdf(
        [[f"Page {n} of the payout batch.", *(LINES if n == 1 else rest)] for n in range(1, 11)],
        path,
    )


def word_box(pdf: Path, page: int, word: str) -> tuple[float, float, float, float]:
    """Where ``word`` stands on page ``page`` (from 1), in points from the top left."""
    with pdfium.open_pdf(pdf) as doc:
        p = doc[page - 1]
        try:
            words = extracted_words(p, 1.0)
        finally:
            p.close()
    for w in words:
        if w.text.strip(".,") == word:
            return (w.box.x0, w.box.y0, w.box.x1, w.box.y1)
    raise AssertionError(f"no {word!r} on page {page}")


def ocr(png: Path) -> str:
    done = subprocess.run(
        ["tesseract", str(png), "-", "--psm", "6"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def visible_box(page: Page, n: int, phrase_box: tuple[float, float, float, float]) -> Any:
    """The finding box on page ``n`` over a phrase (by its place, never its text)."""
    x0, y0, x1, y1 = phrase_box
    for button in page.locator(f'[data-testid="sheet-{n}"] button.box').all():
        bx0, by0, bx1, by1 = (float(v) for v in (button.get_attribute("data-box") or "").split())
        if bx0 < x1 and x0 < bx1 and by0 < y1 and y0 < by1:
            return button
    raise AssertionError("no box over that phrase")


def counts(page: Page) -> dict[str, int]:
    """What the desk says will be burned: the header's count of each class, and each page's
    count in its rail heading and on its thumbnail."""
    return page.evaluate(
        """() => {
          const out = {};
          for (const el of document.querySelectorAll('[data-testid=counts] [data-count-kind]'))
            out[el.dataset.countKind] = parseInt(el.querySelector('b').textContent, 10);
          for (const el of document.querySelectorAll('[data-testid^="page-count-"]'))
            out['page-' + el.dataset.testid.slice(11)] = parseInt(el.textContent, 10);
          for (const el of document.querySelectorAll('[data-testid^="thumb-count-"]'))
            out['thumb-' + el.dataset.testid.slice(12)] = parseInt(el.textContent, 10);
          return out;
        }"""
    )


def drive(page: Page, item: str, shown: str, source: Path, name: str) -> None:
    """The reviewer's walk through the held document, from the list to Apply: ``shown`` is
    what the list names the job by (its label; offline, its file's name)."""
    row = page.locator(f'[data-testid="held-row"][data-item="{item}"]')
    assert shown in row.inner_text()
    shot(page, f"ten-{name}-1-list")
    row.get_by_test_id("job-link").click()
    page.wait_for_selector('[data-testid="sheet-1"] button.box')
    page.wait_for_load_state("load")
    sheet = page.get_by_test_id("sheet-1")
    fit = sheet.bounding_box()
    assert fit is not None and fit["width"] >= 900, fit
    assert page.evaluate("document.documentElement.scrollWidth") <= WINDOW["width"]
    found = page.evaluate(OVERLAPS)
    assert found["boxes"] >= 2 and found["hits"] == [], found
    shot(page, f"ten-{name}-2-fit")

    # fit page: the whole page inside the page's viewport
    page.get_by_test_id("fit-page").click()
    whole, view = sheet.bounding_box(), page.get_by_test_id("viewport").bounding_box()
    assert whole is not None and view is not None
    assert view["x"] <= whole["x"] and whole["x"] + whole["width"] <= view["x"] + view["width"]
    assert view["y"] <= whole["y"] and whole["y"] + whole["height"] <= view["y"] + view["height"]
    assert page.get_by_test_id("fit-page").get_attribute("aria-pressed") == "true"
    page.get_by_test_id("zoom-fit").click()

    # thumbnails: every page, with its count, each jumping to its page
    assert page.locator('[data-testid^="thumb-"][data-goto]').count() == PAGES
    page.get_by_test_id("thumb-7").click()
    assert page.get_by_test_id("page-counter").inner_text() == "page 7 of 10"
    assert page.get_by_test_id("page-7").is_visible()
    assert page.get_by_test_id("findings-7").is_visible()
    assert page.evaluate(OVERLAPS)["hits"] == []
    page.get_by_test_id("thumb-1").click()

    # 200 %: the picture is fetched at its drawn size and the finding's words read back
    for _ in range(6):
        if page.get_by_test_id("zoom-level").inner_text() == "200 %":
            break
        page.keyboard.press("+")
    assert page.get_by_test_id("zoom-level").inner_text() == "200 %"
    page.wait_for_function(
        """() => { const i = document.querySelector('[data-testid="sheet-1"] img');
        return i.complete && i.naturalWidth >= 1600; }"""
    )
    zoomed = sheet.bounding_box()
    assert zoomed is not None and abs(zoomed["width"] - 612 * 4 / 3 * 2) < 2
    person = visible_box(page, 1, word_box(source, 1, "Okafor"))
    person.scroll_into_view_if_needed()
    b = person.bounding_box()
    assert b is not None
    clip = {"x": b["x"] - 8, "y": b["y"] - 8, "width": b["width"] + 16, "height": b["height"] + 16}
    crop = Path(shot(page, f"ten-{name}-3-zoomed")).with_name(f"ten-{name}-finding.png")
    page.screenshot(path=str(crop), clip=clip)
    assert "Okafor" in ocr(crop)
    assert page.evaluate(OVERLAPS)["hits"] == []

    # the output in the same frame: the same box over the burned words
    page.get_by_test_id("show-output").click()
    page.wait_for_function(
        """() => { const i = document.querySelector('[data-testid="sheet-1"] img');
        return i.src.includes('redacted.png?frame=sheet') && i.complete && i.naturalWidth; }"""
    )
    page.screenshot(path=str(crop), clip=clip)
    assert "Okafor" not in ocr(crop)
    shot(page, f"ten-{name}-4-output")
    page.get_by_test_id("show-source").click()
    page.keyboard.press("0")  # fit width again
    assert page.get_by_test_id("zoom-level").inner_text() == "fit"

    # remove the false box, draw the missed word, apply
    false_box = visible_box(page, 1, word_box(source, 1, "Lovelace"))
    before = counts(page)
    false_box.click()
    assert false_box.get_attribute("aria-pressed") == "true"
    assert false_box.get_attribute("data-state") == "kept"
    state = "state-" + (false_box.get_attribute("data-testid") or "")[4:]
    assert page.get_by_test_id(state).inner_text() == "kept"
    # what will be burned is counted again at once: the header's name count, the page's rail
    # heading and its thumbnail each drop by one, the other pages' stay
    after = counts(page)
    assert after == {
        **before,
        "name": before["name"] - 1,
        "page-1": before["page-1"] - 1,
        "thumb-1": before["thumb-1"] - 1,
    }, (before, after)
    s = sheet.bounding_box()
    assert s is not None
    x0, y0, x1, y1 = word_box(source, 1, MISSED)
    k = s["width"] / 612
    page.mouse.move(s["x"] + (x0 - 2) * k, s["y"] + (y0 - 2) * k)
    page.mouse.down()
    page.mouse.move(s["x"] + (x1 + 2) * k, s["y"] + (y1 + 2) * k, steps=4)
    page.mouse.up()
    assert page.locator('[data-testid="sheet-1"] button.box[data-kind="manual"]').count() == 1
    shot(page, f"ten-{name}-5-corrected")
    page.get_by_test_id("apply").click()


@pytest.fixture
def window(desk_browser: Browser) -> Iterator[Page]:
    context = desk_browser.new_context(viewport=WINDOW, accept_downloads=True)  # type: ignore[arg-type]
    try:
        yield context.new_page()
    finally:
        context.close()


def check_published(out: Path) -> None:
    assert find_leaks(out, [PERSON, MISSED]) == []
    for reader, text in texts(out).items():
        assert normalise(FALSE_POSITIVE) in text, reader  # the removed box's words kept
        assert normalise(MISSED) not in text, reader
        assert normalise("Page 10 of the payout batch") in text, reader


def test_the_service_desk_through_ten_pages(
    services: Services, window: Page, tmp_path: Path
) -> None:
    source = ten_pages(tmp_path / "batch.pdf")
    _, key = services.store.tenancy.new_key("acme", now=services.clock(), role="reviewer")
    _, submitter = services.store.tenancy.new_key("acme", now=services.clock())
    api = TestClient(create_app(services), client=("127.0.0.1", 50000))
    sent = api.post(
        "/v1/jobs",
        headers={"Authorization": f"Bearer {submitter}"},
        files={"file": ("batch.pdf", source.read_bytes())},
        data={"redact": "name", "review": "always", "label": LABEL},
    )
    assert sent.status_code == 202, sent.text
    job_id = sent.json()["id"]
    engine = TesseractEngine()
    work(services, engine)
    for url in serve(create_app(services)):
        page = window
        page.goto(f"{url}/review")
        page.get_by_label("API key").fill(key)  # a reviewer's key
        page.get_by_role("button", name="Sign in").click()
        drive(page, job_id, LABEL, source, "service")
        page.wait_for_selector('[data-testid="rebuilding"]')
        work(services, engine)
        # the page reloads itself while it rebuilds: wait for its own "rebuilt" notice (a
        # navigation of ours would race its reload)
        page.get_by_test_id("rebuilt").wait_for(timeout=REBUILD_MS)
        assert "CORRECTED" in page.get_by_test_id("reason").inner_text()
        page.get_by_test_id("approve").click()
        page.get_by_test_id("confirm-approve").click()
        link = page.get_by_test_id("download")
        link.wait_for()
        with page.expect_download() as download:
            link.click()
        assert download.value.suggested_filename == LABEL
        out = tmp_path / "published.pdf"
        download.value.save_as(out)
        check_published(out)


def test_the_offline_desk_through_ten_pages(window: Page, tmp_path: Path) -> None:
    source = ten_pages(tmp_path / "batch.pdf")
    outdir = tmp_path / "out"
    done = subprocess.run(
        [PRESSROOM, "process", str(source), "-o", str(outdir), "--redact=name", "--review=always"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 3, done.stderr
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
        link = first[0].split(": ", 1)[1].strip()
        page = window
        page.goto(link)
        drive(page, "batch", "batch", source, "offline")
        # rebuilt in the desk's own process, in the background: the page reloads itself until
        # its own "rebuilt" notice comes
        page.get_by_test_id("rebuilt").wait_for(timeout=REBUILD_MS)
        assert "CORRECTED" in page.get_by_test_id("reason").inner_text()
        page.get_by_test_id("approve").click()
        page.get_by_test_id("confirm-approve").click()
        assert "batch.pdf" in page.get_by_test_id("outcome").inner_text()
        shot(page, "ten-offline-6-approved")
    finally:
        desk.send_signal(signal.SIGINT)
        assert desk.wait(30) == 0
    check_published(outdir / "batch.pdf")
