"""The desk an editor trusts at a glance (issue 42, "Must show"): both desks (the service's over
``create_app`` and the offline one over ``desk_app(DeskConfig(FolderDesk(...)))``) in
Chromium at 1280x800, 1920x1080 and 2560x1440, on one ten-page held document with nested
address findings, a name wrapped over two lines, a doubtful name and a leak hold.

Real and built (``tests.desk_glance_docs``): the document went through the real redaction
path once (the service's API, a worker, real Tesseract, ``review=always``), with an operator's
recogniser that half believes one name; its held copy and review sheet are that run's. The
leak hold is built: the job's row (service) and the held note (offline, written by
``folder.hold``) are rewritten to ``REDACTION_LEAK`` with one ``rechecked`` box.

Checked in the DOM, at each size and on both desks: every box carries its page, class, place,
state and finding; a wrapped name is one box per line, each over its words only (PDFium's word
boxes); findings whose line boxes overlap share a group, and only they; every box's edge lies
a little outside its words, never on them; no label or control lies over a box, and the point
at a box's centre is that box (or one of its group); a whole page lies inside the window at
fit page; side by side shows the source and the output beside each other inside the page's
viewport, never under the rail (and may be chosen at 1920x1080); a finding toggled is kept in
each of its line boxes and the header, rail and thumbnail counts drop by one; a kept and a
burned box differ in fill and edge on screen at 100 % and 200 %. Screenshots go to the test
artifacts; with ``PRESSROOM_DOC_IMAGES=1`` a chosen few also to
``docs/images/desk-glance-*.png``.
"""

from __future__ import annotations

import io
import os
import re
import secrets
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from PIL import Image

from pressroom.app import create_app
from pressroom.desk.config import DeskConfig
from pressroom.desk.folder import FolderDesk
from pressroom.desk.gate import OneTimeGate
from pressroom.desk.routes import desk_app
from pressroom.engines.tesseract import TesseractEngine
from pressroom.service import Services, open_services
from tests.desk_browser import desk_browser, shot
from tests.desk_glance_docs import (
    STEM,
    WRAPPED,
    Box,
    ServiceHeld,
    glance_pdf,
    glance_settings,
    held_in_folder,
    held_in_service,
    meets,
    page_words,
    word_box,
)
from tests.integration.test_desk_browser import serve
from tests.integration.test_desk_ten_pages import OVERLAPS

if TYPE_CHECKING:
    from playwright.sync_api import Browser, FloatRect, Locator, Page, ViewportSize

__all__ = ["desk_browser"]  # the fixture, registered by the import
pytestmark = pytest.mark.integration
SIZES: list[ViewportSize] = [
    {"width": 1280, "height": 800},
    {"width": 1920, "height": 1080},
    {"width": 2560, "height": 1440},
]
SIZE_IDS = [f"{s['width']}x{s['height']}" for s in SIZES]
STATES = {"burned", "kept", "doubt", "leak"}
PAD_PX = 8  # how far outside its words a box may be drawn ("a few pixels")
DOCS = Path(__file__).resolve().parents[2] / "docs" / "images"


@dataclass(frozen=True, slots=True)
class Held:
    services: Services
    source: Path
    service: ServiceHeld
    folder: Path


@pytest.fixture(scope="module")
def held(tmp_path_factory: pytest.TempPathFactory, engine: TesseractEngine) -> Iterator[Held]:
    """The document held once by the service (real run, leak hold built) and the same held
    copy and sheet in an offline review folder."""
    root = tmp_path_factory.mktemp("glance")
    services = open_services(glance_settings(root))
    try:
        source = glance_pdf(root / "batch.pdf")
        service = held_in_service(services, source, engine)
        folder = held_in_folder(services, service, source, root / "out" / "review")
        yield Held(services, source, service, folder)
    finally:
        services.store.db.engine.dispose()


@dataclass(frozen=True, slots=True)
class Desk:
    name: str  # service | offline
    url: str  # the job page
    page: Page


