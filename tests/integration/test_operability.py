"""The service as operators run it (issue 30): documentation pages served from the package with
nothing from another origin, readiness apart from liveness, an access log that says what was
asked and never who or what for, Prefer: respond-async, the templates a tenant may use and the
policy behind them, and a broken template refused as BAD_TEMPLATE."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from pressroom.api.docs import STATIC
from pressroom.app import create_app
from pressroom.service import Services
from tests.conftest import FakeClock
from tests.hookservers import Receiver
from tests.integration.test_keys_http import Lines
from tests.integration.test_service import png_bytes, post, work

pytestmark = pytest.mark.integration


@pytest.fixture
def api(services: Services) -> tuple[TestClient, dict[str, str]]:
    key = services.store.tenancy.create_key("acme", now=services.clock())
    return TestClient(create_app(services), client=("127.0.0.1", 50000)), {
        "Authorization": f"Bearer {key}"
    }


# --- documentation pages ----------------------------------------------------------------------


class _Refs(HTMLParser):
    """Every URL a page refers to, and whether it holds an inline script or handler."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.inline: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for name in ("src", "href", "spec-url", "data-spec-url"):
            if values.get(name):
                self.urls.append(str(values[name]))
        self.inline += [name for name, _ in attrs if name.startswith("on")]
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline.append(data)


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_documentation_pages_load_only_from_this_origin(
    api: tuple[TestClient, dict[str, str]], page: str
) -> None:
    client, _ = api
    answer = client.get(page)
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/html")
    csp = answer.headers["content-security-policy"]
    script_src = re.search(r"script-src ([^;]*)", csp)
    assert script_src is not None and script_src.group(1).split() == ["'self'"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["cache-control"] == "no-store"
    refs = _Refs()
    refs.feed(answer.text)
    assert refs.inline == []  # no inline script, no on* handler: the CSP can forbid them
    assert refs.urls and "favicon" in " ".join(refs.urls)
    for url in refs.urls:
        assert url.startswith("/") and not url.startswith("//"), url  # this origin only
        fetched = client.get(url)
        assert fetched.status_code == 200, url
        if url.startswith("/docs/assets/"):
            assert fetched.headers["x-content-type-options"] == "nosniff"
    assert "http://" not in answer.text and "https://" not in answer.text


def test_documentation_assets_are_a_fixed_list_and_the_pages_can_be_turned_off(
    api: tuple[TestClient, dict[str, str]], services: Services
) -> None:
    client, _ = api
    for name in ("..%2Fdocs.py", "swagger-ui.js.map", "index.html", "oauth2-redirect.html"):
        assert client.get(f"/docs/assets/{name}").status_code == 404, name
    assert client.get("/docs/assets/swagger-ui-bundle.js").status_code == 200
    services.settings = replace(services.settings, api_docs=False)
    for url in ("/docs", "/redoc", "/docs/assets/swagger-ui-bundle.js"):
        assert client.get(url).status_code == 404, url
    assert client.get("/openapi.json").status_code == 200  # generators still have it


@pytest.mark.parametrize(
    ("bundle", "licence"), [("swagger-ui", "Apache License"), ("redoc", "The MIT License")]
)
def test_the_vendored_bundles_are_the_files_their_sums_name(bundle: str, licence: str) -> None:
    folder = STATIC / bundle
    sums = (folder / "SHA256SUMS").read_text().split("\n")
    listed = {name: digest for digest, name in (line.split() for line in sums if line.strip())}
    shipped = {p.name for p in folder.iterdir()} - {"SHA256SUMS", "VERSION"}
    assert set(listed) == shipped and {"LICENSE", "THIRD-PARTY-LICENSES.txt"} <= shipped
    for name, digest in listed.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name
    assert licence in (folder / "LICENSE").read_text()


# --- readiness --------------------------------------------------------------------------------


def test_readyz_says_ready_and_then_which_part_is_not(
    api: tuple[TestClient, dict[str, str]], services: Services
) -> None:
    client, _ = api
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"

    blobs = services.settings.data_dir / "blobs"
    assert blobs.is_dir()
    moved = blobs.with_name("blobs-away")
    blobs.rename(moved)  # a mount gone from under the service
    gone = client.get("/readyz")
    assert gone.status_code == 503 and gone.json()["code"] == "STORAGE_UNAVAILABLE"
    assert "retry-after" in gone.headers
    assert client.get("/healthz").status_code == 200  # alive, not ready
    moved.rename(blobs)
    assert client.get("/readyz").status_code == 200

    with services.store.db.engine.begin() as conn:
        head = conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
        conn.execute(text("UPDATE alembic_version SET version_num = '0001'"))
    behind = client.get("/readyz")
    assert behind.status_code == 503 and behind.json()["code"] == "SCHEMA_BEHIND"
    assert head in behind.json()["detail"] and "pressroom db upgrade" in behind.json()["detail"]


# --- the access log ---------------------------------------------------------------------------


@pytest.fixture
def access() -> Iterator[Lines]:
    handler = Lines()
    logger = logging.getLogger("pressroom.access")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    yield handler
    logger.removeHandler(handler)
    logger.setLevel(level)


def test_one_access_line_per_request_with_the_route_and_nothing_personal(
    api: tuple[TestClient, dict[str, str]], services: Services, access: Lines, tmp_path: Path
) -> None:
    client, headers = api
    key = headers["Authorization"].removeprefix("Bearer ")
    secret_name = "Margaret Okafor payout.pdf"
    accepted = client.post(
        "/v1/jobs",
        headers=headers,
        files={"file": (secret_name, png_bytes(tmp_path))},
        data={"label": "Okafor, Margaret", "title": "Okafor estate"},
    )
    assert accepted.status_code == 202, accepted.text
    job_id = accepted.json()["id"]
    work(services)
    link = client.get(f"/v1/jobs/{job_id}", headers=headers).json()["artifact_url"]
    signature = re.search(r"signature=([0-9a-f]+)", link)
    assert signature is not None
    assert client.get(link).status_code == 200
    assert client.get("/v1/jobs/Margaret-Okafor", headers=headers).status_code == 404
    assert client.get("/no/such/Okafor/path?label=Okafor").status_code == 404

    lines = access.lines
    assert len(lines) == 5
    assert [(x["method"], x["route"], x["status"]) for x in lines] == [
        ("POST", "/v1/jobs", 202),
        ("GET", "/v1/jobs/{job_id}", 200),
        ("GET", "/v1/artifacts/{job_id}", 200),
        ("GET", "/v1/jobs/{job_id}", 404),
        ("GET", "unmatched", 404),
    ]
    assert [x["job_id"] for x in lines] == [job_id, job_id, job_id, None, None]
    assert lines[2]["bytes"] > 1000 and all(x["seconds"] >= 0 for x in lines)
    everything = json.dumps(lines)
    for private in ("Okafor", "Margaret", "payout", signature.group(1), key, "expires", "?"):
        assert private not in everything, private


def test_the_access_log_can_be_turned_off(
    api: tuple[TestClient, dict[str, str]], services: Services, access: Lines
) -> None:
    services.settings = replace(services.settings, access_log=False)
    client = TestClient(create_app(services))
    assert client.get("/healthz").status_code == 200
    assert access.lines == []


# --- Prefer: respond-async --------------------------------------------------------------------


def test_respond_async_answers_at_once_even_beside_wait(
    api: tuple[TestClient, dict[str, str]], tmp_path: Path
) -> None:
    client, headers = api
    answer = client.post(
        "/v1/jobs",
        headers={**headers, "Prefer": "respond-async, wait=30"},
        files={"file": ("x.png", png_bytes(tmp_path))},
    )
    # no worker runs here: with wait honoured this would hold 30 s and still answer 202
    assert answer.status_code == 202 and answer.headers["preference-applied"] == "respond-async"
    assert answer.json()["state"] == "accepted"
    waited = client.post(
        "/v1/jobs",
        headers={**headers, "Prefer": "wait=0.1"},
        files={"file": ("x.png", png_bytes(tmp_path))},
    )
    assert waited.headers["preference-applied"] == "wait=0.1"


# --- templates: the list, the policy, a broken one --------------------------------------------


def _brand(root: Path, name: str, body: str | None = None) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "template.toml").write_text(body or f'name = "{name}"\nversion = "1"\n')


