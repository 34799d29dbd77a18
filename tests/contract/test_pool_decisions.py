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
