"""Browser fixtures for the reviewer's desk: Playwright driving Debian's Chromium (installed with
the test system packages; Playwright's own browser download is never used), and screenshots a
person can look at after the run.

Use from a test module with ``from tests.desk_browser import desk_page, shot`` (importing the
fixture registers it). Screenshots go to ``$PRESSROOM_TEST_ARTIFACTS`` or ``tests/artifacts/``.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, ViewportSize

VIEWPORT: ViewportSize = {"width": 1280, "height": 800}
# headless, no network of its own (no component updates, no first-run fetches)
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


def chromium_path() -> str:
    return shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def desk_browser() -> Iterator[Browser]:
    """One Chromium for a test module; each test gets a fresh context (no shared cookies).
    Never for the whole session: Playwright's sync API keeps an event loop running in the main
    thread while it is open, and tests after it that call asyncio.run() would fail."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def desk_page(desk_browser: Browser) -> Iterator[Page]:
    """A page at 1280x800 in a context of its own, closed after the test."""
    context = desk_browser.new_context(viewport=VIEWPORT)
    try:
        yield context.new_page()
    finally:
        context.close()


def artifacts_dir() -> Path:
    folder = Path(os.environ.get("PRESSROOM_TEST_ARTIFACTS") or ARTIFACTS)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shot(page: Page, name: str) -> Path:
    """A full-page screenshot named ``name`` (made file-safe) in the artifacts folder."""
    safe = re.sub(r"[^\w.-]+", "-", name).strip(".-") or "shot"
    path = artifacts_dir() / f"{safe}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
