"""Redaction builds, it does not edit: pages with hits are rendered, boxes burned into the
pixels, and rebuilt with a fresh invisible text layer of the words that remain. Pages without
hits keep their vector content. The output is written fresh and checked before anyone sees it:
any value found again by either parser holds the job for review (fail closed)."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pikepdf
from pikepdf import Name
from PIL import Image, ImageDraw

from pressroom.engines import images, pdfium
from pressroom.engines.straighten import STRAIGHTEN_MIN, level
from pressroom.errors import Corrupt, OutputCheckFailed, ReviewRequired, UnreadableScan
from pressroom.models import Box, PageInfo, PageText, SourceKind, Word
from pressroom.pipeline.check import CheckedPage, check_output
from pressroom.pipeline.core import (
    MIN_REAL_CHARS,
    DocumentResult,
    JobOptions,
    frame_resolution,
    output_builder,
    square,
)
from pressroom.pipeline.core import remaining as time_left
from pressroom.pipeline.inspect import inspect_source
from pressroom.pipeline.ocr import OcrEngine, OcrStage, level_words, rotate_cw
from pressroom.pipeline.pixels import PixelBudget
from pressroom.pipeline.render import PageLayout, PlacedSource, then, turn_cw
from pressroom.redact.detect import Finding
from pressroom.redact.detect.detector import Detector, name_tokens
from pressroom.redact.faint import faint_words
from pressroom.redact.leaks import find_leaks
from pressroom.redact.plan import (
    Hit,
    boxes_for,
    covered_words,
    detect,
    normalise,
    overlaps,
    remaining,
    turn_words,
    visible_words,
)
from pressroom.redact.policy import RedactionPolicy
from pressroom.redact.text import extracted_words
from pressroom.settings import Limits

REDACT_DPI = 300.0
MIN_JUDGE_CONFIDENCE = 60.0  # mean OCR word confidence below which a scan page goes to review
Progress = Callable[[int, int], None]


class RedactionLeak(ReviewRequired):
    code = "REDACTION_LEAK"


def detector_for(policy: RedactionPolicy) -> Detector:
    return Detector.for_classes(policy.classes)


@dataclass
class _PageScan:
    """What pass one learnt of a page; pass two decides and builds from it."""

    info: PageInfo
    rotation: int
    dpi: float
    size: tuple[int, int]  # upright pixels
    ocr: list[Word]
    extracted: list[Word]
    hits_ocr: list[Hit] = field(default_factory=list)
    hits_text: list[Hit] = field(default_factory=list)
    confidence: float = 100.0
    # degrees the upright page is turned clockwise to level its lines; the words above are in
    # that levelled frame, and so is everything built from them
    level: float = 0.0


def _burn(image: Image.Image, boxes: Sequence[Box]) -> Image.Image:
    """Boxes burned into the pixels; a page with no colour stays grey (a third of the bytes to
    compress and store). A colour ``image`` is burned in place (no copy of a page at 4 bytes a
    pixel): callers hand over a raster made for this."""
    if _grey(image):
        out = image.convert("L")
    else:
        out = image if image.mode == "RGB" else image.convert("RGB")
    draw = ImageDraw.Draw(out)
    for b in boxes:
        draw.rectangle((b.x0, b.y0, b.x1, b.y1), fill=0)
    return out


def _grey(image: Image.Image) -> bool:
    if image.mode in ("L", "1"):
        return True
    if image.mode != "RGB":
        return False
    # a band of rows at a time: the whole page as three int16 planes would be 6 bytes a pixel
    for top in range(0, image.height, 256):
        band = np.asarray(image.crop((0, top, image.width, min(image.height, top + 256))))
        r, g, b = (band[..., k].astype(np.int16) for k in range(3))
        if np.abs(r - g).max() > 2 or np.abs(g - b).max() > 2:
            return False
    return True


def _image_stream(pdf: pikepdf.Pdf, image: Image.Image) -> pikepdf.Stream:
    # level 1: a scan's pixels gain little from harder work (measured: ~5x the time for ~10 %)
    stream = pdf.make_stream(zlib.compress(image.tobytes(), 1))
    stream.Filter = Name.FlateDecode
    stream.Type = Name.XObject
    stream.Subtype = Name.Image
    stream.Width, stream.Height = image.size
    stream.ColorSpace = Name.DeviceGray if image.mode == "L" else Name.DeviceRGB
    stream.BitsPerComponent = 8
    return stream


class _Source:
    """Page rasters and vector placements of one source, PDF or image, page by page."""

    def __init__(self, stack: ExitStack, path: Path, kind: SourceKind) -> None:
        self.path = path
        self.kind = kind
        self.single = False
        if kind is SourceKind.PDF:
            try:
                self.pdf: pikepdf.Pdf | None = stack.enter_context(pikepdf.open(path))
            except pikepdf.PdfError:
                raise Corrupt("the PDF cannot be parsed") from None
            self.doc: Any = stack.enter_context(pdfium.RecyclingDocument(path))
        else:
            self.pdf = None

    def frames(self) -> Generator[Image.Image, None, None]:
        return images.iter_frames(self.path)

    def render(
        self, index: int, budget: PixelBudget, *, grey: bool = False
    ) -> tuple[Image.Image, list[Word]]:
        """The displayed page at 300 dpi, RGB (or grey, as RGB made grey), and its extractable
        words in that frame."""
        page = self.doc[index]
        try:
            budget.take(*pdfium.bitmap_size(page, REDACT_DPI / 72.0), f"page {index + 1}")
            scale = REDACT_DPI / 72.0
            image = pdfium.render_luma(page, scale) if grey else pdfium.render_colour(page, scale)
            words = extracted_words(page, REDACT_DPI / 72.0)
        finally:
            page.close()
        return image, words


def redact_document(
    source: Path,
    output: Path,
    options: JobOptions,
    policy: RedactionPolicy,
    engine: OcrEngine,
    *,
    progress: Progress | None = None,
) -> DocumentResult:
    started = time.perf_counter()
    policy.check_current(time.time())
    detector = detector_for(policy)
    # every page is rendered here, text or not: each is checked against the pixel limits
    info = inspect_source(source, options.limits, every_page_dpi=REDACT_DPI)
    ocr = OcrStage(engine, straighten_min=None if options.keep_pixels else STRAIGHTEN_MIN)
    template = options.template
    offset = 1 if template.cover is not None else 0
    with ExitStack() as stack:
        src = _Source(stack, source, info.kind)
        src.single = len(info.pages) == 1
        # Pass one: read every page (its own text and OCR of its pixels) and find the values.
        scans = _scan_pages(
            src, info, ocr, engine, detector, options.deadline, progress, options.limits
        )
        by_kind, tokens = _document_values(scans)
        try:
            # Pass two builds the output from every occurrence of every value; the checks read
            # it back. What detection finds only on the output (a name whose context changed
            # once its neighbour was burned) joins the values, and the output is built once
            # more; what is still found after that goes to a human.
            recheck: set[int] | None = None  # every page the first time
            before: dict[int, list[Box]] = {}
            for attempt in (1, 2):
                built = _build(
                    stack, src, info, scans, by_kind, tokens, output, options, engine, progress
                )
                if recheck is not None:
                    # read again: the pages flagged, and every page whose boxes moved
                    recheck |= {
                        index + 1
                        for (index, _dpi, boxes) in built.burned
                        if boxes != before.get(index)
                    }
                again = _check(
                    output,
                    built,
                    scans,
                    detector,
                    by_kind,
                    tokens,
                    ocr,
                    engine,
                    template,
                    recheck,
                    options.limits,
                )
                if not again:
                    break
                recheck = set(again)
                before = {index: boxes for (index, _dpi, boxes) in built.burned}
                if attempt == 2 or not _learn(again, by_kind):
                    raise RedactionLeak(
                        "detection run again on the output found "
                        + "; ".join(
                            f"page {page}: "
                            + ", ".join(f"{n} {kind}" for kind, n in sorted(_counts(hits).items()))
                            for page, hits in sorted(again.items())
                        )
                    )
                tokens = name_tokens(by_kind.get("name", ()))
        except ReviewRequired as exc:
            # what a reviewer needs to judge the held copy: every finding, with its place
            exc.findings = [f for scan in scans for f in _page_findings(scan, by_kind, tokens)]
            raise
    return DocumentResult.of(
        info,
        output,
        built.checked,
        offset,
        options,
        engine,
        {"redact": time.perf_counter() - started},
        built.counts,
        sum(1 for scan in scans if scan.level),
    )


@dataclass
class _Built:
    checked: list[CheckedPage]
    burned: list[tuple[int, float, list[Box]]]  # output page, dpi, boxes: to verify
    counts: dict[str, int]


def _build(
    stack: ExitStack,
    src: _Source,
    info: Any,
    scans: Sequence[_PageScan],
    by_kind: dict[str, set[str]],
    tokens: frozenset[str],
    output: Path,
    options: JobOptions,
    engine: OcrEngine,
    progress: Progress | None,
) -> _Built:
    """Pass two: every occurrence of every value, on every page; build and save the output."""
    template = options.template
    title = options.title or template.default_title
    found_values = set().union(*by_kind.values())
    # a fresh document: nothing of the source comes along but page content
    builder = output_builder(options, len(info.pages), engine, note="redacted")
    stack.callback(builder.discard_parts)
    total = len(info.pages)
    offset = 1 if template.cover is not None else 0
    built = _Built([], [], {})
    budget = PixelBudget(options.limits)  # this pass's bitmaps
    frames = src.frames() if info.kind is not SourceKind.PDF else None
    try:
        for scan in scans:
            time_left(options.deadline)
            frame = next(frames) if frames is not None else None
            hit_ocr = covered_words(scan.ocr, scan.hits_ocr, found_values, tokens)
            hit_text = covered_words(scan.extracted, scan.hits_text, found_values, tokens)
            boxes = boxes_for(scan.ocr, hit_ocr) + boxes_for(scan.extracted, hit_text)
            for h in scan.hits_ocr + scan.hits_text:
                built.counts[h.finding.kind] = built.counts.get(h.finding.kind, 0) + 1
            visible = visible_words(scan.extracted, scan.ocr)
            # Text a reader cannot see (a hidden layer, white, tiny or off-page text) must not
            # survive in vector content: such pages are rebuilt from pixels too.
            hidden = any(
                sum(c.isalnum() for c in w.text) >= 3 for w in scan.extracted if w not in visible
            )
            if boxes or hidden:
                scan.extracted = visible
                placed, text = _rebuilt_page(builder.pdf, src, scan, frame, boxes, budget)
                rotation = 0
                built.burned.append((scan.info.index + offset, scan.dpi, boxes))
            else:
                placed = _vector_page(builder.pdf, src, scan, frame)
                words = scan.ocr if not scan.extracted else []
                text = PageText(
                    index=scan.info.index,
                    method="ocr" if words else "kept",
                    words=tuple(words),
                    width_px=scan.size[0],
                    height_px=scan.size[1],
                    dpi=scan.dpi,
                    rotation=scan.rotation,
                    real_chars=_chars(words or scan.extracted),
                )
                rotation = scan.rotation
            # a page rebuilt from pixels is levelled in them; one kept as it was, by placement
            level = 0.0 if boxes or hidden else scan.level
            layout = builder.add_page(placed, text, rotation, scan.info.index + 1, level=level)
            _check_geometry(scan, layout)
            if not built.checked and template.cover is not None:
                builder.add_cover(layout.width, layout.height)
            built.checked.append(CheckedPage.of(scan.info.index + offset, layout, text))
            if progress is not None:
                progress(total + scan.info.index + 1, 2 * total)
    finally:
        if frames is not None:
            frames.close()
    real = sum(p.real_chars for p in built.checked)
    if real < MIN_REAL_CHARS:
        raise UnreadableScan(f"only {real} letters or digits could be read")
    builder.save(output, title=title, created=options.when)
    return built


def _check(
    output: Path,
    built: _Built,
    scans: Sequence[_PageScan],
    detector: Detector,
    by_kind: dict[str, set[str]],
    tokens: frozenset[str],
    ocr: OcrStage,
    engine: OcrEngine,
    template: Any,
    pages: set[int] | None = None,
    limits: Limits | None = None,
) -> dict[int, list[Hit]]:
    """The output read back: it parses, no found value is left in any form, every page could be
    judged, every box is solid. Then detection once more (on ``pages``, from 1; all by
    default); what it finds is returned."""
    found_values = set().union(*by_kind.values())
    offset = 1 if template.cover is not None else 0
    check_output(output, len(built.checked) + offset, built.checked)
    leaks = find_leaks(output, found_values)
    if leaks:
        summary = ", ".join(f"{leak.parser} {leak.where} x{leak.count}" for leak in leaks)
        raise RedactionLeak(f"a redacted value is still in the output ({summary})")
    # Pages whose scan the engine could not read with confidence cannot be judged: a human must.
    doubtful = [
        s.info.index + 1
        for s in scans
        if not s.extracted and s.ocr and s.confidence < MIN_JUDGE_CONFIDENCE
    ]
    if doubtful:
        raise OutputCheckFailed(
            f"page(s) {', '.join(map(str, doubtful))} read with too little confidence to judge"
        )
    limits = limits or Limits()
    unsolid = _unsolid_boxes(output, built.burned, template.header.height, PixelBudget(limits))
    if unsolid:
        raise OutputCheckFailed(f"{unsolid} redaction box(es) are not solid in the output")
    return _redetect(
        output,
        detector,
        found_values,
        tokens,
        ocr,
        engine,
        built.burned,
        template.header.height,
        pages,
        PixelBudget(limits),
    )


def _counts(hits: Sequence[Hit]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for h in hits:
        counts[h.finding.kind] = counts.get(h.finding.kind, 0) + 1
    return counts


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


def _scan_pages(
    src: _Source,
    info: Any,
    ocr: OcrStage,
    engine: OcrEngine,
    detector: Detector,
    deadline: float | None,
    progress: Progress | None,
    limits: Limits,
) -> list[_PageScan]:
    scans: list[_PageScan] = []
    total = len(info.pages)
    as_it_is = replace(ocr, straighten_min=None)
    budget = PixelBudget(limits)  # this pass's bitmaps
    for n, (page_info, raster, words) in enumerate(_rasters(src, info, budget)):
        gray = raster.convert("L")
        dpi = REDACT_DPI if info.kind is SourceKind.PDF else (page_info.native_dpi or 300.0)
        # Levelled only where it is a scan with square pixels: a page with its own text is
        # set straight already (a diagonal stamp must not turn it), and on a fax's 204x98 grid
        # an angle measured in pixels is not the page's.
        level_it = info.kind is SourceKind.PDF or square(*frame_resolution(gray.height, page_info))
        reader = ocr if level_it and not words else as_it_is
        reading = reader(gray, dpi, timeout=time_left(deadline))
        # the page's own words, in the upright (and levelled) frame OCR settled on
        words = turn_words(words, reading.rotation, gray.size)
        words = list(level_words(tuple(words), reading.straightened, reading.size))
        seen = list(reading.result.words)
        # faint print a person reads and the first reading dropped
        upright = level(rotate_cw(gray, reading.rotation), reading.straightened)
        seen += faint_words(upright, seen, engine, dpi, timeout=time_left(deadline))
        scan = _PageScan(page_info, reading.rotation, dpi, reading.size, seen, words)
        scan.level = reading.straightened
        scan.confidence = reading.result.mean_confidence
        scan.hits_ocr = detect(scan.ocr, detector)
        scan.hits_text = detect(scan.extracted, detector)
        scans.append(scan)
        if progress is not None:
            progress(n + 1, 2 * total)
    return scans


def _document_values(scans: Sequence[_PageScan]) -> tuple[dict[str, set[str]], frozenset[str]]:
    """Every value found anywhere (by class), and the name tokens of every person found
    anywhere: once a person is found, every mention on every page goes too."""
    hits = [h for s in scans for h in s.hits_ocr + s.hits_text]
    values: dict[str, set[str]] = {}
    for h in hits:
        values.setdefault(h.finding.kind, set()).add(h.finding.value)
    tokens = name_tokens(h.finding.value for h in hits if h.finding.kind == "name")
    return values, tokens


@dataclass(frozen=True, slots=True)
class DocumentFinding:
    """One finding as a person or a program sees it: page from 1, class, box in PDF points
    (origin top left of the upright page), the value."""

    page: int
    kind: str
    box: tuple[float, float, float, float]
    value: str

    def as_json(self, *, values: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "page": self.page,
            "class": self.kind,
            "box": [round(v, 2) for v in self.box],
        }
        if values:
            out["value"] = self.value
        return out


def _page_findings(
    scan: _PageScan, values: dict[str, set[str]], tokens: frozenset[str]
) -> list[DocumentFinding]:
    out: list[DocumentFinding] = []
    k = 72.0 / scan.dpi
    for words, hits in ((scan.ocr, scan.hits_ocr), (scan.extracted, scan.hits_text)):
        claimed: set[int] = set()
        for h in hits:
            if not h.words:
                continue
            claimed.update(h.words)
            boxes = [words[i].box for i in h.words]
            box = (
                min(b.x0 for b in boxes) * k,
                min(b.y0 for b in boxes) * k,
                max(b.x1 for b in boxes) * k,
                max(b.y1 for b in boxes) * k,
            )
            out.append(DocumentFinding(scan.info.index + 1, h.finding.kind, box, h.finding.value))
        # mentions found by propagation: a surname alone, a value written again elsewhere
        for kind in sorted(set(values) | ({"name"} if tokens else set())):
            mine = tokens if kind == "name" else frozenset()
            for i in sorted(covered_words(words, [], values.get(kind, ()), mine) - claimed):
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


def _dedupe(found: list[DocumentFinding]) -> list[DocumentFinding]:
    """OCR and the page's own text often find the same value in the same place: report it once."""
    kept: list[DocumentFinding] = []
    for f in sorted(found, key=lambda f: (f.page, f.box[1], f.box[0])):
        if any(
            g.kind == f.kind
            and g.page == f.page
            and overlaps(Box(*g.box), Box(*f.box))
            and normalise(g.value) == normalise(f.value)
            for g in kept
        ):
            continue
        kept.append(f)
    return kept


