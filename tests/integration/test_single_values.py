"""One value per field: every repeated form field, query parameter or JSON key is a bad
request naming it, in whatever order the fields came, and nothing is done."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.service import Services
from pressroom.synth import text_pdf

# every field POST /v1/jobs reads, with a value it accepts
SUBMIT_FIELDS = {
    "template": "plain",
    "lane": "interactive",
    "title": "Forms",
    "deadline": "90",
    "customer": "c1",
    "redact": "name",
    "expires_at": "4102444800",
    "keep_pixels": "false",
    "webhook_url": "https://hooks.example/p",
    "review": "doubt",
}
BOUNDARY = "pressroomtestboundary"


def _multipart(parts: list[tuple[str, bytes]]) -> bytes:
    body = b""
    for name, value in parts:
        filename = b'; filename="x.pdf"' if name == "file" else b""
        body += (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"'.encode()
            + filename
            + b"\r\n\r\n"
            + value
            + b"\r\n"
        )
    return body + f"--{BOUNDARY}--\r\n".encode()


@pytest.fixture
def api(services: Services) -> tuple[TestClient, dict[str, str], str]:
    key = services.store.tenancy.create_key("acme", now=services.clock())
    operator = services.store.tenancy.create_key("ops", now=services.clock(), role="operator")
    return (
        TestClient(create_app(services), client=("127.0.0.1", 50000)),
        {"Authorization": f"Bearer {key}"},
        operator,
    )


@pytest.mark.parametrize("field", list(SUBMIT_FIELDS))
@pytest.mark.parametrize("where", ["both before the file", "one on each side", "both after"])
def test_a_submit_field_given_twice_is_refused_and_no_job_is_made(
    api: tuple[TestClient, dict[str, str], str],
    services: Services,
    tmp_path: Path,
    field: str,
    where: str,
) -> None:
    client, headers, _op = api
    pdf = text_pdf([["A letter of ordinary words for the test."]], tmp_path / "a.pdf").read_bytes()
    first, second = SUBMIT_FIELDS[field].encode(), b""  # the second would turn it off
    file_part = ("file", pdf)
    parts = {
        "both before the file": [(field, first), (field, second), file_part],
        "one on each side": [(field, first), file_part, (field, second)],
        "both after": [file_part, (field, first), (field, second)],
    }[where]
    response = client.post(
        "/v1/jobs",
        content=_multipart(parts),
        headers={**headers, "content-type": f"multipart/form-data; boundary={BOUNDARY}"},
    )
    assert response.status_code == 400, response.text
    problem = response.json()
    assert problem["code"] == "BAD_REQUEST" and repr(field) in problem["detail"]
    assert client.get("/v1/jobs", headers=headers).json()["jobs"] == []
    assert list(services.settings.scratch_dir.iterdir()) == []


@pytest.mark.parametrize(
    "path", ["/v1/jobs?limit=1&limit=50", "/v1/jobs?state=complete&limit=2&state=rejected"]
)
def test_a_query_parameter_given_twice_is_refused(
    api: tuple[TestClient, dict[str, str], str], path: str
) -> None:
    client, headers, _op = api
    response = client.get(path, headers=headers)
    assert response.status_code == 400 and response.json()["code"] == "BAD_REQUEST"
    assert "is given more than once" in response.json()["detail"]


def test_a_signed_link_with_a_repeated_parameter_is_refused(
    api: tuple[TestClient, dict[str, str], str],
) -> None:
    client, _headers, _op = api
    for query in ("expires=4102444800&expires=1&signature=ab", "expires=1&signature=a&signature=b"):
        response = client.get(f"/v1/artifacts/00000000-0000-4000-8000-000000000000?{query}")
        assert response.status_code == 400, response.text
        assert response.json()["code"] == "BAD_REQUEST"


@pytest.mark.parametrize(
    ("path", "body", "key"),
    [
        ("/v1/customers", '{"tenant": "acme", "id": "c9", "tenant": "beta"}', "tenant"),
        (
            "/v1/customers",
            '{"tenant": "acme", "id": "c9", "status": "suspended", "status": "active"}',
            "status",
        ),
        ("/v1/keys", '{"tenant": "acme", "tenant": "beta"}', "tenant"),
    ],
)
def test_a_json_key_given_twice_is_refused(
    api: tuple[TestClient, dict[str, str], str],
    services: Services,
    path: str,
    body: str,
    key: str,
) -> None:
    client, _headers, operator = api
    response = client.post(
        path,
        content=body,
        headers={"Authorization": f"Bearer {operator}", "content-type": "application/json"},
    )
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "BAD_REQUEST" and repr(key) in response.json()["detail"]
    if path == "/v1/customers":
        assert services.store.tenancy.customer_status("beta", "c9") is None
    # the same body with each key once is taken
    once = json.dumps(json.loads(body))
    again = client.post(
        path,
        content=once,
        headers={"Authorization": f"Bearer {operator}", "content-type": "application/json"},
    )
    assert again.status_code in (200, 201), again.text


@pytest.mark.parametrize(
    "path", ["/v1/jobs/", "/review/", "/v1/artifacts/x/?expires=1&signature=a"]
)
def test_no_redirect_is_built_from_the_host_header(
    api: tuple[TestClient, dict[str, str], str], path: str
) -> None:
    client, headers, _op = api
    response = client.get(path, headers={**headers, "Host": "evil.example"}, follow_redirects=False)
    assert response.status_code not in (301, 302, 307, 308), response.headers
    assert "evil.example" not in response.headers.get("location", "")


@pytest.mark.parametrize(
    "types",
    [["application/json"], [], ["text/plain"], ["application/json", "text/plain"]],
)
def test_a_json_key_given_twice_is_refused_whatever_the_body_claims_to_be(
    api: tuple[TestClient, dict[str, str], str], services: Services, types: list[str]
) -> None:
    """A route may read JSON from any body: the body is judged as JSON, not by its label, and
    two Content-Type headers (one for the gateway, one for the app) are refused too."""
    import httpx

    client, _headers, operator = api
    body = b'{"tenant": "acme", "id": "c9", "status": "suspended", "status": "active"}'
    headers = httpx.Headers(
        [("authorization", f"Bearer {operator}"), *(("content-type", t) for t in types)]
    )
    response = client.post("/v1/customers", content=body, headers=headers)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "BAD_REQUEST"
    assert services.store.tenancy.customer_status("acme", "c9") is None
