"""No input is "a bug": damaged copies of the suite's own small PDFs (tests/fuzzpdfs.py:
truncated, bit-flipped, objects swapped, encryption dictionaries added, the cross-reference
table broken, streams with a wrong /Length, values of the wrong type) go through the pipeline
in this process, with the one Tesseract the session loads, as plain and as redaction jobs
(some as PDF/A, with a sidecar, or with --ocr redo or force). Each one is delivered, held
for a person, or refused with a documented code; never INTERNAL_ERROR, never an exception
that is not Pressroom's, never a case that runs past a generous deadline (a hang guard: the
pipeline's own deadline, asked between pages too).

About fifty cases run by default; ``-m slow`` runs a few hundred more. Damaged scans (PNG,
JPEG, TIFF) go through the same doors, ten by default and two hundred more under ``slow``."""

from __future__ import annotations

import io
import json
import logging
import time
import traceback
from pathlib import Path

import pikepdf
import pytest
from fastapi.testclient import TestClient
from pikepdf import Array, Dictionary, Name

from pressroom.app import create_app
from pressroom.engines.tesseract import TesseractEngine
from pressroom.errorcodes import MEANINGS
from pressroom.errors import DeadlineExceeded, PressroomError
from pressroom.jobs.model import Lane
from pressroom.pipeline.core import JobOptions, remaining
from pressroom.pipeline.stop import stop_when
from pressroom.processing import Processing
from pressroom.redact.leaks import find_leaks
from pressroom.redact.policy import parse_policy
from pressroom.service import Services
from pressroom.templates import resolve_template
from pressroom.testing import FakeOcrEngine
from pressroom.worker.runner import JobRunner
from tests.fuzzpdfs import ROOT, image_mutant, image_seeds, mutant, seeds
from tests.helpers import raised

pytestmark = pytest.mark.integration

DEFAULT_CASES = 50
SLOW_CASES = 400
CASE_DEADLINE_S = 60.0  # a hang guard, not a speed claim: a tiny page takes about a second


