"""The offline use case: one file in, one output (or a held copy) out, no service. ``process``
and ``watch`` (and the desk's rebuild of a held copy) stand on it: the pipeline options from
the command's choices, one OCR engine per process, the held copy and its note in the review
folder, and the ok line a user reads."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pressroom.corrections import MANUAL
from pressroom.errors import (
    EXIT_INTERNAL,
    EXIT_OK,
    BadRequest,
    PressroomError,
    ReviewRequested,
    TooLarge,
)
from pressroom.fsutil import escaped, place_copy
from pressroom.hints import for_cli
from pressroom.models import OcrMode
from pressroom.outcomes import Held
from pressroom.settings import Settings, source_date

if TYPE_CHECKING:
    from pressroom.pipeline.core import DocumentResult, JobOptions
    from pressroom.redact.policy import RedactionPolicy
    from pressroom.templates import Template


def _hold_for_review(
    built: Path,
    dest: Path,
    held: Held,
    source: Path,
    policy: RedactionPolicy | None,
    template: str | None,
    title: str | None,
    keep_pixels: bool,
    output: Mapping[str, object] | None = None,
    read: Path | None = None,
) -> Path:
    """The held copy and its note in OUTDIR/review/ (0700, files 0600), so a person can judge
    it (``pressroom review``): what detection found, the review sheet, and what a rebuild
    needs (the kind of output too: an approved copy gets its sidecar text; ``read``: the
    scanned copy that was read, whose digest the desk checks the input against). Nothing is
    delivered beside the other outputs."""
    from pressroom.offline.folder import Rebuild, hold

    rebuild = Rebuild.of(source, policy, template, title, keep_pixels, output, read)
    return hold(dest.parent / "review", dest.stem, built, held, rebuild)


# the files a folder given as an input contributes (a file named on the line is always taken,
# its type decided by its content; in a folder, a copier's Thumbs.db or .DS_Store is not work)
SCAN_SUFFIXES = frozenset({".pdf", ".png", ".jpg", ".jpeg", ".tif", ".tiff"})


def plan_inputs(inputs: Sequence[Path], *, recursive: bool = False) -> list[tuple[Path, Path]]:
    """Each input file and its output's path relative to OUTDIR: ``NAME.pdf`` for a file, and
    for a folder its files (with ``recursive`` every folder below too, the tree mirrored),
    hidden ones left out, in name order. Two inputs that would be written to one output are
    refused (``BAD_REQUEST``) before anything is done."""
    planned: list[tuple[Path, Path]] = []
    for given in inputs:
        if given.is_dir():
            pattern = "**/*" if recursive else "*"
            found = sorted(
                p
                for p in given.glob(pattern)
                if p.is_file()
                and p.suffix.lower() in SCAN_SUFFIXES
                and not any(part.startswith(".") for part in p.relative_to(given).parts)
            )
            planned += [(p, p.relative_to(given).with_suffix(".pdf")) for p in found]
        else:  # a file, or one that is missing: NOT_FOUND for it alone, the rest go on
            planned.append((given, Path(given.stem + ".pdf")))
    seen: dict[Path, Path] = {}
    for source, out in planned:
        if out in seen:
            raise BadRequest(
                f"{escaped(str(seen[out]))} and {escaped(str(source))} would both be written as "
                f"{escaped(str(out))}; process them apart"
            )
        seen[out] = source
    return planned


@dataclass(frozen=True, slots=True)
class OutputChoice:
    """What kind of output a process run asks for (None: the template's default)."""

    output_type: str | None = None
    sidecar: bool | None = None
    allow_no_text: bool = False
    optimize: int = 0
    languages: tuple[str, ...] = ()  # -l; (): the template's, else the setting's
    ocr: OcrMode = "skip"  # --ocr: pages with text skipped, an earlier layer redone, or all


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one input: crosses process boundaries, so plain values only."""

    exit_code: int
    line: str  # for stdout when delivered, stderr otherwise
    pages: int = 0
    crashed: bool = False  # the process reading it died before it ended (exit 75)


_ENGINE: Any = None  # one Tesseract per process, reused for every file it processes


def use_engine(engine: Any) -> None:
    """Make ``engine`` this process's (a pool's process is given its parent's this way, so
    every file it reads shares one engine: ``spread``'s initializer)."""
    global _ENGINE
    _ENGINE = engine


def current_engine() -> Any:
    """This process's engine as it stands (None before its first use)."""
    return _ENGINE


def process_one(
    path: Path,
    dest: Path,
    template: Template,
    title: str | None,
    progress: Callable[[int, int], None] | None = None,
    policy: RedactionPolicy | None = None,
    keep_pixels: bool = False,
    settings: Settings | None = None,
    template_name: str | None = None,
    review_always: bool = False,
    output: OutputChoice | None = None,
    mode: int = 0o644,
    scan: bool | None = None,
) -> Outcome:
    """Process one input into ``dest`` (and its sidecar beside it), made ``mode``; every
    failure becomes a one-line Outcome. ``scan``: the malware scanner reads it first — None:
    when ``PRESSROOM_SCANNER`` names one; True: asked (``--scan``); False: the caller has
    scanned it already. ``settings``: the command's, read once (None: read
    here); ``template_name``: the template as the user
    gave it, kept with a held copy so the review desk can rebuild it; ``review_always``: a
    redaction that passes its checks is held for a person all the same. ``progress``: told
    each page read (``pipeline.core.Progress``)."""
    from pressroom.pipeline.ocr import engine_for
    from pressroom.pipeline.sidecar import sidecar_path
    from pressroom.processing import Processing
    from pressroom.scratch import job_scratch

    settings = Settings.from_env() if settings is None else settings
    if not path.is_file():
        return Outcome(2, f"NOT_FOUND: {escaped(str(path))}: no such file")
    processing = Processing(policy)
    tick = progress if callable(progress) else None
    t0 = time.monotonic()
    try:
        with job_scratch(settings.scratch_dir) as scratch:
            source = scanned_copy(path, scratch, settings, scan)  # what is read from here on
            built = scratch / "output.pdf"
            options = job_options(template, title, settings, keep_pixels, output)
            engine = engine_for(shared_engine(settings), options.languages)
            done = processing(source, built, options, engine, progress=tick)
            if not isinstance(done, Held) and review_always and processing.redacts:
                asked = ReviewRequested("every check passed; a person was asked to approve it")
                done = Held(asked, sheet=done.sheet)
            if isinstance(done, Held):
                if not processing.holds_output:
                    raise done.reason
                folder = _hold_for_review(
                    built,
                    dest,
                    done,
                    path,
                    policy,
                    template_name,
                    title,
                    keep_pixels,
                    options.output_choices(),  # the template's defaults applied
                    source,  # the desk rebuilds from the input only while it holds these bytes
                )
                return Outcome(
                    done.exit_code,
                    f"{done.code}: {escaped(path.name)}: {done.message} "
                    f"(held: {escaped(str(folder))})",
                )
            result = done
            if options.wants_sidecar:
                place_copy(sidecar_path(built), dest.with_suffix(".txt"), mode=mode)
            place_copy(built, dest, mode=mode)
    except PressroomError as exc:
        return Outcome(
            exc.exit_code, f"{exc.code}: {escaped(path.name)}: {for_cli(exc.code, exc.message)}"
        )
    except Exception as exc:  # a bug: one line, never a traceback, and go on
        return Outcome(EXIT_INTERNAL, f"INTERNAL_ERROR: {escaped(path.name)}: {type(exc).__name__}")
    return delivered(dest, result, options, time.monotonic() - t0)


def scans(settings: Settings, scan: bool | None) -> bool:
    """Whether the scanner reads the input (``scan`` as ``process_one`` takes it)."""
    return scan is True or (scan is None and settings.scanner.kind != "none")


def scanned_copy(path: Path, folder: Path, settings: Settings, scan: bool | None) -> Path:
    """The file to read from here on: ``path`` itself when nothing scans it; when the scanner
    does, a private copy made in ``folder`` (0700, the job's) first, scanned, and returned.
    The input stays its owner's, who can rewrite it after the verdict (the same inode: a
    dropper that holds its file open, a hot folder's claimed file): whatever reads on must
    read the very bytes the scanner passed. The copy stops one byte past
    ``PRESSROOM_MAX_BYTES`` (a file still growing is refused ``TOO_LARGE``, as it would be)."""
    if not scans(settings, scan):
        return path
    inside = folder / "source"
    inside.mkdir(mode=0o700, exist_ok=True)
    copy = inside / path.name  # the name kept: every line about it says its name
    limit = settings.limits.max_bytes
    with path.open("rb") as given, copy.open("xb") as kept:
        copied = 0
        while copied <= limit and (block := given.read(min(1 << 20, limit + 1 - copied))):
            kept.write(block)
            copied += len(block)
    if copied > limit:
        raise TooLarge(f"more than {limit:,} bytes; the limit is {limit:,}")
    scan_source(copy, settings, True)
    return copy


def private_folder(settings: Settings) -> Path:
    """A folder of one file's own (0700) in the scratch folder, named as ``job_scratch``
    names its folders (a sweep knows them); the caller removes it."""
    import os
    import tempfile

    from pressroom.scratch import PREFIX

    if settings.scratch_dir is not None:
        settings.scratch_dir.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=settings.scratch_dir))


