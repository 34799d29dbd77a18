"""`pressroom jobs` as a user runs it, against serve in a subprocess: a header naming the
columns, then one line per job, newest first; a refusal one line on stderr with its exit code."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pikepdf
import pytest

from pressroom.synth import image_pdf, text_pdf
from tests.e2e.conftest import PRESSROOM, Server, free_port
from tests.helpers import small_scan

pytestmark = pytest.mark.e2e


def jobs(server: Server, *args: str, url: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PRESSROOM), "jobs", *args, "--url", url or server.url],
        capture_output=True,
        text=True,
        env={**os.environ, "PRESSROOM_DATA_DIR": str(server.data_dir)},
        timeout=60,
        check=False,
    )


def test_jobs_list_and_cancel_over_http(server: Server, tmp_path: Path) -> None:
    good = image_pdf([small_scan(seed=46, lines=2).image], tmp_path / "good.pdf", 300)
    with pikepdf.open(text_pdf([["locked"]], tmp_path / "plain.pdf")) as pdf:
        pdf.save(tmp_path / "locked.pdf", encryption=pikepdf.Encryption(user="u", owner="o"))
    ids = []
    for path in (good, tmp_path / "locked.pdf"):
        response = server.client.post("/v1/jobs", files={"file": ("x.pdf", path.read_bytes())})
        assert response.status_code == 202, response.text
        ids.append(str(response.json()["id"]))
    done = [server.wait_for(job_id, {"complete", "rejected", "review"}) for job_id in ids]
    assert [d["state"] for d in done] == ["complete", "rejected"]

    listed = jobs(server, "list")
    assert listed.returncode == 0, listed.stderr
    header, *lines = listed.stdout.splitlines()
    names = ["ID", "STATE", "LANE", "CREATED", "PAGES", "REASON", "LABEL"]
    assert header.split() == names
    # each name stands over its column: where the name starts, the column's value is
    assert header.index("STATE") == lines[0].index(" rejected ") + 1
    assert header.index("REASON") == lines[0].index(" ENCRYPTED ") + 1
    assert header.index("LABEL") == len(lines[0]) - 1  # no label: "-"
    assert [line.split()[:2] for line in lines] == [[ids[1], "rejected"], [ids[0], "complete"]]
    assert lines[0].split()[-2:] == ["ENCRYPTED", "-"]  # the reason, then no label
    only = jobs(server, "list", "--state", "complete", "--limit", "1")
    assert [line.split()[0] for line in only.stdout.splitlines()[1:]] == [ids[0]]
    none = jobs(server, "list", "--state", "running")
    assert none.returncode == 0 and none.stdout.splitlines() == [header]  # the header alone

    late = jobs(server, "cancel", ids[0])
    assert late.returncode == 2 and late.stderr.startswith("CONFLICT: ")
    wrong = jobs(server, "list", "--key", "not-a-key")
    assert wrong.returncode == 2 and wrong.stderr.startswith("UNAUTHORIZED: ")
    down = jobs(server, "list", url=f"http://127.0.0.1:{free_port()}")
    assert down.returncode == 75 and down.stderr.startswith("UNAVAILABLE: ")
