"""Malware scanning against a real clamd (``tests/clamd.py``): each path the adapter can take —
clean, infected (the EICAR string, a hash-signed PDF, EICAR as a PDF's Flate-compressed
embedded file), clamd killed mid-stream, clamd paused (a timeout), a stream past clamd's
StreamMaxLength — and the worker's scan stage: a finding dead-letters the job MALWARE_FOUND
with the signature in its reason, a scanner that cannot be reached is retried and then
dead-lettered SCANNER_UNAVAILABLE, a big document is scanned before it is split; /readyz and
/metrics say what the scanner did; no log line names the file."""

from __future__ import annotations

import io
import logging
import signal
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select

from pressroom.api.metrics import render_metrics
from pressroom.app import create_app
from pressroom.engines.clamd import ClamdScanner, parse_reply
from pressroom.errors import MalwareFound, ScannerUnavailable, ScanTooLarge
from pressroom.jobs.model import JobState, Lane
from pressroom.jobs.schema import tasks
from pressroom.scanning import Clean, Found, TooLong, chunks_of, scan_file
from pressroom.service import Services, open_services
from pressroom.settings import ScannerSettings, Settings
from pressroom.synth import text_pdf
from pressroom.testing import FakeOcrEngine
from pressroom.worker.runner import JobRunner
from tests.clamd import (
    EICAR,
    EICAR_SIGNATURE,
    HASHED_SIGNATURE,
    Clamd,
    FakeClamd,
    clean_pdf,
    embedded_eicar_pdf,
    hashed_pdf,
    start_clamd,
)
from tests.conftest import FakeClock

pytestmark = pytest.mark.integration

SECRET_NAME = "Quarterly-Report-of-Jane-Doe"  # a file name no log line may carry


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("scan-fixtures")
    hashed_pdf(folder / "hashed.pdf")
    clean_pdf(folder / "clean.pdf")
    embedded_eicar_pdf(folder / "embedded.pdf")
    (folder / "eicar.com").write_bytes(EICAR)
    return folder


@pytest.fixture(scope="module")
def clamd(fixtures: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clamd]:
    """One clamd for the module's tests that leave it running."""
    daemon = start_clamd(tmp_path_factory.mktemp("clamd"), fixtures / "hashed.pdf")
    yield daemon
    daemon.stop()


@pytest.fixture
def own_clamd(fixtures: Path, tmp_path: Path) -> Iterator[Clamd]:
    """A clamd of the test's own, for a test that kills or pauses it."""
    daemon = start_clamd(tmp_path / "clamd", fixtures / "hashed.pdf")
    yield daemon
    daemon.stop()


# --- the adapter: each path -----------------------------------------------------------------


@pytest.mark.parametrize("over", ["unix", "tcp"])
def test_a_clean_pdf_passes_over_either_socket(clamd: Clamd, fixtures: Path, over: str) -> None:
    address = str(clamd.socket_path) if over == "unix" else clamd.tcp
    scanner = ClamdScanner(address, timeout_s=30)
    scanner.ping()
    assert scan_file(scanner, fixtures / "clean.pdf") == Clean()


@pytest.mark.parametrize(
    ("name", "signature"),
    [
        ("eicar.com", EICAR_SIGNATURE),
        ("hashed.pdf", HASHED_SIGNATURE),
        ("embedded.pdf", EICAR_SIGNATURE),  # found only inside the inflated attachment
    ],
)
@pytest.mark.parametrize("over", ["unix", "tcp"])
def test_an_infected_source_is_found_and_refused_naming_the_signature(
    clamd: Clamd, fixtures: Path, name: str, signature: str, over: str
) -> None:
    address = str(clamd.socket_path) if over == "unix" else clamd.tcp
    scanner = ClamdScanner(address, timeout_s=30)
    assert scanner.scan(chunks_of(fixtures / name)) == Found(signature)
    with pytest.raises(MalwareFound) as refused:
        scan_file(scanner, fixtures / name)
    assert refused.value.code == "MALWARE_FOUND" and signature in refused.value.message
    assert name not in refused.value.message


