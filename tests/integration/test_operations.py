"""Operations in process: verification, deadlines, admission, Prefer: wait, redrive, operator
keys, trace ids. HTTP through FastAPI's test client, jobs run by a real JobRunner."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from PIL import Image

from pressroom.app import create_app
from pressroom.jobs.admission import Admission
from pressroom.jobs.model import Lane
from pressroom.service import Services
from pressroom.synth import image_pdf
from pressroom.testing import FakeOcrEngine
from pressroom.verify import HttpVerifier
from pressroom.worker.runner import JobRunner
from tests.conftest import FakeClock
from tests.helpers import small_scan
from tests.hookservers import http_serving
from tests.integration.test_service import png_bytes, post, work


@pytest.fixture
def api(services: Services) -> tuple[TestClient, dict[str, str]]:
    key = services.store.tenancy.create_key("acme", now=services.clock())
    # the embedded default: the service's own host talks to it over loopback
    local = TestClient(create_app(services), client=("127.0.0.1", 50000))
    return local, {"Authorization": f"Bearer {key}"}


def job(client: TestClient, headers: dict[str, str], job_id: str) -> dict[str, Any]:
    body: dict[str, Any] = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    return body


# --- verification -------------------------------------------------------------------------------


def test_registry_allows_active_customers_and_rejects_others_without_retry(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    services.store.tenancy.set_customer("acme", "cust-1", status="active", now=0)
    services.store.tenancy.set_customer("acme", "cust-2", status="suspended", now=0)
    ok = post(client, headers, png_bytes(tmp_path), customer="cust-1").json()["id"]
    own = post(client, headers, png_bytes(tmp_path)).json()["id"]  # no customer: the tenant
    suspended = post(client, headers, png_bytes(tmp_path), customer="cust-2").json()["id"]
    unknown = post(client, headers, png_bytes(tmp_path), customer="cust-3").json()["id"]
    work(services)
    for job_id in (ok, own):
        body = job(client, headers, job_id)
        assert (body["state"], body["verification"]) == ("complete", "allowed")
    for job_id in (suspended, unknown):
        body = job(client, headers, job_id)
        assert (body["state"], body["reason"], body["attempts"]) == (
            "rejected",
            "UNAUTHORIZED_CUSTOMER",
            1,
        )
        assert body["verification"] == "denied"
        assert "verify" in body["timings"] and "fetch" not in body["timings"]
    # another tenant's registry does not count
    services.store.tenancy.set_customer("globex", "cust-9", status="active", now=0)
    other = post(client, headers, png_bytes(tmp_path), customer="cust-9").json()["id"]
    work(services)
    assert job(client, headers, other)["reason"] == "UNAUTHORIZED_CUSTOMER"


@dataclass
class IdentityService:
    """A stand-in identity service: answers allow or deny by customer, or stalls."""

    decisions: dict[str, str] = field(default_factory=dict)
    stall_s: float = 0.0
    calls: list[dict[str, Any]] = field(default_factory=list)
    in_flight: int = 0
    most_in_flight: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


@pytest.fixture
def identity() -> Iterator[tuple[IdentityService, str]]:
    state = IdentityService()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with state.lock:
                state.calls.append(body)
                state.in_flight += 1
                state.most_in_flight = max(state.most_in_flight, state.in_flight)
            try:
                time.sleep(state.stall_s)
                answer = json.dumps({"decision": state.decisions.get(body["customer"], "deny")})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(answer.encode())
            except OSError:
                pass
            finally:
                with state.lock:
                    state.in_flight -= 1

        def log_message(self, *_args: object) -> None:
            pass

    with http_serving(Handler, "/verify") as url:
        yield state, url


def test_http_verifier_allow_deny_and_timeout(
    api: tuple[TestClient, dict[str, str]],
    services: Services,
    tmp_path: Path,
    identity: tuple[IdentityService, str],
    clock: FakeClock,
) -> None:
    client, headers = api
    state, url = identity
    services.verifier = HttpVerifier(url, timeout_s=0.5, concurrency=2, rate_per_s=50)
    state.decisions = {"c-allow": "allow", "c-deny": "deny"}
    allowed = post(client, headers, png_bytes(tmp_path), customer="c-allow").json()["id"]
    denied = post(client, headers, png_bytes(tmp_path), customer="c-deny").json()["id"]
    work(services)
    assert job(client, headers, allowed)["state"] == "complete"
    body = job(client, headers, denied)
    assert (body["state"], body["reason"], body["attempts"]) == (
        "rejected",
        "UNAUTHORIZED_CUSTOMER",
        1,
    )
    assert {"tenant": "acme", "customer": "c-allow"} in state.calls
    # a stalled service: a timeout is transient — retried with backoff, then it succeeds
    state.stall_s = 2.0
    slow = post(client, headers, png_bytes(tmp_path), customer="c-allow").json()["id"]
    work(services)
    body = job(client, headers, slow)
    assert (body["state"], body["reason"]) == ("retrying", "VERIFIER_UNAVAILABLE")
    state.stall_s = 0.0
    clock.advance(3600)
    work(services)
    body = job(client, headers, slow)
    assert (body["state"], body["attempts"]) == ("complete", 2)


def test_http_verifier_pool_is_bounded(identity: tuple[IdentityService, str]) -> None:
    state, url = identity
    state.decisions = {"c": "allow"}
    state.stall_s = 0.2
    verifier = HttpVerifier(url, timeout_s=5, concurrency=2, rate_per_s=1000)
    threads = [
        threading.Thread(target=verifier.verify, args=("t", "c"), kwargs={"timeout": None})
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(state.calls) == 8 and state.most_in_flight == 2


def test_rate_limit_spaces_calls_on_its_clock() -> None:
    from pressroom.verify import TokenBucket

    now = [0.0]
    starts: list[float] = []

    def sleep(seconds: float) -> None:
        now[0] += seconds

    bucket = TokenBucket(rate=20, burst=1, clock=lambda: now[0], sleep=sleep)
    for _ in range(6):
        assert bucket.take(deadline=None)
        starts.append(now[0])
    # a burst of one, then one call per 50 ms
    assert starts == pytest.approx([0.0, 0.05, 0.1, 0.15, 0.2, 0.25])
    # a token that would come after the deadline is refused, not waited for
    assert not bucket.take(deadline=now[0] + 0.01)


# --- deadlines ---------------------------------------------------------------------------------


@dataclass
class SlowEngine(FakeOcrEngine):
    seconds: float = 0.4

    def recognize(self, image: Image.Image, **kwargs: Any) -> Any:
        time.sleep(self.seconds)
        return super().recognize(image, **kwargs)


def test_a_deadline_that_expires_mid_stage_ends_the_job(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    # admission believes the job fits (a fast prior); the slow engine then proves it wrong
    services.admission = Admission(prior_pages_per_min=6000)
    pages = [small_scan(seed=s, dpi=100, lines=2).image for s in range(6)]
    src = image_pdf(pages, tmp_path / "six.pdf", 100)
    job_id = post(client, headers, src.read_bytes(), deadline="1").json()["id"]
    engine = SlowEngine(lines=("Waiver signed by the participant",))
    runner = JobRunner(services, engine, "w1")
    runner.run_next((Lane.BULK,))
    body = job(client, headers, job_id)
    assert (body["state"], body["reason"], body["attempts"]) == (
        "rejected",
        "DEADLINE_EXCEEDED",
        1,
    )
    # it stopped inside OCR, not after reading all six pages
    assert 0 < len(engine.calls) < 6
    assert services.store.stats.event_counts()[("deadline_miss", "bulk", "DEADLINE_EXCEEDED")] == 1
    assert list(services.settings.scratch_dir.iterdir()) == []


def test_a_job_claimed_after_its_deadline_does_no_work(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    client, headers = api
    job_id = post(client, headers, png_bytes(tmp_path), deadline="5").json()["id"]
    clock.advance(10)
    engine = FakeOcrEngine()
    JobRunner(services, engine, "w1").run_next((Lane.BULK,))
    assert job(client, headers, job_id)["reason"] == "DEADLINE_EXCEEDED"
    assert engine.calls == []


def test_every_job_gets_a_deadline_from_its_lane(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    bulk = post(client, headers, png_bytes(tmp_path)).json()
    quick = post(client, headers, png_bytes(tmp_path), lane="interactive").json()
    now = services.clock()
    assert bulk["deadline_at"] == pytest.approx(now + 24 * 3600)
    assert quick["deadline_at"] == pytest.approx(now + 120 + 10)  # 1 page


# --- admission ---------------------------------------------------------------------------------


def test_work_that_cannot_finish_in_time_is_refused_with_retry_after(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    # the prior: 20 pages/min per worker, one worker → 3 s per page
    pages = [small_scan(seed=s, dpi=100, lines=2).image for s in range(10)]
    ten = image_pdf(pages, tmp_path / "ten.pdf", 100).read_bytes()
    assert post(client, headers, ten, deadline="3600").status_code == 202  # 30 s of work
    refused = post(client, headers, png_bytes(tmp_path), deadline="20")  # 33 s > 20 s
    assert refused.status_code == 429
    assert refused.json()["code"] == "OVERLOADED"
    assert int(refused.headers["Retry-After"]) == 30  # the ten pages ahead drain
    # a second worker halves the estimate: 5 s + 10 pages x 3 s / 2 = 16.5 s fits in 20 s
    services.store.stats.worker_seen("w-a", ("bulk",), now=services.clock())
    services.store.stats.worker_seen("w-b", ("bulk",), now=services.clock())
    assert post(client, headers, png_bytes(tmp_path), deadline="20").status_code == 202
    # the other lane has its own queue
    assert (
        post(client, headers, png_bytes(tmp_path), lane="interactive", deadline="5").status_code
        == 202
    )
    assert services.store.stats.event_counts()[("refused", "bulk", "OVERLOADED")] == 1
    assert services.store.stats.counts()[("bulk", "accepted")] == 2  # the refused one left nothing


def test_measured_throughput_replaces_the_prior(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    from pressroom.jobs.admission import estimate

    client, headers = api
    for _ in range(6):
        post(client, headers, png_bytes(tmp_path))
    work(services)
    now = services.clock()
    guess = estimate(services.store.stats, services.admission, Lane.BULK, 100, tenant="t", now=now)
    measured = services.store.stats.seconds_per_page(since=now - 3600)
    # the six pages' recorded process seconds decide, not the prior's 3 s a page
    assert measured is not None and measured[1] == 6
    assert guess.measured and guess.seconds_per_page == measured[0]


def test_lane_cap_and_tenant_quotas(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    services.admission = Admission(
        queue_cap={"bulk": 2, "interactive": 10}, tenant_max_active=3, tenant_pages_per_hour=4
    )
    assert post(client, headers, png_bytes(tmp_path)).status_code == 202
    assert post(client, headers, png_bytes(tmp_path)).status_code == 202
    full = post(client, headers, png_bytes(tmp_path))
    assert (full.status_code, full.json()["code"]) == (429, "OVERLOADED")
    assert post(client, headers, png_bytes(tmp_path), lane="interactive").status_code == 202
    busy = post(client, headers, png_bytes(tmp_path), lane="interactive")
    assert (busy.status_code, busy.json()["code"]) == (429, "QUOTA_EXCEEDED")
    work(services)  # nothing active now, but 3 pages this hour of 4
    assert post(client, headers, png_bytes(tmp_path), lane="interactive").status_code == 202
    hourly = post(client, headers, png_bytes(tmp_path), lane="interactive")
    assert hourly.json()["code"] == "QUOTA_EXCEEDED"
    assert 3500 <= int(hourly.headers["Retry-After"]) <= 3600
    # quotas are per tenant
    other = services.store.tenancy.create_key("globex", now=0)
    assert (
        post(
            client, {"Authorization": f"Bearer {other}"}, png_bytes(tmp_path), lane="interactive"
        ).status_code
        == 202
    )


# --- Prefer: wait, trace ids, redrive, operator keys --------------------------------------------


def test_prefer_wait_answers_200_when_the_job_finishes_in_time(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    stop = threading.Event()

    def worker() -> None:
        runner = JobRunner(services, FakeOcrEngine(), "w1")
        while not stop.is_set():
            if runner.run_next((Lane.INTERACTIVE,)) is None:
                time.sleep(0.05)

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        quick = client.post(
            "/v1/jobs",
            headers={**headers, "Prefer": "wait=20"},
            files={"file": ("x", png_bytes(tmp_path))},
            data={"lane": "interactive"},
        )
        assert quick.status_code == 200 and quick.json()["state"] == "complete"
        assert quick.json()["artifact_url"] and quick.headers["Preference-Applied"] == "wait=20"
    finally:
        stop.set()
        thread.join()
    # nobody works the bulk lane: after the wait, the usual 202
    slow = client.post(
        "/v1/jobs",
        headers={**headers, "Prefer": "wait=1"},
        files={"file": ("x", png_bytes(tmp_path))},
    )
    assert slow.status_code == 202 and slow.json()["state"] == "accepted"
    assert slow.headers["Preference-Applied"] == "wait=1"


def test_incoming_traceparent_becomes_the_jobs_trace_id(
    api: tuple[TestClient, dict[str, str]], tmp_path: Path
) -> None:
    client, headers = api
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    sent = client.post(
        "/v1/jobs",
        headers={**headers, "traceparent": f"00-{trace}-00f067aa0ba902b7-01"},
        files={"file": ("x", png_bytes(tmp_path))},
    ).json()
    assert sent["trace_id"] == trace
    assert job(client, headers, sent["id"])["trace_id"] == trace
    fresh = post(client, headers, png_bytes(tmp_path)).json()["trace_id"]
    bad = client.post(
        "/v1/jobs",
        headers={**headers, "traceparent": "garbage"},
        files={"file": ("x", png_bytes(tmp_path))},
    ).json()["trace_id"]
    assert len(fresh) == 32 and len(bad) == 32 and fresh != bad != trace


def test_operator_redrives_a_dead_letter_and_tenants_cannot(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    services.store.tenancy.set_customer("acme", "late", status="suspended", now=0)
    job_id = post(client, headers, png_bytes(tmp_path), customer="late").json()["id"]
    work(services)
    assert job(client, headers, job_id)["reason"] == "UNAUTHORIZED_CUSTOMER"
    assert client.post(f"/v1/jobs/{job_id}/retry", headers=headers).status_code == 403
    assert client.post(f"/v1/jobs/{job_id}/retry").status_code == 401
    op_key = services.store.tenancy.create_key("ops", now=0, role="operator")
    op = {"Authorization": f"Bearer {op_key}"}
    # the cause is fixed (through the admin endpoint), then the job is sent round again
    fixed = client.post("/v1/customers", headers=op, json={"tenant": "acme", "id": "late"})
    assert fixed.status_code == 201 and fixed.json()["status"] == "active"
    again = client.post(f"/v1/jobs/{job_id}/retry", headers=op)
    assert again.status_code == 200 and again.json()["state"] == "accepted"
    work(services)
    assert job(client, headers, job_id)["state"] == "complete"
    # a complete job is never sent round again
    assert client.post(f"/v1/jobs/{job_id}/retry", headers=op).status_code == 409
    assert client.post("/v1/jobs/nope/retry", headers=op).status_code == 404
    # operator keys are not tenant keys
    assert client.get(f"/v1/jobs/{job_id}", headers=op).status_code == 401


def test_metrics_off_loopback_need_an_operator_key(services: Services, tmp_path: Path) -> None:
    app = create_app(services)
    remote = TestClient(app, client=("203.0.113.9", 50000))
    tenant_key = services.store.tenancy.create_key("acme", now=0)
    op_key = services.store.tenancy.create_key("ops", now=0, role="operator")
    assert remote.get("/metrics").status_code == 401
    assert (
        remote.get("/metrics", headers={"Authorization": f"Bearer {tenant_key}"}).status_code == 403
    )
    assert remote.get("/metrics", headers={"Authorization": f"Bearer {op_key}"}).status_code == 200
    for peer in ("127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"):  # loopback: open
        assert TestClient(app, client=(peer, 50000)).get("/metrics").status_code == 200
    # a name is no address: "localhost" or "testclient" as a peer proves nothing
    for peer in ("localhost", "testclient", "::ffff:203.0.113.9"):
        assert TestClient(app, client=(peer, 50000)).get("/metrics").status_code == 401
    # a forged proxy header changes nothing: the socket peer decides
    forged = {
        "X-Forwarded-For": "127.0.0.1",
        "X-Real-IP": "127.0.0.1",
        "Forwarded": "for=127.0.0.1",
    }
    assert remote.get("/metrics", headers=forged).status_code == 401
    assert remote.get("/dashboard", headers=forged).status_code == 401
    # behind trusted proxies every address may be a forwarded one: nothing is open without a key
    from dataclasses import replace

    services.settings = replace(services.settings, trusted_proxies=("10.0.0.0/8",))
    local = TestClient(app, client=("127.0.0.1", 50000))
    assert local.get("/metrics").status_code == 401
    assert local.get("/metrics", headers={"Authorization": f"Bearer {op_key}"}).status_code == 200


def test_serve_believes_proxy_headers_only_from_the_proxies_named() -> None:
    from pressroom.cli.service import server_config
    from pressroom.settings import Settings

    plain = server_config(object(), "127.0.0.1", 8080, Settings())
    assert plain.proxy_headers is False
    named = server_config(object(), "0.0.0.0", 8080, Settings(trusted_proxies=("10.1.2.3",)))
    assert named.proxy_headers is True and named.forwarded_allow_ips == "10.1.2.3"


# --- metrics -----------------------------------------------------------------------------------


def test_metrics_cover_queues_stages_retries_dead_letters_deadlines_refusals_and_scratch(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    from prometheus_client.parser import text_string_to_metric_families

    client, headers = api
    services.admission = Admission(prior_pages_per_min=600)
    services.store.tenancy.set_customer("acme", "gone", status="suspended", now=0)
    post(client, headers, png_bytes(tmp_path))  # completes
    clock.advance(1)
    post(client, headers, png_bytes(tmp_path), customer="gone")  # dead letter
    clock.advance(1)
    post(client, headers, png_bytes(tmp_path), deadline="5")  # misses its deadline
    post(client, headers, png_bytes(tmp_path), lane="interactive")  # waits
    services.admission = Admission(600, queue_cap={"bulk": 0, "interactive": 10})
    assert post(client, headers, png_bytes(tmp_path)).status_code == 429  # refused
    runner = JobRunner(services, FakeOcrEngine(), "w1")
    runner.run_next((Lane.BULK,))
    runner.run_next((Lane.BULK,))
    clock.advance(10)
    runner.run_next((Lane.BULK,))
    # a lease that lapses is a retry with its reason
    services.store.queue.claim((Lane.INTERACTIVE,), "w-dead", now=clock(), lease_s=1)
    clock.advance(5)
    services.store.queue.rescue_expired(now=clock(), policy=services.retry)

    samples: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(client.get("/metrics").text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append((sample.labels, sample.value))

    def value(name: str, **labels: str) -> float:
        found = [v for lab, v in samples[name] if all(lab.get(k) == x for k, x in labels.items())]
        assert found, (name, labels, samples.get(name))
        return sum(found)

    assert value("pressroom_jobs", lane="bulk", state="complete") == 1
    assert value("pressroom_queue_oldest_age_seconds", lane="interactive", state="retrying") > 0
    assert value("pressroom_dead_letters_total", lane="bulk", reason="UNAUTHORIZED_CUSTOMER") == 1
    assert value("pressroom_dead_letters_total", lane="bulk", reason="DEADLINE_EXCEEDED") == 1
    assert value("pressroom_deadline_misses_total", lane="bulk") == 1
    assert value("pressroom_retries_total", lane="interactive", reason="LEASE_EXPIRED") == 1
    assert value("pressroom_admission_refusals_total", lane="bulk", reason="OVERLOADED") == 1
    assert value("pressroom_job_attempts_total", lane="bulk") == 3
    assert value("pressroom_review_jobs") == 0
    for stage in ("verify", "fetch", "ocr", "render", "check", "publish"):
        assert value("pressroom_stage_duration_seconds_count", stage=stage) >= 1, stage
    assert value("pressroom_stage_duration_seconds_bucket", stage="verify", le="+Inf") >= 1
    assert value("pressroom_queue_wait_seconds_count") == 3  # per attempt a runner started
    assert value("pressroom_scratch_lifetime_seconds_count") == 3
    assert value("pressroom_pages_per_minute_per_core") > 0  # one job completed this hour
    assert value("pressroom_scratch_bytes") == 0
    assert (
        value("pressroom_scratch_disk_size_bytes") > value("pressroom_scratch_disk_free_bytes") > 0
    )
    assert "pressroom_workers" in samples


# --- tracing -----------------------------------------------------------------------------------


def test_spans_continue_the_callers_trace_through_accept_job_and_stages(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from pressroom import tracing

    exporter = InMemorySpanExporter()
    tracing.configure(exporter)
    try:
        client, headers = api
        trace = "0af7651916cd43dd8448eb211c80319c"
        caller = "b7ad6b7169203331"
        sent = client.post(
            "/v1/jobs",
            headers={**headers, "traceparent": f"00-{trace}-{caller}-01"},
            files={"file": ("x", png_bytes(tmp_path))},
        ).json()
        work(services)
    finally:
        tracing.shutdown()
    assert sent["trace_id"] == trace
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert {
        "accept",
        "job",
        "verify",
        "fetch",
        "process",
        "ocr",
        "render",
        "check",
        "publish",
    } <= set(spans)
    assert all(format(s.context.trace_id, "032x") == trace for s in exporter.get_finished_spans())
    accept, job_span = spans["accept"], spans["job"]
    assert accept.parent is not None and format(accept.parent.span_id, "016x") == caller
    assert job_span.parent is not None and job_span.parent.span_id == accept.context.span_id
    for stage in ("verify", "fetch", "process", "publish"):
        parent = spans[stage].parent
        assert parent is not None and parent.span_id == job_span.context.span_id
    ocr_parent = spans["ocr"].parent
    assert ocr_parent is not None and ocr_parent.span_id == spans["process"].context.span_id
    assert job_span.attributes is not None and job_span.attributes["pressroom.job_id"] == sent["id"]


def test_alerting_rules_name_only_metrics_we_export(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    import re

    import yaml

    client, headers = api
    post(client, headers, png_bytes(tmp_path))
    work(services)  # so every histogram has a series
    exported: set[str] = set()
    # counters are typed under their _total name already
    suffixes = {"counter": ("",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}
    for line in client.get("/metrics").text.splitlines():
        if line.startswith("# TYPE "):  # a family, with or without samples yet
            _hash, _type, name, kind = line.split()
            exported |= {name + suffix for suffix in suffixes[kind]}
    rules_file = Path(__file__).parents[2] / "deploy" / "prometheus" / "pressroom-rules.yml"
    rules = yaml.safe_load(rules_file.read_text())["groups"][0]["rules"]
    names = {r["alert"] for r in rules}
    assert {
        "PressroomQueueDepthRising",
        "PressroomDeadLetterRate",
        "PressroomScratchDiskNearFull",
        "PressroomScratchLifetimeAboveSLA",
        "PressroomDeadlineMisses",
    } <= names
    for rule in rules:
        assert rule["labels"]["severity"] in ("info", "warning", "critical")
        assert rule["annotations"]["summary"]
        used = set(re.findall(r"\bpressroom_[a-z_]+", rule["expr"]))
        assert used and used <= exported, (rule["alert"], used - exported)


# --- found in review ----------------------------------------------------------------------------


def test_a_redriven_job_gets_its_time_allowance_again(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    client, headers = api
    services.store.tenancy.set_customer("acme", "late", status="suspended", now=0)
    job_id = post(client, headers, png_bytes(tmp_path), lane="interactive", customer="late").json()[
        "id"
    ]
    work(services)
    clock.advance(2 * 24 * 3600)  # the operator fixes it two days later
    services.store.tenancy.set_customer("acme", "late", status="active", now=clock())
    assert services.store.queue.redrive(job_id, now=clock())
    body = job(client, headers, job_id)
    assert body["deadline_at"] == pytest.approx(clock() + 130)  # 120 s + 10 s a page, from now
    work(services)
    assert job(client, headers, job_id)["state"] == "complete"


@pytest.mark.parametrize("deadline", ["inf", "nan", "1e999", "-5", "0", "9999999999"])
def test_deadlines_must_be_finite_and_sane(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path, deadline: str
) -> None:
    client, headers = api
    response = post(client, headers, png_bytes(tmp_path), deadline=deadline)
    assert (response.status_code, response.json()["code"]) == (400, "BAD_REQUEST")
    assert services.store.stats.counts() == {}


def test_malformed_fields_are_400_not_500(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    long_key = client.post(
        "/v1/jobs",
        headers={**headers, "Idempotency-Key": "k" * 300},
        files={"file": ("x", png_bytes(tmp_path))},
    )
    assert long_key.status_code == 400
    nul = post(client, headers, png_bytes(tmp_path), title="a\x00b")
    assert nul.status_code == 400
    op_key = services.store.tenancy.create_key("ops", now=0, role="operator")
    op = {"Authorization": f"Bearer {op_key}"}
    bad_tenant = client.post("/v1/customers", headers=op, json={"tenant": "a/b", "id": "c"})
    assert bad_tenant.status_code == 400
    assert services.store.stats.counts() == {} and list(services.blobs.list("sources")) == []


def test_work_that_can_never_fit_is_refused_for_good_not_429(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    pages = [small_scan(seed=s, dpi=100, lines=2).image for s in range(10)]
    ten = image_pdf(pages, tmp_path / "ten.pdf", 100).read_bytes()
    # 10 pages x 3 s (the prior) = 30 s alone, deadline 20 s, nothing queued ahead
    never = post(client, headers, ten, deadline="20")
    assert (never.status_code, never.json()["code"]) == (422, "DEADLINE_EXCEEDED")
    assert "Retry-After" not in never.headers
    services.admission = Admission(tenant_pages_per_hour=5)
    too_big = post(client, headers, ten)
    assert (too_big.status_code, too_big.json()["code"]) == (413, "QUOTA_EXCEEDED")
    assert services.store.stats.counts() == {}


def test_a_worker_that_lost_its_lease_publishes_nothing(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    import dataclasses

    client, headers = api
    services.settings = dataclasses.replace(services.settings, lease_s=0.3)
    services.admission = Admission(prior_pages_per_min=6000)
    pages = [small_scan(seed=s, dpi=100, lines=2).image for s in range(4)]
    job_id = post(
        client, headers, image_pdf(pages, tmp_path / "four.pdf", 100).read_bytes()
    ).json()["id"]
    engine = SlowEngine(lines=("Waiver signed by the participant",), seconds=0.4)
    runner = JobRunner(services, engine, "slow-worker")

    def rescuer() -> None:  # the worker looks dead to the others: its lease is taken back
        time.sleep(0.3)
        clock.advance(60)
        services.store.queue.rescue_expired(now=clock(), policy=services.retry)

    thread = threading.Thread(target=rescuer)
    thread.start()
    runner.run_next((Lane.BULK,))
    thread.join()
    body = job(client, headers, job_id)
    assert (body["state"], body["reason"]) == ("retrying", "LEASE_EXPIRED")
    assert list(services.blobs.list("artifacts")) == []
    assert list(services.settings.scratch_dir.iterdir()) == []


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_racing_uploads_cannot_overshoot_a_quota(
    request: pytest.FixtureRequest, tmp_path: Path, database: str
) -> None:
    import dataclasses

    from pressroom.service import open_services
    from pressroom.settings import Settings

    settings = Settings(data_dir=tmp_path / "data", scratch_dir=tmp_path / "scratch")
    if database == "postgresql":
        settings = dataclasses.replace(settings, database_url=request.getfixturevalue("pg_url"))
    racing = open_services(settings)
    try:
        racing.admission = Admission(tenant_max_active=3)
        key = racing.store.tenancy.create_key("acme", now=racing.clock())
        app = create_app(racing)
        data = png_bytes(tmp_path)
        barrier = threading.Barrier(8)
        codes: list[int] = []

        def upload() -> None:
            client = TestClient(app)
            barrier.wait()
            codes.append(
                client.post(
                    "/v1/jobs",
                    headers={"Authorization": f"Bearer {key}"},
                    files={"file": ("x", data)},
                ).status_code
            )

        threads = [threading.Thread(target=upload) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(codes) == [202] * 3 + [429] * 5
        assert racing.store.stats.counts() == {("bulk", "accepted"): 3}
        assert len(list(racing.blobs.list("sources"))) == 3  # refused uploads left nothing
    finally:
        racing.store.db.close_listener()
        racing.store.db.engine.dispose()


def test_a_redaction_upload_is_charged_its_text_and_a_plain_one_its_pages(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    from tests import bombs

    client, headers = api
    wordy = bombs.text_bomb(tmp_path / "wordy.pdf", megabytes=0.2)  # one page past the cap
    data = wordy.read_bytes()
    redacted = post(client, headers, data, redact="name").json()["id"]
    plain = post(client, headers, data).json()["id"]
    charged = {j: services.store.queue.get(j) for j in (redacted, plain)}
    assert charged[redacted] is not None and charged[redacted].cost == 1 + 5
    assert charged[plain] is not None and charged[plain].cost == 1
