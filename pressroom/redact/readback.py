"""The redacted output read back before anyone sees it: the pipeline's own output check, then
redaction's — no found value left in any form, every page judged, every box solid — and
detection run once more on the output as a reader gets it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from pressroom.engines import pdfium
from pressroom.errors import OutputCheckFailed, RedactionLeak
from pressroom.models import Box
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.ocr import OcrEngine, OcrStage
from pressroom.pipeline.render import PageLayout
from pressroom.pipeline.stages import Stage, StageTimer
from pressroom.pixels import PixelBudget
from pressroom.redact.apply import NOTHING, Applied
from pressroom.redact.build import Built
from pressroom.redact.detect import Finding
from pressroom.redact.detect.detector import Detector
from pressroom.redact.faint import faint_words
from pressroom.redact.leaks import find_leaks
from pressroom.redact.plan import Hit, covered_words, detect, overlaps
from pressroom.redact.scan import REDACT_DPI, PageScan
from pressroom.redact.text import extracted_words
from pressroom.settings import Limits

MIN_JUDGE_CONFIDENCE = 60.0  # mean OCR word confidence below which a scan page goes to review


def read_back(
    output: Path,
    built: Built,
    scans: Sequence[PageScan],
    detector: Detector,
    by_kind: dict[str, set[str]],
    tokens: frozenset[str],
    ocr: OcrStage,
    engine: OcrEngine,
    options: JobOptions,
    timer: StageTimer,
    pages: set[int] | None = None,
    applied: Applied = NOTHING,
) -> dict[int, list[Hit]]:
    """The output read back: it parses, no found value is left in any form, no text under a
    box a reviewer drew, every page could be judged, every box is solid. Then detection once
    more (on ``pages``, from 1; all by default), a reviewer's let-stand values aside; what it
    finds is returned."""
    # a value a reviewer let stand is readable where it stands: the document-wide readings
    # leave it out, and every burned box is checked on its own below instead
    found_values = {v for v in set().union(*by_kind.values()) if not applied.lets_stand(v)}
    tokens = applied.tokens(by_kind.get("name", ())) if applied.allowed else tokens
    # where each content page landed on its output page (the page keeps its size; bands may
    # scale the content)
    placed = {p.output_index: p.layout for p in built.assembly.checked}
    built.assembly.check(output)
    with timer.stage(Stage.LEAK_CHECK):
        every = find_leaks(output, found_values)
        leaks = [leak for leak in every if not leak.unreadable]
        if leaks:
            summary = ", ".join(f"{leak.parser} {leak.where} x{leak.count}" for leak in leaks)
            raise RedactionLeak(f"a redacted value is still in the output ({summary})")
        if every:
            raise OutputCheckFailed(
                "text the check cannot read as characters (no ToUnicode, an encoding it does "
                "not know): " + ", ".join(f"{leak.where} x{leak.count} codes" for leak in every)
            )
        under = text_under_drawn(output, applied.drawn_pt, built.assembly.offset, placed)
        if under:
            raise RedactionLeak(
                "text is still under a box drawn by hand ("
                + ", ".join(f"page {page} x{n}" for page, n in sorted(under.items()))
                + ")"
            )
        burned_pt = {
            index - built.assembly.offset: [_scaled(b, 72.0 / dpi) for b in boxes]
            for index, dpi, boxes in built.burned
            if boxes
        }
        under = text_under_drawn(output, burned_pt, built.assembly.offset, placed, mostly=True)
        if under:
            raise RedactionLeak(
                "text is still under a burned box ("
                + ", ".join(f"page {page} x{n}" for page, n in sorted(under.items()))
                + ")"
            )
        # Pages whose scan the engine could not read with confidence cannot be judged: a human
        # must.
        doubtful = [
            s.info.index + 1
            for s in scans
            if not s.seen_text and s.ocr and s.confidence < MIN_JUDGE_CONFIDENCE
        ]
        if doubtful:
            raise OutputCheckFailed(
                f"page(s) {', '.join(map(str, doubtful))} read with too little confidence to judge"
            )
        unsolid = unsolid_boxes(output, built.burned, placed, PixelBudget(options.limits))
        if unsolid:
            raise OutputCheckFailed(f"{unsolid} redaction box(es) are not solid in the output")
    with timer.stage(Stage.REDETECT):
        return _redetect(
            output,
            detector,
            found_values,
            tokens,
            ocr,
            engine,
            built.burned,
            placed,
            pages,
            PixelBudget(options.limits),
            applied,
            built.assembly.offset,
        )


def text_under_drawn(
    output: Path,
    drawn_pt: Mapping[int, Sequence[Box]],
    offset: int,
    placed: Mapping[int, PageLayout] | None = None,
    *,
    mostly: bool = False,
) -> dict[int, int]:
    """Words the output's own text has inside a box a reviewer drew (``drawn_pt``: by content
    page from 0, in its points), by content page from 1: each is a leak. ``placed``: where
    each content page landed, by output page (absent: where it is, unscaled)."""
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
            n = sum(1 for w in words if any(test(w.box, b) for b in inside))
            if n:
                under[index + 1] = n
    return under


def unsolid_boxes(
    output: Path,
    burned: list[tuple[int, float, list[Box]]],
    placed: Mapping[int, PageLayout] | None = None,
    budget: PixelBudget | None = None,
) -> int:
    """Render each rebuilt page at its own resolution and look inside every burned box."""
    bad = 0
    budget = budget or PixelBudget(Limits())
    with pdfium.RecyclingDocument(output) as doc:
        for index, dpi, boxes in burned:
            page = doc[index]
            try:
                budget.take(*pdfium.bitmap_size(page, dpi / 72.0), f"output page {index + 1}")
                image = page.render(scale=dpi / 72.0, grayscale=True).to_pil().convert("L")
            finally:
                page.close()
            for b in boxes:
                o = _onto(placed, index, b, dpi / 72.0)
                inside = image.crop(
                    (round(o.x0) + 2, round(o.y0) + 2, round(o.x1) - 2, round(o.y1) - 2)
                )
                if inside.width > 0 and inside.height > 0 and inside.getextrema()[1] > 40:
                    bad += 1
    return bad


def _redetect(
    output: Path,
    detector: Detector,
    values: set[str],
    tokens: frozenset[str],
    ocr: OcrStage,
    engine: OcrEngine,
    burned: Sequence[tuple[int, float, list[Box]]] = (),
    placed: Mapping[int, PageLayout] | None = None,
    pages: set[int] | None = None,
    budget: PixelBudget | None = None,
    applied: Applied = NOTHING,
    offset: int = 0,
) -> dict[int, list[Hit]]:
    """Detection once more, on the output as a reader gets it: its text and OCR of its pixels
    (faint print included). Per page (from 1), what it found; a known value still readable is a
    finding of kind "leak".

    What OCR makes of the black boxes themselves ("Hi HM" after a "Mr") is not a reading: words
    that overlap a burned box are left out, and so are findings of fewer than four letters or
    digits, or in lower case (an OCR fragment is no name). Nor is a value a reviewer let stand
    (``applied``; ``offset``: output pages before the first content page).
    """
    scale = REDACT_DPI / 72.0
    boxes_on: dict[int, list[Box]] = {}
    for index, dpi, boxes in burned:
        k = REDACT_DPI / dpi
        boxes_on[index] = [_onto(placed, index, _scaled(b, k), scale) for b in boxes]
    flagged: dict[int, list[Hit]] = {}
    budget = budget or PixelBudget(Limits())
    with pdfium.RecyclingDocument(output) as doc:
        for i in range(len(doc)):
            if pages is not None and i + 1 not in pages:
                continue
            page = doc[i]
            try:
                budget.take(*pdfium.bitmap_size(page, scale), f"output page {i + 1}")
                image = page.render(scale=REDACT_DPI / 72.0, grayscale=True).to_pil()
                words = extracted_words(page, REDACT_DPI / 72.0)
            finally:
                page.close()
            gray = image.convert("L")
            # read as it is: the words must stay where the output has them
            seen = list(replace(ocr, straighten_min=None).read_as_is(gray, REDACT_DPI).result.words)
            seen += faint_words(gray, seen, engine, REDACT_DPI)
            near = [_grown(b, 6.0) for b in boxes_on.get(i, ())]
            read = [w for w in seen if not any(overlaps(w.box, b) for b in near)]
            let_stand = [_onto(placed, i, b) for b in applied.removed_pt.get(i - offset, ())]
            for source in (words, read):
                found = [
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
                    found.append(Hit(Finding("leak", 0, 0, value, "leak"), tuple(sorted(leaked))))
                if found:
                    flagged[i + 1] = found
                    break
    return flagged


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
