"""The bucket's lifecycle rules as values: whole days rounded up, never sooner than the service
deletes, no rule for sources, and whose rules are whose (by ID and prefix). The bucket itself
is tested against moto in tests/integration/test_lifecycle.py."""

from __future__ import annotations

import pytest

from pressroom.errors import LifecycleNeedsS3
from pressroom.lifecycle import DAY_S, days, longest_round_s, plan
from pressroom.settings import Settings

HOUR = 3600.0


@pytest.mark.parametrize(
    ("seconds", "whole"),
    [(1.0, 1), (DAY_S - 1, 1), (DAY_S, 1), (DAY_S + 1, 2), (7 * DAY_S, 7), (7 * DAY_S + 1, 8)],
)
def test_days_round_up(seconds: float, whole: int) -> None:
    assert days(seconds) == whole


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"PRESSROOM_RETENTION_SECONDS": "60", "PRESSROOM_REVIEW_RETENTION_SECONDS": "60"},
        {"PRESSROOM_RETENTION_SECONDS": str(90 * DAY_S)},
        {"PRESSROOM_DEADLINE_INTERACTIVE_SECONDS": str(50 * DAY_S)},
        {"PRESSROOM_DEADLINE_BULK_SECONDS": str(45 * DAY_S + 1)},
    ],
)
def test_no_rule_deletes_before_the_service_would(env: dict[str, str]) -> None:
    """Outputs outlive retention, a review and a round; held copies their review window;
    parts a round: each by more than the hour between a write and its row."""
    settings = Settings.from_env({"PRESSROOM_STORAGE_URL": "s3://b/p", **env})
    rules = {rule.area: rule for rule in plan(settings).rules}
    round_s = longest_round_s(settings)
    assert round_s >= 30 * DAY_S  # a client may ask for 30 days
    assert rules["artifacts"].days * DAY_S >= (
        settings.retention_s + settings.review_retention_s + round_s + HOUR
    )
    assert rules["review"].days * DAY_S >= settings.review_retention_s + HOUR
    assert rules["scratch"].days * DAY_S >= round_s + HOUR
    assert (rules["multipart"].days, rules["multipart"].multipart) == (1, True)


def test_sources_get_no_rule_and_say_why() -> None:
    wanted = plan(Settings.from_env({"PRESSROOM_STORAGE_URL": "s3://b"}))
    assert "sources" not in {rule.area for rule in wanted.rules}
    assert [area for area, _ in wanted.left_out] == ["sources"]
    assert "redrive" in wanted.left_out[0][1]


def test_whose_rules_are_whose() -> None:
    inside = plan(Settings.from_env({"PRESSROOM_STORAGE_URL": "s3://b/a/b"}))
    root = plan(Settings.from_env({"PRESSROOM_STORAGE_URL": "s3://b"}))
    assert inside.is_ours({"ID": "pressroom-review@a/b"})
    assert not inside.is_ours({"ID": "pressroom-review"})
    assert not inside.is_ours({"ID": "pressroom-review@a"})
    assert root.is_ours({"ID": "pressroom-anything"})
    assert not root.is_ours({"ID": "logs"})
    assert inside.covers_ours({"ID": "x", "Filter": {}})
    assert inside.covers_ours({"ID": "x", "Filter": {"And": {"Prefix": "a/"}}})
    assert inside.covers_ours({"ID": "x", "Prefix": "a/b/scratch/"})
    assert not inside.covers_ours({"ID": "x", "Filter": {"Prefix": "a/bc/"}})
    assert not inside.covers_ours({"ID": "x", "Filter": {"Prefix": "logs/"}})


@pytest.mark.parametrize("url", ["", "file:///srv/blobs", "/srv/blobs"])
def test_local_storage_has_no_rules(url: str) -> None:
    with pytest.raises(LifecycleNeedsS3, match="an S3 feature"):
        plan(Settings.from_env({"PRESSROOM_STORAGE_URL": url}))