def test_a_clamd_killed_mid_stream_is_unavailable_never_a_pass(
    own_clamd: Clamd, tmp_path: Path
) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(b"\0" * (8 << 20))

    def chunks() -> Iterator[bytes]:
        sent = 0
        for chunk in chunks_of(big):
            if sent == 1 << 20:  # a megabyte in: clamd is killed, and is gone
                own_clamd.process.kill()
                own_clamd.process.wait()
            sent += len(chunk)
            yield chunk

    with pytest.raises(ScannerUnavailable) as down:
        own_clamd.scanner().scan(chunks())
    assert down.value.code == "SCANNER_UNAVAILABLE"
    # and one that is gone before the scan: refused at the socket, never a pass
    with pytest.raises(ScannerUnavailable):
        own_clamd.scanner().scan(chunks_of(big))
    with pytest.raises(ScannerUnavailable):
        own_clamd.scanner().ping()


def test_nothing_listening_is_unavailable(tmp_path: Path) -> None:
    from tests.clamd import free_port

    for address in (str(tmp_path / "no.sock"), f"127.0.0.1:{free_port()}"):
        with pytest.raises(ScannerUnavailable):
            ClamdScanner(address, timeout_s=5).scan([b"%PDF-1.7\n"])


def test_a_paused_clamd_times_out_as_unavailable(own_clamd: Clamd, fixtures: Path) -> None:
    own_clamd.process.send_signal(signal.SIGSTOP)  # alive, accepting, never answering
    try:
        slow = own_clamd.scanner(timeout_s=0.5)
        with pytest.raises(ScannerUnavailable) as late:
            scan_file(slow, fixtures / "eicar.com")
        assert "timed out" in late.value.message
        with pytest.raises(ScannerUnavailable):
            slow.ping()
    finally:
        own_clamd.process.send_signal(signal.SIGCONT)
    # awake again, the same scanner finds what it finds
    assert own_clamd.scanner().scan(chunks_of(fixtures / "eicar.com")) == Found(EICAR_SIGNATURE)


def test_a_stream_past_stream_max_length_is_refused_never_a_pass(
    fixtures: Path, tmp_path: Path
) -> None:
    small = start_clamd(tmp_path / "clamd", fixtures / "hashed.pdf", stream_max="1M")
    try:
        big = tmp_path / "big.pdf"
        big.write_bytes(b"%PDF-1.7\n" + b"0" * (3 << 20))
        for address in (str(small.socket_path), small.tcp):
            scanner = ClamdScanner(address, timeout_s=30)
            try:
                verdict = scanner.scan(chunks_of(big))
            except ScannerUnavailable:
                # TCP may reset the connection before clamd's answer is read: still no pass
                assert address == small.tcp
                continue
            assert verdict == TooLong()
        with pytest.raises(ScanTooLarge) as refused:
            scan_file(small.scanner(), big)
        assert refused.value.code == "SCAN_TOO_LARGE" and refused.value.http_status == 422
        # under the limit the same clamd still scans
        assert small.scanner().scan(chunks_of(fixtures / "eicar.com")) == Found(EICAR_SIGNATURE)
    finally:
        small.stop()


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"stream: ERROR\0",
        b"PONG\0",
        b"stream: OK FOUND\0stream: OK\0",
        b"stream: OK trailing\0",
        b"stream:  FOUND\0",
        b"Can't allocate memory ERROR\0",
    ],
)
def test_any_other_answer_is_no_verdict(raw: bytes) -> None:
    with pytest.raises(ScannerUnavailable):
        parse_reply(raw)


@pytest.fixture
def fake_clamd(tmp_path: Path) -> Iterator[Callable[..., FakeClamd]]:
    """Fakes posing as clamd on Unix sockets in the test's folder, closed after it."""
    made: list[FakeClamd] = []

    def make(answer: bytes, trickle_s: float = 0.0) -> FakeClamd:
        made.append(FakeClamd(tmp_path / f"f{len(made)}.sock", answer, trickle_s))
        return made[-1]

    yield make
    for fake in made:
        fake.close()


def test_a_trickled_answer_is_cut_at_the_timeout_never_waited_on(
    fake_clamd: Callable[..., FakeClamd],
) -> None:
    """The timeout is one deadline for the whole answer: a byte every 0.3 s would renew a
    per-read timeout of 1 s for ever (here: for the 3.3 s of "stream: OK", then a pass)."""
    fake = fake_clamd(b"stream: OK\0", trickle_s=0.3)
    scanner = ClamdScanner(str(fake.path), timeout_s=1.0)
    with pytest.raises(ScannerUnavailable) as late:
        scanner.scan([b"%PDF-1.7\n"])
    assert fake.served.is_set() and "timed out" in late.value.message
    pong = fake_clamd(b"PONG\0", trickle_s=0.3)
    with pytest.raises(ScannerUnavailable):
        ClamdScanner(str(pong.path), timeout_s=1.0).ping()


