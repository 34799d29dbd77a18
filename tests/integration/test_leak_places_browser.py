"""What a check found again, at the desk in a real browser (Playwright driving Debian's
Chromium): drawn over the page where the review sheet puts it, as a box of its own kind that
nothing can press, with its legend entry; the approve step names it and will not publish until
it is acknowledged. Screenshots are saved as test artifacts."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pytest

from pressroom.app import create_app
from pressroom.corrections import SheetFinding
from pressroom.desk.config import DeskConfig
from pressroom.desk.gate import KeyGate
from pressroom.service import Services
from tests.conftest import FakeClock
from tests.desk_browser import desk_browser, desk_page, shot
from tests.integration.test_desk_browser import serve
from tests.integration.test_desk_web import SECRET, SHEET, FakeDesk, _detail

if TYPE_CHECKING:
    from playwright.sync_api import Page

__all__ = ["desk_browser", "desk_page"]  # fixtures, registered by the import
pytestmark = pytest.mark.integration
AGAIN = (300.0, 150.0, 420.0, 166.0)  # points on page 1 (612 x 792)


def test_what_the_check_found_again_is_drawn_where_it_is_and_must_be_acknowledged(
    services: Services, clock: FakeClock, desk_page: Page
) -> None:
    held = _detail("j_acme1", "acme", now=clock())
    sheet = dataclasses.replace(SHEET, rechecked=(SheetFinding(1, "name", AGAIN),))
    fake = FakeDesk([dataclasses.replace(held, sheet=sheet)])
    app = create_app(services)
    app.state.desk = DeskConfig(fake, KeyGate(services), SECRET, services.clock)
    _, key = services.store.tenancy.new_key("acme", now=services.clock())
    for url in serve(app):
        page = desk_page
        page.goto(f"{url}/review")
        page.get_by_label("API key").fill(key)
        page.keyboard.press("Enter")
        page.get_by_test_id("job-link").click()
        page.wait_for_load_state("load")
        mark = page.get_by_test_id("again-1-1")
        assert mark.is_visible() and mark.evaluate("e => e.tagName") == "SPAN"
        # where the sheet puts it, in the page's drawn size
        sheet_box = page.get_by_test_id("sheet-1").bounding_box()
        box = mark.bounding_box()
        assert sheet_box is not None and box is not None
        kx, ky = sheet_box["width"] / 612.0, sheet_box["height"] / 792.0
        assert box["x"] - sheet_box["x"] == pytest.approx(AGAIN[0] * kx, abs=2)
        assert box["y"] - sheet_box["y"] == pytest.approx(AGAIN[1] * ky, abs=2)
        assert box["width"] == pytest.approx((AGAIN[2] - AGAIN[0]) * kx, abs=2)
        # its own kind: dotted black, hatched; a legend entry drawn the same way
        assert mark.evaluate("e => getComputedStyle(e).borderTopStyle") == "dotted"
        assert mark.evaluate("e => getComputedStyle(e).pointerEvents") == "none"
        legend = page.get_by_test_id("legend-again")
        assert legend.is_visible()
        assert legend.evaluate("e => getComputedStyle(e).borderTopStyle") == "dotted"
        assert page.get_by_test_id("again-entry-1-1").is_visible()
        shot(page, "leak-places-1-found-again")
        page.keyboard.press("Shift+A")
        page.get_by_test_id("confirm-found-again").wait_for()
        assert "page 1: name 1" in page.get_by_test_id("confirm-found-again").inner_text()
        shot(page, "leak-places-2-confirm")
        page.get_by_test_id("confirm-approve").click()  # not ticked: the browser holds it
        assert page.get_by_test_id("confirm-found-again").is_visible() and fake.changes == []
        page.get_by_test_id("acknowledge").check()
        page.get_by_test_id("confirm-approve").click()
        page.get_by_test_id("outcome").wait_for()
        assert fake.changes == [("approve", "j_acme1", None)]
