"""The OpenAPI document is one a client can trust: every route's answers declared (errors as
problem+json), the upload's form complete, the bearer scheme on every protected route, and
schemathesis finding nothing when it fuzzes the app against it. The checks walk every route of
the app, so a route added later is held to the same."""

from __future__ import annotations

import re
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from openapi_spec_validator import validate
from schemathesis.checks import positive_data_acceptance

from pressroom.app import create_app
from pressroom.intake import SUBMIT_FIELDS, parse_submit
from pressroom.service import Services
from pressroom.web.problems import PROBLEM

# authenticated by something else than a key: liveness, and links signed for one download
OPEN_ROUTES = {
    ("GET", "/healthz"),
    ("GET", "/readyz"),
    ("GET", "/v1/artifacts/{job_id}"),
    ("GET", "/v1/artifacts/{job_id}/sidecar"),
}


def operations(app: Any) -> list[tuple[str, str, dict[str, Any]]]:
    """(method, path, operation) for every operation of the app's document."""
    found = [
        (method.upper(), path, operation)
        for path, item in app.openapi()["paths"].items()
        for method, operation in item.items()
    ]
    assert len(found) > 5
    return found


def test_the_document_is_valid_openapi(services: Services) -> None:
    validate(create_app(services).openapi())


def test_every_protected_route_asks_for_a_bearer_key_and_no_plain_header(
    services: Services,
) -> None:
    app = create_app(services)
    assert app.openapi()["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "A tenant's API key, or an operator key for operator routes.",
    }
    for method, path, operation in operations(app):
        names = {p["name"].lower() for p in operation.get("parameters", [])}
        assert "authorization" not in names, (method, path)
        if (method, path) in OPEN_ROUTES:
            assert "security" not in operation, (method, path)
        else:
            assert {"bearerAuth": []} in operation["security"], (method, path)
            assert "401" in operation["responses"], (method, path)


def test_every_declared_error_is_a_problem_and_every_success_has_a_real_type(
    services: Services,
) -> None:
    app = create_app(services)
    for method, path, operation in operations(app):
        responses = operation["responses"]
        assert any(s.startswith("2") for s in responses), (method, path)
        for status, answer in responses.items():
            content = answer.get("content", {})
            if int(status) >= 400:
                assert set(content) == {PROBLEM}, (method, path, status)
                assert content[PROBLEM]["schema"] == {"$ref": "#/components/schemas/Problem"}
            elif int(status) < 300:
                assert content, (method, path, status)
                # a body FastAPI left undescribed shows as an empty schema
                assert all(c["schema"] for c in content.values()), (method, path, status)


def test_binary_and_text_answers_are_not_labelled_json(services: Services) -> None:
    paths = create_app(services).openapi()["paths"]

    def media(path: str, method: str = "get", status: str = "200") -> set[str]:
        return set(paths[path][method]["responses"][status]["content"])

    # a PDF first, then the generic type generators know (the same bytes), never JSON
    pdf = ["application/pdf", "application/octet-stream"]
    for path in ("/v1/artifacts/{job_id}", "/v1/jobs/{job_id}/held"):
        assert list(paths[path]["get"]["responses"]["200"]["content"]) == pdf, path
    assert media("/metrics") == {"text/plain"}
    assert media("/dashboard") == {"text/html"}
    assert media("/v1/jobs", "post", "202") == {"application/json"}
    assert media("/v1/jobs", "post", "200") == {"application/json"}