@pytest.fixture
def brands(services: Services, tmp_path: Path) -> Path:
    root = tmp_path / "brands"
    _brand(root, "acme-brand")
    _brand(root, "globex-brand")
    _brand(root, "broken", 'name = "broken"\nversion = "1"\n[header]\nheight = "tall"\n')
    services.settings = replace(services.settings, template_dirs=(root,))
    return root


def _names(client: TestClient, key: str) -> set[str]:
    answer = client.get("/v1/templates", headers={"Authorization": f"Bearer {key}"})
    assert answer.status_code == 200, answer.text
    return {t["name"] for t in answer.json()["templates"]}


def test_templates_listed_as_the_policy_allows(services: Services, brands: Path) -> None:
    client = TestClient(create_app(services))
    now = services.clock()
    acme = services.store.tenancy.create_key("acme", now=now)
    globex = services.store.tenancy.create_key("globex", now=now)
    builtin = {"plain", "sample"}
    everything = builtin | {"acme-brand", "globex-brand", "broken"}
    # nobody has a list yet: every template, under either policy
    assert _names(client, globex) == everything
    services.store.tenancy.allow_templates("acme", ["acme-brand", "plain"], now=now)
    assert _names(client, acme) == {"acme-brand", "plain"}
    # globex has no list: the built-in templates only, and acme's brand is refused by name
    assert _names(client, globex) == builtin
    refused = post(client, {"Authorization": f"Bearer {globex}"}, b"", template="acme-brand")
    assert refused.status_code == 400 and refused.json()["code"] == "UNKNOWN_TEMPLATE"
    services.settings = replace(services.settings, template_policy="open")
    assert _names(client, globex) == everything
    listed = client.get("/v1/templates", headers={"Authorization": f"Bearer {globex}"}).json()
    broken = next(t for t in listed["templates"] if t["name"] == "broken")
    assert broken == {"name": "broken", "usable": False, "code": "BAD_TEMPLATE"}
    plain = next(t for t in listed["templates"] if t["name"] == "plain")
    assert plain["builtin"] is True and plain["identity"].startswith("plain@1+")
    assert client.get("/v1/templates").status_code == 401