@pytest.mark.parametrize("answer", [b"stream: OK", b"stream: OK\n"])
def test_an_answer_cut_before_its_nul_is_no_verdict(
    fake_clamd: Callable[..., FakeClamd], answer: bytes
) -> None:
    fake = fake_clamd(answer)  # then the connection closes
    with pytest.raises(ScannerUnavailable):
        ClamdScanner(str(fake.path), timeout_s=5).scan([b"%PDF-1.7\n"])
    assert fake.served.is_set()


@pytest.mark.parametrize("answer", [b"PONG", b"PANG\0", b"stream: OK\0", b"PONG PONG\0"])
def test_a_ping_answered_other_than_pong_is_unavailable(
    fake_clamd: Callable[..., FakeClamd], answer: bytes
) -> None:
    with pytest.raises(ScannerUnavailable):
        ClamdScanner(str(fake_clamd(answer).path), timeout_s=5).ping()


# --- the worker -----------------------------------------------------------------------------


@pytest.fixture
def scanned(tmp_path: Path, clock: FakeClock, clamd: Clamd) -> Iterator[Services]:
    """Services whose settings name the module's clamd (as PRESSROOM_SCANNER=clamd would)."""
    settings = Settings(
        data_dir=tmp_path / "data",
        scratch_dir=tmp_path / "scratch",
        max_attempts=3,
        split_pages=2,
        scanner=ScannerSettings("clamd", str(clamd.socket_path), timeout_s=30),
    )
    settings.scratch_dir.mkdir()
    svc = open_services(settings)
    svc.clock = clock
    yield svc
    svc.store.db.engine.dispose()


def _submit(services: Services, data: bytes) -> str:
    key = services.store.tenancy.create_key("acme", now=services.clock())
    client = TestClient(create_app(services), client=("127.0.0.1", 50000))
    done = client.post(
        "/v1/jobs",
        headers={"Authorization": f"Bearer {key}"},
        files={"file": (f"{SECRET_NAME}.pdf", io.BytesIO(data))},
        data={"title": SECRET_NAME},
    )
    assert done.status_code == 202, done.text  # the door never waits on the scanner
    return str(done.json()["id"])


def _scans(services: Services) -> dict[str, float]:
    """pressroom_scans_total by outcome, every lane summed (each exported from zero)."""
    counted: dict[str, float] = {}
    for family in text_string_to_metric_families(render_metrics(services).decode()):
        for sample in family.samples:
            if sample.name == "pressroom_scans_total":
                outcome = sample.labels["outcome"]
                counted[outcome] = counted.get(outcome, 0.0) + sample.value
    return counted


def _run(services: Services) -> None:
    JobRunner(services, FakeOcrEngine(), "w1").run_next(tuple(Lane))


