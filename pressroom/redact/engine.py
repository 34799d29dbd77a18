"""Redaction builds, it does not edit: pages with hits are rendered, boxes burned into the
pixels, and rebuilt with a fresh invisible text layer of the words that remain. Pages without
hits keep their vector content. The output is written fresh and checked before anyone sees it:
any value found again by either parser holds the job for review (fail closed).

This is the redaction variant of the pipeline: its stages (read every page and detect —
``redact.scan``; burn and place — ``redact.build``; read back, leak check and re-detection —
``redact.readback``), run in order by one ``RedactionRun`` (``redact.run``), sit on the same
core as a plain job (``pipeline.core``): the same page placement, cover, minimum characters,
save and output check, the same stage timer. Here: the run made, and what holds its output
for a person."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

from pressroom.corrections import SheetFinding
from pressroom.engines.straighten import STRAIGHTEN_MIN
from pressroom.errors import (
    DoubtfulNames,
    NoText,
    OutputCheckFailed,
    PressroomError,
    ReviewRequired,
    UnsupportedScript,
    UnsupportedScriptHeld,
)
from pressroom.outcomes import Held
from pressroom.pipeline.core import DocumentResult, JobOptions, Progress
from pressroom.pipeline.ocr import OcrEngine, OcrStage
from pressroom.pipeline.prepare import Prepared, prepare
from pressroom.redact.apply import Found, review_sheet
from pressroom.redact.context import RunContext
from pressroom.redact.detect.detector import Detector
from pressroom.redact.findings import (
    DocumentFinding,
    names_implausible,
    page_findings,
    past_cap,
)
from pressroom.redact.leaks import LABEL_HELD
from pressroom.redact.policy import RedactionPolicy
from pressroom.redact.readback import rechecked
from pressroom.redact.run import RedactionRun
from pressroom.redact.scan import PageScan, check_text_size, document_values, scan_pages
from pressroom.redact.source import REDACT_DPI, OriginalText, RedactionSource
from pressroom.redact.writing import (
    MIN_LETTERS,
    Unread,
    language_bound,
    ocr_languages,
    unread_pages,
)
from pressroom.settings import RedactionSettings
from pressroom.stages import Stage, StageTimer

__all__ = [
    "DocumentFinding",
    "detect_document",
    "redact_document",
]


def redact_document(
    source: Path | Prepared,
    output: Path,
    options: JobOptions,
    policy: RedactionPolicy,
    engine: OcrEngine,
    *,
    progress: Progress | None = None,
    timer: StageTimer | None = None,
) -> DocumentResult | Held:
    """``source`` redacted under ``policy`` into a checked output at ``output`` (a scratch
    path). A prepared source (``pipeline.prepare``) that OCR reworked (``--ocr redo``/
    ``force``) has its own text (forms flattened) on the pages the rework changed detected
    and burned too. An output the checks doubt comes back ``Held`` (``outcomes``), left at
    ``output`` for a reviewer: why, with every finding and the review sheet. A reviewer's
    corrections (``options.corrections``) are applied on the way: values let stand, boxes
    drawn by hand, words to go wherever they occur. The result, and a hold, carry the review
    sheet. Stage timings go to ``timer`` (a fresh one when not given), failures included."""
    timer = timer or StageTimer()
    ready = source if isinstance(source, Prepared) else Prepared.as_is(source)
    # the whole of it as a stage too: the dashboard and the stage histograms have shown it all
    # along; its span holds the others
    with timer.stage(Stage.REDACT):
        policy.check_current(time.time())
        detector = Detector.for_classes(policy.classes, options.redaction)
        # every page is rendered here, text or not: each is checked against the pixel limits
        with timer.stage(Stage.INSPECT):
            info = ready.inspect(options.limits, every_page_dpi=REDACT_DPI)
            check_text_size(info, options.limits)
        ocr = OcrStage(engine, straighten_min=None if options.keep_pixels else STRAIGHTEN_MIN)
        with ExitStack() as stack:
            src = RedactionSource(stack, ready.path, info, options.limits)
            run = RedactionRun(
                RunContext(stack, src, output, options, engine, ocr, detector, timer, progress)
            )
            # Pass one: read every page (its own text and OCR of its pixels), find the values.
            scans = run.scan(_original_text(stack, ready, options))
            found = run.found
            with timer.stage(Stage.DETECT):
                # a reviewer's rebuild goes back to them anyway: they were told at the hold
                unread = _unread(scans, policy, options) if options.corrections is None else None
                misread = _misread(scans, engine, options) if unread is None else None
            if unread is not None:
                _refuse_unread(unread, options)
            if unread is not None or misread is not None:
                # text OCR of the job's languages could not read is not "no text": the copy
                # is built, and held below, however little OCR made of its pages
                run.ctx = replace(run.ctx, options=replace(options, allow_no_text=True))
            try:
                built = run.build_checked()
            except ReviewRequired as exc:
                # what a reviewer needs to judge the held copy: every finding, with its place,
                # and where the check that held it found what it found again
                again = rechecked(exc)
                reason = exc
                if unread is not None:
                    reason = _unread_hold(exc, again, unread)
                elif misread is not None and _low_confidence_only(exc, again, misread):
                    _refuse_unread(misread, options)
                    reason = UnsupportedScriptHeld(_misread_reason(misread))
                findings = _findings(scans, found)
                sheet = review_sheet(scans, findings, options.corrections)
                return Held(reason, tuple(findings), replace(sheet, rechecked=again))
    result = built.assembly.result(
        info,
        output,
        engine,
        redacted=built.counts,
        levelled_pages=sum(1 for scan in scans if scan.level),
    )
    # a page's text layer is its own words (kept as drawn, or laid again over a page rebuilt
    # from pixels) or OCR's: the counts say which, whatever was rebuilt
    result = replace(
        result,
        kept_pages=sum(1 for scan in scans if scan.seen_text),
        ocr_pages=sum(1 for scan in scans if not scan.seen_text and scan.ocr),
    )
    findings = _findings(scans, found)
    sheet = review_sheet(scans, findings, options.corrections)
    found_all = tuple(findings)
    if unread is not None:
        unsupported = UnsupportedScriptHeld(_held_reason(unread))
        return Held(unsupported, found_all, sheet, {"text_layer": result.text_layer})
    if misread is not None and result.text_layer == "empty":
        # a page with text of its own, that OCR made nothing of: not "no text"
        _refuse_unread(misread, options)
        misread_held = UnsupportedScriptHeld(_misread_reason(misread))
        return Held(misread_held, found_all, sheet, {"text_layer": "empty"})
    if result.text_layer == "empty":  # allowed to have no text: then a person must look
        no_text = NoText("no page yields text: nothing could be checked for what must go")
        return Held(no_text, found_all, sheet, {"text_layer": "empty"})
    if options.corrections is None:  # a reviewer's rebuild goes back to them anyway
        doubt = (
            past_cap(findings, options.limits.max_page_findings)
            or names_implausible(scans)
            or _doubtful(findings, RedactionSettings.given(options.redaction))
        )
        if doubt is not None:
            return Held(doubt, found_all, sheet)
    return replace(result, sheet=sheet, overridden=found.applied.overridden)


def _unread(
    scans: Sequence[PageScan], policy: RedactionPolicy, options: JobOptions
) -> Unread | None:
    """The pages whose writing the recognisers of the policy's names (or addresses) do not
    read (``redact.writing``), each read in its own text, or OCR's where it has none."""
    bound = language_bound(policy.classes, RedactionSettings.given(options.redaction))
    return unread_pages((_page_text(scan) for scan in scans), bound) if bound else None


