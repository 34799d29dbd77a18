"""The service as a user meets it: serve in a subprocess, a real client, real Tesseract."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pikepdf
import pytest

from pressroom.synth import image_pdf, text_pdf
from tests.e2e.conftest import Server, poll
from tests.helpers import cer, content_rect, output_text, small_scan

pytestmark = pytest.mark.e2e


def upload(server: Server, data: bytes, **form: str) -> dict[str, object]:
    response = server.client.post("/v1/jobs", files={"file": ("scan.pdf", data)}, data=form)
    assert response.status_code == 202, response.text
    body: dict[str, object] = response.json()
    return body


def test_upload_poll_download_a_searchable_branded_pdf(server: Server, tmp_path: Path) -> None:
    scan = small_scan(seed=41, lines=3)
    src = image_pdf([scan.image], tmp_path / "scan.pdf", 300)
    job = upload(server, src.read_bytes(), template="sample", title="Week 48")
    done = server.wait_for(str(job["id"]), {"complete", "rejected", "review"})
    assert done["state"] == "complete", done
    pdf = server.client.get(str(done["artifact_url"]))
    assert pdf.status_code == 200
    out = tmp_path / "out.pdf"
    out.write_bytes(pdf.content)
    with pikepdf.open(out) as doc:
        assert len(doc.pages) == 2 and str(doc.docinfo.Title) == "Week 48"
    height = scan.image.height * 72 / 300
    content = content_rect("sample", 612, height)  # the bands fit inside the page
    assert cer(scan.text, output_text(out, 1, content)) <= 0.05
    assert list(server.scratch_dir.iterdir()) == []


def _bomb(path: Path) -> bytes:
    from tests.unit.test_pipeline import _bomb_png

    return _bomb_png(path).read_bytes()


def test_hostile_uploads_are_refused_or_rejected_and_the_service_stays_up(
    server: Server, tmp_path: Path
) -> None:
    at_the_door = {
        "html": b"<!doctype html><html><body>hi</body></html>",
        "empty": b"",
    }
    for name, data in at_the_door.items():
        response = server.client.post("/v1/jobs", files={"file": ("a.pdf", data)})
        assert response.status_code == 415, name
        assert response.json()["code"] == "BAD_MIME"
    full = image_pdf([small_scan(dpi=100).image], tmp_path / "f.pdf", 100, jpeg=False)
    plain = text_pdf([["locked"]], tmp_path / "p.pdf")
    with pikepdf.open(plain) as pdf:
        pdf.save(tmp_path / "e.pdf", encryption=pikepdf.Encryption(user="u", owner="o"))
    many = pikepdf.Pdf.new()
    for _ in range(5000):
        many.add_blank_page()
    many.save(tmp_path / "many.pdf")
    in_the_worker = {
        "CORRUPT": full.read_bytes()[:300],
        "ENCRYPTED": (tmp_path / "e.pdf").read_bytes(),
        "PAGE_LIMIT": (tmp_path / "many.pdf").read_bytes(),
        "PIXEL_LIMIT": _bomb(tmp_path / "bomb.png"),
    }
    ids = {code: upload(server, data)["id"] for code, data in in_the_worker.items()}
    for code, job_id in ids.items():
        job = server.wait_for(str(job_id), {"complete", "rejected", "review"})
        assert (job["state"], job["reason"]) == ("rejected", code)
    assert server.client.get("/healthz").status_code == 200
    assert list(server.scratch_dir.iterdir()) == []


def test_worker_killed_mid_job_the_job_still_completes_once(server: Server, tmp_path: Path) -> None:
    pages = [small_scan(seed=s, lines=6).image for s in range(50, 62)]
    src = image_pdf(pages, tmp_path / "twelve.pdf", 300)
    job_id = str(upload(server, src.read_bytes())["id"])
    running = server.wait_for(job_id, {"running"}, timeout=60)
    assert running["state"] == "running"
    time.sleep(1.5)  # well inside the OCR of twelve pages
    victims = server.worker_pids()
    assert victims
    for pid in victims:
        os.kill(pid, signal.SIGKILL)
    done = server.wait_for(job_id, {"complete", "rejected", "review"}, timeout=120)
    assert done["state"] == "complete", done
    assert int(str(done["attempts"])) >= 2
    artifacts = list((server.data_dir / "blobs" / "artifacts").rglob("*.pdf"))
    assert len(artifacts) == 1
    assert server.client.get("/healthz").status_code == 200


def test_sigterm_stops_serve_and_its_workers(server: Server) -> None:
    workers = server.worker_pids()
    assert len(workers) == 2
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=60) == 0
    assert poll(lambda: not any(Path(f"/proc/{p}").exists() for p in workers), timeout=10)


def submit(server: Server, *args: str) -> subprocess.CompletedProcess[str]:
    """``pressroom submit`` as a user runs it, against the server, with its data dir's key."""
    from tests.e2e.conftest import PRESSROOM

    return subprocess.run(
        [str(PRESSROOM), "submit", *args, "--url", server.url],
        capture_output=True,
        text=True,
        env={**os.environ, "PRESSROOM_DATA_DIR": str(server.data_dir)},
        timeout=180,
        check=False,
    )


