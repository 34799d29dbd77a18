"""The same job run twice makes the same bytes, so a retry can tell an honest rerun from a
changed output: dates from the job's acceptance time, the document /ID from its content."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pikepdf
import pytest

from pressroom.engines.tesseract import TesseractEngine
from pressroom.pipeline import plain
from pressroom.pipeline.core import JobOptions
from pressroom.processing import Processing
from pressroom.redact.policy import RedactionPolicy, parse_policy
from pressroom.synth import draw_page, save_png, save_tiff
from pressroom.templates import resolve_template
from tests.helpers import delivered, small_scan

pytestmark = pytest.mark.integration

ACCEPTED = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
NO_POLICY = RedactionPolicy(())


def twice(
    source: Path,
    tmp: Path,
    engine: TesseractEngine,
    policy: RedactionPolicy = NO_POLICY,
    **options: bool,
) -> tuple[bytes, bytes]:
    """The job processed by two fresh runs, as a first attempt and its retry would."""
    outputs = []
    for attempt in ("first", "retry"):
        out = tmp / f"{attempt}.pdf"
        job = JobOptions(
            template=resolve_template("sample"), title="Forms", when=ACCEPTED, **options
        )
        delivered(Processing(policy)(source, out, job, engine))
        outputs.append(out.read_bytes())
    return outputs[0], outputs[1]


def assert_dated_by_acceptance(data: bytes, tmp: Path) -> None:
    """Every date the output carries is the job's acceptance time, never the clock's."""
    path = tmp / "dated.pdf"
    path.write_bytes(data)
    with pikepdf.open(path) as pdf:
        assert str(pdf.docinfo.CreationDate) == "D:20260304050607Z"
        assert str(pdf.docinfo.ModDate) == "D:20260304050607Z"
        meta = pdf.open_metadata()
        for name in ("xmp:CreateDate", "xmp:ModifyDate", "xmp:MetadataDate"):
            assert meta[name] == "2026-03-04T05:06:07Z", name
        # the /ID is the content's, the same on both runs (checked by the byte comparison)
        assert pdf.trailer.ID[0] == pdf.trailer.ID[1]


def test_a_plain_job_run_twice_is_byte_identical(tmp_path: Path, engine: TesseractEngine) -> None:
    source = save_png(small_scan(dpi=150, lines=3).image, tmp_path / "scan.png", 150)
    first, retry = twice(source, tmp_path, engine)
    assert first == retry
    assert_dated_by_acceptance(first, tmp_path)


def test_a_keep_pixels_job_run_twice_is_byte_identical(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    source = save_png(small_scan(dpi=150, lines=3).image, tmp_path / "scan.png", 150)
    first, retry = twice(source, tmp_path, engine, keep_pixels=True)
    assert first == retry
    assert_dated_by_acceptance(first, tmp_path)


def test_an_image_source_written_in_parts_run_twice_is_byte_identical(
    tmp_path: Path, engine: TesseractEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one page a part: the merge of part files is what a long scan goes through
    monkeypatch.setattr(plain, "PART_PAGES", 1)
    pages = [small_scan(seed=s, dpi=150, lines=2).image for s in (1, 2)]
    source = save_tiff(pages, tmp_path / "scan.tif", 150)
    first, retry = twice(source, tmp_path, engine)
    assert first == retry
    assert_dated_by_acceptance(first, tmp_path)


def test_a_redaction_job_run_twice_is_byte_identical(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    page = draw_page(
        ["Payout form for the summer programme.", "Account number: 12345678", "Sign below."],
        dpi=150,
        height_in=2.6,
    )
    source = save_png(page.image, tmp_path / "form.png", 150)
    first, retry = twice(source, tmp_path, engine, parse_policy("account-number", now=0))
    assert first == retry
    assert_dated_by_acceptance(first, tmp_path)
