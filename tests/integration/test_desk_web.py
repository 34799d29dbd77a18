"""The reviewer's desk over HTTP, with the service's real keys (SQLite store) and a scripted
backend: sign-in and every change need the form's CSRF token (403 otherwise, and the backend
sees nothing), a tenant sees only its own held jobs, a revoked key's session ends at the next
request, and every page keeps to the CSP: no inline script, no outside asset, no document text."""

from __future__ import annotations

import html
import io
import json
import re
from dataclasses import replace
from urllib.parse import urlencode

import httpx
import pytest
from fastapi.testclient import TestClient
from PIL import Image

from pressroom.app import create_app
from pressroom.corrections import Area, Corrections, ReviewSheet, SheetFinding, SheetPage
from pressroom.desk import session as sessions
from pressroom.desk.config import DeskConfig
from pressroom.desk.gate import KeyGate, OneTimeGate
from pressroom.desk.routes import CSP, desk_app
from pressroom.deskport import (
    Approved,
    Decision,
    HeldDetail,
    HeldItem,
    Viewer,
    Which,
)
from pressroom.errors import NotFound, StorageUnavailable
from pressroom.service import Services
from pressroom.web.problems import PROBLEM
from tests.conftest import FakeClock

pytestmark = pytest.mark.integration

SECRET = b"s" * 32
TOKEN_RE = re.compile(r'name="csrf_token" value="([^"]+)"')


