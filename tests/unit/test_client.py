"""The typed client against a scripted service (httpx's MockTransport: no sockets): what it
sends, how it follows pages and polls, and the one error class every refusal becomes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from pressroom.client import ApiError, PressroomClient, RemoteJob

BASE = "http://pressroom.test"


def job(job_id: str, state: str = "accepted", **kw: Any) -> dict[str, Any]:
    return {
        "id": job_id,
        "state": state,
        "stage": None,
        "lane": "bulk",
        "reason": None,
        "message": None,
        "attempts": 0,
        "pages": None,
        "created_at": 1.0,
        "finished_at": None,
        "artifact_url": None,
        **kw,
    }


def problem(status: int, code: str, detail: str) -> httpx.Response:
    body = {"type": "urn:x", "title": code, "status": status, "detail": detail, "code": code}
    return httpx.Response(status, json=body, headers={"content-type": "application/problem+json"})


def client(
    handler: Callable[[httpx.Request], httpx.Response], sleeps: list[float] | None = None
) -> PressroomClient:
    http = httpx.Client(base_url=BASE, transport=httpx.MockTransport(handler))
    return PressroomClient(
        BASE, "k-1", http=http, sleep=(sleeps if sleeps is not None else []).append
    )


def test_list_follows_next_through_every_page_with_the_key_and_filters() -> None:
    seen: list[httpx.Request] = []

    def serve(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if "cursor" not in request.url.params:
            nxt = f"{BASE}/v1/jobs?state=running&cursor=c2"
            return httpx.Response(200, json={"jobs": [job("j3"), job("j2")], "next": nxt})
        return httpx.Response(200, json={"jobs": [job("j1")], "next": None})

    with client(serve) as api:
        listed = [j.id for j in api.list(state="running", page_size=2)]
    assert listed == ["j3", "j2", "j1"]
    assert [dict(r.url.params) for r in seen] == [
        {"state": "running", "limit": "2"},
        {"state": "running", "cursor": "c2"},
    ]
    assert all(r.headers["authorization"] == "Bearer k-1" for r in seen)


def test_a_refusal_is_one_error_class_with_the_problems_code_detail_and_status() -> None:
    answers = iter(
        [
            problem(409, "CONFLICT", "the job has already ended"),
            httpx.Response(502, text="<html>bad gateway</html>"),
            problem(429, "QUOTA_EXCEEDED", "later"),
        ]
    )
    with client(lambda _r: next(answers)) as api:
        with pytest.raises(ApiError) as conflict:
            api.cancel("j1")
        assert (conflict.value.code, conflict.value.status) == ("CONFLICT", 409)
        assert conflict.value.detail == "the job has already ended"
        assert not conflict.value.temporary
        with pytest.raises(ApiError) as gateway:
            api.get("j1")
        assert (gateway.value.code, gateway.value.status) == ("HTTP_502", 502)
        with pytest.raises(ApiError) as quota:
            api.get("j1")
        assert quota.value.temporary


def test_an_unreachable_service_is_unavailable_and_temporary() -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with client(down) as api, pytest.raises(ApiError) as caught:
        api.get("j1")
    assert (caught.value.code, caught.value.status, caught.value.temporary) == (
        "UNAVAILABLE",
        None,
        True,
    )


def test_wait_polls_with_backoff_until_the_job_ends() -> None:
    states = iter(["accepted", "running", "running", "running", "complete"])
    sleeps: list[float] = []
    polled: list[str] = []
    with client(lambda _r: httpx.Response(200, json=job("j1", next(states))), sleeps) as api:
        done = api.wait("j1", on_poll=lambda j: polled.append(j.state))
    assert done.state == "complete" and done.terminal
    assert polled == ["accepted", "running", "running", "running", "complete"]
    assert sleeps == [0.5, 0.75, 1.125, 1.6875]  # longer each time, never past 3 s


def test_cancel_answers_the_job_ended_or_still_stopping() -> None:
    answers = iter(
        [
            httpx.Response(200, json=job("j1", "rejected", reason="CANCELLED")),
            httpx.Response(202, json=job("j2", "running")),
        ]
    )
    methods: list[str] = []

    def serve(request: httpx.Request) -> httpx.Response:
        methods.append(f"{request.method} {request.url.path}")
        return next(answers)

    with client(serve) as api:
        ended, stopping = api.cancel("j1"), api.cancel("j2")
    assert (ended.state, ended.reason, ended.terminal) == ("rejected", "CANCELLED", True)
    assert (stopping.state, stopping.terminal) == ("running", False)
    assert methods == ["DELETE /v1/jobs/j1", "DELETE /v1/jobs/j2"]


def test_submit_sends_the_fields_and_never_the_local_file_name(tmp_path: Path) -> None:
    sent: list[httpx.Request] = []

    def serve(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(202, json=job("j9"))

    scan = tmp_path / "Jane Doe waiver.pdf"
    scan.write_bytes(b"%PDF-1.7 scan")
    with client(serve) as api:
        got = api.submit(scan, template="sample", keep_pixels=True, idempotency_key="once")
    assert isinstance(got, RemoteJob) and got.id == "j9"
    (request,) = sent
    body = request.read()
    assert b"Jane Doe" not in body and b"%PDF-1.7 scan" in body
    assert b'name="template"\r\n\r\nsample' in body and b'name="keep_pixels"' in body
    assert request.headers["idempotency-key"] == "once"


def test_download_writes_the_file_whole_or_not_at_all(tmp_path: Path) -> None:
    def serve(request: httpx.Request) -> httpx.Response:
        assert "authorization" not in request.headers  # the link is its own credential
        if request.url.params.get("signature") == "good":
            return httpx.Response(200, content=b"%PDF-1.7 out")
        return problem(403, "BAD_SIGNATURE", "the link's signature does not match")

    done = RemoteJob.of(
        job("j1", "complete", artifact_url=f"{BASE}/v1/artifacts/j1?signature=good")
    )
    with client(serve) as api:
        assert api.download(done, tmp_path / "out.pdf").read_bytes() == b"%PDF-1.7 out"
        with pytest.raises(ApiError) as caught:
            api.download(f"{BASE}/v1/artifacts/j1?signature=bad", tmp_path / "bad.pdf")
    assert caught.value.code == "BAD_SIGNATURE"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.pdf"]
    assert json.loads(json.dumps(done.data))["id"] == "j1"


def test_submit_sends_every_option_the_api_takes_and_one_key_per_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pressroom submit`'s options reach the form as the API names them; with several files
    and one --idempotency-key, file N goes as KEY:N (so resending the batch repeats none)."""
    import email.parser

    from pressroom.client import SubmitOptions, run_submit

    sent: list[tuple[dict[str, str], str | None]] = []

    def serve(request: httpx.Request) -> httpx.Response:
        head = f"Content-Type: {request.headers['content-type']}\r\n\r\n".encode()
        message = email.parser.BytesParser().parsebytes(head + request.read())
        fields = {
            part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
            for part in message.get_payload()  # type: ignore[union-attr]
        }
        form = {str(k): v.decode() for k, v in fields.items() if k != "file"}
        sent.append((form, request.headers.get("idempotency-key")))
        return httpx.Response(202, json=job(f"j{len(sent)}"))

    files = []
    for name in ("a.pdf", "b.pdf"):
        (tmp_path / name).write_bytes(b"%PDF-1.7\n")
        files.append(tmp_path / name)
    opts = SubmitOptions(
        url=BASE,
        key="k-1",
        template="sample",
        title="Payouts",
        lane="interactive",
        redact="name",
        review="always",
        languages="eng+deu",
        webhook_url="https://hooks.example/p",
        deadline=600.0,
        customer="c-17",
        idempotency_key="batch-9",
        label="case 5",
    )
    http = httpx.Client(base_url=BASE, transport=httpx.MockTransport(serve))
    assert run_submit(files, opts, http=http) == 0
    assert [key for _, key in sent] == ["batch-9:1", "batch-9:2"]
    assert sent[0][0] == {
        "template": "sample",
        "title": "Payouts",
        "label": "case 5",
        "lane": "interactive",
        "redact": "name",
        "review": "always",
        "webhook_url": "https://hooks.example/p",
        "languages": "eng+deu",
        "deadline": "600",
        "customer": "c-17",
    }
    assert "a.pdf: accepted as j1" in capsys.readouterr().out


def test_an_unreachable_service_is_named_in_the_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pressroom.client import SubmitOptions, run_submit

    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    (tmp_path / "letter.pdf").write_bytes(b"%PDF-1.7\n")
    http = httpx.Client(base_url=BASE, transport=httpx.MockTransport(down))
    code = run_submit([tmp_path / "letter.pdf"], SubmitOptions(url=BASE, key="k"), http=http)
    assert code == 75
    assert capsys.readouterr().err == (
        f"UNAVAILABLE: letter.pdf: cannot reach the service at {BASE} (ConnectError); "
        "is it running?\n"
    )
