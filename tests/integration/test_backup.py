"""`db backup` and `db restore` on real SQLite files (a real writer in another process, real
migrations), and `config show`'s masking of every secret, in-process."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest
from alembic import command
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import create_engine, inspect

from pressroom.backup import backup, database_path, keep_also, known_revisions, restore
from pressroom.effective import MASK, effective, secret_name
from pressroom.errors import BadConfig, BadRequest, Conflict, UntrustedBackup
from pressroom.jobs.migrate import alembic_config, upgrade
from pressroom.jobs.transport import make_engine
from pressroom.settings import VARIABLES, Settings

pytestmark = pytest.mark.integration

HEAD = known_revisions()[-1]


def settings_for(data: Path, **env: str) -> Settings:
    return Settings.from_env({"PRESSROOM_DATA_DIR": str(data), **env})


def make_store(data: Path, revision: str = "head") -> Path:
    """A Pressroom database in ``data`` at ``revision``, with one API key in it."""
    data.mkdir(parents=True, exist_ok=True)
    db = data / "pressroom.db"
    engine = make_engine(f"sqlite:///{db}")
    command.upgrade(alembic_config(engine), revision)
    engine.dispose()
    add_key(db, "before")
    return db


def add_key(db: Path, key_id: str) -> None:
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "INSERT INTO api_keys (id, tenant, key_hash, created_at) VALUES (?, 't', ?, 0)",
            (key_id, key_id * 8),
        )


def key_ids(db: Path) -> set[str]:
    with closing(sqlite3.connect(db)) as conn:
        return {row[0] for row in conn.execute("SELECT id FROM api_keys")}


def revision_of(db: Path) -> str:
    with closing(sqlite3.connect(db)) as conn:
        return str(conn.execute("SELECT version_num FROM alembic_version").fetchone()[0])


@contextmanager
def umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


@contextmanager
def holder(db: Path, *, write: bool = False) -> Iterator[subprocess.Popen[str]]:
    """Another process with the database open as the service has it (WAL, a connection kept),
    idle between writes, or writing pairs of rows in one transaction each."""
    script = f"""
import sqlite3, sys, time
conn = sqlite3.connect({str(db)!r}, isolation_level=None, timeout=30)
conn.execute("PRAGMA journal_mode=WAL")
conn.execute("CREATE TABLE IF NOT EXISTS pairs (n INTEGER, pad BLOB)")
conn.execute("SELECT count(*) FROM jobs").fetchall()
print("ready", flush=True)
n = 0
while True:
    if {write!r}:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO pairs VALUES (?, randomblob(3000))", (n,))
        conn.execute("INSERT INTO pairs VALUES (?, randomblob(3000))", (n,))
        conn.execute("COMMIT")
        n += 1
    else:
        time.sleep(0.05)
