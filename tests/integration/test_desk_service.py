"""The desk over the service's store: what a tenant's reviewer and an operator see, and Apply
sending a held job back through a worker to review again, recorded."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.corrections import Area, Corrections
from pressroom.deskport import Viewer
from pressroom.deskstore import ServiceDesk
from pressroom.errors import Conflict, NotFound
from pressroom.jobs.model import JobState, Lane
from pressroom.models import OcrResult
from pressroom.service import Services
from pressroom.testing import FakeOcrEngine
from pressroom.worker.lease import ProgressWriter
from tests.integration.test_decisions import LEAKY, held_job
from tests.integration.test_service import png_bytes, post, work

pytestmark = pytest.mark.integration


@pytest.fixture
def two_tenants(services: Services) -> dict[str, Any]:
    now = services.clock()
    acme_id, acme = services.store.tenancy.new_key("acme", now=now)
    _, other = services.store.tenancy.new_key("other", now=now)
    client = TestClient(create_app(services), client=("127.0.0.1", 50000))
    return {
        "client": client,
        "acme": {"Authorization": f"Bearer {acme}"},
        "other": {"Authorization": f"Bearer {other}"},
        "acme_viewer": Viewer("acme", acme_id, "tenant"),
    }


def test_a_tenant_sees_its_own_held_jobs_and_an_operator_sees_every_tenants(
    two_tenants: dict[str, Any], services: Services, tmp_path: Path
) -> None:
    client = two_tenants["client"]
    mine = held_job(client, two_tenants["acme"], services, tmp_path)
    theirs = held_job(client, two_tenants["other"], services, tmp_path)
    desk = ServiceDesk(services)
    viewer = two_tenants["acme_viewer"]
    [item] = desk.held(viewer)
    assert (item.id, item.tenant, item.state) == (mine, "acme", "review")
    assert item.reason_code == "REDACTION_LEAK"
    assert item.held_since is not None and item.deadline is not None
    assert item.deadline - item.held_since == services.settings.review_retention_s
    with pytest.raises(NotFound):
        desk.detail(viewer, theirs)
    with pytest.raises(NotFound):
        desk.page_image(viewer, theirs, 1, "source", 400)
    with pytest.raises(NotFound):
        desk.approve(viewer, theirs)
    operator = Viewer(None, "k_operator", "operator")
    assert {i.id for i in desk.held(operator)} == {mine, theirs}
    assert desk.detail(operator, theirs).item.tenant == "other"


def test_apply_sends_the_job_to_a_worker_on_the_interactive_lane_and_back_to_review(
    two_tenants: dict[str, Any], services: Services, tmp_path: Path
) -> None:
    client, headers = two_tenants["client"], two_tenants["acme"]
    viewer = two_tenants["acme_viewer"]
    job_id = held_job(client, headers, services, tmp_path)
    before = services.store.queue.get(job_id)
    assert before is not None and before.artifact_key
    desk = ServiceDesk(services)
    corrections = Corrections(manual=(Area(1, (10.0, 10.0, 60.0, 30.0)),))
    desk.apply(viewer, job_id, corrections)
    job = services.store.queue.get(job_id)
    assert job is not None
    assert (job.state, job.lane) == (JobState.ACCEPTED, Lane.INTERACTIVE)
    assert job.order.to_json()["corrections"] == corrections.as_json()
    # the rest of the job as it was
    assert job.order.to_json()["redact"] == before.order.to_json()["redact"]
    assert not services.blobs.exists(before.artifact_key)  # the old held copy went
    shown = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert [(d["action"], d["key_id"]) for d in shown["decisions"]] == [("apply", viewer.key_id)]
    # a job being rebuilt is not decided meanwhile, nor applied again: refused, said why
    # (never a 404, never lost), and its pages are not shown
    item = desk.detail(viewer, job_id).item
    assert (item.state, item.progress, item.rebuilt_at) == ("rebuilding", None, None)
    for decide in (
        lambda: desk.approve(viewer, job_id),
        lambda: desk.reject(viewer, job_id),
        lambda: desk.apply(viewer, job_id, Corrections()),
    ):
        with pytest.raises(Conflict, match="a rebuild with corrections is running"):
            decide()
    with pytest.raises(NotFound):
        desk.page_image(viewer, job_id, 1, "redacted", 400)
    assert services.store.queue.get(job_id).order.to_json()["corrections"] == corrections.as_json()  # type: ignore[union-attr]
    work(services, LEAKY)
    # the fake engine reads the account number on every page it is shown: held again
    again = services.store.queue.get(job_id)
    assert again is not None and again.state is JobState.REVIEW
    assert again.reason == "REDACTION_LEAK" and again.artifact_key
    assert again.artifact_key != before.artifact_key or services.blobs.exists(again.artifact_key)
    assert desk.held(viewer)[0].state == "review"
    # the page can say the copy held now is the rebuild's: held after the Apply
    rebuilt = desk.detail(viewer, job_id).item
    assert rebuilt.rebuilt_at == again.finished_at and rebuilt.progress is None
    assert rebuilt.apply_failed is None


def test_apply_is_refused_for_a_job_that_is_not_a_redaction_or_not_held(
    two_tenants: dict[str, Any], services: Services, tmp_path: Path
) -> None:
    client, headers = two_tenants["client"], two_tenants["acme"]
    viewer = two_tenants["acme_viewer"]
    desk = ServiceDesk(services)
    plain = str(post(client, headers, png_bytes(tmp_path)).json()["id"])
    with pytest.raises(NotFound):
        desk.apply(viewer, plain, Corrections())  # accepted, not held
    work(services)
    with pytest.raises(NotFound):
        desk.apply(viewer, plain, Corrections())  # complete
    job_id = held_job(client, headers, services, tmp_path)
    services.store.queue.delete_source_key(job_id)
    with pytest.raises(Conflict):
        desk.apply(viewer, job_id, Corrections())
    assert not desk.detail(viewer, job_id).can_apply


def test_review_always_holds_a_checked_redaction_for_a_person_and_only_a_redaction(
    two_tenants: dict[str, Any], services: Services, tmp_path: Path
) -> None:
    client, headers = two_tenants["client"], two_tenants["acme"]
    viewer = two_tenants["acme_viewer"]
    refused = post(client, headers, png_bytes(tmp_path), review="always")
    assert refused.status_code == 400 and "redaction policy" in refused.json()["detail"]
    sent = post(client, headers, png_bytes(tmp_path), redact="account-number", review="always")
    job_id = str(sent.json()["id"])
    work(services)  # the default fake engine reads no account number: every check passes
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert (job["state"], job["reason"]) == ("review", "REVIEW_REQUESTED")
    approved = ServiceDesk(services).approve(viewer, job_id)
    assert approved.link is not None and f"/v1/artifacts/{job_id}?" in approved.link
    done = client.get(approved.link)
    assert done.status_code == 200 and done.content.startswith(b"%PDF")
    # the same request without it completes on its own
    plain = str(post(client, headers, png_bytes(tmp_path), redact="account-number").json()["id"])
    work(services)
    assert client.get(f"/v1/jobs/{plain}", headers=headers).json()["state"] == "complete"


TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def _signed_in(services: Services, key: str) -> tuple[TestClient, str]:
    """A browser-like client signed in at the service's own desk (no test backend): the
    session's CSRF token with it."""
    browser = TestClient(create_app(services), client=("127.0.0.1", 50001))
    found = TOKEN.search(browser.get("/review").text)
    assert found is not None
    done = browser.post(
        "/review/sign-in", data={"key": key, "csrf_token": found.group(1)}, follow_redirects=False
    )
    assert done.status_code == 303
    page = TOKEN.search(browser.get("/review").text)
    assert page is not None
    return browser, page.group(1)


