"""Every store counts an adaptive pool's size changes as the metrics read them: an event of
kind ``pool`` per decision, with its lane and reason and no job or tenant, kept for the
dashboard's recent figures and folded into the running totals when pruned (the counter never
goes down)."""

from __future__ import annotations

from pressroom.service import Services


def test_pool_decisions_are_counted_and_survive_pruning(services: Services) -> None:
    stats = services.store.stats
    stats.record_pool_decision("bulk", "GROW_QUEUE_AGE", now=10)
    stats.record_pool_decision("bulk", "GROW_QUEUE_AGE", now=11)
    stats.record_pool_decision("interactive", "SHRINK_MEMORY_PRESSURE", now=12)
    counted = {
        ("pool", "bulk", "GROW_QUEUE_AGE"): 2,
        ("pool", "interactive", "SHRINK_MEMORY_PRESSURE"): 1,
    }
    assert stats.event_counts(since=10) == counted
    assert stats.event_counts(since=12) == {("pool", "interactive", "SHRINK_MEMORY_PRESSURE"): 1}
    assert stats.counter_totals() == counted
    assert services.store.retention.prune_history(before=100) == 3
    assert stats.event_counts() == {}
    assert stats.counter_totals() == counted
    stats.record_pool_decision("bulk", "GROW_QUEUE_AGE", now=101)
    assert stats.counter_totals()[("pool", "bulk", "GROW_QUEUE_AGE")] == 3


def test_a_job_waiting_out_a_retry_backoff_is_not_queue_until_it_can_be_claimed(
    services: Services,
) -> None:
    """The pool grows on the age of the jobs a worker could claim now: a job backing off after
    a transient failure (a verifier's 429) is no work for a new worker, and once eligible its
    age counts from when it became so."""
    from pressroom.jobs.backoff import RetryPolicy
    from pressroom.jobs.model import Lane
    from tests.contract.test_job_store import new_job

    store = services.store
    policy = RetryPolicy(max_attempts=5, base_s=600, cap_s=600, uniform=lambda a, b: a)
    job, _ = store.queue.insert(new_job(), now=1000, max_attempts=5)
    assert store.queue.claim((Lane.BULK,), "w1", now=1000, lease_s=30) is not None
    store.queue.fail(
        job.id,
        "w1",
        code="VERIFIER_UNAVAILABLE",
        message="429",
        permanent=False,
        now=1005,
        policy=policy,
    )
    assert store.queue.claim((Lane.BULK,), "w2", now=1100, lease_s=30) is None
    assert store.stats.oldest_waiting(now=1100) == {}
    assert store.stats.oldest_waiting(now=1700) == {"bulk": 95.0}  # eligible since 1605
    store.queue.insert(new_job(), now=1650, max_attempts=5)  # younger: the older one counts
    assert store.stats.oldest_waiting(now=1700) == {"bulk": 95.0}