"""
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        yield process
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def test_a_backup_taken_while_another_process_writes_is_one_consistent_copy(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    db = make_store(data)
    dest = tmp_path / "copy.db"
    seen: list[tuple[int, int]] = []
    with holder(db, write=True):
        time.sleep(1.0)  # thousands of pages written, many still only in the WAL
        with umask(0):  # the mode does not come from whoever runs it
            copied = backup(
                settings_for(data), dest, progress=lambda done, total: seen.append((done, total))
            )
    assert copied.revision == HEAD and copied.size == dest.stat().st_size
    assert dest.stat().st_mode & 0o777 == 0o600
    # one file, nothing beside it, and no half-written name left in the folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.db", "data"]
    with closing(sqlite3.connect(dest)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows, odd = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE n IN "
            "(SELECT n FROM pairs GROUP BY n HAVING count(*) != 2)) FROM pairs"
        ).fetchone()
    assert rows > 100 and odd == 0  # committed pairs only, never half a transaction
    assert key_ids(dest) == {"before"}
    assert seen and seen[-1][0] == seen[-1][1] == copied.pages  # the last step: every page
    print(f"\nbackup of {copied.size / 1e6:.1f} MB while writing: {copied.seconds:.3f} s")


def test_a_backup_never_replaces_a_file(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_store(data)
    dest = tmp_path / "copy.db"
    dest.write_text("keep me")
    with pytest.raises(Conflict, match="exists"):
        backup(settings_for(data), dest)
    assert dest.read_text() == "keep me"
    link = tmp_path / "dangling.db"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(Conflict):
        backup(settings_for(data), link)
    assert not (tmp_path / "nowhere").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy.db", "dangling.db", "data"]


def test_postgresql_is_refused_with_the_recipe_and_without_the_password(tmp_path: Path) -> None:
    pg = settings_for(tmp_path, PRESSROOM_DATABASE_URL="postgresql://app:pw-98765@db:5432/pr")
    for copy in (backup, restore):
        with pytest.raises(BadConfig) as refused:
            copy(pg, tmp_path / "x.db")
        assert "pg_dump -Fc" in refused.value.message and "pw-98765" not in str(refused.value)
    assert not (tmp_path / "x.db").exists()
    assert database_path(settings_for(tmp_path)) == (tmp_path / "pressroom.db").resolve()


def test_a_restore_into_a_fresh_data_dir_is_the_backup_at_mode_0600(tmp_path: Path) -> None:
    db = make_store(tmp_path / "a")
    copy = tmp_path / "copy.db"
    backup(settings_for(tmp_path / "a"), copy)
    add_key(db, "after")  # written after the backup: not in it
    fresh = tmp_path / "b"
    with umask(0):
        fresh.mkdir(mode=0o755)  # a folder made by hand: tightened as every command does
        copied = restore(settings_for(fresh), copy)
    target = fresh / "pressroom.db"
    assert fresh.stat().st_mode & 0o777 == 0o700
    assert copied.revision == HEAD and copied.upgraded_from is None
    assert target.stat().st_mode & 0o777 == 0o600
    assert key_ids(target) == {"before"}
    assert [p.name for p in fresh.iterdir()] == ["pressroom.db"]
    # the service opens it and finds its keys
    engine = make_engine(f"sqlite:///{target}")
    upgrade(engine)  # a no-op at head: the revision is what the code expects
    engine.dispose()
    assert revision_of(target) == HEAD


def test_an_older_schema_is_restored_then_upgraded(tmp_path: Path) -> None:
    older = known_revisions()[-2]
    old_db = make_store(tmp_path / "old", revision=older)
    assert revision_of(old_db) == older
    copied = restore(settings_for(tmp_path / "new"), old_db)
    target = tmp_path / "new" / "pressroom.db"
    assert copied.upgraded_from == older and copied.revision == HEAD
    assert revision_of(target) == HEAD and key_ids(target) == {"before"}
    engine = create_engine(f"sqlite:///{target}")
    from pressroom.jobs.schema import metadata

    found = inspect(engine)
    for table in metadata.sorted_tables:
        assert sorted(c["name"] for c in found.get_columns(table.name)) == sorted(
            c.name for c in table.columns
        ), table.name
    engine.dispose()
    assert revision_of(old_db) == older  # the source is only read


def test_a_newer_schema_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    db = make_store(tmp_path / "a")
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE alembic_version SET version_num = '9999'")
    fresh = tmp_path / "b"
    with pytest.raises(BadRequest, match="9999 is newer"):
        restore(settings_for(fresh), db)
    assert list(fresh.iterdir()) == []


def another_apps_database(path: Path) -> None:
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE notes (x)")


@pytest.mark.parametrize(
    "make",
    [
        lambda p: p.write_text("jobs,state\n1,complete\n"),
        lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\x00" * 200),
        another_apps_database,
        lambda p: p.mkdir(),
    ],
    ids=["text", "torn-header", "another-apps-database", "folder"],
)
def test_what_is_not_a_pressroom_database_is_refused(
    tmp_path: Path, make: Callable[[Path], object]
) -> None:
    src = tmp_path / "src.db"
    make(src)
    fresh = tmp_path / "b"
    with pytest.raises(BadRequest):
        restore(settings_for(fresh), src)
    assert not (fresh / "pressroom.db").exists()
    assert not fresh.exists() or list(fresh.iterdir()) == []


def test_a_restore_over_a_database_needs_force_and_never_while_it_is_open(
    tmp_path: Path,
) -> None:
    db = make_store(tmp_path / "a")
    copy = tmp_path / "copy.db"
    backup(settings_for(tmp_path / "a"), copy)
    add_key(db, "after")
    here = settings_for(tmp_path / "a")
    with pytest.raises(Conflict, match="--force"):
        restore(here, copy)
    assert key_ids(db) == {"before", "after"}
    with holder(db):  # idle, as a quiet service is
        with pytest.raises(Conflict, match="in use"):
            restore(here, copy, force=True)
        assert key_ids(db) == {"before", "after"}
    restore(here, copy, force=True)
    assert key_ids(db) == {"before"}
    assert db.stat().st_mode & 0o777 == 0o600
    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["pressroom.db"]


def test_the_last_line_names_the_blobs_and_keys_but_no_secret(tmp_path: Path) -> None:
    local = keep_also(settings_for(tmp_path))
    assert str((tmp_path / "blobs").resolve()) in local and "signing.key" in local
    assert "master key" not in local
    master = "bWFzdGVyLWtleS1vZi10aGlydHktdHdvLWJ5dGVzIQ=="
    s3 = keep_also(
        settings_for(
            tmp_path,
            PRESSROOM_STORAGE_URL="s3://tok-55555@bucket-x/prefix",
            PRESSROOM_MASTER_KEY=master,
            PRESSROOM_MASTER_KEYS_OLD="old-key-77777",
            PRESSROOM_SIGNING_KEY="s" * 40,
        )
    )
    assert "bucket-x/prefix" in s3 and "PRESSROOM_MASTER_KEY" in s3
    assert "PRESSROOM_MASTER_KEYS_OLD" in s3 and "PRESSROOM_SIGNING_KEY" in s3
    for secret in (master, "old-key-77777", "s" * 40, "tok-55555"):
        assert secret not in s3


# -- config show -------------------------------------------------------------------------------

SECRET_VARIABLES = [
    v.name
    for v in VARIABLES
    if secret_name(v.name)
    and v.cast.expected in ("text", "a comma-separated list", "a URL", "a name", "a path")
]
URL_VARIABLES = [
    "PRESSROOM_DATABASE_URL",
    "PRESSROOM_STORAGE_URL",
    "PRESSROOM_VERIFIER_URL",
    "PRESSROOM_PUBLIC_URL",
    "PRESSROOM_S3_PUBLIC_ENDPOINT",
    "AWS_ENDPOINT_URL",
]
# read by boto3 and OpenTelemetry themselves: never shown, so never leaked
FOREIGN_SECRETS = ["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "OTEL_EXPORTER_OTLP_HEADERS"]


def test_the_secret_variables_are_the_ones_a_person_would_name() -> None:
    assert {
        "PRESSROOM_SIGNING_KEY",
        "PRESSROOM_API_KEY",
        "PRESSROOM_MASTER_KEY",
        "PRESSROOM_MASTER_KEY_FILE",
        "PRESSROOM_MASTER_KEYS_OLD",
    } <= set(SECRET_VARIABLES)


def shown(env: dict[str, str]) -> tuple[str, str]:
    lines = effective(env)
    return "\n".join(s.line() for s in lines), json.dumps([s.record() for s in lines])


@settings(max_examples=60, deadline=None)
@given(
    secret=st.text(
        alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-.~:@?#%!$*",
        min_size=6,
        max_size=40,
    )
)
def test_config_show_never_prints_a_secret(secret: str) -> None:
    secret = "Zq" + secret  # recognisable: never a number, a path or a word shown elsewhere
    env: dict[str, str] = {"PRESSROOM_LEASE_SECONDS": "17"}
    planted: list[str] = []
    for n, name in enumerate([*SECRET_VARIABLES, *FOREIGN_SECRETS]):
        env[name] = f"{secret}{n}"
        planted.append(env[name])
    for n, name in enumerate(URL_VARIABLES):
        password = f"{secret}u{n}"
        env[name] = (
            f"https://user{n}:{password}@host{n}.example/p?sslmode=require&token={secret}q{n}"
        )
        planted += [password, f"{secret}q{n}"]
    env["PRESSROOM_DATABASE_URL"] = f"postgresql://app:{secret}db@db:5432/pressroom"
    planted.append(f"{secret}db")
    text, data = shown(env)
    for value in planted:
        assert value not in text and value not in data
    # what is not secret is shown, with where it came from
    assert "PRESSROOM_LEASE_SECONDS = 17  (set)" in text
    if "@" not in secret:  # else the host may be masked too (fail closed)
        assert "postgresql://app:" + MASK + "@db:5432/pressroom" in text
        assert "host2.example/p?sslmode=require&token=" + MASK in text


def test_config_show_says_what_is_set_and_masks_a_files_secret(tmp_path: Path) -> None:
    config = tmp_path / "pressroom.toml"
    config.write_text(
        "PRESSROOM_MAX_PAGES = 77\nPRESSROOM_RETENTION_SECONDS = 3600\n"
        'PRESSROOM_SIGNING_KEY = "from-the-file-0123456789-abcdefghij"\n'
    )
    text, data = shown({"PRESSROOM_CONFIG": str(config), "PRESSROOM_MAX_PAGES": "88"})
    assert "from-the-file-0123456789" not in text and "from-the-file-0123456789" not in data
    records = {r["name"]: r for r in json.loads(data)}
    assert records["PRESSROOM_MAX_PAGES"] == {
        "name": "PRESSROOM_MAX_PAGES",
        "value": 88,
        "source": "set",
        "masked": False,
    }
    assert records["PRESSROOM_SIGNING_KEY"]["source"] == "set"
    assert "PRESSROOM_RETENTION_SECONDS = 3600  (set)" in text.splitlines()
    assert records["PRESSROOM_SIGNING_KEY"]["value"] == MASK
    assert records["PRESSROOM_LEASE_SECONDS"]["source"] == "default"
    assert records["PRESSROOM_API_KEY"] == {
        "name": "PRESSROOM_API_KEY",
        "value": "",
        "source": "default",
        "masked": True,
    }
    assert {r["name"] for r in records.values()} >= {v.name for v in VARIABLES}


def test_config_show_refuses_a_bad_value_like_every_command() -> None:
    with pytest.raises(BadConfig, match="PRESSROOM_LEASE_SECONDS"):
        effective({"PRESSROOM_LEASE_SECONDS": "soon"})


# -- a backup's schema is judged before anything is restored (issue 40, N8) ------------------

# the security review's planted trigger: `keys revoke` printed "revoked", the key stayed live
KEEP_KEYS_ALIVE = (
    "CREATE TRIGGER keep_keys_alive AFTER UPDATE OF revoked_at ON api_keys BEGIN "
    "UPDATE api_keys SET revoked_at = NULL WHERE id = NEW.id; END;"
)


def planted(db: Path, *statements: str) -> Path:
    with closing(sqlite3.connect(db)) as conn, conn:
        for sql in statements:
            conn.execute(sql)
    return db


def test_the_reviews_backup_with_a_trigger_and_a_view_is_refused_and_nothing_restored(
    tmp_path: Path,
) -> None:
    db = make_store(tmp_path / "a")
    copy = tmp_path / "copy.db"
    backup(settings_for(tmp_path / "a"), copy)
    planted(copy, KEEP_KEYS_ALIVE, "CREATE VIEW live_keys AS SELECT id, key_hash FROM api_keys")
    fresh = tmp_path / "b"
    with pytest.raises(UntrustedBackup) as refused:
        restore(settings_for(fresh), copy)
    assert refused.value.code == "UNTRUSTED_BACKUP" and refused.value.exit_code == 2
    message = refused.value.one_line()
    assert "\n" not in message
    assert "extra trigger 'keep_keys_alive'" in message and "extra view 'live_keys'" in message
    assert not fresh.exists() or list(fresh.iterdir()) == []
    # over a live store with --force: refused before the store is touched
    add_key(db, "after")
    with pytest.raises(UntrustedBackup):
        restore(settings_for(tmp_path / "a"), copy, force=True)
    assert key_ids(db) == {"before", "after"}
    with closing(sqlite3.connect(db)) as conn:
        kinds = {row[0] for row in conn.execute("SELECT type FROM sqlite_master")}
    assert kinds <= {"table", "index"}
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["pressroom.db"]


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE notes (x)",
        "CREATE INDEX api_keys_by_tenant_and_hash ON api_keys (tenant, key_hash)",
        "CREATE VIEW every_key AS SELECT * FROM api_keys",
        "ALTER TABLE api_keys ADD COLUMN note TEXT DEFAULT 'x'",
        "CREATE TRIGGER quiet AFTER INSERT ON jobs BEGIN SELECT 1; END;",
    ],
    ids=["table", "index", "view", "changed-table", "harmless-looking-trigger"],
)
def test_any_object_its_revision_does_not_make_is_refused(tmp_path: Path, sql: str) -> None:
    src = planted(make_store(tmp_path / "a"), sql)
    fresh = tmp_path / "b"
    with pytest.raises(UntrustedBackup):
        restore(settings_for(fresh), src)
    assert not (fresh / "pressroom.db").exists()


def test_an_older_revision_is_judged_against_its_own_schema(tmp_path: Path) -> None:
    """A backup of an older revision is compared with what the migrations make at that
    revision (before its upgrade runs, which would fire a planted trigger); an honest one
    still restores and is upgraded."""
    older = known_revisions()[-2]
    honest = make_store(tmp_path / "honest", revision=older)
    copied = restore(settings_for(tmp_path / "b"), honest)
    assert copied.upgraded_from == older and key_ids(tmp_path / "b" / "pressroom.db") == {"before"}
    bad = planted(make_store(tmp_path / "bad", revision=older), KEEP_KEYS_ALIVE)
    with pytest.raises(UntrustedBackup, match=f"revision {older}"):
        restore(settings_for(tmp_path / "c"), bad)
    assert not (tmp_path / "c" / "pressroom.db").exists()


def test_what_sqlite_keeps_by_itself_does_not_make_a_backup_untrusted(tmp_path: Path) -> None:
    """ANALYZE's statistics table is SQLite's own (the planner's data, no behaviour)."""
    db = make_store(tmp_path / "a")
    with closing(sqlite3.connect(db)) as conn:
        conn.execute("ANALYZE")
        assert conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'"
        ).fetchone() == (1,)
    copy = tmp_path / "copy.db"
    backup(settings_for(tmp_path / "a"), copy)
    restore(settings_for(tmp_path / "b"), copy)
    assert key_ids(tmp_path / "b" / "pressroom.db") == {"before"}


