"""The bucket's lifecycle rules, made from the retention settings, so that S3 deletes what
Pressroom would delete even when housekeeping never runs (no ``serve``, a loop that keeps
failing). The rules are a backstop behind housekeeping, never ahead of it: each waits at least
as long as the service would, counted from the object's creation (S3's clock) and rounded up to
whole days (S3's unit). An area no age bounds safely gets no expiration, and says why.

One rule per area of the store's layout (``P/sources/``, ``P/artifacts/``, …), each also
aborting that area's incomplete multipart uploads: the rules act on the store's own keys and
nothing else, even for a store at the bucket's root (which has no prefix of its own to scope a
rule to, so a rule on ``P/`` would reach every key in the bucket).

``PutBucketLifecycleConfiguration`` replaces the bucket's whole configuration, so rules that
Pressroom did not make (foreign ones) are never overwritten silently: without ``force`` their
presence is ``LIFECYCLE_FOREIGN_RULES``; with it they are written back beside ours, unchanged.
What no ``force`` writes is ``LIFECYCLE_OVERLAP``: our rules over a foreign rule's keys (they
would cut its objects' lives short), or this store and another Pressroom store's in one
another's keys (one's rules would expire the other's sources).
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
    LifecycleOverlap,
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
AREAS = (ARTIFACTS, REVIEW, SCRATCH, SOURCES)  # every key a store writes is in one of these

SOURCES_NO_EXPIRY = (
    "no expiration: a source is kept until its job is delivered, and a redrive or a "
    "reviewer's corrections send a job round again on a fresh clock (each round up to its "
    "deadline, each hold up to PRESSROOM_REVIEW_RETENTION_SECONDS), so no age since upload "
    "bounds it and any age rule could delete an accepted job's source. Housekeeping deletes "
    "sources: on delivery, a dead letter's after PRESSROOM_RETENTION_SECONDS, orphans after an "
    "hour"
)


def days(seconds: float) -> int:
    """Whole days, rounded up (never fewer than one): S3 expires an object at the first
    midnight UTC at least this many days after its creation, so it never goes sooner."""
    return max(1, math.ceil(seconds / DAY_S))


def _under(store_prefix: str) -> str:
    return f"{store_prefix}/" if store_prefix else ""


def _nest(one: str, other: str) -> bool:
    """Whether two key prefixes share keys: one is the start of the other."""
    return one.startswith(other) or other.startswith(one)


@dataclass(frozen=True, slots=True)
class Rule:
    """One area's rule: objects under ``prefix`` expire ``days`` after creation (``None``:
    never by age), and uploads under it that never completed are aborted ``MULTIPART_DAYS``
    after they began (S3 allows both in one rule filtered by prefix alone)."""

    area: str
    prefix: str
    days: int | None
    why: str

    def rule_id(self, store_prefix: str) -> str:
        """``pressroom-AREA``, with ``@PREFIX`` for a store inside the bucket: two Pressroom
        stores sharing a bucket never take each other's rules for their own."""
        return f"{ID_PREFIX}{self.area}" + (f"@{store_prefix}" if store_prefix else "")

    def as_s3(self, store_prefix: str) -> dict[str, Any]:
        expire: dict[str, Any] = {} if self.days is None else {"Expiration": {"Days": self.days}}
        return {
            "ID": self.rule_id(store_prefix),
            "Status": "Enabled",
            "Filter": {"Prefix": self.prefix},
            **expire,
            "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": MULTIPART_DAYS},
        }


def other_store(rule: dict[str, Any]) -> str | None:
    """The prefix of the Pressroom store whose ID ``rule`` has (``pressroom-AREA`` or
    ``pressroom-AREA@PREFIX``, AREA one of ours), or None for an ID no store makes."""
    name, at, store_prefix = str(rule.get("ID", "")).partition("@")
    if not name.startswith(ID_PREFIX) or name[len(ID_PREFIX) :] not in AREAS:
        return None
    if not at:
        return ""  # a store at the bucket's root
    return store_prefix or None


