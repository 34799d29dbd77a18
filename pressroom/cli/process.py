"""`pressroom process`, the command: arguments parsed, lines printed, progress shown. The work
is the offline use case's (``pressroom.offline``)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pressroom.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
)
from pressroom.errors import BadRequest, PressroomError, TooLarge
from pressroom.fsutil import escaped
from pressroom.models import OCR_MODES
from pressroom.offline.process import (
    Outcome,
    OutputChoice,
    plan_inputs,
)
from pressroom.settings import Settings, source_date

if TYPE_CHECKING:
    from pressroom.redact.policy import RedactionPolicy
    from pressroom.templates import Template


def _report(outcome: Outcome, quiet: bool, to_stdout: bool = False) -> None:
    """An outcome's line: refusals on stderr, ok lines on stdout (on stderr when stdout
    carries the PDF itself)."""
    line = outcome.line
    if to_stdout and outcome.exit_code == 3:
        # the held copy was in the run's scratch folder, which is gone with the run
        line = re.sub(
            r" \(held: [^)]*\)$", " (not kept with -o -: run with -o FOLDER to review it)", line
        )
    if outcome.exit_code != EXIT_OK:
        print(line, file=sys.stderr)
    elif not quiet:
        print(line, file=sys.stderr if to_stdout else sys.stdout)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A run's choices, checked before any file is read."""

    template: Template
    policy: RedactionPolicy
    choice: OutputChoice


def prepare(args: argparse.Namespace, settings: Settings) -> Prepared:
    """The template, the redaction and the output choices of `process` or `watch`, every one
    checked: a wrong one is refused (its PressroomError) before any file is read."""
    from pressroom.languages import job_languages, parse_languages, require
    from pressroom.redact.detect.registry import check_policy_classes
    from pressroom.redact.policy import parse_policy
    from pressroom.templates import resolve_template

    template = resolve_template(args.template, settings.template_dirs)
    policy = parse_policy(args.redact, now=time.time())
    if not policy.empty:
        check_policy_classes(policy.classes, settings.redaction)
    elif args.review == "always":
        raise BadRequest("--review always needs --redact")
    source_date()  # a malformed SOURCE_DATE_EPOCH is refused before any work
    asked = parse_languages(args.language) if args.language else ()
    # before any file: a pack that is missing is missing for every one of them
    require(job_languages(asked, template.languages, settings.languages), settings.tessdata_prefix)
    choice = OutputChoice(
        args.output_type, args.sidecar, args.allow_no_text, args.optimize, asked, args.ocr
    )
    return Prepared(template, policy, choice)


def _from_stdin(folder: Path, limit: int) -> Path:
    """What is piped in, as a file in the run's private scratch folder (at most ``limit``
    bytes: more is TOO_LARGE, as for a file)."""
    if sys.stdin is None or sys.stdin.isatty():
        raise BadRequest("- reads the input from stdin, and nothing is piped in")
    path = folder / "stdin"
    size = 0
    with path.open("wb") as out:
        for block in iter(lambda: sys.stdin.buffer.read(1 << 20), b""):
            size += len(block)
            if size > limit:
                raise TooLarge(f"more than {limit:,} bytes on stdin; the limit is {limit:,}")
            out.write(block)
    return path


def cmd_process(args: argparse.Namespace) -> int:
    from contextlib import nullcontext

    from pressroom.scratch import job_scratch

    settings = Settings.from_env()
    os.umask(0o077)
    to_stdout = str(args.output) == "-"
    from_stdin = any(str(p) == "-" for p in args.inputs)
    pipes = job_scratch(settings.scratch_dir) if to_stdout or from_stdin else nullcontext(None)
    with pipes as pipe_dir:
        return _process(args, settings, pipe_dir, to_stdout)