@pytest.fixture(scope="module", params=["service", "offline"])
def desk(request: pytest.FixtureRequest, held: Held, desk_browser: Browser) -> Iterator[Desk]:
    """One desk served on loopback, signed in once; one browser page reused at each size."""
    if request.param == "service":
        app = create_app(held.services)
        item = held.service.job_id
    else:
        token = secrets.token_urlsafe(24)
        backend = FolderDesk(held.folder, held.services.settings)
        app = desk_app(DeskConfig(backend, OneTimeGate(token), secrets.token_bytes(32)))
        item = STEM
    context = desk_browser.new_context(viewport=SIZES[0])
    try:
        with contextmanager(serve)(app) as url:
            page = context.new_page()
            if request.param == "service":
                page.goto(f"{url}/review")
                page.get_by_label("API key").fill(held.service.key)
                page.get_by_role("button", name="Sign in").click()
            else:
                page.goto(f"{url}/review/sign-in?token={token}")
            page.wait_for_selector(f'[data-testid="held-row"][data-item="{item}"]')
            yield Desk(request.param, f"{url}/review/jobs/{item}", page)
    finally:
        context.close()


# --- helpers ---------------------------------------------------------------------------------


def settled(page: Page) -> None:
    """Two animation frames: the desk's script has laid the page out after a click."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def tag_of(desk: Desk, size: ViewportSize) -> str:
    return f"{desk.name}-{size['width']}x{size['height']}"


def open_job(desk: Desk, size: ViewportSize) -> Page:
    """The job page afresh (no toggles left from before) in a window of ``size``, its first
    page's picture drawn and its boxes placed."""
    page = desk.page
    page.set_viewport_size(size)
    page.goto(desk.url)
    page.wait_for_selector('[data-testid="sheet-1"] button.box')
    page.wait_for_function(
        """() => { const s = document.querySelector('[data-testid="sheet-1"]');
        const i = s.querySelector('img'); const b = s.querySelector('button.box');
        return i.complete && i.naturalWidth > 0 && b.getBoundingClientRect().width > 0; }"""
    )
    settled(page)
    return page


def snap(page: Page, name: str, *, doc: bool = False) -> Path:
    """A screenshot in the test artifacts; with PRESSROOM_DOC_IMAGES=1 and ``doc``, the
    window as it stands also as ``docs/images/desk-glance-NAME.png``."""
    path = shot(page, f"desk-glance-{name}")
    if doc and os.environ.get("PRESSROOM_DOC_IMAGES") == "1":
        DOCS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS / f"desk-glance-{name}.png"))
    return path


def rect(loc: Locator) -> FloatRect:
    r = loc.bounding_box()
    assert r is not None, "not drawn"
    return r


def page_rect(page: Page, n: int, box: Box) -> FloatRect:
    """A box of page ``n`` (points) as a rectangle of the window (CSS pixels)."""
    sheet = page.get_by_test_id(f"sheet-{n}")
    s = rect(sheet)
    width_pt = float(sheet.get_attribute("data-width-pt") or 612)
    k = s["width"] / width_pt
    x0, y0, x1, y1 = box
    return {
        "x": s["x"] + x0 * k,
        "y": s["y"] + y0 * k,
        "width": (x1 - x0) * k,
        "height": (y1 - y0) * k,
    }


def floats(raw: str | None) -> Box:
    x0, y0, x1, y1 = (float(v) for v in (raw or "").split())
    return (x0, y0, x1, y1)


def inside(inner: FloatRect, outer: FloatRect, slack: float = 0.5) -> bool:
    return (
        inner["x"] >= outer["x"] - slack
        and inner["y"] >= outer["y"] - slack
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack
    )


def apart(a: FloatRect, b: FloatRect) -> bool:
    """No area in common."""
    return (
        a["x"] + a["width"] <= b["x"] + 0.5
        or b["x"] + b["width"] <= a["x"] + 0.5
        or a["y"] + a["height"] <= b["y"] + 0.5
        or b["y"] + b["height"] <= a["y"] + 0.5
    )


def wrapped_finding(page: Page, source: Path) -> str:
    """The ``data-finding`` of the wrapped name: the finding of two line boxes on page 1, one
    over the given name (end of a line) and one over the surname (start of the next)."""
    given, surname = (word_box(source, 1, w) for w in WRAPPED)
    by_finding: dict[str, list[Box]] = {}
    for b in page.locator('[data-testid="sheet-1"] button.box').all():
        by_finding.setdefault(b.get_attribute("data-finding") or "", []).append(
            floats(b.get_attribute("data-box"))
        )
    for finding, boxes in by_finding.items():
        if len(boxes) == 2 and meets(boxes[0], given) and meets(boxes[1], surname):
            return finding
    raise AssertionError(f"no finding of two line boxes over the wrapped name: {by_finding}")


