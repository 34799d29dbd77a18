"""Every reason a counter can carry is exported at zero before its first event, and the list
follows errors.py: a dashboard can tell "no dead letters" from "not exported"."""

from __future__ import annotations

import gc
import inspect
from collections.abc import Iterator

from prometheus_client.core import Metric

from pressroom import errors
from pressroom.api.metrics import counter_families
from pressroom.api.reasons import dead_letter_reasons, refusal_reasons, retry_reasons
from pressroom.jobs.admission import REFUSALS
from pressroom.jobs.model import Lane

LANES = {lane.value for lane in Lane}


def classes(base: type[errors.PressroomError]) -> Iterator[type[errors.PressroomError]]:
    for _name, cls in inspect.getmembers(errors, inspect.isclass):
        if issubclass(cls, base) and cls.__module__ == errors.__name__:
            yield cls


def series(families: Iterator[Metric]) -> dict[str, dict[tuple[str, ...], float]]:
    """family name (as exposed, with _total) → labels → value."""
    found: dict[str, dict[tuple[str, ...], float]] = {}
    for family in families:
        for sample in family.samples:
            key = tuple(sample.labels[k] for k in sorted(sample.labels))
            found.setdefault(sample.name, {})[key] = sample.value
    return found


def test_every_error_code_that_can_reach_a_counter_is_a_known_reason() -> None:
    assert {cls.code for cls in classes(errors.PermanentError)} <= set(dead_letter_reasons())
    assert {cls.code for cls in classes(errors.TransientError)} <= set(retry_reasons())
    assert {cls.code for cls in REFUSALS} <= set(refusal_reasons())
    assert {"OVERLOADED", "QUOTA_EXCEEDED"} <= set(refusal_reasons())
    # the reasons the worker and the queue write that are no class of their own
    assert {"INTERNAL_ERROR", "DEADLINE_EXCEEDED", "RETRIES_EXHAUSTED"} <= set(
        dead_letter_reasons()
    )
    assert "CANCELLED" not in dead_letter_reasons()  # counted apart: a tenant's choice
    assert "MEMORY_LIMIT" in dead_letter_reasons()  # a second time in a row is permanent
    assert "LEASE_EXPIRED" in retry_reasons()
    # a held job is not a dead letter, nor is a refusal code a retry
    assert "REDACTION_LEAK" not in dead_letter_reasons()
    assert "OVERLOADED" not in retry_reasons()


def test_before_any_event_every_lane_and_reason_is_exported_at_zero() -> None:
    found = series(counter_families({}))
    for name, reasons in (
        ("pressroom_retries_total", retry_reasons()),
        ("pressroom_dead_letters_total", dead_letter_reasons()),
        ("pressroom_admission_refusals_total", refusal_reasons()),
    ):
        assert set(found[name]) == {(lane, r) for lane in LANES for r in reasons}, name
        assert set(found[name].values()) == {0}
    for name in ("pressroom_deadline_misses_total", "pressroom_job_attempts_total"):
        assert found[name] == {(lane,): 0 for lane in LANES}


def test_a_counted_reason_shows_its_total_and_an_unknown_one_is_kept() -> None:
    found = series(
        counter_families(
            {
                ("dead_letter", "bulk", "CORRUPT"): 4,
                ("dead_letter", "bulk", "SOMETHING_OLDER"): 2,
                ("deadline_miss", "interactive", "DEADLINE_EXCEEDED"): 3,
                ("attempt", "bulk", "CLAIMED"): 9,
            }
        )
    )
    dead = found["pressroom_dead_letters_total"]
    assert dead[("bulk", "CORRUPT")] == 4 and dead[("interactive", "CORRUPT")] == 0
    assert dead[("bulk", "SOMETHING_OLDER")] == 2
    assert found["pressroom_deadline_misses_total"] == {("bulk",): 0, ("interactive",): 3}
    assert found["pressroom_job_attempts_total"][("bulk",)] == 9


def test_an_error_class_added_to_errors_shows_up_at_zero_by_itself() -> None:
    class DiskGremlins(errors.TransientError):
        code = "DISK_GREMLINS"

    class SmudgedScan(errors.PermanentError):
        code = "SMUDGED_SCAN"

    try:
        assert "DISK_GREMLINS" in retry_reasons()
        assert "SMUDGED_SCAN" in dead_letter_reasons()
        found = series(counter_families({}))
        assert found["pressroom_retries_total"][("bulk", "DISK_GREMLINS")] == 0
        assert found["pressroom_dead_letters_total"][("interactive", "SMUDGED_SCAN")] == 0
    finally:
        del DiskGremlins, SmudgedScan
        gc.collect()  # the classes leave errors' subclass lists with their last reference
    assert "DISK_GREMLINS" not in retry_reasons()
