"""Unknown fields are refused (issue 40, S1/N7): a form field, a query parameter or a JSON key
a route does not read is 400 ``BAD_REQUEST`` naming it, and the field it resembles, with
nothing done. Ignored, ``redaction=name`` or ``Redact=name`` published a letter unredacted.
JSON nested past a small bound is 400 too, never a 500 from a parser's recursion."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pressroom.app import create_app
from pressroom.intake import SUBMIT_FIELDS
from pressroom.jobs.model import Lane
from pressroom.service import Services
from pressroom.synth import save_png, text_pdf
from pressroom.testing import FakeOcrEngine
from pressroom.web.problems import PROBLEM
from pressroom.web.single import resembles
from pressroom.worker.runner import JobRunner
from tests.helpers import small_scan

KNOWN = SUBMIT_FIELDS | {"file"}
# a value each field accepts: sent under a near miss of its name, today's code took the job
VALUES = {
    "template": "plain",
    "lane": "interactive",
    "title": "Forms",
    "label": "letter-1",
    "deadline": "90",
    "customer": "c1",
    "redact": "name",
    "expires_at": "4102444800",
    "keep_pixels": "true",
    "webhook_url": "https://hooks.example/p",
    "review": "always",
    "output_type": "pdfa",
    "sidecar": "true",
    "allow_no_text": "true",
    "optimize": "1",
    "languages": "eng",
    "ocr": "redo",
}
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def near_misses(field: str, letters: str = "aqz_") -> set[str]:
    """The field with a case change, one letter changed, dropped, added or swapped with its
    neighbour, or ``_`` and ``-`` exchanged: every one a different, unknown name."""
    found = {field.upper(), field.capitalize(), field.replace("_", "-"), f"{field}s"}
    for i, letter in enumerate(field):
        found.add(field[:i] + letter.swapcase() + field[i + 1 :])
        found.add(field[:i] + field[i + 1 :])
        found.add(field[:i] + field[i + 1 : i + 2] + letter + field[i + 2 :])
        for other in letters:
            found.add(field[:i] + other + field[i + 1 :])
            found.add(field[:i] + other + field[i:])
    return {name for name in found if name and name not in KNOWN}


def test_every_near_miss_of_every_submit_field_names_the_field() -> None:
    """Exhaustive over the edits above, on the function the answers use."""
    for field in sorted(KNOWN):
        for name in near_misses(field):
            assert field in resembles(name, KNOWN), (name, field)


@pytest.fixture
def api(services: Services) -> tuple[TestClient, dict[str, str], dict[str, str]]:
    tenant = services.store.tenancy.create_key("acme", now=services.clock())
    operator = services.store.tenancy.create_key("ops", now=services.clock(), role="operator")
    return (
        TestClient(create_app(services), client=("127.0.0.1", 50000)),
        {"Authorization": f"Bearer {tenant}"},
        {"Authorization": f"Bearer {operator}"},
    )


@pytest.fixture
def letter(tmp_path: Path) -> bytes:
    lines = ["Dear Mrs Eleanor Whitcombe,", "Oliver Whitcombe paid the account."]
    return text_pdf([lines], tmp_path / "letter.pdf").read_bytes()


def submit(client: TestClient, headers: dict[str, str], parts: list[tuple[str, Any]]) -> Any:
    """``curl -F`` parts in order: ``(name, str)`` a field, ``(name, bytes)`` a file."""
    files = [
        (name, ("letter.pdf", io.BytesIO(value), "application/pdf"))
        if isinstance(value, bytes)
        else (name, (None, value))
        for name, value in parts
    ]
    return client.post("/v1/jobs", headers=headers, files=files)


def nothing_done(services: Services) -> None:
    assert services.store.stats.counts() == {}
    assert list(services.blobs.list("")) == []
    assert list(services.settings.scratch_dir.iterdir()) == []


def refused(response: Any, detail: str | None = None) -> str:
    assert response.status_code == 400, response.text
    assert response.headers["content-type"] == PROBLEM
    problem = response.json()
    assert (problem["status"], problem["code"]) == (400, "BAD_REQUEST"), problem
    if detail is not None:
        assert problem["detail"] == detail
    return str(problem["detail"])


@settings(
    max_examples=120,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_a_near_miss_of_any_submit_field_is_refused_naming_it_and_no_job_is_made(
    api: tuple[TestClient, dict[str, str], dict[str, str]],
    services: Services,
    letter: bytes,
    data: st.DataObject,
) -> None:
    client, headers, _op = api
    field = data.draw(st.sampled_from(sorted(KNOWN)), label="field")
    name = data.draw(st.sampled_from(sorted(near_misses(field, LETTERS))), label="near miss")
    before = data.draw(st.booleans(), label="before the file")
    # a near miss of `file` carries a file beside the real one (a stray file part)
    stray: tuple[str, Any] = (name, letter if field == "file" else VALUES[field])
    parts = [stray, ("file", letter)] if before else [("file", letter), stray]
    detail = refused(submit(client, headers, parts))
    assert detail.startswith(f"unknown field {name!r}: did you mean "), detail
    assert repr(field) in detail, detail
    nothing_done(services)


@pytest.mark.parametrize(
    ("field", "value", "detail"),
    [
        (
            "redaction",
            "name,address,account-number",
            "unknown field 'redaction': did you mean 'redact'?",
        ),
        ("Redact", "name", "unknown field 'Redact': did you mean 'redact'?"),
        ("titel", "x", "unknown field 'titel': did you mean 'title'?"),
    ],
)
def test_the_strangers_misspelt_redaction_is_refused_not_published(
    api: tuple[TestClient, dict[str, str], dict[str, str]],
    services: Services,
    letter: bytes,
    field: str,
    value: str,
    detail: str,
) -> None:
    """S1: ``-F file=@letter.pdf -F redaction=name,address,account-number -F lane=interactive``
    was a complete job with ``"redact": []`` and every name in clear."""
    client, headers, _op = api
    parts = [("file", letter), (field, value), ("lane", "interactive")]
    refused(submit(client, headers, parts), detail)
    nothing_done(services)


@pytest.mark.parametrize("with_file", [True, False])
def test_a_file_under_another_name_is_an_unknown_field_not_a_field_too_long(
    api: tuple[TestClient, dict[str, str], dict[str, str]],
    services: Services,
    tmp_path: Path,
    with_file: bool,
) -> None:
    """S10: ``-F notfile=@skew.pdf`` answered "form field 'notfile' is too long"."""
    client, headers, _op = api
    scan = save_png(small_scan(dpi=150, lines=4).image, tmp_path / "s.png", 150).read_bytes()
    assert len(scan) > 8192  # past a field's cap: the old answer was "too long"
    parts = [("notfile", scan)] + ([("file", scan)] if with_file else [])
    detail = refused(submit(client, headers, parts))
    assert detail.startswith("unknown field 'notfile'; known: "), detail
    assert "'file'" not in detail and ", file," in detail
    nothing_done(services)


@pytest.mark.parametrize(
    "disposition",
    [b"form-data; name*=utf-8''redact", b"form-data", b'form-data; filename="x.txt"'],
)
def test_a_part_without_a_plain_name_is_refused_never_dropped(
    api: tuple[TestClient, dict[str, str], dict[str, str]],
    services: Services,
    disposition: bytes,
) -> None:
    """A proxy before the API may read ``name*=`` as the field ``redact``; the form parser
    here reads no name at all, and the part was dropped: a redaction asked for and not done."""
    client, headers, _op = api
    boundary = b"pressroom-test-boundary"
    body = (
        b"--" + boundary + b"\r\nContent-Disposition: " + disposition + b"\r\n\r\nname\r\n"
        b"--" + boundary + b'\r\nContent-Disposition: form-data; name="file"; '
        b'filename="letter.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7 x\r\n'
        b"--" + boundary + b"--\r\n"
    )
    sent = {**headers, "content-type": "multipart/form-data; boundary=" + boundary.decode()}
    assert refused(client.post("/v1/jobs", headers=sent, content=body)) == (
        "a form part without a name"
    )
    nothing_done(services)


@pytest.mark.parametrize(
    ("path", "detail"),
    [
        ("/v1/jobs?stat=complete", "unknown query parameter 'stat': did you mean 'state'?"),
        ("/v1/jobs?Limit=5", "unknown query parameter 'Limit': did you mean 'limit'?"),
        (
            "/v1/jobs?created-after=2026-12-01T00:00:00Z",
            "unknown query parameter 'created-after': did you mean 'created_after'?",
        ),
        ("/v1/jobs?lane=bulk&curser=x", "unknown query parameter 'curser': did you mean 'cursor'?"),
        (
            "/v1/jobs?page=2",
            "unknown query parameter 'page'; known: created_after, created_before, cursor, "
            "label, lane, limit, state",
        ),
        ("/v1/templates?all=1", "unknown query parameter 'all': this takes none"),
        ("/v1/review?lane=bulk", "unknown query parameter 'lane': this takes none"),
        ("/v1/jobs/j1?verbose=1", "unknown query parameter 'verbose': this takes none"),
    ],
)
def test_an_unknown_query_parameter_is_refused_naming_it(
    api: tuple[TestClient, dict[str, str], dict[str, str]], path: str, detail: str
) -> None:
    client, headers, _op = api
    refused(client.get(path, headers=headers), detail)


def test_every_known_field_and_parameter_is_still_taken(
    api: tuple[TestClient, dict[str, str], dict[str, str]], letter: bytes
) -> None:
    """What clients send today goes through: every submit field with a good value, the job
    list's filters, and the next page's link built from them."""
    client, headers, _op = api
    fields = {k: v for k, v in VALUES.items() if k not in ("webhook_url", "languages")}
    for _ in range(2):
        response = submit(client, headers, [*fields.items(), ("file", letter)])
        assert response.status_code == 202, response.text
    refused(client.get("/v1/jobs?lane=interactive&stat=accepted", headers=headers))
    query = "limit=1&lane=interactive&state=accepted&label=letter-1"
    first = client.get(f"/v1/jobs?{query}&created_after=2000-01-01T00:00:00Z", headers=headers)
    assert first.status_code == 200 and first.json()["next"], first.text
    second = client.get(first.json()["next"], headers=headers)
    assert second.status_code == 200 and len(second.json()["jobs"]) == 1, second.text


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("expire=1&signature=a", "unknown query parameter 'expire': did you mean 'expires'?"),
        (
            "expires=1&signature=a&download=1",
            "unknown query parameter 'download'; known: expires, signature",
        ),
    ],
)
def test_a_signed_link_with_an_unknown_parameter_is_refused(
    api: tuple[TestClient, dict[str, str], dict[str, str]], query: str, detail: str
) -> None:
    client, _headers, _op = api
    for path in ("/v1/artifacts/j1", "/v1/artifacts/j1/sidecar"):
        refused(client.get(f"{path}?{query}"), detail)


def test_an_operators_routes_refuse_unknown_parameters_and_keys(
    api: tuple[TestClient, dict[str, str], dict[str, str]], services: Services
) -> None:
    client, _headers, op = api
    tenancy = services.store.tenancy
    keys_before = len(tenancy.list_keys(None))
    refused(
        client.get("/v1/keys?tenat=acme", headers=op),
        "unknown query parameter 'tenat': did you mean 'tenant'?",
    )
    refused(
        client.post("/v1/keys", headers=op, json={"tenant": "acme", "rol": "operator"}),
        "unknown field 'rol': did you mean 'role'?",
    )
    assert len(tenancy.list_keys(None)) == keys_before
    refused(
        client.post("/v1/customers", headers=op, json={"tenant": "acme", "id": "c1", "Status": ""}),
        "unknown customer field 'Status': did you mean 'status'?",
    )
    assert tenancy.customer_status("acme", "c1") is None
    # what each takes is still taken
    assert client.post("/v1/keys", headers=op, json={"tenant": "acme"}).status_code == 201
    made = client.post("/v1/customers", headers=op, json={"tenant": "acme", "id": "c1"})
    assert made.status_code == 201, made.text


def test_a_route_that_reads_no_body_refuses_one_with_fields(
    api: tuple[TestClient, dict[str, str], dict[str, str]], services: Services
) -> None:
    client, headers, _op = api
    first = client.get("/v1/webhook-secret", headers=headers).json()["secret"]
    refused(
        client.post("/v1/webhook-secret/rotate", headers=headers, json={"secret": "whsec_mine"}),
        "unknown JSON key 'secret': this takes none",
    )
    assert client.get("/v1/webhook-secret", headers=headers).json()["secret"] == first
    rotated = client.post("/v1/webhook-secret/rotate", headers=headers)
    assert rotated.status_code == 200 and rotated.json()["secret"] != first


def held_job(
    client: TestClient, headers: dict[str, str], services: Services, tmp_path: Path
) -> str:
    scan = save_png(small_scan(dpi=100, lines=2).image, tmp_path / "s.png", 100).read_bytes()
    response = submit(client, headers, [("redact", "account-number"), ("file", scan)])
    assert response.status_code == 202, response.text
    # the fake reads the account number on the output too: the check holds it for review
    engine = FakeOcrEngine(lines=("Account number: 12345678", "Ordinary words stay."))
    runner = JobRunner(services, engine, "w1")
    while runner.run_next((Lane.BULK, Lane.INTERACTIVE)) is not None:
        pass
    job_id = str(response.json()["id"])
    assert client.get(f"/v1/jobs/{job_id}", headers=headers).json()["state"] == "review"
    return job_id


def test_the_review_api_refuses_unknown_keys_and_the_job_stays_held(
    api: tuple[TestClient, dict[str, str], dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers, _op = api
    job_id = held_job(client, headers, services, tmp_path)
    box = [10, 10, 60, 40]
    for action in ("approve", "reject"):
        refused(
            client.post(f"/v1/jobs/{job_id}/{action}", headers=headers, json={"comment": "ok"}),
            "unknown JSON key 'comment': this takes none",
        )
    cases = [
        ({"manul": []}, "unknown corrections field 'manul': did you mean 'manual'?"),
        (
            {"manual": [{"page": 1, "box": box, "pgae": 2}]},
            "unknown corrections.manual[0] field 'pgae': did you mean 'page'?",
        ),
        (
            {"every": [], "removed": [{"page": 1, "box": box}, {"page": 1, "Box": box}]},
            "unknown corrections.removed[1] field 'Box': did you mean 'box'?",
        ),
    ]
    for body, detail in cases:
        path = f"/v1/jobs/{job_id}/corrections"
        refused(client.post(path, headers=headers, json=body), detail)
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["decisions"]) == ("review", [])
    # without a body, as every client sends it, approve is what it was
    approved = client.post(f"/v1/jobs/{job_id}/approve", headers=headers)
    assert approved.status_code == 200 and approved.json()["state"] == "complete"


DEEP = b'{"manual": ' + b"[" * 5000 + b"]" * 5000 + b"}"


@pytest.mark.parametrize("path", ["/v1/jobs/j1/corrections", "/v1/customers", "/v1/keys"])
def test_json_nested_5000_deep_is_a_bad_request_never_a_500(
    api: tuple[TestClient, dict[str, str], dict[str, str]], path: str
) -> None:
    """Whatever the body says it is: the middleware judges JSON, a route reads any type."""
    client, headers, op = api
    client = TestClient(client.app, raise_server_exceptions=False, client=("127.0.0.1", 50000))
    for content_type in ("application/json", "text/plain", None, "multipart/form-data; boundary=x"):
        sent = {**(headers if "corrections" in path else op)}
        if content_type is not None:
            sent["content-type"] = content_type
        response = client.post(path, content=DEEP, headers=sent)
        if path == "/v1/keys" and content_type != "application/json":
            # FastAPI reads that body itself (a form, or JSON by its own rules): refused as a
            # body it cannot read ("There was an error parsing the body"), never parsed deep
            refused(response)
            continue
        assert "nested deeper than 32" in refused(response), content_type


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16", "utf-32"])
def test_json_nested_deep_in_utf16_or_utf32_is_a_bad_request_never_a_500(
    api: tuple[TestClient, dict[str, str], dict[str, str]], encoding: str
) -> None:
    """A JSON parser takes UTF-16 and UTF-32 bytes too: there U+2200 holds a quote's byte,
    which a scan of the raw bytes took for a string hiding every bracket after it (a 500)."""
    client, headers, _op = api
    client = TestClient(client.app, raise_server_exceptions=False, client=("127.0.0.1", 50000))
    body = ('{"manual": "\u2200", "every": ' + "[" * 5000 + "]" * 5000 + "}").encode(encoding)
    sent = {**headers, "content-type": "application/json"}
    response = client.post("/v1/jobs/j1/corrections", content=body, headers=sent)
    assert "nested deeper than 32" in refused(response)


def test_json_as_deep_as_the_bound_is_read() -> None:
    from pressroom.web.single import MAX_JSON_DEPTH, json_too_deep

    at = b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH
    assert not json_too_deep(at) and json_too_deep(b"[" + at + b"]")
    # brackets inside strings, escaped quotes included, are no nesting
    text = json.dumps({"a": "[" * 100 + '"{' * 100}).encode()
    assert not json_too_deep(text)
    assert json_too_deep(b'["\\"",' * 40 + b"1" + b"]" * 40)
    # the scan reads the bytes as the parser will: UTF-16 and UTF-32 too
    hidden = '{"a": "\u2200", "b": ' + "[" * 40 + "]" * 40 + "}"
    for encoding in ("utf-8", "utf-16-le", "utf-16-be", "utf-16", "utf-32"):
        assert json_too_deep(hidden.encode(encoding)), encoding
