"""Cancel and early delete over HTTP, with a real JobRunner: a waiting job ends at once, a
running one before its next page or stage, a held one with its held copy; what ended otherwise is
a conflict; a finished job's output can go before its retention ends."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from PIL import Image
from prometheus_client.parser import text_string_to_metric_families

from pressroom.api.metrics import render_metrics
from pressroom.app import create_app
from pressroom.jobs.model import JobState
from pressroom.service import Services
from pressroom.testing import FakeOcrEngine
from tests.conftest import FakeClock
from tests.integration.test_service import png_bytes, post, work

Api = tuple[TestClient, dict[str, str]]
HOOK = "http://127.0.0.1:9/hook"  # never called here: the outbox row is what is checked


@pytest.fixture
def api(services: Services) -> Api:
    key = services.store.tenancy.create_key("acme", now=services.clock())
    return TestClient(create_app(services)), {"Authorization": f"Bearer {key}"}


def _hooked(services: Services) -> None:
    services.settings = replace(services.settings, webhook_allow_private=True)


def _events(services: Services, job_id: str) -> list[str]:
    return [str(d["event"]) for d in services.store.outbox.deliveries(job_id)]


def _blobs(services: Services) -> list[str]:
    return [key for key, _ in services.blobs.list("")]


def test_a_waiting_job_is_cancelled_at_once_and_never_runs(
    api: Api, services: Services, tmp_path: Path
) -> None:
    client, headers = api
    _hooked(services)
    job_id = post(client, headers, png_bytes(tmp_path), webhook_url=HOOK).json()["id"]
    assert _blobs(services)  # the source, waiting for a worker
    gone = client.delete(f"/v1/jobs/{job_id}", headers=headers)
    assert gone.status_code == 200, gone.text
    body = gone.json()
    assert (body["state"], body["reason"]) == ("rejected", "CANCELLED")
    assert _blobs(services) == []  # the source is deleted
    assert _events(services, job_id) == ["job.rejected"]
    engine = FakeOcrEngine()
    work(services, engine)
    assert engine.calls == []  # no worker ever took it
    # a repeated cancel answers the job as it is, once more 200, with no second webhook
    again = client.delete(f"/v1/jobs/{job_id}", headers=headers)
    assert again.status_code == 200 and again.json()["reason"] == "CANCELLED"
    assert _events(services, job_id) == ["job.rejected"]
    # a cancelled job cannot be redriven: its source is gone
    assert services.store.queue.redrive(job_id, now=services.clock()) is False
    # counted once, as a cancel (not a dead letter), however often it was asked for
    exported = {
        (sample.name, sample.labels.get("lane"), sample.labels.get("reason")): sample.value
        for family in text_string_to_metric_families(render_metrics(services).decode())
        for sample in family.samples
    }
    lane = body["lane"]
    assert exported[("pressroom_cancellations_total", lane, None)] == 1
    assert all(
        n == 0 for (name, _l, _r), n in exported.items() if name == "pressroom_dead_letters_total"
    )


@dataclass
class CancellingEngine(FakeOcrEngine):
    """Reads like the fake, and the first time it reads, its tenant cancels the job: the
    cancel arrives while the job is running, inside the ``process`` stage."""

    cancel: Any = None
    answers: list[int] = field(default_factory=list)

    def recognize(self, image: Image.Image, **kw: Any) -> Any:
        if self.cancel is not None and not self.answers:
            self.answers.extend([self.cancel(), self.cancel()])  # asked twice
        return super().recognize(image, **kw)


def test_a_running_job_stops_at_its_next_stage_boundary(
    api: Api, services: Services, tmp_path: Path
) -> None:
    client, headers = api
    _hooked(services)
    job_id = post(client, headers, png_bytes(tmp_path), webhook_url=HOOK).json()["id"]

    def cancel() -> tuple[int, str]:
        answer = client.delete(f"/v1/jobs/{job_id}", headers=headers)
        return answer.status_code, answer.json()["state"]

    engine = CancellingEngine(cancel=cancel)
    work(services, engine)
    # accepted while running; asked again, the job as it is now (still stopping)
    assert engine.answers == [(202, "running"), (200, "running")]
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["reason"], job["artifact_url"]) == ("rejected", "CANCELLED", None)
    assert job["attempts"] == 1  # not retried
    # nothing published, the source deleted, the scratch cleaned, one webhook
    assert _blobs(services) == []
    assert list(services.settings.scratch_dir.iterdir()) == []
    assert _events(services, job_id) == ["job.rejected"]
    assert client.delete(f"/v1/jobs/{job_id}", headers=headers).status_code == 200


def test_a_held_job_can_be_cancelled_and_its_held_copy_goes(
    api: Api, services: Services, tmp_path: Path
) -> None:
    client, headers = api
    job_id = post(client, headers, png_bytes(tmp_path), redact="account-number").json()["id"]
    work(services, FakeOcrEngine(lines=("Account number: 12345678", "Ordinary words stay.")))
    assert client.get(f"/v1/jobs/{job_id}", headers=headers).json()["state"] == "review"
    assert list(services.blobs.list("review"))
    gone = client.delete(f"/v1/jobs/{job_id}", headers=headers)
    assert gone.status_code == 200
    assert (gone.json()["state"], gone.json()["reason"]) == ("rejected", "CANCELLED")
    assert _blobs(services) == []  # the held copy and the source
    assert client.get(f"/v1/jobs/{job_id}/held", headers=headers).status_code == 404
    assert client.get("/v1/review", headers=headers).json()["jobs"] == []


def test_a_finished_job_is_a_conflict_and_another_tenants_job_is_not_found(
    api: Api, services: Services, tmp_path: Path
) -> None:
    client, headers = api
    job_id = post(client, headers, png_bytes(tmp_path)).json()["id"]
    work(services)
    refused = client.delete(f"/v1/jobs/{job_id}", headers=headers)
    assert refused.status_code == 409 and refused.json()["code"] == "CONFLICT"
    assert refused.headers["content-type"] == "application/problem+json"
    assert services.store.queue.get(job_id).state is JobState.COMPLETE  # type: ignore[union-attr]
    other = services.store.tenancy.create_key("other", now=services.clock())
    stranger = {"Authorization": f"Bearer {other}"}
    assert client.delete(f"/v1/jobs/{job_id}", headers=stranger).status_code == 404
    assert client.delete(f"/v1/jobs/{job_id}/artifact", headers=stranger).status_code == 404
    assert client.delete("/v1/jobs/nope", headers=headers).status_code == 404


def test_a_finished_jobs_artifact_can_be_deleted_early(
    api: Api, services: Services, tmp_path: Path
) -> None:
    client, headers = api
    job_id = post(client, headers, png_bytes(tmp_path)).json()["id"]
    work(services)
    link = client.get(f"/v1/jobs/{job_id}", headers=headers).json()["artifact_url"]
    assert client.get(link).status_code == 200
    gone = client.delete(f"/v1/jobs/{job_id}/artifact", headers=headers)
    assert gone.status_code == 200, gone.text
    body = gone.json()
    assert (body["state"], body["artifact_url"]) == ("complete", None)
    assert list(services.blobs.list("artifacts")) == []
    # the job keeps its record; the link it gave answers 404 from now on
    assert client.get(f"/v1/jobs/{job_id}", headers=headers).json()["pages"] == body["pages"]
    late = client.get(link)
    assert late.status_code == 404 and late.json()["code"] == "NOT_FOUND"
    # without its signature the same id answers as an unknown one: no telling it existed
    unsigned = client.get(link.split("?")[0] + "?expires=9999999999&signature=00")
    unknown = client.get(f"/v1/artifacts/{uuid.uuid4()}?expires=9999999999&signature=00")
    assert unsigned.status_code == unknown.status_code == 403
    assert unsigned.json()["code"] == unknown.json()["code"] == "BAD_SIGNATURE"
    # nothing left to delete
    again = client.delete(f"/v1/jobs/{job_id}/artifact", headers=headers)
    assert again.status_code == 409 and again.json()["code"] == "CONFLICT"


def test_a_job_without_an_artifact_has_none_to_delete(
    api: Api, services: Services, tmp_path: Path
) -> None:
    client, headers = api
    job_id = post(client, headers, png_bytes(tmp_path)).json()["id"]
    refused = client.delete(f"/v1/jobs/{job_id}/artifact", headers=headers)
    assert refused.status_code == 409
    assert client.get(f"/v1/jobs/{job_id}", headers=headers).json()["state"] == "accepted"


def test_the_typed_client_submits_waits_downloads_lists_and_cancels(
    api: Api, services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    from pressroom.client import ApiError, PressroomClient

    client, headers = api
    scan = tmp_path / "scan.png"
    scan.write_bytes(png_bytes(tmp_path))
    key = headers["Authorization"].removeprefix("Bearer ")
    with PressroomClient("http://testserver", key, http=client, sleep=lambda _s: None) as remote:
        kept = remote.submit(scan, template="sample", title="Forms")
        clock.advance(1)  # created a second later: listed first
        dropped = remote.submit(scan)
        assert remote.cancel(dropped.id).reason == "CANCELLED"
        work(services)
        done = remote.wait(kept.id)
        assert done.state == "complete" and (done.pages or 0) >= 1
        out = remote.download(done, tmp_path / "out.pdf")
        assert out.read_bytes().startswith(b"%PDF")
        listed = [(j.id, j.state) for j in remote.list(page_size=1)]
        assert listed == [(dropped.id, "rejected"), (kept.id, "complete")]
        assert [j.id for j in remote.list(state="complete")] == [kept.id]
        with pytest.raises(ApiError) as caught:
            remote.cancel(kept.id)
        assert (caught.value.status, caught.value.code) == (409, "CONFLICT")
        assert remote.delete_artifact(kept.id).artifact_url is None


@dataclass
class CancelOnPage(FakeOcrEngine):
    """Tells the pages apart by their widths (page i is 400 + 20 i px wide at 100 dpi, and
    every reading of it keeps that ratio), and cancels the job the first time it reads page
    ``k`` (from 1)."""

    k: int = 3
    cancel: Any = None
    read: list[int] = field(default_factory=list)  # pages (from 1) in the order first read

    def recognize(self, image: Image.Image, **kw: Any) -> Any:
        page = _page_of(image)
        if page not in self.read:
            self.read.append(page)
            if page == self.k and self.cancel is not None:
                self.cancel()
        return super().recognize(image, **kw)


def _page_of(image: Image.Image) -> int:
    # width / height = (400 + 20 i) / 600 in any turn of the page the reader is shown
    ratio = min(image.size) / max(image.size)
    wide = ratio * 600 if ratio <= 1 else 600 / ratio
    return round((wide - 400) / 20) + 1


def _pages_tiff(path: Path, n: int) -> bytes:
    frames = []
    for i in range(n):
        page = Image.new("L", (400 + 20 * i, 600), 255)
        page.paste(0, (40, 40, 200, 60))
        frames.append(page)
    frames[0].save(path, "TIFF", save_all=True, append_images=frames[1:], dpi=(100, 100))
    return path.read_bytes()


@pytest.mark.parametrize("redact", [None, "name"])
def test_a_cancel_during_page_k_of_n_stops_before_page_k_plus_2(
    api: Api, services: Services, tmp_path: Path, redact: str | None
) -> None:
    """Every loop over pages asks between pages (pipeline.stop): the job ends within a page
    of the cancel, not after all of its OCR — on the plain path and on a redaction's."""
    client, headers = api
    _hooked(services)
    n, k = 8, 3
    form = {"webhook_url": HOOK, **({"redact": redact} if redact else {})}
    job_id = post(client, headers, _pages_tiff(tmp_path / "eight.tiff", n), **form).json()["id"]

    def cancel() -> None:
        assert client.delete(f"/v1/jobs/{job_id}", headers=headers).status_code == 202

    engine = CancelOnPage(k=k, cancel=cancel, lines=("Ordinary words on the page",))
    work(services, engine)
    assert engine.read[:k] == list(range(1, k + 1))  # read in order up to the cancel
    assert max(engine.read) <= k + 1, engine.read  # no page after k + 1 was read
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["reason"], job["attempts"]) == ("rejected", "CANCELLED", 1)
    assert _blobs(services) == []
    assert list(services.settings.scratch_dir.iterdir()) == []
    assert _events(services, job_id) == ["job.rejected"]
