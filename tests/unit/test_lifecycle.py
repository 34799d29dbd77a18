"""The bucket's lifecycle rules as values: whole days rounded up, never sooner than the service
deletes, no expiration for sources, one rule per area and none wider, and whose rules are whose
(by exact ID and prefix); and, through botocore's Stubber, what moto cannot say: a bucket's 5xx
is transient, and a non-default bucket-wide minimum object size is written back. The bucket
itself is tested against moto in tests/integration/test_lifecycle.py."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from pressroom.errors import LifecycleNeedsS3, LifecycleRefused, StorageUnavailable
from pressroom.lifecycle import AREAS, DAY_S, apply, days, longest_round_s, plan, read_bucket
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
    assert rules["sources"].days is None
    for rule in plan(settings).wanted():
        assert rule["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 1}


def test_sources_never_expire_and_say_why() -> None:
    wanted = plan(Settings.from_env({"PRESSROOM_STORAGE_URL": "s3://b"}))
    sources = next(rule for rule in wanted.rules if rule.area == "sources")
    assert sources.days is None and "Expiration" not in sources.as_s3("")
    assert sources.why.startswith("no expiration:") and "redrive" in sources.why


@pytest.mark.parametrize("url", ["s3://b", "s3://b/p", "s3://b/a/b/"])
def test_each_rule_keeps_to_one_area_of_the_store(url: str) -> None:
    """No rule reaches past the store's own areas: at the bucket's root there is no prefix to
    scope a rule to, so a rule on the store's whole prefix would be the whole bucket."""
    wanted = plan(Settings.from_env({"PRESSROOM_STORAGE_URL": url}))
    under = f"{wanted.store_prefix}/" if wanted.store_prefix else ""
    assert sorted(r["Filter"]["Prefix"] for r in wanted.wanted()) == sorted(
        f"{under}{area}/" for area in AREAS
    )


def test_whose_rules_are_whose() -> None:
    inside = plan(Settings.from_env({"PRESSROOM_STORAGE_URL": "s3://b/a/b"}))
    root = plan(Settings.from_env({"PRESSROOM_STORAGE_URL": "s3://b"}))
    assert inside.is_ours({"ID": "pressroom-review@a/b"})
    assert not inside.is_ours({"ID": "pressroom-review"})
    assert not inside.is_ours({"ID": "pressroom-review@a"})
    assert not inside.is_ours({"ID": "pressroom-logs@a/b"})
    assert root.is_ours({"ID": "pressroom-sources"})
    for theirs in ("pressroom-anything", "pressroom-logs", "pressroom-review@", "logs"):
        assert not root.is_ours({"ID": theirs}), theirs
    assert inside.covers_ours({"ID": "x", "Filter": {}})
    assert inside.covers_ours({"ID": "x", "Filter": {"And": {"Prefix": "a/"}}})
    assert inside.covers_ours({"ID": "x", "Prefix": "a/b/scratch/"})
    assert not inside.covers_ours({"ID": "x", "Filter": {"Prefix": "a/bc/"}})
    assert not inside.covers_ours({"ID": "x", "Filter": {"Prefix": "a/b/logs/"}})
    assert not inside.covers_ours({"ID": "x", "Filter": {"Prefix": "logs/"}})


def test_which_rules_overlap_ours() -> None:
    """Another store's rules whose keys nest with ours, and foreign rules ours would reach
    into, overlap; a foreign rule over ours (it covers them) or beside them does not."""
    p = plan(Settings.from_env({"PRESSROOM_STORAGE_URL": "s3://b/p"}))
    root = plan(Settings.from_env({"PRESSROOM_STORAGE_URL": "s3://b"}))

    def at(rule_id: str, prefix: str) -> dict[str, object]:
        return {"ID": rule_id, "Filter": {"Prefix": prefix}}

    assert p.overlap(at("pressroom-sources@p/review", "p/review/sources/"))
    assert p.overlap(at("pressroom-artifacts", "artifacts/")) is None
    assert p.overlap(at("pressroom-review@p/x", "p/x/review/")) is None
    assert root.overlap(at("pressroom-sources@review", "review/sources/"))
    assert root.overlap(at("pressroom-review@deep/store", "deep/store/review/")) is None
    assert p.overlap(at("logs", "p/review/logs/"))
    assert p.overlap(at("same", "p/scratch/"))
    assert p.overlap(at("sweep", "")) is None
    assert p.overlap(at("wide", "p/")) is None
    assert root.overlap(at("pressroom-logs", "logs/")) is None


