"""A corpus of documents as varied as real ones, with ground truth, for measuring redaction.

The older generated corpus (``corpus.py``) is one form and one letter, again and again: names
after a cue, one value per line, everything in black on white. Detection tuned on it found none
of the names in a real news article or transcript. This module writes the documents people
actually send: two-column news, features, interview transcripts with speaker labels in capitals,
bank statements with transaction tables, letters with window-envelope address blocks, forms
with label and value in separate cells, a scan with a sideways page, faint grey print, an IBAN
wrapped over two lines — with names from many cultures (letters outside ASCII included) and with
text that must stay (organisations, places, dates, amounts, headlines, street-like words
outside addresses).

Every mention of a person, an address or an account number is listed with its class, its form
(full name, surname alone, possessive, capitals, ...), its exact string and where it was drawn;
so are the strings that must stay. The corpus has two halves, ``dev`` and ``held-out``, drawn
from different name, organisation and place lists and different sentence templates, so that
tuning on one does not leak into the other. Generation is deterministic for a seed and takes
well under a second a document; ``render`` writes a document as it would arrive (a noisy scan
at the resolution asked for — image PDF, PNG, JPEG or TIFF — or a born-digital PDF).

The second half of the module reads a redacted output back three ways (PDFium's text, poppler's
``pdftotext`` and OCR of the rendered pixels) and scores it against the ground truth: shared by
``bench/redaction_bench.py`` and the CI recall check (``ci_documents``).
"""

from __future__ import annotations

import html
import random
import re
import struct
import subprocess
import time
import unicodedata
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pikepdf
from pikepdf import Array, Dictionary, Name
from PIL import Image, ImageDraw, ImageFilter, ImageFont
from stdnum import iban, luhn

from pressroom.synth import find_font, image_pdf, save_jpeg, save_png, save_tiff

if TYPE_CHECKING:
    from pressroom.pipeline.ocr import OcrEngine
    from pressroom.redact.policy import RedactionPolicy

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

# ---------------------------------------------------------------------------------------------
# Fonts: metrics straight from the TrueType tables, so scans (Pillow) and born-digital PDFs
# (an embedded Type0 font) put every glyph in the same place and the ground truth is exact.

FONT_FILES = {
    "sans": "DejaVuSans.ttf",
    "sans-bold": "DejaVuSans-Bold.ttf",
    "serif": "DejaVuSerif.ttf",
    "serif-bold": "DejaVuSerif-Bold.ttf",
    "mono": "DejaVuSansMono.ttf",
}


@dataclass(frozen=True)
class _Font:
    key: str
    path: Path
    data: bytes
    units: int
    ascent: float  # of the em, positive
    descent: float  # of the em, positive (below the baseline)
    cmap: dict[int, int]
    advances: tuple[int, ...]

    def gid(self, char: str) -> int:
        g = self.cmap.get(ord(char), 0)
        if g == 0 and not char.isspace():
            raise ValueError(f"{self.path.name} has no glyph for {char!r}")
        return g

    def advance(self, char: str) -> float:
        """Advance of ``char`` in thousandths of the em."""
        g = self.gid(char)
        return self.advances[min(g, len(self.advances) - 1)] * 1000.0 / self.units

    def width(self, text: str, size: float) -> float:
        return sum(self.advance(c) for c in text) * size / 1000.0

    def covers(self, text: str) -> bool:
        return all(c.isspace() or ord(c) in self.cmap for c in text)


def _tables(data: bytes) -> dict[str, tuple[int, int]]:
    count = struct.unpack_from(">H", data, 4)[0]
    out: dict[str, tuple[int, int]] = {}
    for i in range(count):
        tag, _sum, offset, length = struct.unpack_from(">4sIII", data, 12 + 16 * i)
        out[tag.decode("latin-1")] = (offset, length)
    return out


def _cmap(data: bytes, offset: int) -> dict[int, int]:
    """The Unicode BMP subtable (format 4) of a TrueType ``cmap``."""
    count = struct.unpack_from(">H", data, offset + 2)[0]
    sub = None
    for i in range(count):
        platform, encoding, where = struct.unpack_from(">HHI", data, offset + 4 + 8 * i)
        if (platform, encoding) in ((3, 1), (0, 3)) and struct.unpack_from(
            ">H", data, offset + where
        )[0] == 4:
            sub = offset + where
            break
    if sub is None:
        raise ValueError("no format 4 Unicode cmap")
    segments = struct.unpack_from(">H", data, sub + 6)[0] // 2
    ends = struct.unpack_from(f">{segments}H", data, sub + 14)
    starts_at = sub + 16 + 2 * segments
    starts = struct.unpack_from(f">{segments}H", data, starts_at)
    deltas = struct.unpack_from(f">{segments}h", data, starts_at + 2 * segments)
    ranges_at = starts_at + 4 * segments
    ranges = struct.unpack_from(f">{segments}H", data, ranges_at)
    out: dict[int, int] = {}
    for i in range(segments):
        for code in range(starts[i], ends[i] + 1):
            if code == 0xFFFF:
                continue
            if ranges[i] == 0:
                g = (code + deltas[i]) & 0xFFFF
            else:
                at = ranges_at + 2 * i + ranges[i] + 2 * (code - starts[i])
                g = struct.unpack_from(">H", data, at)[0]
                if g:
                    g = (g + deltas[i]) & 0xFFFF
            if g:
                out[code] = g
    return out


@cache
def font(key: str) -> _Font:
    path = find_font(FONT_FILES[key])
    data = path.read_bytes()
    tables = _tables(data)
    units = struct.unpack_from(">H", data, tables["head"][0] + 18)[0]
    hhea = tables["hhea"][0]
    ascender, descender = struct.unpack_from(">hh", data, hhea + 4)
    metrics = struct.unpack_from(">H", data, hhea + 34)[0]
    hmtx = tables["hmtx"][0]
    advances = tuple(struct.unpack_from(">H", data, hmtx + 4 * i)[0] for i in range(metrics))
    return _Font(
        key,
        path,
        data,
        units,
        ascender / units,
        -descender / units,
        _cmap(data, tables["cmap"][0]),
        advances,
    )


def _pick(face: str, text: str) -> _Font:
    """The face, or DejaVu Sans where the face has no glyph (Sans Mono has no Vietnamese)."""
    f = font(face)
    return f if f.covers(text) else font("sans")


@cache
def _face(key: str, px: float) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(font(key).path), px)


# ---------------------------------------------------------------------------------------------
# The document model


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
class _Glyphs:
    text: str
    x: float
    base: float
    size: float
    font: str
    grey: int


@dataclass(frozen=True, slots=True)
class _Rule:
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
    glyphs: list[_Glyphs] = field(default_factory=list)
    rules: list[_Rule] = field(default_factory=list)


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


# ---------------------------------------------------------------------------------------------
# Building: text runs carry tags; layout records where every tagged character went.


@dataclass(frozen=True, slots=True)
class Seg:
    """A run of text that is (part of) one mention or keep string."""

    text: str
    tag: int


Run = str | Seg
_BREAK = object()


@dataclass
class _Token:
    parts: list[tuple[str, int | None]]

    @property
    def text(self) -> str:
        return "".join(p for p, _ in self.parts)


@dataclass
class _Open:
    kind: str
    text: str
    form: str
    grey: int = 0
    pieces: dict[tuple[int, int], list[tuple[str, Box, Box]]] = field(default_factory=dict)


def _tokens(runs: Sequence[Run]) -> list[_Token | object]:
    out: list[_Token | object] = []
    current: list[tuple[str, int | None]] = []

    def flush() -> None:
        if current:
            out.append(_Token(list(current)))
            current.clear()

    for run in runs:
        text, tag = (run.text, run.tag) if isinstance(run, Seg) else (run, None)
        for ch in text:
            if ch == "\n":
                flush()
                out.append(_BREAK)
            elif ch.isspace():
                flush()
            elif current and current[-1][1] == tag:
                current[-1] = (current[-1][0] + ch, tag)
            else:
                current.append((ch, tag))
    flush()
    return out


@dataclass
class Frame:
    """A rectangle text flows into (a column); flows go from frame to frame."""

    page: int
    x: float
    top: float
    width: float
    bottom: float


