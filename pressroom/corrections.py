"""A reviewer's corrections to a redaction, and the review sheet a reviewer works from.

Both are plain values in the frame every finding uses: PDF points, origin at the top left of
the page as it stands upright (turned and levelled the way the redaction read it). They carry
boxes and classes only, never document text, so they may be stored with the job, sent to a
browser and written to the decision record.

- ``Corrections``: what a reviewer changed before applying — boxes removed (the values found
  there stay in the text), boxes added by hand (class ``manual``: burned where drawn), and
  areas whose words are to go wherever they occur ("redact every occurrence").
- ``ReviewSheet``: each page's upright size and how the scan was turned and levelled, and every
  finding's place and class; the desk draws the boxes from it. A copy held by a check of the
  output (a value read again, text under a burned box, a box not solid, a page read with too
  little confidence) carries what the check found again (``rechecked``): page, class and box,
  drawn at the desk as a box of its own kind.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pressroom.errors import BadRequest
from pressroom.jsondepth import json_too_deep

MAX_AREAS = 500  # per list: a page of corrections is a few dozen; more is no person's work
MANUAL = "manual"  # the class of a box a reviewer drew
MAX_JSON_DEPTH = 16  # corrections are three levels deep; nothing a person sends nests deeper
# a box drawn by hand may reach this far past its page's edge (points: the desk's rounding)
EDGE_PT = 1.0
# what a check of the output found again, where it has no finding class of its own
RECHECK_KINDS = {
    "leak": "a found value read again on the output",
    "under-box": "text still under a burned or drawn box",
    "unsolid": "a burned box that is not solid",
    "low-confidence": "a page read with too little confidence to judge",
    "low-resolution": "a page read below 300 dpi that shows more than its own text",
    "unreadable": "text the check cannot read as characters",
}


def parse_json(raw: str | bytes, what: str = "corrections") -> object:
    """JSON a person sent, nested at most ``MAX_JSON_DEPTH`` deep: deeper is ``BadRequest``
    before it is parsed (a parser's recursion limit is no answer), and so is text that is
    not JSON."""
    if json_too_deep(raw, MAX_JSON_DEPTH):
        raise BadRequest(f"{what}: JSON nested more than {MAX_JSON_DEPTH} deep")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise BadRequest(f"{what}: not JSON") from None


@dataclass(frozen=True, slots=True)
class Area:
    """A rectangle on one page (from 1): x0, y0, x1, y1 in points, top-left origin."""

    page: int
    box: tuple[float, float, float, float]

    def as_json(self) -> dict[str, Any]:
        return {"page": self.page, "box": [round(v, 2) for v in self.box]}

    @classmethod
    def parse(cls, raw: object, what: str) -> Area:
        if not isinstance(raw, Mapping):
            raise BadRequest(f"{what}: expected an object with page and box")
        page, box = raw.get("page"), raw.get("box")
        if isinstance(page, float) and page.is_integer():
            page = int(page)  # 3.0 is the whole number JSON says it is
        if not isinstance(page, int) or isinstance(page, bool) or not 1 <= page <= 100_000:
            raise BadRequest(f"{what}: page must be a whole number from 1")
        if (
            not isinstance(box, Sequence)
            or isinstance(box, str)
            or len(box) != 4
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in box)
            or not all(math.isfinite(v) and 0 <= v <= 20_000 for v in box)
        ):
            raise BadRequest(f"{what}: box must be four numbers x0, y0, x1, y1 in points")
        x0, y0, x1, y1 = (float(v) for v in box)
        if x1 - x0 < 1 or y1 - y0 < 1:
            raise BadRequest(f"{what}: box must be at least 1 pt wide and high, x0 < x1, y0 < y1")
        return cls(page, (x0, y0, x1, y1))


@dataclass(frozen=True, slots=True)
class Corrections:
    """A reviewer's changes, applied by the redaction engine on its next build."""

    removed: tuple[Area, ...] = ()  # finding boxes clicked away: the values there stay
    manual: tuple[Area, ...] = ()  # boxes drawn by hand: burned exactly there
    every: tuple[Area, ...] = ()  # areas whose words go wherever they occur

    @property
    def empty(self) -> bool:
        return not (self.removed or self.manual or self.every)

    def as_json(self) -> dict[str, Any]:
        return {
            "removed": [a.as_json() for a in self.removed],
            "manual": [a.as_json() for a in self.manual],
            "every": [a.as_json() for a in self.every],
        }

    def counts(self) -> dict[str, int]:
        """What changed, as numbers: what the decision record keeps."""
        return {"removed": len(self.removed), "manual": len(self.manual), "every": len(self.every)}

    @classmethod
    def parse(cls, raw: object) -> Corrections:
        """Corrections from their JSON form; ``BadRequest`` naming the first bad part."""
        if not isinstance(raw, Mapping):
            raise BadRequest("corrections: expected an object with removed, manual and every")
        unknown = set(raw) - {"removed", "manual", "every"}
        if unknown:
            raise BadRequest(f"corrections: unknown field {sorted(unknown)[0]!r}")
        lists: dict[str, tuple[Area, ...]] = {}
        for name in ("removed", "manual", "every"):
            items = raw.get(name) or []
            if not isinstance(items, list):
                raise BadRequest(f"corrections.{name}: expected a list")
            if len(items) > MAX_AREAS:
                raise BadRequest(f"corrections.{name}: at most {MAX_AREAS} boxes")
            lists[name] = tuple(
                Area.parse(item, f"corrections.{name}[{i}]") for i, item in enumerate(items)
            )
        return cls(lists["removed"], lists["manual"], lists["every"])

    def merged(self, later: Corrections) -> Corrections:
        """These corrections and a later round's, as one set: a second Apply keeps the first."""
        return Corrections(
            _unique(self.removed + later.removed),
            _unique(self.manual + later.manual),
            _unique(self.every + later.every),
        )


def _unique(areas: tuple[Area, ...]) -> tuple[Area, ...]:
    return tuple(dict.fromkeys(areas))


@dataclass(frozen=True, slots=True)
class SheetPage:
    """One page as the redaction read it: its upright size in points, and the turn (degrees
    clockwise, 0/90/180/270) and levelling angle (degrees clockwise) of its scan."""

    width_pt: float
    height_pt: float
    rotation: int = 0
    level: float = 0.0
    # where the page lies on its output page: (scale, left, top) in output points, y down;
    # a point (x, y) here is at (left + scale x, top + scale y) there
    placement: tuple[float, float, float] = (1.0, 0.0, 0.0)
    # the output page's footer and header heights, points (bands over blank margins overlap
    # the page's edges: its own text is read between them)
    bands: tuple[float, float] = (0.0, 0.0)

    def as_json(self) -> dict[str, Any]:
        scale, left, top = self.placement
        return {
            "width_pt": round(self.width_pt, 2),
            "height_pt": round(self.height_pt, 2),
            "rotation": self.rotation,
            "level": round(self.level, 4),
            "output": {
                "scale": round(scale, 6),
                "offset_pt": [round(left, 3), round(top, 3)],
                "bands_pt": [round(v, 3) for v in self.bands],
            },
        }


@dataclass(frozen=True, slots=True)
class SheetFinding:
    """One finding as the desk shows it: where and which class, never the value."""

    page: int
    kind: str
    box: tuple[float, float, float, float]
    doubt: bool = False  # a half-believed name: burned all the same, marked at the desk
    # the finding's words line by line, one box each (what the build burns: a name wrapped
    # over two lines is two boxes, never the two whole lines); empty: one line, ``box``
    lines: tuple[tuple[float, float, float, float], ...] = ()

    @property
    def parts(self) -> tuple[tuple[float, float, float, float], ...]:
        """One box per line of the finding's words (``box`` itself for a one-line finding)."""
        return self.lines if len(self.lines) > 1 else (self.box,)

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "page": self.page,
            "class": self.kind,
            "box": [round(v, 2) for v in self.box],
        }
        if self.doubt:
            out["doubt"] = True
        if len(self.lines) > 1:
            out["lines"] = [[round(v, 2) for v in b] for b in self.lines]
        return out