@pytest.fixture(scope="module")
def seed_bytes(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    return [p.read_bytes() for p in seeds(tmp_path_factory.mktemp("seeds"))]


def run_case(
    case: int, seed_bytes: list[bytes], engine: TesseractEngine, folder: Path
) -> tuple[str, str]:
    """Case ``case`` through the pipeline: (what was done to which seed, the outcome's code
    or "delivered"). Fails on anything but a documented code."""
    seed = case % len(seed_bytes)
    data, how = mutant(seed_bytes[seed], case)
    what = f"case {case}: seed {seed}, {how}"
    source = folder / "source.pdf"
    source.write_bytes(data)
    out = folder / "scratch" / "out.pdf"
    out.parent.mkdir(exist_ok=True)
    redact = case % 2 == 1
    processing = Processing(parse_policy("name,address,account-number", now=0) if redact else None)
    deadline = time.monotonic() + CASE_DEADLINE_S
    options = JobOptions(
        template=resolve_template("plain"),
        deadline=deadline,
        output_type="pdfa" if case % 3 == 0 else "pdf",
        sidecar=case % 4 == 0,
        ocr="redo" if case % 5 == 0 else "force" if case % 7 == 0 else "skip",
    )
    try:
        with stop_when(lambda: remaining(deadline)):
            raised(processing(source, out, options, engine))
    except DeadlineExceeded:
        pytest.fail(f"{what}: ran past {CASE_DEADLINE_S:.0f} s")
    except PressroomError as exc:
        assert exc.code != "INTERNAL_ERROR", f"{what}: {exc.one_line()}"
        assert exc.code in MEANINGS, f"{what}: undocumented code {exc.code}"
        assert "\n" not in exc.message, f"{what}: a reason of more than one line"
        return what, exc.code
    except Exception:
        pytest.fail(f"{what}: not a Pressroom error\n{traceback.format_exc()}")
    return what, "delivered"


@pytest.mark.parametrize("case", range(DEFAULT_CASES))
def test_a_damaged_pdf_is_delivered_held_or_refused_with_a_code(
    case: int, seed_bytes: list[bytes], engine: TesseractEngine, tmp_path: Path
) -> None:
    run_case(case, seed_bytes, engine, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("case", range(DEFAULT_CASES, DEFAULT_CASES + SLOW_CASES))
def test_many_more_damaged_pdfs(
    case: int, seed_bytes: list[bytes], engine: TesseractEngine, tmp_path: Path
) -> None:
    run_case(case, seed_bytes, engine, tmp_path)


IMAGE_CASES = 10
SLOW_IMAGE_CASES = 200


@pytest.fixture(scope="module")
def image_bytes() -> list[bytes]:
    return image_seeds()


def run_image_case(case: int, seeds_: list[bytes], engine: TesseractEngine, folder: Path) -> None:
    """A damaged scan (PNG, JPEG, TIFF) through the same doors: Pillow's errors and warnings
    as a damaged PDF's are."""
    data, how = image_mutant(seeds_[case % len(seeds_)], case)
    what = f"image case {case}: seed {case % len(seeds_)}, {how}"
    source = folder / "scan"
    source.write_bytes(data)
    policy = parse_policy("name", now=0) if case % 2 else None
    options = JobOptions(template=resolve_template("plain"), deadline=time.monotonic() + 60)
    try:
        raised(Processing(policy)(source, folder / "out.pdf", options, engine))
    except PressroomError as exc:
        assert exc.code != "INTERNAL_ERROR", f"{what}: {exc.one_line()}"
        assert exc.code in MEANINGS, f"{what}: undocumented code {exc.code}"
    except Exception:
        pytest.fail(f"{what}: not a Pressroom error\n{traceback.format_exc()}")


@pytest.mark.parametrize("case", range(IMAGE_CASES))
def test_a_damaged_scan_is_delivered_held_or_refused_with_a_code(
    case: int, image_bytes: list[bytes], engine: TesseractEngine, tmp_path: Path
) -> None:
    run_image_case(case, image_bytes, engine, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("case", range(IMAGE_CASES, IMAGE_CASES + SLOW_IMAGE_CASES))
def test_many_more_damaged_scans(
    case: int, image_bytes: list[bytes], engine: TesseractEngine, tmp_path: Path
) -> None:
    run_image_case(case, image_bytes, engine, tmp_path)


def test_the_fuzzer_reaches_every_stage(
    seed_bytes: list[bytes], engine: TesseractEngine, tmp_path: Path
) -> None:
    """The seeds themselves go all the way through, plain and redacted: a fuzzer whose every
    input is refused at the door would test nothing past it."""
    names = parse_policy("name", now=0)
    for i, data in enumerate(seed_bytes):
        source = tmp_path / f"seed{i}.pdf"
        source.write_bytes(data)
        for policy in (None, names):
            out = tmp_path / f"out{i}.pdf"
            try:
                raised(
                    Processing(policy)(
                        source, out, JobOptions(template=resolve_template("plain")), engine
                    )
                )
            except PressroomError as exc:  # a redaction may be held for a person: it got there
                assert policy is not None and exc.exit_code == 3, f"seed {i}: {exc.one_line()}"
            assert out.exists(), f"seed {i}"


# -- a user password: ENCRYPTED, one line, exit 2, in every door ------------------------------


def _encrypted(path: Path) -> Path:
    """A one-page letter that opens only with its user password."""
    with pikepdf.open(ROOT / "samples" / "letter.pdf") as pdf:
        pdf.save(path, encryption=pikepdf.Encryption(user="secret", owner="owner"))
    return path


@pytest.mark.parametrize("redact", [[], ["--redact", "name"]], ids=["plain", "redaction"])
def test_a_pdf_with_a_user_password_is_refused_encrypted_in_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    redact: list[str],
) -> None:
    from pressroom.cli import main

    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "data"))
    src = _encrypted(tmp_path / "locked.pdf")
    assert main(["process", *redact, str(src), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].startswith("ENCRYPTED: locked.pdf: ")
    assert "Traceback" not in err and "INTERNAL_ERROR" not in err
    assert not list((tmp_path / "out").glob("*.pdf"))


def test_detect_refuses_a_pdf_with_a_user_password_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pressroom.cli import main

    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "data"))
    src = _encrypted(tmp_path / "locked.pdf")
    assert main(["detect", "--redact", "name", str(src)]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines()[-1].startswith("ENCRYPTED: locked.pdf: ")
    assert "Traceback" not in captured.err and captured.out == ""


@pytest.mark.parametrize("form", [{}, {"redact": "name"}], ids=["plain", "redaction"])
def test_the_service_rejects_a_pdf_with_a_user_password_encrypted(
    services: Services, tmp_path: Path, caplog: pytest.LogCaptureFixture, form: dict[str, str]
) -> None:
    key = services.store.tenancy.create_key("acme", now=services.clock())
    client = TestClient(create_app(services), client=("127.0.0.1", 50000))
    data = _encrypted(tmp_path / "locked.pdf").read_bytes()
    response = client.post(
        "/v1/jobs",
        headers={"Authorization": f"Bearer {key}"},
        files={"file": ("locked.pdf", io.BytesIO(data))},
        data=form,
    )
    assert response.status_code == 202, response.text
    caplog.set_level(logging.INFO)
    runner = JobRunner(services, FakeOcrEngine(), "w1")
    while runner.run_next((Lane.BULK, Lane.INTERACTIVE)) is not None:
        pass
    job = client.get(
        f"/v1/jobs/{response.json()['id']}", headers={"Authorization": f"Bearer {key}"}
    ).json()
    assert (job["state"], job["reason"]) == ("rejected", "ENCRYPTED")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


# -- a lone surrogate in a page's text ---------------------------------------------------------


def _lone_surrogate(path: Path) -> Path:
    """A page whose font's ToUnicode map gives one glyph (the tilde) a lone UTF-16 surrogate,
    drawn beside two names."""
    pdf = pikepdf.Pdf.new()
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /X def "
        b"1 begincodespacerange <00> <FF> endcodespacerange "
        b"1 beginbfrange <20> <7D> <0020> endbfrange "
        b"1 beginbfchar <7E> <D800> endbfchar endcmap "
        b"CMapName currentdict /CMap defineresource pop end end"
    )
    font = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name.Helvetica,
            Encoding=Name.WinAnsiEncoding,
            ToUnicode=pdf.make_stream(cmap),
        )
    )
    ops = (
        b"BT /F1 12 Tf 20 60 Td (Dear Jane Whitfield~, your account is open.) Tj ET "
        b"BT /F1 12 Tf 20 40 Td (Signed ~Mary Quince~ on the 3rd.) Tj ET"
    )
    pdf.pages.append(
        pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, 300, 100]),
                Resources=Dictionary(Font=Dictionary(F1=font)),
                Contents=pdf.make_stream(ops),
            )
        )
    )
    pdf.save(path)
    return path