def test_the_reference_schema_is_what_a_migrated_store_has() -> None:
    """The comparison's reference at head is exactly the schema `db upgrade` makes: a
    fresh store's every object, tables and indexes only."""
    from pressroom.backup import reference_schema

    head = reference_schema(HEAD)
    assert {kind for kind, _name in head} == {"table", "index"}
    assert ("table", "api_keys") in head and ("table", "alembic_version") in head


def test_a_fifo_is_refused_at_once_never_waited_on(tmp_path: Path) -> None:
    """`db restore` on a FIFO waited forever for a writer: it is refused BAD_REQUEST as not a
    regular file. Run in a child process so a regression fails (the hang guard's timeout)
    instead of hanging the suite."""
    fifo = tmp_path / "backup.db"
    os.mkfifo(fifo)
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from pressroom.backup import restore\n"
        "from pressroom.errors import BadRequest\n"
        "from pressroom.settings import Settings\n"
        f"s = Settings.from_env({{'PRESSROOM_DATA_DIR': {str(tmp_path / 'b')!r}}})\n"
        "try:\n"
        f"    restore(s, Path({str(fifo)!r}))\n"
        "except BadRequest as exc:\n"
        "    print(exc.one_line())\n"
        "    sys.exit(2)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout.startswith("BAD_REQUEST: ") and "not a regular file" in done.stdout
    assert not (tmp_path / "b" / "pressroom.db").exists()
