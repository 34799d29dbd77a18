"""What every pass of one redaction reads: the source as redaction reads it, where the output
goes, the job's options, the engine and its OCR stage, the detector, the stage timer and the
progress callback. Made once per document (``redact.run``) and handed to each pass (``scan``,
``build``, ``readback``) in place of a dozen parameters forwarded from one to the next."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from pressroom.models import DocumentInfo
from pressroom.pipeline.core import JobOptions, Progress
from pressroom.pipeline.ocr import OcrEngine, OcrStage
from pressroom.pixels import PixelBudget
from pressroom.redact.detect.detector import Detector
from pressroom.redact.source import RedactionSource
from pressroom.stages import StageTimer


@dataclass(frozen=True, slots=True)
class RunContext:
    """One redaction's fixed inputs; ``stack`` holds what stays open for its length (the
    source's documents)."""

    stack: ExitStack
    src: RedactionSource
    output: Path  # the scratch path each build writes
    options: JobOptions
    engine: OcrEngine
    ocr: OcrStage
    detector: Detector
    timer: StageTimer
    progress: Progress | None = None

    @property
    def info(self) -> DocumentInfo:
        return self.src.info

    def budget(self) -> PixelBudget:
        """A fresh count of the bitmaps one pass makes, against the job's pixel limits."""
        return PixelBudget(self.options.limits)