class Builder:
    """Lays a document out and keeps its ground truth."""

    def __init__(self, doc_id: str, kind: str, split: str, rng: random.Random) -> None:
        self.id, self.kind, self.split, self.rng = doc_id, kind, split, rng
        self.pages: list[Page] = []
        self.open: list[_Open] = []
        self.words: list[tuple[int, str, Box, Box, int | None]] = []
        self._line = 0

    # mentions -------------------------------------------------------------------------------
    def value(self, kind: str, text: str, form: str) -> Seg:
        text = unicodedata.normalize("NFC", text)
        self.open.append(_Open(kind, text.replace("\n", " "), form))
        return Seg(text, len(self.open) - 1)

    def keep(self, text: str) -> Seg:
        return self.value(KEEP, text, "keep")

    # pages ----------------------------------------------------------------------------------
    def page(self, width: float = 612.0, height: float = 792.0, scan_turn: int = 0) -> int:
        self.pages.append(Page(width, height, scan_turn))
        return len(self.pages) - 1

    def rule(
        self,
        page: int,
        x0: float,
        y0: float,
        x1: float,
        y1: float,
        width: float = 0.6,
        grey: int = 0,
    ) -> None:
        self.pages[page].rules.append(_Rule(x0, y0, x1, y1, width, grey))

    def _place(
        self,
        page: int,
        x: float,
        base: float,
        tokens: Sequence[_Token],
        size: float,
        face: str,
        grey: int,
    ) -> float:
        """One line of tokens from ``x`` on baseline ``base``; returns where it ends."""
        f = font(face)
        self._line += 1
        space = f.width(" ", size)
        top, bottom = base - f.ascent * size * 0.86, base + f.descent * size * 0.9
        core = (base - 0.5 * size, base - 0.08 * size)
        start = x
        for n, tok in enumerate(tokens):
            if n:
                x += space
            text = tok.text
            tf = _pick(face, text)
            w = tf.width(text, size)
            self.pages[page].glyphs.append(_Glyphs(text, x, base, size, tf.key, grey))
            owners = [t for p, t in tok.parts if t is not None and any(c.isalnum() for c in p)]
            owner = owners[0] if owners else None
            cx = (x + 0.08 * w, core[0], x + w - 0.08 * w, core[1])
            self.words.append((page, text, (x, top, x + w, bottom), cx, owner))
            px = x
            for part, tag in tok.parts:
                pw = tf.width(part, size)
                if tag is not None:
                    o = self.open[tag]
                    o.grey = max(o.grey, grey)
                    pad = 0.06 * pw
                    o.pieces.setdefault((page, self._line), []).append(
                        (
                            part,
                            (px, top, px + pw, bottom),
                            (px + pad, core[0], px + pw - pad, core[1]),
                        )
                    )
                px += pw
            x += w
        return x if tokens else start

    def line(
        self,
        page: int,
        x: float,
        base: float,
        runs: Sequence[Run],
        *,
        size: float = 10.0,
        face: str = "sans",
        grey: int = 0,
        align: str = "left",
    ) -> float:
        """Text on one line, no wrapping (a heading, a table cell); returns the right end."""
        toks = [t for t in _tokens(runs) if isinstance(t, _Token)]
        if align == "right":
            f = font(face)
            total = sum(_pick(face, t.text).width(t.text, size) for t in toks) + f.width(
                " ", size
            ) * max(len(toks) - 1, 0)
            x -= total
        return self._place(page, x, base, toks, size, face, grey)

    def wrap(
        self, runs: Sequence[Run], width: float, size: float, face: str, first: float = 0.0
    ) -> list[list[_Token]]:
        f = font(face)
        space = f.width(" ", size)
        lines: list[list[_Token]] = [[]]
        used = first
        for tok in _tokens(runs):
            if tok is _BREAK:
                lines.append([])
                used = 0.0
                continue
            assert isinstance(tok, _Token)
            w = _pick(face, tok.text).width(tok.text, size)
            if lines[-1] and used + space + w > width:
                lines.append([])
                used = 0.0
            used += (space if lines[-1] else 0.0) + w
            lines[-1].append(tok)
        return [ln for ln in lines if ln]

    def para(
        self,
        page: int,
        x: float,
        base: float,
        width: float,
        runs: Sequence[Run],
        *,
        size: float = 10.0,
        leading: float | None = None,
        face: str = "serif",
        grey: int = 0,
        indent: float = 0.0,
    ) -> float:
        """A wrapped paragraph from baseline ``base``; returns the baseline after its last line."""
        lead = leading or size * 1.32
        for n, toks in enumerate(self.wrap(runs, width, size, face, indent)):
            self._place(page, x + (indent if n == 0 else 0.0), base, toks, size, face, grey)
            base += lead
        return base

    def flow(
        self,
        frames: Sequence[Frame],
        paragraphs: Sequence[Sequence[Run]],
        *,
        size: float = 10.0,
        leading: float | None = None,
        face: str = "serif",
        gap: float = 4.0,
        indent: float = 0.0,
    ) -> tuple[int, float]:
        """Paragraphs through columns in order; returns (frame index, baseline) where it ended."""
        lead = leading or size * 1.32
        fi = 0
        base = frames[0].top + size
        for p, runs in enumerate(paragraphs):
            if p:
                base += gap
            fr = frames[fi]
            for n, toks in enumerate(self.wrap(runs, fr.width, size, face, indent)):
                if base > frames[fi].bottom:
                    fi += 1
                    if fi >= len(frames):
                        raise ValueError(f"{self.id}: text overflows its frames")
                    base = frames[fi].top + size
                fr = frames[fi]
                self._place(fr.page, fr.x + (indent if n == 0 else 0.0), base, toks, size, face, 0)
                base += lead
        return fi, base

    # the finished document ------------------------------------------------------------------
    def build(self, medium: str, fmt: str, seed: int) -> Document:
        mentions: list[Mention] = []
        keeps: list[Mention] = []
        for o in self.open:
            pieces: list[Piece] = []
            for (page, _line), parts in sorted(o.pieces.items(), key=lambda kv: kv[0][1]):
                boxes = [b for _, b, _ in parts]
                box = (
                    min(b[0] for b in boxes),
                    min(b[1] for b in boxes),
                    max(b[2] for b in boxes),
                    max(b[3] for b in boxes),
                )
                text = " ".join(p for p, _, _ in parts)
                pieces.append(Piece(page, text, box, tuple(c for _, _, c in parts)))
            if not pieces:
                raise ValueError(f"{self.id}: {o.kind} {o.text!r} was never drawn")
            drawn = " ".join(p.text for p in pieces)
            if _squash(drawn) != _squash(o.text):
                raise ValueError(f"{self.id}: {o.text!r} drawn as {drawn!r}")
            form = o.form
            if len(pieces) > 1 and o.kind != KEEP and "block" not in form:
                form += "+wrapped"
            if o.grey >= FAINT_GREY and o.kind != KEEP:
                form += "+faint"
            m = Mention(o.kind, o.text, form, tuple(pieces), o.grey)
            (keeps if o.kind == KEEP else mentions).append(m)
        words = [
            Drawn(page, text, box, core, None if owner is None else self.open[owner].kind)
            for page, text, box, core, owner in self.words
        ]
        rng = random.Random(seed ^ 0x5EED)
        skews = [
            0.0
            if medium == DIGITAL
            else round(rng.choice((0.0, 1.0, -1.0)) * rng.uniform(0.1, 0.45), 2)
            for _ in self.pages
        ]
        return Document(
            self.id,
            self.kind,
            self.split,
            medium,
            fmt,
            seed,
            self.pages,
            mentions,
            keeps,
            words,
            skews,
            noise=rng.uniform(3.0, 7.0) if medium == SCAN else 0.0,
        )


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


# ---------------------------------------------------------------------------------------------
# Vocabulary: two disjoint sets of names, organisations, places, streets and phrasings.


@dataclass(frozen=True)
class Person:
    given: str
    family: str
    sex: str  # "f" or "m": titles and pronouns
    family_first: bool = False  # Vietnamese and Chinese order: the family name is written first

    @property
    def full(self) -> str:
        return f"{self.family} {self.given}" if self.family_first else f"{self.given} {self.family}"

    @property
    def short(self) -> str:
        """The name the person goes by alone in English prose."""
        if self.family_first and self.given.split()[-1] != self.given:
            return self.given.split()[-1]  # Vietnamese: the last given name (Hương)
        return self.family


@dataclass(frozen=True)
class Vocab:
    split: str
    people: tuple[Person, ...]
    orgs: tuple[str, ...]
    banks: tuple[str, ...]
    places: tuple[str, ...]
    streets_keep: tuple[str, ...]  # street-like words outside any address
    streets: tuple[str, ...]
    buildings: tuple[str, ...]
    po_boxes: tuple[str, ...]
    towns: tuple[tuple[str, str], ...]  # town, postcode (UK)
    us_towns: tuple[tuple[str, str, str], ...]
    merchants: tuple[str, ...]  # capitals on statements
    iban_countries: tuple[str, ...]
    headlines: tuple[str, ...]
    roles: tuple[str, ...]
    text: dict[str, tuple[str, ...]]


def _p(given: str, family: str, sex: str, first: bool = False) -> Person:
    return Person(given, family, sex, first)


