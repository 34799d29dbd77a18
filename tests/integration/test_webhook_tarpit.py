"""Webhooks against hostile endpoints on real sockets, with the store on SQLite and PostgreSQL: a
tarpit is cut off at the send's deadline and never holds a worker, so the next job completes
while it is still connected; one tenant's tarpit takes at most its share of the senders; a
delivery is never sent twice at once; a response is read up to a cap; TLS goes to the address
that was checked under the URL's name."""

from __future__ import annotations

import datetime
import io
import os
import socket
import ssl
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.jobs.model import Lane
from pressroom.notify.config import DeliveryConfig
from pressroom.notify.pool import DeliveryPool
from pressroom.notify.webhooks import Sent, WebhookSender
from pressroom.service import Services, open_services
from pressroom.settings import Settings
from pressroom.synth import save_png
from pressroom.testing import FakeOcrEngine
from pressroom.worker.runner import JobRunner
from tests.helpers import small_scan
from tests.hookservers import EndlessBody, Tarpit, receiving, wait_until

HOLD = 40.0  # a deadline no test waits for: the tarpit stays connected while we look
HANG = 30  # seconds before a wait is a hang: a bound on the test, never a speed claim


@pytest.fixture(params=["sqlite", "postgresql"])
def hooks(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Services]:
    """Services on the real clock (leases and deadlines must run together), with webhooks to
    loopback allowed so the endpoints can be local."""
    settings = Settings(
        data_dir=tmp_path / "data", scratch_dir=tmp_path / "scratch", webhook_allow_private=True
    )
    if request.param == "postgresql":
        settings = replace(settings, database_url=request.getfixturevalue("pg_url"))
    settings.scratch_dir.mkdir()
    svc = open_services(settings)
    yield svc
    if svc.store.db.is_postgres:
        svc.store.db.close_listener()
    svc.store.db.engine.dispose()


class Api:
    """The HTTP API in process, with a key for each tenant it is asked about."""

    def __init__(self, services: Services, tmp_path: Path) -> None:
        self.services = services
        self.client = TestClient(create_app(services), client=("127.0.0.1", 50000))
        self.keys: dict[str, str] = {}
        self.scan = save_png(small_scan(dpi=100, lines=2).image, tmp_path / "s.png", 100)

    def submit(self, tenant: str, **form: str) -> str:
        if tenant not in self.keys:
            self.keys[tenant] = self.services.store.tenancy.create_key(
                tenant, now=self.services.clock()
            )
        response = self.client.post(
            "/v1/jobs",
            headers={"Authorization": f"Bearer {self.keys[tenant]}"},
            files={"file": ("x.png", io.BytesIO(self.scan.read_bytes()))},
            data=form,
        )
        assert response.status_code == 202, response.text
        return str(response.json()["id"])

    def state(self, job_id: str) -> str:
        job = self.services.store.queue.get(job_id)
        assert job is not None
        return str(job.state.value)


def run_jobs(services: Services) -> None:
    runner = JobRunner(services, FakeOcrEngine(), "w1")
    while runner.run_next((Lane.BULK, Lane.INTERACTIVE)) is not None:
        pass


@pytest.fixture
def tarpit() -> Iterator[Tarpit]:
    with Tarpit(every=0.5) as pit:
        yield pit


def test_a_trickling_endpoint_is_cut_off_at_the_deadline(tarpit: Tarpit) -> None:
    """The tarpit never finishes its answer and each byte comes well inside any read timeout:
    only the deadline can end this send."""
    sender = WebhookSender(allow_private=True)
    outcome: list[Sent] = []
    send = threading.Thread(
        target=lambda: outcome.append(
            sender.post(tarpit.url, b"{}", {}, deadline=time.monotonic() + 1.5)
        )
    )
    send.start()
    send.join(60)  # a generous bound, so a send that never ends fails here instead of hanging
    assert outcome == [Sent(False, "TIMEOUT")]
    assert tarpit.connections == 1 and wait_until(lambda: tarpit.open == 0, 10)


