"""`pressroom storage lifecycle` against moto's S3 server (HTTP): the rules read back from the
bucket are what the settings say, for the defaults and for other retention settings; `--show`
says what is wanted, what is there and whether they match; `--apply` twice writes once; rules
Pressroom did not make stop it without `--force` and are written back unchanged with it; a
store inside the bucket keeps to its prefix; local storage, a missing bucket and a bucket that
does not answer are refused with their codes and exit statuses."""

from __future__ import annotations

from typing import Any

import pytest

from pressroom.cli import main
from tests.s3server import S3Server, free_port

pytestmark = pytest.mark.integration

DAY = 86400


def expected(prefix: str, artifacts: int, review: int, scratch: int) -> list[dict[str, Any]]:
    """The rules as an operator reads them off the docs, written out by hand."""
    at = f"@{prefix}" if prefix else ""
    under = f"{prefix}/" if prefix else ""

    def expire(area: str, days: int) -> dict[str, Any]:
        return {
            "ID": f"pressroom-{area}{at}",
            "Status": "Enabled",
            "Filter": {"Prefix": f"{under}{area}/"},
            "Expiration": {"Days": days},
        }

    return [
        expire("artifacts", artifacts),
        expire("review", review),
        expire("scratch", scratch),
        {
            "ID": f"pressroom-multipart{at}",
            "Status": "Enabled",
            "Filter": {"Prefix": under},
            "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1},
        },
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
    incomplete uploads aborted after a day; no rule for sources, and --show says why."""
    code, out, _ = run(capsys, "--apply")
    assert code == 0
    assert out.splitlines()[-1] == f"applied: 4 rules to s3://{bucket}/pressroom"
    assert on_bucket(s3_server, bucket) == by_id(expected("pressroom", 68, 31, 31))
    assert not any("sources" in str(rule) for rule in on_bucket(s3_server, bucket))

    code, out, _ = run(capsys, "--show")
    assert code == 0
    assert "  sources: no rule: a source is kept until its job is delivered" in out
    assert "  pressroom-artifacts@pressroom  pressroom/artifacts/  expire after 68 days" in out
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
