"""The one-step backup as an operator runs it (issue 43, item 5): finished jobs on a live
`serve` with encryption at rest, `pressroom backup --with-keys` while it serves, `pressroom
restore` into an empty data dir, `serve` again on it: every job is served, its downloads
byte-identical; a backup with one altered blob is refused and nothing is written."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.e2e.conftest import PRESSROOM, launch_serve, stop

pytestmark = pytest.mark.e2e

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
TERMINAL = {"complete", "rejected", "review"}
MASTER = base64.b64encode(hashlib.sha256(b"backup-full-test-master").digest()).decode()


def pressroom(*args: str, data: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PRESSROOM), *args],
        env={**os.environ, "PRESSROOM_DATA_DIR": str(data), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def downloads(client: object, job: dict[str, object]) -> dict[str, bytes]:
    """The bytes behind every download link of a finished job."""
    got = {}
    for link in ("artifact_url", "sidecar_url"):
        if job.get(link):
            response = client.get(str(job[link]))  # type: ignore[attr-defined]
            assert response.status_code == 200, (link, response.status_code)
            got[link] = bytes(response.content)
    return got


def test_a_backup_restored_into_an_empty_data_dir_serves_every_job_byte_identical(
    tmp_path: Path,
) -> None:
    (tmp_path / "first").mkdir()
    sealed = {"PRESSROOM_MASTER_KEY": MASTER}
    first = launch_serve(tmp_path / "first", extra_env=sealed, workers=1, interactive=1)
    try:
        jobs = [("letter.pdf", {}), ("letter.pdf", {"sidecar": "true"}), ("waiver-scan.pdf", {})]
        ids: list[str] = []
        for name, form in jobs:
            response = first.client.post(
                "/v1/jobs",
                files={"file": (name, (SAMPLES / name).read_bytes())},
                data={"title": f"Kept {len(ids)}", **form},
            )
            assert response.status_code == 202, response.text
            ids.append(str(response.json()["id"]))
        before: dict[str, dict[str, bytes]] = {}
        links: dict[str, dict[str, object]] = {}
        for job_id in ids:
            done = first.wait_for(job_id, TERMINAL, timeout=180)
            assert done["state"] == "complete", done
            before[job_id] = downloads(first.client, done)
            links[job_id] = done
        assert sum(len(d) for d in before.values()) == 4  # three PDFs and one sidecar
        # blobs at rest are sealed: the backup copies them as stored
        stored = [p for p in (first.data_dir / "blobs").rglob("*.pdf") if p.is_file()]
        assert stored and all(
            before[i]["artifact_url"] != p.read_bytes() for i in ids for p in stored
        )

        folder, tarball = tmp_path / "backup", tmp_path / "backup.tar"
        made = pressroom("backup", "--with-keys", str(folder), data=first.data_dir, **sealed)
        assert made.returncode == 0, made.stderr
        assert (
            made.stdout.startswith("backed up ")
            and "keys: api-key, master.key, signing.key)" in made.stdout
        )
        made_tar = pressroom("backup", "--with-keys", str(tarball), data=first.data_dir, **sealed)
        assert made_tar.returncode == 0, made_tar.stderr
        key = first.client.headers["Authorization"]
    finally:
        first.client.close()
        stop(first.process)

    manifest = json.loads((folder / "manifest.json").read_text())
    assert {f["path"] for f in manifest["files"]} >= {
        "database/pressroom.db",
        "keys/signing.key",
        "keys/master.key",
        "keys/api-key",
    }
    for f in manifest["files"]:  # every file is there at its size and sum, keys 0600
        path = folder / f["path"]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == f["sha256"]
        assert path.stat().st_mode & 0o777 == 0o600
    print(f"backup: {len(manifest['files'])} files, {made.stdout.splitlines()[0]}")

    # a tampered blob: refused, one line, nothing written where the data dir would be
    altered = tmp_path / "altered"
    subprocess.run(["cp", "-a", str(folder), str(altered)], check=True)
    blob = next(p for p in (altered / "blobs" / "artifacts").rglob("*.pdf"))
    raw = bytearray(blob.read_bytes())
    raw[len(raw) // 2] ^= 1
    blob.write_bytes(bytes(raw))
    refused = pressroom("restore", str(altered), data=tmp_path / "refused" / "data")
    assert refused.returncode == 2 and refused.stdout == "", refused.stderr
    assert refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith("error: UNTRUSTED_BACKUP: ") and "SHA-256" in refused.stderr
    assert not (tmp_path / "refused" / "data").exists()
    assert sorted(p.name for p in (tmp_path / "refused").iterdir()) == []

    restored_dirs = {}
    for kind, src in (("folder", folder), ("tar", tarball)):
        data = tmp_path / f"second-{kind}" / "data"
        put = pressroom("restore", str(src), data=data)
        assert put.returncode == 0, put.stderr
        assert "every sum matched its manifest" in put.stdout
        assert "PRESSROOM_MASTER_KEY_FILE" in put.stdout
        for name in ("signing.key", "api-key", "master.key", "pressroom.db"):
            assert (data / name).stat().st_mode & 0o777 == 0o600, name
        assert [p.name for p in data.parent.iterdir()] == ["data"]  # nothing left beside it
        restored_dirs[kind] = {
            p.relative_to(data).as_posix(): p.read_bytes()
            for p in data.rglob("*")
            if p.is_file() and p.name != "pressroom.db"
        }
    # the folder and the tar put back the same blobs and keys (the database of each is its
    # own moment's); the tar's is served
    assert restored_dirs["folder"] == restored_dirs["tar"]
    assert len([k for k in restored_dirs["tar"] if k.startswith("blobs/")]) == 4
    data = tmp_path / "second-tar" / "data"
    restored = {"PRESSROOM_MASTER_KEY_FILE": str(data / "master.key")}
    # the API alone: every job is finished, nothing is left to run
    second = launch_serve(data.parent, extra_env=restored, workers=0, interactive=0)
    try:
        assert second.client.headers["Authorization"] == key  # the restored key answers
        listed = second.client.get("/v1/jobs", params={"limit": 100}).json()["jobs"]
        assert {str(j["id"]) for j in listed} == set(ids)
        for job_id in ids:
            job = second.client.get(f"/v1/jobs/{job_id}").json()
            assert job["state"] == "complete", job
            assert downloads(second.client, job) == before[job_id], job_id
            # a link the first service signed still opens: the signing key came back
            signed = httpx.URL(str(links[job_id]["artifact_url"]))
            old = second.client.get(signed.raw_path.decode())
            assert old.status_code == 200 and old.content == before[job_id]["artifact_url"]
    finally:
        second.client.close()
        stop(second.process)


def test_the_one_step_refusals_are_one_line_and_exit_2(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert pressroom("db", "upgrade", data=data).returncode == 0
    made = pressroom("backup", str(tmp_path / "b.tar"), data=data)
    assert made.returncode == 0, made.stderr
    (tmp_path / "taken").mkdir()
    (tmp_path / "plain.txt").write_text("not a backup")
    cases = [
        (("backup", str(tmp_path / "taken")), data, "CONFLICT"),
        (("restore", str(tmp_path / "b.tar")), data, "CONFLICT"),  # not empty, no --force
        (("restore", str(tmp_path / "none")), tmp_path / "fresh", "NOT_FOUND"),
        (("restore", str(tmp_path / "plain.txt")), tmp_path / "fresh", "BAD_REQUEST"),
    ]
    for args, where, code in cases:
        refused = pressroom(*args, data=where)
        assert refused.returncode == 2, (args, refused.stderr)
        assert refused.stdout == "" and refused.stderr.count("\n") == 1, refused.stderr
        assert refused.stderr.startswith(f"error: {code}: "), refused.stderr
    assert not (tmp_path / "fresh").exists() and list((tmp_path / "taken").iterdir()) == []
    forced = pressroom("restore", "--force", str(tmp_path / "b.tar"), data=data)
    assert forced.returncode == 0, forced.stderr
    assert "The data dir it replaced was moved to " in forced.stdout
    assert len(list(tmp_path.glob("data.before-restore-*"))) == 1
