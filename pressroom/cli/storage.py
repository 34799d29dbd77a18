"""``pressroom storage lifecycle --show|--apply``: the bucket's lifecycle rules from the
retention settings (``pressroom/lifecycle.py`` makes them), printed or written."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from pressroom.cli.common import EXIT_OK, EXIT_USAGE
from pressroom.settings import Settings

if TYPE_CHECKING:
    from pressroom.lifecycle import Plan

KNOWN = ("Expiration", "AbortIncompleteMultipartUpload")


def _line(rule: dict[str, Any]) -> str:
    """One rule as a person reads it: ID, prefix, what it does."""
    from pressroom.lifecycle import rule_prefix

    what = []
    if "Expiration" in rule:
        what.append(f"expire after {rule['Expiration'].get('Days', '?')} days")
    if "AbortIncompleteMultipartUpload" in rule:
        after = rule["AbortIncompleteMultipartUpload"].get("DaysAfterInitiation", "?")
        what.append(f"abort incomplete multipart uploads after {after} day(s)")
    others = sorted(set(rule) - {"ID", "Status", "Filter", "Prefix", *KNOWN})
    if others:  # a foreign rule's other actions (transitions, noncurrent versions): named
        what.append("also " + ", ".join(others))
    status = "" if rule.get("Status") == "Enabled" else f" [{rule.get('Status')}]"
    where = rule_prefix(rule) or "(whole bucket)"
    return f"  {rule.get('ID', '?')}  {where}  {'; '.join(what) or '-'}{status}"


def cmd_lifecycle(args: argparse.Namespace) -> int:
    from pressroom.lifecycle import plan
    from pressroom.storage.s3 import make_client

    if args.force and not args.apply:
        print("error: --force goes with --apply", file=sys.stderr)
        return EXIT_USAGE
    settings = Settings.from_env()
    wanted = plan(settings)
    client = make_client(timeout_s=settings.storage_timeout_s)
    return _apply(client, wanted, force=args.force) if args.apply else _show(client, wanted)


def _where(wanted: Plan) -> str:
    return f"s3://{wanted.bucket}" + (f"/{wanted.store_prefix}" if wanted.store_prefix else "")


def _foreign(wanted: Plan, found: dict[str, Any]) -> str:
    """A foreign rule's line, marked when S3 applies it to Pressroom's keys too."""
    covers = ", covers Pressroom's keys" if wanted.covers_ours(found) else ""
    return f"{_line(found)}  (foreign: not Pressroom's{covers})"


def _covering(wanted: Plan, foreign: tuple[dict[str, Any], ...]) -> list[str]:
    """The foreign rules on Pressroom's keys, as ``--show`` prints them."""
    return [_foreign(wanted, found) for found in foreign if wanted.covers_ours(found)]


def _apply(client: Any, wanted: Plan, *, force: bool) -> int:
    from pressroom.lifecycle import apply

    before, written = apply(client, wanted, force=force)
    if not written:
        print(f"unchanged: {_where(wanted)} already has these rules ({len(wanted.rules)})")
    else:
        for rule in wanted.wanted():
            print(_line(rule))
        kept = f", {len(before.foreign)} foreign kept" if before.foreign else ""
        print(f"applied: {len(wanted.rules)} rules to {_where(wanted)}{kept}")
    for warning in _covering(wanted, before.foreign):
        # kept as they were, and S3 acts on whichever rule expires an object first:
        # Pressroom cannot vouch for these
        print(f"warning: {warning.strip()}", file=sys.stderr)
    return EXIT_OK


def _show(client: Any, wanted: Plan) -> int:
    from pressroom.lifecycle import read_bucket

    now = read_bucket(client, wanted)
    print(f"wanted by the settings, for {_where(wanted)}:")
    for rule in wanted.rules:
        print(f"{_line(rule.as_s3(wanted.store_prefix))}  ({rule.why})")
    print("on the bucket now:")
    if not now.ours and not now.foreign:
        print("  (no lifecycle rules)")
    for found in now.ours:
        print(_line(found))
    for found in now.foreign:
        print(_foreign(wanted, found))
        clash = wanted.overlap(found)
        if clash:
            print(f"    LIFECYCLE_OVERLAP: --apply refuses: {clash}")
    if now.matches(wanted):
        print("lifecycle: in place")
    else:
        print("lifecycle: differs (run `pressroom storage lifecycle --apply`)")
    return EXIT_OK


def add_commands(sub: Any) -> None:
    storage = sub.add_parser("storage", help="the blob store: `lifecycle` rules").add_subparsers(
        dest="storage_command", required=True
    )
    lc = storage.add_parser(
        "lifecycle",
        help="the bucket's lifecycle rules from the retention settings (S3 only)",
    )
    which = lc.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--show", action="store_true", help="print the rules wanted and those on the bucket"
    )
    which.add_argument("--apply", action="store_true", help="write the rules to the bucket")
    lc.add_argument(
        "--force",
        action="store_true",
        help="with --apply: write even when the bucket has rules this store did not make "
        "(they are written back beside ours, unchanged; never over rules sharing our keys)",
    )
    lc.set_defaults(func=cmd_lifecycle)
