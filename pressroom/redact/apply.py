"""A reviewer's corrections turned into what the redaction builds from — values let stand, boxes
drawn by hand, words to go wherever they occur — and the review sheet a reviewer works from.
Pure functions over the first pass's scans, no I/O: the build and its checks stay one path."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pressroom.corrections import (
    MANUAL,
    Area,
    Corrections,
    ReviewSheet,
    SheetFinding,
    SheetPage,
    removed_match,
)
from pressroom.errors import BadRequest
from pressroom.models import Box, Word
from pressroom.redact.detect.detector import name_tokens
from pressroom.redact.detection import Hit
from pressroom.redact.findings import DocumentFinding, page_findings
from pressroom.redact.plan import BoxIndex, normalise
from pressroom.redact.scan import PageScan


@dataclass(frozen=True, slots=True)
class Applied:
    """What the build and the checks must know of a reviewer's corrections. Pages are content
    page indexes (from 0); points are in the content page's frame, like a finding's box.

    A removed box lets its finding's words stand *there*: the same value found elsewhere, and
    any other finding over the same words (a nested address inside an address with a date),
    is still burned, as the desk shows it."""

    allowed: frozenset[str] = frozenset()  # normalised values let stand somewhere
    kept: tuple[str, ...] = ()  # those values as found
    drawn: Mapping[int, tuple[Box, ...]] = field(default_factory=dict)  # scan pixels
    drawn_pt: Mapping[int, tuple[Box, ...]] = field(default_factory=dict)  # points
    removed_pt: Mapping[int, tuple[Box, ...]] = field(default_factory=dict)  # removed findings
    active_pt: Mapping[int, tuple[Box, ...]] = field(default_factory=dict)  # every other one
    # (page from 1, class) of an active finding that keeps a removed box's words burned
    overridden: tuple[tuple[int, str], ...] = ()

    def tokens(self, names: Iterable[str]) -> frozenset[str]:
        """The name tokens of ``names`` less any of a value let stand: what the checks look
        for document-wide (every burned box is checked on its own besides)."""
        return frozenset(
            t
            for t in name_tokens(v for v in names if not self.lets_stand(v))
            if normalise(t) not in self.allowed
        )

    def lets_stand(self, value: str) -> bool:
        return normalise(value) in self.allowed

    def exempt(self, page: int, words: Sequence[Word], scale: float) -> set[int]:
        """Words of content page ``page`` (boxes in pixels, ``scale`` pixels a point) that a
        removed box lets stand: inside a removed finding, inside no active one."""
        removed = [_scaled(b, scale) for b in self.removed_pt.get(page, ())]
        if not removed:
            return set()
        active = [_scaled(b, scale) for b in self.active_pt.get(page, ())]
        # each word is judged against the boxes near it only: a page of many findings and
        # many words is not every word against every finding
        near_removed, near_active = _indexed(removed, _CELL_PX), _indexed(active, _CELL_PX)
        return {
            i
            for i, w in enumerate(words)
            if any(chosen(w.box, removed[n]) for n in near_removed.near(w.box))
            and not any(chosen(w.box, active[n]) for n in near_active.near(w.box))
        }

    def ignored(
        self, hit: Hit, words: Sequence[Word], page_pt: Sequence[Box], scale: float
    ) -> bool:
        """Whether a hit found on the output is what a reviewer let stand: every word of it
        inside the removed boxes (``page_pt``: those boxes in the output page's points;
        ``scale``: pixels a point) — the same value at the same place, never elsewhere."""
        if not page_pt or not hit.words:
            return False
        areas = [_scaled(_grown(b, 2.0), scale) for b in page_pt]
        return all(any(chosen(words[i].box, a) for a in areas) for i in hit.words)


NOTHING = Applied()


@dataclass
class Found:
    """Every value found so far, by class (``by_kind``: grows as a build learns more), the
    name tokens of every person found (what the build burns), and a reviewer's corrections as
    the build and the checks need them."""

    by_kind: dict[str, set[str]]
    tokens: frozenset[str] = frozenset()
    applied: Applied = NOTHING

    @classmethod
    def of(
        cls,
        by_kind: dict[str, set[str]],
        corrections: Corrections | None,
        scans: Sequence[PageScan],
    ) -> Found:
        found = cls(by_kind)
        found.judge(corrections, scans)
        return found

    def judge(self, corrections: Corrections | None, scans: Sequence[PageScan]) -> None:
        """The corrections applied again to the values as they are now (an "every occurrence"
        area's words join ``by_kind``), and the name tokens taken again: what is let stand
        and what stays burned, judged with every value learnt so far."""
        self.applied = apply_corrections(corrections, scans, self.by_kind)
        self.tokens = name_tokens(self.by_kind.get("name", ()))


def apply_corrections(
    corrections: Corrections | None,
    scans: Sequence[PageScan],
    by_kind: dict[str, set[str]],
) -> Applied:
    """``corrections`` applied to the first pass, finding by finding: a removed box takes out
    the one finding it was drawn for (the finding whose box it matches), and nothing else —
    a finding nested in it or over the same words stays, and is burned. The words under an
    "every occurrence" area join ``by_kind`` as class ``manual`` (changed in place). What the
    build and the checks need is returned. None or empty: nothing changes."""
    if corrections is None or corrections.empty:
        return NOTHING
    for area in (*corrections.removed, *corrections.manual, *corrections.every):
        if area.page > len(scans):
            raise BadRequest(f"corrections: page {area.page} is not in the document")
    # "every occurrence" first: its words are findings like any other, active wherever
    # they stand, a removed box's included
    every: set[str] = set()
    for area in corrections.every:
        every |= _words_under(scans[area.page - 1], area)
    if every:
        by_kind.setdefault(MANUAL, set()).update(every)
    tokens = name_tokens(by_kind.get("name", ()))
    allowed: set[str] = set()
    kept: dict[str, str] = {}
    removed_pt: dict[int, list[Box]] = {}
    active_pt: dict[int, list[Box]] = {}
    overridden: set[tuple[int, str]] = set()
    on_page: dict[int, list[Area]] = {}
    for area in corrections.removed:
        on_page.setdefault(area.page, []).append(area)
    for page, areas in sorted(on_page.items()):
        found = page_findings(scans[page - 1], by_kind, tokens)
        # each area, and each removed finding, is matched against the findings near it only
        # (the same answer as every one against every one: a match overlaps)
        boxes = _indexed([Box(*f.box) for f in found], _CELL_PT)
        gone: set[int] = set()
        for area in areas:
            near = boxes.near(Box(*area.box))
            match = removed_match([found[n].box for n in near], area.box)
            if match is not None:
                gone.add(near[match])
        # each finding by the boxes of its lines, as the desk draws it and the build burns
        # it: a name wrapped over two lines lets stand (or keeps burned) its two words, never
        # the rectangle over both lines, which holds other words
        parts = [_parts(f) for f in found]
        for n, f_parts in enumerate(parts):
            (removed_pt if n in gone else active_pt).setdefault(page - 1, []).extend(f_parts)
        staying = BoxIndex(_CELL_PT)
        for m, g_parts in enumerate(parts):
            if m not in gone:
                for b in g_parts:
                    staying.add(m, b)
        for n in gone:
            f = found[n]
            allowed.add(normalise(f.value))
            kept.setdefault(normalise(f.value), f.value)
            for a in parts[n]:
                for m in staying.near(a):
                    if any(_shares_words(a, b) for b in parts[m]):
                        overridden.add((page, found[m].kind))
    # a value the reviewer asked to go everywhere is not also let stand
    allowed -= {normalise(v) for v in every}
    allowed.discard("")
    drawn: dict[int, list[Box]] = {}
    drawn_pt: dict[int, list[Box]] = {}
    for area in corrections.manual:
        scan = scans[area.page - 1]
        box = _clipped(_scaled(Box(*area.box), scan.dpi / 72.0), scan.size)
        if box is None:
            continue  # wholly off the page: nothing there to burn
        drawn.setdefault(area.page - 1, []).append(box)
        drawn_pt.setdefault(area.page - 1, []).append(_scaled(box, 72.0 / scan.dpi))
    return Applied(
        frozenset(allowed),
        tuple(v for k, v in sorted(kept.items()) if k in allowed),
        {k: tuple(v) for k, v in drawn.items()},
        {k: tuple(v) for k, v in drawn_pt.items()},
        {k: tuple(v) for k, v in removed_pt.items()},
        {k: tuple(v) for k, v in active_pt.items()},
        tuple(sorted(overridden)),
    )


_CELL_PT = 48.0  # a grid cell of the indexes over a page's findings, in points
_CELL_PX = 64.0  # and over a page's words, in scan pixels


def _indexed(boxes: Sequence[Box], cell: float) -> BoxIndex:
    """``boxes`` in an index, each by its position in the list."""
    index = BoxIndex(cell)
    for n, b in enumerate(boxes):
        index.add(n, b)
    return index


def _parts(f: DocumentFinding) -> list[Box]:
    """A finding's boxes, one per line of its words (its box, on one line)."""
    return [Box(*b) for b in (f.lines if len(f.lines) > 1 else (f.box,))]


def _shares_words(a: Box, b: Box) -> bool:
    """Whether two findings' boxes hold the same words (one inside the other, or crossing)."""
    return chosen(a, b) or chosen(b, a)


def _grown(b: Box, pad: float) -> Box:
    return Box(b.x0 - pad, b.y0 - pad, b.x1 + pad, b.y1 + pad)


def _words_under(scan: PageScan, area: Area) -> set[str]:
    """The text under an area, as OCR read it and as the page's own text has it, each joined
    in reading order: the value(s) a reviewer chose to redact wherever they occur."""
    box = _scaled(Box(*area.box), scan.dpi / 72.0)
    out: set[str] = set()
    for words in (scan.ocr, scan.extracted):
        text = " ".join(w.text for w in words if chosen(w.box, box)).strip()
        if normalise(text):
            out.add(text)
    return out


def chosen(thing: Box, area: Box) -> bool:
    """Whether a reviewer's area picks a word or a finding: half of it at least lies inside, or
    the area lies mostly within it. A drag that grazes a neighbour does not take it along."""
    w = min(thing.x1, area.x1) - max(thing.x0, area.x0)
    h = min(thing.y1, area.y1) - max(thing.y0, area.y0)
    if w <= 0 or h <= 0:
        return False
    return w * h >= 0.5 * min(_area(thing), _area(area))


def _area(b: Box) -> float:
    return max(b.width, 0.0) * max(b.height, 0.0)


def _scaled(b: Box, k: float) -> Box:
    return Box(b.x0 * k, b.y0 * k, b.x1 * k, b.y1 * k)


def _clipped(b: Box, size: tuple[int, int]) -> Box | None:
    w, h = size
    out = Box(max(b.x0, 0.0), max(b.y0, 0.0), min(b.x1, float(w)), min(b.y1, float(h)))
    return out if out.x1 - out.x0 >= 1 and out.y1 - out.y0 >= 1 else None


def review_sheet(
    scans: Sequence[PageScan],
    findings: Sequence[DocumentFinding],
    corrections: Corrections | None,
) -> ReviewSheet:
    """The pages as the redaction read them, every finding's place and class (never its
    value) and each box drawn by hand, with the corrections they came from."""
    pages = tuple(
        SheetPage(
            s.size[0] * 72.0 / s.dpi,
            s.size[1] * 72.0 / s.dpi,
            s.rotation,
            s.level,
            s.placement,
            s.bands,
        )
        for s in scans
    )
    corrections = corrections or Corrections()
    shown = [f.sheet() for f in findings]
    shown += [SheetFinding(a.page, MANUAL, a.box) for a in corrections.manual]
    return ReviewSheet(pages, tuple(shown), corrections)
