"""`pressroom storage lifecycle` against moto's S3 server (HTTP): the rules read back from the
bucket are what the settings say, for the defaults and for other retention settings; `--show`
says what is wanted, what is there and whether they match; `--apply` twice writes once; rules
Pressroom did not make stop it without `--force` and are written back unchanged with it (and
the bucket-wide minimum object size with them), with a warning for those on Pressroom's keys;
a store inside the bucket, or at its root, keeps to its own keys; stores whose keys nest, and
foreign rules ours would cut short, are refused even with `--force`; local storage, a missing
bucket and a bucket that does not answer are refused with their codes and exit statuses."""

from __future__ import annotations

from typing import Any

import pytest

from pressroom.cli import main
from tests.s3server import S3Server, free_port

pytestmark = pytest.mark.integration

DAY = 86400


def expected(prefix: str, artifacts: int, review: int, scratch: int) -> list[dict[str, Any]]:
    """The rules as an operator reads them off the docs, written out by hand: one per area,
    each aborting the area's incomplete uploads after a day; sources never expire."""
    at = f"@{prefix}" if prefix else ""
    under = f"{prefix}/" if prefix else ""

    def rule(area: str, days: int | None) -> dict[str, Any]:
        expire = {} if days is None else {"Expiration": {"Days": days}}
        return {
            "ID": f"pressroom-{area}{at}",
            "Status": "Enabled",
            "Filter": {"Prefix": f"{under}{area}/"},
            **expire,
            "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1},
        }

    return [
        rule("artifacts", artifacts),
        rule("review", review),
        rule("scratch", scratch),
        rule("sources", None),
    ]


def on_bucket(s3: S3Server, bucket: str) -> list[dict[str, Any]]:
    rules = s3.client().get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    return sorted(rules, key=lambda r: str(r["ID"]))


