"""Reading a redacted output back three ways (PDFium's text, poppler's ``pdftotext`` and OCR of
its pixels) and scoring it against the ground truth: recall, burned words, kept strings."""

from __future__ import annotations

import html
import re
import subprocess
import time
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from corpora.documents.model import CLASSES, Box, Document, Drawn, Mention, Piece
from corpora.documents.render import render, skewed

if TYPE_CHECKING:
    from pressroom.pipeline.ocr import OcrEngine
    from pressroom.redact.policy import RedactionPolicy

_FOLD = str.maketrans(
    {"đ": "d", "ø": "o", "ł": "l", "þ": "th", "æ": "ae", "œ": "oe", "\u0131": "i", "ð": "d"}
)
READERS = ("pdfium", "poppler", "ocr")
TITLES = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "prof", "sir", "dame", "rev"})
BURNED = 0.75  # share of a word's x-height band that is solid black once it is redacted


def normalise(text: str) -> str:
    """Case folded, accents folded, letters and digits only: how strings are compared."""
    decomposed = unicodedata.normalize("NFKD", text.casefold().translate(_FOLD))
    kept = "".join(c for c in decomposed if not unicodedata.combining(c))
    return re.sub(r"[\W_]+", "", kept)


def _within(hay: str, needle: str) -> bool:
    """``needle`` in ``hay``, allowing an OCR slip in longer strings (edit distance 1, or 2
    from 9, 3 from 16): a misread value is still a value a person reads."""
    if needle in hay:
        return True
    allowed = 3 if len(needle) >= 16 else 2 if len(needle) >= 9 else 1 if len(needle) >= 5 else 0
    if not allowed or len(hay) < len(needle) - allowed:
        return False
    # approximate substring (Sellers): the best edit distance of needle to any part of hay
    prev = [0] * (len(hay) + 1)
    for i, a in enumerate(needle, 1):
        cur = [i] + [0] * len(hay)
        for j, c in enumerate(hay, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a != c))
        prev = cur
    return min(prev) <= allowed


@dataclass(frozen=True, slots=True)
class ReadWord:
    text: str  # normalised
    box: Box


@dataclass
class Reading:
    """An output as three readers see it, each page in the document's upright frame."""

    words: dict[str, list[list[ReadWord]]]
    ink: list[np.ndarray]  # each page rendered grey at ``dpi``, upright
    dpi: float


def _turn(box: Box, w: float, h: float, degrees: int) -> Box:
    """A box of a w x h frame once the frame is turned ``degrees`` clockwise."""
    degrees %= 360
    x0, y0, x1, y1 = box
    if degrees == 90:
        return (h - y1, x0, h - y0, x1)
    if degrees == 180:
        return (w - x1, h - y1, w - x0, h - y0)
    if degrees == 270:
        return (y0, w - x1, y1, w - x0)
    return box


