"""Stage names and per-stage timings: one spelling that stored timings keep, and every job —
plain or redaction, chosen in one place — reporting the stages it ran."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from pressroom.pipeline.core import JobOptions
from pressroom.processing import Processing
from pressroom.redact.policy import RedactionPolicy
from pressroom.stages import Stage, StageTimer
from pressroom.synth import save_png
from pressroom.templates import resolve_template
from pressroom.testing import FakeOcrEngine
from tests.helpers import small_scan

LINES = ("Waiver signed by the participant", "Payout approved 2026")
# account numbers only: no language model to load in a unit test
POLICY = RedactionPolicy(("account-number",))


def test_stage_names_are_the_strings_stored_timings_and_metrics_already_use() -> None:
    # a renamed value would split a stage's history in the database, metrics and dashboard
    assert {s.name: s.value for s in Stage} == {
        "QUEUE": "queue",
        "VERIFY": "verify",
        "FETCH": "fetch",
        "SCAN": "scan",
        "PROCESS": "process",
        "PUBLISH": "publish",
        "SCRATCH": "scratch",
        "INSPECT": "inspect",
        "RASTER": "raster",
        "OCR": "ocr",
        "STRAIGHTEN": "straighten",
        "RENDER": "render",
        "CHECK": "check",
        "DETECT": "detect",
        "BURN": "burn",
        "LEAK_CHECK": "leak_check",
        "REDETECT": "redetect",
        "REDACT": "redact",
    }


def test_a_stage_entered_twice_reports_its_sum_under_its_stored_name() -> None:
    timer = StageTimer()
    timer.add(Stage.OCR, 1.5)
    timer.add(Stage.OCR, 0.25)
    with timer.stage(Stage.CHECK):
        pass
    assert list(timer.totals) == ["ocr", "check"]
    assert timer.totals["ocr"] == 1.75 and timer.totals["check"] >= 0.0
    assert all(type(name) is str for name in timer.totals)  # plain strings for the store


def _scan(tmp: Path) -> Path:
    return save_png(small_scan(dpi=150).image, tmp / "scan.png", 150)


def test_a_plain_job_reports_its_pipeline_stages(tmp_path: Path) -> None:
    options = JobOptions(template=resolve_template("sample"))
    processing = Processing(None)
    result = processing(_scan(tmp_path), tmp_path / "out.pdf", options, FakeOcrEngine(lines=LINES))
    assert {"inspect", "raster", "ocr", "render", "check"} <= set(result.timings)
    assert not {"redact", "detect", "leak_check", "redetect"} & set(result.timings)
    assert result.redacted == {} and result.output_pages == 2


def test_a_redaction_job_reports_its_stages_on_the_same_core_and_its_total(
    tmp_path: Path,
) -> None:
    options = JobOptions(template=resolve_template("sample"))
    processing = Processing(POLICY)
    # a clock that only counts its readings: a stage that holds another reads it before and
    # after every reading the inner one makes, with no stopwatch in the test
    readings = itertools.count()
    timer = StageTimer(clock=lambda: float(next(readings)))
    result = processing(
        _scan(tmp_path), tmp_path / "out.pdf", options, FakeOcrEngine(lines=LINES), timer=timer
    )
    stages = set(result.timings)
    # the core's, as any job's; redaction's own; and the whole, as the dashboard has shown it
    assert {"inspect", "raster", "ocr", "render", "check"} <= stages
    assert {"detect", "leak_check", "redetect", "redact"} <= stages
    assert stages <= {s.value for s in Stage}
    # the total holds every other stage: each one's readings fall inside its window
    total = result.timings["redact"]
    assert all(readings < total for name, readings in result.timings.items() if name != "redact")
    assert result.output_pages == 2  # the cover, from the same core


@pytest.mark.parametrize(
    ("policy", "redacts"),
    [(None, False), (RedactionPolicy(()), False), (POLICY, True)],
)
def test_the_job_options_choose_the_pipeline_and_whether_a_doubtful_output_is_kept(
    policy: RedactionPolicy | None, redacts: bool
) -> None:
    processing = Processing(policy)
    assert processing.redacts is redacts
    # only a redaction's doubtful output is held for a reviewer
    assert processing.holds_output is redacts