def _png(width: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, width * 11 // 8), "white").save(out, "PNG")
    return out.getvalue()


class FakeDesk:
    """Held items by id; a tenant's viewer sees only its tenant's (NotFound otherwise).
    Records every change it is asked for, so a test sees what got through."""

    title = "Test desk"

    def __init__(self, details: list[HeldDetail]) -> None:
        self.details = {d.item.id: d for d in details}
        self.changes: list[tuple[str, str, Corrections | None]] = []
        self.widths: list[tuple[str, int, str, int]] = []
        self.aligned: list[bool] = []

    def _get(self, viewer: Viewer, item_id: str) -> HeldDetail:
        found = self.details.get(item_id)
        if found is None or viewer.tenant not in (None, found.item.tenant):
            raise NotFound("no such held job")
        return found

    def held(self, viewer: Viewer) -> list[HeldItem]:
        return [d.item for d in self.details.values() if viewer.tenant in (None, d.item.tenant)]

    def detail(self, viewer: Viewer, item_id: str) -> HeldDetail:
        return self._get(viewer, item_id)

    def page_image(
        self,
        viewer: Viewer,
        item_id: str,
        page: int,
        which: Which,
        width_px: int,
        aligned: bool = False,
    ) -> bytes:
        self._get(viewer, item_id)
        self.widths.append((item_id, page, which, width_px))
        self.aligned.append(aligned)
        return _png(width_px)

    def apply(self, viewer: Viewer, item_id: str, corrections: Corrections) -> None:
        self._get(viewer, item_id)
        self.changes.append(("apply", item_id, corrections))

    def approve(self, viewer: Viewer, item_id: str) -> Approved:
        self._get(viewer, item_id)
        self.changes.append(("approve", item_id, None))
        return Approved("Released to the tenant.", f"/v1/artifacts/{item_id}?expires=1&signature=x")

    def reject(self, viewer: Viewer, item_id: str) -> None:
        self._get(viewer, item_id)
        self.changes.append(("reject", item_id, None))


SHEET = ReviewSheet(
    pages=(SheetPage(612, 792), SheetPage(792, 612, rotation=90)),
    findings=(
        SheetFinding(1, "name", (72, 100, 200, 114)),
        SheetFinding(1, "address", (72, 130, 300, 144)),
        SheetFinding(2, "account-number", (400, 50, 500, 64)),
    ),
    corrections=Corrections(
        removed=(Area(1, (72, 130, 300, 144)),), manual=(Area(2, (10, 10, 60, 30)),)
    ),
)


def _detail(item_id: str, tenant: str, *, now: float) -> HeldDetail:
    item = HeldItem(
        id=item_id,
        tenant=tenant,
        reason_code="REDACTION_LEAK",
        reason="2 values found on page 1 after redaction",
        counts={"name": 1, "address": 1, "account-number": 1},
        pages=2,
        held_since=now - 3 * 3600,
        deadline=now + 2 * 86400,
    )
    return HeldDetail(
        item, SHEET, can_apply=True, decisions=(Decision("apply", now - 3600, "k_0a0a0a0a0a0a"),)
    )


@pytest.fixture
def desk(services: Services, clock: FakeClock) -> FakeDesk:
    now = clock()
    return FakeDesk([_detail("j_acme1", "acme", now=now), _detail("j_beta1", "beta", now=now)])


def _client(services: Services, desk: FakeDesk, *, https: bool = False) -> TestClient:
    app = create_app(services)
    app.state.desk = DeskConfig(desk, KeyGate(services), SECRET, services.clock)
    return TestClient(app, base_url="https://testserver" if https else "http://testserver")


@pytest.fixture
def client(services: Services, desk: FakeDesk) -> TestClient:
    return _client(services, desk)


def _key(services: Services, tenant: str, role: str = "tenant") -> tuple[str, str]:
    return services.store.tenancy.new_key(tenant, now=services.clock(), role=role)


def _token(html: str) -> str:
    found = TOKEN_RE.search(html)
    assert found is not None, "no csrf_token in the page"
    return found.group(1)


def _sign_in(client: TestClient, key: str) -> None:
    page = client.get("/review")
    assert page.status_code == 200
    done = client.post(
        "/review/sign-in",
        data={"key": key, "csrf_token": _token(page.text)},
        follow_redirects=False,
    )
    assert done.status_code == 303, done.text
    assert done.headers["location"] == "/review"


def _page_token(client: TestClient, path: str = "/review") -> str:
    page = client.get(path)
    assert page.status_code == 200, page.text
    return _token(page.text)


def _cookies(response: httpx.Response) -> dict[str, list[str]]:
    """Set-Cookie headers by cookie name, each split into its attributes."""
    out: dict[str, list[str]] = {}
    for header in response.headers.get_list("set-cookie"):
        parts = header.split("; ")
        out[parts[0].split("=", 1)[0]] = parts
    return out


def _problem(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    assert response.json()["code"] == code


# --- signing in ---------------------------------------------------------------------------------


def test_the_sign_in_page_has_a_labelled_password_field_and_a_token(client: TestClient) -> None:
    page = client.get("/review")
    assert page.status_code == 200
    assert '<label for="key">' in page.text
    assert 'type="password" id="key" name="key"' in page.text
    assert _token(page.text)
    pre = _cookies(page)["desk_pre"]
    assert {"HttpOnly", "SameSite=Strict", "Path=/review"} <= set(pre)
    # a second visit keeps the pre-session, so two open tabs both sign in
    again = client.get("/review")
    assert "desk_pre" not in _cookies(again)
    assert _token(again.text) == _token(page.text)


def test_a_sign_in_without_the_token_is_refused_403_never_422(
    client: TestClient, services: Services
) -> None:
    _, key = _key(services, "acme")
    client.get("/review")
    _problem(client.post("/review/sign-in", data={"key": key}), 403, "CSRF_REJECTED")
    _problem(client.post("/review/sign-in", json={"key": key}), 403, "CSRF_REJECTED")
    _problem(client.post("/review/sign-in"), 403, "CSRF_REJECTED")
    assert "desk_session" not in client.cookies


def test_a_sign_in_with_a_wrong_token_is_refused(client: TestClient, services: Services) -> None:
    _, key = _key(services, "acme")
    client.get("/review")
    forged = sessions.csrf_token(SECRET, sessions.new_nonce())  # good for another nonce
    response = client.post("/review/sign-in", data={"key": key, "csrf_token": forged})
    _problem(response, 403, "CSRF_REJECTED")
    # a token without its pre-session cookie is no better
    token = _page_token(client)
    client.cookies.clear()
    response = client.post("/review/sign-in", data={"key": key, "csrf_token": token})
    _problem(response, 403, "CSRF_REJECTED")


def test_a_good_sign_in_sets_a_strict_http_only_session_cookie(
    client: TestClient, services: Services
) -> None:
    _, key = _key(services, "acme")
    token = _page_token(client)
    done = client.post(
        "/review/sign-in", data={"key": key, "csrf_token": token}, follow_redirects=False
    )
    assert done.status_code == 303
    assert done.headers["location"] == "/review"
    cookies = _cookies(done)
    assert {"HttpOnly", "SameSite=Strict", "Path=/review", "Max-Age=43200"} <= set(
        cookies["desk_session"]
    )
    assert "Secure" not in cookies["desk_session"]  # plain http here
    assert "Max-Age=0" in cookies["desk_pre"]  # the pre-session is over
    listing = client.get("/review")
    assert 'data-testid="held-list"' in listing.text
    assert "j_acme1" in listing.text and "j_beta1" not in listing.text


def test_over_https_the_cookies_are_secure(services: Services, desk: FakeDesk) -> None:
    client = _client(services, desk, https=True)
    _, key = _key(services, "acme")
    page = client.get("/review")
    assert "Secure" in _cookies(page)["desk_pre"]
    done = client.post(
        "/review/sign-in",
        data={"key": key, "csrf_token": _token(page.text)},
        follow_redirects=False,
    )
    assert "Secure" in _cookies(done)["desk_session"]


def test_an_unknown_key_gets_the_form_again_with_401(client: TestClient) -> None:
    token = _page_token(client)
    response = client.post("/review/sign-in", data={"key": "pr_nope", "csrf_token": token})
    assert response.status_code == 401
    assert 'data-testid="sign-in-failed"' in response.text
    assert 'name="key"' in response.text
    assert "desk_session" not in client.cookies


def test_an_altered_session_cookie_signs_no_one_in(client: TestClient, services: Services) -> None:
    _, key = _key(services, "acme")
    _sign_in(client, key)
    value = client.cookies["desk_session"]
    client.cookies.clear()
    client.cookies.set("desk_session", value[:-2] + "xx", path="/review")
    page = client.get("/review")
    assert 'name="key"' in page.text
    assert "Max-Age=0" in _cookies(page)["desk_session"]


def test_a_session_ends_12_hours_after_sign_in(
    client: TestClient, services: Services, clock: FakeClock
) -> None:
    _, key = _key(services, "acme")
    _sign_in(client, key)
    clock.advance(11 * 3600)
    assert 'data-testid="held-list"' in client.get("/review").text
    clock.advance(3600)
    assert 'name="key"' in client.get("/review").text


# --- who sees what ------------------------------------------------------------------------------


def test_another_tenants_job_is_not_found(client: TestClient, services: Services) -> None:
    _, key = _key(services, "acme")
    _sign_in(client, key)
    assert client.get("/review/jobs/j_beta1").status_code == 404
    png = client.get("/review/jobs/j_beta1/pages/1/source.png")
    _problem(png, 404, "NOT_FOUND")
    token = _page_token(client)
    for action in ("approve", "reject"):
        response = client.post(f"/review/jobs/j_beta1/{action}", data={"csrf_token": token})
        _problem(response, 404, "NOT_FOUND")
    assert client.get("/review/jobs/j_acme1").status_code == 200


def test_an_operator_sees_every_tenants_held_jobs(
    client: TestClient, services: Services, desk: FakeDesk
) -> None:
    _, key = _key(services, "ops", role="operator")
    _sign_in(client, key)
    listing = client.get("/review").text
    assert "j_acme1" in listing and "j_beta1" in listing
    assert "<th>tenant</th>" in listing
    assert "<td>beta</td>" in listing
    token = _page_token(client)
    done = client.post("/review/jobs/j_beta1/reject", data={"csrf_token": token})
    assert done.status_code == 200
    assert desk.changes == [("reject", "j_beta1", None)]


def test_a_revoked_keys_session_ends_at_the_next_request(
    client: TestClient, services: Services, desk: FakeDesk
) -> None:
    key_id, key = _key(services, "acme")
    _sign_in(client, key)
    token = _page_token(client, "/review/jobs/j_acme1")
    services.store.tenancy.revoke_key(key_id, now=services.clock())
    response = client.post("/review/jobs/j_acme1/approve", data={"csrf_token": token})
    _problem(response, 401, "UNAUTHORIZED")
    page = client.get("/review")
    assert 'name="key"' in page.text  # the sign-in form again
    assert "Max-Age=0" in _cookies(page)["desk_session"]
    assert desk.changes == []


def test_an_expired_key_ends_its_session(
    client: TestClient, services: Services, clock: FakeClock
) -> None:
    _, key = services.store.tenancy.new_key("acme", now=clock(), expires_at=clock() + 600)
    _sign_in(client, key)
    assert 'data-testid="held-list"' in client.get("/review").text
    clock.advance(601)
    assert 'name="key"' in client.get("/review").text
    job = client.get("/review/jobs/j_acme1", follow_redirects=False)
    assert job.status_code == 303 and job.headers["location"] == "/review"


def test_sign_out_clears_the_session(client: TestClient, services: Services) -> None:
    _, key = _key(services, "acme")
    _sign_in(client, key)
    token = _page_token(client)
    _problem(client.post("/review/sign-out"), 403, "CSRF_REJECTED")
    done = client.post("/review/sign-out", data={"csrf_token": token}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == "/review"
    assert "Max-Age=0" in _cookies(done)["desk_session"]
    assert 'name="key"' in client.get("/review").text
    # the old token is no use without the session
    response = client.post("/review/jobs/j_acme1/approve", data={"csrf_token": token})
    _problem(response, 401, "UNAUTHORIZED")


# --- changes need the session's token -----------------------------------------------------------


@pytest.mark.parametrize("action", ["apply", "approve", "reject"])
def test_a_change_without_the_sessions_token_is_refused_and_reaches_nothing(
    client: TestClient, services: Services, desk: FakeDesk, action: str
) -> None:
    _, key = _key(services, "acme")
    _sign_in(client, key)
    body = {"corrections": '{"removed":[],"manual":[],"every":[]}'}
    _problem(client.post(f"/review/jobs/j_acme1/{action}", data=body), 403, "CSRF_REJECTED")
    other = sessions.csrf_token(SECRET, sessions.new_nonce())
    response = client.post(f"/review/jobs/j_acme1/{action}", data={**body, "csrf_token": other})
    _problem(response, 403, "CSRF_REJECTED")
    assert desk.changes == []


@pytest.mark.parametrize("action", ["apply", "approve", "reject", "sign-out"])
def test_a_change_without_a_session_is_401(client: TestClient, desk: FakeDesk, action: str) -> None:
    path = "/review/sign-out" if action == "sign-out" else f"/review/jobs/j_acme1/{action}"
    token = _page_token(client)  # a pre-session's token is not a session's
    _problem(client.post(path, data={"csrf_token": token}), 401, "UNAUTHORIZED")
    assert desk.changes == []


def test_apply_hands_the_backend_the_parsed_corrections(
    client: TestClient, services: Services, desk: FakeDesk
) -> None:
    _, key = _key(services, "acme")
    _sign_in(client, key)
    token = _page_token(client, "/review/jobs/j_acme1")
    wanted = Corrections(
        removed=(Area(1, (72, 100, 200, 114)),),
        manual=(Area(2, (10, 10, 60, 30)),),
        every=(Area(1, (80, 300, 140, 312)),),
    )
    done = client.post(
        "/review/jobs/j_acme1/apply",
        data={"csrf_token": token, "corrections": json.dumps(wanted.as_json())},
        follow_redirects=False,
    )
    assert done.status_code == 303
    assert done.headers["location"] == "/review/jobs/j_acme1"
    assert desk.changes == [("apply", "j_acme1", wanted)]


@pytest.mark.parametrize(
    "corrections",
    ["not json", "[]", '{"removed": [{"page": 0, "box": [1, 2, 3, 4]}]}', '{"other": []}'],
)
def test_bad_corrections_are_a_bad_request(
    client: TestClient, services: Services, desk: FakeDesk, corrections: str
) -> None:
    _, key = _key(services, "acme")
    _sign_in(client, key)
    token = _page_token(client)
    response = client.post(
        "/review/jobs/j_acme1/apply", data={"csrf_token": token, "corrections": corrections}
    )
    _problem(response, 400, "BAD_REQUEST")
    assert desk.changes == []


def test_approve_says_what_happened_with_the_download_link(
    client: TestClient, services: Services, desk: FakeDesk
) -> None:
    _, key = _key(services, "acme")
    _sign_in(client, key)
    token = _page_token(client, "/review/jobs/j_acme1")
    done = _approve_confirmed(client, "j_acme1", token)
    assert done.status_code == 303 and done.headers["location"] == "/review/done"
    page = client.get("/review/done")
    assert "Released to the tenant." in page.text
    assert 'href="/v1/artifacts/j_acme1?expires=1&amp;signature=x"' in page.text
    assert desk.changes == [("approve", "j_acme1", None)]
    # the outcome is this session's: after signing in again it is gone
    client.post("/review/sign-out", data={"csrf_token": token})
    _sign_in(client, key)
    assert "Released" not in client.get("/review/done").text


@pytest.mark.parametrize("extra", [{}, {"confirm": "no"}, {"confirm": ""}, {"pending": "3"}])
def test_approve_first_asks_for_a_confirmation_that_names_what_is_published(
    client: TestClient, services: Services, desk: FakeDesk, extra: dict[str, str]
) -> None:
    """The button, Shift+A and a plain HTTP client all post the same form: without
    confirm=yes it is answered with the confirmation page, and nothing is published."""
    _, key = _key(services, "acme")
    _sign_in(client, key)
    token = _page_token(client, "/review/jobs/j_acme1")
    step = client.post(
        "/review/jobs/j_acme1/approve",
        data={"csrf_token": token, **extra},
        follow_redirects=False,
    )
    assert step.status_code == 200 and desk.changes == []
    what = step.text
    assert 'data-testid="confirm-what"' in what and "j_acme1" in what and "2 page(s)" in what
    # the job and the words after it stand apart (a template's line end once ate the space)
    assert "<code>j_acme1</code> as the desk shows it now" in what
    assert "REDACTION_LEAK" in what
    form = re.search(r'<form method="post" action="([^"]+)" data-testid="confirm-form">', what)
    assert form is not None and form.group(1) == "/review/jobs/j_acme1/approve"
    assert '<input type="hidden" name="confirm" value="yes">' in what
    assert ('data-testid="unapplied">3 change(s)' in what) is (extra.get("pending") == "3")
    held = HELD_RE.search(what)
    assert held is not None
    # a confirmation for another held copy (one applied since, in another tab) publishes
    # nothing
    stale = client.post(
        form.group(1),
        data={"csrf_token": _token(what), "confirm": "yes", "held": held.group(1) + "x"},
        follow_redirects=False,
    )
    _problem(stale, 409, "CONFLICT")
    assert desk.changes == []
    done = client.post(
        form.group(1),
        data={
            "csrf_token": _token(what),
            "confirm": "yes",
            "held": html.unescape(held.group(1)),
            "acknowledge": "leak",  # a leak hold: what the check found is acknowledged
        },
        follow_redirects=False,
    )
    assert done.status_code == 303 and desk.changes == [("approve", "j_acme1", None)]


HELD_RE = re.compile(r'name="held" value="([^"]*)"')


def _approve_confirmed(client: TestClient, item: str, token: str) -> httpx.Response:
    """Approve as a person does: the button's form, then the confirmation's (its
    acknowledgement ticked where it asks for one: a leak hold)."""
    step = client.post(f"/review/jobs/{item}/approve", data={"csrf_token": token})
    held = HELD_RE.search(step.text)
    assert step.status_code == 200 and held is not None, step.text
    ticked = {"acknowledge": "leak"} if 'name="acknowledge"' in step.text else {}
    return client.post(
        f"/review/jobs/{item}/approve",
        data={
            "csrf_token": _token(step.text),
            "confirm": "yes",
            "held": html.unescape(held.group(1)),
            **ticked,
        },
        follow_redirects=False,
    )


# --- the pages -----------------------------------------------------------------------------------


def test_every_desk_answer_carries_the_csp(client: TestClient, services: Services) -> None:
    _, key = _key(services, "acme")
    answers = [client.get("/review"), client.post("/review/sign-in")]
    _sign_in(client, key)
    answers += [
        client.get("/review"),
        client.get("/review/jobs/j_acme1"),
        client.get("/review/jobs/j_beta1"),
        client.get("/review/jobs/j_acme1/pages/1/redacted.png"),
        client.get("/review/static/desk.js"),
        client.get("/review/static/desk.css"),
    ]
    for response in answers:
        assert response.headers["content-security-policy"] == CSP, response.request.url
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"


def test_the_job_page_has_no_inline_script_and_nothing_from_elsewhere(
    client: TestClient, services: Services
) -> None:
    _, key = _key(services, "acme")
    _sign_in(client, key)
    for path in ("/review", "/review/jobs/j_acme1"):
        text = client.get(path).text
        scripts = re.findall(r"<script([^>]*)>(.*?)</script>", text, flags=re.S)
        assert scripts == [(' src="/review/static/desk.js" defer', "")]
        assert "<style" not in text and "style=" not in text
        assert not re.search(r"<[^>]+\son[a-z]+=", text)  # no inline handlers
        assert "http://" not in text and "https://" not in text
        assert "javascript:" not in text


def test_the_job_page_draws_the_sheet_with_the_held_reason(
    client: TestClient, services: Services
) -> None:
    _, key = _key(services, "acme")
    _sign_in(client, key)
    text = client.get("/review/jobs/j_acme1").text
    assert "REDACTION_LEAK" in text and "2 values found on page 1 after redaction" in text
    assert "page 1 of 2" in text
    assert 'data-width-pt="612" data-height-pt="792"' in text
    assert 'data-box="72 100 200 114"' in text
    assert 'aria-label="name box 1 on page 1: press to remove; the text stays"' in text
    # the address applied as removed is shown kept and can be restored
    address = re.search(r'<button[^>]*data-kind="address"[^>]*>.*?</button>', text)
    assert address is not None
    assert 'aria-pressed="true"' in address.group(0)
    assert "removed, the text stays" in address.group(0)
    # no class label is drawn on any box: the boxes are empty buttons, the classes are in the
    # findings rail beside the page, with each box's state
    boxes = re.findall(r"<button[^>]*class=\"box[^\"]*\"[^>]*>([^<]*)</button>", text)
    assert len(boxes) == 4 and set(boxes) == {""}
    rail = re.search(r'data-testid="findings-1".*?</div>', text, re.S)
    assert rail is not None and "address" in rail.group(0) and ">kept<" in rail.group(0)
    assert ">burned<" in rail.group(0)
    # thumbnails of every page, with its count of boxes
    assert 'data-testid="thumb-1"' in text and 'data-testid="thumb-2"' in text
    # the manual box applied before is shown as manual on page 2
    assert re.search(r'data-kind="manual" data-origin="applied" data-page="2"', text)
    assert 'id="apply-form"' in text and 'data-testid="approve-form"' in text
    assert '<label for="every-next">' in text
    # the apply form starts with the corrections already applied: sent unchanged, it keeps them
    field = re.search(r'name="corrections" id="corrections" value="([^"]*)"', text)
    assert field is not None
    assert Corrections.parse(json.loads(html.unescape(field.group(1)))) == SHEET.corrections
    assert "held 3 h ago" in text and "(in 2 d)" in text
    assert "apply by key <code>k_0a0a0a0a0a0a</code>" in text


def test_a_rebuilding_job_reloads_itself_and_offers_no_controls(
    client: TestClient, services: Services, desk: FakeDesk
) -> None:
    d = desk.details["j_acme1"]
    desk.details["j_acme1"] = replace(d, item=replace(d.item, state="rebuilding"))
    _, key = _key(services, "acme")
    _sign_in(client, key)
    assert "applying corrections" in client.get("/review").text
    text = client.get("/review/jobs/j_acme1").text
    assert '<meta http-equiv="refresh" content="2">' in text
    assert "Applying corrections" in text
    for control in ("apply-form", "approve-form", "reject-form", "data-kind="):
        assert control not in text


def test_without_a_source_there_is_no_apply_but_a_reason(
    client: TestClient, services: Services, desk: FakeDesk
) -> None:
    desk.details["j_acme1"] = replace(desk.details["j_acme1"], can_apply=False)
    _, key = _key(services, "acme")
    _sign_in(client, key)
    text = client.get("/review/jobs/j_acme1").text
    assert "apply-form" not in text
    assert 'data-testid="no-apply"' in text
    assert 'data-testid="approve-form"' in text


def test_page_images_are_private_pngs_at_a_bounded_width(
    client: TestClient, services: Services, desk: FakeDesk
) -> None:
    _, key = _key(services, "acme")
    assert client.get("/review/jobs/j_acme1/pages/1/source.png").status_code == 401
    _sign_in(client, key)
    for which, w, width in (("source", None, 640), ("redacted", 50, 50), ("source", 4000, 4000)):
        url = f"/review/jobs/j_acme1/pages/2/{which}.png" + ("" if w is None else f"?w={w}")
        response = client.get(url)
        assert response.status_code == 200
        assert response.headers["content-type"] == "image/png"
        assert response.headers["cache-control"] == "private, no-store"
        assert Image.open(io.BytesIO(response.content)).width == width
    assert [w[3] for w in desk.widths] == [640, 50, 4000]
    # any width up to 4,000 px is drawn at that width; past it, or below 16, refused (never
    # silently changed)
    for w in (4001, 15, 0, -5):
        _problem(client.get(f"/review/jobs/j_acme1/pages/2/source.png?w={w}"), 400, "BAD_REQUEST")
    assert len(desk.widths) == 3
    # the output aligned with the sheet is asked for by frame=sheet; a frame of neither kind
    # is refused
    assert client.get("/review/jobs/j_acme1/pages/2/redacted.png?frame=sheet").status_code == 200
    assert desk.aligned[-1] is True
    _problem(client.get("/review/jobs/j_acme1/pages/2/redacted.png?frame=x"), 400, "BAD_REQUEST")
    _problem(client.get("/review/jobs/j_acme1/pages/1/other.png"), 400, "BAD_REQUEST")
    _problem(client.get("/review/jobs/j_acme1/pages/0/source.png"), 400, "BAD_REQUEST")


def test_the_script_and_style_sheet_are_served_with_their_types(client: TestClient) -> None:
    js = client.get("/review/static/desk.js")
    assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    assert "corrections" in js.text
    css = client.get("/review/static/desk.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert client.get("/review/static/other.js").status_code == 404
    # nothing the pages load comes from elsewhere
    assert "http://" not in js.text + css.text and "https://" not in js.text + css.text


def test_the_desk_is_not_in_the_api_document(services: Services) -> None:
    paths = create_app(services).openapi()["paths"]
    assert not [p for p in paths if p.startswith("/review")]


# --- the offline desk's one-time link -------------------------------------------------------


def test_the_printed_link_signs_in_once(desk: FakeDesk, clock: FakeClock) -> None:
    gate = OneTimeGate("t0ken-printed-at-start")
    client = TestClient(desk_app(DeskConfig(desk, gate, SECRET, clock)))
    page = client.get("/review")
    assert 'data-testid="open-link"' in page.text and 'name="key"' not in page.text
    _problem(client.post("/review/sign-in", data={"key": "x"}), 403, "FORBIDDEN")
    wrong = client.get("/review/sign-in?token=guess", follow_redirects=False)
    assert wrong.status_code == 403 and "not right" in wrong.text
    done = client.get("/review/sign-in?token=t0ken-printed-at-start", follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == "/review"
    assert {"HttpOnly", "SameSite=Strict", "Path=/review"} <= set(_cookies(done)["desk_session"])
    listing = client.get("/review").text
    assert "j_acme1" in listing and "j_beta1" in listing  # one person sees every held file
    # the link is spent: a second browser gets a clear refusal
    other = TestClient(desk_app(DeskConfig(desk, gate, SECRET, clock)))
    again = other.get("/review/sign-in?token=t0ken-printed-at-start", follow_redirects=False)
    assert again.status_code == 403 and "used already" in again.text
    assert "desk_session" not in other.cookies
    # the first browser carries on, its changes still need the token
    token = _page_token(client, "/review/jobs/j_acme1")
    _problem(client.post("/review/jobs/j_acme1/reject"), 403, "CSRF_REJECTED")
    assert client.post("/review/jobs/j_acme1/reject", data={"csrf_token": token}).status_code == 200
    assert desk.changes == [("reject", "j_acme1", None)]
    assert client.get("/healthz").status_code == 404  # only the desk's routes


def test_a_failure_of_the_moment_says_when_to_come_back(
    client: TestClient, services: Services, desk: FakeDesk
) -> None:
    def down(viewer: Viewer, item_id: str) -> Approved:
        raise StorageUnavailable("storage is not answering")

    desk.approve = down  # type: ignore[method-assign]
    _, key = _key(services, "acme")
    _sign_in(client, key)
    token = _page_token(client, "/review/jobs/j_acme1")
    response = _approve_confirmed(client, "j_acme1", token)
    _problem(response, 503, "STORAGE_UNAVAILABLE")
    assert response.headers["retry-after"] == "5"
    assert response.headers["content-security-policy"] == CSP
    # a page asked for says why in words, with the same code
    missing = client.get("/review/jobs/j_nothing")
    assert missing.status_code == 404
    assert 'data-testid="refusal"><code>NOT_FOUND</code>' in missing.text


# --- one value per field -------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["key", "csrf_token"])
def test_a_sign_in_with_a_field_given_twice_is_a_bad_request(
    client: TestClient, services: Services, field: str
) -> None:
    _, key = _key(services, "acme")
    token = _page_token(client)
    fields = {"key": key, "csrf_token": token}
    for pairs in (
        [(field, fields[field]), *fields.items()],
        [*fields.items(), (field, fields[field])],
    ):
        response = client.post(
            "/review/sign-in",
            content=urlencode(pairs),
            headers={"content-type": "application/x-www-form-urlencoded"},
            follow_redirects=False,
        )
        _problem(response, 400, "BAD_REQUEST")
        assert repr(field) in response.json()["detail"]
        assert "desk_session" not in _cookies(response)


@pytest.mark.parametrize("action", ["apply", "approve", "reject", "sign-out"])
@pytest.mark.parametrize("field", ["csrf_token", "corrections"])
def test_a_desk_form_with_a_field_given_twice_changes_nothing(
    client: TestClient, services: Services, desk: FakeDesk, action: str, field: str
) -> None:
    _, key = _key(services, "acme")
    _sign_in(client, key)
    token = _page_token(client, "/review/jobs/j_acme1")
    good = {"csrf_token": token, "corrections": '{"removed": [], "manual": []}'}
    pairs = [*good.items(), (field, good[field] if field == "csrf_token" else "{}")]
    path = "/review/sign-out" if action == "sign-out" else f"/review/jobs/j_acme1/{action}"
    response = client.post(
        path,
        content=urlencode(pairs),
        headers={"content-type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    _problem(response, 400, "BAD_REQUEST")
    assert repr(field) in response.json()["detail"]
    assert desk.changes == []
    assert 'name="key"' not in client.get("/review").text  # still signed in: nothing was done


# --- sessions that end ---------------------------------------------------------------------------


def test_sign_out_ends_every_copy_of_the_session(client: TestClient, services: Services) -> None:
    _, key = _key(services, "acme")
    _sign_in(client, key)
    saved = dict(client.cookies)
    token = _page_token(client, "/review/jobs/j_acme1")
    out = client.post("/review/sign-out", data={"csrf_token": token}, follow_redirects=False)
    assert out.status_code == 303
    # a copy of the cookie kept from before: the server no longer holds its session
    copy = TestClient(client.app, base_url=str(client.base_url))
    copy.cookies.update(saved)
    page = copy.get("/review")
    assert page.status_code == 200 and 'name="key"' in page.text  # the sign-in form
    refused = copy.post(
        "/review/jobs/j_acme1/approve", data={"csrf_token": token}, follow_redirects=False
    )
    _problem(refused, 401, "UNAUTHORIZED")
    # signing in again opens a new session that works
    fresh = TestClient(client.app, base_url=str(client.base_url))
    _sign_in(fresh, key)
    assert 'name="key"' not in fresh.get("/review").text


def test_a_planted_pre_session_nonce_signs_no_one_in(
    client: TestClient, services: Services
) -> None:
    """Login CSRF: a nonce an attacker planted (and knows the token of) is not adopted."""
    _, key = _key(services, "beta")
    planted = sessions.new_nonce()
    client.cookies.set("desk_pre", planted, path="/review")
    page = client.get("/review")
    assert _token(page.text) != sessions.csrf_token(SECRET, planted)
    assert "desk_pre" in _cookies(page)  # a fresh, signed one replaces it
    client.cookies.set("desk_pre", planted, path="/review")
    forged = client.post(
        "/review/sign-in",
        data={"key": key, "csrf_token": sessions.csrf_token(SECRET, planted)},
        follow_redirects=False,
    )
    _problem(forged, 403, "CSRF_REJECTED")


def test_cookies_are_secure_when_the_public_url_is_https(
    services: Services, desk: FakeDesk
) -> None:
    app = create_app(services)
    app.state.desk = DeskConfig(desk, KeyGate(services), SECRET, services.clock, secure=True)
    plain = TestClient(app)  # the request itself arrives as http, as behind a TLS proxy
    page = plain.get("/review")
    assert "Secure" in _cookies(page)["desk_pre"]
    _, key = _key(services, "acme")
    done = plain.post(  # (a client keeps a Secure cookie off plain http: sent by hand here)
        "/review/sign-in",
        data={"key": key, "csrf_token": _token(page.text)},
        headers={"cookie": _cookies(page)["desk_pre"][0]},
        follow_redirects=False,
    )
    assert "Secure" in _cookies(done)["desk_session"]