def test_submit_client_uploads_waits_and_downloads(server: Server, tmp_path: Path) -> None:
    scan = small_scan(seed=44, lines=3)
    good = image_pdf([scan.image], tmp_path / "Jane Doe waiver.pdf", 300)
    bad = tmp_path / "notes.pdf"
    bad.write_bytes(b"<html>not a pdf</html>")
    out = tmp_path / "results"
    done = submit(server, str(good), str(bad), "-o", str(out), "--no-label")
    assert done.returncode == 2, done.stderr
    assert (
        done.stderr.strip()
        == "BAD_MIME: notes.pdf: not a PDF, PNG, JPEG or TIFF file (by its content)"
    )
    result = out / "Jane Doe waiver.pdf"
    assert cer(scan.text, output_text(result)) <= 0.05
    # with --no-label the server never learnt the local file name
    stored = b"".join(p.read_bytes() for p in server.data_dir.rglob("*") if p.is_file())
    assert b"Jane Doe" not in stored


def test_submit_sends_each_files_name_as_its_label(server: Server, tmp_path: Path) -> None:
    from tests.e2e.conftest import PRESSROOM

    scan = small_scan(seed=46, lines=2)
    good = image_pdf([scan.image], tmp_path / "case 118 waiver.pdf", 300)
    done = submit(server, str(good), "--wait")
    assert done.returncode == 0, done.stderr
    listed = subprocess.run(
        [str(PRESSROOM), "jobs", "list", "--label", "case 118 waiver.pdf", "--url", server.url],
        capture_output=True,
        text=True,
        env={**os.environ, "PRESSROOM_DATA_DIR": str(server.data_dir)},
        timeout=60,
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    (header, line) = listed.stdout.splitlines()
    assert header.split()[-1] == "LABEL"
    assert " complete " in line and line.endswith("  case 118 waiver.pdf")
    job = server.client.get(f"/v1/jobs/{line.split()[0]}").json()
    assert job["label"] == "case 118 waiver.pdf"
    got = server.client.get(str(job["artifact_url"]))
    assert got.headers["content-disposition"] == 'attachment; filename="case 118 waiver.pdf"'


def test_submit_passes_languages_deadline_and_an_idempotency_key(
    server: Server, tmp_path: Path
) -> None:
    scan = small_scan(seed=47, lines=2)
    good = image_pdf([scan.image], tmp_path / "form.pdf", 300)
    args = ["-l", "eng+deu", "--deadline", "900", "--idempotency-key", "drop-48", "--no-label"]
    first = submit(server, str(good), *args)
    again = submit(server, str(good), *args)
    assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
    job_id = first.stdout.split("accepted as ")[1].split()[0]
    assert again.stdout.split("accepted as ")[1].split()[0] == job_id  # the same job, once
    job = server.wait_for(job_id, {"complete", "rejected", "review"})
    assert job["state"] == "complete" and job["languages"] == "eng+deu"
    assert job["deadline_at"] - job["created_at"] == pytest.approx(900)
    # a pack the workers lack: refused at the door, naming it (the workers report theirs)
    missing = submit(server, str(good), "-l", "ita", "--no-label")
    assert missing.returncode == 2
    assert "UNSUPPORTED_LANGUAGE: form.pdf: no Tesseract data for ita" in missing.stderr
    assert "tesseract-ocr-ita" in missing.stderr


def test_submit_keep_pixels_keeps_the_scan_as_it_was(server: Server, tmp_path: Path) -> None:
    from pressroom.synth import distort, save_jpeg

    scan = small_scan(seed=45, lines=3)
    jpeg = save_jpeg(distort(scan.image, skew=-1.5), tmp_path / "skewed.jpg", 300)
    done = submit(server, str(jpeg), "--keep-pixels", "-o", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    result = tmp_path / "out" / "skewed.pdf"
    assert cer(scan.text, output_text(result)) <= 0.05
    with pikepdf.open(result) as pdf:
        (image,) = pdf.pages[0].get_images().values()
        assert bytes(image.read_raw_bytes()) == jpeg.read_bytes()


def test_logs_of_a_redaction_job_hold_no_personal_data(server: Server, tmp_path: Path) -> None:
    name, account = "Olusegun Adebayo", "12345678"
    address = "1600 Pennsylvania Avenue NW, Washington, DC 20500"
    customer = "jane.doe@example.org"
    src = text_pdf(
        [[f"Payee: {name}", f"Account number: {account}", f"Send it to {address} by post."]],
        tmp_path / "in.pdf",
    )
    # the registry is the operator's: a tenant key cannot register customers
    assert (
        server.client.post("/v1/customers", json={"tenant": "default", "id": customer}).status_code
        == 403
    )
    from pressroom.service import open_services
    from pressroom.settings import Settings

    services = open_services(Settings(data_dir=server.data_dir), migrate=False)
    services.store.tenancy.set_customer("default", customer, status="active", now=time.time())
    services.store.db.engine.dispose()
    file_name = f"{name} payout.pdf"
    response = server.client.post(
        "/v1/jobs",
        files={"file": (file_name, src.read_bytes())},
        data={"redact": "name,address,account-number", "customer": customer},
    )
    assert response.status_code == 202, response.text
    job_id = str(response.json()["id"])
    done = server.wait_for(job_id, {"complete", "rejected", "review"})
    assert done["state"] == "complete", done
    assert server.client.get(str(done["artifact_url"])).status_code == 200
    poll(lambda: job_id in (tmp_path / "serve.log").read_text(), 10)
    log = (tmp_path / "serve.log").read_text()
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    assert any(line.get("job_id") == job_id and line.get("stage") for line in lines)
    for forbidden in (name, "Adebayo", account, "Pennsylvania", customer, "jane.doe", "payout"):
        assert forbidden not in log, forbidden
    # no paths either (the start-up banner on stdout tells the operator where the key file is;
    # log lines never carry one)
    assert all(str(tmp_path) not in json.dumps(line) for line in lines)


# --- what serve runs, its refusals, and the workers' health check ----------------------------


def _pressroom(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    from tests.e2e.conftest import PRESSROOM

    return subprocess.run(
        [str(PRESSROOM), *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
        check=False,
    )


def _processes_naming(marker: str) -> list[int]:
    """Processes whose environment holds ``marker`` (this test's own data dir): whatever a
    serve it started left behind."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _launch_without_interactive(tmp_path: Path, workers: int) -> tuple[Server, Path]:
    """``pressroom serve --workers N`` with no ``--interactive`` (launch_serve always names it)."""
    import httpx

    from tests.e2e.conftest import PRESSROOM, _healthy, free_port

    port = free_port()
    data, scratch = tmp_path / "data", tmp_path / "scratch"
    scratch.mkdir()
    log_path = tmp_path / "serve.log"
    env = {**os.environ, "PRESSROOM_DATA_DIR": str(data), "PRESSROOM_SCRATCH_DIR": str(scratch)}
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [str(PRESSROOM), "serve", "--port", str(port), "--workers", str(workers)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    if not poll(lambda: process.poll() is not None or _healthy(url), 60) or process.poll():
        process.kill()
        raise AssertionError(f"serve did not start: {log_path.read_text()}")
    key = (data / "api-key").read_text().strip()
    client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=30)
    return Server(process, url, data, scratch, client), log_path


def test_serve_on_a_busy_port_is_refused_in_one_line_before_anything_starts(
    tmp_path: Path,
) -> None:
    import socket

    data = tmp_path / "data"
    env = {"PRESSROOM_DATA_DIR": str(data), "PRESSROOM_SCRATCH_DIR": str(tmp_path)}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _pressroom(env, "serve", "--port", str(port), "--workers", "1")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""  # no banner, no key file announced: nothing claimed to run
    assert done.stderr.splitlines() == [
        f"error: BAD_CONFIG: cannot listen on 127.0.0.1:{port}: the port is in use by another "
        "process (another `pressroom serve`?)"
    ]
    assert not data.exists()  # refused before the database was opened
    assert _processes_naming(str(data)) == []  # no worker left behind


def test_serve_with_no_bulk_workers_runs_the_interactive_ones_it_is_given(
    tmp_path: Path,
) -> None:
    from tests.e2e.conftest import launch_serve, stop

    server = launch_serve(tmp_path, workers=0, interactive=1)
    try:
        assert len(server.worker_pids()) == 1
        banner = (tmp_path / "serve.log").read_text()
        assert "(workers: 0 bulk, 1 interactive; docs at /docs)" in banner
        scan = image_pdf([small_scan(seed=48, lines=2).image], tmp_path / "scan.pdf", 300)
        waiting = upload(server, scan.read_bytes(), lane="bulk")
        urgent = upload(server, scan.read_bytes(), lane="interactive")
        done = server.wait_for(str(urgent["id"]), {"complete", "rejected", "review"})
        assert done["state"] == "complete", done
        # no bulk worker runs: the bulk job queued first is still waiting
        assert server.client.get(f"/v1/jobs/{waiting['id']}").json()["state"] == "accepted"
    finally:
        server.client.close()
        stop(server.process)


def test_serve_workers_0_alone_runs_the_api_alone_and_says_so(tmp_path: Path) -> None:
    from tests.e2e.conftest import stop

    server, log = _launch_without_interactive(tmp_path, workers=0)
    try:
        assert server.worker_pids() == []
        assert "(the API alone, no workers: jobs wait for `pressroom worker` processes" in (
            log.read_text()
        )
        env = {"PRESSROOM_DATA_DIR": str(server.data_dir)}
        check = _pressroom(env, "worker", "--check")
        assert check.returncode == 1
        assert check.stderr == "UNAVAILABLE: no worker pool has a heartbeat on this host\n"
    finally:
        server.client.close()
        stop(server.process)


def test_worker_check_passes_while_a_pool_lives_and_fails_once_it_is_gone(
    server: Server,
) -> None:
    env = {"PRESSROOM_DATA_DIR": str(server.data_dir)}
    alive = _pressroom(env, "worker", "--check")
    assert alive.returncode == 0, alive.stderr
    assert alive.stdout.startswith("ok: 1/1 bulk, 1/1 interactive worker(s) alive"), alive.stdout
    lane = _pressroom(env, "worker", "--check", "--lane", "interactive")
    assert lane.returncode == 0, lane.stderr
    workers = server.worker_pids()
    assert len(workers) == 2
    server.process.send_signal(signal.SIGKILL)  # the supervisor dies without a word
    server.process.wait(timeout=30)
    gone = _pressroom(env, "worker", "--check")
    assert gone.returncode == 1
    assert gone.stderr.startswith("UNAVAILABLE: the worker pool (pid ")
    assert gone.stderr.endswith(") is gone\n") and len(gone.stderr.splitlines()) == 1
    # its orphaned workers notice and end on their own, even those killed while starting
    assert poll(lambda: all(_ended(p) for p in workers), timeout=60)


def _ended(pid: int) -> bool:
    """Gone, or a zombie that nobody reaps (an orphan's new parent may never wait for it)."""
    try:
        return (Path(f"/proc/{pid}") / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_worker_check_fails_after_a_clean_stop(server: Server) -> None:
    env = {"PRESSROOM_DATA_DIR": str(server.data_dir)}
    assert _pressroom(env, "worker", "--check").returncode == 0
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=60) == 0
    after = _pressroom(env, "worker", "--check", "--lane", "bulk")
    assert after.returncode == 1
    assert after.stderr == "UNAVAILABLE: no bulk worker pool has a heartbeat on this host\n"


def test_worker_check_fails_on_a_stale_heartbeat_of_a_living_process(tmp_path: Path) -> None:
    """A supervisor that still runs but stopped beating (its watch thread hung or died)."""
    import socket

    from pressroom.worker import heartbeat

    env = {"PRESSROOM_DATA_DIR": str(tmp_path)}
    where = heartbeat.folder(tmp_path)
    # this test's own process stands in for the supervisor: alive, so only the age can fail it
    beat = heartbeat.Beat(socket.gethostname(), os.getpid(), time.time(), {"bulk": (1, 1)})
    heartbeat.write(where, beat)
    fresh = _pressroom(env, "worker", "--check")
    assert fresh.returncode == 0, fresh.stderr
    heartbeat.write(where, dataclasses.replace(beat, at=beat.at - 120))
    stale = _pressroom(env, "worker", "--check")
    assert stale.returncode == 1
    assert stale.stderr.startswith("UNAVAILABLE: the worker pool's heartbeat is 12")
    assert stale.stderr.endswith(" s old (stale after 30 s)\n")


def test_worker_check_with_a_bad_setting_is_unhealthy_in_one_line(tmp_path: Path) -> None:
    env = {"PRESSROOM_DATA_DIR": str(tmp_path), "PRESSROOM_MAX_PAGES": "many"}
    done = _pressroom(env, "worker", "--check")
    assert done.returncode == 1  # Docker's unhealthy (2 is reserved there)
    (line,) = done.stderr.splitlines()
    assert line.startswith("BAD_CONFIG: PRESSROOM_MAX_PAGES")


def test_serve_with_its_database_down_is_one_line_and_exit_75(tmp_path: Path) -> None:
    """A PostgreSQL that does not answer at start (nothing listens on port 1): the driver's
    error becomes STORE_UNAVAILABLE, one line, exit 75 (try again later), no traceback."""
    from tests.e2e.conftest import PRESSROOM, free_port

    env = {
        **os.environ,
        "PRESSROOM_DATA_DIR": str(tmp_path / "data"),
        "PRESSROOM_DATABASE_URL": "postgresql://pressroom@127.0.0.1:1/pressroom",
    }
    done = subprocess.run(
        [str(PRESSROOM), "serve", "--port", str(free_port()), "--workers", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 75, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("STORE_UNAVAILABLE: "), done.stderr
    assert "pressroom@" not in done.stderr and "Traceback" not in done.stderr
