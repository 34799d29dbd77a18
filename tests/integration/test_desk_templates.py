"""The desk's pages are Jinja2 template files with autoescape: every page rendered with hostile
values in every field a client, a tenant or a document's check could put there (label, title,
ids, tenant, reason codes and messages, classes, key ids, the approved link) stays markup of
the template's own — no element, attribute or script of the value's — and an operator's folder
of overrides replaces a page's file."""

from __future__ import annotations

from dataclasses import replace
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.corrections import Area, Corrections, ReviewSheet, SheetFinding, SheetPage
from pressroom.desk import views
from pressroom.desk.config import DeskConfig
from pressroom.desk.gate import KeyGate
from pressroom.deskport import Approved, DeadItem, Decision, HeldDetail, HeldItem
from pressroom.errors import NotFound
from pressroom.service import Services
from tests.conftest import FakeClock
from tests.integration.test_desk_web import SECRET, FakeDesk, _sign_in, _token

pytestmark = pytest.mark.integration

EVIL = '"><x-evil onclick="alert(1)">\'<script>alert(2)</script>&amp;{{6*7}}zz'


def _templates_of_app(app: object) -> str | None:
    from starlette.requests import Request

    from pressroom.desk.config import templates_of as _templates_of

    return _templates_of(Request({"type": "http", "app": app, "headers": []}))