def _stubbed() -> tuple[Any, Stubber]:
    """A real botocore client whose answers are the test's (nothing is sent)."""
    client = boto3.session.Session().client(
        "s3",
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="y",
        endpoint_url="http://127.0.0.1:9",
    )
    return client, Stubber(client)


@pytest.mark.parametrize(
    ("status", "code", "error"),
    [
        (500, "InternalError", StorageUnavailable),
        (503, "SlowDown", StorageUnavailable),
        (502, "BadGateway", StorageUnavailable),
        (403, "AccessDenied", LifecycleRefused),
    ],
)
def test_a_5xx_from_the_bucket_is_transient_and_a_4xx_refused(
    status: int, code: str, error: type[Exception]
) -> None:
    client, stub = _stubbed()
    wanted = plan(Settings.from_env({"PRESSROOM_STORAGE_URL": "s3://b/p"}))
    stub.add_client_error(
        "get_bucket_lifecycle_configuration", service_error_code=code, http_status_code=status
    )
    with stub, pytest.raises(error) as caught:
        read_bucket(client, wanted)
    exit_code = 75 if error is StorageUnavailable else 2
    assert getattr(caught.value, "exit_code", None) == exit_code
    assert f"({code})" in str(caught.value)


def test_a_5xx_on_the_write_is_transient() -> None:
    client, stub = _stubbed()
    wanted = plan(Settings.from_env({"PRESSROOM_STORAGE_URL": "s3://b/p"}))
    stub.add_response("get_bucket_lifecycle_configuration", {"Rules": []})
    stub.add_client_error(
        "put_bucket_lifecycle_configuration",
        service_error_code="ServiceUnavailable",
        http_status_code=503,
    )
    with stub, pytest.raises(StorageUnavailable, match="write failed"):
        apply(client, wanted)


def test_the_bucket_wide_minimum_object_size_is_written_back() -> None:
    """moto always answers the default (``all_storage_classes_128K``) and ignores what it is
    sent; an operator's ``varies_by_storage_class`` must survive our write."""
    client, stub = _stubbed()
    wanted = plan(Settings.from_env({"PRESSROOM_STORAGE_URL": "s3://b/p"}))
    theirs = {"ID": "logs", "Status": "Enabled", "Filter": {"Prefix": "logs/"}}
    theirs["Expiration"] = {"Days": 9}
    stub.add_response(
        "get_bucket_lifecycle_configuration",
        {"Rules": [theirs], "TransitionDefaultMinimumObjectSize": "varies_by_storage_class"},
    )
    stub.add_response(
        "put_bucket_lifecycle_configuration",
        {},
        {
            "Bucket": "b",
            "LifecycleConfiguration": {"Rules": [theirs, *wanted.wanted()]},
            "TransitionDefaultMinimumObjectSize": "varies_by_storage_class",
        },
    )
    with stub:
        before, written = apply(client, wanted, force=True)
        stub.assert_no_pending_responses()
    assert written and before.min_object_size == "varies_by_storage_class"


@pytest.mark.parametrize("url", ["", "file:///srv/blobs", "/srv/blobs"])
def test_local_storage_has_no_rules(url: str) -> None:
    with pytest.raises(LifecycleNeedsS3, match="an S3 feature"):
        plan(Settings.from_env({"PRESSROOM_STORAGE_URL": url}))
