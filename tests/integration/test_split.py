"""One big document spread over every worker: its page ranges are tasks any runner of the lane
claims (on SQLite and on PostgreSQL), a failed range is read again alone, a cancel reaches the
ranges, and one artifact comes out with every page in order. Tasks are never jobs."""

from __future__ import annotations

import dataclasses
import io
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path
from typing import Any

import pikepdf
import pytest
from fastapi.testclient import TestClient
from PIL import Image, ImageDraw, ImageStat
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import func, select

from pressroom.api.metrics import render_metrics
from pressroom.app import create_app
from pressroom.errors import EngineUnavailable
from pressroom.housekeeping import housekeeping
from pressroom.jobs.model import Lane
from pressroom.jobs.schema import tasks
from pressroom.jobs.tasks import page_ranges
from pressroom.models import Box, OcrResult, Word
from pressroom.service import Services, open_services
from pressroom.settings import Settings
from pressroom.worker.runner import JobRunner
from tests.conftest import FakeClock
from tests.helpers import output_text
from tests.integration.test_scaleout import scaled  # noqa: F401  (a fixture)

PAGES = 120
SPLIT = 20  # ranges of 10 pages: 12 tasks
BITS = 8


def _page(number: int) -> Image.Image:
    """A small page whose number is drawn as a row of black and white blocks."""
    image = Image.new("L", (240, 300), 255)
    draw = ImageDraw.Draw(image)
    for bit in range(BITS):
        if number >> bit & 1:
            x = 20 + bit * 25
            draw.rectangle((x, 20, x + 20, 50), fill=0)
    draw.rectangle((20, 120, 220, 125), fill=0)  # some ink below: a page, not a blank
    return image


def big_pdf(path: Path, pages: int = PAGES) -> bytes:
    frames = [_page(n) for n in range(pages)]
    frames[0].save(path, save_all=True, append_images=frames[1:], resolution=100.0)
    return path.read_bytes()


def _number(image: Image.Image) -> int:
    grey = image.convert("L")
    sx, sy = grey.width / 240, grey.height / 300
    number = 0
    for bit in range(BITS):
        x = (30 + bit * 25) * sx
        box = (int(x - 3 * sx), int(30 * sy), int(x + 3 * sx), int(40 * sy))
        if ImageStat.Stat(grey.crop(box)).mean[0] < 128:
            number |= 1 << bit
    return number


@dataclass
class PageEngine:
    """Reads each page's drawn number as the text ``Page NNNN of the bundle``; counts the
    reads of every page; ``fail`` (page → times) raises a transient error on those reads;
    ``on_read`` runs before each read."""

    fail: dict[int, int] = field(default_factory=dict)
    reads: Counter[int] = field(default_factory=Counter)
    on_read: Callable[[int], None] | None = None

    @property
    def name(self) -> str:
        return "page-engine"

    def recognize(
        self, image: Image.Image, *, dpi: float, timeout: float | None = None, **_: Any
    ) -> OcrResult:
        number = _number(image)
        if self.on_read is not None:
            self.on_read(number)
        self.reads[number] += 1
        if self.fail.get(number):
            self.fail[number] -= 1
            raise EngineUnavailable("the engine stopped for a moment")
        words = []
        x = 20.0
        for token in ("Page", f"P{number:04d}", "of", "the", "bundle"):
            w = 12.0 * len(token)
            words.append(Word(token, 95.0, Box(x, 200, x + w, 220), (x, 216), w, 16.0, 0.0, 0))
            x += w + 10
        return OcrResult(tuple(words), 95.0, 4, 4)

    def detect_orientation(self, image: Image.Image, *, dpi: float) -> tuple[int, float] | None:
        return None


@pytest.fixture(params=["sqlite", "postgresql"])
def split_services(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock
) -> Iterator[Services]:
    url = request.getfixturevalue("pg_url") if request.param == "postgresql" else ""
    settings = Settings(
        data_dir=tmp_path / "data",
        scratch_dir=tmp_path / "scratch",
        database_url=url,
        split_pages=SPLIT,
    )
    settings.scratch_dir.mkdir()
    svc = open_services(settings)
    svc.clock = clock
    yield svc
    if url:
        svc.store.db.close_listener()
    svc.store.db.engine.dispose()


