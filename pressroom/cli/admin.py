"""An operator's commands on the shared database: the templates a tenant may use, keys,
customers, the schema.

Over 500 lines: the argparse declarations and printing of four command groups (templates, keys,
customers, schema), with no work of their own."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pressroom.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    tenant_name,
    when,
)
from pressroom.errors import PressroomError
from pressroom.settings import Settings

if TYPE_CHECKING:
    from pressroom.backup import Bundle, Copied


def cmd_templates(args: argparse.Namespace) -> int:
    from pressroom.templates import load_template, template_folders

    settings = Settings.from_env()
    folders = template_folders(settings.template_dirs)
    if getattr(args, "tenant", None):
        from pressroom.service import open_services

        allowed = _may_use(open_services(settings), args.tenant)
        if allowed is not None:
            folders = {k: v for k, v in folders.items() if k in allowed}
    for name, folder in folders.items():
        try:
            t = load_template(folder)
        except PressroomError as exc:
            print(f"{name:<12} {exc.one_line()}")
            continue
        cover = "cover" if t.cover else "no cover"
        print(f"{name:<12} {t.identity:<36} {cover}")
    return EXIT_OK


def cmd_templates_allow(args: argparse.Namespace) -> int:
    from pressroom.service import open_services
    from pressroom.templates import REGISTERED_NAME, template_folders

    settings = Settings.from_env()
    known = template_folders(settings.template_dirs)
    unknown = [n for n in args.names if not REGISTERED_NAME.match(n) or n not in known]
    if unknown:
        print(f"error: UNKNOWN_TEMPLATE: {', '.join(unknown)}", file=sys.stderr)
        return EXIT_USAGE
    services = open_services(settings)
    services.store.tenancy.allow_templates(args.tenant, list(args.names), now=services.clock())
    allowed = sorted(services.store.tenancy.allowed_templates(args.tenant) or ())
    print(f"tenant {args.tenant!r} may use: {', '.join(allowed)}")
    return EXIT_OK


def cmd_templates_disallow(args: argparse.Namespace) -> int:
    from pressroom.service import open_services

    if not args.all and not args.names:
        print("error: BAD_REQUEST: name templates, or --all to drop the list", file=sys.stderr)
        return EXIT_USAGE
    services = open_services(Settings.from_env())
    services.store.tenancy.disallow_templates(args.tenant, None if args.all else list(args.names))
    allowed = _may_use(services, args.tenant)
    if allowed is not None:
        print(f"tenant {args.tenant!r} may use: {', '.join(sorted(allowed))}")
    return EXIT_OK


def _may_use(services: Any, tenant: str) -> frozenset[str] | None:
    """The templates a tenant may use under the policy (None: every one), said in a line."""
    from pressroom.intake import Intake

    own = services.store.tenancy.allowed_templates(tenant)
    allowed: frozenset[str] | None = Intake.of(services).allowed_templates(tenant)
    if own is None and allowed is None:
        print(f"tenant {tenant!r} has no allow-list: every template is allowed")
    elif own is None:
        print(
            f"tenant {tenant!r} has no allow-list: the built-in templates only, as other "
            "tenants have lists (PRESSROOM_TEMPLATE_POLICY=builtin)"
        )
    return allowed


def expiry(value: str) -> float:
    """``--expires``: a duration from now (``90d``, ``12h``, ``30m``) or a UTC date/time
    (``2027-01-31``, ``2027-01-31T18:00:00Z``); returns an epoch time."""
    from pressroom.keys import parse_expiry

    try:
        return parse_expiry(value, now=time.time())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cmd_keys_create(args: argparse.Namespace) -> int:
    from pressroom.service import open_services

    services = open_services(Settings.from_env())
    role = "operator" if args.operator else args.role
    try:
        key_id, key = services.store.tenancy.new_key(
            args.tenant, now=services.clock(), role=role, expires_at=args.expires
        )
    except ValueError as exc:
        print(f"error: BAD_REQUEST: {exc}", file=sys.stderr)
        return EXIT_USAGE
    what = {"operator": "operator key", "reviewer": "reviewer key for tenant"}.get(
        role, "API key for tenant"
    )
    expiry = "" if args.expires is None else f", expires {when(args.expires)}"
    print(f"New {what} {args.tenant!r}{expiry} (shown once; it is stored hashed):")
    print(f"id: {key_id}")
    print(key)
    return EXIT_OK


def cmd_keys_list(args: argparse.Namespace) -> int:
    from pressroom.keys import key_status
    from pressroom.service import open_services

    services = open_services(Settings.from_env())
    now = services.clock()
    for row in services.store.tenancy.list_keys(args.tenant):
        status = key_status(row, now=now)
        if status == "revoked":
            status = f"revoked {when(row['revoked_at'])}"
        print(
            f"{row['id']}  tenant={row['tenant']}  role={row['role']}  "
            f"created={when(row['created_at'])}  last_used={when(row['last_used_at'])}  "
            f"expires={when(row['expires_at'])}  {status}"
        )
    return EXIT_OK


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    from pressroom.service import open_services

    services = open_services(Settings.from_env())
    key_id = services.store.tenancy.revoke_key(args.key, now=services.clock())
    if key_id is None:
        print("error: NOT_FOUND: no live key with that id or value", file=sys.stderr)
        return EXIT_USAGE
    print(f"revoked {key_id}")
    return EXIT_OK


def cmd_customers(args: argparse.Namespace) -> int:
    from pressroom.service import open_services

    services = open_services(Settings.from_env())
    status = {"create": "active", "activate": "active", "suspend": "suspended"}[
        args.customers_command
    ]
    services.store.tenancy.set_customer(args.tenant, args.id, status=status, now=services.clock())
    print(f"customer {status} for tenant {args.tenant!r}")
    return EXIT_OK


def cmd_tenants_weight(args: argparse.Namespace) -> int:
    from pressroom.jobs.claims import DEFAULT_WEIGHT
    from pressroom.service import open_services

    services = open_services(Settings.from_env())
    tenancy = services.store.tenancy
    if args.weight is not None:
        try:
            tenancy.set_weight(args.tenant, args.weight, now=services.clock())
        except ValueError as exc:
            print(f"error: BAD_REQUEST: {exc}", file=sys.stderr)
            return EXIT_USAGE
    weight = tenancy.weights().get(args.tenant, DEFAULT_WEIGHT)
    print(f"tenant {args.tenant!r} has weight {weight}")
    return EXIT_OK


def cmd_tenants_weights(_args: argparse.Namespace) -> int:
    from pressroom.service import open_services

    weights = open_services(Settings.from_env()).store.tenancy.weights()
    for tenant, weight in sorted(weights.items()):
        print(f"{tenant:<24} {weight}")
    if not weights:
        print("every tenant has the default weight 1")
    return EXIT_OK


def cmd_db_upgrade(_args: argparse.Namespace) -> int:
    from pressroom.service import open_services

    open_services(Settings.from_env(), migrate=True)
    print("database is at the latest schema")
    return EXIT_OK


class _Progress:
    """Pages copied, on one line of stderr, only when a person watches a big copy."""

    def __init__(self) -> None:
        self.shown = False
        self.live = sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        if self.live and total >= 25_600:  # 100 MiB at 4 KiB pages: worth a line
            print(f"\rcopied {done * 100 // total}% of {total} pages", end="", file=sys.stderr)
            self.shown = True

    def end(self) -> None:
        """Close the line (once), so what follows starts on its own."""
        if self.shown:
            print(file=sys.stderr)
            self.shown = False


def _copying(copy: Callable[[_Progress], Copied]) -> Copied | int:
    """A backup or restore with its progress line: what it copied, or the exit code of its
    one-line refusal."""
    progress = _Progress()
    try:
        return copy(progress)
    except PressroomError as exc:
        progress.end()
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    finally:
        progress.end()


def cmd_db_backup(args: argparse.Namespace) -> int:
    from pressroom.backup import backup, keep_also

    settings = Settings.from_env()
    copied = _copying(lambda progress: backup(settings, Path(args.dest), progress=progress))
    if isinstance(copied, int):
        return copied
    print(
        f"backed up {copied.size:,} bytes (schema {copied.revision}) to {args.dest} "
        f"in {copied.seconds:.2f} s"
    )
    print(
        f"Keep with it for a full restore: {keep_also(settings)} "
        "(`pressroom backup` takes them all in one step)"
    )
    return EXIT_OK


def cmd_db_restore(args: argparse.Namespace) -> int:
    from pressroom.backup import keep_also, restore

    settings = Settings.from_env()
    copied = _copying(
        lambda progress: restore(settings, Path(args.src), force=args.force, progress=progress)
    )
    if isinstance(copied, int):
        return copied
    upgraded = f", upgraded from schema {copied.upgraded_from}" if copied.upgraded_from else ""
    print(
        f"restored {copied.size:,} bytes (schema {copied.revision}{upgraded}) "
        f"in {copied.seconds:.2f} s"
    )
    print(f"A full restore also puts back: {keep_also(settings)}")
    return EXIT_OK


class _Bytes:
    """Bytes copied of a whole backup or restore: a rich bar on stderr while a person watches
    a big copy (a terminal, over 100 MiB), nothing otherwise. Names no file."""

    def __init__(self) -> None:
        self.live = sys.stderr.isatty()
        self._bar: Any = None
        self._task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not self.live or total < 100 << 20:
            return
        if self._bar is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                Progress,
                TimeRemainingColumn,
                TransferSpeedColumn,
            )

            self._bar = Progress(
                "copied",
                BarColumn(bar_width=24),
                DownloadColumn(),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                console=Console(file=sys.stderr),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("copy", total=total)
        self._bar.update(self._task, completed=done, total=total)

    def end(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _bundling(run: Callable[[_Bytes], Bundle]) -> Bundle | int:
    """A whole backup or restore with its progress bar: what it copied, or the exit code of
    its one-line refusal."""
    progress = _Bytes()
    try:
        return run(progress)
    except PressroomError as exc:
        progress.end()
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    finally:
        progress.end()


def _counted(bundle: Bundle) -> str:
    keys = f", keys: {', '.join(bundle.keys)}" if bundle.keys else ", no keys"
    return (
        f"{bundle.files} files, {bundle.size:,} bytes (schema {bundle.revision}; "
        f"{bundle.blobs} blobs{keys})"
    )


def cmd_backup(args: argparse.Namespace) -> int:
    from pressroom.backup import backup_all

    settings = Settings.from_env()
    dest = Path(args.dest)
    made = _bundling(
        lambda progress: backup_all(
            settings, dest, with_keys=args.with_keys, s3=args.s3, progress=progress
        )
    )
    if isinstance(made, int):
        return made
    print(f"backed up {_counted(made)} to {dest} in {made.seconds:.2f} s")
    if made.listed:
        print(
            f"The bucket's {made.listed} objects are listed in the manifest, not copied: keep "
            "the bucket (or back up with --s3)"
        )
    if not made.keys:
        print(
            "Keep the keys apart (or back up with --with-keys): the link-signing key, and the "
            "master key when encryption at rest is on"
        )
    return EXIT_OK


def cmd_restore(args: argparse.Namespace) -> int:
    from pressroom.backup import restore_all

    settings = Settings.from_env()
    put = _bundling(
        lambda progress: restore_all(settings, Path(args.src), force=args.force, progress=progress)
    )
    if isinstance(put, int):
        return put
    upgraded = f", upgraded from schema {put.upgraded_from}" if put.upgraded_from else ""
    print(
        f"restored {_counted(put)}{upgraded} into {settings.data_dir} in {put.seconds:.2f} s; "
        "every sum matched its manifest"
    )
    if put.kept_aside is not None:
        print(f"The data dir it replaced was moved to {put.kept_aside}")
    if put.listed:
        print(f"The bucket holds the {put.listed} objects the backup lists, at their sizes")
    if any(k.startswith("master") for k in put.keys):
        print(
            f"Master keys were restored into {settings.data_dir} (master.key, master-old-N.key): "
            "point PRESSROOM_MASTER_KEY_FILE (and PRESSROOM_MASTER_KEYS_OLD) at them, or move "
            "them to where the keys are kept"
        )
    if "signing.key" not in put.keys:
        print("Put back the link-signing key (signing.key or PRESSROOM_SIGNING_KEY) before serving")
    return EXIT_OK


def cmd_config_show(args: argparse.Namespace) -> int:
    from pressroom.effective import effective

    shown = effective()
    if args.json:
        print(json.dumps({"settings": [s.record() for s in shown]}, indent=2))
    else:
        for line in shown:
            print(line.line())
    return EXIT_OK


def add_templates(sub: Any) -> None:
    """templates (listed before the service's commands in --help)"""
    t = sub.add_parser("templates", help="list brand templates with their content-hash identity")
    t.add_argument("--tenant", type=tenant_name, help="only the templates this tenant may use")
    t.set_defaults(func=cmd_templates)
    tsub = t.add_subparsers(dest="templates_command")
    ta = tsub.add_parser(
        "allow",
        help="let a tenant use these templates (tenants with no list: PRESSROOM_TEMPLATE_POLICY)",
    )
    ta.add_argument("--tenant", required=True, type=tenant_name)
    ta.add_argument("names", nargs="+", metavar="NAME")
    ta.set_defaults(func=cmd_templates_allow)
    td = tsub.add_parser("disallow", help="take templates off a tenant's allow-list")
    td.add_argument("--tenant", required=True, type=tenant_name)
    td.add_argument("names", nargs="*", metavar="NAME")
    td.add_argument("--all", action="store_true", help="drop the list: every template allowed")
    td.set_defaults(func=cmd_templates_disallow)


def add_backup(sub: Any) -> None:
    """backup and restore: everything, in one step"""
    b = sub.add_parser(
        "backup",
        help="the database (online), the blob store's files and, with --with-keys, the keys, "
        "with a manifest of SHA-256 sums, into one new folder (or a .tar)",
    )
    b.add_argument("dest", metavar="DEST", help="a new folder, or a new file ending in .tar")
    b.add_argument(
        "--with-keys",
        action="store_true",
        help="take the link-signing key, the default API key and the master keys too (0600)",
    )
    b.add_argument(
        "--s3",
        action="store_true",
        help="with an S3 store, copy the bucket's objects too (else they are only listed)",
    )
    b.set_defaults(func=cmd_backup)
    r = sub.add_parser(
        "restore",
        help="put a `pressroom backup` back into a fresh data dir; every file's sum is checked "
        "first (a mismatch refuses it: UNTRUSTED_BACKUP, nothing written)",
    )
    r.add_argument("src", metavar="SRC", help="a folder or .tar that `pressroom backup` wrote")
    r.add_argument(
        "--force",
        action="store_true",
        help="restore over a data dir that is not empty: it is moved aside, never deleted "
        "(refused while any process has its database open)",
    )
    r.set_defaults(func=cmd_restore)


def add_commands(sub: Any) -> None:
    """keys, customers, tenants, db, backup, restore, config"""
    keys = sub.add_parser("keys", help="API keys; data keys' re-wrap").add_subparsers(
        dest="keys_command", required=True
    )
    kc = keys.add_parser("create", help="create a key for a tenant; prints it on the last line")
    kc.add_argument(
        "--tenant", required=True, type=tenant_name, help="the tenant (for --operator: a label)"
    )
    kc.add_argument(
        "--operator",
        action="store_true",
        help="an operator key: redrive jobs, manage customers, /metrics and /dashboard",
    )
    kc.add_argument(
        "--role",
        choices=["tenant", "reviewer", "operator"],
        default="tenant",
        help="tenant (the default): everything a tenant does; reviewer: the tenant's review "
        "desk and review API only (GET /v1/review, held copies, review sheets, corrections, "
        "approve, reject); operator: as --operator",
    )
    kc.add_argument(
        "--expires",
        type=expiry,
        help="when the key stops working: 90d, 12h, 30m, or a UTC date/time (2027-01-31)",
    )
    kc.set_defaults(func=cmd_keys_create)
    kl = keys.add_parser("list", help="one key per line, id first (never the secret)")
    kl.add_argument("--tenant", type=tenant_name, help="only this tenant's keys")
    kl.set_defaults(func=cmd_keys_list)
    kr = keys.add_parser("revoke", help="revoke a key by id or by the key itself, at once")
    kr.add_argument("key", metavar="ID_OR_KEY")
    kr.set_defaults(func=cmd_keys_revoke)
    from pressroom.cli.rewrap import add_rewrap

    add_rewrap(keys)  # data keys under the current key-encryption key

    customers = sub.add_parser("customers", help="a tenant's customer registry").add_subparsers(
        dest="customers_command", required=True
    )
    for name, text in (
        ("create", "register an active customer"),
        ("suspend", "suspend a customer: its jobs are rejected UNAUTHORIZED_CUSTOMER"),
        ("activate", "make a suspended customer active again"),
    ):
        cc = customers.add_parser(name, help=text)
        cc.add_argument("--tenant", required=True, type=tenant_name)
        cc.add_argument("id", help="the customer id jobs name in their `customer` field")
        cc.set_defaults(func=cmd_customers)

    tenants = sub.add_parser(
        "tenants", help="tenants' weights in fair claiming between tenants"
    ).add_subparsers(dest="tenants_command", required=True)
    tw = tenants.add_parser(
        "weight",
        help="show or set a tenant's weight: while tenants have work waiting, one of weight N "
        "is given N times the pages of one of weight 1 (default 1)",
    )
    tw.add_argument("tenant", type=tenant_name)
    tw.add_argument("weight", type=int, nargs="?", help="1 to 1000; 1 is the default")
    tw.set_defaults(func=cmd_tenants_weight)
    tenants.add_parser("weights", help="every tenant whose weight is not 1").set_defaults(
        func=cmd_tenants_weights
    )

    db = sub.add_parser("db", help="database schema").add_subparsers(
        dest="db_command", required=True
    )
    db.add_parser("upgrade", help="migrate to the latest schema").set_defaults(func=cmd_db_upgrade)
    dbb = db.add_parser(
        "backup",
        help="copy the SQLite database to a new file while the service runs (online backup)",
    )
    dbb.add_argument("dest", metavar="DEST", help="the new file (never replaced if it exists)")
    dbb.set_defaults(func=cmd_db_backup)
    dbr = db.add_parser(
        "restore",
        help="make the SQLite database a copy of a backup (an older schema is upgraded; "
        "schema objects its revision does not make are refused: UNTRUSTED_BACKUP)",
    )
    dbr.add_argument("src", metavar="SRC", help="a regular file `db backup` wrote")
    dbr.add_argument(
        "--force",
        action="store_true",
        help="replace an existing database (refused while any process has it open)",
    )
    dbr.set_defaults(func=cmd_db_restore)
    add_backup(sub)

    config = sub.add_parser("config", help="the effective settings").add_subparsers(
        dest="config_command", required=True
    )
    cs = config.add_parser(
        "show", help="every setting, its value and where it came from; secrets masked"
    )
    cs.add_argument("--json", action="store_true", help="one JSON document, for machines")
    cs.set_defaults(func=cmd_config_show)
