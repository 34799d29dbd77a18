"""`pressroom submit` and `pressroom jobs`: a running service, through the HTTP client."""

from __future__ import annotations

import argparse
import sys
from itertools import islice
from pathlib import Path
from typing import Any

from pressroom.cli.common import when
from pressroom.settings import Settings

NO_KEY = (
    "UNAUTHORIZED: no API key: pass --key, set PRESSROOM_API_KEY, or run serve once to create one"
)


def _target(args: argparse.Namespace) -> tuple[str, str] | None:
    """The service's URL and the key to use, from the flags, the environment or the data dir."""
    from pressroom.client import find_key

    settings = Settings.from_env()
    key = find_key(args.key, settings)
    if key is None:
        print(NO_KEY, file=sys.stderr)
        return None
    return (args.url or settings.server_url).rstrip("/"), key


def cmd_submit(args: argparse.Namespace) -> int:
    from pressroom.client import SubmitOptions, run_submit

    target = _target(args)
    if target is None:
        return 2
    url, key = target
    opts = SubmitOptions(
        url=url,
        key=key,
        template=args.template,
        title=args.title,
        lane=args.lane,
        redact=args.redact,
        keep_pixels=args.keep_pixels,
        review=args.review,
        wait=args.wait or args.output is not None,
        outdir=args.output,
        output_type=args.output_type,
        sidecar=args.sidecar,
        allow_no_text=args.allow_no_text,
        optimize=args.optimize,
        label=args.label,
        send_names=not args.no_label,
        languages=args.language,
        ocr=args.ocr,
        webhook_url=args.webhook_url,
        deadline=args.deadline,
        customer=args.customer,
        idempotency_key=args.idempotency_key,
    )
    return run_submit(list(args.files), opts)


def _refused(exc: Any) -> int:
    from pressroom.client import EXIT_TEMPORARY

    print(f"{exc.code}: {exc.detail}", file=sys.stderr)
    return EXIT_TEMPORARY if exc.temporary else 2


def _jobs_row(
    job_id: str, state: str, lane: str, created: str, pages: object, reason: str, label: str
) -> str:
    """One line of ``jobs list``, its header's too, so the names stand over their columns
    (a job id is a UUID, 36 characters; a time 20)."""
    return f"{job_id:<36}  {state:<9} {lane:<11} {created:<20}  {pages!s:>5}  {reason:<20}  {label}"


JOBS_HEADER = _jobs_row("ID", "STATE", "LANE", "CREATED", "PAGES", "REASON", "LABEL")


def cmd_jobs_list(args: argparse.Namespace) -> int:
    """A header naming the columns, then one line per job, newest first: id, state, lane,
    created, pages, reason, label."""
    from pressroom.client import ApiError, PressroomClient

    target = _target(args)
    if target is None:
        return 2
    try:
        with PressroomClient(*target) as client:
            found = client.list(
                state=args.state,
                lane=args.lane,
                label=args.label,
                page_size=min(args.limit, 500),
            )
            header = False
            for job in islice(found, args.limit):
                if not header:  # after the first page came back: a refusal prints no header
                    print(JOBS_HEADER)
                    header = True
                label = job.data.get("label")
                print(
                    _jobs_row(
                        job.id,
                        job.state,
                        job.lane,
                        when(job.created_at),
                        job.pages if job.pages is not None else "-",
                        job.reason or "-",
                        _printable(label) if label else "-",
                    )
                )
            if not header:
                print(JOBS_HEADER)
    except ApiError as exc:
        return _refused(exc)
    return 0


def _printable(text: str) -> str:
    """A label as one terminal line: controls (which a terminal would obey) shown escaped."""
    from pressroom.fsutil import escaped

    return escaped(text)


def cmd_jobs_cancel(args: argparse.Namespace) -> int:
    from pressroom.client import ApiError, PressroomClient

    target = _target(args)
    if target is None:
        return 2
    try:
        with PressroomClient(*target) as client:
            job = client.cancel(args.job_id)
    except ApiError as exc:
        return _refused(exc)
    if job.terminal:
        print(f"{job.id}: {job.state} {job.reason}")
    else:
        print(f"{job.id}: cancel requested; it stops before its next page")
    return 0


def _connection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url", default=None, help="the service (default: PRESSROOM_URL or http://127.0.0.1:8080)"
    )
    parser.add_argument(
        "--key",
        default=None,
        help="API key (default: PRESSROOM_API_KEY or the data dir's api-key file)",
    )


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("a whole number of at least 1")
    return number