@dataclass(frozen=True, slots=True)
class ReviewSheet:
    """What a reviewer works from: the pages, every finding, and the corrections already
    applied (their manual boxes are drawn too)."""

    pages: tuple[SheetPage, ...]
    findings: tuple[SheetFinding, ...] = ()
    corrections: Corrections = field(default_factory=Corrections)
    # what a check of the output found again, where it found it (a finding's class, or one of
    # ``RECHECK_KINDS``): page, class and box, never the value; none for a copy no check held
    rechecked: tuple[SheetFinding, ...] = ()

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "pages": [p.as_json() for p in self.pages],
            "findings": [f.as_json() for f in self.findings],
            "corrections": self.corrections.as_json(),
        }
        if self.rechecked:
            out["rechecked"] = [f.as_json() for f in self.rechecked]
        return out

    def rechecked_counts(self) -> dict[int, dict[str, int]]:
        """What the checks found again, by page and class: what the approve step names."""
        out: dict[int, dict[str, int]] = {}
        for f in self.rechecked:
            on = out.setdefault(f.page, {})
            on[f.kind] = on.get(f.kind, 0) + 1
        return out

    def check(self, corrections: Corrections) -> None:
        """``BadRequest`` naming the first correction whose page is not in the document or
        whose box lies outside its page (a removed box must meet its page; a box drawn by hand
        must lie on it): judged before anything is queued, so a typo never costs the review."""
        n = len(self.pages)
        for name, areas in (
            ("removed", corrections.removed),
            ("manual", corrections.manual),
            ("every", corrections.every),
        ):
            for i, a in enumerate(areas):
                what = f"corrections.{name}[{i}]"
                if not 1 <= a.page <= n:
                    raise BadRequest(f"{what}: page {a.page} is not in the document ({n} page(s))")
                page = self.pages[a.page - 1]
                w, h = page.width_pt, page.height_pt
                x0, y0, x1, y1 = a.box
                if name == "removed":
                    outside = x0 >= w or y0 >= h
                else:
                    outside = x1 > w + EDGE_PT or y1 > h + EDGE_PT
                if outside:
                    raise BadRequest(
                        f"{what}: the box lies outside page {a.page} ({w:g} x {h:g} pt)"
                    )

    @classmethod
    def parse(cls, raw: Mapping[str, Any]) -> ReviewSheet:
        """A stored sheet read back (written by ``as_json``)."""
        pages = tuple(
            SheetPage(
                float(p["width_pt"]),
                float(p["height_pt"]),
                int(p.get("rotation", 0)),
                float(p.get("level", 0.0)),
                *_placement(p.get("output")),
            )
            for p in raw.get("pages", [])
        )
        findings = tuple(
            SheetFinding(
                int(f["page"]),
                str(f["class"]),
                _box(f["box"]),
                f.get("doubt") is True,
                _lines(f.get("lines")),
            )
            for f in raw.get("findings", [])
        )
        rechecked = tuple(
            SheetFinding(int(f["page"]), str(f["class"]), _box(f["box"]))
            for f in raw.get("rechecked", [])
        )
        return cls(pages, findings, Corrections.parse(raw.get("corrections") or {}), rechecked)


