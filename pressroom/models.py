"""Frozen domain values that stages pass to each other."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from PIL import Image


class SourceKind(enum.Enum):
    PDF = "pdf"
    PNG = "png"
    JPEG = "jpeg"
    TIFF = "tiff"

    @property
    def mime(self) -> str:
        return {
            SourceKind.PDF: "application/pdf",
            SourceKind.PNG: "image/png",
            SourceKind.JPEG: "image/jpeg",
            SourceKind.TIFF: "image/tiff",
        }[self]


# what OCR does with PDF pages that carry text already (pipeline.ocrmode)
OcrMode = Literal["skip", "redo", "force"]
OCR_MODES: tuple[OcrMode, ...] = ("skip", "redo", "force")


@dataclass(frozen=True, slots=True)
class Box:
    """Axis-aligned rectangle in pixels, origin top-left, y down."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0


@dataclass(frozen=True, slots=True)
class Word:
    """One recognised word, in the upright page's pixel frame.

    ``origin`` is the left end of the baseline, ``advance`` the length along the baseline and
    ``angle`` the baseline's counter-clockwise rotation in degrees (non-zero on skewed scans),
    which is everything needed to lay invisible text exactly over the ink.
    """

    text: str
    confidence: float
    box: Box
    origin: tuple[float, float]
    advance: float
    size: float
    angle: float = 0.0
    line: int = 0


@dataclass(frozen=True, slots=True)
class PageImage:
    """A page as pixels, already turned upright for recognition."""

    index: int
    image: Image.Image
    dpi: float


@dataclass(frozen=True, slots=True)
class OcrResult:
    """What the engine read from one image."""

    words: tuple[Word, ...]
    mean_confidence: float
    dictionary_words: int = 0  # words of 3+ letters the engine found in its dictionary
    alpha_words: int = 0  # words of 3+ letters
    vertical: bool = False  # the engine read top-to-bottom lines: a page turned 90° clockwise

    @property
    def text(self) -> str:
        return words_to_text(self.words)

    @property
    def real_chars(self) -> int:
        return sum(c.isalnum() for w in self.words for c in w.text)


def words_to_text(words: tuple[Word, ...] | list[Word]) -> str:
    lines: list[list[str]] = []
    last: int | None = None
    for w in words:
        if last is None or w.line != last:
            lines.append([])
            last = w.line
        lines[-1].append(w.text)
    return "\n".join(" ".join(ws) for ws in lines)


@dataclass(frozen=True, slots=True)
class PageText:
    """The text of one output page and how it was obtained."""

    index: int
    method: str  # "ocr" | "kept" (the source already had text) | "empty"
    words: tuple[Word, ...] = ()
    width_px: int = 0
    height_px: int = 0
    dpi: float = 300.0
    rotation: int = 0  # clockwise degrees applied to make the page upright
    skew: float = 0.0  # degrees measured before recognition
    mean_confidence: float = 0.0
    real_chars: int = 0
    # text the page shows of its own beside what OCR read (a page read again under --ocr
    # redo keeps its visible text): it reads back from the output with the OCR layer
    shown: str = ""

    @property
    def text(self) -> str:
        return words_to_text(self.words)


@dataclass(frozen=True, slots=True)
class PageInfo:
    """What inspection learnt about one source page, in points of the displayed page."""

    index: int
    width_pt: float
    height_pt: float
    rotate: int  # the source's own /Rotate, clockwise
    native_dpi: float | None
    has_text: bool
    text_chars: int
    plain_scan: bool = False  # one upright page-covering image and nothing else (PDF only)


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    kind: SourceKind
    pages: tuple[PageInfo, ...]
    size_bytes: int
    sha256: str