def test_the_worker_scans_first_and_dead_letters_a_finding_with_its_signature(
    scanned: Services, fixtures: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clean = _submit(scanned, (fixtures / "clean.pdf").read_bytes())
    infected = _submit(scanned, (fixtures / "embedded.pdf").read_bytes())
    with caplog.at_level(logging.DEBUG):
        _run(scanned)
        _run(scanned)
    done = scanned.store.queue.get(clean)
    assert done is not None and done.state is JobState.COMPLETE
    dead = scanned.store.queue.get(infected)
    assert dead is not None and dead.state is JobState.REJECTED and dead.attempts == 1
    assert dead.reason == "MALWARE_FOUND" and EICAR_SIGNATURE in (dead.message or "")
    assert SECRET_NAME not in (dead.message or "")
    assert list(scanned.blobs.list("artifacts")) != []  # the clean one's only
    timings = {t for t in _timings(scanned, infected)}
    assert "scan" in timings and "process" not in timings  # nothing read it after the scan
    counted = _scans(scanned)
    assert (counted["clean"], counted["found"], counted["unavailable"]) == (1, 1, 0)
    logged = "\n".join(r.getMessage() + repr(r.__dict__) for r in caplog.records)
    assert "scanned" in logged and SECRET_NAME not in logged


def _timings(services: Services, job_id: str) -> set[str]:
    from pressroom.jobs.schema import stage_timings

    with services.store.db.read() as conn:
        rows = conn.execute(
            select(stage_timings.c.stage).where(stage_timings.c.job_id == job_id)
        ).all()
    return {row[0] for row in rows}


def test_a_big_document_is_scanned_once_before_it_is_split(
    scanned: Services, tmp_path: Path
) -> None:
    three = [["page one"], ["page two"], ["page three"]]
    infected = embedded_eicar_pdf(tmp_path / "three.pdf", pages=three)
    job_id = _submit(scanned, infected.read_bytes())
    _run(scanned)
    dead = scanned.store.queue.get(job_id)
    assert dead is not None and (dead.state, dead.reason) == (JobState.REJECTED, "MALWARE_FOUND")
    # the same document without the attachment is split (so the split came after the scan)
    clean = _submit(scanned, text_pdf(three, tmp_path / "clean3.pdf").read_bytes())
    _run(scanned)
    with scanned.store.db.read() as conn:
        split = conn.execute(
            select(func.count()).select_from(tasks).where(tasks.c.job_id == clean)
        ).scalar_one()
    assert split > 1
    assert _scans(scanned)["found"] == 1 and _scans(scanned)["clean"] == 1


def test_ranges_of_a_job_split_unscanned_scan_their_source_and_others_do_not(
    scanned: Services, clamd: Clamd, tmp_path: Path
) -> None:
    """A rollout: a worker without a scanner split a big job; the fleet restarts with one.
    Its ranges find no clean scan recorded and scan what they fetched: the finding stands.
    A job scanned before its split is not scanned again by its ranges."""
    on, scanner = scanned.settings, scanned.scanner
    scanned.scanner, scanned.settings = None, replace(on, scanner=ScannerSettings())
    four = [[f"page {n}"] for n in range(4)]
    infected = _submit(scanned, embedded_eicar_pdf(tmp_path / "four.pdf", pages=four).read_bytes())
    _run(scanned)  # split, unscanned
    assert scanned.store.tasks.progress(infected)[0] > 1 and _scans(scanned) == {
        "clean": 0, "found": 0, "too_large": 0, "unavailable": 0}  # fmt: skip
    scanned.scanner, scanned.settings = scanner, on
    _run(scanned)  # its first range
    dead = scanned.store.queue.get(infected)
    assert dead is not None and (dead.state, dead.reason) == (JobState.REJECTED, "MALWARE_FOUND")
    assert EICAR_SIGNATURE in (dead.message or "") and _scans(scanned)["found"] == 1
    clean = _submit(scanned, text_pdf(four, tmp_path / "clean4.pdf").read_bytes())
    _run(scanned)  # the split, scanned
    for _ in range(scanned.store.tasks.progress(clean)[0]):  # its ranges (and the assembly)
        _run(scanned)
    done = scanned.store.queue.get(clean)
    assert done is not None and done.state is JobState.COMPLETE
    assert _scans(scanned)["clean"] == 1  # once, before the split


def test_a_scanner_that_cannot_be_reached_is_retried_then_dead_lettered(
    scanned: Services, fixtures: Path, tmp_path: Path, clock: FakeClock
) -> None:
    scanned.scanner = ClamdScanner(str(tmp_path / "gone.sock"), timeout_s=5)
    job_id = _submit(scanned, (fixtures / "clean.pdf").read_bytes())
    states = []
    for _ in range(scanned.settings.max_attempts):
        _run(scanned)
        job = scanned.store.queue.get(job_id)
        assert job is not None
        states.append((job.state, job.reason))
        clock.advance(3600)  # past any backoff
    retrying = (JobState.RETRYING, "SCANNER_UNAVAILABLE")
    assert states == [retrying, retrying, (JobState.REJECTED, "SCANNER_UNAVAILABLE")]
    assert list(scanned.blobs.list("artifacts")) == []  # never a pass
    assert _scans(scanned)["unavailable"] == 3


def test_a_worker_told_to_scan_without_a_scanner_fails_closed(
    scanned: Services, fixtures: Path
) -> None:
    scanned.scanner = None  # Services built by hand, the setting still clamd
    job_id = _submit(scanned, (fixtures / "clean.pdf").read_bytes())
    _run(scanned)
    job = scanned.store.queue.get(job_id)
    assert job is not None and (job.state, job.reason) == (
        JobState.RETRYING,
        "SCANNER_UNAVAILABLE",
    )


# --- the door: the page count before any scan -----------------------------------------------


def test_the_doors_page_count_runs_with_none_of_the_apis_secrets(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The upload is parsed for its page count before any scanner has read it (the scan is
    the worker's), in a child given a scrubbed environment: a parser exploit finds no key."""
    from pressroom.pipeline import pagecount

    for name in ("PRESSROOM_MASTER_KEY", "PRESSROOM_DATABASE_URL", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "a secret of the API's")
    three = text_pdf([["one two"], ["three"], ["four"]], tmp_path / "three.pdf")
    # the real child still counts, with nothing of the API's environment
    assert pagecount.count_work(three, "pdf", text_cap=1000) == (3, 16)
    # what the child sees: a stand-in child says 2 pages when any secret reached it
    seen = "import os; print(2 if any('secret' in v for v in os.environ.values()) else 1)"
    monkeypatch.setattr(pagecount, "_CHILD", seen)
    assert pagecount.count_pages(three, "pdf") == 1


# --- readiness ------------------------------------------------------------------------------


def test_readyz_says_whether_the_configured_scanner_answers(
    scanned: Services, clamd: Clamd, tmp_path: Path
) -> None:
    client = TestClient(create_app(scanned), client=("127.0.0.1", 50000))
    ready = client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["scanner"] == "ok"
    scanned.scanner = ClamdScanner(str(tmp_path / "gone.sock"), timeout_s=5)
    down = client.get("/readyz")
    # said, not refused: uploads go on and wait in the queue for the scanner
    assert down.status_code == 200 and down.json()["scanner"] == "unreachable"
    scanned.scanner = None
    scanned.settings = replace(scanned.settings, scanner=ScannerSettings())
    assert client.get("/readyz").json()["scanner"] == "off"


def test_readyz_takes_only_pong_as_an_answer(
    scanned: Services, fake_clamd: Callable[..., FakeClamd]
) -> None:
    client = TestClient(create_app(scanned), client=("127.0.0.1", 50000))
    assert client.get("/readyz").json()["scanner"] == "ok"  # the real clamd: PONG
    for answer in (b"PANG\0", b"stream: OK\0", b"PONG"):
        scanned.scanner = ClamdScanner(str(fake_clamd(answer).path), timeout_s=5)
        said = client.get("/readyz")
        assert said.status_code == 200 and said.json()["scanner"] == "unreachable", answer


def test_readyz_does_not_wait_on_a_paused_scanner(scanned: Services, own_clamd: Clamd) -> None:
    scanned.scanner = own_clamd.scanner(timeout_s=600)  # a job's scan may wait; a probe may not
    own_clamd.process.send_signal(signal.SIGSTOP)
    try:
        client = TestClient(create_app(scanned), client=("127.0.0.1", 50000))
        answer = client.get("/readyz")  # answered after the probe's own 2 s, not the 600
        assert answer.status_code == 200 and answer.json()["scanner"] == "unreachable"
    finally:
        own_clamd.process.send_signal(signal.SIGCONT)


def test_a_source_longer_than_clamd_streams_is_dead_lettered_scan_too_large(
    scanned: Services, fixtures: Path, tmp_path: Path
) -> None:
    small = start_clamd(tmp_path / "clamd", fixtures / "hashed.pdf", stream_max="1M")
    try:
        scanned.scanner = small.scanner()
        long = text_pdf([["a long letter"]], tmp_path / "long.pdf")
        with long.open("ab") as grow:  # bytes after %%EOF: a PDF reader ignores them
            grow.write(b"%" + b"0" * (2 << 20) + b"\n")
        job_id = _submit(scanned, long.read_bytes())
        _run(scanned)
        dead = scanned.store.queue.get(job_id)
        assert dead is not None and dead.attempts == 1
        assert (dead.state, dead.reason) == (JobState.REJECTED, "SCAN_TOO_LARGE")
        assert _scans(scanned)["too_large"] == 1
    finally:
        small.stop()