def groups_of(shown: list[list[str]]) -> dict[str, str]:
    """For ``[finding, group, box]`` of each box of a page: what each finding's group should
    be by the boxes' overlaps, named as the page names it (empty for a finding alone)."""
    boxes: dict[str, list[Box]] = {}
    named: dict[str, str] = {}
    for finding, group, box in shown:
        boxes.setdefault(finding, []).append(floats(box))
        named[finding] = group
    parent = {f: f for f in boxes}

    def root(f: str) -> str:
        while parent[f] != f:
            f = parent[f]
        return f

    ids = list(boxes)
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            if any(meets(p, q) for p in boxes[a] for q in boxes[b]):
                parent[root(b)] = root(a)
    together: dict[str, list[str]] = {}
    for f in ids:
        together.setdefault(root(f), []).append(f)
    out: dict[str, str] = {}
    for members in together.values():
        # the name the page gives the first member: every member must carry it, and no
        # finding outside (a name missing or used twice can match nothing shown)
        name = (named[members[0]] or "(none)") if len(members) > 1 else ""
        if name and name in out.values():
            name += " (twice)"
        out.update({f: name for f in members})
    return out


def over_other_words(page: Page, source: Path) -> list[tuple[str, str]]:
    """The boxes of page 1 whose drawn rectangle (edge included) lies over a word that is not
    theirs (a word of the next line, or beside them): box test id and that word's place."""
    sheet = page.get_by_test_id("sheet-1")
    s = rect(sheet)
    k = s["width"] / float(sheet.get_attribute("data-width-pt") or 612)
    words = [w.box for w in page_words(source, 1)]
    drawn = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="sheet-1"] [data-box]')].map((b) => {
          const r = b.getBoundingClientRect();
          return [b.dataset.testid, b.dataset.box, [r.left, r.top, r.right, r.bottom]]; })"""
    )
    out = []
    for testid, box, (left, top, right, bottom) in drawn:
        mine = floats(box)
        for w in words:
            if meets(w, mine):
                continue  # its own words: that the edge is outside them is checked apart
            x0, y0, x1, y1 = (
                s["x"] + w[0] * k,
                s["y"] + w[1] * k,
                s["x"] + w[2] * k,
                s["y"] + w[3] * k,
            )
            if left < x1 - 0.5 and x0 + 0.5 < right and top < y1 - 0.5 and y0 + 0.5 < bottom:
                out.append((testid, " ".join(f"{v:.1f}" for v in w)))
    return out


def line_boxes(page: Page, finding: str) -> list[Locator]:
    return page.locator(f'[data-testid="sheet-1"] button.box[data-finding="{finding}"]').all()


def numbers(text: str) -> list[int]:
    return [int(v) for v in re.findall(r"\d+", text)]


def one_less(before: str, after: str) -> bool:
    """``after`` says what ``before`` said with one of its numbers lower by one."""
    a, b = numbers(before), numbers(after)
    if len(a) != len(b):
        return False
    return sorted(x - y for x, y in zip(a, b, strict=True)) == [0] * (len(a) - 1) + [1]


COUNTS = {
    "header": '[data-testid="counts"] [data-count-kind="name"]',
    "rail": '[data-testid="page-count-1"]',
    "thumb": '[data-testid="thumb-count-1"]',
}


def counts(page: Page) -> dict[str, str]:
    return {where: page.locator(css).first.inner_text() for where, css in COUNTS.items()}


def zoom_to(page: Page, percent: int) -> None:
    """The zoom buttons pressed until the desk says ``percent`` %."""
    for _ in range(16):
        level = page.get_by_test_id("zoom-level").inner_text()
        now = numbers(level)
        if now == [percent]:
            settled(page)
            return
        page.get_by_test_id("zoom-in" if not now or now[0] < percent else "zoom-out").click()
    raise AssertionError(f"the zoom never read {percent} % (it reads {level!r})")


# for each box of page 1: how far the inner side of its edge stands from its words (data-box,
# mapped onto the drawn sheet), left, top, right, bottom, in CSS pixels
EDGE_GAPS = """() => {
  const sheet = document.querySelector('[data-testid="sheet-1"]');
  const s = sheet.getBoundingClientRect();
  const k = s.width / parseFloat(sheet.dataset.widthPt || '612');
  return [...sheet.querySelectorAll('button.box')].map((b) => {
    const [x0, y0, x1, y1] = b.dataset.box.split(' ').map(parseFloat);
    const r = b.getBoundingClientRect(), c = getComputedStyle(b);
    const w = (side) => parseFloat(c['border' + side + 'Width']) || 0;
    return [b.dataset.testid, b.className, [
      s.left + x0 * k - (r.left + w('Left')), s.top + y0 * k - (r.top + w('Top')),
      r.right - w('Right') - (s.left + x1 * k), r.bottom - w('Bottom') - (s.top + y1 * k)]];
  });
}"""


# --- the checks ----------------------------------------------------------------------------


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_every_box_says_what_it_is_and_a_wrapped_name_is_a_box_per_line_outside_its_words(
    desk: Desk, held: Held, size: ViewportSize
) -> None:
    page = open_job(desk, size)
    tag = tag_of(desk, size)
    snap(page, f"{tag}-fit-width", doc=tag == "service-1920x1080")
    marks = page.evaluate(
        """() => [...document.querySelectorAll('.sheet:not(.twin) [data-box]')].map((e) => ({
          tag: e.tagName, cls: e.className, page: e.dataset.page, kind: e.dataset.kind,
          box: e.dataset.box, state: e.dataset.state, finding: e.dataset.finding}))"""
    )
    assert marks, "no boxes"
    for m in marks:
        assert m["page"] and m["kind"] and m["finding"], m
        assert len(m["box"].split()) == 4, m
        assert m["state"] in STATES, m
    assert {"burned", "doubt", "leak"} <= {m["state"] for m in marks}
    again = [m for m in marks if m["state"] == "leak"]
    assert [(m["page"], m["finding"]) for m in again] == [("1", "a1-1")]

    finding = wrapped_finding(page, held.source)
    first, second = line_boxes(page, finding)
    drawn = [rect(first), rect(second)]
    # one line each: the two do not share a row of pixels, each over its line's words only
    assert drawn[0]["y"] + drawn[0]["height"] <= drawn[1]["y"] + 0.5, drawn
    for loc, word, r in zip((first, second), WRAPPED, drawn, strict=True):
        words = page_rect(page, 1, word_box(held.source, 1, word))
        assert inside(words, r, slack=1.0), (word, words, r)  # the whole word covered
        grown: FloatRect = {
            "x": words["x"] - PAD_PX,
            "y": words["y"] - PAD_PX,
            "width": words["width"] + 2 * PAD_PX,
            "height": words["height"] + 2 * PAD_PX,
        }
        assert inside(r, grown), (word, "wider or taller than its words", words, r)
        assert loc.get_attribute("data-kind") == "name"
        assert loc.get_attribute("data-state") == "burned"

    # groups: findings whose line boxes overlap (directly or through another) share one
    # data-group, and only they (a wrapped name's whole box covering a name between its two
    # lines makes no group)
    shown = page.evaluate(
        """() => [...document.querySelectorAll('[data-testid="sheet-1"] button.box')]
        .map((b) => [b.dataset.finding, b.dataset.group || '', b.dataset.box])"""
    )
    assert groups_of(shown) == {f: g for f, g, _ in shown}, shown
    members = Counter(g for g in {f: g for f, g, _ in shown}.values() if g)
    assert sorted(members.values()) == [2, 3], members  # the given name; the nested addresses

    # every box's edge outside the words it stands for, never on their glyphs: at least half
    # a pixel clear of them on every side, at most a few pixels
    gaps = page.evaluate(EDGE_GAPS)
    assert len(gaps) >= 8, gaps
    on_words = [
        (testid, cls, [round(g, 2) for g in gap])
        for testid, cls, gap in gaps
        if min(gap) < 0.5 or max(gap) > PAD_PX
    ]
    assert on_words == [], on_words
    assert over_other_words(page, held.source) == []  # nor on a word beside or below


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_no_label_or_control_lies_over_a_box(desk: Desk, size: ViewportSize) -> None:
    page = open_job(desk, size)
    found = page.evaluate(OVERLAPS)
    assert found["boxes"] >= 5 and found["hits"] == [], found
    # the point at each box's centre (where it is in view) is the box, or a box of its own
    # group (nested findings drawn over the same words), never anything else
    covered = page.evaluate(
        """() => {
          const view = document.getElementById('viewport').getBoundingClientRect();
          const out = [];
          for (const b of document.querySelectorAll('section.page:not([hidden]) button.box')) {
            const r = b.getBoundingClientRect();
            const x = r.left + r.width / 2, y = r.top + r.height / 2;
            if (x < view.left || x > view.right || y < view.top || y > view.bottom) continue;
            if (x < 0 || y < 0 || x > innerWidth || y > innerHeight) continue;
            const at = document.elementFromPoint(x, y);
            if (at === b || b.contains(at)) continue;
            const other = at && at.closest('button.box');
            if (other && b.dataset.group && other.dataset.group === b.dataset.group) continue;
            out.push([b.dataset.testid, at ? at.tagName + '.' + at.className : null]);
          }
          return out;
        }"""
    )
    assert covered == [], covered


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_fit_page_shows_a_whole_page_in_the_window(
    desk: Desk, held: Held, size: ViewportSize
) -> None:
    page = open_job(desk, size)
    page.get_by_test_id("fit-page").click()
    settled(page)
    tag = tag_of(desk, size)
    snap(page, f"{tag}-fit-page", doc=desk.name == "service" or tag == "offline-1280x800")
    sheet = rect(page.get_by_test_id("sheet-1"))
    w, h = float(size["width"]), float(size["height"])
    window: FloatRect = {"x": 0.0, "y": 0.0, "width": w, "height": h}
    viewport = rect(page.get_by_test_id("viewport"))
    assert inside(sheet, window), (sheet, size)
    assert inside(sheet, viewport), (sheet, viewport)
    assert apart(sheet, rect(page.get_by_test_id("rail")))
    assert page.evaluate(OVERLAPS)["hits"] == []
    assert over_other_words(page, held.source) == []


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_side_by_side_keeps_both_copies_in_view_and_clear_of_the_rail(
    desk: Desk, size: ViewportSize
) -> None:
    page = open_job(desk, size)
    page.get_by_test_id("fit-page").click()
    settled(page)
    toggle = page.get_by_test_id("side-by-side")
    if size["width"] == 1920:
        assert toggle.is_enabled(), "side by side not offered at 1920x1080 with a page fitted"
    elif not toggle.is_enabled():
        return  # not offered at this width: nothing can be clipped
    toggle.check()
    twin = page.get_by_test_id("twin-1")
    twin.wait_for(state="visible")
    page.wait_for_function(
        """() => { const i = document.querySelector('[data-testid="twin-1"] img');
        return i.complete && i.naturalWidth > 0; }"""
    )
    settled(page)
    source, output = rect(page.get_by_test_id("sheet-1")), rect(twin)
    viewport, rail = rect(page.get_by_test_id("viewport")), rect(page.get_by_test_id("rail"))
    assert source["x"] + source["width"] <= output["x"] + 0.5, (source, output)  # beside
    assert abs(source["y"] - output["y"]) < 2, (source, output)
    for r in (source, output):
        assert inside(r, viewport), (r, viewport)
        assert apart(r, rail), (r, rail)
        assert r["x"] + r["width"] <= size["width"] and r["y"] + r["height"] <= size["height"]
    tag = tag_of(desk, size)
    snap(page, f"{tag}-side-by-side", doc=tag == "service-1920x1080")


@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_a_toggled_finding_is_kept_in_every_line_and_every_count_drops(
    desk: Desk, held: Held, size: ViewportSize
) -> None:
    page = open_job(desk, size)
    finding = wrapped_finding(page, held.source)
    before = counts(page)
    first, second = line_boxes(page, finding)
    second.click()  # a later line toggles the whole finding
    page.wait_for_function(
        """(f) => [...document.querySelectorAll(`button.box[data-finding="${f}"]`)]
        .every((b) => b.dataset.state === 'kept')""",
        arg=finding,
    )
    assert first.get_attribute("data-state") == "kept"
    after = counts(page)
    for where in COUNTS:
        assert one_less(before[where], after[where]), (where, before[where], after[where])
    page.mouse.move(0, 0)  # the picture shows the boxes as they stand, none lit by hovering
    page.wait_for_function("() => !document.querySelector('.box.lit')")
    tag = tag_of(desk, size)
    snap(page, f"{tag}-kept", doc=tag == "service-1920x1080")
    second.click()  # pressed again: burned again (its first line lies under the nested
    # finding of the given name alone, which takes a press there: it is a toggle of its own)
    page.wait_for_function(
        """(f) => [...document.querySelectorAll(`button.box[data-finding="${f}"]`)]
        .every((b) => b.dataset.state === 'burned')""",
        arg=finding,
    )
    assert counts(page) == before


def colours(png: bytes, inner: FloatRect, clip: FloatRect) -> dict[str, Any]:
    """From a screenshot of ``clip``: the commonest colour inside the box (``inner``, glyph
    pixels left out: the fill, or the page where there is none) and the commonest coloured
    pixel in the ring around it (the edge)."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    sx, sy = image.width / clip["width"], image.height / clip["height"]
    x0, y0 = (inner["x"] - clip["x"]) * sx, (inner["y"] - clip["y"]) * sy
    x1, y1 = x0 + inner["width"] * sx, y0 + inner["height"] * sy
    fill: Counter[tuple[int, int, int]] = Counter()
    edge: Counter[tuple[int, int, int]] = Counter()
    for y in range(image.height):
        for x in range(image.width):
            p = image.getpixel((x, y))
            assert isinstance(p, tuple)
            r, g, b = p[0], p[1], p[2]
            grey = max(r, g, b) - min(r, g, b) < 24
            if x0 + 1 <= x < x1 - 1 and y0 + 1 <= y < y1 - 1:
                if not (grey and r < 140):  # a glyph's ink is not the fill
                    fill[(r, g, b)] += 1
            elif not (x0 - 1 <= x < x1 + 1 and y0 - 1 <= y < y1 + 1) and not grey:
                edge[(r, g, b)] += 1
    return {
        "fill": fill.most_common(1)[0][0] if fill else None,
        "edge": edge.most_common(1)[0][0] if edge else None,
    }