Api = tuple[TestClient, dict[str, str]]


@pytest.fixture
def api(split_services: Services) -> Api:
    key = split_services.store.tenancy.create_key("acme", now=split_services.clock())
    client = TestClient(create_app(split_services), client=("127.0.0.1", 50000))
    return client, {"Authorization": f"Bearer {key}"}


def submit(api: Api, data: bytes) -> str:
    client, headers = api
    done = client.post(
        "/v1/jobs", headers=headers, files={"file": ("x.pdf", io.BytesIO(data))}, data={}
    )
    assert done.status_code == 202, done.text
    return str(done.json()["id"])


def task_count(services: Services) -> int:
    with services.store.db.tx(read_only=True) as conn:
        return int(conn.execute(select(func.count()).select_from(tasks)).scalar() or 0)


def blobs(services: Services, prefix: str = "") -> list[str]:
    return sorted(key for key, _ in services.blobs.list(prefix))


def interleave(*runners: JobRunner) -> int:
    """Each runner takes one thing in turn until none finds anything; returns the steps."""
    steps = 0
    while True:
        took = [r.run_next((Lane.BULK,)) is not None for r in runners]
        steps += sum(took)
        if not any(took):
            return steps


def test_ranges_are_cut_even_and_only_past_the_split_size() -> None:
    assert page_ranges(50, 50) == []
    assert page_ranges(400, 0) == []
    assert page_ranges(120, 20) == [(i, i + 10) for i in range(0, 120, 10)]
    cut = page_ranges(401, 50)
    assert cut[0][0] == 0 and cut[-1][1] == 401
    assert all(a[1] == b[0] for a, b in pairwise(cut))
    assert {end - first for first, end in cut} <= {23, 24, 25}


def test_two_workers_share_a_big_document_and_publish_one_artifact_in_page_order(
    api: Api, split_services: Services, tmp_path: Path
) -> None:
    services = split_services
    client, headers = api
    job_id = submit(api, big_pdf(tmp_path / "big.pdf"))
    one, two = PageEngine(), PageEngine()
    first, second = JobRunner(services, one, "w1"), JobRunner(services, two, "w2")
    assert first.run_next((Lane.BULK,)) is not None  # inspects and splits
    assert task_count(services) == 12
    listed = client.get("/v1/jobs", headers=headers).json()
    assert [j["id"] for j in listed["jobs"]] == [job_id]  # the tasks are not jobs
    status = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (status["state"], status["stage"], status["attempts"]) == ("running", "split", 1)
    interleave(second, first)
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert job["state"] == "complete", job
    assert job["attempts"] == 1 and job["pages"] == PAGES
    # the job's process time is every range's (admission measures seconds per page from it)
    assert job["timings"]["process"] >= job["timings"]["ocr"] > 0
    # the work was spread: each runner read pages, every page exactly once
    assert one.reads and two.reads
    assert one.reads + two.reads == Counter(range(PAGES))
    artifacts = blobs(services, "artifacts")
    assert len(artifacts) == 1
    out = tmp_path / "out.pdf"
    with services.blobs.open(artifacts[0]) as fh:
        out.write_bytes(fh.read())
    for n in range(PAGES):
        assert f"P{n:04d}" in output_text(out, n), n
    assert task_count(services) == 0
    assert blobs(services, "scratch") == [] and blobs(services, "sources") == []
    # one job in the job counts, complete, whatever ran its ranges
    counts = {
        sample.labels.get("state"): sample.value
        for family in text_string_to_metric_families(render_metrics(services).decode())
        for sample in family.samples
        if sample.name == "pressroom_jobs" and sample.value
    }
    assert counts == {"complete": 1}


