"""A reviewer's corrections turned into what the redaction builds from — values let stand, boxes
drawn by hand, words to go wherever they occur — and the review sheet a reviewer works from.
Pure functions over the first pass's scans, no I/O: the build and its checks stay one path."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pressroom.corrections import MANUAL, Area, Corrections, ReviewSheet, SheetFinding, SheetPage
from pressroom.errors import BadRequest
from pressroom.models import Box, Word
from pressroom.redact.detect.detector import name_tokens
from pressroom.redact.findings import DocumentFinding, page_findings
from pressroom.redact.plan import Hit, covered_words, normalise, overlaps
from pressroom.redact.scan import PageScan


@dataclass(frozen=True, slots=True)
class Applied:
    """What the build and the checks must know of a reviewer's corrections. Pages are content
    page indexes (from 0); points are in the content page's frame, like a finding's box."""

    allowed: frozenset[str] = frozenset()  # normalised values a reviewer let stand
    kept: tuple[str, ...] = ()  # those values as found (to find their words again)
    drawn: Mapping[int, tuple[Box, ...]] = field(default_factory=dict)  # scan pixels
    drawn_pt: Mapping[int, tuple[Box, ...]] = field(default_factory=dict)  # points
    removed_pt: Mapping[int, tuple[Box, ...]] = field(default_factory=dict)  # points

    def tokens(self, names: Iterable[str]) -> frozenset[str]:
        """The name tokens of ``names`` less any a reviewer let stand (a surname clicked away)."""
        return frozenset(
            t
            for t in name_tokens(v for v in names if not self.lets_stand(v))
            if normalise(t) not in self.allowed
        )

    def lets_stand(self, value: str) -> bool:
        return normalise(value) in self.allowed

    def ignored(
        self, hit: Hit, words: Sequence[Word], page_pt: Sequence[Box], scale: float
    ) -> bool:
        """Whether a hit found on the output is a value a reviewer let stand: its value, or
        only words of such values, or only words inside the boxes the reviewer clicked away
        (``page_pt``: those boxes in the output page's points; ``scale``: pixels a point)."""
        if not self.allowed:
            return False
        if self.lets_stand(hit.finding.value):
            return True
        if not hit.words:
            return False
        if set(hit.words) <= covered_words(words, [], self.kept):
            return True
        areas = [_scaled(b, scale) for b in page_pt]
        return all(any(overlaps(words[i].box, a) for a in areas) for i in hit.words)


NOTHING = Applied()


def apply_corrections(
    corrections: Corrections | None,
    scans: Sequence[PageScan],
    by_kind: dict[str, set[str]],
) -> Applied:
    """``corrections`` applied to the first pass: values found under a removed box leave
    ``by_kind`` (every class) and every page's hits; the words under an "every occurrence"
    area join ``by_kind`` as class ``manual``. Both are changed in place. What the build and
    the checks need besides is returned. None or empty: nothing changes."""
    if corrections is None or corrections.empty:
        return NOTHING
    for area in (*corrections.removed, *corrections.manual, *corrections.every):
        if area.page > len(scans):
            raise BadRequest(f"corrections: page {area.page} is not in the document")
    tokens = name_tokens(by_kind.get("name", ()))
    allowed: set[str] = set()
    kept: dict[str, str] = {}
    for area in corrections.removed:
        scan = scans[area.page - 1]
        for f in page_findings(scan, by_kind, tokens):
            if chosen(Box(*f.box), Box(*area.box)):
                for value in _values_of(f, by_kind):
                    allowed.add(normalise(value))
                    kept.setdefault(normalise(value), value)
    every: set[str] = set()
    for area in corrections.every:
        every |= _words_under(scans[area.page - 1], area)
    # a value the reviewer asked to go everywhere is not also let stand
    allowed -= {normalise(v) for v in every}
    allowed.discard("")
    for kind in list(by_kind):
        by_kind[kind] = {v for v in by_kind[kind] if normalise(v) not in allowed}
        if not by_kind[kind]:
            del by_kind[kind]
    for scan in scans:
        scan.hits_ocr = [h for h in scan.hits_ocr if normalise(h.finding.value) not in allowed]
        scan.hits_text = [h for h in scan.hits_text if normalise(h.finding.value) not in allowed]
    if every:
        by_kind.setdefault(MANUAL, set()).update(every)
    drawn: dict[int, list[Box]] = {}
    drawn_pt: dict[int, list[Box]] = {}
    for area in corrections.manual:
        scan = scans[area.page - 1]
        box = _clipped(_scaled(Box(*area.box), scan.dpi / 72.0), scan.size)
        if box is None:
            continue  # wholly off the page: nothing there to burn
        drawn.setdefault(area.page - 1, []).append(box)
        drawn_pt.setdefault(area.page - 1, []).append(_scaled(box, 72.0 / scan.dpi))
    removed_pt: dict[int, list[Box]] = {}
    for area in corrections.removed:
        removed_pt.setdefault(area.page - 1, []).append(Box(*area.box))
    return Applied(
        frozenset(allowed),
        tuple(v for k, v in sorted(kept.items()) if k in allowed),
        {k: tuple(v) for k, v in drawn.items()},
        {k: tuple(v) for k, v in drawn_pt.items()},
        {k: tuple(v) for k, v in removed_pt.items()},
    )


def _values_of(f: DocumentFinding, by_kind: Mapping[str, set[str]]) -> set[str]:
    """The values a finding stands for: its own, and any of the document's values it holds (a
    value inside a longer token). One word of a longer value lets only that word stand (a
    surname clicked away is no name token any more), never the whole value: a person found
    elsewhere still goes wherever written in full."""
    own = normalise(f.value)
    out = {f.value}
    for values in by_kind.values():
        out |= {v for v in values if len(normalise(v)) >= 3 and normalise(v) in own}
    return out


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
        )
        for s in scans
    )
    corrections = corrections or Corrections()
    shown = [SheetFinding(f.page, f.kind, f.box) for f in findings]
    shown += [SheetFinding(a.page, MANUAL, a.box) for a in corrections.manual]
    return ReviewSheet(pages, tuple(shown), corrections)