DEV = Vocab(
    split="dev",
    people=(
        _p("Adaeze", "Okafor", "f"),
        _p("Oluwaseun", "Adeyemi", "m"),
        _p("Kwabena", "Mensah-Boateng", "m"),
        _p("Chiamaka", "Nwosu", "f"),
        _p("Haruto", "Sakamoto", "m"),
        _p("Ji-woo", "Park", "f"),
        _p("Wei", "Zhang", "m", True),
        _p("Mei-Ling", "Chen", "f"),
        _p("Priyanka", "Raghunathan", "f"),
        _p("Arjun", "Venkataraman", "m"),
        _p("Farhan", "Chowdhury", "m"),
        _p("Małgorzata", "Wiśniewska", "f"),
        _p("Dmitri", "Volkov", "m"),
        _p("Jiří", "Dvořák", "m"),
        _p("Sigríður", "Jónsdóttir", "f"),
        _p("Øystein", "Bråthen", "m"),
        _p("Linnéa", "Åkesson", "f"),
        _p("José Luis", "Fernández", "m"),
        _p("Ximena", "Castañeda", "f"),
        _p("Rocío", "Ibáñez", "f"),
        _p("Yousef", "Al-Masri", "m"),
        _p("Layla", "Haddad", "f"),
        _p("Omar", "Abdelrahman", "m"),
        _p("Thị Hương", "Nguyễn", "f", True),
        _p("Văn Đức", "Trần", "m", True),
        _p("Siobhán", "O'Sullivan", "f"),
        _p("Vikram", "D'Souza", "m"),
        _p("Anna-Lena", "Meyer-Hoffmann", "f"),
        _p("Rebecca", "Whitfield", "f"),
    ),
    orgs=(
        "Harbourside Credit Union",
        "Lagos Port Authority",
        "Northgate Housing Trust",
        "Baltic Grain Exchange",
        "Riverside Community Clinic",
        "Ministry of Water Resources",
        "Fjordline Ferries",
        "Andes Copper Cooperative",
        "Kestrel Insurance",
        "Tidewater Engineering",
    ),
    banks=("Meridian Mutual Bank", "Harbourside Credit Union", "Northern Savings Bank"),
    places=(
        "Lagos",
        "Kraków",
        "Bergen",
        "Valparaíso",
        "Đà Nẵng",
        "Hyderabad",
        "Amman",
        "Sapporo",
        "Rotterdam",
        "Leeds",
    ),
    streets_keep=("Wall Street", "High Street", "Abbey Road", "Harbour Road"),
    streets=(
        "Ropewalk Lane",
        "Kingfisher Close",
        "Old Mill Road",
        "Orchard Way",
        "Tannery Street",
        "Larkspur Avenue",
    ),
    buildings=("Kestrel House", "Flat 4, Beacon Court", "Unit 7, Riverside Works", "The Old Forge"),
    po_boxes=("PO Box 4471", "P.O. Box 118"),
    towns=(
        ("Hexham", "NE46 3QP"),
        ("Kendal", "LA9 4DH"),
        ("Truro", "TR1 2HX"),
        ("Stirling", "FK8 1QE"),
    ),
    us_towns=(("Bozeman", "MT", "59715"), ("Ithaca", "NY", "14850")),
    merchants=("NORTHERN WATER", "BRIGHTSPARK ENERGY", "CITYLINK TRANSIT", "GREENGROCER CO-OP"),
    iban_countries=("GB", "DE", "NL", "IE"),
    headlines=(
        "Port expansion stalls as dredging costs double",
        "Water tariffs to rise for a second year",
        "Grain exports recover after record harvest",
    ),
    roles=("Tenancy Services Manager", "Claims Officer", "Head of Member Services"),
    text={
        "news": (
            "{org1} said on Tuesday that work on the new container berth in {place1} would pause"
            " until the autumn. {P1}, who chairs the authority's finance committee, told"
            " reporters that the budget had grown to {amount1}.",
            "“We cannot keep signing cheques we do not understand,” {p1} said. {p1s} committee"
            " will publish a revised estimate in {month}.",
            "Local traders were less patient. {P2}, whose family has run a chandlery at {ADDR1}"
            " for three decades, said the delays had already cost {him2} {amount2} in lost"
            " orders. “Every month they promise us the road will open,” {p2} said.",
            "Engineers from {org2} blamed silt levels that were higher than the survey suggested."
            " A spokesperson for the firm confirmed that {P3} had led the original study.",
            "{p3} could not be reached for comment. Analysts on {street1} expect the authority to"
            " borrow again before the end of the year.",
            "The dispute now goes to the regional council, which meets on {date2}. Councillor"
            " {P4} said {he4} would ask for an independent review of {p1s} figures.",
        ),
        "feature": (
            "For forty years {P1} has built wooden boats by hand in a shed above the water at"
            " {place1}. Now {he1} is training the apprentice who may be the last.",
            "The shed smells of tar and spruce. {p1} works without drawings; the shape of each"
            " hull, {he1} says, is already in the timber. {p1s} father built boats here before"
            " {him1}, and the tools on the wall are his.",
            "{P2} arrived three winters ago with a degree in mechanical engineering and no idea"
            " how to steam a plank. “I broke eleven of them the first week,” {p2} says.",
            "The yard survives on repairs and on one new boat a year, paid for in advance by"
            " customers who wait eighteen months. An order from {org1} last spring kept the"
            " lights on, {tp1} admits.",
            "{P3}, a historian at {org2}, has catalogued more than two hundred boats from the"
            " district. In {p3s} archive the oldest surviving drawing dates from {year1}.",
            "“Nobody writes down what they know,” {p3} says. “When the builder goes, the boat"
            " type goes with {him1}.”",
            "In the mornings {p2} sharpens the chisels before anyone else arrives. {p1} pretends"
            " not to notice, but the apprentice\u2019s bench has been moved closer to the window.",
            "On the wall is a photograph of {p1s} first boat, launched on {date1}. It still"
            " fishes out of {place2}, according to {p3s} records.",
            "Money is the question nobody in the shed likes. A new boat sells for {amount2},"
            " which barely covers the timber and the hours. {p1} keeps the accounts in a school"
            " exercise book.",
            "{P6}, who bought one of {p1s} boats in {year1} and still rows it every summer,"
            " calls the yard “the last honest workshop on the coast”. {p6} visits most weeks,"
            " bringing coffee and opinions.",
            "When we leave, {p2} is fitting a thwart while {p1} watches and says nothing. That,"
            " {he2} tells us later, is how you know you got it right.",
            "By spring the apprentice will build a hull alone for the first time. {tp1} says"
            " {he1} will not watch. {p2} does not believe a word of it.",
        ),
        "feature-title": ("The last boatbuilders",),
        "interview": (
            "Can you tell me where you grew up?",
            "In {place1}, near the old fish market. My aunt, {P3}, ran the shop at {ADDR1} until"
            " it closed in {year1}. We lived above it, and later on {street1}.",
            "What kind of shop was it?",
            "Hardware, mostly. Nails, paraffin, rope. {p3s} husband did the accounts and she did"
            " everything else.",
            "And your first job?",
            "With {org1}, loading sacks. The foreman was a man called {P4}. Everybody was afraid"
            " of {p4} except my aunt.",
            "Why was that?",
            "She had lent him money once. {tp4} never forgot it, and neither did she.",
            "Did you stay in touch with {p3}?",
            "Until the end. I still have {p3s} ledger, with every debt written down in pencil.",
        ),
        "letter": (
            "Thank you for your letter of {date1} about the repairs to your home. I am sorry that"
            " the work has taken longer than we promised.",
            "Our surveyor, {P3}, visited on {date2} and agreed that the damp in the back bedroom"
            " needs a new damp-proof course. {tp3} has booked the contractor for {month}.",
            "In the meantime we will refund {amount1} of your rent. The refund will be paid to the"
            " account you gave us, IBAN {IBAN1}, within ten working days.",
            "If anything changes, or if {p3s} report raises questions, please call our repairs"
            " line on 0300 123 4567 and quote the reference above.",
        ),
        "invoice": (
            "Thank you for your business. Payment is due within 30 days of the invoice date.",
            "Please pay by bank transfer to {P1}, IBAN {IBAN1}, and quote the invoice number as"
            " the reference.",
        ),
        "memo": (
            "Please find attached the payment schedule agreed with {org1} on {date1}. {P3} in"
            " finance has checked every line against the contracts.",
            "Two payments differ from last quarter: {p3s} note on the schedule explains why. The"
            " first instalment of {amount1} leaves on {date2}.",
        ),
        "faint": (
            "Approved for payment to {P1} on {date1} by the claims panel.",
            "Paid into account {ACC1}, sort code {SORT1}, at {org1}.",
        ),
        "byline": ("By {P5}",),
        "credits": ("Words by {P4}. Photographs by {P5}.",),
        "caption": ("{P1} at work near {place2}. Photograph: {p5}",),
        "interview-head": (
            "Oral history project, {org2}",
            "Recorded {date2} in {place2}",
            "Interviewer: {P1}",
            "Interviewee: {P2}",
        ),
        "speaker": ("p{n}c",),
        "statement": (
            "CARD PAYMENT {merchant} {n4}",
            "FASTER PAYMENT TO {P2C} REF RENT",
            "SEPA CT {IBANC1} {p3c}",
            "DIRECT DEBIT {merchant}",
            "STANDING ORDER {i4c}",
            "+TRANSFER FROM {r5c}",
            "CASH WITHDRAWAL {place1C}",
            "BILL PAYMENT {p3c} DEPOSIT",
            "+FASTER PAYMENT FROM {p2c} {MON} SHARE",
            "CARD PAYMENT {merchant}",
            "+INTEREST PAID",
        ),
        "statement-head": (
            "Statement of account",
            "Date",
            "Description",
            "Paid out",
            "Paid in",
            "Balance",
        ),
        "statement-labels": ("Account number", "Sort code", "IBAN", "BIC", "Period"),
        "statement-foot": ("{bank} is authorised and regulated in the ordinary way.",),
        "letter-open": ("Dear {tp1},",),
        "letter-close": ("Yours sincerely,", "Kind regards,"),
        "letter-ref": ("Our ref:",),
        "form-title": ("Application for a hardship grant", "Change of bank details"),
        "form": (
            "Surname",
            "First names",
            "Date of birth",
            "Home address",
            "Postcode",
            "Telephone",
            "Account holder",
            "Sort code",
            "Account number",
            "Card (last used)",
            "Name",
            "Relationship",
        ),
        "form-sections": (
            "Section 1: About you",
            "Section 2: Where we pay the grant",
            "Section 3: Emergency contact",
        ),
        "form-sign": (
            "Declaration: I, {P1}, declare that the information on this form is true and"
            " complete. I understand that {org1} may check it with my bank.",
            "Signed: {P1}",
            "Date: {date1}",
            "For office use — checked by {P3} on {date2}",
        ),
        "faint-head": ("Payout request", "Checked by {P2}."),
        "faint-labels": (
            "Claimant",
            "Account number",
            "Sort code",
            "Address",
            "Amount",
            "Reference",
        ),
        "memo-head": ("MEMORANDUM", "To: {P1}", "From: {P2}", "Date: {date3}"),
        "schedule": (
            "Payment schedule",
            "Payee",
            "Account (IBAN)",
            "Address",
            "Amount",
            "Queries about this schedule go to {tp3} or to {org1}.",
        ),
        "invoice-labels": (
            "INVOICE",
            "No. {ref}   Date: {date1}",
            "Payment details",
            "Account name: ",
            "IBAN: ",
            "BIC: ",
            "Bill to",
            "Attn: {P2}",
            "Description",
            "Amount",
        ),
        "invoice-items": (
            "Translation of contract documents",
            "Site visit and report",
            "Editing, second round",
            "Travel (rail fares)",
            "Photography licence",
        ),
    },
)