def _misread(scans: Sequence[PageScan], engine: OcrEngine, options: JobOptions) -> Unread | None:
    """The pages whose own text is in a script OCR of the job's languages does not read. OCR
    cannot tell which of such a page's words a reader sees, so the page is rebuilt from its
    pixels with what OCR made of it: little, and with little confidence."""
    codes = options.languages or tuple(getattr(engine, "languages", ("eng",)))
    bound = {"ocr": ocr_languages(codes)}
    return unread_pages((" ".join(w.text for w in scan.extracted) for scan in scans), bound)


def _misread_reason(misread: Unread) -> str:
    return (
        f"{misread.reason()}: the words of those pages cannot be told seen from hidden, so "
        "they are rebuilt from their pixels with what OCR read as their text; held for a person"
    )


def _low_confidence_only(
    exc: ReviewRequired, places: Sequence[SheetFinding], unread: Unread
) -> bool:
    """Whether a check held the copy only for pages of ``unread`` read with too little
    confidence."""
    return (
        type(exc) is OutputCheckFailed
        and bool(places)
        and all(p.kind == "low-confidence" and p.page in unread.pages for p in places)
    )


def _page_text(scan: PageScan) -> str:
    own = " ".join(w.text for w in scan.extracted)
    if sum(c.isalpha() for c in own) >= MIN_LETTERS:
        return own
    return " ".join(w.text for w in scan.ocr)


def _held_reason(unread: Unread) -> str:
    return (
        f"{unread.reason()}: every finding is burned, but nothing says every one was found "
        "there; held for a person"
    )


