"""The ``pressroom`` command: offline processing now, the service's commands as they arrive."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from pressroom import __version__
from pressroom.errors import PressroomError
from pressroom.settings import Settings

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INTERRUPTED = 130


class ProgressBar:
    """A one-line progress bar on a terminal; silent when stderr is not one."""

    def __init__(self, label: str, stream: TextIO, enabled: bool) -> None:
        self.label = label
        self.stream = stream
        self.enabled = enabled
        self.start = time.monotonic()
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        width = 28
        filled = round(width * done / total)
        elapsed = time.monotonic() - self.start
        eta = elapsed / done * (total - done) if done else 0.0
        self.stream.write(
            f"\r{self.label[:32]:<32} [{'#' * filled}{'.' * (width - filled)}] "
            f"{done}/{total} pages  {elapsed:5.1f}s  eta {eta:5.1f}s"
        )
        self.stream.flush()
        self.drawn = True

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()


def _publish(built: Path, dest: Path) -> None:
    """Move a finished file into place atomically: readers see all of it or nothing."""
    fd, tmp_name = tempfile.mkstemp(prefix=".pressroom-", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, built.open("rb") as src:
            shutil.copyfileobj(src, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        tmp.chmod(0o644)
        tmp.replace(dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _output_names(inputs: Sequence[Path]) -> list[str]:
    names: list[str] = []
    for path in inputs:
        name = path.stem + ".pdf"
        if name in names:
            name = path.name + ".pdf"
        names.append(name)
    return names


def cmd_process(args: argparse.Namespace) -> int:
    from pressroom.engines.tesseract import TesseractEngine
    from pressroom.pipeline.runner import JobOptions, process_document
    from pressroom.scratch import job_scratch
    from pressroom.templates import resolve_template

    settings = Settings.from_env()
    os.umask(0o077)
    try:
        template = resolve_template(args.template, settings.template_dirs)
    except PressroomError as exc:
        print(exc.one_line(), file=sys.stderr)
        return exc.exit_code
    outdir: Path = args.output
    outdir.mkdir(parents=True, exist_ok=True)
    engine = TesseractEngine(languages=settings.languages)
    worst = EXIT_OK
    delivered = 0
    pages = 0
    started = time.monotonic()
    show = sys.stderr.isatty() and not args.quiet
    for path, name in zip(args.inputs, _output_names(args.inputs), strict=True):
        if not path.is_file():
            print(f"NOT_FOUND: {path}: no such file", file=sys.stderr)
            worst = max(worst, 2)
            continue
        bar = ProgressBar(path.name, sys.stderr, show)
        t0 = time.monotonic()
        try:
            with job_scratch(settings.scratch_dir) as scratch:
                built = scratch / "output.pdf"
                options = JobOptions(template=template, title=args.title, limits=settings.limits)
                result = process_document(path, built, options, engine, progress=bar)
                _publish(built, outdir / name)
        except PressroomError as exc:
            bar.clear()
            print(f"{exc.code}: {path.name}: {exc.message}", file=sys.stderr)
            worst = max(worst, exc.exit_code)
            continue
        except KeyboardInterrupt:
            bar.clear()
            print("INTERRUPTED: stopped; no partial output was left", file=sys.stderr)
            return EXIT_INTERRUPTED
        except Exception as exc:  # a bug: one line, never a traceback, and go on
            bar.clear()
            print(f"INTERNAL_ERROR: {path.name}: {type(exc).__name__}", file=sys.stderr)
            worst = max(worst, EXIT_INTERNAL)
            continue
        bar.clear()
        delivered += 1
        pages += result.pages
        if not args.quiet:
            turned = sum(1 for r in result.rotations if r)
            print(
                f"ok  {outdir / name}  {result.pages} page(s): {result.ocr_pages} OCR, "
                f"{result.kept_pages} kept text"
                + (f", {turned} turned upright" if turned else "")
                + f"  {time.monotonic() - t0:.1f}s"
            )
    if not args.quiet and len(args.inputs) > 1:
        print(
            f"{delivered}/{len(args.inputs)} delivered, {pages} pages in "
            f"{time.monotonic() - started:.1f}s -> {outdir}"
        )
    return worst


def cmd_templates(args: argparse.Namespace) -> int:
    from pressroom.templates import load_template, template_folders

    settings = Settings.from_env()
    for name, folder in template_folders(settings.template_dirs).items():
        try:
            t = load_template(folder)
        except PressroomError as exc:
            print(f"{name:<12} {exc.one_line()}")
            continue
        cover = "cover" if t.cover else "no cover"
        print(f"{name:<12} {t.identity:<36} {cover}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pressroom", description="Scans in, searchable branded PDFs out."
    )
    parser.add_argument("--version", action="version", version=f"pressroom {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("process", help="process files offline, without the service")
    p.add_argument(
        "inputs",
        nargs="+",
        type=Path,
        metavar="INPUT",
        help="PDF, PNG, JPEG or TIFF files (type decided by content)",
    )
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="OUTDIR",
        help="folder for the output PDFs (created if missing)",
    )
    p.add_argument(
        "--template", default=None, help="brand template name or folder (default: plain)"
    )
    p.add_argument("--title", default=None, help="the document title used by the template")
    p.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    p.set_defaults(func=cmd_process)

    t = sub.add_parser("templates", help="list brand templates with their content-hash identity")
    t.set_defaults(func=cmd_templates)

    sub.add_parser(
        "bench",
        help="throughput benchmark: pages/min/core and CER beside OCRmyPDF (see bench/README.md)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["bench"]:  # the benchmark parses its own options, --help included
        from pressroom.bench import main as bench_main

        bench_main(args_list[1:])
        return EXIT_OK
    parser = build_parser()
    args = parser.parse_args(args_list)
    code: int = args.func(args)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