def test_a_failed_range_is_read_again_alone(
    api: Api, split_services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    services = split_services
    client, headers = api
    job_id = submit(api, big_pdf(tmp_path / "big.pdf"))
    engine = PageEngine(fail={35: 1})  # the range 30-39 fails once, at its sixth page
    runner, other = JobRunner(services, engine, "w1"), JobRunner(services, engine, "w2")
    interleave(runner, other)
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    # every other range is done; that one waits out its backoff, the job is not retried
    assert (job["state"], job["stage"], job["attempts"]) == ("running", "split", 1)
    with services.store.db.tx(read_only=True) as conn:
        rows = conn.execute(select(tasks.c.first_page, tasks.c.state, tasks.c.reason)).all()
    assert sorted((r[0], r[1], r[2]) for r in rows if r[1] != "done") == [
        (30, "waiting", "ENGINE_UNAVAILABLE")
    ]
    clock.advance(services.retry.cap_s * 2)
    interleave(runner, other)
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert job["state"] == "complete" and job["attempts"] == 1, job
    # the wait for a range's backoff is not the job's wait in the queue
    assert job["timings"]["queue"] < services.retry.cap_s
    again = {n for n, times in engine.reads.items() if times > 1}
    assert again == set(range(30, 36))  # that range's pages up to the failure, nothing else
    assert all(engine.reads[n] == 1 for n in range(PAGES) if n not in again)
    assert task_count(services) == 0 and blobs(services, "scratch") == []


def test_a_cancel_reaches_waiting_and_running_ranges_and_leaves_no_parts(
    api: Api, split_services: Services, tmp_path: Path
) -> None:
    services = split_services
    client, headers = api
    services.settings = replace(services.settings, webhook_allow_private=True)
    job_id = submit(api, big_pdf(tmp_path / "big.pdf"))
    cancelled: list[int] = []

    def cancel_midway(number: int) -> None:
        # the tenant cancels while the third range is being read, at its fourth page
        if number == 23 and not cancelled:
            cancelled.append(number)
            answer = client.delete(f"/v1/jobs/{job_id}", headers=headers)
            assert answer.status_code == 200, answer.text

    engine = PageEngine(on_read=cancel_midway)
    runner = JobRunner(services, engine, "w1")
    for _ in range(3):  # split, then two ranges done (their parts stored)
        assert runner.run_next((Lane.BULK,)) is not None
    assert len(blobs(services, "scratch")) == 4  # two parts, each with its page record
    assert runner.run_next((Lane.BULK,)) is not None  # the third range, cancelled inside
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["reason"]) == ("rejected", "CANCELLED")
    # the running range stopped at the next page boundary: 23 was read, 24 never was
    assert engine.reads[23] == 1 and engine.reads[24] == 0
    assert task_count(services) == 0
    assert blobs(services) == []  # no source, no parts, no artifact
    assert runner.run_next((Lane.BULK,)) is None  # nothing left for anyone
    assert max(engine.reads) == 23


def test_a_cancel_while_every_range_waits_ends_the_job_at_once(
    api: Api, split_services: Services, tmp_path: Path
) -> None:
    services = split_services
    client, headers = api
    job_id = submit(api, big_pdf(tmp_path / "big.pdf", pages=SPLIT + 1))
    engine = PageEngine()
    runner = JobRunner(services, engine, "w1")
    assert runner.run_next((Lane.BULK,)) is not None
    assert task_count(services) == 3
    answer = client.delete(f"/v1/jobs/{job_id}", headers=headers)
    assert answer.status_code == 200 and answer.json()["reason"] == "CANCELLED"
    assert task_count(services) == 0 and blobs(services) == []
    assert runner.run_next((Lane.BULK,)) is None and not engine.reads