def test_a_response_without_end_is_read_up_to_the_cap_and_no_further() -> None:
    with EndlessBody() as endless:
        sender = WebhookSender(allow_private=True, max_response_bytes=64 * 1024)
        # read to its end, this response would run into the deadline: TIMEOUT, not delivered
        sent = sender.post(endless.url, b"{}", {}, deadline=time.monotonic() + HOLD)
        assert sent.ok and sent.status == 200
        assert 64 * 1024 <= sent.received < 2 * 64 * 1024
        assert wait_until(lambda: endless.open == 0, 5)


def _certificate(name: str, tmp_path: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a self-signed certificate for ``name``, and a client context
    that trusts only it."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    pem = cert.public_bytes(serialization.Encoding.PEM)
    cert_file = tmp_path / f"{name}.pem"
    key_file = tmp_path / f"{name}.key"
    cert_file.write_bytes(pem)
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert_file, key_file)
    client = ssl.create_default_context(cadata=pem.decode())
    return server, client


@pytest.mark.parametrize("served_name", ["hooks.example.test", "elsewhere.example.test"])
def test_tls_goes_to_the_checked_address_and_verifies_the_url_name(
    tmp_path: Path, served_name: str
) -> None:
    server_tls, client_tls = _certificate(served_name, tmp_path)
    looked_up: list[str] = []

    def dns(host: str, port: int) -> list[str]:
        looked_up.append(host)
        return ["127.0.0.1"]

    with receiving(tls=server_tls) as receiver:
        sender = WebhookSender(allow_private=True, resolve=dns, ssl_context=client_tls)
        url = f"https://hooks.example.test:{receiver.port}/hook"
        sent = sender.post(url, b"{}", {}, deadline=time.monotonic() + 10)
        assert looked_up == ["hooks.example.test"]
        assert receiver.server_names[:1] == ["hooks.example.test"]  # SNI: the URL's name
        if served_name == "hooks.example.test":
            assert sent.ok
            assert receiver.received[0][0]["host"] == f"hooks.example.test:{receiver.port}"
        else:  # a certificate for another name is refused, though the address was ours
            assert sent == Sent(False, "UNREACHABLE") and receiver.received == []


def test_the_next_job_completes_while_a_tarpit_webhook_is_still_connected(
    hooks: Services, tmp_path: Path, tarpit: Tarpit
) -> None:
    """One worker runs jobs exactly as a worker process does; webhooks go through the
    process's delivery pool. A tarpit holding a webhook must not hold the worker."""
    from pressroom.worker.pool import _work

    api = Api(hooks, tmp_path)
    pool = DeliveryPool(hooks, DeliveryConfig(deadline_s=HOLD, poll_s=0.1))
    pool.start()
    stop = threading.Event()
    runner = JobRunner(hooks, FakeOcrEngine(), "w1")
    lanes = (Lane.BULK, Lane.INTERACTIVE)
    worker = threading.Thread(
        target=_work, args=(hooks, runner, lanes, "w1", stop, 100, os.getppid())
    )
    worker.start()
    try:
        first = api.submit("acme", webhook_url=tarpit.url)
        assert wait_until(lambda: tarpit.open == 1, 30), "the first job's webhook never went out"
        assert api.state(first) == "complete"
        second = api.submit("globex")
        assert wait_until(lambda: api.state(second) == "complete", 30), api.state(second)
        assert tarpit.open == 1  # still trickling: the second job did not wait for it
    finally:
        stop.set()
        tarpit.close()
        worker.join(30)
        pool.stop(timeout=10)
    assert not worker.is_alive()


@dataclass
class _Span:
    """One send (a ``post`` call) or one connection, on ``time.monotonic``: ``end`` None while
    it is still open."""

    who: str
    start: float
    end: float | None = None
    outcome: Sent | None = None


def _overlapping(spans: list[_Span]) -> list[tuple[_Span, _Span]]:
    """Each pair of spans of which one began before the other had ended (an open one has not)."""
    later = float("inf")
    return [
        (a, b)
        for i, a in enumerate(spans)
        for b in spans[i + 1 :]
        if a.start < (b.end or later) and b.start < (a.end or later)
    ]