HELD_OUT = Vocab(
    split="held-out",
    people=(
        _p("Folasade", "Ogunleye", "f"),
        _p("Kofi", "Asante", "m"),
        _p("Ngozi", "Eze", "f"),
        _p("Yaw", "Owusu-Ansah", "m"),
        _p("Takeshi", "Yamamoto", "m"),
        _p("Seo-yeon", "Kim", "f"),
        _p("Li Na", "Huang", "f", True),
        _p("Hiroko", "Tanaka", "f"),
        _p("Lakshmi", "Subramanian", "f"),
        _p("Rohan", "Mehta", "m"),
        _p("Ayesha", "Siddiqui", "f"),
        _p("Wojciech", "Krzyżanowski", "m"),
        _p("Natalia", "Kuznetsova", "f"),
        _p("Bohdan", "Shevchenko", "m"),
        _p("Zdeněk", "Novák", "m"),
        _p("Ragnhildur", "Þórsdóttir", "f"),
        _p("Mikael", "Sjöberg", "m"),
        _p("Jørgen", "Kjærgaard", "m"),
        _p("Guadalupe", "Ordóñez", "f"),
        _p("Joaquín", "Peña Villalobos", "m"),
        _p("Inés", "Barrientos", "f"),
        _p("Khalid", "Al-Rashidi", "m"),
        _p("Noura", "Bensalem", "f"),
        _p("Tariq", "El-Amin", "m"),
        _p("Minh Tuấn", "Phạm", "m", True),
        _p("Thị Ngọc Ánh", "Lê", "f", True),
        _p("Quốc Bảo", "Võ", "m", True),
        _p("Ciarán", "O'Donoghue", "m"),
        _p("Marco", "D'Angelo", "m"),
        _p("Jean-Baptiste", "Moreau-Lefèvre", "m"),
        _p("Harriet", "Ashworth", "f"),
    ),
    orgs=(
        "Accra Cocoa Board",
        "Silverbirch Building Society",
        "Danube Freight Partners",
        "Western Lakes Water Authority",
        "Coastal Teachers' Union",
        "St Brendan's Hospital",
        "Polar Star Shipping",
        "Pacific Rim Textiles",
        "Bureau of Statistics",
        "Granite City Council",
    ),
    banks=("Granite City Bank", "Silverbirch Building Society", "Lakeland Cooperative Bank"),
    places=(
        "Accra",
        "Brno",
        "Tromsø",
        "Cusco",
        "Huế",
        "Pune",
        "Tunis",
        "Busan",
        "Antwerp",
        "Cardiff",
    ),
    streets_keep=("Fleet Street", "Downing Street", "Bourbon Street", "Station Road"),
    streets=(
        "Chandlers Row",
        "Heron Walk",
        "Foundry Lane",
        "Quarry Hill Road",
        "Willowbrook Crescent",
        "Saltmarsh Drive",
    ),
    buildings=(
        "Marlowe House",
        "Apartment 12, Lighthouse Quay",
        "Suite 3, The Granary",
        "Ivy Cottage",
    ),
    po_boxes=("PO Box 902", "Post Office Box 3310"),
    towns=(
        ("Whitby", "YO21 1DH"),
        ("Ludlow", "SY8 1AX"),
        ("Penrith", "CA11 7PT"),
        ("Oban", "PA34 4LW"),
    ),
    us_towns=(("Missoula", "MT", "59802"), ("Asheville", "NC", "28801")),
    merchants=("VALLEY WATER", "SUNRISE POWER", "METRO BUS PASS", "CORNER MARKET"),
    iban_countries=("FR", "PL", "NO", "ES", "BE"),
    headlines=(
        "Cocoa farmers win fairer price deal",
        "River freight returns after dry summer",
        "Hospital waiting lists fall for first time in years",
    ),
    roles=("Customer Relations Lead", "Senior Caseworker", "Director of Housing"),
    text={
        "news": (
            "Farmers around {place1} will receive a higher minimum price for their beans from next"
            " season, {org1} announced on {date1}.",
            "The agreement follows eight months of talks led by {P1}, a former extension officer"
            " who now represents more than four thousand growers. “It is not everything we asked"
            " for, but it is a start,” {tp1} said at a press conference.",
            "Under the deal, buyers must pay at least {amount1} a tonne. {p1s} negotiating team"
            " had pushed for more.",
            "Not everyone is convinced. {P2} runs a drying yard from {ADDR1} and says"
            " transport costs will swallow most of the increase. “Ask anyone here what diesel"
            " costs now,” {p2} said, pointing at a queue of lorries.",
            "Economists at {org2} estimated that the change adds {amount2} to annual export"
            " earnings. Their report, written by {P3} and colleagues, warns that the weather"
            " remains the bigger risk.",
            "Commentators on {street1} reacted calmly. The board reviews the price again in"
            " {month}, and {p3} has been asked to advise it, alongside {P4}.",
        ),
        "feature": (
            "At two in the morning the ovens at the back of a terraced house in {place1} are"
            " already hot. {P1} has run the bakery for nineteen years and has never once slept"
            " past midnight.",
            "{p1s} day starts with the sourdough, fed the evening before and left under a damp"
            " cloth. {He1} tests it with a knuckle, the way {his1} grandmother did.",
            "The night shift is three people. {P2} shapes the loaves; {he2} came to the city to"
            " study chemistry and stayed for the bread. “The hours are terrible,” {p2} says,"
            " smiling, “but nobody phones you at three in the morning.”",
            "The third is {P3}, who drives the van. By five {p3} has loaded two hundred loaves"
            " for cafés across the city, and an order for {org1} that has not changed in a"
            " decade.",
            "Flour prices have risen by a third since {year1}. {tp1} has absorbed most of it;"
            " the price of a loaf went up once, by {amount1}.",
            "“People notice,” says {p1}. “They do not complain, but they notice.”",
            "At six the shop opens on {street1} and the queue is already at the door. {P2}\u2019s"
            " rye is gone by half past.",
            "By then {p3} is back with the empty crates and {p1} is asleep upstairs. The cycle"
            " restarts in nineteen hours; {p2} will feed the starter before going home.",
            "The accounts are kept by {P6}, {p1s} neighbour, who comes in on Fridays with a"
            " calculator and a flask of tea. {p6} says the margins are thinner every year.",
            "In {month} a supermarket chain offered to buy the recipe. {tp1} refused in one"
            " sentence, and {p2} framed the letter; it hangs above the flour bins.",
            "{p3} has started a second round to the villages north of {place3}, where the last"
            " bakery closed in {year1}.",
            "Asked whether the bakery will outlast {him1}, {p1} shrugs and points at {p2s} bench.",
        ),
        "feature-title": ("Night shift at the bakery",),
        "interview": (
            "When did you first come to {place1}?",
            "In {year1}, with two suitcases and a letter for my cousin {P3}. {He3} met me at the"
            " bus station.",
            "What was the work like then?",
            "Long. We sorted parcels for {org1} from six until six. {p3s} friend {P4} got us both"
            " the jobs.",
            "Was {p4} a supervisor?",
            "No, a driver. But everybody listened to {tp4}.",
            "Do you still see your cousin?",
            "Every Sunday. {p3} lives at {ADDR1} now, not far from {street1}.",
        ),
        "letter": (
            "We write about the claim you made on {date1} for storm damage to your roof. Our"
            " assessor has now completed the inspection.",
            "{P3} from our claims team inspected the property on {date2}. {p3s} report confirms"
            " that the damage is covered under section 4 of your policy.",
            "We will pay {amount1} directly into your bank account ({IBAN1}) once you sign and"
            " return the enclosed acceptance form. {tp3} will then arrange the builder.",
            "Should you disagree with the assessment, you may ask for a second inspection within"
            " 28 days of this letter.",
        ),
        "invoice": (
            "Terms: net 14 days. Late payments attract interest at 2% per month.",
            "Remit to {P1} — bank account IBAN {IBAN1} — quoting the invoice reference.",
        ),
        "memo": (
            "Attached is the schedule of refunds approved by {org1} at its meeting on {date1}."
            " {P3} reconciled it against the claims register.",
            "As {p3s} covering note says, two refunds were reissued. The total of {amount1} is"
            " released on {date2}.",
        ),
        "faint": (
            "Settlement of {amount1} authorised for {P1} on {date1}.",
            "Transfer to account no. {ACC1}, branch {SORT1}, {org1}.",
        ),
        "byline": ("{P5}, staff reporter",),
        "credits": ("Story: {P4} · Pictures: {P5}",),
        "caption": ("{P1} in the bakery before dawn. Picture by {p5}",),
        "interview-head": (
            "{org2} — community archive",
            "Session of {date2}, {place2}",
            "Present: {P1} (for the archive) and {P2}",
        ),
        "speaker": ("tp{n}C",),
        "statement": (
            "POS {merchant} {n4}",
            "TFR TO {P2C} RENT",
            "SEPA INST {IBANC1} {p3c} INVOICE",
            "DD {merchant}",
            "SO {i4c} SAVINGS",
            "+BGC {r5c}",
            "ATM {place1C}",
            "BP {p3c} REFUND",
            "+CR FROM {p2c} {MON}",
            "POS {merchant}",
            "+INTEREST",
        ),
        "statement-head": (
            "Your account summary",
            "Posted",
            "Details",
            "Debit",
            "Credit",
            "Running total",
        ),
        "statement-labels": ("Acct no.", "Branch", "IBAN", "SWIFT/BIC", "Dates"),
        "statement-foot": ("Deposits with {bank} are protected up to the statutory limit.",),
        "letter-open": ("Dear {P1},",),
        "letter-close": ("Yours faithfully,", "Best wishes,", "Regards,"),
        "letter-ref": ("Reference:",),
        "form-title": ("Bursary claim", "Member payment details"),
        "form": (
            "Family name",
            "Given name(s)",
            "Born",
            "Residential address",
            "Post code",
            "Phone",
            "Name on the account",
            "Bank sort code",
            "Account no.",
            "Debit card",
            "Next of kin",
            "Relation",
        ),
        "form-sections": (
            "Part A — Applicant",
            "Part B — Bank",
            "Part C — Contact in an emergency",
        ),
        "form-sign": (
            "I, {P1}, confirm that these details are correct and that {org1} may verify them"
            " with my bank.",
            "Signature: {P1}",
            "Dated: {date1}",
            "Verified by {P3}, {date2}",
        ),
        "faint-head": ("Settlement advice", "Countersigned {P2}"),
        "faint-labels": ("Payee", "Acct no.", "Branch code", "Postal address", "Sum", "Our ref"),
        "memo-head": ("INTERNAL NOTE", "For: {P1}", "Prepared by: {P2}", "On: {date3}"),
        "schedule": (
            "Refund schedule",
            "Beneficiary",
            "IBAN",
            "Postal address",
            "Refund",
            "Questions: {tp3}, {org1}.",
        ),
        "invoice-labels": (
            "TAX INVOICE",
            "Invoice no. {ref} · issued {date1}",
            "How to pay",
            "Beneficiary: ",
            "IBAN ",
            "SWIFT: ",
            "Customer",
            "For the attention of {P2}",
            "Item",
            "Total",
        ),
        "invoice-items": (
            "Consulting, March",
            "Workshop facilitation (2 days)",
            "Report design and layout",
            "Venue hire",
            "Printing of handouts",
        ),
    },
)

VOCABS = {"dev": DEV, "held-out": HELD_OUT}
MONTHS = ("January", "February", "March", "April", "June", "July", "September", "October")

# ---------------------------------------------------------------------------------------------
# Values


def make_iban(rng: random.Random, country: str, spaced: bool = True) -> str:
    """A valid IBAN (country length, mod 97 and the national check where stdnum has one)."""
    layouts = {
        "GB": "AAAA" + "9" * 14,
        "DE": "9" * 18,
        "NL": "AAAA" + "9" * 10,
        "IE": "AAAA" + "9" * 14,
        "FR": "9" * 10 + "9" * 11 + "99",
        "PL": "9" * 24,
        "NO": "9" * 11,
        "ES": "9" * 20,
        "BE": "9" * 12,
    }
    for _ in range(2000):
        bban = "".join(
            rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c == "A" else "0123456789")
            for c in layouts[country]
        )
        raw = f"{country}{iban.calc_check_digits(country + '00' + bban)}{bban}"
        if iban.is_valid(raw):
            return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4)) if spaced else raw
    raise ValueError(f"no valid {country} IBAN found")


