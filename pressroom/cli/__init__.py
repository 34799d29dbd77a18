"""The ``pressroom`` command: one module per family of commands, assembled here."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from pressroom import __version__
from pressroom.cli import admin, desk, detect, process, remote, service, storage, watch
from pressroom.cli.common import EXIT_OK
from pressroom.errors import BadConfig, PressroomError

EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pressroom", description="Scans in, searchable branded PDFs out."
    )
    parser.add_argument("--version", action="version", version=f"pressroom {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    process.add_commands(sub)
    detect.add_commands(sub)
    watch.add_commands(sub)
    admin.add_templates(sub)
    service.add_commands(sub)
    admin.add_commands(sub)
    storage.add_commands(sub)
    remote.add_commands(sub)
    desk.add_commands(sub)
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
    # one mode rule for every command: whatever it creates (the data dir, the database, blobs,
    # outputs) is the user's alone, whichever command runs first on a fresh data dir
    os.umask(0o077)
    parser = build_parser()
    args = parser.parse_args(args_list)
    try:
        code: int = args.func(args)
    except BadConfig as exc:  # a setting out of range: say which, no traceback
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    except PressroomError as exc:  # one no command caught (a database down at start): a line
        print(exc.one_line(), file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:  # `pressroom config show | head`: the reader left, as it may
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    return code