def _refuse_unread(unread: Unread, options: JobOptions) -> None:
    """``UNSUPPORTED_SCRIPT`` where the operator refuses such documents rather than hold them."""
    if RedactionSettings.given(options.redaction).unsupported_script == "refuse":
        raise UnsupportedScript(f"{unread.reason()} (PRESSROOM_UNSUPPORTED_SCRIPT=refuse)")


def _unread_hold(
    exc: ReviewRequired, places: Sequence[SheetFinding], unread: Unread
) -> ReviewRequired:
    """The hold of a document with pages in writing the recognisers do not read, when a check
    held it first. Pages OCR read with too little confidence (OCR in other languages reads such
    a page so) are what ``UNSUPPORTED_SCRIPT`` says already: that hold, in its place. Any other
    check keeps its code (the desk asks a leak's reviewer to acknowledge it, by its code) and
    says the writing after its own reason; the label's hold stays as it is (the worker
    withholds the label by its message)."""
    if _low_confidence_only(exc, places, unread):
        return UnsupportedScriptHeld(_held_reason(unread))
    if exc.message != LABEL_HELD:
        exc.args = (f"{exc.message}; and {_held_reason(unread)}", *exc.args[1:])
    return exc


# a redaction is held for doubt only with at least this many doubtful names
DOUBT_HOLD_MIN = 3


def _doubtful(
    findings: Sequence[DocumentFinding], settings: RedactionSettings
) -> DoubtfulNames | None:
    """The hold (``DOUBTFUL_NAMES``) when at least ``DOUBT_HOLD_MIN`` of the name findings,
    and more than the setting's share of them, are doubtful; each is burned either way."""
    names = [f for f in findings if f.kind == "name"]
    doubtful = sum(f.doubt for f in names)
    # one or two half-believed words are burned, not worth a person: a pattern of doubt is
    if doubtful < DOUBT_HOLD_MIN or doubtful / len(names) <= settings.doubt_hold_share:
        return None
    return DoubtfulNames(
        f"{doubtful} of {len(names)} name findings are doubtful (more than "
        f"{settings.doubt_hold_share:.0%}); each is burned and marked for the reviewer"
    )


def _findings(scans: Sequence[PageScan], found: Found) -> list[DocumentFinding]:
    return [f for scan in scans for f in page_findings(scan, found.by_kind, found.tokens)]


def _original_text(stack: ExitStack, ready: Prepared, options: JobOptions) -> OriginalText | None:
    """The source's own text (forms flattened, nothing reworked) on the pages a rework changed,
    where the pages read are a copy OCR reworked: what the rework took out (an earlier layer;
    every word under force) is found and burned too."""
    original = ready.flat.path
    if original == ready.path:
        return None
    return OriginalText(stack, original, ready.pages.rewritten, options.limits)


def detect_document(
    source: Path,
    policy: RedactionPolicy,
    engine: OcrEngine,
    options: JobOptions,
    *,
    progress: Progress | None = None,
    warnings: list[PressroomError] | None = None,
) -> list[DocumentFinding]:
    """The dry run: what redaction would remove, page by page, and nothing redacted.
    ``warnings``: filled with what a redaction of it would be held or refused for that the
    dry run can tell (pages in writing the recognisers do not read), to be said, not raised."""
    detector = Detector.for_classes(policy.classes, options.redaction)
    timer = StageTimer()  # nothing records a dry run's stages
    with ExitStack() as stack:
        # forms and annotations drawn into their pages, and the rework, as redaction reads them
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pressroom-")))
        ready = stack.enter_context(prepare(source, scratch / "source", options))
        info = ready.inspect(options.limits, every_page_dpi=REDACT_DPI)
        check_text_size(info, options.limits)
        src = RedactionSource(stack, ready.path, info, options.limits)
        # (a dry run builds nothing: its output path is never written)
        output = scratch / "unbuilt.pdf"
        ctx = RunContext(stack, src, output, options, engine, OcrStage(engine), detector, timer)
        scans = scan_pages(replace(ctx, progress=progress), _original_text(stack, ready, options))
    if warnings is not None:
        unread = _unread(scans, policy, options)
        if unread is not None:
            try:
                _refuse_unread(unread, options)
                warnings.append(UnsupportedScriptHeld(_held_reason(unread)))
            except UnsupportedScript as refused:
                warnings.append(refused)
        implausible = names_implausible(scans)
        if implausible is not None:
            warnings.append(implausible)
    values, tokens = document_values(scans)
    return [f for scan in scans for f in page_findings(scan, values, tokens)]
