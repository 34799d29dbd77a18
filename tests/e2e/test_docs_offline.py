"""The API's documentation pages and the dashboard in Chromium with every request off loopback
blocked, as on a host with no way out: Swagger UI and ReDoc still render the whole API from the
package, nothing is even asked of another origin, and the pages' Content-Security-Policy
refuses nothing they need (a violation would be a console error)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest

from tests.desk_browser import desk_browser, shot  # noqa: F401  # the fixture, registered
from tests.e2e.conftest import Server, launch_serve, stop

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Route

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def docs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    srv = launch_serve(tmp_path_factory.mktemp("docs"), workers=0, interactive=0)
    yield srv
    srv.client.close()
    stop(srv.process)


class Offline:
    """A page whose every request to anywhere but loopback is aborted, and noted."""

    def __init__(self, browser: Browser) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.blocked: list[str] = []
        self.errors: list[str] = []
        self.context.route("**/*", self._route)
        self.page: Page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _route(self, route: Route) -> None:
        host = urlsplit(route.request.url).hostname
        if route.request.url.startswith(("data:", "blob:")) or host in ("127.0.0.1", "localhost"):
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()


@pytest.fixture
def offline(desk_browser: Browser) -> Iterator[Offline]:  # noqa: F811
    view = Offline(desk_browser)
    try:
        yield view
    finally:
        view.context.close()


def test_swagger_ui_renders_every_operation_offline(docs_server: Server, offline: Offline) -> None:
    page = offline.page
    page.goto(f"{docs_server.url}/docs")
    page.wait_for_selector(".opblock", timeout=30_000)
    paths = set(page.locator(".opblock-summary-path").all_inner_texts())
    assert {"/v1/jobs", "/v1/jobs/{job_id}", "/v1/templates", "/readyz"} <= {
        p.replace("\u200b", "") for p in paths
    }, paths
    tags = {t.strip() for t in page.locator(".opblock-tag").all_inner_texts()}
    assert {"jobs", "artifacts", "templates", "operations"} <= {t.split("\n")[0] for t in tags}
    # the key goes in through the Authorize dialog of the bearer scheme
    page.get_by_role("button", name="Authorize").first.click()
    page.wait_for_selector("text=bearerAuth", timeout=10_000)
    shot(page, "api-docs-offline")
    assert offline.blocked == [] and offline.errors == [], (offline.blocked, offline.errors)


def test_redoc_renders_offline(docs_server: Server, offline: Offline) -> None:
    page = offline.page
    page.goto(f"{docs_server.url}/redoc")
    page.wait_for_selector("text=Upload a document, follow its job, cancel it.", timeout=30_000)
    assert page.locator("h1").first.inner_text().startswith("Pressroom")
    shot(page, "api-redoc-offline")
    assert offline.blocked == [] and offline.errors == [], (offline.blocked, offline.errors)


def test_the_dashboard_is_styled_under_its_policy(docs_server: Server, offline: Offline) -> None:
    page = offline.page
    answer = page.goto(f"{docs_server.url}/dashboard")
    assert answer is not None and answer.status == 200
    assert "script-src" not in answer.headers["content-security-policy"]  # none at all
    # the one style block is allowed by its hash: a refused one leaves the default font
    family = page.evaluate("getComputedStyle(document.body).fontFamily")
    assert "Times" not in family, family
    assert offline.blocked == [] and offline.errors == [], (offline.blocked, offline.errors)


def test_a_page_that_asks_another_origin_is_caught(offline: Offline) -> None:
    """The watch works: an empty list above means nothing was asked, not that nothing was
    watched."""
    offline.page.set_content('<img src="http://192.0.2.1/x.png">')
    offline.page.wait_for_timeout(300)
    assert offline.blocked == ["http://192.0.2.1/x.png"]
