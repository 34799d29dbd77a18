"""The redacted output read back before anyone sees it: the pipeline's own output check, then
redaction's — no found value left in any form, every page judged, every box solid — and
detection run once more on the output as a reader gets it.

A check that holds the copy says where: the hold carries the places of what it found again
(``held_at``/``rechecked``: content page from 1, class, box in points of the upright page as
the review sheet has them, never the value), which the engine puts in the review sheet."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pressroom.corrections import SheetFinding
from pressroom.engines import pdfium
from pressroom.errors import OutputCheckFailed, RedactionLeak, ReviewRequired
from pressroom.models import Box, Word
from pressroom.pipeline.geometry import PageLayout
from pressroom.pipeline.resolution import fitting_dpi
from pressroom.pixels import PixelBudget
from pressroom.redact import reread
from pressroom.redact.apply import Found
from pressroom.redact.build import Built
from pressroom.redact.burn import output_rendering, unsolid_boxes
from pressroom.redact.context import RunContext
from pressroom.redact.detect import Finding
from pressroom.redact.detection import Hit, detect
from pressroom.redact.kept import Kept
from pressroom.redact.leaks import Leak, find_leaks
from pressroom.redact.plan import covered_words, overlaps
from pressroom.redact.scan import PageScan
from pressroom.redact.source import REDACT_DPI
from pressroom.redact.text import extracted_words
from pressroom.settings import RedactionSettings
from pressroom.stages import Stage

MIN_JUDGE_CONFIDENCE = 60.0  # mean OCR word confidence below which a scan page goes to review
_ON_PAGE = re.compile(r"page (\d+)\b")


def held_at(exc: ReviewRequired, places: Iterable[SheetFinding]) -> ReviewRequired:
    """``exc`` naming where its check found what it found (the engine puts those places on
    the review sheet it builds with the pages and every finding)."""
    exc.rechecked = tuple(places)
    return exc


def rechecked(exc: ReviewRequired) -> tuple[SheetFinding, ...]:
    """The places a hold names (none for a hold that did not say)."""
    return tuple(exc.rechecked)


def _readable(found: Found) -> tuple[set[str], frozenset[str]]:
    """The values, and the name tokens, no reader may find in the output: a value a reviewer
    let stand is readable where it stands, so the document-wide readings leave it out (every
    burned box is checked on its own instead)."""
    by_kind, applied = found.by_kind, found.applied
    values = {v for v in set().union(*by_kind.values()) if not applied.lets_stand(v)}
    tokens = applied.tokens(by_kind.get("name", ())) if applied.allowed else found.tokens
    return values, tokens


def read_back(
    ctx: RunContext,
    built: Built,
    scans: Sequence[PageScan],
    found: Found,
    pages: set[int] | None = None,
    where: list[SheetFinding] | None = None,
) -> dict[int, list[Hit]]:
    """The output (``ctx.output``) read back: it parses, no found value is left in any form, no
    text under a box a reviewer drew, every page could be judged, every box is solid (a hold
    says where: ``held_at``). Then detection once more (on ``pages``, from 1; all by default),
    a reviewer's let-stand values aside; what it finds is returned, by output page from 1, and
    where it lies added to ``where`` (content page, class, box in the sheet's points)."""
    output, options, timer = ctx.output, ctx.options, ctx.timer
    by_kind, applied = found.by_kind, found.applied
    found_values, tokens = _readable(found)
    # where each content page landed on its output page (the page keeps its size; bands may
    # scale the content)
    placed = {p.output_index: p.layout for p in built.assembly.checked}
    built.assembly.check(output)
    with timer.stage(Stage.LEAK_CHECK):
        offset = built.assembly.offset
        frame = _Frame(placed, offset, _sizes(scans))
        every = find_leaks(
            output,
            found_values,
            built.assembly.builder.producer,
            (options.template.identity,),
        )
        leaks = [leak for leak in every if not leak.unreadable]
        if leaks:
            summary = ", ".join(f"{leak.parser} {leak.where} x{leak.count}" for leak in leaks)
            kept = {
                kind: {v for v in values if not applied.lets_stand(v)}
                for kind, values in by_kind.items()
            }
            raise held_at(
                RedactionLeak(f"a redacted value is still in the output ({summary})"),
                _located(output, _pages_of(leaks), kept, tokens, frame),
            )
        if every:
            raise held_at(
                OutputCheckFailed(
                    "text the check cannot read as characters (no ToUnicode, an encoding it "
                    "does not know): "
                    + ", ".join(f"{leak.where} x{leak.count} codes" for leak in every)
                ),
                frame.whole(_pages_of(every), "unreadable"),
            )
        places: dict[int, list[Box]] = {}
        under = text_under_drawn(output, applied.drawn_pt, offset, placed, places=places)
        if under:
            raise held_at(
                RedactionLeak(
                    "text is still under a box drawn by hand ("
                    + ", ".join(f"page {page} x{n}" for page, n in sorted(under.items()))
                    + ")"
                ),
                frame.back_all(places, "under-box"),
            )
        burned_pt = {
            index - offset: [_scaled(b, 72.0 / dpi) for b in boxes]
            for index, dpi, boxes in built.burned
            if boxes
        }
        under = text_under_drawn(output, burned_pt, offset, placed, mostly=True, places=places)
        if under:
            raise held_at(
                RedactionLeak(
                    "text is still under a burned box ("
                    + ", ".join(f"page {page} x{n}" for page, n in sorted(under.items()))
                    + ")"
                ),
                frame.back_all(places, "under-box"),
            )
        # Pages whose scan the engine could not read with confidence cannot be judged: a human
        # must.
        doubtful = [
            s.info.index + 1
            for s in scans
            if not s.seen_text and s.ocr and s.confidence < MIN_JUDGE_CONFIDENCE
        ]
        if doubtful:
            raise held_at(
                OutputCheckFailed(
                    f"page(s) {', '.join(map(str, doubtful))} read with too little confidence "
                    "to judge"
                ),
                frame.whole({page - 1 + offset for page in doubtful}, "low-confidence"),
            )
        # Pages read below 300 dpi to fit the pixel limit that show more than their own text:
        # what is drawn as pixels or shapes may hold a value too small to read at that
        # resolution, and the re-detection below reads at the same one: a person must judge.
        low = [s for s in scans if s.unowned_ink]
        if low:
            raise held_at(
                OutputCheckFailed(
                    "page(s) "
                    + ", ".join(f"{s.info.index + 1} ({s.dpi:.0f} dpi)" for s in low)
                    + " read below 300 dpi to fit the pixel limit show more than their own "
                    "text (pictures, drawings or text drawn as shapes): a person checks them"
                ),
                frame.whole({s.info.index + offset for s in low}, "low-resolution"),
            )
        bad: list[tuple[int, Box]] = []
        # the solid-box check's renderings, which re-detection reads again
        renders = Kept()
        unsolid = unsolid_boxes(
            output, built.burned, placed, PixelBudget(options.limits), bad, renders
        )
        if unsolid:
            raise held_at(
                OutputCheckFailed(f"{unsolid} redaction box(es) are not solid in the output"),
                [
                    SheetFinding(index - offset + 1, "unsolid", _points(box))
                    for index, box in bad
                    if index >= offset
                ],
            )
    with timer.stage(Stage.REDETECT):
        return _redetect(ctx, built, scans, found, frame, pages, where, renders)


def text_under_drawn(
    output: Path,
    drawn_pt: Mapping[int, Sequence[Box]],
    offset: int,
    placed: Mapping[int, PageLayout] | None = None,
    *,
    mostly: bool = False,
    places: dict[int, list[Box]] | None = None,
) -> dict[int, int]:
    """Words the output's own text has inside a box a reviewer drew (``drawn_pt``: by content
    page from 0, in its points), by content page from 1: each is a leak. ``placed``: where
    each content page landed, by output page (absent: where it is, unscaled). ``places``:
    filled with each such word's box on its output page (points), by output page."""
    under: dict[int, int] = {}
    if not drawn_pt:
        return under
    with pdfium.RecyclingDocument(output) as doc:
        for index, boxes in sorted(drawn_pt.items()):
            page = doc[index + offset]
            try:
                words = extracted_words(page, 1.0)
            finally:
                page.close()
            # a word across the box with its middle line inside it: the text layer lays each word
            # a line high, so a word of the next line may reach into a box without being under it
            inside = [
                Box(o.x0 + 1, o.y0, o.x1 - 1, o.y1)
                for o in (_onto(placed, index + offset, b) for b in boxes)
            ]
            # ``mostly``: half a word's width inside at least (a burned value's box meets the
            # words beside it, and extraction may join a kept word to the next)
            test = _mostly_under if mostly else _under
            found = [w.box for w in words if any(test(w.box, b) for b in inside)]
            if found:
                under[index + 1] = len(found)
                if places is not None:
                    places[index + offset] = found
    return under


def _redetect(
    ctx: RunContext,
    built: Built,
    scans: Sequence[PageScan],
    found: Found,
    frame: _Frame,
    pages: set[int] | None = None,
    where: list[SheetFinding] | None = None,
    kept: Kept | None = None,
) -> dict[int, list[Hit]]:
    """Detection once more, on the output as a reader gets it: its text, and OCR (faint print
    included) of the pixels the build changed — the rows of each burned box on a page rebuilt
    from one pass one OCR'd, and whole pages where nothing vouches for them or where the
    audited share falls (``reread``: which page is read how, and why that is still
    fail-closed). Per page (from 1), what it found; a known value still readable is a finding
    of kind "leak". Where each lies goes to ``where`` (``frame``: the content pages' places on
    the output and their sizes).

    What OCR makes of the black boxes themselves ("Hi HM" after a "Mr") is not a reading: words
    that overlap a burned box are left out, and so are findings of fewer than four letters or
    digits, or in lower case (an OCR fragment is no name). Nor is a value a reviewer let stand
    (``found.applied``).
    """
    output, detector, ocr, engine = ctx.output, ctx.detector, ctx.ocr, ctx.engine
    values, tokens = _readable(found)
    applied, placed, offset = found.applied, frame.placed, frame.offset
    burned_on = {index: (dpi, boxes) for index, dpi, boxes in built.burned}
    share = RedactionSettings.given(ctx.options.redaction).redetect_sample
    seed = ctx.info.sha256.encode() if 0.0 < share < 1.0 else b""  # the source's digest
    flagged: dict[int, list[Hit]] = {}
    budget = ctx.budget()
    with pdfium.RecyclingDocument(output) as doc:
        for i in range(len(doc)):
            if pages is not None and i + 1 not in pages:
                continue
            n = frame.page(i)
            scan = scans[n - 1] if n is not None and n <= len(scans) else None
            page = doc[i]
            try:
                # read at the resolution the source page was read at: lower for a page too
                # large for the pixel limit at REDACT_DPI (the same rule as redact.scan's)
                width, height = page.get_size()
                read_dpi = fitting_dpi(width, height, REDACT_DPI, budget.max_pixels)
                sampled = reread.sampled(seed, i, share)
                reading = reread.how(scan, i in burned_on, sampled, read_dpi)
                scale = read_dpi / 72.0
                words = extracted_words(page, scale)
                dpi, boxes = burned_on.get(i, (read_dpi, []))
                on = [_onto(placed, i, _scaled(b, read_dpi / dpi), scale) for b in boxes]
                what, read = f"output page {i + 1}", None
                # the solid-box check's rendering of this page at this scale, where it made one
                got = (
                    kept.get(output_rendering(i, scale))
                    if kept is not None and reading is not reread.Reading.TEXT
                    else None
                )
                whole = got[0] if got is not None else None
                if reading is reread.Reading.BANDS:
                    read = reread.band_words(
                        page, scale, read_dpi, on, ocr, engine, budget, what, whole
                    )
                if reading is reread.Reading.WHOLE or (
                    reading is reread.Reading.BANDS and read is None
                ):
                    read = reread.page_words(
                        page, scale, read_dpi, ocr, engine, budget, what, whole
                    )
                del whole, got
            finally:
                page.close()
            sources = [words]
            if read is not None:
                near = [_grown(b, 6.0) for b in on]
                sources.append([w for w in read if not any(overlaps(w.box, b) for b in near)])
            let_stand = [_onto(placed, i, b) for b in applied.removed_pt.get(i - offset, ())]
            for source in sources:
                hits = [
                    h
                    for h in detect(source, detector)
                    if _judged(h.finding) and not applied.ignored(h, source, let_stand, scale)
                ]
                leaked = covered_words(source, [], values, tokens)
                if leaked and let_stand:
                    # what a reviewer let stand, where it stands, is no leak
                    leaked = {
                        j
                        for j in leaked
                        if not applied.ignored(
                            Hit(Finding("leak", 0, 0, "", "leak"), (j,)), source, let_stand, scale
                        )
                    }
                if leaked:
                    value = " ".join(source[j].text for j in sorted(leaked))
                    hits.append(Hit(Finding("leak", 0, 0, value, "leak"), tuple(sorted(leaked))))
                if hits:
                    flagged[i + 1] = hits
                    if where is not None:
                        where += frame.hits(i, hits, source, scale)
                    break
    return flagged


class _Frame:
    """Where each content page lies on the output (``placed``, by output page; ``offset``:
    output pages before the first content page) and each content page's upright size: a box
    read on the output, taken back to the review sheet's points."""

    def __init__(
        self,
        placed: Mapping[int, PageLayout],
        offset: int,
        sizes: Sequence[tuple[float, float]],
    ) -> None:
        self.placed, self.offset, self.sizes = placed, offset, sizes

    def page(self, index: int) -> int | None:
        """Content page (from 1) of output page ``index`` (from 0); None for a cover page or
        one past the content."""
        n = index - self.offset + 1
        return n if 1 <= n <= len(self.sizes) else None

    def back(self, index: int, box: Box, unit: float = 1.0) -> tuple[float, ...] | None:
        """``box`` on output page ``index`` (``unit`` units a point, y down) in the content
        page's points, inside the page; None off the content."""
        n = self.page(index)
        if n is None:
            return None
        layout = self.placed.get(index)
        x0, y0, x1, y1 = (v / unit for v in (box.x0, box.y0, box.x1, box.y1))
        if layout is not None:
            left, _bottom, _right, top = layout.content
            dx, dy, k = left, layout.height - top, layout.scale or 1.0
            x0, x1 = (x0 - dx) / k, (x1 - dx) / k
            y0, y1 = (y0 - dy) / k, (y1 - dy) / k
        w, h = self.sizes[n - 1]
        x0, x1 = max(0.0, min(x0, w)), max(0.0, min(x1, w))
        y0, y1 = max(0.0, min(y0, h)), max(0.0, min(y1, h))
        if x1 - x0 < 1 or y1 - y0 < 1:
            return None
        return (x0, y0, x1, y1)

    def place(self, index: int, kind: str, box: Box, unit: float = 1.0) -> list[SheetFinding]:
        n, back = self.page(index), self.back(index, box, unit)
        return [] if n is None or back is None else [SheetFinding(n, kind, _points(back))]

    def back_all(self, by_page: Mapping[int, Sequence[Box]], kind: str) -> list[SheetFinding]:
        return [
            f
            for index, boxes in sorted(by_page.items())
            for b in boxes
            for f in self.place(index, kind, b)
        ]

    def whole(self, indexes: Iterable[int], kind: str) -> list[SheetFinding]:
        """Each output page's content page as a whole: where nothing narrower is known."""
        out = []
        for index in sorted(indexes):
            n = self.page(index)
            if n is not None:
                w, h = self.sizes[n - 1]
                out.append(SheetFinding(n, kind, (0.0, 0.0, w, h)))
        return out

    def hits(
        self, index: int, hits: Sequence[Hit], words: Sequence[Word], unit: float
    ) -> list[SheetFinding]:
        """Each hit's words on output page ``index`` as one box (in ``unit`` units a point);
        a hit with no words: the whole page."""
        out: list[SheetFinding] = []
        for h in hits:
            boxes = [words[j].box for j in h.words if 0 <= j < len(words)]
            if not boxes:
                out += self.whole([index], h.finding.kind)
                continue
            joined = Box(
                min(b.x0 for b in boxes),
                min(b.y0 for b in boxes),
                max(b.x1 for b in boxes),
                max(b.y1 for b in boxes),
            )
            out += self.place(index, h.finding.kind, joined, unit)
        return out


def _sizes(scans: Sequence[PageScan]) -> list[tuple[float, float]]:
    return [(s.size[0] * 72.0 / s.dpi, s.size[1] * 72.0 / s.dpi) for s in scans]


def _points(box: Box | tuple[float, ...]) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = (box.x0, box.y0, box.x1, box.y1) if isinstance(box, Box) else box
    return (float(x0), float(y0), float(x1), float(y1))


def _pages_of(leaks: Iterable[Leak]) -> set[int]:
    """The output pages (from 0) a leak report names ("page N", "page N annotation"); a leak
    in the file's objects or streams has no page."""
    out = set()
    for leak in leaks:
        found = _ON_PAGE.match(leak.where)
        if found:
            out.add(int(found.group(1)) - 1)
    return out


def _located(
    output: Path,
    pages: set[int],
    by_kind: Mapping[str, set[str]],
    tokens: frozenset[str],
    frame: _Frame,
) -> list[SheetFinding]:
    """Where a found value still stands in the output's text, page by page (output pages
    from 0), by class; a page where no word can be pointed at is named whole."""
    out: list[SheetFinding] = []
    if not pages:
        return out
    with pdfium.RecyclingDocument(output) as doc:
        for index in sorted(pages):
            if not 0 <= index < len(doc):
                continue
            page = doc[index]
            try:
                words = extracted_words(page, 1.0)
            finally:
                page.close()
            here: list[SheetFinding] = []
            for kind, values in sorted(by_kind.items()):
                mine = tokens if kind == "name" else frozenset()
                for j in sorted(covered_words(words, [], values, mine)):
                    here += frame.place(index, kind, words[j].box)
            out += here or frame.whole([index], "leak")
    return out


def _mostly_under(word: Box, box: Box) -> bool:
    inside = min(word.x1, box.x1) - max(word.x0, box.x0)
    return _under(word, box) and inside >= 0.5 * max(word.x1 - word.x0, 1e-6)


def _under(word: Box, box: Box) -> bool:
    middle = (word.y0 + word.y1) / 2
    return word.x0 < box.x1 and box.x0 < word.x1 and box.y0 <= middle <= box.y1


def _grown(b: Box, pad: float) -> Box:
    return Box(b.x0 - pad, b.y0 - pad, b.x1 + pad, b.y1 + pad)


def _judged(f: Finding) -> bool:
    if sum(c.isalnum() for c in f.value) < 4:
        return False
    return f.kind != "name" or any(c.isupper() for c in f.value)


def _onto(placed: Mapping[int, PageLayout] | None, index: int, box: Box, unit: float = 1.0) -> Box:
    """``box`` of content page at output page ``index`` (in ``unit`` units a point) where it
    lies on that output page."""
    layout = placed.get(index) if placed is not None else None
    return layout.onto(box, unit) if layout is not None else box


def _scaled(b: Box, k: float) -> Box:
    return Box(b.x0 * k, b.y0 * k, b.x1 * k, b.y1 * k)
