"""/metrics as Prometheus reads it: counters that never go down when the events behind them are
pruned, every reason at zero before its first event, and HTTP timings by route template."""

from __future__ import annotations

import uuid

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from pressroom.app import create_app
from pressroom.jobs.backoff import RetryPolicy
from pressroom.jobs.model import Lane, NewJob
from pressroom.service import Services
from tests.conftest import FakeClock

pytestmark = pytest.mark.integration

NO_JITTER = RetryPolicy(max_attempts=3, base_s=5, cap_s=60, uniform=lambda a, b: a)
Samples = dict[str, dict[tuple[tuple[str, str], ...], float]]


def scrape(client: TestClient) -> Samples:
    response = client.get("/metrics")
    assert response.status_code == 200
    found: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            found.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[name][tuple(sorted(labels.items()))]


def counters(samples: Samples) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (name, labels): v
        for name, series in samples.items()
        if name.endswith("_total")
        for labels, v in series.items()
    }


def submit(services: Services, lane: Lane = Lane.BULK) -> str:
    job_id = str(uuid.uuid4())
    services.store.queue.insert(
        NewJob(
            id=job_id,
            tenant="acme",
            lane=lane,
            source_key=f"sources/acme/{job_id}/source",
            source_sha256="ab" * 32,
            source_bytes=10,
            kind="pdf",
            template="plain",
        ),
        now=services.clock(),
        max_attempts=3,
    )
    return job_id


def fail_next(services: Services, lane: Lane, code: str, *, permanent: bool) -> None:
    job = services.store.queue.claim((lane,), "w1", now=services.clock(), lease_s=30)
    assert job is not None
    services.store.queue.fail(
        job.id,
        "w1",
        code=code,
        message="scripted",
        permanent=permanent,
        now=services.clock(),
        policy=NO_JITTER,
    )


@pytest.fixture
def client(services: Services) -> TestClient:
    return TestClient(create_app(services), client=("127.0.0.1", 50000))


def test_counters_never_go_down_when_their_events_are_pruned(
    services: Services, client: TestClient, clock: FakeClock
) -> None:
    submit(services)
    fail_next(services, Lane.BULK, "STORAGE_UNAVAILABLE", permanent=False)  # a retry
    submit(services, Lane.INTERACTIVE)
    submit(services, Lane.INTERACTIVE)
    fail_next(services, Lane.INTERACTIVE, "CORRUPT", permanent=True)  # a dead letter
    fail_next(services, Lane.INTERACTIVE, "DEADLINE_EXCEEDED", permanent=True)
    services.store.stats.record_refusal("acme", "bulk", "OVERLOADED", now=clock())
    before = scrape(client)
    assert value(before, "pressroom_retries_total", lane="bulk", reason="STORAGE_UNAVAILABLE") == 1
    assert value(before, "pressroom_dead_letters_total", lane="interactive", reason="CORRUPT") == 1
    assert value(before, "pressroom_job_attempts_total", lane="bulk") == 1
    assert value(before, "pressroom_job_attempts_total", lane="interactive") == 2
    assert value(before, "pressroom_deadline_misses_total", lane="interactive") == 1
    assert (
        value(before, "pressroom_admission_refusals_total", lane="bulk", reason="OVERLOADED") == 1
    )

    clock.advance(40 * 86400)  # past the 30 days of history housekeeping keeps
    assert services.store.retention.prune_history(before=clock() - 30 * 86400) > 0
    assert services.store.stats.event_counts() == {}  # the events are gone...
    after = scrape(client)
    for key, total in counters(before).items():  # ...and no counter fell
        assert counters(after)[key] >= total, key
    assert counters(after) == counters(before)

    # a new event after the prune adds exactly one to its total
    services.store.stats.record_refusal("acme", "bulk", "OVERLOADED", now=clock())
    submit(services)
    fail_next(services, Lane.BULK, "STORAGE_UNAVAILABLE", permanent=False)
    later = scrape(client)
    refusals = ("pressroom_admission_refusals_total", "bulk", "OVERLOADED")
    assert value(later, refusals[0], lane=refusals[1], reason=refusals[2]) == 2
    assert value(later, "pressroom_retries_total", lane="bulk", reason="STORAGE_UNAVAILABLE") == 2
    assert value(later, "pressroom_job_attempts_total", lane="bulk") == 2


def test_a_fresh_store_exports_every_reason_at_zero(client: TestClient) -> None:
    samples = scrape(client)
    for lane in ("bulk", "interactive"):
        for name, reason in (
            ("pressroom_dead_letters_total", "CORRUPT"),
            ("pressroom_dead_letters_total", "INTERNAL_ERROR"),
            ("pressroom_dead_letters_total", "RETRIES_EXHAUSTED"),
            ("pressroom_retries_total", "STORE_UNAVAILABLE"),
            ("pressroom_retries_total", "LEASE_EXPIRED"),
            ("pressroom_admission_refusals_total", "QUOTA_EXCEEDED"),
        ):
            assert value(samples, name, lane=lane, reason=reason) == 0, (name, lane, reason)
        assert value(samples, "pressroom_deadline_misses_total", lane=lane) == 0
        assert value(samples, "pressroom_cancellations_total", lane=lane) == 0


def test_http_durations_are_keyed_by_route_template_never_by_a_job_id(
    services: Services, client: TestClient
) -> None:
    key = services.store.tenancy.create_key("acme", now=services.clock())
    job_id = submit(services)
    answered = client.get(f"/v1/jobs/{job_id}", headers={"Authorization": f"Bearer {key}"})
    assert answered.status_code == 200
    samples = scrape(client)
    durations = samples["pressroom_http_request_duration_seconds_count"]
    assert (
        value(
            samples,
            "pressroom_http_request_duration_seconds_count",
            route="/v1/jobs/{job_id}",
            method="GET",
            status="200",
        )
        >= 1
    )
    assert not [labels for labels in durations if job_id in str(labels)]
    # the store's families are still there beside the process's own
    assert "pressroom_jobs" in samples and "pressroom_dead_letters_total" in samples


def test_every_family_is_named_as_prometheus_expects(client: TestClient) -> None:
    """promtool's rules: counters end in _total, durations are in seconds, one TYPE each."""
    text = client.get("/metrics").text
    typed = [line.split()[2:] for line in text.splitlines() if line.startswith("# TYPE ")]
    names = [name for name, _kind in typed]
    assert len(names) == len(set(names))
    for name, kind in typed:
        assert name.startswith("pressroom_"), name
        if kind == "counter":
            assert name.endswith("_total"), name
        if kind == "histogram":
            assert name.endswith("_seconds"), name
    assert "pressroom_http_request_duration_seconds" in names