def detect_document(
    source: Path,
    policy: RedactionPolicy,
    engine: OcrEngine,
    options: JobOptions,
    *,
    progress: Progress | None = None,
) -> list[DocumentFinding]:
    """The dry run: what redaction would remove, page by page, and nothing redacted."""
    detector = detector_for(policy)
    info = inspect_source(source, options.limits, every_page_dpi=REDACT_DPI)
    with ExitStack() as stack:
        src = _Source(stack, source, info.kind)
        scans = _scan_pages(
            src,
            info,
            OcrStage(engine),
            engine,
            detector,
            options.deadline,
            progress,
            options.limits,
        )
    values, tokens = _document_values(scans)
    return [f for scan in scans for f in _page_findings(scan, values, tokens)]


def _check_geometry(scan: _PageScan, layout: PageLayout) -> None:
    """The page as placed in the output must keep the source page's size within 1 pt."""
    w, h = scan.info.width_pt, scan.info.height_pt
    if scan.rotation in (90, 270):
        w, h = h, w
    x0, y0, x1, y1 = layout.content
    if abs((x1 - x0) - w) > 1.0 or abs((y1 - y0) - h) > 1.0:
        raise OutputCheckFailed(f"page {scan.info.index + 1} changed size in the output")


def _centre_in(inner: Box, outer: Box) -> bool:
    x, y = (inner.x0 + inner.x1) / 2, (inner.y0 + inner.y1) / 2
    return outer.x0 <= x <= outer.x1 and outer.y0 <= y <= outer.y1


