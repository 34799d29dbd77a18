"""The job store contract: what the API and the workers rely on, on every adapter (SQLite,
PostgreSQL and memory: ``tests/contract/conftest.py``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pressroom.errors import (
    DuplicateRow,
    IdempotencyConflict,
    StoreUnavailable,
    TransientError,
)
from pressroom.jobs.backoff import RetryPolicy
from pressroom.jobs.model import JobState, Lane, NewJob
from pressroom.jobs.schema import customers
from pressroom.jobs.transport import Database, make_engine
from pressroom.memstore import MemoryJobStore
from pressroom.orders import JobOrder
from pressroom.service import Services

LEASE = 30.0
NO_JITTER = RetryPolicy(max_attempts=3, base_s=5, cap_s=60, uniform=lambda a, b: a)


def new_job(tenant: str = "acme", lane: Lane = Lane.BULK, **kw: object) -> NewJob:
    job_id = str(uuid.uuid4())
    defaults: dict[str, object] = {
        "id": job_id,
        "tenant": tenant,
        "lane": lane,
        "source_key": f"sources/{tenant}/{job_id}/source",
        "source_sha256": "ab" * 32,
        "source_bytes": 10,
        "kind": "pdf",
        "template": "plain",
    }
    defaults.update(kw)
    return NewJob(**defaults)  # type: ignore[arg-type]


@contextmanager
def sql_statements(store: Any) -> Iterator[list[str] | None]:
    """The SQL statements run inside the block, for the tests that count queries; None on the
    memory store, which runs none (what it answers is checked all the same)."""
    if isinstance(store, MemoryJobStore):
        yield None
        return
    from sqlalchemy import event

    statements: list[str] = []

    def seen(_conn: object, _cursor: object, statement: str, *_rest: object) -> None:
        statements.append(statement)

    event.listen(store.db.engine, "before_cursor_execute", seen)
    try:
        yield statements
    finally:
        event.remove(store.db.engine, "before_cursor_execute", seen)


def test_insert_then_get_scoped_by_tenant(services: Services) -> None:
    store = services.store
    job, created = store.queue.insert(new_job("acme"), now=100.0, max_attempts=4)
    assert created and job.state is JobState.ACCEPTED and job.attempts == 0
    assert store.queue.get(job.id, tenant="acme") == job
    assert store.queue.get(job.id, tenant="other") is None


def test_idempotency_key_replays_the_same_job_and_refuses_a_different_request(
    services: Services,
) -> None:
    store = services.store
    first, created = store.queue.insert(
        new_job(idempotency_key="k1", request_hash="h1"), now=1, max_attempts=4
    )
    again, created_again = store.queue.insert(
        new_job(idempotency_key="k1", request_hash="h1"), now=2, max_attempts=4
    )
    assert created and not created_again and again.id == first.id
    with pytest.raises(IdempotencyConflict):
        store.queue.insert(new_job(idempotency_key="k1", request_hash="h2"), now=3, max_attempts=4)
    # keys are per tenant
    _other, created_other = store.queue.insert(
        new_job("other", idempotency_key="k1", request_hash="h1"), now=4, max_attempts=4
    )
    assert created_other


def test_claim_takes_oldest_eligible_job_of_the_lane_under_a_lease(services: Services) -> None:
    store = services.store
    older, _ = store.queue.insert(new_job(), now=10, max_attempts=4)
    store.queue.insert(new_job(), now=20, max_attempts=4)
    store.queue.insert(new_job(lane=Lane.INTERACTIVE), now=5, max_attempts=4)
    job = store.queue.claim((Lane.BULK,), "w1", now=30, lease_s=LEASE)
    assert job is not None and job.id == older.id
    assert job.state is JobState.RUNNING and job.attempts == 1
    assert job.lease_owner == "w1" and job.lease_expires_at == 30 + LEASE


def test_a_claimed_job_is_not_claimed_twice(services: Services) -> None:
    store = services.store
    store.queue.insert(new_job(), now=1, max_attempts=4)
    assert store.queue.claim((Lane.BULK,), "w1", now=2, lease_s=LEASE) is not None
    assert store.queue.claim((Lane.BULK,), "w2", now=2, lease_s=LEASE) is None


def test_transient_failure_backs_off_then_dead_letters_when_exhausted(services: Services) -> None:
    store = services.store
    job, _ = store.queue.insert(new_job(), now=0, max_attempts=3)
    now = 0.0
    delays = []
    for attempt in (1, 2, 3):
        claimed = store.queue.claim((Lane.BULK,), "w", now=now, lease_s=LEASE)
        assert claimed is not None and claimed.attempts == attempt
        state = store.queue.fail(
            job.id,
            "w",
            code="STORAGE_UNAVAILABLE",
            message="down",
            permanent=False,
            now=now,
            policy=NO_JITTER,
        )
        current = store.queue.get(job.id)
        assert current is not None
        if attempt < 3:
            assert state is JobState.RETRYING
            delays.append(current.next_eligible_at - now)
            assert (
                store.queue.claim((Lane.BULK,), "w", now=now + 1, lease_s=LEASE) is None
            )  # not yet
            now = current.next_eligible_at
        else:
            assert state is JobState.REJECTED
            assert current.reason == "RETRIES_EXHAUSTED"
    assert delays == [5.0, 10.0]


def test_permanent_failure_dead_letters_at_once_with_its_code(services: Services) -> None:
    store = services.store
    job, _ = store.queue.insert(new_job(), now=0, max_attempts=4)
    store.queue.claim((Lane.BULK,), "w", now=1, lease_s=LEASE)
    state = store.queue.fail(
        job.id, "w", code="ENCRYPTED", message="locked", permanent=True, now=2, policy=NO_JITTER
    )
    assert state is JobState.REJECTED
    done = store.queue.get(job.id)
    assert done is not None and done.reason == "ENCRYPTED" and done.attempts == 1


def test_redrive_sends_a_dead_letter_round_again_but_never_a_complete_job(
    services: Services,
) -> None:
    store = services.store
    dead, _ = store.queue.insert(new_job(), now=0, max_attempts=4)
    store.queue.claim((Lane.BULK,), "w", now=1, lease_s=LEASE)
    store.queue.fail(
        dead.id, "w", code="CORRUPT", message="x", permanent=True, now=2, policy=NO_JITTER
    )
    assert not store.queue.redrive(dead.id, now=3, tenant="globex")  # another tenant's: not found
    assert store.queue.redrive(dead.id, now=3)
    again = store.queue.get(dead.id)
    assert again is not None
    assert (again.state, again.attempts, again.reason) == (JobState.ACCEPTED, 0, None)
    claimed = store.queue.claim((Lane.BULK,), "w2", now=4, lease_s=LEASE)
    assert claimed is not None and claimed.id == dead.id and claimed.attempts == 1
    store.queue.complete(
        claimed.id,
        "w2",
        artifact_key="artifacts/a/b/c.pdf",
        artifact_sha256="c" * 64,
        pages=1,
        now=5,
    )
    assert not store.queue.redrive(dead.id, now=6)
    done = store.queue.get(dead.id)
    assert done is not None and done.state is JobState.COMPLETE


def test_expired_lease_is_rescued_as_an_attempt_and_the_old_owner_is_fenced(
    services: Services,
) -> None:
    store = services.store
    job, _ = store.queue.insert(new_job(), now=0, max_attempts=4)
    store.queue.claim((Lane.BULK,), "dead-worker", now=0, lease_s=LEASE)
    assert store.queue.rescue_expired(now=LEASE - 1, policy=NO_JITTER) == 0
    assert store.queue.rescue_expired(now=LEASE + 1, policy=NO_JITTER) == 1
    rescued = store.queue.get(job.id)
    assert rescued is not None and rescued.state is JobState.RETRYING
    assert rescued.reason == "LEASE_EXPIRED"
    again = store.queue.claim((Lane.BULK,), "w2", now=LEASE + 100, lease_s=LEASE)
    assert again is not None and again.attempts == 2
    # the dead worker's late answers change nothing
    assert not store.queue.heartbeat(job.id, "dead-worker", now=LEASE + 101, lease_s=LEASE)
    assert not store.queue.complete(
        job.id,
        "dead-worker",
        artifact_key="a/x.pdf",
        artifact_sha256="0" * 64,
        pages=1,
        now=LEASE + 102,
    )
    assert store.queue.complete(
        job.id, "w2", artifact_key="a/x.pdf", artifact_sha256="0" * 64, pages=1, now=LEASE + 103
    )


def test_heartbeat_keeps_the_lease(services: Services) -> None:
    store = services.store
    job, _ = store.queue.insert(new_job(), now=0, max_attempts=4)
    store.queue.claim((Lane.BULK,), "w", now=0, lease_s=LEASE)
    assert store.queue.heartbeat(job.id, "w", now=25, lease_s=LEASE)
    assert store.queue.rescue_expired(now=50, policy=NO_JITTER) == 0


def test_release_gives_the_job_back_without_spending_an_attempt(services: Services) -> None:
    store = services.store
    job, _ = store.queue.insert(new_job(), now=0, max_attempts=4)
    store.queue.claim((Lane.BULK,), "w", now=0, lease_s=LEASE)
    assert store.queue.release(job.id, "w", now=1)
    again = store.queue.claim((Lane.BULK,), "w2", now=1, lease_s=LEASE)
    assert again is not None and again.attempts == 1


def test_stage_timings_sum_per_stage(services: Services) -> None:
    store = services.store
    job, _ = store.queue.insert(new_job(), now=0, max_attempts=4)
    store.queue.record_timing(job.id, 1, "ocr", 1.5, now=1)
    store.queue.record_timing(job.id, 2, "ocr", 0.5, now=2)
    store.queue.record_timing(job.id, 1, "fetch", 0.1, now=2)
    got = store.queue.get(job.id)
    assert got is not None and got.timings == {"ocr": 2.0, "fetch": 0.1}


def test_scans_are_counted_by_lane_and_outcome(services: Services) -> None:
    store = services.store
    job, _ = store.queue.insert(new_job(), now=0, max_attempts=4)
    store.queue.record_scan(job.id, "unavailable", now=1)
    assert not store.queue.scanned_clean(job.id)  # a scan that did not pass is none
    store.queue.record_scan(job.id, "clean", now=2)
    assert store.queue.scanned_clean(job.id)
    store.queue.record_scan("no-such-job", "found", now=3)  # a job gone meanwhile: nothing
    scans = {k: n for k, n in store.stats.counter_totals().items() if k[0] == "scan"}
    assert scans == {("scan", "bulk", "unavailable"): 1, ("scan", "bulk", "clean"): 1}


def test_counts_and_oldest_waiting_per_lane(services: Services) -> None:
    store = services.store
    store.queue.insert(new_job(), now=10, max_attempts=4)
    store.queue.insert(new_job(), now=20, max_attempts=4)
    store.queue.insert(new_job(lane=Lane.INTERACTIVE), now=30, max_attempts=4)
    store.queue.claim((Lane.BULK,), "w", now=40, lease_s=LEASE)
    assert store.stats.counts() == {
        ("bulk", "running"): 1,
        ("bulk", "accepted"): 1,
        ("interactive", "accepted"): 1,
    }
    assert store.stats.oldest_waiting(now=50) == {"bulk": 30.0, "interactive": 20.0}


def test_keys_are_stored_hashed(services: Services) -> None:
    store = services.store
    key = store.tenancy.create_key("acme", now=0)
    assert store.tenancy.tenant_for_key(key) == "acme"
    assert store.tenancy.tenant_for_key(key + "x") is None
    if isinstance(store, MemoryJobStore):
        stored = store.tenancy.stored_key_hashes()
    else:
        from sqlalchemy import select

        from pressroom.jobs.schema import api_keys

        with store.db.engine.connect() as conn:
            stored = [r[0] for r in conn.execute(select(api_keys.c.key_hash))]
    assert key not in stored and len(stored[0]) == 64


def test_racing_claimers_take_each_job_exactly_once(services: Services) -> None:
    import threading

    store = services.store
    ids = {store.queue.insert(new_job(), now=0, max_attempts=4)[0].id for _ in range(24)}
    taken: list[str] = []
    lock = threading.Lock()

    def claimer(owner: str) -> None:
        while (job := store.queue.claim((Lane.BULK,), owner, now=1, lease_s=LEASE)) is not None:
            with lock:
                taken.append(job.id)

    threads = [threading.Thread(target=claimer, args=(f"w{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == sorted(ids)  # every job once, none twice


def test_the_review_queue_reads_every_jobs_timings_in_one_query(services: Services) -> None:
    store = services.store
    held = []
    for n in range(3):
        job, _ = store.queue.insert(new_job("acme"), now=100.0 + n, max_attempts=4)
        claimed = store.queue.claim((Lane.BULK,), "w", now=200.0 + n, lease_s=LEASE)
        assert claimed is not None and claimed.id == job.id
        store.queue.record_timing(job.id, 1, "ocr", 0.5 + n, now=201.0 + n)
        assert store.queue.hold(job.id, "w", code="REDACTION_LEAK", message="m", now=202.0 + n)
        held.append(job.id)
    with sql_statements(store) as statements:
        queue = store.queue.in_review("acme")
    assert [j.id for j in queue] == held
    assert [j.timings["ocr"] for j in queue] == [0.5, 1.5, 2.5]
    if statements is not None:
        assert sum("job_stage_timings" in s for s in statements) == 1
        assert sum("review_decisions" in s for s in statements) == 1


def test_a_review_decision_is_recorded_with_its_state_change_and_only_then(
    services: Services,
) -> None:
    store = services.store
    decided = []
    for approve in (True, False):
        job, _ = store.queue.insert(new_job("acme"), now=100.0, max_attempts=4)
        assert store.queue.claim((Lane.BULK,), "w", now=101.0, lease_s=LEASE) is not None
        assert store.queue.hold(job.id, "w", code="REDACTION_LEAK", message="m", now=102.0)
        held = store.queue.get(job.id)
        assert held is not None and held.decisions == ()
        # another tenant's decision changes nothing and records nothing
        assert not store.queue.decide_review(
            job.id, "globex", approve=approve, now=103.0, key_id="k_other"
        )
        assert store.queue.decide_review(
            job.id,
            "acme",
            approve=approve,
            now=104.0,
            key_id="k_first",
            detail={"artifact_key": "a/k.pdf"} if approve else {"held_sha256": "ab"},
            artifact_key="a/k.pdf" if approve else None,
        )
        # decided already: a second decision of either kind records nothing more
        for again in (True, False):
            assert not store.queue.decide_review(
                job.id, "acme", approve=again, now=105.0, key_id="k_second"
            )
        decided.append(job.id)
    approved, rejected = (store.queue.get(job_id) for job_id in decided)
    assert approved is not None and rejected is not None
    assert approved.state is JobState.COMPLETE and rejected.state is JobState.REJECTED
    assert [(d.action, d.at, d.key_id) for d in approved.decisions] == [
        ("approve", 104.0, "k_first")
    ]
    assert [(d.action, d.key_id) for d in rejected.decisions] == [("reject", "k_first")]
    recent = store.stats.recent_work(since=0.0).decisions
    assert [(d.job_id, d.action, d.key_id) for d in recent] == [
        (rejected.id, "reject", "k_first"),
        (approved.id, "approve", "k_first"),
    ]


def test_corrections_reopen_a_held_job_once_and_it_shows_as_rebuilding_until_held_again(
    services: Services,
) -> None:
    store = services.store
    sheet = {"pages": [{"width_pt": 612.0, "height_pt": 792.0}], "findings": []}
    job, _ = store.queue.insert(new_job("acme", deadline_s=60.0), now=100.0, max_attempts=4)
    other, _ = store.queue.insert(new_job("globex"), now=100.5, max_attempts=4)
    for n, held in enumerate((job, other)):
        assert store.queue.claim((Lane.BULK,), "w", now=101.0 + n, lease_s=LEASE) is not None
        assert store.queue.hold(
            held.id, "w", code="REDACTION_LEAK", message="m", now=102.0 + n, sheet=sheet
        )
    got = store.queue.get(job.id)
    assert got is not None and got.review_sheet == sheet
    assert [j.id for j in store.queue.in_review(None)] == [job.id, other.id]
    fix = {"removed": [], "manual": [{"page": 1, "box": [1, 2, 30, 40]}], "every": []}
    # another tenant's reviewer changes nothing
    assert not store.queue.reopen_for_corrections(
        job.id, "globex", corrections=fix, counts={"manual": 1}, now=103.0, key_id="k_x"
    )
    assert store.queue.reopen_for_corrections(
        job.id, "acme", corrections=fix, counts={"manual": 1}, now=104.0, key_id="k_a"
    )
    # no longer held: a second apply, an approve or a reject changes nothing
    assert not store.queue.reopen_for_corrections(
        job.id, "acme", corrections=fix, counts={"manual": 1}, now=105.0, key_id="k_a"
    )
    assert not store.queue.decide_review(job.id, "acme", approve=True, now=105.0, key_id="k_a")
    reopened = store.queue.get(job.id)
    assert reopened is not None
    assert (reopened.state, reopened.lane) == (JobState.ACCEPTED, Lane.INTERACTIVE)
    assert reopened.order.to_json()["corrections"] == fix and reopened.artifact_key is None
    # a fresh round: its attempts and its time allowance (60 s) again, from the apply
    assert (reopened.attempts, reopened.deadline_at) == (0, 164.0)
    assert [(d.action, d.key_id) for d in reopened.decisions] == [("apply", "k_a")]
    assert store.queue.in_review("acme") == []
    assert [j.id for j in store.queue.in_review("acme", rebuilding=True)] == [job.id]
    # a job held without a sheet is no rebuild once it runs again
    plain, _ = store.queue.insert(new_job("acme"), now=106.0, max_attempts=4)
    assert [j.id for j in store.queue.in_review("acme", rebuilding=True)] == [job.id]
    claimed = store.queue.claim((Lane.INTERACTIVE,), "w2", now=107.0, lease_s=LEASE)
    assert claimed is not None and claimed.id == job.id
    assert claimed.order.to_json()["corrections"] == fix
    assert store.queue.hold(job.id, "w2", code="CORRECTED", message="ok", now=108.0, sheet=sheet)
    assert [j.reason for j in store.queue.in_review("acme", rebuilding=True)] == ["CORRECTED"]
    assert plain.id not in {j.id for j in store.queue.in_review(None, rebuilding=True)}


def test_a_row_a_unique_key_refuses_leaves_the_store_as_ours_and_changes_nothing(
    services: Services,
) -> None:
    store = services.store
    if isinstance(store, MemoryJobStore):
        pytest.skip("a raw SQL INSERT against a unique index: the memory store has no SQL rows")
    store.tenancy.set_customer("acme", "c1", status="active", now=1)
    with pytest.raises(DuplicateRow), store.db.tx() as conn:
        conn.execute(
            customers.insert().values(
                tenant="acme", customer="c1", status="suspended", created_at=2, updated_at=2
            )
        )
    assert store.tenancy.customer_status("acme", "c1") == "active"


def test_an_unreachable_database_is_store_unavailable_a_transient_error(tmp_path: Path) -> None:
    gone = Database(make_engine(f"sqlite:///{tmp_path / 'no-such-dir' / 'jobs.db'}"))
    with pytest.raises(StoreUnavailable) as caught, gone.tx():
        pass
    assert isinstance(caught.value, TransientError) and caught.value.http_status == 503


def test_counters_are_running_totals_that_a_prune_leaves_alone(services: Services) -> None:
    store = services.store
    job, _ = store.queue.insert(new_job(), now=10, max_attempts=3)
    assert store.queue.claim((Lane.BULK,), "w1", now=11, lease_s=LEASE) is not None
    store.queue.fail(
        job.id,
        "w1",
        code="STORE_UNAVAILABLE",
        message="m",
        permanent=False,
        now=12,
        policy=NO_JITTER,
    )
    store.stats.record_refusal("acme", "interactive", "OVERLOADED", now=13)
    totals = {
        ("attempt", "bulk", "CLAIMED"): 1,
        ("retry", "bulk", "STORE_UNAVAILABLE"): 1,
        ("refused", "interactive", "OVERLOADED"): 1,
    }
    assert store.stats.counter_totals() == totals
    assert store.retention.prune_history(before=100) == 3  # every event
    assert store.stats.event_counts() == {}
    assert store.stats.counter_totals() == totals
    store.stats.record_refusal("acme", "interactive", "OVERLOADED", now=101)
    assert store.stats.counter_totals() == {**totals, ("refused", "interactive", "OVERLOADED"): 2}
    assert store.stats.event_counts() == {("refused", "interactive", "OVERLOADED"): 1}


def test_racing_first_events_of_a_kind_add_up_on_one_counter(services: Services) -> None:
    import threading

    store = services.store

    def refuse() -> None:
        for n in range(10):
            store.stats.record_refusal("acme", "bulk", "QUOTA_EXCEEDED", now=float(n))

    threads = [threading.Thread(target=refuse) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.stats.counter_totals() == {("refused", "bulk", "QUOTA_EXCEEDED"): 60}


def test_an_event_about_a_job_that_is_gone_counts_nothing(services: Services) -> None:
    store = services.store
    if isinstance(store, MemoryJobStore):
        store.stats.event("no-such-job", "dead_letter", "CORRUPT", now=1)
    else:
        with store.db.tx() as conn:
            store.stats.event(conn, "no-such-job", "dead_letter", "CORRUPT", now=1)
    assert store.stats.counter_totals() == {} and store.stats.event_counts() == {}


# --- a tenant's list, cancel and early delete ---------------------------------------------------

HOOKED = JobOrder(webhook_url="https://hooks.example.org/pressroom")


def _events(store: Any, job_id: str) -> list[str]:
    return [str(d["event"]) for d in store.outbox.deliveries(job_id)]


def test_list_jobs_pages_newest_first_by_keyset_in_one_query_for_the_rows(
    services: Services,
) -> None:
    store = services.store
    made = [store.queue.insert(new_job(), now=float(t), max_attempts=3)[0] for t in (1, 2, 2, 3)]
    store.queue.insert(new_job("other"), now=4, max_attempts=3)
    store.queue.insert(new_job(lane=Lane.INTERACTIVE), now=0.5, max_attempts=3)
    # newest first; the two made at 2 ordered by id, descending
    tied = sorted((made[1].id, made[2].id), reverse=True)
    want = [made[3].id, *tied, made[0].id]
    with sql_statements(store) as statements:
        first = store.queue.list_jobs("acme", limit=2, lane=Lane.BULK)
    assert [j.id for j in first] == want[:2]
    if statements is not None:
        assert sum("FROM jobs" in s for s in statements) == 1
        assert sum("job_stage_timings" in s for s in statements) == 1
        assert sum("review_decisions" in s for s in statements) == 1
    last = first[-1]
    rest = store.queue.list_jobs("acme", limit=10, after=(last.created_at, last.id), lane=Lane.BULK)
    assert [j.id for j in rest] == want[2:]
    assert [j.id for j in store.queue.list_jobs("other", limit=10)] != []
    assert all(j.tenant == "acme" for j in store.queue.list_jobs("acme", limit=10))
    window = store.queue.list_jobs("acme", limit=10, created_after=2, created_before=3)
    assert sorted(j.id for j in window) == sorted(tied)
    assert store.queue.list_jobs("acme", limit=10, state=JobState.RUNNING) == []


def test_cancel_of_a_waiting_job_ends_it_at_once_with_its_webhook(services: Services) -> None:
    store = services.store
    job, _ = store.queue.insert(new_job(order=HOOKED), now=1, max_attempts=3)
    done = store.queue.cancel(job.id, "acme", now=2)
    assert done is not None and done.outcome == "cancelled"
    assert (done.job.state, done.job.reason) == (JobState.REJECTED, "CANCELLED")
    assert done.freed == (job.source_key,) and done.job.source_key is None
    assert _events(store, job.id) == ["job.rejected"]
    assert store.stats.event_counts()[("cancelled", "bulk", "CANCELLED")] == 1
    assert store.queue.claim((Lane.BULK,), "w", now=3, lease_s=LEASE) is None
    again = store.queue.cancel(job.id, "acme", now=4)
    assert again is not None and (again.outcome, again.freed) == ("cancelled", ())
    assert _events(store, job.id) == ["job.rejected"]
    assert store.queue.cancel(job.id, "other", now=5) is None


def test_a_cancel_requested_while_running_wins_over_the_workers_end(services: Services) -> None:
    store = services.store
    job, _ = store.queue.insert(new_job(order=HOOKED), now=1, max_attempts=3)
    assert store.queue.claim((Lane.BULK,), "w", now=2, lease_s=LEASE) is not None
    assert not store.queue.cancel_requested(job.id)
    asked = store.queue.cancel(job.id, "acme", now=3)
    assert asked is not None and asked.outcome == "requested"
    assert asked.job.state is JobState.RUNNING and store.queue.cancel_requested(job.id)
    repeated = store.queue.cancel(job.id, "acme", now=3.5)
    assert repeated is not None and repeated.outcome == "repeated"
    assert repeated.job.state is JobState.RUNNING
    # every other end of the job is refused now: the worker ends it cancelled
    done = dict(artifact_key="a/k.pdf", artifact_sha256="cd" * 32, pages=1, now=4.0)
    assert not store.queue.complete(job.id, "w", **done)  # type: ignore[arg-type]
    assert not store.queue.hold(job.id, "w", code="REDACTION_LEAK", message="m", now=4)
    failed = store.queue.fail(
        job.id, "w", code="X", message="m", permanent=False, now=4, policy=NO_JITTER
    )
    assert failed is None
    assert not store.queue.end_cancelled(job.id, "someone-else", now=5)
    assert store.queue.end_cancelled(job.id, "w", now=5)
    final = store.queue.get(job.id)
    assert final is not None and (final.state, final.reason) == (JobState.REJECTED, "CANCELLED")
    assert final.artifact_key is None and final.attempts == 1
    assert _events(store, job.id) == ["job.rejected"]
    assert not store.queue.end_cancelled(job.id, "w", now=6)


def test_a_job_that_completed_first_is_not_cancelled(services: Services) -> None:
    store = services.store
    job, _ = store.queue.insert(new_job(order=HOOKED), now=1, max_attempts=3)
    store.queue.claim((Lane.BULK,), "w", now=2, lease_s=LEASE)
    assert store.queue.complete(
        job.id, "w", artifact_key="a/k.pdf", artifact_sha256="cd" * 32, pages=1, now=3
    )
    late = store.queue.cancel(job.id, "acme", now=4)
    assert late is not None and late.outcome == "finished" and late.freed == ()
    assert not store.queue.end_cancelled(job.id, "w", now=5)
    final = store.queue.get(job.id)
    assert final is not None and final.state is JobState.COMPLETE
    assert _events(store, job.id) == ["job.completed"]


def _race(store: Any) -> tuple[dict[str, Any], Any]:
    """A worker's end and a tenant's cancel of one running job, let go at the same moment."""
    import threading

    job, _ = store.queue.insert(new_job(order=HOOKED), now=1, max_attempts=3)
    store.queue.claim((Lane.BULK,), "w", now=2, lease_s=LEASE)
    start = threading.Barrier(2)
    results: dict[str, Any] = {}

    def finish() -> None:
        start.wait()
        results["completed"] = store.queue.complete(
            job.id, "w", artifact_key=f"a/{job.id}.pdf", artifact_sha256="c" * 64, pages=1, now=3
        )
        if not results["completed"]:
            results["ended"] = store.queue.end_cancelled(job.id, "w", now=3)

    def cancel() -> None:
        start.wait()
        results["cancel"] = store.queue.cancel(job.id, "acme", now=3)

    threads = [threading.Thread(target=finish), threading.Thread(target=cancel)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, store.queue.get(job.id)


def test_a_cancel_racing_the_workers_end_has_exactly_one_outcome(services: Services) -> None:
    store = services.store
    for _ in range(8):
        results, final = _race(store)
        assert final is not None
        if results["completed"]:
            assert results["cancel"].outcome == "finished"
            assert final.state is JobState.COMPLETE and _events(store, final.id) == [
                "job.completed"
            ]
        else:
            assert results["cancel"].outcome == "requested" and results["ended"]
            assert (final.state, final.reason) == (JobState.REJECTED, "CANCELLED")
            assert _events(store, final.id) == ["job.rejected"]


def test_cancel_of_a_held_job_frees_its_held_copy_and_a_rescue_honours_a_cancel(
    services: Services,
) -> None:
    store = services.store
    held, _ = store.queue.insert(new_job(), now=1, max_attempts=3)
    store.queue.claim((Lane.BULK,), "w", now=2, lease_s=LEASE)
    assert store.queue.hold(
        held.id, "w", code="REDACTION_LEAK", message="m", now=3, artifact_key="r/k.pdf"
    )
    done = store.queue.cancel(held.id, "acme", now=4)
    assert done is not None and done.outcome == "cancelled"
    assert set(done.freed) == {held.source_key, "r/k.pdf"}
    assert store.queue.in_review("acme") == []
    # a worker that dies after the cancel was asked: the rescue ends the job, no new attempt
    lost, _ = store.queue.insert(new_job(), now=5, max_attempts=3)
    store.queue.claim((Lane.BULK,), "w", now=6, lease_s=LEASE)
    store.queue.cancel(lost.id, "acme", now=7)
    assert store.queue.rescue_expired(now=6 + LEASE + 1, policy=NO_JITTER) == 1
    final = store.queue.get(lost.id)
    assert final is not None and (final.state, final.reason) == (JobState.REJECTED, "CANCELLED")


def test_delete_artifact_key_forgets_only_the_tenants_complete_artifact(
    services: Services,
) -> None:
    store = services.store
    job, _ = store.queue.insert(new_job(), now=1, max_attempts=3)
    assert not store.queue.delete_artifact_key(job.id, "acme", "a/k.pdf", now=2)
    store.queue.claim((Lane.BULK,), "w", now=2, lease_s=LEASE)
    store.queue.complete(
        job.id, "w", artifact_key="a/k.pdf", artifact_sha256="c" * 64, pages=1, now=3
    )
    assert not store.queue.delete_artifact_key(job.id, "other", "a/k.pdf", now=4)
    assert store.queue.delete_artifact_key(job.id, "acme", "a/k.pdf", now=4)
    final = store.queue.get(job.id)
    assert final is not None and final.state is JobState.COMPLETE and final.artifact_key is None
    assert not store.queue.delete_artifact_key(job.id, "acme", "a/k.pdf", now=5)


# --- the claim a worker makes: a whole job or a page range, in its tenant's fair turn ----------


def test_claim_next_gives_another_tenants_single_job_its_turn_before_a_burst(
    services: Services,
) -> None:
    store = services.store
    burst = [
        store.queue.insert(new_job("acme"), now=float(t), max_attempts=3)[0] for t in (1, 2, 3)
    ]
    single, _ = store.queue.insert(new_job("globex"), now=4, max_attempts=3)
    order = []
    while (got := store.tasks.claim_next((Lane.BULK,), "w", now=10, lease_s=LEASE)) is not None:
        assert got.task is None and got.job.state is JobState.RUNNING
        order.append(got.job.id)
    # acme's oldest first, then globex's one job, not acme's whole burst before it
    assert order == [burst[0].id, single.id, burst[1].id, burst[2].id]


def test_a_split_jobs_ranges_are_claimed_and_the_last_one_done_hands_its_job_back(
    services: Services,
) -> None:
    store = services.store
    job, _ = store.queue.insert(new_job(pages_estimate=4), now=1, max_attempts=3)
    claimed = store.tasks.claim_next((Lane.BULK,), "w1", now=2, lease_s=LEASE)
    assert claimed is not None and claimed.task is None
    assert store.tasks.split(claimed.job, "w1", [(0, 2), (2, 4)], now=3)
    split = store.queue.get(job.id)
    assert split is not None and (split.state, split.stage, split.lease_owner) == (
        JobState.RUNNING,
        "split",
        None,
    )
    assert store.tasks.progress(job.id) == (2, 0)
    first = store.tasks.claim_next((Lane.BULK,), "w1", now=4, lease_s=LEASE)
    second = store.tasks.claim_next((Lane.BULK,), "w2", now=4, lease_s=LEASE)
    assert first is not None and first.task is not None and first.job.id == job.id
    assert second is not None and second.task is not None
    assert [(t.number, t.first_page, t.end_page) for t in (first.task, second.task)] == [
        (0, 0, 2),
        (1, 2, 4),
    ]
    assert store.tasks.claim_next((Lane.BULK,), "w3", now=4, lease_s=LEASE) is None
    # a range that is not the caller's records nothing
    assert store.tasks.done(second.task, "w1", "p/1.pdf", now=5, lease_s=LEASE) == (False, None)
    assert store.tasks.done(first.task, "w1", "p/0.pdf", now=5, lease_s=LEASE) == (True, None)
    recorded, assembly = store.tasks.done(second.task, "w2", "p/1.pdf", now=6, lease_s=LEASE)
    assert recorded and assembly is not None and assembly.id == job.id
    assert (assembly.lease_owner, assembly.stage) == ("w2", None)
    assert store.tasks.progress(job.id) == (2, 2)
    assert store.queue.complete(
        job.id, "w2", artifact_key="a/k.pdf", artifact_sha256="c" * 64, pages=4, now=7
    )
