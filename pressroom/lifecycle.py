"""The bucket's lifecycle rules, made from the retention settings, so that S3 deletes what
Pressroom would delete even when housekeeping never runs (no ``serve``, a loop that keeps
failing). The rules are a backstop behind housekeeping, never ahead of it: each waits at least
as long as the service would, counted from the object's creation (S3's clock) and rounded up to
whole days (S3's unit). An area no age bounds safely gets no rule, and says why.

``PutBucketLifecycleConfiguration`` replaces the bucket's whole configuration, so rules that
Pressroom did not make (foreign ones) are never overwritten silently: without ``force`` their
presence is ``LIFECYCLE_FOREIGN_RULES``; with it they are written back beside ours, unchanged.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pressroom.errors import (
    ForeignLifecycleRules,
    LifecycleNeedsS3,
    LifecycleRefused,
    StorageUnavailable,
)
from pressroom.intake import MAX_DEADLINE_S
from pressroom.jobs.admission import Admission
from pressroom.jobs.model import Lane
from pressroom.settings import Settings
from pressroom.storage import artifact_key, parts_prefix, review_key, source_key

DAY_S = 86400.0
# an object is stored moments before the row that starts the service's clock on it (publish
# stores, then completes; a hold stores, then holds): an hour covers that gap many times over
WRITE_SLACK_S = 3600.0
MULTIPART_DAYS = 1  # no single upload of ours takes a day: its parts are leftovers by then
ID_PREFIX = "pressroom-"


def _area(key: str) -> str:
    """The first folder of a key the storage layout builds: the areas are read from the
    builders, so a renamed area moves its rule with it."""
    return key.split("/", 1)[0]


SOURCES = _area(source_key("t", "j"))
ARTIFACTS = _area(artifact_key("t", "j", "d"))
REVIEW = _area(review_key("t", "j", "d"))
SCRATCH = _area(parts_prefix("t", "j"))

SOURCES_LEFT_OUT = (
    "no rule: a source is kept until its job is delivered, and a redrive or a reviewer's "
    "corrections send a job round again on a fresh clock (each round up to its deadline, "
    "each hold up to PRESSROOM_REVIEW_RETENTION_SECONDS), so no age since upload bounds it "
    "and any age rule could delete an accepted job's source. Housekeeping deletes sources: "
    "on delivery, a dead letter's after PRESSROOM_RETENTION_SECONDS, orphans after an hour"
)


def days(seconds: float) -> int:
    """Whole days, rounded up (never fewer than one): S3 expires an object at the first
    midnight UTC at least this many days after its creation, so it never goes sooner."""
    return max(1, math.ceil(seconds / DAY_S))


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule: objects under ``prefix`` expire ``days`` after creation, or (``multipart``)
    uploads under it that never completed are aborted ``days`` after they began."""

    area: str
    prefix: str
    days: int
    why: str
    multipart: bool = False

    def rule_id(self, store_prefix: str) -> str:
        """``pressroom-AREA``, with ``@PREFIX`` for a store inside the bucket: two Pressroom
        stores sharing a bucket never take each other's rules for their own."""
        return f"{ID_PREFIX}{self.area}" + (f"@{store_prefix}" if store_prefix else "")

    def as_s3(self, store_prefix: str) -> dict[str, Any]:
        action: dict[str, Any] = (
            {"AbortIncompleteMultipartUpload": {"DaysAfterInitiation": self.days}}
            if self.multipart
            else {"Expiration": {"Days": self.days}}
        )
        return {
            "ID": self.rule_id(store_prefix),
            "Status": "Enabled",
            "Filter": {"Prefix": self.prefix},
            **action,
        }


@dataclass(frozen=True, slots=True)
class Plan:
    """What the settings ask of a bucket: the rules, and the areas left out with why."""

    bucket: str
    store_prefix: str
    rules: tuple[Rule, ...]
    left_out: tuple[tuple[str, str], ...]

    def wanted(self) -> list[dict[str, Any]]:
        return [rule.as_s3(self.store_prefix) for rule in self.rules]

    def is_ours(self, rule: dict[str, Any]) -> bool:
        """A rule this store's Pressroom made (by its ID): ``pressroom-…`` for this prefix."""
        rule_id = str(rule.get("ID", ""))
        return rule_id.startswith(ID_PREFIX) and rule_id.partition("@")[2] == self.store_prefix

    def covers_ours(self, rule: dict[str, Any]) -> bool:
        """Whether a (foreign) rule may act on this store's keys: its prefix and ours nest."""
        mine = f"{self.store_prefix}/" if self.store_prefix else ""
        theirs = rule_prefix(rule)
        return mine.startswith(theirs) or theirs.startswith(mine)


def longest_round_s(settings: Settings) -> float:
    """How long one round of a job can last, from its start to its deadline: the longest a
    client may ask for, or a lane's default for the largest document, whichever is longer.
    Every attempt, backoff and page-range part of a round falls inside it (a run stops at its
    deadline: ``DEADLINE_EXCEEDED``)."""
    lanes = Admission.from_settings(settings.admission)
    return max(
        MAX_DEADLINE_S, *(lanes.default_deadline(lane, settings.limits.max_pages) for lane in Lane)
    )