def make_card(rng: random.Random) -> str:
    body = rng.choice(("4", "51", "37")) + "".join(rng.choice("0123456789") for _ in range(13))
    body = body[:15]
    number = body + luhn.calc_check_digit(body)
    return " ".join(number[i : i + 4] for i in range(0, 16, 4))


def make_account(rng: random.Random) -> str:
    return "".join(rng.choice("0123456789") for _ in range(8))


def make_sort_code(rng: random.Random) -> str:
    return "-".join(f"{rng.randint(10, 99)}" for _ in range(3))


def _date(rng: random.Random, year: int = 2026) -> str:
    return f"{rng.randint(2, 28)} {rng.choice(MONTHS)} {year}"


def _money(rng: random.Random, lo: int = 20, hi: int = 4000, sign: str = "£") -> str:
    return f"{sign}{rng.randint(lo, hi):,}.{rng.randint(0, 99):02d}"


# ---------------------------------------------------------------------------------------------
# Templates: "{P1}" a full name, "{p1}" the name alone, "{p1s}" possessive, "{tp1}" with a
# title, "{P1C}"/"{p1c}" capitals, "{g1}" the given name; pronouns "{he1}"/"{He1}"/"{him1}"/
# "{his1}"; keep slots "{org1}", "{place1}", "{street1}", "{date1}", "{amount1}", "{month}",
# "{year1}"; account slots "{IBAN1}", "{ACC1}", "{SORT1}".

_SLOT = re.compile(r"\{(\w+)\}")


class Cast:
    """The people, places and values of one document, turned into runs on demand."""

    def __init__(
        self, b: Builder, v: Vocab, people: int = 5, sexes: dict[int, str] | None = None
    ) -> None:
        self.b, self.v, self.rng = b, v, b.rng
        self.people = b.rng.sample(v.people, people)
        for n, sex in (sexes or {}).items():  # a template says "my aunt" or "a man called"
            if self.people[n - 1].sex != sex:
                spare = [p for p in v.people if p.sex == sex and p not in self.people]
                self.people[n - 1] = b.rng.choice(spare)
        self.orgs = b.rng.sample(v.orgs, 3)
        self.places = b.rng.sample(v.places, 3)
        self.apostrophe = b.rng.choice(("'", "\u2019"))
        self.bank = b.rng.choice(v.banks)
        self.fixed: dict[str, str] = {
            "bank": self.bank,
            "ref": f"2026-{b.rng.randint(100, 999)}",
            "street1": b.rng.choice(v.streets_keep),
            "month": b.rng.choice(MONTHS),
            "year1": str(b.rng.randint(1961, 1999)),
        }
        for n in (1, 2, 3):
            self.fixed[f"date{n}"] = _date(b.rng)
            self.fixed[f"amount{n}"] = _money(b.rng, 40, 90000)
        self.accounts: dict[str, str] = {}
        self.titles: dict[Person, str] = {}

    def person(self, n: int) -> Person:
        return self.people[n - 1]

    def title(self, p: Person) -> str:
        """The person's title, the same every time in one document."""
        if p not in self.titles:
            pool = ("Ms", "Mrs", "Dr") if p.sex == "f" else ("Mr", "Dr")
            self.titles[p] = self.rng.choice(pool)
        return self.titles[p]

    def name(self, n: int, form: str) -> Seg:
        p = self.person(n)
        text = {
            "full": p.full,
            "surname": p.short,
            "given": p.given.split()[0],
            "possessive": p.short + self.rng.choice(("'s", "\u2019s")),
            "title": f"{self.title(p)} {p.short}",
            "capitals": p.short.upper(),
            "full-capitals": p.full.upper(),
            "title-capitals": f"{self.title(p)} {p.short}".upper(),
            "initial": f"{p.given[0]} {p.family}".upper(),
            "initial-last": f"{p.family} {p.given[0]}".upper(),
        }[form]
        return self.b.value("name", text, "capitals" if form.endswith("capitals") else form)

    def slot(self, key: str) -> Run:
        """A template slot as a run: a new mention, a keep string or plain text."""
        m = re.fullmatch(r"(P|p|tp|g|i|r)(\d)(s|C|c)?", key)
        if m:
            kind, n, mod = m.group(1), int(m.group(2)), m.group(3) or ""
            forms = {
                "P": {"": "full", "C": "full-capitals"},
                "tp": {"": "title", "C": "title-capitals"},
                "g": {"": "given"},
                "i": {"c": "initial"},
                "r": {"c": "initial-last"},
                "p": {"": "surname", "s": "possessive", "c": "capitals"},
            }
            form = forms[kind][mod]
            return self.name(n, form)
        m = re.fullmatch(r"(he|He|him|his|His)(\d)", key)
        if m:
            f = self.person(int(m.group(2))).sex == "f"
            word = {
                "he": "she" if f else "he",
                "him": "her" if f else "him",
                "his": "her" if f else "his",
            }
            w = word[m.group(1).lower()]
            return w.capitalize() if m.group(1)[0].isupper() else w
        m = re.fullmatch(r"(org|place)(\d)(C?)", key)
        if m:
            pool = self.orgs if m.group(1) == "org" else self.places
            text = pool[int(m.group(2)) - 1]
            return self.b.keep(text.upper() if m.group(3) else text)
        if key in self.fixed:
            return self.b.keep(self.fixed[key])
        if key == "merchant":
            return self.b.keep(self.rng.choice(self.v.merchants))
        if key == "n4":
            return str(self.rng.randint(1000, 9999))
        if key == "MON":
            return self.fixed["month"][:3].upper()
        if key.startswith("IBANC"):  # the same account, written without spaces
            value = self.accounts.setdefault(key[:4] + key[5:], self.iban())
            return self.b.value("account-number", value.replace(" ", ""), "iban-compact")
        if key.startswith("IBAN"):
            value = self.accounts.setdefault(key, self.iban())
            return self.b.value("account-number", value, "iban")
        if key.startswith("ADDR"):
            town, code = self.rng.choice(self.v.towns)
            street = f"{self.rng.randint(2, 240)} {self.rng.choice(self.v.streets)}"
            tail = f" {code}" if self.rng.random() < 0.5 else ""
            return self.b.value("address", f"{street}, {town}{tail}", "inline")
        if key.startswith("ACC"):
            value = self.accounts.setdefault(key, make_account(self.rng))
            return self.b.value("account-number", value, "account")
        if key.startswith("SORT"):
            value = self.accounts.setdefault(key, make_sort_code(self.rng))
            return self.b.value("account-number", value, "sort-code")
        raise KeyError(key)

    def iban(self) -> str:
        return make_iban(self.rng, self.rng.choice(self.v.iban_countries))

    def text(self, key: str, n: int = 0) -> list[Run]:
        """Entry ``n`` of the split's phrasing ``key``, filled."""
        return self.fill(self.v.text[key][n])

    def fill(self, template: str) -> list[Run]:
        out: list[Run] = []
        at = 0
        for m in _SLOT.finditer(template):
            out.append(template[at : m.start()])
            out.append(self.slot(m.group(1)))
            at = m.end()
        out.append(template[at:])
        return [r for r in out if r != ""]

    def address(self, lines: str = "block", us: bool = False, po: bool | None = None) -> list[str]:
        """The lines of a postal address (no name line): building or PO box, street, town,
        postcode, in a mix a window envelope shows."""
        rng, v = self.rng, self.v
        po = rng.random() < 0.3 if po is None else po
        out: list[str] = []
        if po:
            out.append(rng.choice(v.po_boxes))
        else:
            if rng.random() < 0.5:
                out.append(rng.choice(v.buildings))
            out.append(f"{rng.randint(2, 240)} {rng.choice(v.streets)}")
        if us:
            town, state, code = rng.choice(v.us_towns)
            out.append(f"{town}, {state} {code}")
        else:
            town, code = rng.choice(v.towns)
            out += [town, code] if rng.random() < 0.6 else [f"{town} {code}"]
        return out


# ---------------------------------------------------------------------------------------------
# Document kinds. Each lays out pages through a Builder; text comes from the split's Vocab.

MARGIN = 60.0
WIDTH = 612 - 2 * MARGIN


def _news(b: Builder, v: Vocab) -> None:
    c = Cast(b, v, sexes={2: "f"} if v is DEV else None)
    pg = b.page()
    masthead = c.orgs[2].upper() if b.rng.random() < 0.5 else "The Coastal Ledger"
    b.line(pg, MARGIN, 70, [b.keep(masthead)], size=9, face="sans-bold")
    b.rule(pg, MARGIN, 78, 612 - MARGIN, 78, 1.2)
    head = [b.keep(b.rng.choice(v.headlines))]
    base = b.para(pg, MARGIN, 108, WIDTH, head, size=22, face="serif-bold", leading=26)
    byline = [*c.text("byline"), " · ", b.keep(_date(b.rng))]
    base = b.para(pg, MARGIN, base + 2, WIDTH, byline, size=9, face="sans")
    col = (WIDTH - 18) / 2
    paras = [c.fill(t) for t in v.text["news"]]
    paras[0] = [b.keep(c.places[0].upper()), " — ", *paras[0]]
    # two balanced columns
    lines = sum(len(b.wrap(p, col, 9.5, "serif")) for p in paras)
    bottom = base + 6 + (lines + 1) // 2 * 12.4 + 2 * len(paras) + 12.4
    frames = [
        Frame(pg, MARGIN, base + 6, col, bottom),
        Frame(pg, MARGIN + col + 18, base + 6, col, 740),
    ]
    b.flow(frames, paras, size=9.5, leading=12.4)


def _feature(b: Builder, v: Vocab) -> None:
    c = Cast(b, v, people=6)
    p1, p2 = b.page(), b.page()
    title = b.rng.choice(v.headlines) if b.rng.random() < 0.3 else v.text["feature-title"][0]
    b.para(p1, MARGIN, 110, WIDTH, [b.keep(title)], size=24, face="serif-bold", leading=28)
    texts = v.text["feature"]
    base = b.para(p1, MARGIN, 160, WIDTH, c.fill(texts[0]), size=12.5, face="sans", leading=16)
    base = b.para(p1, MARGIN, base + 4, WIDTH, c.text("credits"), size=8.5, face="sans")
    # a photograph (a flat grey block here) with its caption
    top = base + 8
    b.rule(p1, MARGIN, top + 95, 612 - MARGIN, top + 95, 190, 215)
    base = b.para(p1, MARGIN, top + 204, WIDTH, c.text("caption"), size=8, face="sans", grey=60)
    frames = [Frame(p1, MARGIN, base + 8, WIDTH, 740), Frame(p2, MARGIN, 70, WIDTH, 740)]
    b.flow(frames, [c.fill(t) for t in texts[1:]], size=10.5, leading=14.5, indent=12)