def test_a_redaction_is_read_whole(api: Api, split_services: Services, tmp_path: Path) -> None:
    """Its leak checks and re-detection read the whole document: it is never split."""
    services = split_services
    client, headers = api
    data = big_pdf(tmp_path / "big.pdf", pages=SPLIT + 2)
    done = client.post(
        "/v1/jobs",
        headers=headers,
        files={"file": ("x.pdf", io.BytesIO(data))},
        data={"redact": "account-number"},
    )
    assert done.status_code == 202, done.text
    runner = JobRunner(services, PageEngine(), "w1")
    assert runner.run_next((Lane.BULK,)) is not None
    assert task_count(services) == 0
    job = client.get(f"/v1/jobs/{done.json()['id']}", headers=headers).json()
    assert job["stage"] != "split" and job["state"] != "running"


def test_a_range_whose_worker_died_is_read_again_and_the_job_keeps_its_attempt(
    api: Api, split_services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    services = split_services
    client, headers = api
    job_id = submit(api, big_pdf(tmp_path / "big.pdf", pages=SPLIT + 10))
    engine = PageEngine()
    runner = JobRunner(services, engine, "w1")
    assert runner.run_next((Lane.BULK,)) is not None
    # a worker takes the first range and dies (SIGKILL): its lease lapses
    claimed = services.store.tasks.claim(
        (Lane.BULK,), "dead", now=clock(), lease_s=services.settings.lease_s
    )
    assert claimed is not None and claimed[0].first_page == 0
    interleave(runner)
    assert client.get(f"/v1/jobs/{job_id}", headers=headers).json()["state"] == "running"
    clock.advance(services.settings.lease_s + 1)
    assert services.store.queue.rescue_expired(now=clock(), policy=services.retry) == 0
    assert services.store.tasks.rescue_expired(now=clock(), policy=services.retry) == 1
    clock.advance(services.retry.cap_s * 2)
    interleave(runner)
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["attempts"], job["pages"]) == ("complete", 1, SPLIT + 10)
    assert engine.reads == Counter(range(SPLIT + 10))  # every page read once, by this worker