def plan(settings: Settings) -> Plan:
    """The rules the settings ask for. Local storage has none: ``LIFECYCLE_NEEDS_S3``."""
    from pressroom.storage.s3 import parse_s3_url

    if not settings.storage_url.startswith("s3://"):
        raise LifecycleNeedsS3(
            "lifecycle rules are an S3 feature, and PRESSROOM_STORAGE_URL is a local folder: "
            "there housekeeping (in `serve`) deletes what has expired"
        )
    bucket, store_prefix = parse_s3_url(settings.storage_url)
    under = f"{store_prefix}/" if store_prefix else ""
    retention, review = settings.retention_s, settings.review_retention_s
    round_s = longest_round_s(settings)
    rules = (
        # the service deletes an output `retention` after its job completed; the object can
        # be older than that completion by a review (a changed output is held in place under
        # artifacts/ and published where it lies) and by a round (a retry finds the bytes an
        # earlier attempt stored and publishes them as they are). Not covered: a job whose
        # attempt stored its output but died before completing, redriven later than that and
        # completing on those bytes; its download window may be shorter, the job unharmed
        Rule(
            ARTIFACTS,
            f"{under}{ARTIFACTS}/",
            days(retention + review + round_s + WRITE_SLACK_S),
            "retention + review retention + a job's longest round, rounded up",
        ),
        # a held copy is stored as its job is held; nobody decided within `review`: the job
        # ends REVIEW_EXPIRED and the copy goes (corrections store a new copy, a new clock)
        Rule(
            REVIEW,
            f"{under}{REVIEW}/",
            days(review + WRITE_SLACK_S),
            "review retention, rounded up",
        ),
        # page-range parts are written and read within their job's round, then dropped
        Rule(
            SCRATCH,
            f"{under}{SCRATCH}/",
            days(round_s + WRITE_SLACK_S),
            "a job's longest round, rounded up",
        ),
        # S3's own leftovers (our writes are atomic: a crash mid-upload leaves parts only)
        Rule(
            "multipart",
            under,
            MULTIPART_DAYS,
            "uploads that never completed: S3's leftovers, unseen by listing",
            multipart=True,
        ),
    )
    return Plan(bucket, store_prefix, rules, ((SOURCES, SOURCES_LEFT_OUT),))


def rule_prefix(rule: dict[str, Any]) -> str:
    """A rule's key prefix ('' for the whole bucket, or a filter of tags or sizes alone)."""
    where = rule.get("Filter")
    if where is None:
        return str(rule.get("Prefix", ""))  # the old form, before Filter
    return str(where.get("Prefix", where.get("And", {}).get("Prefix", "")))


def _canonical(rules: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """Rules as comparable values, in ID order (S3 may return keys and rules in any order)."""
    import json

    return sorted((str(r.get("ID", "")), json.dumps(r, sort_keys=True)) for r in rules)


@dataclass(frozen=True, slots=True)
class Bucket:
    """The bucket's rules now, split into this store's and the others (foreign)."""

    ours: tuple[dict[str, Any], ...]
    foreign: tuple[dict[str, Any], ...]

    def matches(self, plan: Plan) -> bool:
        return _canonical(self.ours) == _canonical(plan.wanted())


@contextlib.contextmanager
def _s3(action: str) -> Iterator[None]:
    """botocore's errors as ours, once: an outage is transient (exit 75); anything else the
    bucket says no with (``AccessDenied``, ``NoSuchBucket``) is ``LIFECYCLE_REFUSED``."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        yield
    except ClientError as exc:
        response = exc.response or {}
        code = str(response.get("Error", {}).get("Code", ""))
        status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        if status >= 500 or code in {"SlowDown", "ServiceUnavailable", "RequestTimeout"}:
            raise StorageUnavailable(f"object storage {action} failed ({code})") from None
        raise LifecycleRefused(
            f"the bucket refused to {action} its lifecycle configuration ({code or status}); "
            "the caller needs s3:GetLifecycleConfiguration and s3:PutLifecycleConfiguration"
        ) from None
    except BotoCoreError as exc:
        raise StorageUnavailable(f"object storage {action} failed ({type(exc).__name__})") from None


def read_bucket(client: Any, plan: Plan) -> Bucket:
    """The bucket's rules now (none is an empty configuration, not an error)."""
    from botocore.exceptions import ClientError

    with _s3("read"):
        try:
            rules = client.get_bucket_lifecycle_configuration(Bucket=plan.bucket)["Rules"]
        except ClientError as exc:
            if (exc.response or {}).get("Error", {}).get("Code") != "NoSuchLifecycleConfiguration":
                raise
            rules = []
    return Bucket(
        tuple(r for r in rules if plan.is_ours(r)),
        tuple(r for r in rules if not plan.is_ours(r)),
    )


def apply(client: Any, plan: Plan, *, force: bool = False) -> tuple[Bucket, bool]:
    """Write the plan's rules (with ``force``, every foreign rule written back beside them,
    as it was); returns what the bucket had before and whether anything was written. Nothing
    is written when ours already match; foreign rules without ``force`` are
    ``LIFECYCLE_FOREIGN_RULES`` and nothing changes."""
    before = read_bucket(client, plan)
    if before.matches(plan):
        return before, False
    if before.foreign and not force:
        raise ForeignLifecycleRules(
            f"the bucket has {len(before.foreign)} lifecycle rule(s) Pressroom did not make "
            f"({', '.join(str(r.get('ID', '?')) for r in before.foreign)}), and writing "
            "replaces the whole configuration: --force writes them back beside Pressroom's, "
            "unchanged"
        )
    rules = [*before.foreign, *plan.wanted()]
    with _s3("write"):
        client.put_bucket_lifecycle_configuration(
            Bucket=plan.bucket, LifecycleConfiguration={"Rules": rules}
        )
    return before, True
