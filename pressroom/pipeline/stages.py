"""Stage names and the timer that records them: one spelling for the pipeline, the worker, metrics
and the dashboard, so a stored timing always means the same stage."""

from __future__ import annotations

import enum
import time
from collections.abc import Iterator
from contextlib import contextmanager

from pressroom import tracing


class Stage(enum.StrEnum):
    """Every stage a job's timings name. The values are what is stored and exported: never
    change one (stored timings, metric labels and dashboards read them)."""

    # the worker's, around the pipeline
    QUEUE = "queue"
    VERIFY = "verify"
    FETCH = "fetch"
    PROCESS = "process"
    PUBLISH = "publish"
    SCRATCH = "scratch"
    # the pipeline's, every job
    INSPECT = "inspect"
    RASTER = "raster"
    OCR = "ocr"
    STRAIGHTEN = "straighten"
    RENDER = "render"
    CHECK = "check"
    # the pipeline's, redaction jobs only
    DETECT = "detect"
    BURN = "burn"
    LEAK_CHECK = "leak_check"
    REDETECT = "redetect"
    # a redaction job's whole pipeline, start to end: kept beside its stages because the
    # dashboard and the stage histograms have shown it since redaction began
    REDACT = "redact"


class StageTimer:
    """Seconds spent in each stage of one document, summed over every time a stage is entered
    (pages, attempts at a build); each stage is also a tracing span."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}

    @contextmanager
    def stage(self, stage: Stage) -> Iterator[None]:
        start = time.perf_counter()
        try:
            with tracing.span(stage.value):
                yield
        finally:
            self.add(stage, time.perf_counter() - start)

    def add(self, stage: Stage, seconds: float) -> None:
        self.totals[stage.value] = self.totals.get(stage.value, 0.0) + seconds