def _unsolid_boxes(
    output: Path,
    burned: list[tuple[int, float, list[Box]]],
    header_pt: float,
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
            top = round(header_pt * dpi / 72.0)
            for b in boxes:
                inside = image.crop(
                    (round(b.x0) + 2, top + round(b.y0) + 2, round(b.x1) - 2, top + round(b.y1) - 2)
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
    header_pt: float = 0.0,
    pages: set[int] | None = None,
    budget: PixelBudget | None = None,
) -> dict[int, list[Hit]]:
    """Detection once more, on the output as a reader gets it: its text and OCR of its pixels
    (faint print included). Per page (from 1), what it found; a known value still readable is a
    finding of kind "leak".

    What OCR makes of the black boxes themselves ("Hi HM" after a "Mr") is not a reading: words
    that overlap a burned box are left out, and so are findings of fewer than four letters or
    digits, or in lower case (an OCR fragment is no name).
    """
    scale = REDACT_DPI / 72.0
    boxes_on: dict[int, list[Box]] = {}
    for index, dpi, boxes in burned:
        k = REDACT_DPI / dpi
        top = header_pt * scale
        boxes_on[index] = [Box(b.x0 * k, b.y0 * k + top, b.x1 * k, b.y1 * k + top) for b in boxes]
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
            for source in (words, read):
                found = [h for h in detect(source, detector) if _judged(h.finding)]
                leaked = covered_words(source, [], values, tokens)
                if leaked:
                    value = " ".join(source[j].text for j in sorted(leaked))
                    found.append(Hit(Finding("leak", 0, 0, value, "leak"), tuple(sorted(leaked))))
                if found:
                    flagged[i + 1] = found
                    break
    return flagged


def _grown(b: Box, pad: float) -> Box:
    return Box(b.x0 - pad, b.y0 - pad, b.x1 + pad, b.y1 + pad)


def _judged(f: Finding) -> bool:
    if sum(c.isalnum() for c in f.value) < 4:
        return False
    return f.kind != "name" or any(c.isupper() for c in f.value)


def _chars(words: Sequence[Word]) -> int:
    return sum(c.isalnum() for w in words for c in w.text)


def _rasters(
    src: _Source, info: Any, budget: PixelBudget
) -> Iterator[tuple[PageInfo, Image.Image, list[Word]]]:
    if info.kind is SourceKind.PDF:
        for page_info in info.pages:
            # pass one reads grey: the page is never held in colour (4 bytes a pixel) here
            image, words = src.render(page_info.index, budget, grey=True)
            yield page_info, image, words
    else:
        frames = src.frames()
        try:
            for page_info, frame in zip(info.pages, frames, strict=False):
                budget.take(*frame.size, f"page {page_info.index + 1}")
                yield page_info, images.flatten(frame).convert("RGB"), []
        finally:
            frames.close()


def _rebuilt_page(
    pdf: pikepdf.Pdf,
    src: _Source,
    scan: _PageScan,
    frame: Image.Image | None,
    boxes: list[Box],
    budget: PixelBudget,
) -> tuple[PlacedSource, PageText]:
    if src.kind is SourceKind.PDF:
        raster, _words = src.render(scan.info.index, budget)
    else:
        assert frame is not None
        raster = images.flatten(frame).convert("RGB")
    upright = level(rotate_cw(raster, scan.rotation), scan.level)
    burned = _burn(upright, boxes)
    w = burned.width * 72.0 / scan.dpi
    h = burned.height * 72.0 / scan.dpi
    placed = PlacedSource(_image_stream(pdf, burned), (w, 0.0, 0.0, h, 0.0, 0.0), w, h)
    # On born-digital pages the words that stay come from the page's own text (exact).
    kept = remaining(scan.extracted if scan.extracted else scan.ocr, boxes)
    text = PageText(
        index=scan.info.index,
        method="ocr" if kept else "empty",
        words=tuple(kept),
        width_px=burned.width,
        height_px=burned.height,
        dpi=scan.dpi,
        real_chars=_chars(kept),
    )
    return placed, text


def _vector_page(
    pdf: pikepdf.Pdf, src: _Source, scan: _PageScan, frame: Image.Image | None
) -> PlacedSource:
    info = scan.info
    if src.kind is SourceKind.PDF:
        assert src.pdf is not None
        page = src.pdf.pages[info.index]
        crop = [float(v) for v in page.cropbox]
        form = page.as_form_xobject(handle_transformations=False)
        form.BBox = pikepdf.Array(crop)
        xobject = pdf.copy_foreign(form)
        x0, y0, x1, y1 = crop
        turn, (w, h) = turn_cw(info.rotate, x1 - x0, y1 - y0)
        return PlacedSource(xobject, then((1.0, 0.0, 0.0, 1.0, -x0, -y0), turn), w, h)
    assert frame is not None
    xobj = images.image_xobject(pdf, src.kind, src.path, frame, src.single)
    return PlacedSource(
        xobj, (info.width_pt, 0.0, 0.0, info.height_pt, 0.0, 0.0), info.width_pt, info.height_pt
    )
