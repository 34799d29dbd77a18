"""A backup taken while jobs run restores to a store that serves them: `pressroom db backup`
against a live `serve`, `db restore` into a fresh data dir, `serve` again; and the CLI's
refusals and `config show` as an operator runs them."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import PRESSROOM, launch_serve, poll, stop

pytestmark = pytest.mark.e2e

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
TERMINAL = {"complete", "rejected", "review"}


def pressroom(*args: str, data: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PRESSROOM), *args],
        env={**os.environ, "PRESSROOM_DATA_DIR": str(data), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def states_in(db: Path) -> dict[str, str]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return {str(i): str(s) for i, s in conn.execute("SELECT id, state FROM jobs")}


def copy_live_folder(src: Path, dest: Path) -> None:
    """What ``rsync -a`` does to a folder workers write to: a file deleted while the copy
    runs is skipped, not an error."""
    for folder, _dirs, files in os.walk(src):
        into = dest / Path(folder).relative_to(src)
        into.mkdir(parents=True, exist_ok=True, mode=0o700)
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                shutil.copy2(Path(folder) / name, into / name)


def test_a_backup_taken_while_jobs_run_restores_to_a_store_that_serves_them(
    tmp_path: Path,
) -> None:
    (tmp_path / "first").mkdir()
    first = launch_serve(tmp_path / "first", workers=1, interactive=1)
    try:
        ids = []
        for n in range(8):
            sample = SAMPLES / ("waiver-scan.pdf" if n % 2 else "letter.pdf")
            response = first.client.post(
                "/v1/jobs",
                files={"file": (sample.name, sample.read_bytes())},
                data={"title": f"Backup {n}"},
            )
            assert response.status_code == 202, response.text
            ids.append(str(response.json()["id"]))

        def some_done_some_not() -> bool:
            states = [first.client.get(f"/v1/jobs/{i}").json()["state"] for i in ids]
            return "complete" in states and any(s not in TERMINAL for s in states)

        assert poll(some_done_some_not, 120, every=0.1)
        backup = tmp_path / "pressroom-backup.db"
        made = pressroom("db", "backup", str(backup), data=first.data_dir)
        assert made.returncode == 0, made.stderr
        # the files are copied right after the database: every blob the copy names is among
        # them, but for the sources of jobs delivered in between (deleted on delivery)
        second_data = tmp_path / "second" / "data"
        second_data.mkdir(parents=True, mode=0o700)
        copy_live_folder(first.data_dir / "blobs", second_data / "blobs")
        with contextlib.closing(sqlite3.connect(backup)) as conn:
            copied_source = {  # the restored store deletes each once its job is delivered
                str(i): k is not None and (second_data / "blobs" / str(k)).exists()
                for i, k in conn.execute("SELECT id, source_key FROM jobs")
            }
        last = made.stdout.strip().splitlines()[-1]
        assert last.startswith("Keep with it for a full restore:")
        assert str((first.data_dir / "blobs").resolve()) in last and "signing.key" in last
        assert backup.stat().st_mode & 0o777 == 0o600
        # taken while they ran: finished jobs and unfinished ones are both in the copy
        at_backup = states_in(backup)
        assert set(at_backup) == set(ids)
        assert "complete" in at_backup.values()
        assert any(s not in TERMINAL for s in at_backup.values()), at_backup

        # a restore over the live database is refused, and the service never notices
        over = pressroom("db", "restore", str(backup), "--force", data=first.data_dir)
        assert over.returncode == 2 and over.stdout == ""
        assert over.stderr.count("\n") == 1 and over.stderr.startswith("error: CONFLICT: ")
        assert "in use" in over.stderr
        assert first.client.get("/v1/jobs").status_code == 200

        put = pressroom("db", "restore", str(backup), data=second_data)
        assert put.returncode == 0, put.stderr
        assert "blobs" in put.stdout.strip().splitlines()[-1]
        assert (second_data / "pressroom.db").stat().st_mode & 0o777 == 0o600
        for name in ("signing.key", "api-key"):
            shutil.copy2(first.data_dir / name, second_data / name)
        key = first.client.headers["Authorization"]
    finally:
        first.client.close()
        stop(first.process)

    second = launch_serve(tmp_path / "second", workers=1, interactive=1)
    try:
        assert second.client.headers["Authorization"] == key  # the restored keys answer
        listed = second.client.get("/v1/jobs", params={"limit": 100})
        assert listed.status_code == 200
        assert {str(j["id"]) for j in listed.json()["jobs"]} == set(ids)
        resumed = 0
        for job_id in ids:
            done = second.wait_for(job_id, TERMINAL, timeout=180)
            if at_backup[job_id] != "complete" and not copied_source[job_id]:
                # finished on the first store after the backup, which then deleted its
                # source: the copy cannot redo it (docs/operations.md#backups-and-restore)
                assert (done["state"], done["reason"]) == ("rejected", "SOURCE_MISSING")
                continue
            assert done["state"] == "complete", (at_backup[job_id], done.get("reason"))
            pdf = second.client.get(str(done["artifact_url"]))
            assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
            assert hashlib.sha256(pdf.content).hexdigest() == done["artifact_sha256"]
            assert done["title"] == f"Backup {ids.index(job_id)}"
            resumed += at_backup[job_id] != "complete"
        assert resumed >= 1  # work unfinished at the backup is finished by the restored store
        print(f"at the backup: {sorted(at_backup.values())}; finished after restoring: {resumed}")
    finally:
        second.client.close()
        stop(second.process)


def test_the_clis_refusals_are_one_line_and_exit_2(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert pressroom("db", "upgrade", data=data).returncode == 0
    dest = tmp_path / "b.db"
    dest.write_text("not to be replaced")
    cases = [
        (("db", "backup", str(dest)), {}, "CONFLICT"),
        (("db", "restore", str(dest)), {"PRESSROOM_DATA_DIR": str(tmp_path / "x")}, "BAD_REQUEST"),
        (
            ("db", "backup", str(tmp_path / "pg.db")),
            {"PRESSROOM_DATABASE_URL": "postgresql://u:pw-13579@127.0.0.1:9/db"},
            "BAD_CONFIG",
        ),
        (("db", "restore", str(tmp_path / "none.db")), {}, "NOT_FOUND"),
    ]
    for args, env, code in cases:
        refused = pressroom(*args, data=data, **env)
        assert refused.returncode == 2, (args, refused.stderr)
        assert refused.stdout == "" and refused.stderr.count("\n") == 1, refused.stderr
        assert refused.stderr.startswith(f"error: {code}: "), refused.stderr
        assert "pw-13579" not in refused.stderr and "Traceback" not in refused.stderr
    assert "pg_dump" in pressroom(*cases[2][0], data=data, **cases[2][1]).stderr
    assert dest.read_text() == "not to be replaced"
    assert not (tmp_path / "pg.db").exists() and not (tmp_path / "x" / "pressroom.db").exists()


def test_config_show_masks_every_secret_in_text_and_json(tmp_path: Path) -> None:
    secrets = {
        "PRESSROOM_SIGNING_KEY": "Zq-signing-key-0123456789-0123456789",
        "PRESSROOM_API_KEY": "Zq-api-key-abcdef",
        "PRESSROOM_MASTER_KEY": "WnEtbWFzdGVyLWtleS0wMTIzNDU2Nzg5MDEyMzQ1Njc=",
        "PRESSROOM_MASTER_KEY_FILE": str(tmp_path / "Zq-master.key"),
        "PRESSROOM_MASTER_KEYS_OLD": "Zq-old-one-1111,Zq-old-two-2222",
        "AWS_SECRET_ACCESS_KEY": "Zq-aws-secret-3333",
        "AWS_SESSION_TOKEN": "Zq-aws-session-4444",
    }
    env = {
        **secrets,
        "PRESSROOM_DATABASE_URL": "postgresql://pressroom:Zq-db-pass-5555@db:5432/pressroom",
        "PRESSROOM_VERIFIER_URL": "https://svc:Zq-verifier-6666@id.example/check",
        "PRESSROOM_LEASE_SECONDS": "17",
    }
    text = pressroom("config", "show", data=tmp_path, **env)
    data = pressroom("config", "show", "--json", data=tmp_path, **env)
    assert text.returncode == 0 and data.returncode == 0, text.stderr + data.stderr
    planted = [*secrets.values(), "Zq-old-one-1111", "Zq-old-two-2222", "Zq-db-pass-5555"]
    planted += ["Zq-verifier-6666", "Zq-master.key"]
    for value in planted:
        assert value not in text.stdout and value not in data.stdout, value
    assert "PRESSROOM_LEASE_SECONDS = 17  (set)" in text.stdout.splitlines()
    assert "PRESSROOM_MAX_ATTEMPTS = 4  (default)" in text.stdout.splitlines()
    assert "postgresql://pressroom:********@db:5432/pressroom" in text.stdout
    records = {r["name"]: r for r in json.loads(data.stdout)["settings"]}
    assert records["PRESSROOM_DATA_DIR"]["value"] == str(tmp_path)
    assert records["PRESSROOM_SIGNING_KEY"] == {
        "name": "PRESSROOM_SIGNING_KEY",
        "value": "********",
        "source": "set",
        "masked": True,
    }
    assert "AWS_SECRET_ACCESS_KEY" not in records  # boto3's own: not a Pressroom setting


def test_a_planted_backup_and_a_fifo_are_refused_in_one_line_and_the_store_keeps_its_keys(
    tmp_path: Path,
) -> None:
    """The security review's N8 as an operator meets it: a backup carrying a trigger that set
    `revoked_at` back to NULL (and a view) was restored without a word, and `keys revoke`
    then printed "revoked" while the key stayed live. Now `db restore --force` refuses it
    (UNTRUSTED_BACKUP, exit 2, one line), the store is as it was, and a revoke holds. A FIFO
    as SRC is refused at once (it waited forever)."""
    data = tmp_path / "data"
    made = pressroom("keys", "create", "--tenant", "acme", data=data)
    assert made.returncode == 0, made.stderr
    key_id = next(x for x in made.stdout.splitlines() if x.startswith("id: ")).removeprefix("id: ")
    copy = tmp_path / "planted.db"
    assert pressroom("db", "backup", str(copy), data=data).returncode == 0
    with contextlib.closing(sqlite3.connect(copy)) as conn, conn:
        conn.execute(
            "CREATE TRIGGER keep_keys_alive AFTER UPDATE OF revoked_at ON api_keys BEGIN "
            "UPDATE api_keys SET revoked_at = NULL WHERE id = NEW.id; END;"
        )
        conn.execute("CREATE VIEW live_keys AS SELECT id FROM api_keys")
    db = data / "pressroom.db"
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    refused = pressroom("db", "restore", "--force", str(copy), data=data)
    assert refused.returncode == 2, refused.stderr
    assert refused.stdout == "" and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith("error: UNTRUSTED_BACKUP: "), refused.stderr
    assert "keep_keys_alive" in refused.stderr and "Traceback" not in refused.stderr
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert pressroom("keys", "revoke", key_id, data=data).returncode == 0
    line = next(x for x in pressroom("keys", "list", data=data).stdout.splitlines() if key_id in x)
    assert "revoked" in line, line
    fifo = tmp_path / "fifo.db"
    os.mkfifo(fifo)
    waited = pressroom("db", "restore", "--force", str(fifo), data=data)  # bounded: 120 s
    assert waited.returncode == 2 and waited.stderr.count("\n") == 1, waited.stderr
    assert waited.stderr.startswith("error: BAD_REQUEST: ") and "regular file" in waited.stderr
    assert hashlib.sha256(db.read_bytes()).hexdigest() != before  # the revoke, and only it