def _placement(
    raw: object,
) -> tuple[tuple[float, float, float], tuple[float, float]]:
    """A stored page's placement on its output page and the bands there; a sheet from before
    them: unscaled, no bands."""
    if not isinstance(raw, Mapping):
        return (1.0, 0.0, 0.0), (0.0, 0.0)
    left, top = (float(v) for v in raw.get("offset_pt", (0.0, 0.0)))
    footer, header = (float(v) for v in raw.get("bands_pt", (0.0, 0.0)))
    return (float(raw.get("scale", 1.0)), left, top), (footer, header)


def _box(raw: Sequence[float]) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = (float(v) for v in raw)
    return (x0, y0, x1, y1)


def _lines(raw: object) -> tuple[tuple[float, float, float, float], ...]:
    """A stored finding's line boxes; none (one line) for a sheet from before them."""
    if not isinstance(raw, list) or len(raw) < 2:
        return ()
    return tuple(_box(b) for b in raw)


def removed_findings(sheet: ReviewSheet, corrections: Corrections | None = None) -> frozenset[int]:
    """Which of ``sheet.findings`` (indexes) the removed boxes of ``corrections`` (the sheet's
    own when None) take out: each removed box the one finding of its page it matches
    (``removed_match``), as the build decides. The desk draws these kept, and counts only
    the others."""
    corrections = sheet.corrections if corrections is None else corrections
    on_page: dict[int, list[int]] = {}
    for i, f in enumerate(sheet.findings):
        on_page.setdefault(f.page, []).append(i)
    gone: set[int] = set()
    for area in corrections.removed:
        mine = on_page.get(area.page, [])
        match = removed_match([sheet.findings[i].box for i in mine], area.box)
        if match is not None:
            gone.add(mine[match])
    return frozenset(gone)


