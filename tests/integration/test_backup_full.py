"""`pressroom backup` / `restore` (backup_all / restore_all) on real files: what goes into the
one folder or tar, and every way a restore refuses a backup that is not what was written —
a changed byte, a missing, extra or linked file, a manifest naming a path out of the folder, a
planted trigger behind good sums — with nothing written where the data dir would be and
nothing left beside it."""

from __future__ import annotations

import base64
import hashlib
import io
import itertools
import json
import shutil
import sqlite3
import tarfile
import uuid
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from alembic import command

from pressroom.backup import backup_all, restore_all
from pressroom.errors import BadConfig, BadRequest, Conflict, NotFound, UntrustedBackup
from pressroom.jobs.migrate import alembic_config
from pressroom.jobs.transport import make_engine
from pressroom.settings import Settings
from tests.conftest import PG_ADMIN_URL, _pg_admin
from tests.s3server import S3Server

pytestmark = pytest.mark.integration

BLOBS = {
    "artifacts/acme/job-1/0f0f.pdf": b"%PDF-1.7 first output\n" * 50,
    "artifacts/acme/job-1/0f0f.txt": b"the sidecar text\n",
    "sources/acme/job-2/source": b"%PDF-1.4 a source not read yet\n",
}
MASTER = base64.b64encode(bytes(range(32))).decode()
OLD_MASTER = base64.b64encode(bytes(range(1, 33))).decode()


def settings_for(data: Path, **env: str) -> Settings:
    return Settings.from_env({"PRESSROOM_DATA_DIR": str(data), **env})


