"""Fair claiming between tenants (``jobs.claims``), on SQLite and on PostgreSQL: one tenant's
burst never makes another tenant's single job wait behind all of it, whole jobs or page
ranges."""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from pressroom.errors import Overloaded
from pressroom.jobs.admission import Admission, admit, work_units
from pressroom.jobs.model import Lane
from pressroom.jobs.sql import SqlJobStore
from pressroom.service import open_services
from pressroom.settings import Settings
from tests.contract.test_job_store import new_job

pytestmark = pytest.mark.integration

LEASE = 60.0
LANES = (Lane.INTERACTIVE,)


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SqlJobStore]:
    url = request.getfixturevalue("pg_url") if request.param == "postgresql" else None
    settings = Settings(data_dir=tmp_path / "data", scratch_dir=tmp_path, database_url=url)
    svc = open_services(settings)
    yield svc.store
    svc.store.db.close_listener()
    svc.store.db.engine.dispose()


_ticks = itertools.count(1)


def queue(store: SqlJobStore, tenant: str, count: int, pages: int = 2) -> list[str]:
    """``count`` jobs of ``pages`` pages for ``tenant``, each a moment after the last."""
    return [
        store.queue.insert(
            new_job(tenant, lane=Lane.INTERACTIVE, pages_estimate=pages),
            now=float(next(_ticks)),
            max_attempts=4,
        )[0].id
        for _ in range(count)
    ]


def next_tenant(store: SqlJobStore, owner: str = "w1") -> str | None:
    """The tenant of the unit a worker claims next (a job or a range), or None."""
    got = store.tasks.claim_next(LANES, owner, now=1e6, lease_s=LEASE)
    return None if got is None else got.job.tenant


def claims(store: SqlJobStore, n: int) -> list[str | None]:
    return [next_tenant(store) for _ in range(n)]


def test_with_a_tenants_burst_queued_another_tenants_single_job_is_claimed_next(
    store: SqlJobStore,
) -> None:
    queue(store, "a", 8)
    assert next_tenant(store) == "a"  # a worker is busy with A's first scan
    queue(store, "b", 1)  # B's one job arrives behind A's seven others
    assert next_tenant(store) == "b"
    assert claims(store, 8) == ["a"] * 7 + [None]


def test_tenants_with_work_waiting_take_turns_oldest_first_within_each(
    store: SqlJobStore,
) -> None:
    a, b, c = queue(store, "a", 4), queue(store, "b", 4), queue(store, "c", 2)
    taken = [store.queue.claim(LANES, "w", now=1e6, lease_s=LEASE) for _ in range(10)]
    ids = [job.id for job in taken if job is not None]
    assert ids == [a[0], b[0], c[0], a[1], b[1], c[1], a[2], b[2], a[3], b[3]]


def test_turns_are_by_pages_not_by_jobs(store: SqlJobStore) -> None:
    queue(store, "a", 3, pages=10)
    queue(store, "b", 10, pages=1)
    # A's ten-page job is worth ten of B's one-page jobs
    assert claims(store, 13) == ["a", *["b"] * 10, "a", "a"]


def test_a_tenant_that_was_idle_banks_no_credit(store: SqlJobStore) -> None:
    queue(store, "a", 20, pages=1)
    assert claims(store, 10) == ["a"] * 10
    queue(store, "b", 10, pages=1)
    # B starts at the lane's clock, not at nothing: the two alternate, B never runs alone
    assert claims(store, 8) == ["b", "a"] * 4


def test_a_tenants_weight_sets_its_share(store: SqlJobStore) -> None:
    store.tenancy.set_weight("a", 3, now=0.0)
    queue(store, "a", 12, pages=1)
    queue(store, "b", 12, pages=1)
    first = Counter(claims(store, 8))
    assert first == {"a": 6, "b": 2}
    store.tenancy.set_weight("a", 1, now=0.0)  # back to the default: equal turns again
    assert Counter(claims(store, 4)) == {"a": 2, "b": 2}
    assert store.tenancy.weights() == {}