def _interview(b: Builder, v: Vocab) -> None:
    c = Cast(b, v, sexes={3: "f", 4: "m"} if v is DEV else None)
    pg = b.page()
    b.line(pg, MARGIN, 72, [b.keep("TRANSCRIPT")], size=13, face="sans-bold")
    y = 92.0
    for n in range(len(v.text["interview-head"])):
        b.line(pg, MARGIN, y, c.text("interview-head", n), size=10)
        y += 16
    b.rule(pg, MARGIN, y - 6, 612 - MARGIN, y - 6)
    face = b.rng.choice(("mono", "sans"))
    base = y + 20
    for n, t in enumerate(v.text["interview"]):
        # the speaker label: "{p1c}:" gives OKAFOR:, "{tp1C}:" gives DR TANAKA:
        label = "{" + v.text["speaker"][0].format(n=1 + n % 2) + "}:"
        b.line(pg, MARGIN, base, c.fill(label), size=9.5, face=face)
        base = b.para(
            pg, MARGIN + 100, base, WIDTH - 100, c.fill(t), size=9.5, face=face, leading=13
        )
        base += 7
    b.line(pg, MARGIN, base + 12, [b.keep("END OF RECORDING")], size=9, face=face)


def _statement(b: Builder, v: Vocab) -> None:
    c = Cast(b, v)
    rng = b.rng
    pg = b.page()
    heads = v.text["statement-head"]
    b.line(pg, MARGIN, 64, [b.keep(c.bank)], size=15, face="sans-bold")
    b.line(pg, 612 - MARGIN, 64, [b.keep(heads[0])], size=10, align="right")
    caps = rng.random() < 0.6
    title = c.title(c.person(1))
    holder: list[Run] = [
        title.upper() + " " if caps else title + " ",
        c.name(1, "full-capitals" if caps else "full"),
    ]
    lines = [ln.upper() for ln in c.address()] if caps else c.address()
    b.line(pg, MARGIN + 10, 130, holder, size=10)
    addr = b.value("address", "\n".join(lines), "block")
    b.para(pg, MARGIN + 10, 143, 230, [addr], size=10, face="sans", leading=13)
    # the details table: label and value in separate cells
    x0, x1, x2 = 300.0, 382.0, 612 - MARGIN
    country = "GB" if v is DEV else rng.choice(v.iban_countries)
    values: list[Run] = [
        b.value("account-number", make_account(rng), "account"),
        b.value("account-number", make_sort_code(rng), "sort-code"),
        b.value("account-number", make_iban(rng, country), "iban"),
        b.keep("MMBK" + ("GB22" if v is DEV else "FRPP")),
        b.keep(f"1 to 28 {c.fixed['month']} 2026"),
    ]
    y = 112.0
    for label, value in zip(v.text["statement-labels"], values, strict=True):
        b.rule(pg, x0, y, x2, y, 0.4)
        b.line(pg, x0 + 4, y + 12, [label], size=8.5)
        small = isinstance(value, Seg) and value.text.startswith(country)
        b.line(pg, x1 + 4, y + 12, [value], size=7.6 if small else 8.5)
        y += 17
    b.rule(pg, x0, y, x2, y, 0.4)
    for x in (x0, x1, x2):
        b.rule(pg, x, 112, x, y, 0.4)
    # transactions: date, description, paid out, paid in, balance
    y = 260.0
    cols = (MARGIN, MARGIN + 52, 430.0, 485.0, 612 - MARGIN)
    b.line(pg, cols[0], y, [heads[1]], size=8.5, face="sans-bold")
    b.line(pg, cols[1], y, [heads[2]], size=8.5, face="sans-bold")
    b.line(pg, cols[2], y, [heads[3]], size=8.5, face="sans-bold", align="right")
    b.line(pg, cols[3], y, [heads[4]], size=8.5, face="sans-bold", align="right")
    b.line(pg, cols[4], y, [heads[5]], size=8.5, face="sans-bold", align="right")
    b.rule(pg, MARGIN, y + 5, 612 - MARGIN, y + 5, 0.8)
    balance = rng.randint(800, 9000) + rng.random()
    month = c.fixed["month"][:3]
    rows = list(v.text["statement"])
    rng.shuffle(rows)
    y += 20
    for n, row in enumerate(rows):
        b.line(pg, cols[0], y, [b.keep(f"{min(28, 2 + 2 * n):02d} {month}")], size=8.5)
        b.line(pg, cols[1], y, c.fill(row.lstrip("+")), size=8.5, face="sans")
        amount = rng.randint(5, 900) + rng.randint(0, 99) / 100
        incoming = row.startswith("+")
        balance += amount if incoming else -amount
        money = [b.keep(f"{amount:,.2f}")]
        b.line(pg, cols[3] if incoming else cols[2], y, money, size=8.5, align="right")
        b.line(pg, cols[4], y, [f"{balance:,.2f}"], size=8.5, align="right")
        b.rule(pg, MARGIN, y + 5, 612 - MARGIN, y + 5, 0.3, 120)
        y += 19
    b.para(pg, MARGIN, 730, WIDTH, c.text("statement-foot"), size=7, face="sans", grey=70)


def _letter(b: Builder, v: Vocab) -> None:
    c = Cast(b, v)
    rng = b.rng
    pg = b.page()
    b.line(pg, MARGIN, 66, [c.slot("org1")], size=16, face="serif-bold")
    site = "www." + c.orgs[0].lower().split()[0].replace("'", "") + ".org"
    b.line(pg, MARGIN, 80, [b.keep(site), " · 0300 123 4567"], size=8, face="sans", grey=60)
    # the window: name, building or PO box, street, town, postcode
    b.line(pg, MARGIN + 8, 150, [c.title(c.person(1)) + " ", c.name(1, "full")], size=10.5)
    addr = b.value("address", "\n".join(c.address(us=rng.random() < 0.25)), "block")
    b.para(pg, MARGIN + 8, 164, 250, [addr], size=10.5, face="sans", leading=14)
    ref: list[Run] = [
        v.text["letter-ref"][0] + " ",
        b.keep(f"{c.orgs[0][:3].upper()}/{rng.randint(1000, 9999)}"),
    ]
    b.line(pg, 612 - MARGIN, 150, ref, size=9, align="right")
    b.line(pg, 612 - MARGIN, 164, [c.slot("date3")], size=9, align="right")
    base = b.para(pg, MARGIN, 280, WIDTH, c.text("letter-open"), size=10.5)
    for t in v.text["letter"]:
        base = b.para(pg, MARGIN, base + 6, WIDTH, c.fill(t), size=10.5, leading=14)
    base = b.para(pg, MARGIN, base + 14, 300, [rng.choice(v.text["letter-close"])], size=10.5)
    base = b.para(pg, MARGIN, base + 28, 300, [c.name(2, "full")], size=10.5)
    base = b.para(pg, MARGIN, base, 300, [b.keep(rng.choice(v.roles))], size=10.5)
    cc: list[Run] = ["cc: ", c.name(4, "full"), ", ", c.slot("org2")]
    b.para(pg, MARGIN, base + 16, 400, cc, size=9, face="sans")


def _form(b: Builder, v: Vocab) -> None:
    c = Cast(b, v)
    rng = b.rng
    pg = b.page()
    labels = iter(v.text["form"])
    sections = iter(v.text["form-sections"])
    b.line(pg, MARGIN, 70, [c.slot("org1")], size=12, face="sans-bold")
    title = [b.keep(rng.choice(v.text["form-title"]))]
    b.line(pg, MARGIN, 94, title, size=15, face="serif-bold")
    x0, x1, x2 = MARGIN, 200.0, 612 - MARGIN
    y = 120.0

    def section() -> None:
        nonlocal y
        b.line(pg, x0, y - 5, [b.keep(next(sections))], size=9, face="sans-bold")
        y += 4

    def row(value: Sequence[Run], height: float = 22.0) -> None:
        """A label cell and its value cell."""
        nonlocal y
        b.rule(pg, x0, y, x2, y, 0.5)
        b.line(pg, x0 + 5, y + 14, [next(labels)], size=8.5, face="sans-bold")
        b.para(pg, x1 + 6, y + 15, x2 - x1 - 12, value, size=10, face="sans", leading=13)
        for x in (x0, x1, x2):
            b.rule(pg, x, y, x, y + height, 0.5)
        y += height

    section()
    row([c.name(1, "capitals")])
    row([c.name(1, "given")])
    born = f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/{rng.randint(1950, 2004)}"
    row([b.keep(born)])
    lines = c.address(po=False)
    row([b.value("address", "\n".join(lines[:-1]), "block")], height=14 + 13 * len(lines[:-1]))
    row([b.value("address", lines[-1], "cell")])
    row([b.keep(f"07{rng.randint(100, 999)} {rng.randint(100000, 999999)}")])
    y += 18
    section()
    row([c.name(1, "full")])
    row([b.value("account-number", make_sort_code(rng), "sort-code")])
    row([b.value("account-number", make_account(rng), "account")])
    row([b.value("account-number", make_card(rng), "card")])
    y += 18
    section()
    row([c.name(2, "full")])
    row([rng.choice(("Sister", "Neighbour", "Son", "Friend"))])
    base = b.para(pg, x0, y + 24, x2 - x0, c.text("form-sign"), size=9.5, leading=12.5)
    b.line(pg, x0, base + 18, c.text("form-sign", 1), size=10, face="serif")
    b.line(pg, 360, base + 18, c.text("form-sign", 2), size=10, face="serif")
    b.rule(pg, x0, base + 36, x2, base + 36, 0.5, 100)
    b.line(pg, x0, base + 52, c.text("form-sign", 3), size=8.5, face="sans", grey=70)