def _process(
    args: argparse.Namespace, settings: Settings, pipe_dir: Path | None, to_stdout: bool
) -> int:
    """`process`; ``pipe_dir``: a private folder for what comes from stdin or goes to
    stdout."""
    try:
        prepared = prepare(args, settings)
        template, policy, choice = prepared.template, prepared.policy, prepared.choice
        inputs = list(args.inputs)
        if pipe_dir is not None and any(str(p) == "-" for p in inputs):
            if sum(1 for p in inputs if str(p) == "-") > 1:
                raise BadRequest("- (stdin) can be given once")
            piped = _from_stdin(pipe_dir, settings.limits.max_bytes)
            inputs = [piped if str(p) == "-" else p for p in inputs]
        planned = plan_inputs(inputs, recursive=args.recursive)
        if not planned:
            raise BadRequest("no PDF, PNG, JPEG or TIFF file in the folders given")
        if to_stdout:
            if len(planned) != 1:
                raise BadRequest(f"-o - (stdout) takes one input, not {len(planned)}")
            if args.sidecar:
                raise BadRequest("--sidecar writes a second file: give -o a folder")
    except PressroomError as exc:
        print(exc.one_line(), file=sys.stderr)
        return exc.exit_code
    outdir: Path = args.output if pipe_dir is None or not to_stdout else pipe_dir / "out"
    outdir.mkdir(parents=True, exist_ok=True)
    work: list[tuple[Path, Path]] = []
    skipped = 0
    for path, name in planned:
        dest = outdir / name
        if args.skip_existing and dest.exists():
            skipped += 1
            if not args.quiet:
                print(f"skipped  {escaped(str(dest))}  (exists)")
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        work.append((path, dest))
    from pressroom.cli.progress import Board

    def say(outcome: Outcome) -> None:
        if to_stdout:  # the output is not in a folder: "-" names where it went
            outcome = dataclasses.replace(outcome, line=outcome.line.replace(f"{work[0][1]}", "-"))
        _report(outcome, args.quiet, to_stdout)

    started = time.monotonic()
    outcomes: list[Outcome] = []
    show = sys.stderr.isatty() and not args.quiet
    try:
        with Board(show, files=len(work)) as board:
            from pressroom.offline.spread import Run, run_one, run_spread

            if policy is not None and not policy.empty:
                settings = threads_shared(settings, args.jobs, len(work))
            run = Run(
                template,
                args.title,
                policy,
                args.keep_pixels,
                settings,
                args.template,
                args.review == "always",
                choice,
                scan=args.scan,
            )
            if args.jobs <= 1:
                passes = 2 if run.redacts else 1
                for path, dest in work:
                    outcomes.append(
                        run_one(run, path, dest, board.pages_callback(path, path.name, passes))
                    )
                    board.end(path)
                    say(outcomes[-1])
            else:
                outcomes = run_spread(work, args.jobs, run, board, lambda _n, o: say(o))
    except KeyboardInterrupt:
        print("INTERRUPTED: stopped; no partial output was left", file=sys.stderr)
        return EXIT_INTERRUPTED
    if to_stdout:
        if outcomes and outcomes[0].exit_code == EXIT_OK:
            import shutil

            with work[0][1].open("rb") as built:
                shutil.copyfileobj(built, sys.stdout.buffer, 1 << 20)
            sys.stdout.buffer.flush()
        return max((o.exit_code for o in outcomes), default=EXIT_OK)
    if not args.quiet and (len(work) > 1 or skipped):
        delivered = sum(1 for o in outcomes if o.exit_code == EXIT_OK)
        print(
            f"{delivered}/{len(work)} delivered, {sum(o.pages for o in outcomes)} pages in "
            f"{time.monotonic() - started:.1f}s -> {escaped(str(outdir))}"
            + (f"; {skipped} skipped (their output exists)" if skipped else "")
        )
    return max((o.exit_code for o in outcomes), default=EXIT_OK)