def add_commands(sub: Any) -> None:
    """submit, jobs"""
    sm = sub.add_parser("submit", help="send files to a running service")
    sm.add_argument(
        "files", nargs="+", type=Path, metavar="FILE", help="PDFs or images to send, in order"
    )
    _connection(sm)
    sm.add_argument(
        "--template", default=None, help="a registered template's name (default: plain)"
    )
    sm.add_argument("--title", default=None, help="the output PDF's title")
    named = sm.add_mutually_exclusive_group()
    named.add_argument(
        "--label",
        default=None,
        metavar="TEXT",
        help="the job's label (a case number, say; at most 200 characters), shown on the desk "
        "and in `jobs list` and used as the download's file name; {name} stands for the "
        "file's name (default: each file's name for a plain job, none with --redact: a file "
        "is often named after the person in it; --label '{name}' sends it anyway)",
    )
    named.add_argument(
        "--no-label",
        action="store_true",
        help="send no label: the service never learns the file's name",
    )
    sm.add_argument(
        "--lane",
        choices=["bulk", "interactive"],
        default=None,
        help="bulk (the default) or interactive: a single urgent job that must not wait "
        "behind a bulk drop",
    )
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
    sm.add_argument(
        "--output-type",
        choices=["pdf", "pdfa"],
        default=None,
        help="pdfa: PDF/A-2b for archiving (default: the template's, else pdf)",
    )
    sm.add_argument(
        "--sidecar",
        action="store_true",
        default=None,
        help="also make the text layer as plain text; with -o it is saved as NAME.txt",
    )
    sm.add_argument(
        "--allow-no-text",
        action="store_true",
        help="deliver a document in which no page yields text instead of refusing it",
    )
    sm.add_argument(
        "--optimize",
        type=int,
        choices=[0, 1, 2],
        default=0,
        help="smaller output, losslessly (see pressroom process --optimize)",
    )
    sm.add_argument(
        "-l",
        "--language",
        metavar="LANGS",
        help="OCR languages, Tesseract codes joined with '+' (eng+deu); the service refuses "
        "one its workers lack. Default: the template's, else the service's setting",
    )
    sm.add_argument(
        "--ocr",
        choices=["skip", "redo", "force"],
        default="skip",
        help="PDF pages that carry text: skip keeps their text (default), redo replaces an "
        "earlier OCR layer, force renders and reads every page (see pressroom process --ocr)",
    )
    sm.add_argument(
        "--review",
        choices=["doubt", "always"],
        default=None,
        help="with --redact: send the output to the review desk only when its checks doubt it "
        "(default) or always",
    )
    sm.add_argument(
        "--webhook-url",
        default=None,
        metavar="URL",
        help="the service POSTs the job's end here, signed (see docs/service.md, Webhooks)",
    )
    sm.add_argument(
        "--deadline",
        type=float,
        default=None,
        metavar="SECONDS",
        help="the job must end within this many seconds of acceptance, or it is refused "
        "DEADLINE_EXCEEDED (default: the lane's)",
    )
    sm.add_argument(
        "--customer",
        default=None,
        metavar="ID",
        help="the customer the document is for, checked with the identity verifier when one "
        "is set up",
    )
    sm.add_argument(
        "--idempotency-key",
        default=None,
        metavar="KEY",
        help="send again safely: the same key and file answer the job already accepted; with "
        "several files, file N is sent as KEY:N",
    )
    sm.add_argument("--wait", action="store_true", help="follow each job to its end")
    sm.add_argument(
        "-o", "--output", type=Path, default=None, help="download results here (implies --wait)"
    )
    sm.set_defaults(func=cmd_submit)

    jobs = sub.add_parser("jobs", help="your jobs on a running service").add_subparsers(
        dest="jobs_command", required=True
    )
    jl = jobs.add_parser("list", help="one job per line, newest first")
    jl.add_argument(
        "--state",
        choices=["accepted", "running", "retrying", "complete", "rejected", "review"],
        default=None,
    )
    jl.add_argument("--lane", choices=["bulk", "interactive"], default=None)
    jl.add_argument("--label", default=None, metavar="TEXT", help="only jobs with this label")
    jl.add_argument(
        "--limit", type=_positive, default=50, metavar="N", help="at most N jobs (default 50)"
    )
    _connection(jl)
    jl.set_defaults(func=cmd_jobs_list)
    jc = jobs.add_parser("cancel", help="cancel a job that has not finished (or is in review)")
    jc.add_argument("job_id", metavar="JOB_ID")
    _connection(jc)
    jc.set_defaults(func=cmd_jobs_cancel)
