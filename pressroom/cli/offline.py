"""`pressroom process` and `pressroom detect`, the commands: arguments parsed, lines printed.
The work is the offline use case's (``pressroom.offline``)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pressroom.cli.common import (
    EXIT_INTERNAL,
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

            run = Run(
                template,
                args.title,
                policy,
                args.keep_pixels,
                settings,
                args.template,
                args.review == "always",
                choice,
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


def cmd_detect(args: argparse.Namespace) -> int:
    """Findings without redacting: one JSON line each, from files or (``--jsonl``) from text."""
    import json

    from pressroom.redact.policy import CLASSES, parse_policy

    settings = Settings.from_env()
    try:
        policy = parse_policy(args.redact or ",".join(CLASSES), now=time.time())
        if policy.empty:
            policy = parse_policy(",".join(CLASSES), now=time.time())
    except PressroomError as exc:
        print(exc.one_line(), file=sys.stderr)
        return exc.exit_code
    if args.jsonl:
        if args.inputs:
            print("usage: pressroom detect --jsonl reads stdin; give no INPUT", file=sys.stderr)
            return 2
        return _detect_jsonl(policy.classes, json, settings)
    if not args.inputs:
        print("usage: pressroom detect [--redact CLASSES] INPUT... (or --jsonl)", file=sys.stderr)
        return 2
    from pressroom.engines.tesseract import TesseractEngine
    from pressroom.pipeline.core import JobOptions
    from pressroom.redact.engine import detect_document
    from pressroom.templates import resolve_template

    engine = TesseractEngine(languages=settings.languages, tessdata_prefix=settings.tessdata_prefix)
    options = JobOptions(
        template=resolve_template(None, settings.template_dirs),
        limits=settings.limits,
        redaction=settings.redaction,
        ocr=args.ocr,
    )
    from pressroom.cli.progress import Board
    from pressroom.redact.findings import crowded_pages

    cap = settings.limits.max_page_findings

    code = EXIT_OK
    with Board(sys.stderr.isatty(), files=len(args.inputs)) as board:
        for path in args.inputs:

            def scanned(_done: int, steps: int, path: Path = path) -> None:
                # a redaction's scan pass alone: its steps are half a redaction's
                board.step(path, path.name, steps // 2)

            warned: list[PressroomError] = []  # what a redaction would be held or refused for
            try:
                if not path.is_file():
                    raise FileNotFoundError
                found = detect_document(
                    path, policy, engine, options, progress=scanned, warnings=warned
                )
            except FileNotFoundError:
                print(f"NOT_FOUND: {escaped(str(path))}: no such file", file=sys.stderr)
                code = max(code, 2)
                continue
            except PressroomError as exc:
                print(f"{exc.code}: {escaped(path.name)}: {exc.message}", file=sys.stderr)
                code = max(code, exc.exit_code)
                continue
            except Exception as exc:  # a bug: one line, never a traceback, and go on
                name = escaped(path.name)
                print(f"INTERNAL_ERROR: {name}: {type(exc).__name__}", file=sys.stderr)
                code = max(code, EXIT_INTERNAL)
                continue
            finally:
                board.end(path)
            # a page past the cap is printed up to it, and said once: a redaction holds it
            # TOO_MANY_FINDINGS; the dry run reports, it does not fail
            crowded = crowded_pages(found, cap)
            printed: dict[int, int] = {}
            for f in found:
                printed[f.page] = printed.get(f.page, 0) + 1
                if printed[f.page] > cap:
                    continue
                line = {"file": str(path), **f.as_json(values=not args.no_values)}
                print(json.dumps(line, ensure_ascii=False), flush=False)
            sys.stdout.flush()
            for page, n in crowded.items():
                print(
                    f"TOO_MANY_FINDINGS: {escaped(path.name)}: page {page}: {n:,} findings, the "
                    f"first {cap:,} printed (PRESSROOM_MAX_PAGE_FINDINGS); a redaction of it "
                    "is held for a person",
                    file=sys.stderr,
                )
            for warning in warned:  # said, never the exit code: the dry run reports
                print(f"{warning.code}: {escaped(path.name)}: {warning.message}", file=sys.stderr)
    return code


def _detect_jsonl(classes: Sequence[str], json: Any, settings: Settings) -> int:
    """Exactly one output line per input line, in order; each line is its own document. A line
    that cannot be read (not UTF-8, not a JSON object with a string "text", a lone surrogate)
    is answered with an "error" and no findings, the run goes on, and the exit code says so."""
    from decimal import Decimal

    from pressroom.redact.detect.detector import Detector

    detector = Detector.for_classes(classes, settings.redaction)
    stdin = open(sys.stdin.fileno(), "rb", closefd=False)  # noqa: SIM115
    out = open(sys.stdout.fileno(), "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    bad = 0

    def refuse(_name: str) -> Any:
        raise ValueError("not JSON")  # NaN, Infinity: no JSON number

    for raw in stdin:
        item: Any = None
        try:
            line = raw.decode("utf-8")
            item = json.loads(line, parse_float=Decimal, parse_constant=refuse)
            text = item["text"]
            if not isinstance(text, str):
                raise TypeError
            text.encode("utf-8")  # a lone surrogate cannot be read, nor written back
            findings = [
                {
                    "class": f.kind,
                    "start": f.start,
                    "end": f.end,
                    "value": text[f.start : f.end],
                    "score": round(f.score, 3),
                    **({"doubt": True} if f.doubt else {}),
                }
                for f in detector.find_all(text)
            ]
            answer = {"id": item.get("id"), "findings": findings}
        except (ValueError, KeyError, TypeError, AttributeError, UnicodeError):
            bad += 1
            ident = item.get("id") if isinstance(item, dict) else None
            answer = {"id": ident, "findings": [], "error": "BAD_INPUT"}
        out.write(_json_line(answer, json) + "\n")
        out.flush()
    if bad:
        print(
            f"BAD_INPUT: {bad} line(s) were not a JSON object with a string text", file=sys.stderr
        )
        return 2
    return EXIT_OK


def _json_line(value: Any, json: Any) -> str:
    """JSON with numbers as they came in: an id of 1.10 goes back as 1.10, not 1.1."""
    from decimal import Decimal

    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(
                f"{json.dumps(k, ensure_ascii=False)}: {_json_line(v, json)}"
                for k, v in value.items()
            )
            + "}"
        )
    if isinstance(value, list):
        return "[" + ", ".join(_json_line(v, json) for v in value) + "]"
    dumped = str(json.dumps(value, ensure_ascii=False))
    try:
        dumped.encode("utf-8")
    except UnicodeError:  # a lone surrogate in an id: escaped, as JSON allows
        dumped = str(json.dumps(value))
    return dumped


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


def add_commands(sub: Any) -> None:
    """process, detect"""
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

    d = sub.add_parser(
        "detect",
        help="what redaction would find, without redacting: one JSON line per finding",
    )
    d.add_argument("inputs", nargs="*", type=Path, metavar="INPUT")
    d.add_argument(
        "--redact",
        default=None,
        metavar="CLASSES",
        help="comma list of name, address, account-number (default: all three)",
    )
    d.add_argument(
        "--jsonl",
        action="store_true",
        help='read {"id","text"} JSON lines on stdin; write {"id","findings"} lines',
    )
    d.add_argument("--no-values", action="store_true", help="leave the values out")
    d.add_argument(
        "--ocr",
        choices=list(OCR_MODES),
        default="skip",
        help="read pages as a job with this --ocr reads them (the source's own text is "
        "read in every mode)",
    )
    d.set_defaults(func=cmd_detect)
