"""What every command shares: exit codes (``errors``' own), argument types, times as people
read them."""

from __future__ import annotations

import argparse

from pressroom.errors import EXIT_INTERNAL as EXIT_INTERNAL
from pressroom.errors import EXIT_INTERRUPTED as EXIT_INTERRUPTED
from pressroom.errors import EXIT_OK as EXIT_OK
from pressroom.errors import EXIT_TEMPORARY as EXIT_TEMPORARY
from pressroom.errors import EXIT_USAGE as EXIT_USAGE


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