def by_id(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rules, key=lambda r: str(r["ID"]))


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["storage", "lifecycle", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def bucket(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> str:
    name = s3_server.new_bucket()
    for key, value in s3_server.env(name).items():
        monkeypatch.setenv(key, value)
    return name


FOREIGN = {
    "ID": "logs-expire",
    "Status": "Enabled",
    "Filter": {"Prefix": "logs/"},
    "Expiration": {"Days": 3},
}


def test_the_default_settings_rules_read_back_from_the_bucket(
    s3_server: S3Server, bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Retention 7 days, review 30, the longest round 30 (a client's longest deadline): outputs
    68 days (7 + 30 + 30 and an hour, rounded up), held copies 31, page-range parts 31, and
    incomplete uploads aborted after a day in every area; sources never expire, and --show
    says why."""
    code, out, _ = run(capsys, "--apply")
    assert code == 0
    assert out.splitlines()[-1] == f"applied: 4 rules to s3://{bucket}/pressroom"
    assert on_bucket(s3_server, bucket) == by_id(expected("pressroom", 68, 31, 31))
    sources = [r for r in on_bucket(s3_server, bucket) if "sources" in r["ID"]]
    assert [sorted(r) for r in sources] == [
        ["AbortIncompleteMultipartUpload", "Filter", "ID", "Status"]
    ]

    code, out, _ = run(capsys, "--show")
    assert code == 0
    assert (
        "  pressroom-sources@pressroom  pressroom/sources/  abort incomplete multipart uploads "
        "after 1 day(s)  (no expiration: a source is kept until its job is delivered" in out
    )
    assert (
        "  pressroom-artifacts@pressroom  pressroom/artifacts/  expire after 68 days; abort "
        "incomplete multipart uploads after 1 day(s)  (retention + review retention" in out
    )
    assert out.splitlines()[-1] == "lifecycle: in place"


def test_other_retention_settings_give_other_rules_and_apply_replaces_ours(
    s3_server: S3Server,
    bucket: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Retention an hour, review two days, a bulk deadline of 40 days (longer than a client
    may ask): outputs 43 days (1 h + 2 d + 40 d + 1 h, up), held copies 3 (2 d + 1 h, up),
    parts 41. Applied over the defaults' rules, ours are replaced with no --force: they are
    Pressroom's own."""
    assert run(capsys, "--apply")[0] == 0
    monkeypatch.setenv("PRESSROOM_RETENTION_SECONDS", "3600")
    monkeypatch.setenv("PRESSROOM_REVIEW_RETENTION_SECONDS", str(2 * DAY))
    monkeypatch.setenv("PRESSROOM_DEADLINE_BULK_SECONDS", str(40 * DAY))
    code, out, _ = run(capsys, "--show")
    assert (code, out.splitlines()[-1]) == (
        0,
        "lifecycle: differs (run `pressroom storage lifecycle --apply`)",
    )
    assert run(capsys, "--apply")[0] == 0
    assert on_bucket(s3_server, bucket) == by_id(expected("pressroom", 43, 3, 41))


def test_show_on_a_bare_bucket_and_apply_twice_writes_once(
    s3_server: S3Server, bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "--show")
    assert code == 0
    assert "on the bucket now:\n  (no lifecycle rules)\n" in out
    assert out.splitlines()[-1].startswith("lifecycle: differs")
    assert "(retention + review retention + a job's longest round, rounded up)" in out

    assert run(capsys, "--apply")[0] == 0
    first = on_bucket(s3_server, bucket)
    code, out, _ = run(capsys, "--apply")
    assert (code, out) == (0, f"unchanged: s3://{bucket}/pressroom already has these rules (4)\n")
    assert on_bucket(s3_server, bucket) == first


def test_foreign_rules_stop_apply_and_force_writes_them_back_unchanged(
    s3_server: S3Server, bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    everything = {**FOREIGN, "ID": "tmp-sweep", "Filter": {"Prefix": ""}}
    s3_server.client().put_bucket_lifecycle_configuration(
        Bucket=bucket, LifecycleConfiguration={"Rules": [FOREIGN, everything]}
    )
    code, out, err = run(capsys, "--apply")
    assert code == 2
    assert err.startswith("LIFECYCLE_FOREIGN_RULES: the bucket has 2 lifecycle rule(s)")
    assert "logs-expire, tmp-sweep" in err and "--force" in err
    assert on_bucket(s3_server, bucket) == by_id([FOREIGN, everything])  # nothing written

    code, out, _ = run(capsys, "--show")
    assert "  logs-expire  logs/  expire after 3 days  (foreign: not Pressroom's)" in out
    assert (
        "tmp-sweep  (whole bucket)  expire after 3 days  (foreign: not Pressroom's, "
        "covers Pressroom's keys)" in out
    )

    code, out, _ = run(capsys, "--apply", "--force")
    assert code == 0
    assert out.splitlines()[-1].endswith(", 2 foreign kept")
    assert on_bucket(s3_server, bucket) == by_id(
        [FOREIGN, everything, *expected("pressroom", 68, 31, 31)]
    )
    assert run(capsys, "--show")[1].splitlines()[-1] == "lifecycle: in place"


def test_force_alone_is_a_usage_error(bucket: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--show", "--force")
    assert (code, err) == (2, "error: --force goes with --apply\n")


def test_a_store_inside_the_bucket_keeps_to_its_prefix(
    s3_server: S3Server,
    bucket: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two stores in one bucket (`deep/store` and the bucket's root): each store's rules name
    its prefix in their IDs and filters; to each the other's are foreign, kept with --force,
    and re-applying either changes nothing."""
    monkeypatch.setenv("PRESSROOM_STORAGE_URL", f"s3://{bucket}/deep/store/")
    assert run(capsys, "--apply")[0] == 0
    deep = expected("deep/store", 68, 31, 31)
    assert on_bucket(s3_server, bucket) == by_id(deep)

    monkeypatch.setenv("PRESSROOM_STORAGE_URL", f"s3://{bucket}")
    code, _, err = run(capsys, "--apply")
    assert code == 2 and "pressroom-artifacts@deep/store" in err
    assert run(capsys, "--apply", "--force")[0] == 0
    root = expected("", 68, 31, 31)
    assert root[0]["ID"] == "pressroom-artifacts" and root[0]["Filter"] == {"Prefix": "artifacts/"}
    assert on_bucket(s3_server, bucket) == by_id([*deep, *root])

    code, out, _ = run(capsys, "--apply")
    assert (code, out.split(":")[0]) == (0, "unchanged")
    monkeypatch.setenv("PRESSROOM_STORAGE_URL", f"s3://{bucket}/deep/store")
    code, out, _ = run(capsys, "--apply")
    assert (code, out.split(":")[0]) == (0, "unchanged")
    assert on_bucket(s3_server, bucket) == by_id([*deep, *root])


def test_local_storage_is_refused_with_its_code(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("PRESSROOM_STORAGE_URL", raising=False)
    for args in (["--show"], ["--apply"], ["--apply", "--force"]):
        code, out, err = run(capsys, *args)
        assert (code, out) == (2, "")
        assert err.startswith("LIFECYCLE_NEEDS_S3: lifecycle rules are an S3 feature")
    assert list(tmp_path.iterdir()) == []


def test_a_missing_bucket_is_refused_and_a_silent_one_is_temporary(
    s3_server: S3Server,
    bucket: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PRESSROOM_STORAGE_URL", f"s3://{bucket}-gone/pressroom")
    code, _, err = run(capsys, "--show")
    assert code == 2 and err.startswith("LIFECYCLE_REFUSED: ") and "(NoSuchBucket)" in err

    monkeypatch.setenv("PRESSROOM_STORAGE_URL", f"s3://{bucket}/pressroom")
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    code, _, err = run(capsys, "--apply")
    assert code == 75 and err.startswith("STORAGE_UNAVAILABLE: ")


def test_a_root_store_claims_only_its_own_ids(
    s3_server: S3Server,
    bucket: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An operator's rule that happens to be named `pressroom-logs` is theirs, not a root
    store's: `--apply` stops on it and `--force` writes it back; and no rule of the root
    store reaches past its areas (there is no prefix to scope one to: `logs/` keeps its
    incomplete uploads)."""
    logs = {**FOREIGN, "ID": "pressroom-logs", "Expiration": {"Days": 400}}
    s3_server.client().put_bucket_lifecycle_configuration(
        Bucket=bucket, LifecycleConfiguration={"Rules": [logs]}
    )
    monkeypatch.setenv("PRESSROOM_STORAGE_URL", f"s3://{bucket}")
    code, _, err = run(capsys, "--apply")
    assert code == 2 and err.startswith("LIFECYCLE_FOREIGN_RULES: ") and "(pressroom-logs)" in err
    assert on_bucket(s3_server, bucket) == [logs]

    code, out, _ = run(capsys, "--show")
    assert "  pressroom-logs  logs/  expire after 400 days  (foreign: not Pressroom's)" in out
    assert run(capsys, "--apply", "--force")[0] == 0
    assert on_bucket(s3_server, bucket) == by_id([logs, *expected("", 68, 31, 31)])
    ours = [r for r in on_bucket(s3_server, bucket) if r["ID"] != "pressroom-logs"]
    assert sorted(r["Filter"]["Prefix"] for r in ours) == [
        "artifacts/",
        "review/",
        "scratch/",
        "sources/",
    ]


@pytest.mark.parametrize(
    ("first", "second"),
    [("p", "p/review"), ("p/review", "p"), ("", "review"), ("review", "")],
)
def test_stores_whose_keys_nest_are_refused_even_with_force(
    s3_server: S3Server,
    bucket: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    first: str,
    second: str,
) -> None:
    """`s3://B/p`'s rule on `p/review/` would expire all of `s3://B/p/review` (its sources
    too), whichever store applied first; so would a root store's `review/` a store at
    `s3://B/review`. The second store's `--apply` is refused, `--force` or not, and the
    bucket keeps the first store's rules alone; `--show` names the clash."""

    def url(prefix: str) -> str:
        return f"s3://{bucket}/{prefix}" if prefix else f"s3://{bucket}"

    monkeypatch.setenv("PRESSROOM_STORAGE_URL", url(first))
    assert run(capsys, "--apply")[0] == 0
    kept = on_bucket(s3_server, bucket)
    assert kept == by_id(expected(first, 68, 31, 31))

    monkeypatch.setenv("PRESSROOM_STORAGE_URL", url(second))
    for args in (["--apply"], ["--apply", "--force"]):
        code, out, err = run(capsys, *args)
        assert (code, out) == (2, "")
        assert err.startswith("LIFECYCLE_OVERLAP: ") and "another Pressroom store's" in err
        assert on_bucket(s3_server, bucket) == kept
    code, out, _ = run(capsys, "--show")
    assert code == 0 and "    LIFECYCLE_OVERLAP: --apply refuses: pressroom-" in out


def test_a_foreign_rule_ours_would_cut_short_is_refused_even_with_force(
    s3_server: S3Server, bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A foreign rule keeping `pressroom/review/audit/` for 400 days: our `review/` rule would
    expire its objects after 31, so nothing is written; one beside the store's areas is fine."""
    audit = {**FOREIGN, "ID": "audit", "Filter": {"Prefix": "pressroom/review/audit/"}}
    s3_server.client().put_bucket_lifecycle_configuration(
        Bucket=bucket, LifecycleConfiguration={"Rules": [audit]}
    )
    code, _, err = run(capsys, "--apply", "--force")
    assert code == 2 and err.startswith("LIFECYCLE_OVERLAP: ") and "audit (foreign" in err
    assert on_bucket(s3_server, bucket) == [audit]

    beside = {**FOREIGN, "ID": "beside", "Filter": {"Prefix": "pressroom/logs/"}}
    s3_server.client().put_bucket_lifecycle_configuration(
        Bucket=bucket, LifecycleConfiguration={"Rules": [beside]}
    )
    code, _, err = run(capsys, "--apply", "--force")
    assert (code, err) == (0, "")
    assert on_bucket(s3_server, bucket) == by_id([beside, *expected("pressroom", 68, 31, 31)])


def test_force_warns_of_a_kept_rule_on_pressrooms_keys(
    s3_server: S3Server, bucket: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A foreign rule expiring the whole bucket after 2 days is kept by `--force`, and S3
    applies it to Pressroom's keys too (sources included): `--apply` says so on stderr, as
    `--show` marks it, every time it runs (also when nothing is written)."""
    sweep = {**FOREIGN, "ID": "tmp-cleanup", "Filter": {"Prefix": ""}, "Expiration": {"Days": 2}}
    s3_server.client().put_bucket_lifecycle_configuration(
        Bucket=bucket, LifecycleConfiguration={"Rules": [sweep, FOREIGN]}
    )
    warning = (
        "warning: tmp-cleanup  (whole bucket)  expire after 2 days  "
        "(foreign: not Pressroom's, covers Pressroom's keys)\n"
    )
    code, out, err = run(capsys, "--apply", "--force")
    assert code == 0 and out.splitlines()[-1].endswith(", 2 foreign kept")
    assert err == warning  # logs-expire (logs/) is not on Pressroom's keys: not named
    code, out, err = run(capsys, "--apply")
    assert (code, out.split(":")[0], err) == (0, "unchanged", warning)
    assert (
        "tmp-cleanup  (whole bucket)  expire after 2 days  (foreign: not Pressroom's, "
        in (run(capsys, "--show")[1])
    )


def test_force_writes_back_the_bucket_wide_minimum_object_size(
    s3_server: S3Server, bucket: str
) -> None:
    """`TransitionDefaultMinimumObjectSize` is the configuration's, not a rule's: a write
    without it sets S3's default. moto answers its default on every read and ignores what it
    is sent, so this checks the write carries what the read said (a non-default value is the
    Stubber test in tests/unit/test_lifecycle.py)."""
    from pressroom.lifecycle import apply, plan
    from pressroom.settings import Settings
    from pressroom.storage.s3 import make_client
    from tests.s3server import CREDENTIALS

    s3_server.client().put_bucket_lifecycle_configuration(
        Bucket=bucket, LifecycleConfiguration={"Rules": [FOREIGN]}
    )
    said = s3_server.client().get_bucket_lifecycle_configuration(Bucket=bucket)
    assert said["TransitionDefaultMinimumObjectSize"] == "all_storage_classes_128K"
    sent: list[str | None] = []
    client = make_client(endpoint_url=s3_server.url, **CREDENTIALS)
    client.meta.events.register(
        "before-send.s3.PutBucketLifecycleConfiguration",
        lambda request, **_: sent.append(
            request.headers.get("x-amz-transition-default-minimum-object-size")
        ),
    )
    try:
        wanted = plan(Settings.from_env({"PRESSROOM_STORAGE_URL": f"s3://{bucket}/pressroom"}))
        before, written = apply(client, wanted, force=True)
    finally:
        client.close()
    assert written and before.min_object_size == "all_storage_classes_128K"
    assert [s.decode() if isinstance(s, bytes) else s for s in sent] == ["all_storage_classes_128K"]
    assert on_bucket(s3_server, bucket) == by_id([FOREIGN, *expected("pressroom", 68, 31, 31)])