def _sideways(b: Builder, v: Vocab) -> None:
    c = Cast(b, v)
    rng = b.rng
    p1 = b.page()
    head = v.text["memo-head"]
    b.line(p1, MARGIN, 72, [b.keep(head[0])], size=14, face="sans-bold")
    for n in range(1, len(head)):
        b.line(p1, MARGIN, 84 + 16 * n, c.text("memo-head", n), size=10.5)
    b.rule(p1, MARGIN, 142, 612 - MARGIN, 142)
    base = 166.0
    for t in v.text["memo"]:
        base = b.para(p1, MARGIN, base, WIDTH, c.fill(t), size=10.5, leading=14) + 6
    b.para(p1, MARGIN, base + 10, 300, [c.name(2, "surname")], size=10.5)
    # page 2: a landscape schedule, fed into the scanner the other way round
    p2 = b.page(792, 612, scan_turn=rng.choice((90, 270)))
    words = v.text["schedule"]
    b.line(p2, MARGIN, 64, [b.keep(words[0])], size=13, face="sans-bold")
    cols = (MARGIN, 215.0, 430.0, 670.0)
    for text, x in zip(words[1:5], cols, strict=True):
        b.line(p2, x, 96, [text], size=9, face="sans-bold")
    b.rule(p2, MARGIN, 101, 792 - MARGIN, 101, 0.8)
    y = 120.0
    for n in range(3, 6):
        iban_value = make_iban(rng, rng.choice(v.iban_countries))
        street = f"{rng.randint(2, 240)} {rng.choice(v.streets)}, {rng.choice(v.towns)[0]}"
        b.line(p2, cols[0], y, [c.name(n, "full")], size=9.5)
        b.line(p2, cols[1], y, [b.value("account-number", iban_value, "iban")], size=9)
        b.line(p2, cols[2], y, [b.value("address", street, "cell")], size=8.5)
        b.line(p2, cols[3], y, [b.keep(_money(rng, 100, 9000))], size=9.5)
        y += 22
    b.para(p2, MARGIN, y + 20, 792 - 2 * MARGIN, c.text("schedule", 5), size=9.5)


def _faint(b: Builder, v: Vocab) -> None:
    c = Cast(b, v)
    rng = b.rng
    pg = b.page(612, 560)
    b.line(pg, MARGIN, 66, [c.slot("org1")], size=12, face="sans-bold")
    b.line(pg, MARGIN, 88, [b.keep(v.text["faint-head"][0])], size=15, face="serif-bold")
    greys = [150, 160, 170, 180, 190, 200]
    rng.shuffle(greys)
    y = 124.0
    values: list[list[Run]] = [
        [c.name(1, "full")],
        [b.value("account-number", make_account(rng), "account")],
        [b.value("account-number", make_sort_code(rng), "sort-code")],
        [b.value("address", ", ".join(c.address(po=False)), "inline")],
        [b.keep(_money(rng, 50, 3000))],
        [b.keep(f"PO-{rng.randint(10000, 99999)}")],
    ]
    for label, value, grey in zip(v.text["faint-labels"], values, greys, strict=True):
        b.line(pg, MARGIN, y, [label + ":"], size=10, face="sans-bold")
        b.line(pg, 190, y, value, size=10.5, face="mono", grey=grey)
        b.rule(pg, 185, y + 4, 612 - MARGIN, y + 4, 0.4, 150)
        y += 26
    y += 14
    for t in v.text["faint"]:
        grey = rng.choice((170, 185, 200))
        y = b.para(pg, MARGIN, y, WIDTH, c.fill(t), size=10, face="mono", grey=grey, leading=14)
        y += 4
    grey = rng.choice((155, 175))
    b.para(pg, MARGIN, y + 16, WIDTH, c.text("faint-head", 1), size=9.5, face="sans", grey=grey)


def _invoice(b: Builder, v: Vocab) -> None:
    c = Cast(b, v)
    rng = b.rng
    pg = b.page()
    words = v.text["invoice-labels"]
    b.line(pg, MARGIN, 72, [b.keep(words[0])], size=20, face="sans-bold")
    b.line(pg, MARGIN, 92, c.text("invoice-labels", 1), size=9.5)
    # the supplier's sidebar: a narrow column where long values wrap
    sx, sw = 430.0, 612 - MARGIN - 430.0
    b.line(pg, sx, 72, [c.name(1, "full")], size=9.5, face="sans-bold")
    addr = b.value("address", "\n".join(c.address(us=rng.random() < 0.3)), "block")
    base = b.para(pg, sx, 86, sw, [addr], size=8.5, face="sans", leading=11)
    base = b.para(pg, sx, base + 14, sw, [b.keep(words[2])], size=8.5, face="sans-bold")
    iban_text = c.iban()
    c.accounts["IBAN1"] = iban_text  # the body repeats it on one line
    groups = iban_text.split(" ")
    cut = rng.randint(2, len(groups) - 2)
    wrapped = " ".join(groups[:cut]) + "\n" + " ".join(groups[cut:])
    bic = b.keep("GRCB" + ("DEFF" if v is DEV else "FRPP"))
    details: list[Run] = [words[3], c.name(1, "full"), "\n" + words[4]]
    details += [b.value("account-number", wrapped, "iban"), "\n" + words[5], bic]
    b.para(pg, sx, base + 1, sw, details, size=8.5, face="sans", leading=11)
    b.line(pg, MARGIN, 140, [b.keep(words[6])], size=8.5, face="sans-bold")
    b.line(pg, MARGIN, 154, [c.slot("org1")], size=9.5)
    b.line(pg, MARGIN, 167, c.text("invoice-labels", 7), size=9.5)
    # items
    y = 260.0
    b.line(pg, MARGIN, y, [words[8]], size=9, face="sans-bold")
    b.line(pg, 612 - MARGIN, y, [words[9]], size=9, face="sans-bold", align="right")
    b.rule(pg, MARGIN, y + 5, 612 - MARGIN, y + 5, 0.8)
    items = list(v.text["invoice-items"])
    rng.shuffle(items)
    y += 20
    for item in items[:4]:
        b.line(pg, MARGIN, y, [b.keep(item)], size=9.5)
        b.line(pg, 612 - MARGIN, y, [b.keep(_money(rng, 60, 1800, "€"))], size=9.5, align="right")
        y += 17
    b.rule(pg, MARGIN, y - 8, 612 - MARGIN, y - 8, 0.8)
    y += 16
    for t in v.text["invoice"]:
        y = b.para(pg, MARGIN, y, 340, c.fill(t), size=9.5, leading=12.5) + 6


_LAYOUTS = {
    "news": _news,
    "feature": _feature,
    "interview": _interview,
    "statement": _statement,
    "letter": _letter,
    "form": _form,
    "sideways": _sideways,
    "faint": _faint,
    "invoice": _invoice,
}
# how each kind arrives, by round (one document of each kind per round): medium and format
_ARRIVES: dict[str, tuple[tuple[str, str], ...]] = {
    "news": ((DIGITAL, "pdf"), (SCAN, "pdf")),
    "feature": ((SCAN, "pdf"), (DIGITAL, "pdf")),
    "interview": ((SCAN, "pdf"), (DIGITAL, "pdf")),
    "statement": ((SCAN, "pdf"), (DIGITAL, "pdf")),
    "letter": ((SCAN, "png"), (SCAN, "jpeg")),
    "form": ((DIGITAL, "pdf"), (SCAN, "tiff")),
    "sideways": ((SCAN, "tiff"), (SCAN, "pdf")),
    "faint": ((SCAN, "pdf"), (SCAN, "png")),
    "invoice": ((DIGITAL, "pdf"), (SCAN, "pdf")),
}


def document(kind: str, split: str, index: int = 0, seed: int = 2026) -> Document:
    """One document of ``kind`` from the ``split`` half; the same arguments give the same one."""
    v = VOCABS[split]
    doc_seed = zlib.crc32(f"{seed}/{split}/{kind}/{index}".encode())
    b = Builder(
        f"{kind}-{'dev' if split == 'dev' else 'ho'}-{index:02d}",
        kind,
        split,
        random.Random(doc_seed),
    )
    _LAYOUTS[kind](b, v)
    medium, fmt = _ARRIVES[kind][index % len(_ARRIVES[kind])]
    return b.build(medium, fmt, doc_seed)


