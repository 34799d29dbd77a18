"""One redaction of one document, as a value: what every pass reads (``RunContext``), the pages
as pass one read them (``scans``) and every value found so far (``found``), with the passes as
its methods — ``scan()`` (``redact.scan``), ``build()`` (``redact.build``), ``read_back()``
(``redact.readback``) — and ``build_checked()``, the order they run in: build, read back,
learn what the output shows that the pages did not, build once more."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pikepdf

from pressroom.corrections import SheetFinding
from pressroom.errors import RedactionLeak
from pressroom.models import Box
from pressroom.pipeline.structure import read_carriers
from pressroom.redact.apply import Applied, Found
from pressroom.redact.build import Built, build_output, carrier_texts
from pressroom.redact.context import RunContext
from pressroom.redact.detect.detector import Detector
from pressroom.redact.detection import Hit
from pressroom.redact.leaks import LABEL_HELD, carries_value
from pressroom.redact.readback import held_at, read_back
from pressroom.redact.scan import PageScan, document_values, scan_pages
from pressroom.redact.source import OriginalText
from pressroom.stages import Stage


@dataclass
class RedactionRun:
    """One document's redaction: its context, and what the passes learn as they run."""

    ctx: RunContext
    scans: list[PageScan] = field(default_factory=list)
    found: Found = field(default_factory=lambda: Found({}))

    def scan(self, original: OriginalText | None = None) -> list[PageScan]:
        """Pass one: every page read (its own text and OCR of its pixels) and its values found;
        ``original``: the source's own text, where the pages read are a copy OCR reworked. The
        values join ``found``, with a reviewer's corrections applied to them."""
        self.scans = scan_pages(self.ctx, original)
        with self.ctx.timer.stage(Stage.DETECT):
            by_kind, _tokens = document_values(self.scans)
            self.found = Found.of(by_kind, self.ctx.options.corrections, self.scans)
        return self.scans

    def build(self) -> Built:
        """Pass two: the output built from every occurrence of every value found so far."""
        return build_output(self.ctx, self.scans, self.found)

    def read_back(
        self, built: Built, pages: set[int] | None, where: list[SheetFinding]
    ) -> dict[int, list[Hit]]:
        """The checks on ``built``, then detection once more (on ``pages``, from 1; None: all):
        what it finds, by output page (from 1), its places added to ``where``."""
        return read_back(self.ctx, built, self.scans, self.found, pages, where)

    def build_checked(self) -> Built:
        """Pass two builds the output from every occurrence of every value; the checks read it
        back. What detection finds only on the output (a name whose context changed once its
        neighbour was burned) joins the values, and the output is built once more; what is
        still found after that goes to a human."""
        ctx, found = self.ctx, self.found
        if ctx.src.pdf is not None and _carrier_values(ctx.src.pdf, ctx.detector, found.by_kind):
            # values only the source's own carriers show (its title, an outline item, a link)
            # join the document's: the pages are searched for them too, so a surname the
            # title names is burned where a page shows it alone
            found.judge(ctx.options.corrections, self.scans)
        recheck: set[int] | None = None  # every page the first time
        before: dict[int, list[Box]] = {}
        for attempt in (1, 2):
            built = self.build()
            if recheck is not None:
                # read again: the pages flagged, and every page whose boxes moved
                recheck |= {
                    index + 1 for (index, _dpi, boxes) in built.burned if boxes != before.get(index)
                }
            where: list[SheetFinding] = []  # where re-detection found each, for the reviewer
            again = self.read_back(built, recheck, where)
            if not again:
                _check_label(ctx.options.label, found.by_kind, found.applied)
                return built
            recheck = set(again)
            before = {index: boxes for (index, _dpi, boxes) in built.burned}
            if attempt == 2 or not _learn(again, found.by_kind):
                raise held_at(
                    RedactionLeak(
                        "detection run again on the output found "
                        + "; ".join(
                            f"page {page}: "
                            + ", ".join(f"{n} {kind}" for kind, n in sorted(_counts(hits).items()))
                            for page, hits in sorted(again.items())
                        )
                    ),
                    where,
                )
            # what is let stand and what stays burned, judged again with the values just
            # learnt: a learnt value over a removed finding's words is burned there, as the
            # sheet shows it
            found.judge(ctx.options.corrections, self.scans)
        raise AssertionError("unreachable: the second attempt returns or raises")


def _check_label(label: str | None, by_kind: dict[str, set[str]], applied: Applied) -> None:
    """The job's label read like the title: one that carries a value the redaction removes
    (a reviewer's let-stand values aside) holds the job ``REDACTION_LEAK``; the worker then
    withholds the label, so neither the job nor its download is named after the value."""
    values = {v for found in by_kind.values() for v in found if not applied.lets_stand(v)}
    if carries_value(label, values):
        raise RedactionLeak(LABEL_HELD)


def _counts(hits: Sequence[Hit]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for h in hits:
        counts[h.finding.kind] = counts.get(h.finding.kind, 0) + 1
    return counts


def _carrier_values(pdf: pikepdf.Pdf, detector: Detector, by_kind: dict[str, set[str]]) -> bool:
    """What detection finds in the source's carriers (title, author, subject, keywords, outline
    titles, link addresses, destination names, page-label prefixes; escapes decoded) joined to
    ``by_kind``; True when something new was learnt."""
    learnt = False
    for text in carrier_texts(read_carriers(pdf)):
        for finding in detector.find(text):
            known = by_kind.setdefault(finding.kind, set())
            if finding.value not in known:
                known.add(finding.value)
                learnt = True
    return learnt


def _learn(again: dict[int, list[Hit]], by_kind: dict[str, set[str]]) -> bool:
    """Values found only on the output join the document's values; False when there is nothing
    new to learn (a known value still readable: a leak the next build cannot fix)."""
    learnt = False
    for hits in again.values():
        for h in hits:
            if h.finding.kind == "leak":
                return False
            known = by_kind.setdefault(h.finding.kind, set())
            if h.finding.value not in known:
                known.add(h.finding.value)
                learnt = True
    return learnt