def scan_source(path: Path, settings: Settings, scan: bool | None) -> None:
    """``path`` through the malware scanner when one is configured or asked for (``scan``,
    as ``process_one`` takes it): a finding is refused (``MALWARE_FOUND``, exit 2), a scanner
    that cannot be reached is tried again for ``PRESSROOM_SCANNER_RETRY_SECONDS`` and then
    ``SCANNER_UNAVAILABLE`` (exit 75) — never a pass. Read what was scanned, never the path
    again: ``scanned_copy``."""
    if not scans(settings, scan):
        return
    from pressroom.scanning import scan_patiently
    from pressroom.service import open_scanner

    scanner = open_scanner(settings.scanner, asked=True)
    assert scanner is not None
    scan_patiently(scanner, path, settings.scanner.retry_s)


def shared_engine(settings: Settings) -> Any:
    """This process's Tesseract, made at its first use and reused for every file after."""
    global _ENGINE
    if _ENGINE is None:
        from pressroom.engines.tesseract import TesseractEngine

        _ENGINE = TesseractEngine(
            languages=settings.languages, tessdata_prefix=settings.tessdata_prefix
        )
    return _ENGINE


def job_options(
    template: Template,
    title: str | None,
    settings: Settings,
    keep_pixels: bool,
    output: OutputChoice | None,
) -> JobOptions:
    """One file's pipeline options from the command's choices, through the one builder the
    worker and the review folder use (``JobOptions.of``); its date: now, or
    ``SOURCE_DATE_EPOCH``."""
    from pressroom.languages import job_languages
    from pressroom.orders import JobOrder
    from pressroom.pipeline.core import JobOptions

    choice = output or OutputChoice()
    order = JobOrder(
        template=template.name,
        keep_pixels=keep_pixels,
        output_type=choice.output_type,
        sidecar=choice.sidecar,
        allow_no_text=choice.allow_no_text,
        optimize=choice.optimize,
        ocr=choice.ocr,
        languages=job_languages(choice.languages, template.languages, settings.languages),
    )
    return JobOptions.of(order, template, settings, title=title, when=source_date())