def documents(split: str, count: int = len(KINDS), seed: int = 2026) -> list[Document]:
    """``count`` documents of one half, the kinds in turn."""
    return [document(KINDS[n % len(KINDS)], split, n // len(KINDS), seed) for n in range(count)]


def corpus(count: int = len(KINDS), seed: int = 2026) -> dict[str, list[Document]]:
    return {split: documents(split, count, seed) for split in SPLITS}


def ci_documents(seed: int = 7) -> list[Document]:
    """A few small scanned documents for the CI recall check (under 10 s in all at 300 dpi with
    the read-back): names in prose with surname-alone and possessive mentions, speaker labels and
    payees in capitals, a statement table (sort code in its own cell, an IBAN without spaces in
    a description), an IBAN wrapped over two lines, and a name and an account number in faint
    grey print. Drawn from the dev half's vocabulary. A test does::

        for doc in ci_documents():
            outcome = redact_and_score(doc, tmp_path, 300, engine, policy)
            assert outcome.missed() == [], [s.mention.text for s in outcome.missed()]
    """
    out: list[Document] = []
    rng = random.Random(seed)
    v = DEV

    # 1. prose and capitals
    b = Builder("ci-prose", "news", "ci", random.Random(rng.random()))
    c = Cast(b, v, people=3)
    pg = b.page(612, 330)
    base = b.para(pg, MARGIN, 70, 612 - 2 * MARGIN, c.fill(v.text["news"][0]), size=10.5)
    base = b.para(pg, MARGIN, base + 6, 612 - 2 * MARGIN, c.fill(v.text["news"][1]), size=10.5)
    base = b.para(pg, MARGIN, base + 6, 612 - 2 * MARGIN, c.fill(v.text["news"][2]), size=10.5)
    for speaker, text in ((2, "Where did you grow up?"), (1, "In a small town by the sea.")):
        b.line(pg, MARGIN, base + 10, [c.name(speaker, "capitals"), ":"], size=10, face="mono")
        b.line(pg, MARGIN + 110, base + 10, [text], size=10, face="mono")
        base += 16
    out.append(b.build(SCAN, "pdf", 1))

    # 2. a statement table with a wrapped IBAN beside it
    b = Builder("ci-table", "statement", "ci", random.Random(rng.random()))
    c = Cast(b, v, people=3)
    pg = b.page(612, 330)
    y = 70.0
    for label, value in (
        ("Sort code", b.value("account-number", make_sort_code(b.rng), "sort-code")),
        ("Account number", b.value("account-number", make_account(b.rng), "account")),
    ):
        b.rule(pg, MARGIN, y - 13, 330, y - 13, 0.5)
        b.line(pg, MARGIN + 4, y, [label], size=9.5)
        b.line(pg, 180, y, [value], size=9.5)
        b.rule(pg, 170, y - 13, 170, y + 5, 0.5)
        y += 18
    y += 16
    compact = b.value("account-number", make_iban(b.rng, "DE", spaced=False), "iban-compact")
    rows: list[list[Run]] = [
        ["FASTER PAYMENT TO ", c.name(1, "full-capitals"), " REF RENT"],
        ["SEPA CT ", compact, " ", c.name(2, "capitals")],
        ["CARD PAYMENT ", b.keep(v.merchants[0])],
    ]
    for row in rows:
        b.line(pg, MARGIN, y, [b.keep("12 Mar")], size=9)
        b.line(pg, MARGIN + 50, y, row, size=9)
        y += 16
    groups = make_iban(b.rng, "GB").split(" ")
    wrapped = b.value("account-number", " ".join(groups[:3]) + "\n" + " ".join(groups[3:]), "iban")
    b.para(
        pg, 400, 70, 150, ["Pay to: ", c.name(3, "full"), "\nIBAN: ", wrapped], size=9, face="sans"
    )
    out.append(b.build(SCAN, "pdf", 2))

    # 3. faint print
    b = Builder("ci-faint", "faint", "ci", random.Random(rng.random()))
    c = Cast(b, v, people=2)
    pg = b.page(612, 300)
    b.line(pg, MARGIN, 70, [b.keep("Payout request")], size=14, face="serif-bold")
    b.line(pg, MARGIN, 110, ["Claimant:"], size=10, face="sans-bold")
    b.line(pg, 190, 110, [c.name(1, "full")], size=10.5, face="mono", grey=175)
    b.line(pg, MARGIN, 136, ["Account number:"], size=10, face="sans-bold")
    b.line(
        pg,
        190,
        136,
        [b.value("account-number", make_account(b.rng), "account")],
        size=10.5,
        face="mono",
        grey=160,
    )
    b.para(
        pg,
        MARGIN,
        176,
        612 - 2 * MARGIN,
        c.fill(v.text["faint"][0]),
        size=10,
        face="mono",
        grey=190,
    )
    out.append(b.build(SCAN, "pdf", 3))
    return out


# ---------------------------------------------------------------------------------------------
# Rendering: as the document arrives


def _skew_point(x: float, y: float, w: float, h: float, degrees: float) -> tuple[float, float]:
    """Where (x, y) of a w x h frame lands when the frame's content is turned ``degrees``
    counter-clockwise about its centre (as ``Image.rotate`` does), y down."""
    t = np.radians(degrees)
    dx, dy = x - w / 2, y - h / 2
    return (
        w / 2 + dx * float(np.cos(t)) + dy * float(np.sin(t)),
        h / 2 - dx * float(np.sin(t)) + dy * float(np.cos(t)),
    )


def skewed(box: Box, w: float, h: float, degrees: float) -> Box:
    if not degrees:
        return box
    pts = [_skew_point(x, y, w, h, degrees) for x in (box[0], box[2]) for y in (box[1], box[3])]
    return (
        min(p[0] for p in pts),
        min(p[1] for p in pts),
        max(p[0] for p in pts),
        max(p[1] for p in pts),
    )


def page_image(doc: Document, index: int, dpi: float) -> Image.Image:
    """One page as the scanner saw it: grey, with paper tone, blur, noise and a slight skew,
    turned as it lay on the glass."""
    page = doc.pages[index]
    k = dpi / 72.0
    image = Image.new("L", (round(page.width * k), round(page.height * k)), 255)
    draw = ImageDraw.Draw(image)
    for r in page.rules:
        draw.line(
            (r.x0 * k, r.y0 * k, r.x1 * k, r.y1 * k), fill=r.grey, width=max(1, round(r.width * k))
        )
    for g in page.glyphs:
        draw.text(
            (g.x * k, g.base * k), g.text, font=_face(g.font, g.size * k), fill=g.grey, anchor="ls"
        )
    if doc.medium == DIGITAL:
        return image
    rng = np.random.default_rng(doc.seed + 7919 * index)
    image = image.filter(ImageFilter.GaussianBlur(0.35 * dpi / 300))
    paper = float(rng.uniform(238, 250))
    a = np.asarray(image, dtype=np.float32) * (paper / 255.0)
    a += rng.normal(0.0, doc.noise, a.shape).astype(np.float32)
    specks = rng.integers(0, a.size, size=int(a.size * 2e-5))
    a.flat[specks] = rng.uniform(30, 120, size=specks.size)
    image = Image.fromarray(np.clip(a, 0, 255).astype(np.uint8), "L")
    if doc.skews[index]:
        image = image.rotate(
            doc.skews[index], resample=Image.Resampling.BICUBIC, fillcolor=round(paper)
        )
    if page.scan_turn:
        image = image.rotate(-page.scan_turn, expand=True)
    return image


def render(doc: Document, folder: Path, dpi: int = 300) -> Path:
    """Write ``doc`` as it would arrive: a scan at ``dpi`` in its format, or a born-digital
    PDF (``dpi`` does not matter then). Returns the file."""
    folder.mkdir(parents=True, exist_ok=True)
    if doc.medium == DIGITAL:
        return digital_pdf(doc, folder / f"{doc.id}.pdf")
    images = [page_image(doc, n, dpi) for n in range(len(doc.pages))]
    stem = folder / f"{doc.id}-{dpi}"
    if doc.fmt == "png" and len(images) == 1:
        return save_png(images[0], stem.with_suffix(".png"), dpi)
    if doc.fmt == "jpeg" and len(images) == 1:
        return save_jpeg(images[0], stem.with_suffix(".jpg"), dpi, quality=82)
    if doc.fmt == "tiff":
        return save_tiff(images, stem.with_suffix(".tif"), dpi, bilevel=False)
    return image_pdf(images, stem.with_suffix(".pdf"), dpi)


@cache
def _font_file(key: str) -> bytes:
    return zlib.compress(font(key).data, 6)


def _to_unicode(used: dict[int, str]) -> bytes:
    lines = [
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap",
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
        "/CMapName /Adobe-Identity-UCS def /CMapType 2 def",
        "1 begincodespacerange <0000> <FFFF> endcodespacerange",
    ]
    items = sorted(used.items())
    for start in range(0, len(items), 100):
        chunk = items[start : start + 100]
        lines.append(f"{len(chunk)} beginbfchar")
        lines += [f"<{g:04X}> <{ch.encode('utf-16-be').hex().upper()}>" for g, ch in chunk]
        lines.append("endbfchar")
    lines.append("endcmap CMapName currentdict /CMap defineresource pop end end")
    return "\n".join(lines).encode()


def digital_pdf(doc: Document, path: Path) -> Path:
    """A born-digital PDF: real text in embedded DejaVu (Type0, Identity-H, with ToUnicode),
    every glyph where the ground truth says it is."""
    pdf = pikepdf.Pdf.new()
    used: dict[str, dict[int, str]] = {}
    contents: list[bytes] = []
    for page in doc.pages:
        ops: list[str] = []
        for r in page.rules:
            ops.append(
                f"{r.grey / 255:.3f} G {r.width:.2f} w {r.x0:.2f} {page.height - r.y0:.2f} m "
                f"{r.x1:.2f} {page.height - r.y1:.2f} l S"
            )
        for g in page.glyphs:
            f = font(g.font)
            mine = used.setdefault(g.font, {})
            codes = []
            for ch in g.text:
                gid = f.gid(ch)
                mine[gid] = ch
                codes.append(f"{gid:04X}")
            name = "F" + str(list(FONT_FILES).index(g.font))
            ops.append(
                f"BT /{name} {g.size:.2f} Tf {g.grey / 255:.3f} g 1 0 0 1 {g.x:.2f} "
                f"{page.height - g.base:.2f} Tm <{''.join(codes)}> Tj ET"
            )
        contents.append("\n".join(ops).encode())
    fonts = Dictionary()
    for key, glyphs in used.items():
        f = font(key)
        stream = pdf.make_stream(_font_file(key))
        stream.Filter = Name.FlateDecode
        stream.Length1 = len(f.data)
        base = Name("/" + f.path.stem.replace("-", ""))
        widths = Array()
        for gid in sorted(glyphs):
            widths.append(gid)
            widths.append(Array([round(f.advance(glyphs[gid]))]))
        descriptor = Dictionary(
            Type=Name.FontDescriptor,
            FontName=base,
            Flags=32,
            FontBBox=Array([-1000, -400, 2000, 1200]),
            ItalicAngle=0,
            Ascent=round(f.ascent * 1000),
            Descent=-round(f.descent * 1000),
            CapHeight=730,
            StemV=80,
            FontFile2=stream,
        )
        cid = Dictionary(
            Type=Name.Font,
            Subtype=Name.CIDFontType2,
            BaseFont=base,
            CIDSystemInfo=Dictionary(Registry="Adobe", Ordering="Identity", Supplement=0),
            FontDescriptor=pdf.make_indirect(descriptor),
            CIDToGIDMap=Name.Identity,
            W=widths,
        )
        fonts[Name("/F" + str(list(FONT_FILES).index(key)))] = pdf.make_indirect(
            Dictionary(
                Type=Name.Font,
                Subtype=Name.Type0,
                BaseFont=base,
                Encoding=Name("/Identity-H"),
                DescendantFonts=Array([pdf.make_indirect(cid)]),
                ToUnicode=pdf.make_stream(_to_unicode(glyphs)),
            )
        )
    for page, content in zip(doc.pages, contents, strict=True):
        pdf.pages.append(
            pikepdf.Page(
                Dictionary(
                    Type=Name.Page,
                    MediaBox=Array([0, 0, page.width, page.height]),
                    Resources=Dictionary(Font=fonts),
                    Contents=pdf.make_stream(content),
                )
            )
        )
    pdf.save(path)
    return path


# ---------------------------------------------------------------------------------------------
# Reading an output back, and scoring it

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
    from pressroom.errors import PressroomError, ReviewRequired
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
        redact_document(src, out, JobOptions(template=resolve_template(None)), policy, engine)
    except ReviewRequired as exc:
        held = f"{type(exc).__name__}: {exc}"
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
