"""Laying a document out: text runs carry tags, and layout records where every tagged
character went, so the ground truth is where the glyphs are."""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from corpora.documents.fonts import font, pick
from corpora.documents.model import (
    DIGITAL,
    FAINT_GREY,
    KEEP,
    SCAN,
    Box,
    Document,
    Drawn,
    Glyphs,
    Mention,
    Page,
    Piece,
    Rule,
)


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
        self.pages[page].rules.append(Rule(x0, y0, x1, y1, width, grey))

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
            tf = pick(face, text)
            w = tf.width(text, size)
            self.pages[page].glyphs.append(Glyphs(text, x, base, size, tf.key, grey))
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
            total = sum(pick(face, t.text).width(t.text, size) for t in toks) + f.width(
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
            w = pick(face, tok.text).width(tok.text, size)
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