@dataclass(frozen=True, slots=True)
class Plan:
    """What the settings ask of a bucket: one rule per area, each with why."""

    bucket: str
    store_prefix: str
    rules: tuple[Rule, ...]

    def wanted(self) -> list[dict[str, Any]]:
        return [rule.as_s3(self.store_prefix) for rule in self.rules]

    def is_ours(self, rule: dict[str, Any]) -> bool:
        """A rule this store's Pressroom made: its ID is exactly one this plan makes (an
        area's, at this prefix), nothing looser (an operator's ``pressroom-logs`` is not)."""
        return str(rule.get("ID", "")) in {r.rule_id(self.store_prefix) for r in self.rules}

    def covers_ours(self, rule: dict[str, Any]) -> bool:
        """Whether a (foreign) rule may act on this store's keys: its prefix and an area's
        nest."""
        theirs = rule_prefix(rule)
        return any(_nest(theirs, mine.prefix) for mine in self.rules)

    def overlap(self, rule: dict[str, Any]) -> str | None:
        """Why writing this plan beside ``rule`` (not ours) would harm someone's keys, or
        None: another Pressroom store's rules or areas share keys with ours (one store's
        rules would expire the other's objects: ``s3://B/p``'s ``p/review/`` holds all of
        ``s3://B/p/review``), or one of our rules reaches into a foreign rule's keys
        (our expiration would cut its objects' lives short)."""
        theirs = rule_prefix(rule)
        store = other_store(rule)
        if store is not None:
            areas = [theirs, *(f"{_under(store)}{area}/" for area in AREAS)]
            if any(_nest(a, mine.prefix) for a in areas for mine in self.rules):
                return f"{rule.get('ID')} (another Pressroom store's, sharing keys with this one)"
            return None
        if any(theirs.startswith(mine.prefix) for mine in self.rules):
            return f"{rule.get('ID')} (foreign, on keys a Pressroom rule here would expire)"
        return None


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
    under = _under(store_prefix)
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
        # sources: S3's own leftovers only (our writes are atomic: a crash mid-upload leaves
        # parts, never an object)
        Rule(SOURCES, f"{under}{SOURCES}/", None, SOURCES_NO_EXPIRY),
    )
    return Plan(bucket, store_prefix, rules)


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
    """The bucket's rules now, split into this store's and the others (foreign), and the
    configuration's bucket-wide setting that is not a rule (``TransitionDefaultMinimumObjectSize``,
    None when S3 sent none): a write passes it back, or S3 would reset it to its default."""

    ours: tuple[dict[str, Any], ...]
    foreign: tuple[dict[str, Any], ...]
    min_object_size: str | None = None

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
            found = client.get_bucket_lifecycle_configuration(Bucket=plan.bucket)
        except ClientError as exc:
            if (exc.response or {}).get("Error", {}).get("Code") != "NoSuchLifecycleConfiguration":
                raise
            found = {}
    rules = found.get("Rules", [])
    size = found.get("TransitionDefaultMinimumObjectSize")
    return Bucket(
        tuple(r for r in rules if plan.is_ours(r)),
        tuple(r for r in rules if not plan.is_ours(r)),
        str(size) if size else None,
    )


def apply(client: Any, plan: Plan, *, force: bool = False) -> tuple[Bucket, bool]:
    """Write the plan's rules (with ``force``, every foreign rule written back beside them,
    as it was, and the bucket-wide setting kept); returns what the bucket had before and
    whether anything was written. Rules sharing keys with ours the wrong way are
    ``LIFECYCLE_OVERLAP`` whatever ``force`` says (checked even when ours already match: the
    bucket as it is harms someone's keys); then nothing is written when ours already match;
    foreign rules without ``force`` are ``LIFECYCLE_FOREIGN_RULES`` and nothing changes."""
    before = read_bucket(client, plan)
    clashes = [why for why in map(plan.overlap, before.foreign) if why]
    if clashes:
        raise LifecycleOverlap(
            f"the bucket's lifecycle rules share keys with this store's ({'; '.join(clashes)}): "
            "no store's rules may expire another's keys, so nothing was written, --force or "
            "not; give each store a prefix of its own, not inside another's, and keep foreign "
            "rules off the store's areas"
        )
    if before.matches(plan):
        return before, False
    if before.foreign and not force:
        raise ForeignLifecycleRules(
            f"the bucket has {len(before.foreign)} lifecycle rule(s) this store did not make "
            f"({', '.join(str(r.get('ID', '?')) for r in before.foreign)}), and writing "
            "replaces the whole configuration: --force writes them back beside Pressroom's, "
            "unchanged"
        )
    rules = [*before.foreign, *plan.wanted()]
    size = (
        {"TransitionDefaultMinimumObjectSize": before.min_object_size}
        if before.min_object_size
        else {}
    )
    with _s3("write"):
        client.put_bucket_lifecycle_configuration(
            Bucket=plan.bucket, LifecycleConfiguration={"Rules": rules}, **size
        )
    return before, True