def test_a_big_documents_page_ranges_take_turns_with_another_tenants_jobs(
    store: SqlJobStore,
) -> None:
    queue(store, "a", 1, pages=12)
    got = store.tasks.claim_next(LANES, "w1", now=1e6, lease_s=LEASE)
    assert got is not None and got.task is None and got.job.tenant == "a"
    queue(store, "b", 3, pages=2)
    assert store.tasks.split(got.job, "w1", [(i, i + 2) for i in range(0, 12, 2)], now=1e6)
    # the split gives back the whole document's charge: its ranges and B's jobs alternate,
    # a range first at a tie (work begun ends sooner)
    sequence = []
    for _ in range(10):
        unit = store.tasks.claim_next(LANES, "w2", now=1e6, lease_s=LEASE)
        sequence.append(None if unit is None else (unit.job.tenant, unit.task is not None))
    a_range, b_job = ("a", True), ("b", False)
    assert sequence == [a_range, b_job] * 3 + [a_range] * 3 + [None]


def test_a_range_alone_and_a_job_alone_are_each_claimed_by_their_own_kind(
    store: SqlJobStore,
) -> None:
    queue(store, "a", 1, pages=4)
    job = store.queue.claim(LANES, "w1", now=1e6, lease_s=LEASE)
    assert job is not None and store.tasks.split(job, "w1", [(0, 2), (2, 4)], now=1e6)
    queue(store, "b", 1)
    assert store.tasks.claim(LANES, "w2", now=1e6, lease_s=LEASE) is not None
    b_job = store.queue.claim(LANES, "w3", now=1e6, lease_s=LEASE)
    assert b_job is not None and b_job.tenant == "b"
    assert store.tasks.claim(LANES, "w4", now=1e6, lease_s=LEASE) is not None
    assert store.queue.claim(LANES, "w5", now=1e6, lease_s=LEASE) is None


def test_workers_claiming_at_once_take_every_job_exactly_once(store: SqlJobStore) -> None:
    ids = [*queue(store, "a", 20, pages=1), *queue(store, "b", 10), *queue(store, "c", 5)]
    taken: list[str] = []
    lock = threading.Lock()

    def worker(name: str) -> None:
        while True:
            got = store.tasks.claim_next(LANES, name, now=1e6, lease_s=LEASE)
            if got is None:
                return
            with lock:
                taken.append(got.job.id)

    threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(taken) == sorted(ids)


# --- admission by share -------------------------------------------------------------------------

SMALL_LANE = Admission(queue_cap={Lane.BULK.value: 100, Lane.INTERACTIVE.value: 6})


def admit_one(
    store: SqlJobStore,
    tenant: str,
    pages: int = 2,
    deadline_s: float = 1e6,
    rules: Admission = SMALL_LANE,
) -> float:
    """Admit a job as the API does; the estimated seconds until it is done."""
    guess = admit(
        store.stats,
        rules,
        tenant=tenant,
        lane=Lane.INTERACTIVE,
        pages=pages,
        deadline_s=deadline_s,
        now=1e6,
    )
    return guess.seconds


def test_a_full_lane_refuses_the_tenant_over_its_share_and_admits_another(
    store: SqlJobStore,
) -> None:
    queue(store, "a", 6)  # A alone fills the lane's cap of 6
    with pytest.raises(Overloaded) as refused:
        admit_one(store, "a")
    assert refused.value.retry_after and refused.value.retry_after > 0
    admit_one(store, "b")  # B holds nothing: under its share (3 of 6), admitted
    queue(store, "b", 3)
    with pytest.raises(Overloaded):
        admit_one(store, "b")  # now B holds its share too
    admit_one(store, "c")  # share 2 of 6 with three tenants waiting
    queue(store, "c", 2)
    queue(store, "d", 1)
    # twice the cap waiting: only a tenant with nothing waiting gets in, one job at a time
    with pytest.raises(Overloaded):
        admit_one(store, "d")
    admit_one(store, "e")
    queue(store, "e", 1)
    with pytest.raises(Overloaded):
        admit_one(store, "e")


def test_a_tenants_own_backlog_is_what_misses_its_deadline(store: SqlJobStore) -> None:
    queue(store, "a", 20, pages=2)  # 40 pages: 120 s at the prior's 3 s a page, one worker
    with pytest.raises(Overloaded) as refused:
        admit_one(store, "a", deadline_s=60, rules=Admission())
    assert refused.value.retry_after == pytest.approx(120, abs=1)
    # B waits for its own 2 pages and, fairly, as many of A's: 12 s, not 126 s
    assert admit_one(store, "b", deadline_s=60, rules=Admission()) == pytest.approx(12)
    store.tenancy.set_weight("a", 4, now=0.0)  # A earns 8 pages while B is served 2
    assert admit_one(store, "b", deadline_s=60, rules=Admission()) == pytest.approx(30)


