"""What redaction found, as a person or a program sees it: one finding per value and place,
page by page, in PDF points — for a reviewer of a held copy and for the dry run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pressroom.corrections import MANUAL, SheetFinding
from pressroom.errors import NamesImplausible, TooManyFindings
from pressroom.models import Box
from pressroom.redact.detect.evidence import implausible
from pressroom.redact.plan import BoxIndex, covered_words, normalise, overlaps
from pressroom.redact.scan import PageScan


@dataclass(frozen=True, slots=True)
class DocumentFinding:
    """One finding as a person or a program sees it: page from 1, class, box in PDF points
    (origin top left of the upright page), the value."""

    page: int
    kind: str
    box: tuple[float, float, float, float]
    value: str
    doubt: bool = False  # a half-believed name: burned, and marked for the reviewer
    # its words line by line, one box each, when they stand on more than one line
    lines: tuple[tuple[float, float, float, float], ...] = ()

    def sheet(self) -> SheetFinding:
        """As the desk shows it: its place, class, doubt and lines, never its value."""
        return SheetFinding(self.page, self.kind, self.box, self.doubt, self.lines)

    def as_json(self, *, values: bool = True) -> dict[str, Any]:
        out = self.sheet().as_json()
        if values:
            out["value"] = self.value
        return out


def page_findings(
    scan: PageScan, values: dict[str, set[str]], tokens: frozenset[str]
) -> list[DocumentFinding]:
    out: list[DocumentFinding] = []
    k = 72.0 / scan.dpi
    for words, hits in ((scan.ocr, scan.hits_ocr), (scan.extracted, scan.hits_text)):
        claimed: set[int] = set()
        for h in hits:
            if not h.words:
                continue
            claimed.update(h.words)
            box = _points([words[i].box for i in h.words], k)
            by_line: dict[int, list[Box]] = {}
            for i in h.words:
                by_line.setdefault(words[i].line, []).append(words[i].box)
            lines = (
                tuple(_points(b, k) for _, b in sorted(by_line.items())) if len(by_line) > 1 else ()
            )
            out.append(
                DocumentFinding(
                    scan.info.index + 1,
                    h.finding.kind,
                    box,
                    h.finding.value,
                    h.finding.doubt,
                    lines,
                )
            )
        # mentions found by propagation: a surname alone, a value written again elsewhere
        for kind in sorted(set(values) | ({"name"} if tokens else set())):
            mine = tokens if kind == "name" else frozenset()
            # a reviewer's "every occurrence" is a box of its own wherever its words are,
            # inside another finding too: it is burned there whatever becomes of that one
            taken = set() if kind == MANUAL else claimed
            for i in sorted(covered_words(words, [], values.get(kind, ()), mine) - taken):
                claimed.add(i)
                b = words[i].box
                out.append(
                    DocumentFinding(
                        scan.info.index + 1,
                        kind,
                        (b.x0 * k, b.y0 * k, b.x1 * k, b.y1 * k),
                        words[i].text,
                    )
                )
    return _dedupe(out)


def _points(boxes: Sequence[Box], k: float) -> tuple[float, float, float, float]:
    """The box around ``boxes`` (scan pixels), in points (``k`` points a pixel)."""
    return (
        min(b.x0 for b in boxes) * k,
        min(b.y0 for b in boxes) * k,
        max(b.x1 for b in boxes) * k,
        max(b.y1 for b in boxes) * k,
    )


# De-duplication looks for an earlier finding of the same page, class and value whose box
# overlaps: findings are bucketed by that key, and inside a bucket indexed by the grid cells
# their boxes touch, so a page of 12,000 copies of one name costs linear time, not quadratic
# (a 1,240-byte page of them held a worker to its deadline when every pair was compared).
_CELL = 48.0  # points: a grid cell of the index inside one bucket


def _dedupe(found: list[DocumentFinding]) -> list[DocumentFinding]:
    """OCR and the page's own text often find the same value in the same place: report it once.
    A finding is dropped when a kept one of the same page, class and value overlaps it; where
    either reading believes the value, the mark is not doubt."""
    kept: list[DocumentFinding] = []
    buckets: dict[tuple[int, str, str], BoxIndex] = {}
    for f in sorted(found, key=lambda f: (f.page, f.box[1], f.box[0])):
        bucket = buckets.setdefault((f.page, f.kind, normalise(f.value)), BoxIndex(_CELL))
        box = Box(*f.box)
        same = [n for n in bucket.near(box) if overlaps(Box(*kept[n].box), box)]
        if not same:
            bucket.add(len(kept), box)
            kept.append(f)
        elif not f.doubt:
            for n in same:
                kept[n] = replace(kept[n], doubt=False)
    return kept


def crowded_pages(findings: Sequence[DocumentFinding], cap: int) -> dict[int, int]:
    """Pages (from 1) carrying more than ``cap`` findings, with how many they carry."""
    per_page: dict[int, int] = {}
    for f in findings:
        per_page[f.page] = per_page.get(f.page, 0) + 1
    return {page: n for page, n in sorted(per_page.items()) if n > cap}


def past_cap(findings: Sequence[DocumentFinding], cap: int) -> TooManyFindings | None:
    """The hold (``TOO_MANY_FINDINGS``) when a page carries more findings than a person could
    judge: everything found is burned either way, and nothing is published unseen."""
    crowded = crowded_pages(findings, cap)
    if not crowded:
        return None
    return TooManyFindings(
        "more findings than a person can judge ("
        + ", ".join(f"page {page}: {n}" for page, n in crowded.items())
        + f"; at most {cap:,} a page): each is burned, and the copy is held for a person"
    )


def names_implausible(scans: Sequence[PageScan]) -> NamesImplausible | None:
    """The hold for a document whose name findings are mostly words with no evidence of a
    person anywhere in it (``evidence.implausible``): the detector over-firing, said as such."""
    counted = implausible(h.finding for s in scans for h in (*s.hits_ocr, *s.hits_text))
    if counted is None:
        return None
    bad, total = counted
    return NamesImplausible(
        f"{bad} of the {total} names found never stand with a given name, a title or a "
        "person's verb: the detector is over-firing on this document (product words, "
        "headers?); each is burned, and the copy is held for a person"
    )