def add_process_options(parser: argparse.ArgumentParser) -> None:
    """The options `process` and `watch` share: what each output is to be."""
    parser.add_argument(
        "--template", default=None, help="brand template name or folder (default: plain)"
    )
    parser.add_argument("--title", default=None, help="the document title used by the template")
    parser.add_argument(
        "--redact",
        default=None,
        metavar="CLASSES",
        help="comma list of name, address, account-number",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=1,
        help="processes to use (default 1): a plain document's pages are spread over them, "
        "many files share them; a redaction is read whole in one",
    )
    parser.add_argument(
        "--keep-pixels",
        action="store_true",
        help="keep each scan's pixels as they are: skewed pages are not levelled (the text "
        "layer is laid level either way)",
    )
    parser.add_argument(
        "--review",
        choices=["doubt", "always"],
        default="doubt",
        help="with --redact: hold an output in OUTDIR/review/ only when its checks doubt it "
        "(default) or always",
    )
    parser.add_argument(
        "--output-type",
        choices=["pdf", "pdfa"],
        default=None,
        help="pdfa: PDF/A-2b for archiving (default: the template's, else pdf)",
    )
    parser.add_argument(
        "--sidecar",
        action="store_true",
        default=None,
        help="also write NAME.txt beside each PDF: its text layer as plain text, a form feed "
        "between pages (for a redaction, only what remains)",
    )
    parser.add_argument(
        "--allow-no-text",
        action="store_true",
        help="deliver a document in which no page yields text (a photo, a blank page) with an "
        "empty text layer instead of refusing it UNREADABLE_SCAN; with --redact it is held "
        "for review (NO_TEXT)",
    )
    parser.add_argument(
        "--optimize",
        type=int,
        choices=[0, 1, 2],
        default=0,
        help="smaller output, losslessly: 1 recompresses every Flate stream at the best "
        "level, 2 also stores grey and RGB images with a PNG predictor (default 0)",
    )
    parser.add_argument(
        "-l",
        "--language",
        metavar="LANGS",
        help="OCR languages, Tesseract codes joined with '+' (eng+deu); each needs its pack "
        "(tesseract-ocr-deu). Default: the template's, else PRESSROOM_OCR_LANGUAGES (eng)",
    )
    parser.add_argument(
        "--ocr",
        choices=list(OCR_MODES),
        default="skip",
        help="PDF pages that carry text: skip keeps their text (default); redo replaces an "
        "earlier OCR layer (invisible text) and reads the page again; force renders every "
        "page to an image and reads it (vector text becomes pixels)",
    )
    parser.add_argument(
        "--scan",
        action="store_true",
        default=None,
        help="read each input through the malware scanner (clamd at PRESSROOM_CLAMD_ADDRESS) "
        "first; on by itself when PRESSROOM_SCANNER=clamd. A finding is MALWARE_FOUND (exit "
        "2); a scanner not reached within PRESSROOM_SCANNER_RETRY_SECONDS is "
        "SCANNER_UNAVAILABLE (exit 75)",
    )


def add_commands(sub: Any) -> None:
    """process"""
    p = sub.add_parser("process", help="process files offline, without the service")
    p.add_argument(
        "inputs",
        nargs="+",
        type=Path,
        metavar="INPUT",
        help="PDF, PNG, JPEG or TIFF files (type decided by content), - for stdin, or folders "
        "of them",
    )
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="OUTDIR",
        help="folder for the output PDFs (created if missing); - for the one PDF on stdout",
    )
    add_process_options(p)
    p.add_argument(
        "-r",
        "--recursive",
        action="store_true",
        help="a folder's subfolders too; OUTDIR mirrors the tree",
    )
    p.add_argument(
        "--skip-existing",
        action="store_true",
        help="leave out an input whose output is already in OUTDIR",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    p.set_defaults(func=cmd_process)


def threads_shared(settings: Settings, jobs: int, files: int) -> Settings:
    """A redaction run's settings with each document's first-pass threads (``redact.pages``):
    a redaction is read whole in one process, so a run of fewer of them than ``jobs``
    processes reads their pages with the rest (at least ``PRESSROOM_REDACT_THREADS``)."""
    if files <= 0 or files >= jobs:
        return settings
    share = max(settings.redaction.page_threads, jobs // files)
    redaction = dataclasses.replace(settings.redaction, page_threads=share)
    return dataclasses.replace(settings, redaction=redaction)