def test_the_service_desk_keeps_tenants_apart_and_every_change_needs_the_token(
    two_tenants: dict[str, Any], services: Services, tmp_path: Path
) -> None:
    client, headers = two_tenants["client"], two_tenants["acme"]
    job_id = held_job(client, headers, services, tmp_path)
    other = two_tenants["other"]["Authorization"].removeprefix("Bearer ")
    mine = headers["Authorization"].removeprefix("Bearer ")

    theirs, token = _signed_in(services, other)
    assert job_id not in theirs.get("/review").text
    assert theirs.get(f"/review/jobs/{job_id}").status_code == 404
    assert theirs.get(f"/review/jobs/{job_id}/pages/1/source.png").status_code == 404
    for action in ("approve", "reject", "apply"):
        # each form with its own fields (a field a form does not send is refused 400 first)
        fields = {"corrections": "{}"} if action == "apply" else {}
        refused = theirs.post(
            f"/review/jobs/{job_id}/{action}",
            data={"csrf_token": token, **fields},
            follow_redirects=False,
        )
        assert refused.status_code == 404, action

    browser, token = _signed_in(services, mine)
    assert browser.get(f"/review/jobs/{job_id}").status_code == 200
    png = browser.get(f"/review/jobs/{job_id}/pages/1/source.png?w=300")
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    for action in ("approve", "reject", "apply"):
        refused = browser.post(f"/review/jobs/{job_id}/{action}", data={"corrections": "{}"})
        assert (refused.status_code, refused.json()["code"]) == (403, "CSRF_REJECTED")
    job = services.store.queue.get(job_id)
    assert job is not None and job.state is JobState.REVIEW and job.decisions == ()

    # the key is revoked: its session ends at the next request
    key_id = two_tenants["acme_viewer"].key_id
    assert services.store.tenancy.revoke_key(key_id, now=services.clock())
    assert 'name="key"' in browser.get("/review").text  # the sign-in form again
    late = browser.post(f"/review/jobs/{job_id}/approve", data={"csrf_token": token})
    assert late.status_code == 401
    job = services.store.queue.get(job_id)
    assert job is not None and job.state is JobState.REVIEW