class _Reads(dict[str, str]):
    """A form that records every field intake asks it for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.add(key)
        return super().get(key, default)


def test_the_upload_form_declares_every_field_intake_reads(services: Services) -> None:
    document = create_app(services).openapi()
    body = document["paths"]["/v1/jobs"]["post"]["requestBody"]
    assert body["required"] is True
    form = body["content"]["multipart/form-data"]["schema"]
    assert form == {"$ref": "#/components/schemas/SubmitForm"}
    declared = document["components"]["schemas"]["SubmitForm"]
    fields = _Reads()
    parse_submit(fields, allowed=None, idempotency_key=None, now=0.0)
    # what intake reads, what the API lets through and what the document declares are one set
    assert fields.asked == SUBMIT_FIELDS
    assert set(declared["properties"]) == SUBMIT_FIELDS | {"file"}
    assert declared["additionalProperties"] is False
    assert declared["required"] == ["file"]
    assert declared["properties"]["file"] == {
        "type": "string",
        "format": "binary",
        "description": declared["properties"]["file"]["description"],
    }
    for name, field in declared["properties"].items():
        assert field.get("description"), name


def _resolved(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def test_every_request_body_is_closed_and_the_upload_says_unknown_fields_are_refused(
    services: Services,
) -> None:
    """``additionalProperties: false`` on every body a route reads, its nested objects too: a
    client (and schemathesis) learns from the document that an unknown field is refused."""
    document = create_app(services).openapi()
    bodies = 0
    for method, path, operation in operations(create_app(services)):
        for media, content in operation.get("requestBody", {}).get("content", {}).items():
            schema = _resolved(document, content["schema"])
            assert schema["additionalProperties"] is False, (method, path, media)
            bodies += 1
    assert bodies >= 4  # the upload, corrections, a customer, a key
    areas = document["components"]["schemas"]["Corrections"]["properties"]["manual"]["items"]
    assert areas["additionalProperties"] is False
    submit = document["paths"]["/v1/jobs"]["post"]["description"]
    assert "does not declare is refused" in submit and "400" in submit


def test_every_route_without_a_key_answers_a_401_problem(services: Services) -> None:
    app = create_app(services)
    # a peer that is not loopback: the operator's views want a key too
    client = TestClient(app, client=("203.0.113.9", 50000))
    for method, path, operation in operations(app):
        if (method, path) in OPEN_ROUTES:
            continue
        response = client.request(method, path.replace("{job_id}", "j1").replace("{", "x"))
        assert response.status_code == 401, (method, path, response.text)
        assert response.headers["content-type"] == PROBLEM
        assert response.headers["www-authenticate"].startswith("Bearer")
        body = response.json()
        assert (body["status"], body["code"]) == (401, "UNAUTHORIZED")
        assert "401" in operation["responses"]


@pytest.fixture
def tenant_key(services: Services) -> str:
    return services.store.tenancy.create_key("acme", now=services.clock())


@pytest.fixture
def operator_key(services: Services) -> str:
    return services.store.tenancy.create_key("ops", role="operator", now=services.clock())


# short and repeatable: a bounded number of examples per operation, drawn the same way each run
FUZZ = settings(
    max_examples=25,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)


# why a schema-valid request may still be refused: what the file holds, what the server has
# (templates, keys, jobs, quotas, a clock), never the shape the document promised
REFUSED_FOR_CONTENT_OR_STATE = {
    "BAD_MIME",
    "CORRUPT",
    "ENCRYPTED",
    "PAGE_LIMIT",
    "PIXEL_LIMIT",
    "CONTENT_LIMIT",
    "TOO_LARGE",
    "UNKNOWN_TEMPLATE",
    "EXPIRED",
    "PRIVATE_ADDRESS",
    "IDEMPOTENCY_CONFLICT",
    "DEADLINE_EXCEEDED",
    "QUOTA_EXCEEDED",
    "OVERLOADED",
    "UNAUTHORIZED",
    "FORBIDDEN",
    "NOT_FOUND",
    "CONFLICT",
    "BAD_SIGNATURE",
    "LINK_EXPIRED",
    "INVALID_CURSOR",  # a cursor is a token the server wrote: none can be made up
}


@schemathesis.check
def valid_requests_refused_only_for_content_or_state(
    ctx: Any, response: Any, case: Any
) -> bool | None:
    """Schemathesis's positive-data check, knowing which refusals a schema cannot foresee: a
    schema-valid request refused for its form (BAD_REQUEST, say) means the document is looser
    than the server."""
    if case.meta is None or not case.meta.generation.mode.is_positive:
        return None
    if response.status_code < 400 or response.status_code >= 500:
        return None
    body = response.json()
    # a webhook host that does not resolve is the world's state, though intake calls it a bad
    # request: DNS is nothing a schema can describe
    if body.get("code") == "BAD_REQUEST" and "does not resolve" in body.get("detail", ""):
        return None
    # a box whose corners are the wrong way round, or under 1 pt: geometry a JSON schema
    # cannot state (the Corrections schema says it in words)
    if body.get("code") == "BAD_REQUEST" and "at least 1 pt wide" in body.get("detail", ""):
        return None
    assert body.get("code") in REFUSED_FOR_CONTENT_OR_STATE, f"schema-valid, refused: {body}"
    return None


@schemathesis.check
def errors_are_problems(ctx: Any, response: Any, case: Any) -> bool | None:
    """Whatever the status, documented or not: an error body is an RFC 9457 problem."""
    if response.status_code >= 400:
        assert response.headers["content-type"] == [PROBLEM], response.headers
        body = response.json()
        assert body["status"] == response.status_code and body["code"], body
    return None


def fuzz_every_operation(services: Services, key: str) -> list[str]:
    """Schemathesis's examples for every operation of the document, each answer checked
    against it (status declared, body and headers as declared, no 5xx)."""
    api = schemathesis.openapi.from_asgi("/openapi.json", create_app(services))
    seen = []
    for result in api.get_all_operations():
        operation = result.ok()

        @FUZZ
        @given(case=operation.as_strategy())
        def check(case: Any) -> None:
            case.call_and_validate(
                headers={"Authorization": f"Bearer {key}"},
                excluded_checks=[positive_data_acceptance],
                additional_checks=[
                    valid_requests_refused_only_for_content_or_state,
                    errors_are_problems,
                ],
            )

        check()
        seen.append(operation.label)
    return seen


def test_schemathesis_finds_nothing_with_a_tenant_key(services: Services, tenant_key: str) -> None:
    assert "POST /v1/jobs" in fuzz_every_operation(services, tenant_key)


def test_schemathesis_finds_nothing_with_an_operator_key(
    services: Services, operator_key: str
) -> None:
    assert "POST /v1/customers" in fuzz_every_operation(services, operator_key)


def test_every_operation_has_a_chosen_id_and_a_resource_tag(services: Services) -> None:
    from pressroom.api.openapi import OPERATION_IDS, TAGS

    document = create_app(services).openapi()
    tags = {tag["name"] for tag in document["tags"]}
    assert tags == {tag["name"] for tag in TAGS}
    seen: list[str] = []
    for method, path, operation in operations(create_app(services)):
        assert operation["operationId"] in OPERATION_IDS.values(), (method, path)
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", operation["operationId"]), operation
        assert len(operation["tags"]) == 1 and operation["tags"][0] in tags, (method, path)
        seen.append(operation["operationId"])
    assert len(seen) == len(set(seen)), "an operationId is used twice"
    assert sorted(seen) == sorted(OPERATION_IDS.values()), "a name is kept for a route gone"


def test_a_route_without_a_chosen_id_fails_at_start_up() -> None:
    from fastapi import APIRouter

    from pressroom.api.openapi import check_operation_ids

    router = APIRouter()

    async def unnamed() -> None: ...

    unnamed.__module__ = "pressroom.api.routes.jobs"
    router.add_api_route("/v1/unnamed", unnamed)
    with pytest.raises(KeyError, match=r"jobs\.unnamed"):
        check_operation_ids([router])
