"""`pressroom submit`: files sent to a running service through the HTTP client."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pressroom.settings import Settings


def cmd_submit(args: argparse.Namespace) -> int:
    from pressroom.client import SubmitOptions, find_key, run_submit

    settings = Settings.from_env()
    key = find_key(args.key, settings)
    if key is None:
        print(
            "UNAUTHORIZED: no API key: pass --key, set PRESSROOM_API_KEY, or run serve once "
            "to create one",
            file=sys.stderr,
        )
        return 2
    opts = SubmitOptions(
        url=(args.url or settings.server_url).rstrip("/"),
        key=key,
        template=args.template,
        title=args.title,
        lane=args.lane,
        redact=args.redact,
        keep_pixels=args.keep_pixels,
        wait=args.wait or args.output is not None,
        outdir=args.output,
    )
    return run_submit(list(args.files), opts)


def add_commands(sub: Any) -> None:
    """submit"""
    sm = sub.add_parser("submit", help="send files to a running service")
    sm.add_argument("files", nargs="+", type=Path, metavar="FILE")
    sm.add_argument(
        "--url", default=None, help="the service (default: PRESSROOM_URL or http://127.0.0.1:8080)"
    )
    sm.add_argument(
        "--key",
        default=None,
        help="API key (default: PRESSROOM_API_KEY or the data dir's api-key file)",
    )
    sm.add_argument("--template", default=None)
    sm.add_argument("--title", default=None)
    sm.add_argument("--lane", choices=["bulk", "interactive"], default=None)
    sm.add_argument(
        "--redact",
        default=None,
        metavar="CLASSES",
        help="comma list of name, address, account-number",
    )
    sm.add_argument(
        "--keep-pixels",
        action="store_true",
        help="keep each scan's pixels as they are: skewed pages are not levelled (the text "
        "layer is laid level either way)",
    )
    sm.add_argument("--wait", action="store_true", help="follow each job to its end")
    sm.add_argument(
        "-o", "--output", type=Path, default=None, help="download results here (implies --wait)"
    )
    sm.set_defaults(func=cmd_submit)
