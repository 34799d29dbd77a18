"""The document model of the varied corpus: pages as drawn, and the ground truth on them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CLASSES = ("name", "address", "account-number")
KEEP = "keep"
SPLITS = ("dev", "held-out")
KINDS = (
    "news",
    "feature",
    "interview",
    "statement",
    "letter",
    "form",
    "sideways",
    "faint",
    "invoice",
)
SCAN, DIGITAL = "scan", "digital"
FAINT_GREY = 120  # ink lighter than this is faint print
Box = tuple[float, float, float, float]  # points, upright page, origin top left, y down


@dataclass(frozen=True, slots=True)
class Piece:
    """Where one line's share of a mention (or of a keep string) was drawn."""

    page: int
    text: str
    box: Box  # the line's glyph box around it
    cores: tuple[Box, ...]  # the x-height band of each word part: solid black once burned


@dataclass(frozen=True, slots=True)
class Mention:
    """One occurrence of a value (``kind`` is a class) or of a string that must stay (``keep``).

    ``form`` says how it is written: for names ``full``, ``surname`` (the name a person goes by
    alone), ``given``, ``possessive``, ``title`` (Ms Okafor), ``capitals`` (OKAFOR, ADAEZE
    OKAFOR, DR OKAFOR), ``initial`` (K NAKASHIMA), ``initial-last`` (WIŚNIEWSKA M); for accounts
    ``iban``, ``iban-compact`` (no spaces), ``sort-code``, ``account``, ``card``; for addresses
    ``block`` (several lines), ``inline``, ``cell``. ``+wrapped`` is added when the value runs
    over two lines, ``+faint`` when it is printed in light grey.
    """

    kind: str
    text: str
    form: str
    pieces: tuple[Piece, ...]
    grey: int = 0

    @property
    def faint(self) -> bool:
        return self.grey >= FAINT_GREY


@dataclass(frozen=True, slots=True)
class Drawn:
    """One word as drawn: for precision, what the output lost and whose it was."""

    page: int
    text: str
    box: Box
    core: Box
    owner: str | None  # the class (or "keep") of the mention it belongs to


@dataclass(frozen=True, slots=True)
class Glyphs:
    text: str
    x: float
    base: float
    size: float
    font: str
    grey: int


@dataclass(frozen=True, slots=True)
class Rule:
    x0: float
    y0: float
    x1: float
    y1: float
    width: float
    grey: int


@dataclass
class Page:
    """One page as laid out, in points, upright."""

    width: float
    height: float
    scan_turn: int = 0  # clockwise degrees the page lies turned on the scanner glass
    glyphs: list[Glyphs] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)


@dataclass
class Document:
    """A generated document: its pages as drawn, and the ground truth of what is on them."""

    id: str
    kind: str
    split: str
    medium: str  # "scan" or "digital"
    fmt: str  # what a scan arrives as: pdf, png, jpeg or tiff ("pdf" for born-digital)
    seed: int
    pages: list[Page]
    mentions: list[Mention]  # every value occurrence, by class
    keeps: list[Mention]  # strings that must stay
    words: list[Drawn]
    skews: list[float]  # ccw degrees per page, scans only
    noise: float  # grey-level sigma of the scanner noise

    def values(self, kind: str | None = None) -> list[Mention]:
        return [m for m in self.mentions if kind is None or m.kind == kind]

    @property
    def faint_pages(self) -> set[int]:
        return {g for g, p in enumerate(self.pages) if any(x.grey >= FAINT_GREY for x in p.glyphs)}

    @property
    def text(self) -> str:
        """The words of every page in drawing order (for reading and debugging)."""
        return "\n".join(
            " ".join(w.text for w in self.words if w.page == n) for n in range(len(self.pages))
        )

    def truth(self) -> dict[str, Any]:
        """The ground truth as plain data (JSON-ready)."""

        def one(m: Mention) -> dict[str, Any]:
            return {
                "class": m.kind,
                "text": m.text,
                "form": m.form,
                "grey": m.grey,
                "pieces": [
                    {"page": p.page + 1, "text": p.text, "box": list(p.box)} for p in m.pieces
                ],
            }

        return {
            "id": self.id,
            "kind": self.kind,
            "split": self.split,
            "medium": self.medium,
            "format": self.fmt,
            "pages": [
                {"width": p.width, "height": p.height, "scan_turn": p.scan_turn} for p in self.pages
            ],
            "mentions": [one(m) for m in self.mentions],
            "keep": [one(k) for k in self.keeps],
        }
