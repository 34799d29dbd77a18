"""`pressroom review OUTDIR/review`: the reviewer's desk over an offline review folder, served
to this machine only, behind a one-time sign-in link."""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import os
import secrets
import socket
import sys
from pathlib import Path
from typing import Any

from pressroom.cli.common import EXIT_OK, EXIT_USAGE
from pressroom.settings import Settings


def loopback(host: str) -> str | None:
    """``host`` as an address to bind when it is this machine's loopback, else None."""
    if host.strip().lower() == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host.strip().strip("[]"))
    except ValueError:
        return None
    return str(address) if address.is_loopback else None


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, bound before the link is printed so the link has the real port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(64)
    except BaseException:
        sock.close()
        raise
    return sock


def sign_in_url(host: str, port: int, token: str) -> str:
    where = f"[{host}]" if ":" in host else host
    return f"http://{where}:{port}/review/sign-in?token={token}"


def cmd_review(args: argparse.Namespace) -> int:
    from pressroom.desk.folder import FolderDesk

    host = loopback(args.host)
    if host is None:
        print(
            f"error: the review desk serves this machine only; --host must be a loopback "
            f"address (127.0.0.1, ::1 or localhost), not {args.host!r}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    if not 0 <= args.port <= 65535:
        print("error: --port must be 0 to 65535 (0: any free port)", file=sys.stderr)
        return EXIT_USAGE
    folder: Path = args.folder
    if not folder.is_dir():
        print(
            "error: no such folder; give the review folder `pressroom process` made "
            "(OUTDIR/review)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    settings = Settings.from_env()
    os.umask(0o077)
    desk = FolderDesk(folder.resolve(), settings)
    unlisted = desk.unlisted()
    if unlisted:
        print(
            f"note: {unlisted} held document(s) cannot be shown: their names hold characters "
            "other than letters, digits, spaces, '.', '_' and '-'; rename the .pdf and its "
            ".findings.json alike",
            file=sys.stderr,
        )
    if not desk.stems():
        inner = FolderDesk(folder / "review", settings)
        hint = " (its review/ folder does: give that)" if inner.stems() else ""
        print(f"Nothing to review: the folder holds no held copy{hint}.")
        return EXIT_OK
    try:
        sock = bind(host, args.port)
    except OSError as exc:
        print(f"error: cannot listen on {host} port {args.port}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    with sock:
        return _serve(desk, sock, host, settings)


def _serve(desk: Any, sock: socket.socket, host: str, settings: Settings) -> int:
    import uvicorn

    from pressroom.cli.service import server_config
    from pressroom.desk.config import DeskConfig
    from pressroom.desk.gate import OneTimeGate
    from pressroom.desk.routes import desk_app

    token = secrets.token_urlsafe(32)
    gate = OneTimeGate(token)
    app = desk_app(
        DeskConfig(
            desk,
            gate,
            secret=secrets.token_bytes(32),
            templates=settings.desk_templates or None,
        )
    )
    port = sock.getsockname()[1]
    server = uvicorn.Server(server_config(app, host, port, settings))
    print(f"Review desk: {sign_in_url(host, port, token)}", flush=True)
    print("The link signs in once, from this machine. Ctrl-C stops it.", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])
    return EXIT_OK


def add_commands(sub: Any) -> None:
    """review"""
    r = sub.add_parser(
        "review",
        help="the reviewer's desk in a browser, over an offline review folder (OUTDIR/review)",
    )
    r.add_argument(
        "folder",
        type=Path,
        metavar="FOLDER",
        help="the review folder `process --redact` filled (OUTDIR/review)",
    )
    r.add_argument(
        "--host",
        default="127.0.0.1",
        help="loopback address to listen on: 127.0.0.1 (default), ::1 or localhost",
    )
    r.add_argument("--port", type=int, default=0, help="the port (default 0: any free port)")
    r.set_defaults(func=cmd_review)
