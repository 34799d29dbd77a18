"""A fake OCR engine for born-digital documents: it "reads" a page image by handing back the
source PDF's own words where that image still shows them (a word under a black box is not
read), so tests of redaction around born-digital pages run in a fraction of Tesseract's time
and still see what the pixels show. Test code, never shipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pypdfium2
from PIL import Image

from pressroom.models import Box, OcrResult, Word
from pressroom.redact.text import extracted_words

THUMB = (48, 64)


@dataclass
class _Page:
    width_pt: float
    height_pt: float
    words: list[Word]  # boxes in points
    thumb: np.ndarray


@dataclass
class EchoOcrEngine:
    """Reads any image of one of ``source``'s pages (the source itself, or an output built from
    it at any scale, without bands) as that page's own words, each where the image still has
    ink that is not a burned box."""

    source: Path
    confidence: float = 94.0
    pages: list[_Page] = field(default_factory=list)

    def __post_init__(self) -> None:
        doc = pypdfium2.PdfDocument(self.source)
        try:
            for page in doc:
                w, h = page.get_size()
                words = extracted_words(page, 1.0)
                image = page.render(scale=1).to_pil().convert("L")
                self.pages.append(_Page(w, h, words, _thumb(image)))
        finally:
            doc.close()

    @property
    def name(self) -> str:
        return "echo-ocr"

    def recognize(
        self,
        image: Image.Image,
        *,
        dpi: float,
        timeout: float | None = None,
        adaptive: bool = False,
    ) -> OcrResult:
        grey = image.convert("L")
        thumb = _thumb(grey)
        page = min(self.pages, key=lambda p: float(np.abs(p.thumb - thumb).mean()))
        k = grey.width / page.width_pt
        pixels = np.asarray(grey)
        out: list[Word] = []
        for w in page.words:
            box = Box(w.box.x0 * k, w.box.y0 * k, w.box.x1 * k, w.box.y1 * k)
            inside = pixels[
                max(0, round(box.y0)) : max(1, round(box.y1)),
                max(0, round(box.x0)) : max(1, round(box.x1)),
            ]
            if inside.size == 0 or inside.min() > 200 or inside.mean() < 60:
                continue  # nothing shows there, or a burned box does
            out.append(
                Word(
                    w.text,
                    self.confidence,
                    box,
                    (box.x0, box.y1 - 0.2 * box.height),
                    box.width,
                    box.height * 0.8,
                    0.0,
                    w.line,
                )
            )
        alpha = sum(1 for w in out if sum(c.isalpha() for c in w.text) >= 3)
        return OcrResult(tuple(out), self.confidence, alpha, alpha)

    def detect_orientation(self, image: Image.Image, *, dpi: float) -> tuple[int, float] | None:
        return (0, 10.0)


def _thumb(image: Image.Image) -> np.ndarray:
    return np.asarray(image.resize(THUMB), dtype=np.float32)
