"""Stage names and the timer that records them: one spelling for the pipeline, the worker, metrics
and the dashboard, so a stored timing always means the same stage."""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from pressroom import tracing


class Stage(enum.StrEnum):
    """Every stage a job's timings name, in the order a job runs them. The values are what is
    stored and exported: never change one (stored timings, metric labels and dashboards read
    them)."""

    QUEUE = "queue"  # the worker's, around the pipeline
    VERIFY = "verify"
    FETCH = "fetch"
    SCAN = "scan"  # the worker's: the malware scanner reads the source before anything else
    INSPECT = "inspect"  # the pipeline's, every job
    RASTER = "raster"
    OCR = "ocr"
    STRAIGHTEN = "straighten"
    DETECT = "detect"  # redaction jobs only
    BURN = "burn"
    RENDER = "render"  # every job: page placement, cover, save
    CHECK = "check"
    LEAK_CHECK = "leak_check"  # redaction jobs only
    REDETECT = "redetect"
    # a redaction job's whole pipeline, start to end: kept beside its stages because the
    # dashboard and the stage histograms have shown it since redaction began
    REDACT = "redact"
    PROCESS = "process"  # the worker's: the whole pipeline, plain or redaction
    PUBLISH = "publish"
    SCRATCH = "scratch"  # the job's scratch folder, from creation to removal


class StageTimer:
    """Seconds spent in each stage of one document, summed over every time a stage is entered
    (pages, attempts at a build); each stage is also a tracing span."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.totals: dict[str, float] = {}
        self.clock = clock  # a test's counting clock shows which stage holds which

    @contextmanager
    def stage(self, stage: Stage) -> Iterator[None]:
        start = self.clock()
        try:
            with tracing.span(stage.value):
                yield
        finally:
            self.add(stage, self.clock() - start)

    def add(self, stage: Stage, seconds: float) -> None:
        self.totals[stage.value] = self.totals.get(stage.value, 0.0) + seconds
