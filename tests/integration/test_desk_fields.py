"""Every desk form refuses a field it does not send (issue 40, item 3): a misspelt field is 400
``BAD_REQUEST`` naming it and the field it resembles, and nothing is done — never quietly
ignored, as ``acknowlege=leak`` or ``correction=…`` would be."""

from __future__ import annotations

from urllib.parse import urlencode

import httpx
import pytest
from fastapi.testclient import TestClient

from pressroom.service import Services
from tests.integration.test_desk_web import (
    FakeDesk,
    _key,
    _page_token,
    _problem,
    _sign_in,
    _token,
    client,
    desk,
)

pytestmark = pytest.mark.integration
__all__ = ["client", "desk"]  # fixtures, shared with test_desk_web


def _post(client: TestClient, path: str, pairs: list[tuple[str, str]]) -> httpx.Response:
    return client.post(
        path,
        content=urlencode(pairs),
        headers={"content-type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )


@pytest.mark.parametrize(
    ("action", "extra", "near"),
    [
        ("approve", ("acknowlege", "leak"), "acknowledge"),
        ("approve", ("Confirm", "yes"), "confirm"),
        ("apply", ("correction", "{}"), "corrections"),
        ("reject", ("reason", "no"), None),
        ("sign-out", ("csrf", "x"), None),
    ],
)
def test_a_misspelt_desk_field_is_refused_naming_it(
    client: TestClient,
    services: Services,
    desk: FakeDesk,
    action: str,
    extra: tuple[str, str],
    near: str | None,
) -> None:
    _, key = _key(services, "acme")
    _sign_in(client, key)
    token = _page_token(client, "/review/jobs/j_acme1")
    path = "/review/sign-out" if action == "sign-out" else f"/review/jobs/j_acme1/{action}"
    fields = {"csrf_token": token}
    if action == "apply":
        fields["corrections"] = '{"removed": [], "manual": [], "every": []}'
    response = _post(client, path, [*fields.items(), extra])
    _problem(response, 400, "BAD_REQUEST")
    detail = response.json()["detail"]
    assert f"unknown field {extra[0]!r}" in detail
    if near is not None:
        assert f"did you mean {near!r}" in detail
    assert desk.changes == []
    assert 'name="key"' not in client.get("/review").text  # still signed in: nothing was done
    # the same form without it does what it says
    done = _post(client, path, list(fields.items()))
    assert done.status_code in (200, 303), done.text


def test_the_sign_in_form_refuses_a_field_it_does_not_send(
    client: TestClient, services: Services
) -> None:
    _, key = _key(services, "acme")
    page = client.get("/review")
    response = _post(client, "/review/sign-in", [("kee", key), ("csrf_token", _token(page.text))])
    _problem(response, 400, "BAD_REQUEST")
    assert "did you mean 'key'" in response.json()["detail"]
    assert "desk_session" not in response.headers.get("set-cookie", "")
