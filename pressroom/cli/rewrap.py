"""``pressroom keys rewrap``: argparse and printing only (the work is ``pressroom.rewrap``)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from pressroom.cli.common import EXIT_OK, EXIT_TEMPORARY, EXIT_USAGE
from pressroom.errors import PressroomError
from pressroom.settings import Settings


class _Progress:
    """How far the run is, on stderr: every 100 items, and once at the end of each kind."""

    def __init__(self) -> None:
        self.last: tuple[str, int] | None = None

    def __call__(self, what: str, done: int) -> None:
        self.last = (what, done)
        if done % 100 == 0:
            print(f"rewrap: {done} {what} seen", file=sys.stderr, flush=True)


def cmd_keys_rewrap(_args: argparse.Namespace) -> int:
    from pressroom.rewrap import rewrap
    from pressroom.service import open_services

    services = open_services(Settings.from_env())
    progress = _Progress()
    try:
        found = rewrap(services, progress)
    except PressroomError as exc:
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    finally:
        services.store.db.engine.dispose()
    for what, counts in found.items():
        shown = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items()))
        print(f"{what}: {sum(counts.values())} ({shown or 'none'})")
    refused = found["blobs"]["refused"] + found["values"]["refused"]
    unreadable = found["blobs"]["unreadable"] + found["values"]["unreadable"]
    if refused or unreadable:
        print(
            f"error: {refused} items whose key the KMS refused (KMS_KEY_REFUSED: list the "
            "older key in PRESSROOM_KMS_KEYS_OLD, grant kms:Decrypt on it and run again), "
            f"{unreadable} unreadable (no configured key opens them, or their header is not "
            "well formed)",
            file=sys.stderr,
        )
    if found["blobs"]["format1"]:
        print(
            f"{found['blobs']['format1']} blobs are in format 1 (their wrapped key is bound into "
            "every segment): they stay readable with their master key until retention removes "
            "them; keep that key in PRESSROOM_MASTER_KEYS_OLD until then",
            file=sys.stderr,
        )
    if found["blobs"]["plain"]:
        print(
            f"{found['blobs']['plain']} blobs are not sealed by Pressroom (stored before "
            "encryption was turned on): left as they are; the service cannot read them "
            "(STORAGE_INTEGRITY) until retention removes them",
            file=sys.stderr,
        )
    # unreadable: a configuration or data problem to look at (2); refused only: try again
    # once the key is granted (75)
    if unreadable:
        return EXIT_USAGE
    return EXIT_TEMPORARY if refused else EXIT_OK


def add_rewrap(keys: Any) -> None:
    """``rewrap`` under the ``keys`` command group."""
    kw = keys.add_parser(
        "rewrap",
        help="re-wrap every blob's and sealed value's data key under the current key-encryption "
        "key (PRESSROOM_KMS_KEY_ID, else the master key); nothing is re-encrypted; idempotent",
    )
    kw.set_defaults(func=cmd_keys_rewrap)
