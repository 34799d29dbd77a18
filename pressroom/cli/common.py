"""What every command shares: exit codes, argument types, times as people read them."""

from __future__ import annotations

import argparse

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_TEMPORARY = 75  # try again later (sysexits EX_TEMPFAIL)
EXIT_INTERRUPTED = 130


def tenant_name(value: str) -> str:
    from pressroom.storage import TENANT_RE

    if not TENANT_RE.match(value):
        raise argparse.ArgumentTypeError(
            "a tenant name is 1-64 letters, digits, '.', '_' or '-', not starting with '.' '_' '-'"
        )
    return value


def when(epoch: float | None) -> str:
    import datetime as dt

    if epoch is None:
        return "-"
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
