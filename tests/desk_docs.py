"""A scanned page for the review desk's tests, made here with its ground truth: a person detection
finds ("Margaret Okafor"), a building detection takes for a person ("Ada Lovelace" of the Ada
Lovelace Building: a false positive a reviewer removes; "Grace Hopper Building" was one until
issue 41's model and evidence stopped taking it for a person), and a code word no recogniser
knows ("ZEPHYR": a miss a reviewer boxes by hand). Word places are known from the drawing, in
points of the upright page."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from pressroom.jobs.model import Lane
from pressroom.pipeline.ocr import OcrEngine
from pressroom.redact.plan import normalise
from pressroom.service import Services
from pressroom.worker.runner import JobRunner
from tests.readers import read_all

DPI = 300
LINES = (
    "Payout approved for Margaret Okafor on 3 May.",
    "The form was checked by Ada Lovelace Building staff.",
    "Meeting held in the east wing, Room 4.",
    "Project codeword ZEPHYR stays internal.",
)
PERSON = "Margaret Okafor"
FALSE_POSITIVE = "Ada Lovelace"
MISSED = "ZEPHYR"
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


@dataclass(frozen=True, slots=True)
class DeskDoc:
    path: Path
    width_pt: float
    height_pt: float
    boxes: dict[str, tuple[float, float, float, float]]  # phrase → its box in points


def desk_scan(path: Path) -> DeskDoc:
    """The page as a 300-dpi PNG at ``path``, and where each phrase of interest stands."""
    image = Image.new("L", (2550, 1000), 255)
    draw = ImageDraw.Draw(image)
    face = ImageFont.truetype(FONT, 42)
    boxes: dict[str, tuple[float, float, float, float]] = {}
    k = 72.0 / DPI
    for n, line in enumerate(LINES):
        x, y = 200, 150 + 90 * n
        draw.text((x, y), line, font=face, fill=0)
        for phrase in (PERSON, FALSE_POSITIVE, MISSED):
            at = line.find(phrase)
            if at >= 0:
                left = x + draw.textlength(line[:at], font=face)
                x0, y0, x1, y1 = draw.textbbox((left, y), phrase, font=face)
                boxes[phrase] = (x0 * k, y0 * k, x1 * k, y1 * k)
    image.save(path, dpi=(DPI, DPI))
    return DeskDoc(path, image.width * k, image.height * k, boxes)


def grown(box: tuple[float, float, float, float], pad: float) -> tuple[float, float, float, float]:
    return (box[0] - pad, box[1] - pad, box[2] + pad, box[3] + pad)


def work(services: Services, engine: OcrEngine) -> None:
    """A worker of both lanes runs every job waiting, then stops."""
    runner = JobRunner(services, engine, "w-desk")
    while runner.run_next((Lane.BULK, Lane.INTERACTIVE)) is not None:
        pass


def texts(pdf: Path) -> dict[str, str]:
    """The output as every reader a user might use gives it (poppler, PDFium, pdfminer, pdf.js,
    PDFBox, MuPDF, Ghostscript), each normalised as values are compared."""
    return {reader: normalise(" ".join(pages)) for reader, pages in read_all(pdf).items()}