def make_data_dir(data: Path) -> Path:
    """A data dir as the service leaves it: the database with a key, blobs, the signing key,
    the default API key, and a half-written staging file that is no blob."""
    data.mkdir(parents=True)
    db = data / "pressroom.db"
    engine = make_engine(f"sqlite:///{db}")
    command.upgrade(alembic_config(engine), "head")
    engine.dispose()
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "INSERT INTO api_keys (id, tenant, key_hash, created_at) VALUES ('k1', 't', 'h', 0)"
        )
    for key, body in BLOBS.items():
        (data / "blobs" / key).parent.mkdir(parents=True, exist_ok=True)
        (data / "blobs" / key).write_bytes(body)
    (data / "blobs" / "sources" / "acme" / ".incoming-x1").write_bytes(b"half")
    (data / "signing.key").write_bytes(b"s" * 64)
    (data / "api-key").write_text("pr_test_key\n")
    return db


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def left_beside(folder: Path) -> list[str]:
    """What a backup or restore left in ``folder`` besides what it was asked to write."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.fixture
def made(tmp_path: Path) -> tuple[Path, Path]:
    """A data dir and a folder backup of it, keys included."""
    data = tmp_path / "data"
    make_data_dir(data)
    dest = tmp_path / "backups" / "one"
    dest.parent.mkdir()
    backup_all(settings_for(data), dest, with_keys=True)
    return data, dest


@pytest.mark.parametrize("kind", ["folder", "tar"])
def test_a_backup_restored_into_a_fresh_data_dir_is_the_data_dir(tmp_path: Path, kind: str) -> None:
    data = tmp_path / "data"
    make_data_dir(data)
    dest = tmp_path / ("b.tar" if kind == "tar" else "b")
    made = backup_all(settings_for(data), dest, with_keys=True)
    assert (made.blobs, made.keys) == (3, ("api-key", "signing.key"))
    assert made.files == 6 and dest.stat().st_mode & 0o777 in (0o600, 0o700)
    if kind == "tar":
        with tarfile.open(dest) as tar:
            names = tar.getnames()
            # the database first, the manifest last (its sums known once all is written)
            assert names[0] == "database/pressroom.db" and names[-1] == "manifest.json"
            assert all(m.isreg() and m.mode == 0o600 for m in tar.getmembers())
            manifest = json.loads(tar.extractfile("manifest.json").read())  # type: ignore[union-attr]
            for entry in manifest["files"]:
                body = tar.extractfile(entry["path"]).read()  # type: ignore[union-attr]
                assert hashlib.sha256(body).hexdigest() == entry["sha256"]
        assert ".incoming-x1" not in "".join(names)
    else:
        manifest = json.loads((dest / "manifest.json").read_text())
        for entry in manifest["files"]:
            body = (dest / entry["path"]).read_bytes()
            assert hashlib.sha256(body).hexdigest() == entry["sha256"]
            assert len(body) == entry["size"]
        assert manifest["schema_revision"] == made.revision and manifest["store"] == "local"
    assert left_beside(tmp_path) == []

    fresh = tmp_path / "fresh" / "data"
    put = restore_all(settings_for(fresh), dest)
    assert (put.blobs, put.keys, put.kept_aside) == (3, ("api-key", "signing.key"), None)
    original = {
        k: v for k, v in tree(data).items() if "pressroom.db" not in k and "incoming" not in k
    }
    restored = tree(fresh)
    assert {k: v for k, v in restored.items() if k != "pressroom.db"} == original
    with closing(sqlite3.connect(fresh / "pressroom.db")) as conn:
        assert conn.execute("SELECT id FROM api_keys").fetchall() == [("k1",)]
    for path in fresh.rglob("*"):
        assert path.stat().st_mode & 0o777 == (0o700 if path.is_dir() else 0o600), path
    assert left_beside(fresh.parent) == []


def test_the_master_keys_go_with_keys_and_only_then(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_data_dir(data)
    sealed = {"PRESSROOM_MASTER_KEY": MASTER, "PRESSROOM_MASTER_KEYS_OLD": OLD_MASTER}
    without = backup_all(settings_for(data, **sealed), tmp_path / "plain")
    assert without.keys == () and not (tmp_path / "plain" / "keys").exists()
    made = backup_all(settings_for(data, **sealed), tmp_path / "keys", with_keys=True)
    assert made.keys == ("api-key", "master-old-1.key", "master.key", "signing.key")
    assert (tmp_path / "keys" / "keys" / "master.key").read_text().strip() == MASTER
    put = restore_all(settings_for(tmp_path / "fresh"), tmp_path / "keys")
    assert (tmp_path / "fresh" / "master.key").read_text().strip() == MASTER
    assert (tmp_path / "fresh" / "master-old-1.key").read_text().strip() == OLD_MASTER
    assert "master.key" in put.keys
    # the restored file is what PRESSROOM_MASTER_KEY_FILE reads
    key_file = str(tmp_path / "fresh" / "master.key")
    from pressroom.storage.crypto import master_keys

    opened = master_keys(settings_for(tmp_path / "x", PRESSROOM_MASTER_KEY_FILE=key_file).storage)
    assert opened is not None and base64.b64encode(opened[0]).decode() == MASTER


def alter_a_byte(dest: Path) -> None:
    blob = dest / "blobs" / "artifacts" / "acme" / "job-1" / "0f0f.pdf"
    raw = bytearray(blob.read_bytes())
    raw[100] ^= 0x20
    blob.write_bytes(bytes(raw))


def drop_a_file(dest: Path) -> None:
    (dest / "blobs" / "sources" / "acme" / "job-2" / "source").unlink()


def add_a_file(dest: Path) -> None:
    (dest / "blobs" / "artifacts" / "acme" / "job-1" / "extra.pdf").write_bytes(b"%PDF")


def add_a_document(dest: Path) -> None:
    (dest / "Smith invoice 2026.pdf").write_bytes(b"%PDF")


def link_a_key(dest: Path) -> None:
    (dest / "keys" / "signing.key").unlink()
    (dest / "keys" / "signing.key").symlink_to("/etc/hostname")


def longer_blob(dest: Path) -> None:
    with (dest / "keys" / "api-key").open("ab") as fh:
        fh.write(b"more")


def manifest_out_of_the_folder(dest: Path) -> None:
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest["files"].append({"path": "blobs/../../escaped", "size": 1, "sha256": "0" * 64})
    (dest / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (alter_a_byte, "differs from its manifest (SHA-256)"),
        (drop_a_file, "is missing"),
        (add_a_file, "which its manifest does not list"),
        (add_a_document, "holds a file at its top, which "),
        (link_a_key, "(a link)"),
        (longer_blob, "differs from its manifest (size)"),
        (manifest_out_of_the_folder, "which no backup holds"),
    ],
    ids=["changed-byte", "missing", "extra", "stray", "link", "longer", "escaping-path"],
)
@pytest.mark.parametrize("kind", ["folder", "tar", "tar-manifest-first"])
def test_a_backup_that_is_not_what_was_written_is_refused_and_nothing_is_written(
    made: tuple[Path, Path], tmp_path: Path, spoil: object, said: str, kind: str
) -> None:
    _data, dest = made
    spoil(dest)  # type: ignore[operator]
    src = dest
    if kind != "folder":  # the same damage, carried in a tar (links as links)
        src = tmp_path / "spoiled.tar"
        with tarfile.open(src, "w") as tar:
            if kind == "tar-manifest-first":
                tar.add(dest / "manifest.json", arcname="manifest.json")
            for path in sorted(dest.rglob("*")):
                if path.name != "manifest.json" and (path.is_file() or path.is_symlink()):
                    tar.add(path, arcname=path.relative_to(dest).as_posix())
            if kind == "tar":  # as backup writes it: the manifest last
                tar.add(dest / "manifest.json", arcname="manifest.json")
        if said == "(a link)":
            said = "(not a regular file)"
    fresh = tmp_path / "fresh" / "data"
    with pytest.raises(UntrustedBackup) as refused:
        restore_all(settings_for(fresh), src)
    assert refused.value.code == "UNTRUSTED_BACKUP" and refused.value.exit_code == 2
    assert said in refused.value.one_line() and "\n" not in refused.value.one_line()
    assert "Smith" not in refused.value.one_line()  # a stray file's name is never said
    assert not fresh.exists() and list((tmp_path / "fresh").iterdir()) == []
    assert not (tmp_path / "escaped").exists()


def test_a_planted_trigger_behind_good_sums_is_refused_by_the_restore_checks(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    """The sums say the files are what the manifest says; the database's own checks (db
    restore's schema judgement) still run: a planted trigger, with the manifest rewritten to
    match, is refused and nothing is written."""
    _data, dest = made
    db = dest / "database" / "pressroom.db"
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "CREATE TRIGGER keep_keys_alive AFTER UPDATE OF revoked_at ON api_keys BEGIN "
            "UPDATE api_keys SET revoked_at = NULL WHERE id = NEW.id; END;"
        )
    manifest = json.loads((dest / "manifest.json").read_text())
    for entry in manifest["files"]:
        if entry["path"] == "database/pressroom.db":
            entry["size"] = db.stat().st_size
            entry["sha256"] = hashlib.sha256(db.read_bytes()).hexdigest()
    (dest / "manifest.json").write_text(json.dumps(manifest))
    fresh = tmp_path / "fresh"
    with pytest.raises(UntrustedBackup) as refused:
        restore_all(settings_for(fresh), dest)
    assert "keep_keys_alive" in refused.value.one_line()
    assert not fresh.exists() and left_beside(tmp_path) == []


def test_what_is_not_a_backup_is_refused(tmp_path: Path) -> None:
    fresh = settings_for(tmp_path / "fresh")
    with pytest.raises(NotFound):
        restore_all(fresh, tmp_path / "none")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadRequest, match="no manifest"):
        restore_all(fresh, tmp_path / "empty")
    (tmp_path / "other.tar").write_bytes(b"not a tar at all" * 100)
    with pytest.raises(BadRequest):
        restore_all(fresh, tmp_path / "other.tar")
    plain = tmp_path / "plain.tar"
    with tarfile.open(plain, "w") as tar:
        info = tarfile.TarInfo("notes.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    with pytest.raises(UntrustedBackup, match="a file at its top, which no backup holds"):
        restore_all(fresh, plain)
    headless = tmp_path / "headless.tar"  # names a backup holds, and no manifest
    with tarfile.open(headless, "w") as tar:
        info = tarfile.TarInfo("keys/signing.key")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    with pytest.raises(BadRequest, match="no manifest"):
        restore_all(fresh, headless)
    newer = tmp_path / "newer"
    newer.mkdir()
    (newer / "manifest.json").write_text(json.dumps({"format": "pressroom-backup", "version": 9}))
    with pytest.raises(BadRequest, match="newer"):
        restore_all(fresh, newer)
    assert not (tmp_path / "fresh").exists() and left_beside(tmp_path) == []


def test_a_data_dir_that_is_not_empty_needs_force_which_moves_it_aside(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    data, dest = made
    before = tree(data)
    with pytest.raises(Conflict, match="not empty"):
        restore_all(settings_for(data), dest)
    assert tree(data) == before
    empty = tmp_path / "empty"
    empty.mkdir()
    assert restore_all(settings_for(empty), dest).kept_aside is None  # an empty one is fresh
    put = restore_all(settings_for(data), dest, force=True)
    assert put.kept_aside is not None and put.kept_aside.name.startswith("data.before-restore-")
    kept = tree(put.kept_aside)  # never deleted (SQLite may have checkpointed its WAL)
    assert kept["pressroom.db"] == before["pressroom.db"]
    assert {k for k in kept if "-wal" not in k} == {k for k in before if "-wal" not in k}
    assert (data / "pressroom.db").is_file() and left_beside(tmp_path) == []


def test_a_restore_is_refused_while_the_database_is_open(
    made: tuple[Path, Path], tmp_path: Path
) -> None:
    data, dest = made
    with closing(sqlite3.connect(data / "pressroom.db")) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("SELECT count(*) FROM jobs").fetchall()
        with pytest.raises(Conflict, match="in use"):
            restore_all(settings_for(data), dest, force=True)
    assert left_beside(tmp_path) == [] and not list(tmp_path.glob("data.before-restore-*"))


def test_a_backup_never_replaces_and_an_interrupted_one_leaves_nothing(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    make_data_dir(data)
    (tmp_path / "taken").mkdir()
    with pytest.raises(Conflict):
        backup_all(settings_for(data), tmp_path / "taken")
    with pytest.raises(NotFound):
        backup_all(settings_for(data), tmp_path / "no" / "such" / "b.tar")
    with pytest.raises(BadRequest, match="inside the blob folder"):
        backup_all(settings_for(data), data / "blobs" / "sources" / "b")

    def interrupt(done: int, _total: int) -> None:
        if done > 100_000:  # past the database, among the blobs
            raise KeyboardInterrupt

    for name in ("cut", "cut.tar"):
        with pytest.raises(KeyboardInterrupt):
            backup_all(settings_for(data), tmp_path / name, progress=interrupt)
        assert not (tmp_path / name).exists()
    assert left_beside(tmp_path) == []
    # and a restore cut short the same way
    backup_all(settings_for(data), tmp_path / "b.tar")
    with pytest.raises(KeyboardInterrupt):
        restore_all(settings_for(tmp_path / "fresh"), tmp_path / "b.tar", progress=interrupt)
    assert not (tmp_path / "fresh").exists() and left_beside(tmp_path) == []


def test_the_progress_counts_every_byte_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_data_dir(data)
    seen: list[tuple[int, int]] = []
    made = backup_all(settings_for(data), tmp_path / "b", progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (made.size, made.size)
    assert all(a[0] <= b[0] for a, b in itertools.pairwise(seen))
    back: list[tuple[int, int]] = []
    restore_all(
        settings_for(tmp_path / "r"), tmp_path / "b", progress=lambda d, t: back.append((d, t))
    )
    assert back[-1] == (made.size, made.size)


def test_a_database_outside_the_data_dir_is_refused_and_postgresql_too(tmp_path: Path) -> None:
    elsewhere = {"PRESSROOM_DATABASE_URL": f"sqlite:///{tmp_path / 'elsewhere.db'}"}
    make_data_dir(tmp_path / "data")
    shutil.copy(tmp_path / "data" / "pressroom.db", tmp_path / "elsewhere.db")
    backup_all(settings_for(tmp_path / "data"), tmp_path / "b")
    with pytest.raises(BadConfig, match="PRESSROOM_DATABASE_URL"):
        restore_all(settings_for(tmp_path / "fresh", **elsewhere), tmp_path / "b")
    pg = {"PRESSROOM_DATABASE_URL": "postgresql://u:pw-2468@127.0.0.1:9/db"}
    with pytest.raises(BadConfig) as refused:
        backup_all(settings_for(tmp_path / "data", **pg), tmp_path / "pg")
    assert "pw-2468" not in refused.value.one_line()
    assert not (tmp_path / "fresh").exists() and not (tmp_path / "pg").exists()
    assert left_beside(tmp_path) == []


def test_an_s3_store_is_listed_or_copied_and_put_back(
    tmp_path: Path, s3_server: S3Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With S3 the manifest lists every object (size, ETag); ``--s3`` copies them with their
    sums, and a restore puts them into the bucket configured then. A backup that only lists
    them restores where the bucket still holds them at their sizes, and is refused
    (``NOT_FOUND``, nothing written) where it does not, or onto a local store."""
    from pressroom.storage.s3 import S3BlobStore

    bucket = s3_server.new_bucket()
    env = s3_server.env(bucket)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    data = tmp_path / "data"
    make_data_dir(data)
    shutil.rmtree(data / "blobs")
    store = S3BlobStore.from_url(env["PRESSROOM_STORAGE_URL"])
    for key, body in BLOBS.items():
        (tmp_path / "body").write_bytes(body)
        store.put_file(key, tmp_path / "body")
    s3 = {"PRESSROOM_STORAGE_URL": env["PRESSROOM_STORAGE_URL"]}

    listed = backup_all(settings_for(data, **s3), tmp_path / "listed")
    assert (listed.blobs, listed.listed) == (0, 3)
    manifest = json.loads((tmp_path / "listed" / "manifest.json").read_text())
    assert {o["key"]: o["size"] for o in manifest["s3_objects"]} == {
        k: len(v) for k, v in BLOBS.items()
    }
    assert all(len(o["etag"]) == 32 for o in manifest["s3_objects"])
    copied = backup_all(settings_for(data, **s3), tmp_path / "copied.tar", s3=True)
    assert (copied.blobs, copied.listed) == (3, 0)

    # the list alone: the bucket still has them
    assert restore_all(settings_for(tmp_path / "r1", **s3), tmp_path / "listed").listed == 3
    # the list alone, another (empty) bucket: refused, nothing written
    other = {"PRESSROOM_STORAGE_URL": f"s3://{s3_server.new_bucket()}/pressroom"}
    with pytest.raises(NotFound, match="3 of the 3 objects"):
        restore_all(settings_for(tmp_path / "r2", **other), tmp_path / "listed")
    with pytest.raises(BadRequest, match="without --s3"):
        restore_all(settings_for(tmp_path / "r3"), tmp_path / "listed")
    assert not (tmp_path / "r2").exists() and not (tmp_path / "r3").exists()
    # copied: put into the empty bucket, byte for byte
    put = restore_all(settings_for(tmp_path / "r4", **other), tmp_path / "copied.tar")
    assert put.blobs == 3
    into = S3BlobStore.from_url(other["PRESSROOM_STORAGE_URL"])
    for key, body in BLOBS.items():
        with into.open(key) as fh:
            assert fh.read() == body
    assert not (tmp_path / "r4" / "blobs").exists() and left_beside(tmp_path) == []


