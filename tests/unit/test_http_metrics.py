"""HTTP request durations in /metrics: one series per route template, method and status, never
one per raw path, measured without buffering what the app streams."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from fastapi import APIRouter, FastAPI
from fastapi.responses import StreamingResponse
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families
from starlette.types import Message, Receive, Scope, Send

from pressroom.api.timing import UNMATCHED, RequestTiming, render_http_metrics

FAMILY = "pressroom_http_request_duration_seconds"


def counts() -> dict[tuple[str, str, str], float]:
    """(route, method, status) → requests counted so far in this process."""
    found: dict[tuple[str, str, str], float] = {}
    for family in text_string_to_metric_families(render_http_metrics().decode()):
        for sample in family.samples:
            if sample.name == FAMILY + "_count":
                labels = sample.labels
                found[(labels["route"], labels["method"], labels["status"])] = sample.value
    return found


def tiny_app() -> FastAPI:
    app = FastAPI()
    router = APIRouter(prefix="/t")

    @router.get("/widgets/{widget_id}")
    def widget(widget_id: str) -> dict[str, str]:
        return {"id": widget_id}

    @router.get("/broken")
    def broken() -> None:
        raise RuntimeError("a bug")

    @router.get("/stream")
    def stream() -> StreamingResponse:
        return StreamingResponse(iter([b"one", b"two"]), media_type="application/pdf")

    app.include_router(router)
    app.add_middleware(RequestTiming)
    return app


def test_a_request_is_counted_under_its_route_template_never_its_raw_path() -> None:
    client = TestClient(tiny_app())
    before = counts()
    assert client.get("/t/widgets/w-8841").status_code == 200
    assert client.get("/t/widgets/w-9902").status_code == 200
    after = counts()
    key = ("/t/widgets/{widget_id}", "GET", "200")
    assert after[key] == before.get(key, 0) + 2
    assert not [labels for labels in after if "w-8841" in labels[0] or "w-9902" in labels[0]]


def test_unknown_paths_share_one_label_and_a_wrong_method_keeps_its_route() -> None:
    client = TestClient(tiny_app())
    before = counts()
    assert client.get("/t/nothing-here/123").status_code == 404
    assert client.get("/t/also/missing").status_code == 404
    assert client.post("/t/widgets/w-1").status_code == 405
    after = counts()
    assert after[(UNMATCHED, "GET", "404")] == before.get((UNMATCHED, "GET", "404"), 0) + 2
    wrong = ("/t/widgets/{widget_id}", "POST", "405")
    assert after[wrong] == before.get(wrong, 0) + 1
    assert not [labels for labels in after if "missing" in labels[0]]


def test_a_request_that_raises_is_counted_as_the_500_it_becomes() -> None:
    client = TestClient(tiny_app(), raise_server_exceptions=False)
    before = counts()
    assert client.get("/t/broken").status_code == 500
    key = ("/t/broken", "GET", "500")
    assert counts()[key] == before.get(key, 0) + 1


def test_an_invented_method_does_not_make_a_series_of_its_own() -> None:
    client = TestClient(tiny_app())
    client.request("BREW", "/t/widgets/1")
    assert not [labels for labels in counts() if labels[1] == "BREW"]
    assert [labels for labels in counts() if labels[1] == "other"]


def test_a_streamed_body_reaches_the_server_chunk_by_chunk() -> None:
    """Each body message is passed on when the app sends it: the app sees its first chunk
    already sent before it sends the second (a buffering middleware would hold both)."""
    delivered: list[Message] = []
    seen_by_app: list[int] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"one", "more_body": True})
        seen_by_app.append(len(delivered))
        await send({"type": "http.response.body", "body": b"two", "more_body": False})

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        delivered.append(message)

    scope: Scope = {"type": "http", "method": "GET", "path": "/x", "headers": []}
    asyncio.run(RequestTiming(app)(scope, receive, send))
    assert seen_by_app == [2]  # the start and the first chunk had gone out
    assert [m.get("body") for m in delivered] == [None, b"one", b"two"]


def test_a_streaming_download_is_timed_with_its_status() -> None:
    client = TestClient(tiny_app())
    before = counts()
    with client.stream("GET", "/t/stream") as response:
        body: Iterator[bytes] = response.iter_bytes()
        assert b"".join(body) == b"onetwo"
    key = ("/t/stream", "GET", "200")
    assert counts()[key] == before.get(key, 0) + 1


def test_the_histogram_has_buckets_a_dashboard_can_take_quantiles_from() -> None:
    TestClient(tiny_app()).get("/t/widgets/b")
    text = render_http_metrics().decode()
    assert f"# TYPE {FAMILY} histogram" in text
    buckets = [
        line
        for line in text.splitlines()
        if line.startswith(FAMILY + "_bucket") and 'route="/t/widgets/{widget_id}"' in line
    ]
    assert any('le="+Inf"' in line for line in buckets) and len(buckets) > 5
