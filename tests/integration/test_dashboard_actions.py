"""The dashboard an operator acts from: labels beside job ids, a worker list (host, pid, lanes,
heartbeat, the job and stage it holds), and a dead letter's Redrive button, which an operator's
desk session confirms with its CSRF token — nobody else's session, no session, no token."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.jobs.model import JobState, Lane
from pressroom.service import Services
from pressroom.worker.lease import Heartbeat
from tests.conftest import FakeClock
from tests.integration.test_desk_web import _sign_in, _token
from tests.integration.test_service import png_bytes, post, work

pytestmark = pytest.mark.integration


def _dead_letter(client: TestClient, headers: dict[str, str], services: Services, tmp: Path) -> str:
    """A job dead-lettered for a cause an operator can fix (its customer was suspended)."""
    services.store.tenancy.set_customer("acme", "late", status="suspended", now=0)
    sent = post(client, headers, png_bytes(tmp), customer="late", label="Payout forms 12")
    job_id = str(sent.json()["id"])
    work(services)
    job = services.store.queue.get(job_id)
    assert job is not None and job.state is JobState.REJECTED
    services.store.tenancy.set_customer("acme", "late", status="active", now=0)
    return job_id


def _client(services: Services) -> TestClient:
    return TestClient(create_app(services), client=("127.0.0.1", 50000))


def test_a_dead_letter_is_redriven_from_the_dashboard_by_an_operators_session_only(
    services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    api = _client(services)
    tenant_key = services.store.tenancy.create_key("acme", now=0)
    job_id = _dead_letter(api, {"Authorization": f"Bearer {tenant_key}"}, services, tmp_path)
    action = f"/review/jobs/{job_id}/redrive"

    # the dashboard (loopback, no key) names the job with its label and offers the button
    board = api.get("/dashboard")
    assert board.status_code == 200
    assert "Payout forms 12" in board.text and f'href="{action}"' in board.text

    # no session: to the sign-in page; a tenant's or a reviewer's session: refused, before
    # the id is looked up (a made-up id gets the same answer)
    anon = _client(services)
    assert anon.get(action, follow_redirects=False).headers["location"] == "/review"
    for role in ("tenant", "reviewer"):
        someone = _client(services)
        _sign_in(someone, services.store.tenancy.create_key("acme", now=0, role=role))
        for path in (action, "/review/jobs/made-up/redrive"):
            page = someone.get(path)
            assert page.status_code == 403 and "FORBIDDEN" in page.text, (role, path)
        token = _token(someone.get("/review").text)
        sent = someone.post(action, data={"csrf_token": token})
        assert sent.status_code == 403
    assert services.store.queue.get(job_id).state is JobState.REJECTED  # type: ignore[union-attr]

    # an operator's session: the confirmation names the job, its label, its reason
    op = _client(services)
    _sign_in(op, services.store.tenancy.create_key("ops", now=0, role="operator"))
    page = op.get(action)
    assert page.status_code == 200
    assert "Payout forms 12" in page.text and "UNAUTHORIZED_CUSTOMER" in page.text
    assert op.get("/review/jobs/made-up/redrive").status_code == 404
    # the form without the session's token does nothing
    forged = op.post(action, data={"csrf_token": "forged"})
    assert forged.status_code == 403
    assert services.store.queue.get(job_id).state is JobState.REJECTED  # type: ignore[union-attr]
    done = op.post(action, data={"csrf_token": _token(page.text)}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == "/review/done"
    assert "redriven" in op.get("/review/done").text
    again = services.store.queue.get(job_id)
    assert again is not None and again.state is JobState.ACCEPTED and again.attempts == 0
    # no longer a dead letter: nothing to redrive; and once it runs, it completes
    assert op.post(action, data={"csrf_token": _token(page.text)}).status_code == 404
    work(services)
    assert services.store.queue.get(job_id).state is JobState.COMPLETE  # type: ignore[union-attr]


def test_the_worker_list_shows_host_pid_lanes_heartbeat_and_the_job_and_stage_held(
    services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    api = _client(services)
    key = services.store.tenancy.create_key("acme", now=0)
    job_id = str(post(api, {"Authorization": f"Bearer {key}"}, png_bytes(tmp_path)).json()["id"])
    stats, queue = services.store.stats, services.store.queue
    busy, idle, gone = "scan-host-1:4242:a1b2c3", "scan-host-2:77:d4e5f6", "old-host:9:aaaaaa"
    stats.worker_seen(gone, ("bulk",), now=clock() - 3600)  # not heard from for an hour
    stats.worker_seen(busy, ("bulk", "interactive"), now=clock())
    stats.worker_seen(idle, ("interactive",), now=clock() - 45)
    claimed = queue.claim((Lane.BULK, Lane.INTERACTIVE), busy, now=clock(), lease_s=30)
    assert claimed is not None and claimed.id == job_id
    assert queue.set_stage(job_id, busy, "ocr", now=clock())

    board = api.get("/dashboard").text
    section = board.split('id="workers"')[1].split("</section>")[0]
    rows = re.findall(r"<tr><td>(.*?)</tr>", section, re.S)
    assert len(rows) == 2, section  # the one an hour gone is not listed
    first, second = rows
    assert "scan-host-1" in first and "<td>4242</td>" in first and "bulk, interactive" in first
    assert job_id in first and "<td>ocr</td>" in first and "0 s ago" in first
    assert "scan-host-2" in second and "idle" in second and "45 s ago" in second
    assert 'class="stale"' in second and 'class="stale"' not in first


def test_a_worker_busy_with_a_long_job_stays_counted(
    services: Services, tmp_path: Path, clock: FakeClock
) -> None:
    """Admission divides the work ahead by the workers heard from in the last 30 s; the row
    was refreshed only between jobs, so a job longer than that made its worker vanish. The
    lease heartbeat now refreshes it too."""
    api = _client(services)
    key = services.store.tenancy.create_key("acme", now=0)
    job_id = str(post(api, {"Authorization": f"Bearer {key}"}, png_bytes(tmp_path)).json()["id"])
    owner = "host:1:abcdef"
    services.store.stats.worker_seen(owner, ("bulk",), now=clock())
    assert services.store.queue.claim((Lane.BULK,), owner, now=clock(), lease_s=30) is not None
    clock.advance(120)  # two minutes into the job
    assert services.store.stats.live_workers(now=clock()).get("bulk", 0) == 0
    # one beat of the job's heartbeat, as its thread gives every lease_s / 3
    assert Heartbeat(services, job_id, owner).beat()
    assert services.store.stats.live_workers(now=clock()) == {"bulk": 1}