def test_a_broken_template_is_refused_at_the_door_as_bad_template(
    services: Services, brands: Path, tmp_path: Path
) -> None:
    client = TestClient(create_app(services))
    key = services.store.tenancy.create_key("acme", now=services.clock())
    answer = post(
        client, {"Authorization": f"Bearer {key}"}, png_bytes(tmp_path), template="broken"
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["code"] == "BAD_TEMPLATE"
    assert "height" in answer.json()["detail"]
    assert services.store.stats.counts() == {}
    shutil.rmtree(brands / "broken")


def test_the_dashboard_sends_the_desks_security_headers(
    api: tuple[TestClient, dict[str, str]],
) -> None:
    client, _ = api
    answer = client.get("/dashboard")
    assert answer.status_code == 200
    csp = answer.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp and "unsafe" not in csp
    assert re.search(r"style-src 'sha256-[A-Za-z0-9+/]+={0,2}';", csp), csp
    assert "frame-ancestors 'none'" in csp
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["cache-control"] == "no-store"


# --- webhook payloads -------------------------------------------------------------------------


def test_a_completed_jobs_webhook_carries_an_rfc3339_time_a_live_link_and_the_digest(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    from pressroom.notify.webhooks import deliver_due

    services.settings = replace(services.settings, webhook_allow_private=True)
    client, headers = api
    receiver = Receiver(status=200)
    try:
        scan = png_bytes(tmp_path)
        job_id = post(client, headers, scan, webhook_url=receiver.url).json()["id"]
        work(services)
        clock.advance(2 * services.settings.link_ttl_s)  # a link signed at publish would be dead
        assert deliver_due(services, "w", base_url="http://pressroom.test:8080") == 1
        event = json.loads(receiver.received[-1][1])
    finally:
        receiver.close()
    assert event["type"] == "job.completed"
    sent_at = datetime.fromisoformat(event["timestamp"])
    assert event["timestamp"].endswith("Z") and sent_at.tzinfo is not None
    data = event["data"]
    assert (data["id"], data["state"]) == (job_id, "complete")
    link = urlsplit(data["artifact_url"])
    assert (link.scheme, link.netloc, link.path) == (
        "http",
        "pressroom.test:8080",
        f"/v1/artifacts/{job_id}",
    )
    got = client.get(f"{link.path}?{link.query}")  # signed at send time: alive now
    assert got.status_code == 200
    assert data["artifact_sha256"] == hashlib.sha256(got.content).hexdigest()
    assert "signature" not in json.dumps(
        services.store.outbox.claim_deliveries("x", now=clock(), lease_s=1)
    )


def test_a_rejected_jobs_webhook_has_no_link(
    api: tuple[TestClient, dict[str, str]], services: Services
) -> None:
    from pressroom.notify.webhooks import deliver_due

    services.settings = replace(services.settings, webhook_allow_private=True)
    client, headers = api
    receiver = Receiver(status=200)
    try:
        post(client, headers, b"%PDF-1.7\n%broken", webhook_url=receiver.url)
        work(services)
        assert deliver_due(services, "w", base_url="http://pressroom.test") == 1
        data = json.loads(receiver.received[-1][1])["data"]
    finally:
        receiver.close()
    assert data["state"] == "rejected" and data["reason"] == "CORRUPT"
    assert "artifact_url" not in data and data["artifact_sha256"] is None


def test_the_templates_command_says_what_the_policy_leaves_a_tenant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pressroom.cli import main

    brands = tmp_path / "brands"
    _brand(brands, "acme-brand")
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PRESSROOM_TEMPLATE_DIRS", str(brands))
    assert main(["templates", "allow", "--tenant", "acme", "acme-brand"]) == 0
    capsys.readouterr()
    assert main(["templates", "--tenant", "globex"]) == 0
    out = capsys.readouterr().out
    assert "the built-in templates only" in out
    assert "acme-brand" not in out and "plain@1+" in out
    monkeypatch.setenv("PRESSROOM_TEMPLATE_POLICY", "open")
    assert main(["templates", "--tenant", "globex"]) == 0
    out = capsys.readouterr().out
    assert "every template is allowed" in out and "acme-brand@1+" in out
