"""`pressroom detect`: what redaction would find, without redacting — one JSON line per
finding, from files or (``--jsonl``) from text lines."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pressroom.cli.common import (
    EXIT_INTERNAL,
    EXIT_OK,
)
from pressroom.errors import PressroomError
from pressroom.fsutil import escaped
from pressroom.models import OCR_MODES
from pressroom.settings import Settings

if TYPE_CHECKING:
    pass


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
    from pressroom.offline.process import scanned_copy
    from pressroom.pipeline.core import JobOptions
    from pressroom.redact.engine import detect_document
    from pressroom.scratch import job_scratch
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
                with job_scratch(settings.scratch_dir) as scratch:
                    # scanned first, as `process` scans: the copy scanned is what is read
                    source = scanned_copy(path, scratch, settings, args.scan)
                    found = detect_document(
                        source, policy, engine, options, progress=scanned, warnings=warned
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


def add_commands(sub: Any) -> None:
    """detect"""
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
    d.add_argument(
        "--scan",
        action="store_true",
        default=None,
        help="read each input through the malware scanner (clamd at PRESSROOM_CLAMD_ADDRESS) "
        "first, as process --scan does; on by itself when PRESSROOM_SCANNER=clamd",
    )
    d.set_defaults(func=cmd_detect)