def test_housekeeping_keeps_a_running_jobs_parts_and_sweeps_stray_ones(
    api: Api, split_services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    services = split_services
    submit(api, big_pdf(tmp_path / "big.pdf", pages=SPLIT + 2))
    runner = JobRunner(services, PageEngine(), "w1")
    for _ in range(2):  # split, one range done
        assert runner.run_next((Lane.BULK,)) is not None
    kept = blobs(services, "scratch")
    assert len(kept) == 2
    stray = tmp_path / "stray.pdf"
    stray.write_bytes(b"%PDF-1.7 stray")
    gone = "scratch/acme/00000000-0000-4000-8000-000000000000/parts/0000.pdf"
    services.blobs.put_file(gone, stray)
    clock.advance(2 * 3600)
    housekeeping(
        services.store.retention,
        services.blobs,
        clock=clock,
        retention_s=services.settings.retention_s,
        review_retention_s=services.settings.review_retention_s,
    )
    assert blobs(services, "scratch") == kept


def test_a_split_output_reads_as_the_whole_documents_output_with_its_cover(
    api: Api, split_services: Services, tmp_path: Path
) -> None:
    """The same file read whole and read in ranges: the same pages, cover first, the same
    bands and numbers, text and metadata."""
    services = split_services
    client, headers = api
    data = big_pdf(tmp_path / "big.pdf", pages=SPLIT + 10)
    outputs = []
    for split in (0, SPLIT):
        services.settings = replace(services.settings, split_pages=split)
        done = client.post(
            "/v1/jobs",
            headers=headers,
            files={"file": ("x.pdf", io.BytesIO(data))},
            data={"template": "sample", "title": "Bundle"},
        )
        assert done.status_code == 202, done.text
        runner = JobRunner(services, PageEngine(), "w1")
        steps = interleave(runner)
        assert steps == (1 if split == 0 else 1 + 3)  # whole: one run; split: the job, 3 ranges
        job = client.get(f"/v1/jobs/{done.json()['id']}", headers=headers).json()
        assert job["state"] == "complete", job
        out = tmp_path / f"out-{split}.pdf"
        with services.blobs.open(_artifact(job["id"], services)) as fh:
            out.write_bytes(fh.read())
        outputs.append(out)
    whole, split_out = outputs
    with pikepdf.open(whole) as a, pikepdf.open(split_out) as b:
        assert len(a.pages) == len(b.pages) == SPLIT + 11  # the cover, then every page
        assert str(a.docinfo.Title) == str(b.docinfo.Title) == "Bundle"
        assert str(a.docinfo.Producer) == str(b.docinfo.Producer)
        assert [p.mediabox for p in a.pages] == [p.mediabox for p in b.pages]
    assert "30 pages" in output_text(split_out, 0)
    for n in range(SPLIT + 11):
        assert output_text(whole, n) == output_text(split_out, n), n
    assert f"Page 30 of {SPLIT + 10}" in output_text(split_out, SPLIT + 10)


def _artifact(job_id: str, services: Services) -> str:
    (key,) = blobs(services, f"artifacts/acme/{job_id}")
    return key


def test_ranges_across_workers_on_postgresql_and_s3_plain_and_encrypted(
    scaled: Services,  # noqa: F811  (the fixture imported above)
    tmp_path: Path,
) -> None:
    """The parts travel through the shared object store (encrypted at rest when it is)."""
    services = dataclasses.replace(scaled, settings=replace(scaled.settings, split_pages=SPLIT))
    key = services.store.tenancy.create_key("acme", now=services.clock())
    api = (TestClient(create_app(services)), {"Authorization": f"Bearer {key}"})
    job_id = submit(api, big_pdf(tmp_path / "big.pdf", pages=SPLIT + 10))
    one, two = PageEngine(), PageEngine()
    interleave(JobRunner(services, one, "w1"), JobRunner(services, two, "w2"))
    job = api[0].get(f"/v1/jobs/{job_id}", headers=api[1]).json()
    assert job["state"] == "complete" and job["pages"] == SPLIT + 10, job
    assert one.reads and two.reads and one.reads + two.reads == Counter(range(SPLIT + 10))
    assert blobs(services, "scratch") == [] and len(blobs(services, "artifacts")) == 1


def test_a_multipage_tiff_is_split_too(api: Api, split_services: Services, tmp_path: Path) -> None:
    """Its ranges of 33 frames are written out in parts of 32 pages on the way, as a whole
    image source's pages are."""
    services = split_services
    services.settings = replace(services.settings, split_pages=90)
    client, headers = api
    frames = [_page(n) for n in range(100)]
    tiff = tmp_path / "big.tiff"
    frames[0].save(tiff, save_all=True, append_images=frames[1:], dpi=(100, 100))
    job_id = submit(api, tiff.read_bytes())
    one, two = PageEngine(), PageEngine()
    interleave(JobRunner(services, one, "w1"), JobRunner(services, two, "w2"))
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert job["state"] == "complete", job
    assert one.reads and two.reads and one.reads + two.reads == Counter(range(100))
    out = tmp_path / "out.pdf"
    with services.blobs.open(_artifact(job_id, services)) as fh:
        out.write_bytes(fh.read())
    for n in range(100):
        assert f"P{n:04d}" in output_text(out, n), n


def test_the_jobs_deadline_reaches_its_ranges(
    api: Api, split_services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    services = split_services
    client, headers = api
    done = client.post(
        "/v1/jobs",
        headers=headers,
        files={"file": ("x.pdf", io.BytesIO(big_pdf(tmp_path / "big.pdf", pages=SPLIT + 10)))},
        data={"deadline": "600"},
    )
    assert done.status_code == 202, done.text
    engine = PageEngine()
    runner = JobRunner(services, engine, "w1")
    for _ in range(2):  # split, one range done
        assert runner.run_next((Lane.BULK,)) is not None
    clock.advance(601)
    interleave(runner)
    job = client.get(f"/v1/jobs/{done.json()['id']}", headers=headers).json()
    assert (job["state"], job["reason"]) == ("rejected", "DEADLINE_EXCEEDED")
    assert set(engine.reads) == set(range(10))  # no page of a later range was read
    assert task_count(services) == 0 and blobs(services, "scratch") == []