def delivered(dest: Path, result: DocumentResult, options: JobOptions, seconds: float) -> Outcome:
    """The ok line of a delivered output, in words a user can check against the file: its pages
    read by OCR and those that kept their own text, what was done to them, and under a redaction
    how many values were burned, by class."""
    turned = sum(1 for r in result.rotations if r)
    return Outcome(
        EXIT_OK,
        f"ok  {escaped(str(dest))}  {result.pages} page(s): {result.ocr_pages} read by OCR, "
        f"{result.kept_pages} own text kept"
        + (f", {turned} turned upright" if turned else "")
        + (f", {result.levelled_pages} levelled" if result.levelled_pages else "")
        + _flattened(result)
        + _burned(result)
        + _dropped(result)
        + _little_text(result)
        + "".join(f", warning: {w}" for w in result.warnings)
        + (", PDF/A-2b" if options.archive else "")
        + f"  {seconds:.1f}s",
        result.pages,
    )


def _burned(result: DocumentResult) -> str:
    """What the ok line says of a redaction: the values burned, by class (a redaction's result
    carries its review sheet; a plain job's does not, and says nothing here)."""
    if result.sheet is None:
        return ""
    counts = [(kind, n) for kind, n in sorted(result.redacted.items()) if n]
    if not counts:
        return ", burned: nothing"
    return ", burned: " + ", ".join(
        f"{'by hand' if kind == MANUAL else kind} {n}" for kind, n in counts
    )


def _dropped(result: DocumentResult) -> str:
    """What the ok line says of the source's carriers a redaction left out (they held a value
    it removes): their kinds, never their text."""
    if not result.dropped:
        return ""
    return ", dropped: " + ", ".join(result.dropped) + " (they held a value the redaction removes)"


def _little_text(result: DocumentResult) -> str:
    """What the ok line says of a document delivered with too little text to search
    (``--allow-no-text``): "no text" only when its text layer holds none."""
    if result.text_layer != "empty":
        return ""
    if result.real_chars == 0:
        return ", no text (an empty text layer, as allowed)"
    return f", little text ({result.real_chars} letters or digits, too few to search; as allowed)"


def _flattened(result: DocumentResult) -> str:
    """What the ok line says of forms and annotations drawn into their pages."""
    said = []
    if result.flattened:
        said.append(f"{result.flattened} form fields and annotations drawn in")
    if result.notes:
        said.append(f"{result.notes} sticky note" + ("s" if result.notes != 1 else ""))
    return "".join(f", {s}" for s in said)