def _poppler(path: Path) -> list[tuple[float, float, list[tuple[str, Box]]]]:
    """``pdftotext -bbox``: per page its size and words, points, origin top left."""
    out = subprocess.run(
        ["pdftotext", "-bbox", "-enc", "UTF-8", str(path), "-"],
        capture_output=True,
        check=True,
        timeout=120,
    ).stdout.decode("utf-8", "replace")
    pages: list[tuple[float, float, list[tuple[str, Box]]]] = []
    for m in re.finditer(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', out, re.S):
        words = [
            (
                html.unescape(w.group(5)),
                (float(w.group(1)), float(w.group(2)), float(w.group(3)), float(w.group(4))),
            )
            for w in re.finditer(
                r'<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">'
                r"(.*?)</word>",
                m.group(3),
            )
        ]
        pages.append((float(m.group(1)), float(m.group(2)), words))
    return pages


def read_output(path: Path, doc: Document, engine: OcrEngine, dpi: float = 300.0) -> Reading:
    """Read ``path`` (a redacted ``doc``) with PDFium's text, poppler's and OCR of its pixels
    (a second OCR pass on a high threshold where the document has faint print)."""
    from pressroom.engines import pdfium
    from pressroom.redact.text import extracted_words, page_to_pixels

    words: dict[str, list[list[ReadWord]]] = {r: [] for r in READERS}
    ink: list[np.ndarray] = []
    poppler = _poppler(path)
    faint = doc.faint_pages
    k = dpi / 72.0
    with pdfium.open_pdf(path) as pdf:
        for n, page in enumerate(doc.pages):
            if n >= len(pdf):
                for r in READERS:
                    words[r].append([])
                ink.append(np.full((1, 1), 255, dtype=np.uint8))
                continue
            p = pdf[n]
            try:
                _m, (w, h) = page_to_pixels(p, 1.0)
                turn = 0
                if abs(w - page.height) < 3 and abs(h - page.width) < 3 and abs(w - h) > 3:
                    turn = (360 - page.scan_turn) % 360 if page.scan_turn else 90
                words["pdfium"].append(
                    [
                        ReadWord(
                            normalise(x.text),
                            _turn((x.box.x0, x.box.y0, x.box.x1, x.box.y1), w, h, turn),
                        )
                        for x in extracted_words(p, 1.0)
                    ]
                )
                image = p.render(scale=k, grayscale=True).to_pil().convert("L")
            finally:
                p.close()
            if turn:
                image = image.rotate(-turn, expand=True)
            ink.append(np.asarray(image, dtype=np.uint8))
            seen = list(engine.recognize(image, dpi=dpi).words)
            if n in faint:
                dark = image.point(lambda v: 0 if v < 215 else 255)
                seen += list(engine.recognize(dark, dpi=dpi).words)
            # what OCR makes of a black box ("hii", "|") is no reading of what was under it
            a = ink[-1]
            seen = [
                x
                for x in seen
                if (
                    a[int(x.box.y0) : int(x.box.y1) + 1, int(x.box.x0) : int(x.box.x1) + 1] < 60
                ).mean()
                < 0.6
            ]
            words["ocr"].append(
                [
                    ReadWord(
                        normalise(x.text), (x.box.x0 / k, x.box.y0 / k, x.box.x1 / k, x.box.y1 / k)
                    )
                    for x in seen
                ]
            )
            if n < len(poppler):
                pw, ph, pwords = poppler[n]
                words["poppler"].append(
                    [ReadWord(normalise(t), _turn(b, pw, ph, turn)) for t, b in pwords]
                )
            else:
                words["poppler"].append([])
    return Reading(words, ink, dpi)


def _area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def _meet(a: Box, b: Box) -> float:
    return _area((max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])))


@dataclass(frozen=True, slots=True)
class Seen:
    """One mention or keep string in an output: who still reads it, whether it was burned, and
    which of its words are still there to see (unburned: "Zdeněk" of "Zdeněk ████")."""

    mention: Mention
    readers: tuple[str, ...]
    burned: bool
    left: tuple[str, ...] = ()

    @property
    def whole(self) -> bool:
        """Removed, and no word of it left to see (titles aside)."""
        return self.removed and not self.left

    @property
    def removed(self) -> bool:
        return not self.readers and self.burned


@dataclass
class Outcome:
    """One document redacted and read back."""

    doc: Document
    dpi: int
    seconds: float = 0.0
    held: str | None = None  # why the document was held for review (the held copy is scored)
    error: str | None = None  # no output at all
    values: list[Seen] = field(default_factory=list)
    keeps: list[Seen] = field(default_factory=list)
    lost: list[tuple[Drawn, bool]] = field(default_factory=list)  # words burned; in a mention?

    @property
    def pages(self) -> int:
        return len(self.doc.pages)

    def missed(self, kind: str | None = None) -> list[Seen]:
        return [
            s for s in self.values if not s.removed and (kind is None or s.mention.kind == kind)
        ]

    def dropped(self) -> list[Seen]:
        """Keep strings that are no longer searchable or no longer visible."""
        return [s for s in self.keeps if s.burned or not ({"pdfium", "poppler"} & set(s.readers))]


