"""Fakes shipped with the package, so tests of everything above the engines need no Tesseract,
and services over the in-memory job store (``pressroom.memstore``: its own package, being
seven ports' worth of code), so tests of the worker and the intake need no database."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from PIL import Image, ImageDraw, ImageStat

from pressroom.jobs.admission import Admission
from pressroom.jobs.backoff import RetryPolicy
from pressroom.labels import Labels
from pressroom.memstore import MemoryJobStore
from pressroom.models import Box, OcrResult, Word
from pressroom.service import Services
from pressroom.settings import Settings
from pressroom.signing import Signer
from pressroom.storage.local import LocalBlobStore
from pressroom.verify import verifier_from_settings

if TYPE_CHECKING:
    from pressroom.jobs.sql import SqlJobStore

__all__ = ["FakeOcrEngine", "MemoryJobStore", "draw_marker", "memory_services"]

# signs the links and seals the labels of memory services: a test's, never a deployment's
TEST_SECRET = b"pressroom-testing-signing-key-not-for-production"


def memory_services(
    root: Path,
    *,
    settings: Settings | None = None,
    clock: Callable[[], float] = time.time,
    retry: RetryPolicy | None = None,
) -> Services:
    """Services over a fresh in-memory job store and a local blob folder under ``root``
    (``root/blobs``; settings' data and scratch folders under ``root`` unless given)."""
    if settings is None:
        settings = Settings(data_dir=root / "data", scratch_dir=root / "scratch")
    settings.scratch_dir.mkdir(parents=True, exist_ok=True)
    store = MemoryJobStore()
    return Services(
        settings=settings,
        # ``Services`` names the SQL store's class; the memory store has the same parts, each
        # checked against its port (``memstore._ports``), and nothing here reads ``store.db``
        store=cast("SqlJobStore", store),
        blobs=LocalBlobStore(root / "blobs"),
        signer=Signer(TEST_SECRET, ttl_s=settings.link_ttl_s),
        verifier=verifier_from_settings(store.tenancy, settings.verifier),
        retry=retry or RetryPolicy(max_attempts=settings.max_attempts),
        clock=clock,
        admission=Admission.from_settings(settings.admission),
        labels=Labels(TEST_SECRET),
    )


def draw_marker(image: Image.Image) -> Image.Image:
    """Blacken the top-left corner block that ``FakeOcrEngine(require_marker=True)`` looks for."""
    out = image.copy()
    ImageDraw.Draw(out).rectangle((0, 0, out.width // 8, out.height // 8), fill=0)
    return out


@dataclass
class FakeOcrEngine:
    """Reads the same scripted lines from every image, laid out from the top-left corner.

    With ``require_marker`` it reads only images whose top-left corner is dark (see
    ``draw_marker``) and returns garbage otherwise, so orientation handling can be tested with
    real image turns; ``orientation`` is what its orientation detector answers.
    """

    lines: Sequence[str] = ("Pressroom fake engine reads this line",)
    confidence: float = 92.0
    require_marker: bool = False
    orientation: tuple[int, float] | None = None
    calls: list[tuple[int, int]] = field(default_factory=list)
    orientation_calls: int = 0

    @property
    def name(self) -> str:
        return "fake-ocr"

    def _upright(self, image: Image.Image) -> bool:
        corner = image.convert("L").crop(
            (0, 0, max(image.width // 10, 1), max(image.height // 10, 1))
        )
        return float(ImageStat.Stat(corner).mean[0]) < 128

    def recognize(
        self,
        image: Image.Image,
        *,
        dpi: float,
        timeout: float | None = None,
        adaptive: bool = False,
    ) -> OcrResult:
        self.calls.append(image.size)
        if self.require_marker and not self._upright(image):
            junk = Word("~%#", 12.0, Box(1, 1, 30, 12), (1.0, 10.0), 29.0, 10.0, 0.0, 0)
            return OcrResult((junk,), 12.0, 0, 0)
        line_h = max(image.height // 40, 10)
        char_w = max(line_h // 2, 4)
        words: list[Word] = []
        for n, line in enumerate(self.lines):
            x = float(image.width // 4)
            top = float(image.height // 4 + line_h * 2 * n)
            base = top + line_h * 0.8
            for token in line.split():
                w = float(char_w * len(token))
                words.append(
                    Word(
                        token,
                        self.confidence,
                        Box(x, top, x + w, top + line_h),
                        (x, base),
                        w,
                        line_h * 0.8,
                        0.0,
                        n,
                    )
                )
                x += w + char_w
        alpha = sum(1 for w in words if sum(c.isalpha() for c in w.text) >= 3)
        return OcrResult(tuple(words), self.confidence, alpha, alpha)

    def detect_orientation(self, image: Image.Image, *, dpi: float) -> tuple[int, float] | None:
        self.orientation_calls += 1
        return self.orientation
