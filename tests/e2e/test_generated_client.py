"""A client generated from the OpenAPI document that ``serve`` publishes (openapi-python-client,
as an API user would run it) uploads, polls and downloads: the document describes the upload,
the bearer key, the job and the PDF well enough for a generator to get them right."""

from __future__ import annotations

import importlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pikepdf
import pytest

from pressroom.synth import image_pdf
from tests.e2e.conftest import Server, poll
from tests.helpers import small_scan

pytestmark = pytest.mark.e2e

# the generator lives in .venv-tools (its CLI pins a typer older than spaCy's): `make tools-deps`
GENERATOR = Path(
    os.environ.get(
        "PRESSROOM_OPENAPI_GENERATOR",
        Path(__file__).resolve().parents[2] / ".venv-tools" / "bin" / "openapi-python-client",
    )
)
# no content_type_overrides: the document itself lists the download as a file a generator knows
CONFIG = "post_hooks: []\n"
PACKAGE = "pressroom_generated"


@pytest.fixture
def generated(server: Server, tmp_path: Path) -> Iterator[ModuleType]:
    assert GENERATOR.exists(), f"{GENERATOR} is missing: run `make tools-deps`"
    document = tmp_path / "openapi.json"
    document.write_bytes(httpx.get(f"{server.url}/openapi.json", timeout=30).content)
    (tmp_path / "config.yaml").write_text(CONFIG)
    out = tmp_path / "generated"
    run = subprocess.run(
        [
            str(GENERATOR),
            "generate",
            "--path",
            str(document),
            "--config",
            str(tmp_path / "config.yaml"),
            "--meta",
            "none",
            "--output-path",
            str(out / PACKAGE),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    # nothing of the document may be left out of the client
    assert "Warning" not in run.stdout, run.stdout
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(out))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def api(name: str) -> Any:
    """A generated function module by its operation's tag and id (``jobs.submit_job``)."""
    return importlib.import_module(f"{PACKAGE}.api.{name}")


def test_the_generated_client_uploads_polls_and_downloads(
    server: Server, generated: ModuleType, tmp_path: Path
) -> None:
    key = server.client.headers["Authorization"].removeprefix("Bearer ")
    with (
        generated.AuthenticatedClient(base_url=server.url, token=key) as client,
        generated.Client(base_url=server.url) as anonymous,  # a signed link needs no key
    ):
        upload_poll_download(client, anonymous, tmp_path)


def upload_poll_download(client: Any, anonymous: Any, tmp_path: Path) -> None:
    from pressroom_generated.models import Job, JobState, Problem, SubmitForm
    from pressroom_generated.types import File

    scan = small_scan(seed=43, lines=3)
    source = image_pdf([scan.image], tmp_path / "scan.pdf", 300).read_bytes()
    form = SubmitForm(
        file=File(payload=io.BytesIO(source), file_name="scan.pdf", mime_type="application/pdf"),
        template="sample",
        title="Week 49",
    )
    answer = api("jobs.submit_job").sync_detailed(client=client, body=form)
    assert answer.status_code == 202, answer.content
    assert isinstance(answer.parsed, Job)
    assert answer.headers["location"] == f"/v1/jobs/{answer.parsed.id}"
    job_id = answer.parsed.id

    show = api("jobs.get_job")
    seen: dict[str, Job] = {}

    def finished() -> bool:
        got = show.sync(job_id, client=client)
        assert isinstance(got, Job), got
        seen["job"] = got
        return got.state in (JobState.COMPLETE, JobState.REJECTED, JobState.REVIEW)

    assert poll(finished, 120), seen
    done = seen["job"]
    assert done.state is JobState.COMPLETE, done
    assert isinstance(done.artifact_url, str)

    link = urlsplit(done.artifact_url)
    query = {name: values[0] for name, values in parse_qs(link.query).items()}
    pdf = api("artifacts.download_artifact").sync(
        job_id, client=anonymous, expires=query["expires"], signature=query["signature"]
    )
    assert isinstance(pdf, File), pdf
    out = tmp_path / "out.pdf"
    out.write_bytes(pdf.payload.read())
    with pikepdf.open(out) as doc:
        assert len(doc.pages) == 2 and str(doc.docinfo.Title) == "Week 49"

    # its errors come back typed too: the problem body, with our code
    missing = show.sync("no-such-job", client=client)
    assert isinstance(missing, Problem) and (missing.status, missing.code) == (404, "NOT_FOUND")
    tampered = api("artifacts.download_artifact").sync_detailed(
        job_id, client=anonymous, expires=query["expires"], signature="0" * 64
    )
    assert tampered.status_code == 403
    assert isinstance(tampered.parsed, Problem) and tampered.parsed.code == "BAD_SIGNATURE"
    nobody = api("jobs.get_job").sync_detailed(job_id, client=anonymous)
    assert nobody.status_code == 401 and isinstance(nobody.parsed, Problem)