class Markup(HTMLParser):
    """Every element and attribute a page holds."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def check(page: str) -> None:
    parsed = Markup()
    parsed.feed(page)
    names = {tag for tag, _ in parsed.tags}
    assert "x-evil" not in names
    attrs = {a for _, found in parsed.tags for a in found}
    assert not [a for a in attrs if a.startswith("on")], attrs
    scripts = [found for tag, found in parsed.tags if tag == "script"]
    assert scripts == [{"src": "/review/static/desk.js", "defer": None}]
    assert "<script>alert" not in page and "42zz" not in page  # not run as a template either


class HostileDesk(FakeDesk):
    def approve(self, viewer, item_id):  # type: ignore[no-untyped-def]
        super().approve(viewer, item_id)
        return Approved(EVIL, "https://example.test/v1/artifacts/x?" + EVIL)

    def detail(self, viewer, item_id):  # type: ignore[no-untyped-def]
        if item_id == "missing":
            raise NotFound(EVIL)
        return super().detail(viewer, item_id)

    # an operator's redrive (DeadLetters), every field hostile
    def dead_letter(self, viewer, item_id):  # type: ignore[no-untyped-def]
        return DeadItem(item_id + EVIL, EVIL, EVIL, EVIL, EVIL, 3, 0.0)

    def redrive(self, viewer, item_id):  # type: ignore[no-untyped-def]
        self.redriven = item_id


def hostile(now: float) -> HeldDetail:
    sheet = ReviewSheet(
        pages=(SheetPage(612, 792), SheetPage(612, 792)),
        findings=(
            SheetFinding(1, EVIL, (72, 100, 200, 114)),
            SheetFinding(1, "name", (72, 130, 200, 144), doubt=True),
        ),
        corrections=Corrections(
            removed=(Area(1, (72, 130, 200, 144)),), manual=(Area(2, (10, 10, 90, 30)),)
        ),
    )
    item = HeldItem(
        id="j_acme1",
        tenant="acme" + EVIL,
        reason_code=EVIL,
        reason=EVIL,
        counts={EVIL: 1, "name": 1},
        pages=2,
        held_since=now - 60,
        deadline=now + 60,
        label=EVIL,
        title=EVIL,
    )
    return HeldDetail(item, sheet, can_apply=True, decisions=(Decision(EVIL, now, EVIL, EVIL),))


def test_every_page_keeps_hostile_values_as_text(
    services: Services, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered: list[str] = []
    real = views.render

    def spy(name: str, overrides: str | None = None, **values: object) -> str:
        rendered.append(name)
        return real(name, overrides, **values)

    monkeypatch.setattr("pressroom.desk.pages.render", spy)
    detail = hostile(clock())
    desk = HostileDesk([detail])
    app = create_app(services)
    app.state.desk = DeskConfig(desk, KeyGate(services), SECRET, services.clock)
    client = TestClient(app)
    check(client.get("/review").text)  # the sign-in form
    # an operator's key: every tenant's held jobs, the tenant column shown too
    _, key = services.store.tenancy.new_key("ops", now=clock(), role="operator")
    failed = client.post("/review/sign-in", data={"csrf_token": "x", "key": "y"})
    assert failed.status_code == 403
    _sign_in(client, key)
    pages = [client.get("/review").text, client.get("/review/jobs/j_acme1").text]
    token = _token(pages[-1])
    confirm = client.post("/review/jobs/j_acme1/approve", data={"csrf_token": token})
    pages.append(confirm.text)
    held = confirm.text.split('name="held" value="')[1].split('"')[0]
    import html

    done = client.post(
        "/review/jobs/j_acme1/approve",
        data={"csrf_token": token, "confirm": "yes", "held": html.unescape(held)},
    )
    pages.append(done.text)
    assert "Download the output" in done.text
    pages.append(client.get("/review/jobs/missing").text)
    pages.append(client.get("/review/jobs/j_dead/redrive").text)
    sent = client.post("/review/jobs/j_dead/redrive", data={"csrf_token": token})
    assert sent.status_code == 200 and desk.redriven == "j_dead"
    check(sent.text)  # the done page: the id as asked for, nothing of the backend's
    rebuilding = replace(detail, item=replace(detail.item, state="rebuilding"))
    desk.details["j_acme1"] = rebuilding
    pages.append(client.get("/review/jobs/j_acme1").text)
    for page in pages:
        check(page)
        assert "x-evil" in page  # the value is there, as text
    # every page file the package ships was rendered here (a new page joins this test)
    shipped = {
        p.name
        for p in resources.files("pressroom.desk").joinpath("templates").iterdir()
        # base, macros and the rebuild notices are parts of the pages, never a page alone
        if p.name.endswith(".html")
        and p.name not in ("base.html", "macros.html", "rebuilding.html")
    }
    assert shipped - set(rendered) == {"link_refused.html"}  # the offline desk's: below
    check(
        views.render(
            "link_refused.html",
            title=EVIL,
            heading=EVIL,
            who=None,
            token=None,
            refresh=None,
            spent=True,
        )
    )


def test_an_operators_folder_replaces_a_pages_file(
    services: Services, clock: FakeClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "desk-templates"
    folder.mkdir()
    (folder / "list.html").write_text(
        '{% extends "base.html" %}{% block body %}<p id="ours">Our own list: '
        "{{ items|length }} held, {{ title }}</p>{% endblock %}"
    )
    detail = hostile(clock())
    desk = FakeDesk([replace(detail, item=replace(detail.item, tenant="acme"))])
    services.settings = replace(services.settings, desk_templates=str(folder))
    app = create_app(services)
    # the service's own desk takes the folder from its settings (PRESSROOM_DESK_TEMPLATES)
    assert _templates_of_app(app) == str(folder)
    app.state.desk = DeskConfig(
        desk, KeyGate(services), SECRET, services.clock, templates=str(folder)
    )
    client = TestClient(app)
    _, key = services.store.tenancy.new_key("acme", now=clock())
    _sign_in(client, key)
    text = client.get("/review").text
    assert '<p id="ours">Our own list: 1 held, Test desk</p>' in text
    assert "sign-out" in text  # the package's base page fills in the rest
    # a page the folder does not hold comes from the package
    assert 'data-testid="thumbs"' in client.get("/review/jobs/j_acme1").text


def test_the_dashboard_keeps_hostile_values_as_text() -> None:
    from pressroom.api.dashboard import Snapshot, render_dashboard

    row = {"id": EVIL, "tenant": EVIL, "label": EVIL, "lane": EVIL, "reason": EVIL, "age": 5.0}
    row["redrivable"] = True
    worker = {
        "host": EVIL,
        "pid": EVIL,
        "lanes": EVIL,
        "heartbeat": 3.0,
        "stale": True,
        "job": EVIL,
        "stage": EVIL,
    }
    snap = Snapshot(
        now=0.0,
        counts={("bulk", "accepted"): 2},
        oldest={},
        workers={"bulk": 1},
        stages={EVIL: (0.1, 0.2, 3)},
        throughput=[0] * 11 + [4],
        pages_per_min_per_core=None,
        retries={EVIL: 1},
        dead={EVIL: 2},
        review_total=1,
        review=[row],
        recent_dead=[row],
        decisions=[{"at": 0.0, "id": EVIL, "action": EVIL, "key_id": EVIL}],
        worker_list=[worker],
    )
    page = render_dashboard(snap)
    parsed = Markup()
    parsed.feed(page)
    assert "x-evil" not in {tag for tag, _ in parsed.tags} and "x-evil" in page
    attrs = {a for _, found in parsed.tags for a in found}
    assert not [a for a in attrs if a.startswith("on")]
    assert "<script" not in page and "42zz" not in page
    # job ids link to the job's JSON, and a held one to the desk, escaped in the URL
    assert "/review/jobs/%22%3E%3Cx-evil" in page and "/v1/jobs/%22%3E%3Cx-evil" in page


def test_a_job_without_a_label_is_never_glued_to_the_next_word() -> None:
    """The templates strip a line end after a block tag: a job named without a label ran into
    the next word ("c02-22as the desk shows it"), found at the desk on a stranger's document."""
    base = {"title": "t", "heading": "h", "who": None, "token": "x", "refresh": None}
    dead = DeadItem("j_dead", "acme", "batch", None, "INTERNAL_ERROR", 3, None)
    redrive = views.render("redrive.html", **base, dead=dead)
    assert "<code>j_dead</code> of tenant" in redrive
    item = HeldItem("j_one", "acme", "REVIEW_REQUESTED", "asked", {}, 1, None, None)
    confirm = views.render(
        "confirm.html",
        **base,
        item=item,
        counts={},
        by_page=[],
        found_again=None,
        unapplied=0,
        held_version="v",
        acknowledge="leak",
        unacknowledged=False,
    )
    assert "<code>j_one</code> as the desk shows it now" in confirm