class _Scorer:
    def __init__(self, doc: Document, reading: Reading) -> None:
        self.doc, self.reading = doc, reading

    def place(self, box: Box, page: int) -> Box:
        p = self.doc.pages[page]
        return skewed(box, p.width, p.height, self.doc.skews[page])

    def black(self, box: Box, page: int) -> float:
        ink = self.reading.ink[page]
        k = self.reading.dpi / 72.0
        x0, y0, x1, y1 = self.place(box, page)
        cut = ink[
            max(0, round(y0 * k)) : max(0, round(y1 * k)),
            max(0, round(x0 * k)) : max(0, round(x1 * k)),
        ]
        return float((cut < 60).mean()) if cut.size else 0.0

    def readers(self, piece: Piece) -> list[str]:
        needle = normalise(piece.text)
        box = self.place(piece.box, piece.page)
        out = []
        for reader in READERS:
            pages = self.reading.words[reader]
            if piece.page >= len(pages):
                continue
            near = sorted(
                (
                    w
                    for w in pages[piece.page]
                    if _meet(w.box, box) >= 0.3 * min(_area(w.box), _area(box)) > 0
                ),
                key=lambda w: w.box[0],  # a piece is one line
            )
            if needle and _within("".join(w.text for w in near), needle):
                out.append(reader)
        return out

    def seen(self, m: Mention) -> Seen:
        readers: set[str] = set()
        burned = True
        left: list[str] = []
        for piece in m.pieces:
            readers.update(self.readers(piece))
            black = [self.black(c, piece.page) >= BURNED for c in piece.cores]
            burned &= any(black)
            for word, gone in zip(piece.text.split(" "), black, strict=True):
                if not gone and len(normalise(word)) >= 2 and normalise(word) not in TITLES:
                    left.append(word)
        return Seen(m, tuple(r for r in READERS if r in readers), burned, tuple(left))

    def keep(self, m: Mention) -> Seen:
        readers: set[str] = set(READERS)
        burned = False
        for piece in m.pieces:
            readers &= set(self.readers(piece))
            burned |= any(self.black(c, piece.page) >= BURNED for c in piece.cores)
        return Seen(m, tuple(r for r in READERS if r in readers), burned)


def score(doc: Document, reading: Reading, dpi: int = 300) -> Outcome:
    s = _Scorer(doc, reading)
    out = Outcome(doc, dpi)
    out.values = [s.seen(m) for m in doc.mentions]
    out.keeps = [s.keep(m) for m in doc.keeps]
    out.lost = [
        (w, w.owner in CLASSES)
        for w in doc.words
        if any(ch.isalnum() for ch in w.text) and s.black(w.core, w.page) >= BURNED
    ]
    return out


def redact_and_score(
    doc: Document,
    folder: Path,
    dpi: int,
    engine: OcrEngine,
    policy: RedactionPolicy,
    *,
    source: Path | None = None,
) -> Outcome:
    """Render ``doc`` at ``dpi``, redact it with ``policy`` (timed), read the output back and
    score it. A document held for review is scored on its held copy, with the reason kept."""
    from pressroom.errors import PressroomError
    from pressroom.outcomes import Held
    from pressroom.pipeline.core import JobOptions
    from pressroom.redact.engine import redact_document
    from pressroom.templates import resolve_template

    src = source or render(doc, folder, dpi)
    out = folder / f"{doc.id}-{dpi}-redacted.pdf"
    out.unlink(missing_ok=True)
    held: str | None = None
    error: str | None = None
    start = time.perf_counter()
    try:
        done = redact_document(
            src, out, JobOptions(template=resolve_template(None)), policy, engine
        )
        if isinstance(done, Held):
            held = f"{type(done.reason).__name__}: {done.reason}"
    except PressroomError as exc:
        error = f"{type(exc).__name__}: {exc}"
    seconds = time.perf_counter() - start
    if not out.exists():
        return Outcome(doc, dpi, seconds, held, error or "no output written")
    result = score(doc, read_output(out, doc, engine), dpi)
    result.seconds, result.held, result.error = seconds, held, error
    return result


def fold(outcomes: Iterable[Outcome]) -> dict[str, tuple[int, int]]:
    """Removed and total mentions per class over many outcomes."""
    tally = {k: [0, 0] for k in CLASSES}
    for o in outcomes:
        for s in o.values:
            tally[s.mention.kind][0] += s.removed
            tally[s.mention.kind][1] += 1
    return {k: (v[0], v[1]) for k, v in tally.items()}