def burned_counts(
    sheet: ReviewSheet, corrections: Corrections | None = None
) -> dict[int, dict[str, int]]:
    """What a copy built from ``sheet`` with ``corrections`` (the sheet's own when None)
    burns: findings by page (from 1) and class, a removed one left out. The one count of
    "what will be burned": the desk's header, rail, thumbnails and approve step, and the held
    reason a rebuild writes, all say this."""
    gone = removed_findings(sheet, corrections)
    out: dict[int, dict[str, int]] = {}
    for i, f in enumerate(sheet.findings):
        if i not in gone:
            on = out.setdefault(f.page, {})
            on[f.kind] = on.get(f.kind, 0) + 1
    # a box drawn by hand is a finding of class manual in every sheet a build writes; one a
    # sheet lacks is burned all the same
    for area in unlisted_manual(sheet, corrections):
        on = out.setdefault(area.page, {})
        on[MANUAL] = on.get(MANUAL, 0) + 1
    return {page: dict(sorted(kinds.items())) for page, kinds in sorted(out.items())}


def unlisted_manual(sheet: ReviewSheet, corrections: Corrections | None = None) -> list[Area]:
    """The manual boxes of ``corrections`` (the sheet's own when None) that are no finding of
    the sheet: boxes drawn and not applied yet, or a sheet written otherwise (a build lists
    each box it drew as a ``manual`` finding)."""
    corrections = sheet.corrections if corrections is None else corrections
    listed = {(f.page, f.box) for f in sheet.findings if f.kind == MANUAL}
    return [a for a in corrections.manual if (a.page, a.box) not in listed]


def total_counts(by_page: Mapping[int, Mapping[str, int]]) -> dict[str, int]:
    """``burned_counts`` summed over the pages, by class."""
    out: dict[str, int] = {}
    for kinds in by_page.values():
        for kind, n in kinds.items():
            out[kind] = out.get(kind, 0) + n
    return dict(sorted(out.items()))


def said(counts: Mapping[str, int]) -> str:
    """Counts by class as the held reason and the desk write them: "address 3, name 19"."""
    return ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items())) or "nothing"


def corrected_reason(
    corrections: Corrections,
    burned: int,
    overridden: Sequence[tuple[int, str]] = (),
    *,
    sheet: ReviewSheet | None = None,
) -> str:
    """What a rebuild with a reviewer's corrections did, for the held job's reason: counts
    and classes only. With the rebuilt copy's ``sheet``, what is burned is counted as the desk
    counts it (``burned_counts``: findings by class), so the reason and the desk agree; without
    it, ``burned`` boxes. A removed box still burned because another finding covers its words
    is said, page and class, instead of a plain pass."""
    n = corrections.counts()
    if sheet is not None:
        totals = total_counts(burned_counts(sheet))
        what = f"burned: {said(totals)} ({sum(totals.values())} finding(s))"
    else:
        what = f"{burned} box(es) burned"
    head = (
        f"corrections applied ({n['removed']} removed, {n['manual']} drawn, {n['every']} "
        f"everywhere); {what}"
    )
    if overridden:
        where = ", ".join(f"page {page}: {kind}" for page, kind in overridden)
        return (
            f"{head}; a removed box is still burned where another finding covers its words "
            f"({where}): remove that finding too to keep them, or approve as it is"
        )
    return f"{head} and every check passed: approve to deliver"


Points = tuple[float, float, float, float]


def removed_match(boxes: Sequence[Points], area: Points) -> int | None:
    """Which of a page's finding ``boxes`` a removed ``area`` was drawn for: the one it matches
    best, when the two overlap by most of each (intersection over union at least 0.6). A box
    nested inside another is never the outer one's match, nor the outer the inner's. The build
    and the desk both decide with this, so what the desk shows removed is what stays."""
    best, score = None, 0.0
    for n, b in enumerate(boxes):
        w = min(b[2], area[2]) - max(b[0], area[0])
        h = min(b[3], area[3]) - max(b[1], area[1])
        if w <= 0 or h <= 0:
            continue
        inter = w * h
        union = (b[2] - b[0]) * (b[3] - b[1]) + (area[2] - area[0]) * (area[3] - area[1]) - inter
        iou = inter / union if union > 0 else 0.0
        if iou > score:
            best, score = n, iou
    return best if score >= 0.6 else None