def test_detect_reads_a_page_whose_text_holds_a_lone_surrogate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pressroom.cli import main

    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "data"))
    src = _lone_surrogate(tmp_path / "odd.pdf")
    assert main(["detect", "--redact", "name", str(src)]) == 0
    captured = capsys.readouterr()
    values = {json.loads(line)["value"] for line in captured.out.splitlines()}
    assert {"Jane Whitfield", "Mary Quince"} <= values
    assert captured.err == ""


def test_a_redaction_burns_the_names_beside_a_lone_surrogate(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = _lone_surrogate(tmp_path / "odd.pdf")
    out = tmp_path / "out.pdf"
    options = JobOptions(template=resolve_template("plain"), sidecar=True)
    result = Processing(parse_policy("name", now=0))(src, out, options, engine)
    assert result.redacted.get("name", 0) >= 2
    assert find_leaks(out, ["Jane Whitfield", "Whitfield", "Quince"]) == []


def test_a_page_too_wide_for_ocr_is_a_pixel_limit_not_a_deadline(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    """A page 200 inches wide and a point tall renders 60,001 pixels wide for a redaction:
    Tesseract fails such an image at once, which read as DEADLINE_EXCEEDED with no deadline
    set."""
    pdf = pikepdf.Pdf.new()
    pdf.add_blank_page(page_size=(14400, 3))
    pdf.pages[0].obj.MediaBox = Array([0, 0, 14400, 1])
    src = tmp_path / "wide.pdf"
    pdf.save(src)
    with pytest.raises(PressroomError) as caught:
        raised(
            Processing(parse_policy("name", now=0))(
                src, tmp_path / "out.pdf", JobOptions(template=resolve_template("plain")), engine
            )
        )
    assert caught.value.code == "PIXEL_LIMIT", caught.value.one_line()