def test_another_tenants_running_work_counts_in_full(store: SqlJobStore) -> None:
    """A running job is not interrupted: B's short job waits for A's 400 running pages,
    and is refused rather than admitted to miss its deadline."""
    queue(store, "a", 1, pages=400)
    assert next_tenant(store) == "a"  # the one worker is busy with it
    with pytest.raises(Overloaded):
        admit_one(store, "b", pages=1, deadline_s=10, rules=Admission())
    assert admit_one(store, "b", pages=1, rules=Admission()) == pytest.approx(401 * 3)


def test_a_redaction_is_charged_by_its_text_as_well_as_its_pages() -> None:
    cap = 100_000
    assert work_units(3, 90_000, redaction=True, text_cap=cap) == 7
    assert work_units(3, 90_000, redaction=False, text_cap=cap) == 3
    assert work_units(1, 5_000, redaction=True, text_cap=cap) == 1  # an ordinary dense page
    # text that could not be counted is charged as if every page were at the cap
    assert work_units(3, None, redaction=True, text_cap=cap) == 3 + 15


def test_the_charged_units_are_what_fair_claiming_and_admission_count(
    store: SqlJobStore,
) -> None:
    store.queue.insert(
        new_job("a", lane=Lane.INTERACTIVE, pages_estimate=1, cost=10),
        now=float(next(_ticks)),
        max_attempts=4,
    )
    queue(store, "a", 1, pages=1)
    queue(store, "b", 12, pages=1)
    # A's one-page redaction of ten units' text is worth ten of B's one-page jobs
    assert claims(store, 12) == ["a", *["b"] * 10, "a"]
    assert store.stats.lane_load(Lane.INTERACTIVE.value, "b")["b"].units == 12


def test_a_job_whose_tenant_has_no_share_row_is_still_claimed(store: SqlJobStore) -> None:
    """A share row is written with every job; one missing (a row from before the migration,
    a path that forgot it) costs the fast path, never the job."""
    from pressroom.jobs.schema import fair_shares

    queue(store, "a", 1)
    (orphan,) = queue(store, "b", 1)
    with store.db.tx() as conn:
        conn.execute(fair_shares.delete().where(fair_shares.c.tenant == "b"))
    got = [store.tasks.claim_next(LANES, "w", now=1e6, lease_s=LEASE) for _ in range(3)]
    assert [g.job.tenant for g in got if g] == ["a", "b"] and got[1] and got[1].job.id == orphan
    assert got[2] is None


def test_housekeeping_gives_a_waiting_tenant_its_share_row_and_drops_idle_ones(
    store: SqlJobStore,
) -> None:
    from pressroom.jobs.backoff import RetryPolicy
    from pressroom.jobs.schema import fair_shares

    queue(store, "gone", 1)  # two pages: charged 2 at the lane's start
    done = store.queue.claim(LANES, "w1", now=1e6, lease_s=LEASE)
    assert done is not None and done.tenant == "gone"
    assert store.queue.complete(
        done.id, "w1", artifact_key="k", artifact_sha256="0" * 64, pages=2, now=1e6
    )
    queue(store, "a", 30, pages=1)
    (orphan,) = queue(store, "x", 1)
    with store.db.tx() as conn:
        conn.execute(fair_shares.delete().where(fair_shares.c.tenant == "x"))
    assert claims(store, 2) == ["a", "a"]  # without its row, x waits behind every other

    def shares() -> set[str]:
        with store.db.tx() as conn:
            return {str(t) for t in conn.execute(select(fair_shares.c.tenant)).scalars()}

    store.queue.rescue_expired(now=1e6, policy=RetryPolicy())
    got = store.tasks.claim_next(LANES, "w", now=1e6, lease_s=LEASE)
    assert got is not None and got.job.id == orphan  # its row is back, at the clock
    assert "gone" in shares()  # nothing unfinished, but served past the clock: kept
    assert claims(store, 2) == ["a", "a"]  # the clock passes what "gone" was given
    store.queue.rescue_expired(now=1e6, policy=RetryPolicy())
    assert shares() == {"a", "x"}  # "gone" would come back at the clock: its row goes


def test_a_released_job_gives_back_its_charge(store: SqlJobStore) -> None:
    queue(store, "a", 2, pages=10)
    queue(store, "b", 2, pages=10)
    job = store.queue.claim(LANES, "w1", now=1e6, lease_s=LEASE)
    assert job is not None and job.tenant == "a"
    assert store.queue.release(job.id, "w1", now=1e6)  # shut down before any work
    # A is back where it was: its oldest job, not B's, is claimed first again
    assert claims(store, 2) == ["a", "b"]