@pytest.fixture
def pg_pair(pg_url: str) -> Iterator[tuple[str, str]]:
    """Two fresh PostgreSQL databases: the one backed up, and an empty one to restore into."""
    name = f"pressroom_restore_{uuid.uuid4().hex[:12]}"
    _pg_admin(f'CREATE DATABASE "{name}"')
    try:
        yield pg_url, PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def pg_rows(url: str, sql: str) -> list[tuple[object, ...]]:
    import psycopg

    with psycopg.connect(url) as conn:
        return [tuple(row) for row in conn.execute(sql)]


def test_postgresql_is_dumped_judged_and_restored_into_an_empty_database(
    tmp_path: Path, pg_pair: tuple[str, str]
) -> None:
    """PostgreSQL and a local store: pg_dump's snapshot goes into the backup with its sum; a
    restore puts it into an empty database (a database with tables is refused) with the
    blobs and keys; a dump carrying a function and a trigger, its sums made to match, is
    refused from the dump's table of contents and the empty database stays empty."""
    source, empty = pg_pair
    data = tmp_path / "data"
    make_data_dir(data)
    (data / "pressroom.db").unlink()
    from pressroom.service import open_services

    services = open_services(settings_for(data, PRESSROOM_DATABASE_URL=source))
    key_id, _key = services.store.tenancy.new_key("acme", now=0.0, role="tenant", expires_at=None)
    services.store.db.engine.dispose()
    made = backup_all(settings_for(data, PRESSROOM_DATABASE_URL=source), tmp_path / "pg.tar")
    assert made.blobs == 3
    with tarfile.open(tmp_path / "pg.tar") as tar:
        assert "database/pressroom.dump" in tar.getnames()

    with pytest.raises(Conflict, match="not empty"):  # the source itself has tables
        restore_all(
            settings_for(tmp_path / "r0", PRESSROOM_DATABASE_URL=source), tmp_path / "pg.tar"
        )
    with pytest.raises(BadRequest, match="PostgreSQL database and this Pressroom's is SQLite"):
        restore_all(settings_for(tmp_path / "r1"), tmp_path / "pg.tar")
    put = restore_all(
        settings_for(tmp_path / "r2", PRESSROOM_DATABASE_URL=empty), tmp_path / "pg.tar"
    )
    assert put.revision == made.revision and put.blobs == 3
    assert pg_rows(empty, "SELECT id FROM api_keys") == [(key_id,)]
    assert {k for k in tree(tmp_path / "r2") if k.startswith("blobs/")} == {
        f"blobs/{k}" for k in BLOBS
    }
    assert not (tmp_path / "r0").exists() and not (tmp_path / "r1").exists()

    # a planted function and trigger in the database, backed up (the sums are the backup's)
    import psycopg

    with psycopg.connect(source, autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION keep_alive() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN NEW.revoked_at := NULL; RETURN NEW; END $$"
        )
        conn.execute(
            "CREATE TRIGGER keep_keys_alive BEFORE UPDATE ON api_keys "
            "FOR EACH ROW EXECUTE FUNCTION keep_alive()"
        )
    backup_all(settings_for(data, PRESSROOM_DATABASE_URL=source), tmp_path / "planted")
    _pg_admin(f'DROP DATABASE "{empty.rsplit("/", 1)[1]}" WITH (FORCE)')
    _pg_admin(f'CREATE DATABASE "{empty.rsplit("/", 1)[1]}"')
    with pytest.raises(UntrustedBackup) as refused:
        restore_all(
            settings_for(tmp_path / "r3", PRESSROOM_DATABASE_URL=empty), tmp_path / "planted"
        )
    assert "FUNCTION public keep_alive" in refused.value.one_line()
    assert "TRIGGER public api_keys" in refused.value.one_line()
    assert pg_rows(
        empty,
        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON "
        "n.oid = c.relnamespace WHERE n.nspname = 'public'",
    ) == [(0,)]
    assert not (tmp_path / "r3").exists() and left_beside(tmp_path) == []


@pytest.mark.parametrize("manifest_first", [True, False], ids=["manifest-first", "manifest-last"])
def test_a_tar_that_holds_one_file_twice_is_refused_saying_so(
    made: tuple[Path, Path], tmp_path: Path, manifest_first: bool
) -> None:
    """A tar may carry one name twice (the second replaces the first when extracted): refused,
    'holds keys/api-key twice', never 'which no backup holds' (the fresh-eyes review's R1)."""
    _data, dest = made
    src = tmp_path / "twice.tar"
    with tarfile.open(src, "w") as tar:
        if manifest_first:
            tar.add(dest / "manifest.json", arcname="manifest.json")
        for path in sorted(dest.rglob("*")):
            if path.name != "manifest.json" and path.is_file():
                tar.add(path, arcname=path.relative_to(dest).as_posix())
        tar.add(dest / "keys" / "api-key", arcname="keys/api-key")
        if not manifest_first:
            tar.add(dest / "manifest.json", arcname="manifest.json")
    fresh = tmp_path / "fresh" / "data"
    with pytest.raises(UntrustedBackup) as refused:
        restore_all(settings_for(fresh), src)
    assert "holds keys/api-key twice: nothing was restored" in refused.value.one_line()
    assert not fresh.exists()