class _Watching(FakeOcrEngine):
    """The leaky fake engine, looking at the desk each time it reads a page: what a reviewer
    would see at that moment of the worker's rebuild."""

    def __init__(self, look: Callable[[], object]) -> None:
        super().__init__(lines=LEAKY.lines)
        self.look = look
        self.seen: list[object] = []

    def recognize(self, image: Any, **kw: Any) -> OcrResult:
        self.seen.append(self.look())
        return super().recognize(image, **kw)


def test_the_workers_rebuild_shows_its_progress_at_the_desk(
    two_tenants: dict[str, Any], services: Services, tmp_path: Path
) -> None:
    """The worker writes how far the rebuild got onto the job; the desk reads it while the
    job runs (the page read and built, before the copy is read back), and none once held."""
    client, headers = two_tenants["client"], two_tenants["acme"]
    viewer = two_tenants["acme_viewer"]
    job_id = held_job(client, headers, services, tmp_path)
    desk = ServiceDesk(services)
    desk.apply(viewer, job_id, Corrections(manual=(Area(1, (10.0, 10.0, 60.0, 30.0)),)))

    def look() -> object:
        item = desk.detail(viewer, job_id).item
        return (item.state, item.progress, item.rebuild_step)

    engine = _Watching(look)
    work(services, engine)
    assert engine.seen[0] == ("rebuilding", None, None)  # the first page, not read yet
    # one page: two steps (read, then built); the built copy is read back after both
    assert ("rebuilding", (2, 2), ("building", 1, 1)) in engine.seen
    again = desk.detail(viewer, job_id).item
    assert (again.state, again.progress) == ("review", None)
    job = services.store.queue.get(job_id)
    assert job is not None and job.progress is None  # cleared when it was held


def test_progress_is_written_at_most_once_a_second_and_the_last_step_always() -> None:
    written: list[tuple[int, int]] = []

    class Queue:
        def set_progress(self, job_id: str, owner: str, done: int, total: int) -> bool:
            written.append((done, total))
            return True

    now = [100.0]
    progress = ProgressWriter(Queue(), "j", "w", clock=lambda: now[0])  # type: ignore[arg-type]
    for step, at in ((1, 100.0), (2, 100.4), (3, 100.9), (4, 101.1), (5, 101.2), (6, 101.3)):
        now[0] = at
        progress(step, 6)
    assert written == [(1, 6), (4, 6), (6, 6)]


def test_a_second_apply_at_the_service_desk_is_409_and_the_first_stands(
    two_tenants: dict[str, Any], services: Services, tmp_path: Path
) -> None:
    client, headers = two_tenants["client"], two_tenants["acme"]
    job_id = held_job(client, headers, services, tmp_path)
    browser, token = _signed_in(services, headers["Authorization"].removeprefix("Bearer "))
    first = '{"manual": [{"page": 1, "box": [10, 10, 60, 30]}]}'
    sent = browser.post(
        f"/review/jobs/{job_id}/apply",
        data={"csrf_token": token, "corrections": first},
        follow_redirects=False,
    )
    assert sent.status_code == 303
    page = browser.get(f"/review/jobs/{job_id}")
    assert page.status_code == 200 and "rebuilding" in page.text
    again = browser.post(
        f"/review/jobs/{job_id}/apply",
        data={"csrf_token": token, "corrections": "{}"},
        follow_redirects=False,
    )
    assert again.status_code == 409, again.text
    assert again.json()["code"] == "CONFLICT"
    assert "a rebuild with corrections is running" in again.json()["detail"]
    # the JSON route a client sends corrections to says the same
    api = client.post(f"/v1/jobs/{job_id}/corrections", headers=headers, json={"manual": []})
    assert api.status_code == 409 and api.json()["code"] == "CONFLICT"
    job = services.store.queue.get(job_id)
    assert job is not None and job.order.to_json()["corrections"]["manual"]  # the first one's, kept
    assert [d.action for d in job.decisions] == ["apply"]
