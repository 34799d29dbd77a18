"""The kind of output over HTTP: output_type, sidecar and allow_no_text are judged at the door,
stored with the job (echoed in its JSON), part of the artifact's digest, and a sidecar comes on
a signed link of its own."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from PIL import Image

from pressroom.pipeline.archive import pdfa_problems
from pressroom.service import Services
from tests.integration.test_service import LINES, api, png_bytes, post, work

pytestmark = pytest.mark.integration
__all__ = ["api"]  # the fixture, shared with test_service


@pytest.mark.parametrize(
    "field",
    [
        {"output_type": "tiff"},
        {"sidecar": "yes"},
        {"allow_no_text": "1"},
        {"optimize": "3"},
        {"ocr": "again"},
    ],
)
def test_bad_output_choices_are_refused_at_the_door(
    api: tuple[TestClient, dict[str, str]], tmp_path: Path, field: dict[str, str]
) -> None:
    client, headers = api
    refused = post(client, headers, png_bytes(tmp_path), **field)
    assert refused.status_code == 400 and refused.json()["code"] == "BAD_REQUEST"
    assert next(iter(field)) in refused.json()["detail"]


def test_pdfa_with_a_sidecar_over_http(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    client, headers = api
    data = png_bytes(tmp_path)
    asked = post(client, headers, data, template="sample", output_type="pdfa", sidecar="true")
    assert asked.status_code == 202
    body = asked.json()
    assert (body["output_type"], body["sidecar"], body["allow_no_text"]) == ("pdfa", True, False)
    assert body["sidecar_url"] is None
    plain = post(client, headers, data, template="sample").json()
    assert (plain["output_type"], plain["sidecar"]) == ("pdf", False)
    work(services)
    job = client.get(f"/v1/jobs/{body['id']}", headers=headers).json()
    assert job["state"] == "complete"
    out = tmp_path / "got.pdf"
    out.write_bytes(client.get(job["artifact_url"]).content)
    assert pdfa_problems(out) == []
    text = client.get(job["sidecar_url"])
    assert text.status_code == 200 and text.headers["content-type"].startswith("text/plain")
    assert "Waiver signed by the participant" in text.text
    assert "Harbour Lane Services" not in text.text  # the text layer, not the bands
    # each link is for its own file only
    swapped = job["artifact_url"].replace(
        "/v1/artifacts/" + job["id"], f"/v1/artifacts/{job['id']}/sidecar"
    )
    assert client.get(swapped).status_code == 403
    back = job["sidecar_url"].replace("/sidecar?", "?")
    assert client.get(back).status_code == 403
    # the kind of output is part of the artifact: the plain job's is another key
    other = client.get(f"/v1/jobs/{plain['id']}", headers=headers).json()
    assert other["sidecar_url"] is None
    keys = [services.store.queue.get(j).artifact_key for j in (body["id"], plain["id"])]  # type: ignore[union-attr]
    assert keys[0] != keys[1]
    stored = sorted(k for k, _ in services.blobs.list("artifacts"))
    assert len(stored) == 3 and sum(k.endswith(".txt") for k in stored) == 1


def test_a_document_without_text_over_http(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    from pressroom.testing import FakeOcrEngine

    client, headers = api
    buf = io.BytesIO()
    Image.new("L", (400, 500), 240).save(buf, format="PNG", dpi=(100, 100))
    refused = post(client, headers, buf.getvalue()).json()
    allowed = post(client, headers, buf.getvalue(), allow_no_text="true").json()
    assert allowed["allow_no_text"] is True
    work(services, FakeOcrEngine(lines=()))
    ended = [client.get(f"/v1/jobs/{j['id']}", headers=headers).json() for j in (refused, allowed)]
    assert (ended[0]["state"], ended[0]["reason"]) == ("rejected", "UNREADABLE_SCAN")
    assert ended[1]["state"] == "complete"
    assert (ended[1]["text_layer"], ended[1]["flattened"], ended[1]["notes"]) == ("empty", 0, 0)
    assert ended[0]["text_layer"] is None


def test_a_rule_across_fields_waits_for_fields_sent_after_the_file(
    api: tuple[TestClient, dict[str, str]], tmp_path: Path
) -> None:
    """review=always before the file and redact after it is one valid request (schemathesis
    found it refused), judged whole once the form has arrived."""
    client, headers = api
    boundary = "b0undary"

    def part(name: str, value: bytes, filename: str = "") -> bytes:
        extra = f'; filename="{filename}"' if filename else ""
        return (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"{extra}\r\n\r\n'.encode()
            + value
            + b"\r\n"
        )

    def body(after: bytes) -> bytes:
        head = part("review", b"always") + part("file", png_bytes(tmp_path), "x.png")
        return head + after + f"--{boundary}--\r\n".encode()

    content_type = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    ok = client.post(
        "/v1/jobs", headers={**headers, **content_type}, content=body(part("redact", b"name"))
    )
    assert ok.status_code == 202, ok.text
    refused = client.post("/v1/jobs", headers={**headers, **content_type}, content=body(b""))
    assert refused.status_code == 400 and "review=always" in refused.json()["detail"]


def test_a_form_is_flattened_and_counted_over_http(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    from tests.forms import FIELD_VALUE, form_pdf
    from tests.helpers import output_text

    client, headers = api
    data = form_pdf(tmp_path / "form.pdf").read_bytes()
    job_id = post(client, headers, data).json()["id"]
    work(services)
    job = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert job["state"] == "complete"
    assert (job["text_layer"], job["flattened"], job["notes"]) == ("text", 3, 1)
    out = tmp_path / "got.pdf"
    out.write_bytes(client.get(job["artifact_url"]).content)
    assert FIELD_VALUE in output_text(out, 0)


def test_corrections_over_the_api_rebuild_and_hold_again(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    """The desk's corrections, sent by an API client: judged as the desk judges them, the job
    rebuilt and held again for approval; the review sheet as the desk has it."""
    from pressroom.testing import FakeOcrEngine

    client, headers = api
    engine = FakeOcrEngine(lines=("Account number: 12345678", "Ordinary words stay."))
    job_id = post(client, headers, png_bytes(tmp_path), redact="account-number").json()["id"]
    work(services, engine)
    assert client.get(f"/v1/jobs/{job_id}", headers=headers).json()["state"] == "review"
    sheet = client.get(f"/v1/jobs/{job_id}/review-sheet", headers=headers)
    assert sheet.status_code == 200
    body = sheet.json()
    # held REDACTION_LEAK: the sheet also says where the check found the value again
    assert set(body) == {"pages", "findings", "corrections", "rechecked"}
    assert len(body["pages"]) == 1
    assert body["pages"][0]["output"]["scale"] == 1.0
    assert "12345678" not in sheet.text  # boxes and classes, never a value
    url = f"/v1/jobs/{job_id}/corrections"
    as_json = {**headers, "Content-Type": "application/json"}
    for bad in (
        b'{"manual": [], "manual": []}',  # a key given twice
        b'{"drawn": []}',  # not a field of the desk's
        b'{"manual": [{"page": 1, "box": [10, 10, 5, 40]}]}',  # x1 < x0
        b"not json",
    ):
        refused = client.post(url, headers=as_json, content=bad)
        assert refused.status_code == 400 and refused.json()["code"] == "BAD_REQUEST", bad
    other = services.store.tenancy.create_key("globex", now=0)
    drawn = {"manual": [{"page": 1, "box": [20, 20, 120, 40]}]}
    assert (
        client.post(url, headers={"Authorization": f"Bearer {other}"}, json=drawn).status_code
        == 404
    )
    accepted = client.post(url, headers=headers, json=drawn)
    assert accepted.status_code == 202 and accepted.json()["state"] != "review"
    assert client.get(f"/v1/jobs/{job_id}/review-sheet", headers=headers).status_code == 404
    work(services, engine)
    again = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
    assert again["state"] == "review"
    sheet = client.get(f"/v1/jobs/{job_id}/review-sheet", headers=headers).json()
    assert sheet["corrections"]["manual"] == drawn["manual"]
    assert any(f["class"] == "manual" for f in sheet["findings"])
    assert [d["action"] for d in again["decisions"]] == ["apply"]


@pytest.mark.parametrize(
    ("field", "first", "second"),
    [
        ("output_type", "pdf", "pdfa"),
        ("sidecar", "true", "false"),
        ("allow_no_text", "false", "true"),
        ("optimize", "0", "2"),
    ],
)
def test_an_output_choice_sent_twice_is_refused_whatever_the_order(
    api: tuple[TestClient, dict[str, str]], tmp_path: Path, field: str, first: str, second: str
) -> None:
    client, headers = api
    data = png_bytes(tmp_path)
    for values in ((first, second), (second, first)):
        refused = client.post(
            "/v1/jobs",
            headers=headers,
            files=[("file", ("x.png", io.BytesIO(data))), *((field, (None, v)) for v in values)],
        )
        assert refused.status_code == 400 and refused.json()["code"] == "BAD_REQUEST"
        assert field in refused.json()["detail"]


def test_ocr_force_over_http_reads_a_page_that_carries_text(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    """ocr=force is stored and echoed; the born-digital page is rendered and read (the fake
    engine's words are in the output) where skip keeps its own text."""
    from pressroom.synth import text_pdf

    client, headers = api
    data = text_pdf([["Born digital words only, no scan at all on this page"]], tmp_path / "d.pdf")
    forced = post(client, headers, data.read_bytes(), ocr="force").json()
    kept = post(client, headers, data.read_bytes()).json()
    assert (forced["ocr"], kept["ocr"]) == ("force", "skip")
    work(services)
    texts = {}
    for body in (forced, kept):
        job = client.get(f"/v1/jobs/{body['id']}", headers=headers).json()
        assert job["state"] == "complete", job
        out = tmp_path / f"{body['id']}.pdf"
        out.write_bytes(client.get(job["artifact_url"]).content)
        texts[body["ocr"]] = " ".join(pdftotext_words(out))
    assert LINES[0] not in texts["skip"] and "Born digital" in texts["skip"]
    assert LINES[0] in texts["force"] and "Born digital" not in texts["force"]


def pdftotext_words(path: Path) -> list[str]:
    import subprocess

    out = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_a_redaction_names_what_it_dropped_in_the_job_json(
    api: tuple[TestClient, dict[str, str]], services: Services, tmp_path: Path
) -> None:
    """The source's title, an outline item and a link held the name: the job says which kinds
    it left out (never their text); a plain job of the same file drops nothing."""
    from tests.e2e.test_structure_carriers import structured_pdf

    client, headers = api
    data = structured_pdf(tmp_path / "report.pdf", secret="Margaret Thornbury").read_bytes()
    redacted = post(client, headers, data, redact="name").json()["id"]
    plain = post(client, headers, data).json()["id"]
    work(services)
    job = client.get(f"/v1/jobs/{redacted}", headers=headers).json()
    assert job["state"] == "complete", job
    assert sorted(job["dropped"]) == ["links", "outlines", "title"]
    assert "Thornbury" not in str(job)
    assert client.get(f"/v1/jobs/{plain}", headers=headers).json()["dropped"] == []