class _TimedTarpit(Tarpit):
    """The tarpit, with when each connection was taken and when its client hung up."""

    def __init__(self, every: float) -> None:
        self.spans: list[_Span] = []
        super().__init__(every)

    def handle(self, conn: socket.socket) -> None:
        span = _Span("endpoint", time.monotonic())
        self.spans.append(span)
        try:
            super().handle(conn)
        finally:
            span.end = time.monotonic()


@dataclass(frozen=True)
class _TimedSender(WebhookSender):
    """The real sender, with when each of its pool's sends began and ended, and how."""

    pool: str = ""
    spans: list[_Span] = field(default_factory=list)  # shared by the pools that share an outbox

    def post(self, url: str, body: bytes, headers: Mapping[str, str], *, deadline: float) -> Sent:
        span = _Span(self.pool, time.monotonic())
        self.spans.append(span)
        try:
            span.outcome = WebhookSender.post(self, url, body, headers, deadline=deadline)
            return span.outcome
        finally:
            span.end = time.monotonic()


def test_a_lapsed_lease_never_starts_a_second_send_while_the_first_runs(
    hooks: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes' pools share one outbox; the lease is short and the tarpit never ends.
    The first send must end (at its deadline) before its lease lapses, so the other pool,
    looking the whole time, never starts another send of the same delivery while it runs.

    Both pools look before the delivery is due, so whichever claims it, the other was looking
    from the first moment; the test waits for the first send to end (a signal, however late a
    loaded machine makes it), then compares when sends and connections began and ended. A
    later claim or send of the delivery is the outbox at work (the first's lease lapsed after
    it ended, or its retry came due) and may come or not: what fails is the delivery handed
    out again while its first send ran, or two sends or two connections at once."""
    config = DeliveryConfig(lease_s=3.0, lease_margin_s=1.0, deadline_s=1.5, poll_s=0.05)
    sends: list[_Span] = []
    claims: list[tuple[float, str]] = []  # when a claim of the one delivery returned, and whose
    claim = hooks.store.outbox.claim_deliveries

    def recorded_claim(owner: str, **how: Any) -> list[dict[str, Any]]:
        rows = claim(owner, **how)
        claims.extend((time.monotonic(), owner) for _ in rows)
        return rows

    monkeypatch.setattr(hooks.store.outbox, "claim_deliveries", recorded_claim)
    tarpit = _TimedTarpit(every=0.5)
    with tarpit:
        api = Api(hooks, tmp_path)
        job_id = api.submit("acme", webhook_url=tarpit.url)
        pools = [
            DeliveryPool(
                hooks,
                config,
                owner=owner,
                sender=_TimedSender(allow_private=True, pool=owner, spans=sends),
            )
            for owner in ("host-a", "host-b")
        ]
        for pool in pools:
            pool.start()
        try:
            run_jobs(hooks)  # the job completes and its delivery comes due, both pools looking
            # the signal: the first send has returned and the endpoint saw its client hang up
            # (a send that never ends fails here, at the bound)
            assert wait_until(
                lambda: bool(sends and sends[0].end and tarpit.spans and tarpit.spans[0].end),
                HANG,
            ), f"the first send never ended: sends {sends}, connections {tarpit.spans}"
        finally:
            for pool in pools:
                pool.stop(timeout=5)  # joins every send, so the spans are complete
    first = sends[0]
    assert first.end is not None
    # the lease covers the whole send: no one (its own pool neither) claims the delivery again
    # while that send runs (a claim before it began is no second send: on a loaded machine a
    # pool may take its time from claim to send, and claim again, before sending once — CI)
    again = [c for c in sorted(claims)[1:] if first.start < c[0] < first.end]
    assert again == [], f"handed out again while the first send ran: {claims}, {first}"
    assert _overlapping(sends) == [], f"a second send while the first ran: {sends}"
    assert _overlapping(tarpit.spans) == [], f"two connections at once: {tarpit.spans}"
    assert first.outcome == Sent(False, "TIMEOUT")  # ended by its deadline, nothing else
    (row,) = hooks.store.outbox.deliveries(job_id)
    assert row["state"] == "pending"  # the tarpit never answers: not delivered, to be retried


def _recorded(hooks: Services, job_id: str) -> bool:
    """The job's one delivery recorded delivered: the sender writes it after the receiver
    has the request, so the receiver having it is not enough to read the row."""
    rows = hooks.store.outbox.deliveries(job_id)
    return len(rows) == 1 and rows[0]["state"] == "delivered"


def test_one_tenants_tarpit_takes_at_most_its_share_and_others_are_delivered(
    hooks: Services, tmp_path: Path, tarpit: Tarpit
) -> None:
    api = Api(hooks, tmp_path)
    stuck = [api.submit("acme", webhook_url=tarpit.url) for _ in range(2)]
    with receiving() as receiver:
        other = api.submit("globex", webhook_url=receiver.url)
        run_jobs(hooks)
        pool = DeliveryPool(hooks, DeliveryConfig(senders=3, per_tenant=1, deadline_s=HOLD))
        pool.start()
        try:
            # delivered as the store records it (after the receiver has it): the bound only
            # stops a hang, it claims no speed
            assert wait_until(lambda: _recorded(hooks, other), HANG)
            assert len(receiver.received) == 1
            # acme's sender may connect after globex's is recorded (a starved thread): waited
            # for, then its share is one sender
            assert wait_until(lambda: tarpit.open >= 1, HANG), "acme's webhook never went out"
            assert tarpit.open == 1 and tarpit.connections == 1  # acme's share is one sender
            assert {r["state"] for j in stuck for r in hooks.store.outbox.deliveries(j)} == {
                "pending"
            }
        finally:
            tarpit.close()
            pool.stop(timeout=10)


def test_a_burst_to_a_tarpit_does_not_hold_other_tenants_webhooks_behind_it(
    hooks: Services, tmp_path: Path, tarpit: Tarpit
) -> None:
    """Older deliveries of one tenant, more than the senders, all to a tarpit: the pool still
    claims the other tenant's newer delivery and delivers it while the burst is stuck."""
    api = Api(hooks, tmp_path)
    burst = [api.submit("acme", webhook_url=tarpit.url) for _ in range(4)]
    run_jobs(hooks)
    with receiving() as receiver:
        other = api.submit("globex", webhook_url=receiver.url)
        run_jobs(hooks)
        pool = DeliveryPool(hooks, DeliveryConfig(senders=2, per_tenant=1, deadline_s=HOLD))
        pool.start()
        try:
            # delivered as the store records it (after the receiver has it)
            assert wait_until(lambda: _recorded(hooks, other), HANG)
            assert len(receiver.received) == 1
            assert len(hooks.store.outbox.deliveries(other)) == 1
            assert wait_until(lambda: tarpit.open >= 1, HANG), "acme's webhook never went out"
            assert tarpit.open == 1  # acme holds its one sender, no more
            leased = [r for j in burst for r in hooks.store.outbox.deliveries(j) if r["attempts"]]
            assert len(leased) == 1  # the rest of the burst was never claimed, so never lost
        finally:
            tarpit.close()
            pool.stop(timeout=10)


def test_the_pool_delivers_signed_and_records_the_outcome(hooks: Services, tmp_path: Path) -> None:
    from pressroom.notify.webhooks import signature

    api = Api(hooks, tmp_path)
    with receiving() as receiver:
        job_id = api.submit("acme", webhook_url=receiver.url)
        run_jobs(hooks)
        pool = DeliveryPool(hooks, DeliveryConfig(poll_s=0.1))
        pool.start()
        try:
            assert wait_until(lambda: len(receiver.received) == 1, 30)
            assert wait_until(
                lambda: hooks.store.outbox.deliveries(job_id)[0]["state"] == "delivered", 10
            )
        finally:
            pool.stop(timeout=10)
    headers, body = receiver.received[0]
    secret = hooks.store.outbox.webhook_secret("acme", now=hooks.clock())
    assert headers["webhook-signature"] == signature(
        secret, headers["webhook-id"], int(headers["webhook-timestamp"]), body
    )