def far(a: tuple[int, int, int] | None, b: tuple[int, int, int] | None, by: int) -> bool:
    if a is None or b is None:
        return a is not b
    return sum(abs(x - y) for x, y in zip(a, b, strict=True)) >= by


@pytest.mark.parametrize("percent", [100, 200])
def test_kept_and_burned_differ_in_fill_and_edge(desk: Desk, held: Held, percent: int) -> None:
    """Two name boxes of page 1 on screen: the one-line name as found (burned) and the
    wrapped name's second line, kept. Their fill and their edge differ in colour. The doubtful
    name and what the check found again are cut out too (a screenshot per state) and differ
    from them at the edge."""
    page = open_job(desk, SIZES[1])
    finding = wrapped_finding(page, held.source)
    _, kept = line_boxes(page, finding)
    kept.click()
    page.wait_for_function(
        """(f) => [...document.querySelectorAll(`button.box[data-finding="${f}"]`)]
        .every((b) => b.dataset.state === 'kept')""",
        arg=finding,
    )
    okafor = word_box(held.source, 1, "Okafor")
    burned = next(
        b
        for b in page.locator('[data-testid="sheet-1"] button.box[data-kind="name"]').all()
        if b.get_attribute("data-state") == "burned"
        and meets(floats(b.get_attribute("data-box")), okafor)
    )
    zoom_to(page, percent)
    page.mouse.move(0, 0)  # no box under the pointer: none lit by hovering
    page.wait_for_function("() => !document.querySelector('.box.lit')")
    doubt = page.locator('[data-testid="sheet-1"] button.box[data-state="doubt"]').first
    leak = page.locator('[data-testid="sheet-1"] .box.again[data-state="leak"]').first
    seen = {}
    for state, box in (("burned", burned), ("kept", kept), ("doubt", doubt), ("leak", leak)):
        box.scroll_into_view_if_needed()
        settled(page)
        inner = page_rect(page, 1, floats(box.get_attribute("data-box")))
        ring = PAD_PX + 4  # the edge drawn a few pixels out, and little of the next line
        clip: FloatRect = {
            "x": inner["x"] - ring,
            "y": inner["y"] - ring,
            "width": inner["width"] + 2 * ring,
            "height": inner["height"] + 2 * ring,
        }
        png = page.screenshot(clip=clip)
        crop = Path(snap(page, f"{desk.name}-{percent}-{state}")).with_name(
            f"desk-glance-{desk.name}-{percent}-{state}-crop.png"
        )
        crop.write_bytes(png)
        if desk.name == "service" and os.environ.get("PRESSROOM_DOC_IMAGES") == "1":
            DOCS.mkdir(parents=True, exist_ok=True)
            (DOCS / f"desk-glance-{percent}-{state}.png").write_bytes(png)
        seen[state] = colours(png, inner, clip)
    assert seen["burned"]["edge"] is not None and seen["kept"]["edge"] is not None, seen
    assert far(seen["burned"]["edge"], seen["kept"]["edge"], 60), seen
    assert far(seen["burned"]["fill"], seen["kept"]["fill"], 30), seen
    # a doubtful name is not drawn like a kept one, and what the check found again is drawn
    # like neither a finding burned nor one kept
    assert far(seen["doubt"]["edge"], seen["kept"]["edge"], 60), seen
    for other in ("burned", "kept"):
        assert far(seen["leak"]["edge"], seen[other]["edge"], 60), seen
