"""`pressroom serve` and `pressroom worker`: the long-running processes, and uvicorn's settings."""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import os
import signal
import threading
from typing import Any

from pressroom import __version__
from pressroom.cli.common import (
    EXIT_OK,
)
from pressroom.settings import Settings


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(0)


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from pressroom.api.app import create_app
    from pressroom.jobs.model import Lane
    from pressroom.jobs.retention import start_housekeeping
    from pressroom.logs import configure_logging
    from pressroom.notify.config import DeliveryConfig
    from pressroom.notify.pool import DeliveryPool
    from pressroom.service import ensure_default_key, housekeeper, open_services
    from pressroom.worker.pool import Supervisor

    settings = Settings.from_env()  # first: a bad value is one line, before anything starts
    refuse_an_unguarded_tls_front(settings)
    configure_logging()
    from pressroom import tracing

    tracing.configure(settings=settings.tracing)
    os.umask(0o077)
    services = open_services(settings)
    # also with --workers 0
    webhooks = DeliveryPool(services, DeliveryConfig.from_settings(settings.webhooks))
    from pressroom.scratch import sweep_stale

    settings.scratch_dir.mkdir(parents=True, exist_ok=True)
    sweep_stale(settings.scratch_dir)  # uploads cut off when an earlier serve was killed
    key_path = ensure_default_key(services)
    if key_path is not None:
        print(f"API key for tenant 'default': {key_path} (pressroom submit reads it from there)")
    bulk = args.workers if args.workers is not None else max(1, (os.cpu_count() or 2) - 1)
    supervisor = None
    if bulk > 0:
        supervisor = Supervisor(settings, {Lane.BULK: bulk, Lane.INTERACTIVE: args.interactive})
        supervisor.start()
    housekeeping = start_housekeeping(housekeeper(services))
    webhooks.start()
    print(
        f"Pressroom {__version__} on http://{args.host}:{args.port} "
        f"(workers: {bulk} bulk, {args.interactive if bulk else 0} interactive; "
        f"docs at /docs)",
        flush=True,
    )
    # uvicorn re-raises the SIGTERM it caught once it has shut down; turned into SystemExit, it
    # unwinds through the finally below, so the workers are stopped instead of orphaned.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    server = uvicorn.Server(server_config(create_app(services), args.host, args.port, settings))
    try:
        server.run()
    finally:
        housekeeping.set()
        webhooks.stop()
        if supervisor is not None:
            supervisor.stop(settings.stop_timeout_s)
    return EXIT_OK


def cmd_worker(args: argparse.Namespace) -> int:
    from pressroom.jobs.model import Lane
    from pressroom.notify.config import DeliveryConfig
    from pressroom.notify.pool import DeliveryPool
    from pressroom.service import open_services
    from pressroom.worker.pool import Supervisor

    settings = Settings.from_env()
    webhooks = DeliveryPool(
        open_services(settings, migrate=False), DeliveryConfig.from_settings(settings.webhooks)
    )
    supervisor = Supervisor(settings, {Lane(args.lane): args.concurrency})
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    supervisor.start()
    webhooks.start()
    print(
        f"{args.concurrency} {args.lane} worker(s) running; Ctrl-C or SIGTERM stops them",
        flush=True,
    )
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait()
    webhooks.stop()
    supervisor.stop(settings.stop_timeout_s)
    return EXIT_OK


def server_config(app: Any, host: str, port: int, settings: Settings) -> Any:
    """uvicorn's settings for ``serve``. Proxy headers are believed only from the proxies the
    operator names (``PRESSROOM_TRUSTED_PROXIES``), never by default: uvicorn would otherwise
    take X-Forwarded-For from any local peer (or from anyone, with FORWARDED_ALLOW_IPS=*) as
    the client's address, and a forged one would open what is open to loopback."""
    import uvicorn

    from pressroom.api.server import guarded_protocol

    trusted = ",".join(settings.trusted_proxies)
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        # deadlines on what the server waits for: headers, an unread body, a body being read
        http=guarded_protocol(
            settings.header_timeout_s, settings.upload_deadline_s + settings.header_timeout_s
        ),
        timeout_keep_alive=5,
        log_level="warning",
        access_log=False,
        proxy_headers=bool(trusted),
        forwarded_allow_ips=trusted or "",
    )


def add_commands(sub: Any) -> None:
    """serve, worker"""
    sv = sub.add_parser("serve", help="the HTTP API plus worker pools for both lanes")
    sv.add_argument("--host", default="127.0.0.1")
    sv.add_argument("--port", type=int, default=8080)
    sv.add_argument(
        "--workers",
        type=int,
        default=None,
        help="bulk worker processes (default: cores - 1; 0 runs the API alone)",
    )
    sv.add_argument("--interactive", type=int, default=1, help="interactive worker processes")
    sv.set_defaults(func=cmd_serve)

    wk = sub.add_parser("worker", help="a worker pool on its own (for another host)")
    wk.add_argument("--lane", choices=["bulk", "interactive"], default="bulk")
    wk.add_argument("--concurrency", type=int, default=1)
    wk.set_defaults(func=cmd_worker)


def refuse_an_unguarded_tls_front(settings: Settings) -> None:
    """A public https URL on a host other than this one means a proxy ends TLS in front: with
    no trusted proxy named, every request would look like plain http from that proxy (desk
    cookies without ``Secure``, loopback-only pages open to it). Refused whatever ``serve``
    binds."""
    from urllib.parse import urlsplit

    from pressroom.errors import BadConfig

    url = urlsplit(settings.public_url)
    if url.scheme != "https" or settings.trusted_proxies:
        return
    host = (url.hostname or "").strip("[]")
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        raise BadConfig(
            "PRESSROOM_PUBLIC_URL is https on another host, so a proxy ends TLS in front: set "
            "PRESSROOM_TRUSTED_PROXIES to its address"
        )
