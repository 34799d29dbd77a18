"""`pressroom serve` and `pressroom worker`: the long-running processes, and uvicorn's settings."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import ipaddress
import os
import signal
import socket
import sys
import threading
from typing import Any

from pressroom import __version__
from pressroom.cli.common import EXIT_INTERNAL, EXIT_OK
from pressroom.settings import Settings

EXIT_UNHEALTHY = 1  # `worker --check`: Docker's HEALTHCHECK reads 1 as unhealthy


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(0)


def lanes_to_run(workers: int | None, interactive: int | None, cores: int) -> tuple[int, int]:
    """(bulk, interactive) worker processes for ``serve``. ``--workers 0`` alone is the API
    alone; an ``--interactive`` given explicitly is run whatever ``--workers`` says."""
    bulk = workers if workers is not None else max(1, cores - 1)
    if interactive is None:
        interactive = 1 if bulk > 0 else 0
    return bulk, interactive


def banner(
    host: str, port: int, bulk: int, interactive: int, *, docs: bool = True, adaptive: bool = False
) -> str:
    """The one line that says what this ``serve`` runs."""
    shown = f"[{host}]" if ":" in host else host
    if bulk == interactive == 0:
        runs = "the API alone, no workers: jobs wait for `pressroom worker` processes"
    else:
        runs = f"workers: {bulk} bulk, {interactive} interactive"
        if adaptive:
            runs += " to start, adaptive"
    if docs:
        runs += "; docs at /docs"
    return f"Pressroom {__version__} on http://{shown}:{port} ({runs})"


def listen(host: str, port: int) -> socket.socket:
    """The API's socket, bound and listening before anything else starts (as uvicorn would
    bind it): a busy port or a host that is not this machine's is one line and exit 2, with no
    worker, thread or banner started first."""
    from pressroom.errors import BadConfig

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OverflowError:
        sock.close()
        raise BadConfig(f"--port {port} is not a port number (0-65535)") from None
    except OSError as exc:
        sock.close()
        shown = f"[{host}]" if ":" in host else host
        if exc.errno == errno.EADDRINUSE:
            why = "the port is in use by another process (another `pressroom serve`?)"
        elif exc.errno == errno.EACCES:
            why = "permission denied (ports below 1024 need privileges)"
        elif exc.errno == errno.EADDRNOTAVAIL:
            why = "the address is not one of this machine's"
        else:
            why = exc.strerror or type(exc).__name__
        raise BadConfig(f"cannot listen on {shown}:{port}: {why}") from None
    return sock


def own_url(host: str, port: int) -> str:
    """Where this ``serve`` answers, for links it hands out with no request to build them on
    (webhooks): the address it listens on, or this machine's name for a wildcard."""
    if host in ("", "0.0.0.0", "::"):
        host = socket.getfqdn()
    elif ":" in host:
        host = f"[{host}]"  # an IPv6 literal
    return f"http://{host}:{port}"


def cmd_serve(args: argparse.Namespace) -> int:
    settings = Settings.from_env()  # first: a bad value is one line, before anything starts
    refuse_an_unguarded_tls_front(settings)
    bulk, interactive = lanes_to_run(args.workers, args.interactive, os.cpu_count() or 2)
    sock = listen(args.host, args.port)
    try:
        return _serve(args, settings, sock, bulk, interactive)
    finally:
        sock.close()


def _serve(
    args: argparse.Namespace, settings: Settings, sock: socket.socket, bulk: int, interactive: int
) -> int:
    import uvicorn

    from pressroom.app import create_app
    from pressroom.housekeeping import start_housekeeping
    from pressroom.jobs.model import Lane
    from pressroom.logs import configure_logging, log_format
    from pressroom.notify.config import DeliveryConfig
    from pressroom.notify.pool import DeliveryPool
    from pressroom.service import ensure_default_key, housekeeper, open_services
    from pressroom.worker import heartbeat
    from pressroom.worker.pool import Supervisor

    fmt = log_format(args.log_format or settings.log_format)
    configure_logging(fmt=fmt)
    # the workers this process starts log in the same format (their settings are these)
    settings = dataclasses.replace(settings, log_format=fmt)
    from pressroom import tracing

    tracing.configure(settings=settings.tracing)
    os.umask(0o077)
    services = open_services(settings)
    # also with --workers 0; a complete job's webhook links to this service unless
    # PRESSROOM_PUBLIC_URL says where clients reach it
    webhooks = DeliveryPool(
        services,
        DeliveryConfig.from_settings(settings.webhooks),
        base_url=own_url(args.host, sock.getsockname()[1]),
    )
    from pressroom.scratch import sweep_stale

    settings.scratch_dir.mkdir(parents=True, exist_ok=True)
    sweep_stale(settings.scratch_dir)  # uploads cut off when an earlier serve was killed
    key_path = ensure_default_key(services)
    if key_path is not None:
        print(f"API key for tenant 'default': {key_path} (pressroom submit reads it from there)")
    pools = {lane: n for lane, n in ((Lane.BULK, bulk), (Lane.INTERACTIVE, interactive)) if n}
    supervisor = None
    if pools:
        supervisor = Supervisor(settings, pools, heartbeat_dir=heartbeat.folder(settings.data_dir))
        supervisor.start()
    housekeeping = start_housekeeping(housekeeper(services))
    webhooks.start()
    port = sock.getsockname()[1]
    # adaptive pools start clamped between their floor and ceiling: the counts really started
    started = supervisor.sizes() if supervisor is not None else {}
    print(
        banner(
            args.host,
            port,
            started.get(Lane.BULK.value, bulk),
            started.get(Lane.INTERACTIVE.value, interactive),
            docs=settings.api_docs,
            adaptive=supervisor is not None and bool(supervisor.controllers),
        ),
        flush=True,
    )
    # uvicorn re-raises the SIGTERM it caught once it has shut down; turned into SystemExit, it
    # unwinds through the finally below, so the workers are stopped instead of orphaned.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    server = uvicorn.Server(server_config(create_app(services), args.host, args.port, settings))
    try:
        server.run(sockets=[sock])
    except SystemExit as exc:
        if server.started or exc.code in (0, None):
            raise
        # the app's own start-up failed (uvicorn said why above): not "held for review" (3)
        print("INTERNAL_ERROR: the API did not start", file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        housekeeping.set()
        if supervisor is not None:  # first: systemd's SIGTERM also reached the workers
            supervisor.halt()
        webhooks.stop()
        if supervisor is not None:
            supervisor.stop(settings.stop_timeout_s)
    return EXIT_OK


def cmd_worker(args: argparse.Namespace) -> int:
    if args.check:
        return check_worker(args.lane)
    from pressroom.jobs.model import Lane
    from pressroom.notify.config import DeliveryConfig
    from pressroom.notify.pool import DeliveryPool
    from pressroom.service import open_services
    from pressroom.worker import heartbeat
    from pressroom.worker.pool import Supervisor

    settings = Settings.from_env()
    lane = args.lane or Lane.BULK.value
    from pressroom.logs import configure_logging, log_format

    # the supervisor's own lines (a worker restarted, a pool resized) as its workers log theirs
    configure_logging(fmt=log_format(settings.log_format))
    webhooks = DeliveryPool(
        open_services(settings, migrate=False), DeliveryConfig.from_settings(settings.webhooks)
    )
    supervisor = Supervisor(
        settings,
        {Lane(lane): args.concurrency},
        heartbeat_dir=heartbeat.folder(settings.data_dir),
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    supervisor.start()
    webhooks.start()
    adaptive = "".join(
        f" (adaptive: {c.floor}-{c.ceiling})" for c in supervisor.controllers.values()
    )
    print(
        f"{sum(supervisor.sizes().values())} {lane} worker(s) running{adaptive}; Ctrl-C or "
        "SIGTERM stops them",
        flush=True,
    )
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait()
    supervisor.halt()  # first: systemd's SIGTERM also reached the workers
    webhooks.stop()
    supervisor.stop(settings.stop_timeout_s)
    return EXIT_OK


def check_worker(lane: str | None) -> int:
    """``worker --check``: a container's health check. Reads the heartbeat files the pools of
    this host write into the data dir; no network, no database. Exit 0 with a line saying what
    runs, else exit 1 (Docker's "unhealthy"; 2 is reserved there) with one line saying why."""
    import time

    from pressroom.errors import BadConfig
    from pressroom.worker import heartbeat

    try:
        settings = Settings.from_env()
    except BadConfig as exc:  # unhealthy all the same: the pool could not start with these
        print(exc.one_line(), file=sys.stderr)
        return EXIT_UNHEALTHY
    beats = heartbeat.read(heartbeat.folder(settings.data_dir), socket.gethostname())
    verdict = heartbeat.judge(beats, now=time.time(), lane=lane)
    if verdict.healthy:
        print(verdict.line)
        return EXIT_OK
    print(f"UNAVAILABLE: {verdict.line}", file=sys.stderr)
    return EXIT_UNHEALTHY


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
    sv.add_argument("--port", type=_count, default=8080)
    sv.add_argument(
        "--workers",
        type=_count,
        default=None,
        help="bulk worker processes (default: cores - 1; 0 with no --interactive runs the API "
        "alone)",
    )
    sv.add_argument(
        "--interactive",
        type=_count,
        default=None,
        help="interactive worker processes (default: 1, or 0 with --workers 0)",
    )
    sv.add_argument(
        "--log-format",
        choices=["auto", "json", "human"],  # logs.LOG_FORMATS; imported when serve runs
        default=None,
        help="the log on stderr, of serve and its workers: human lines (failed requests "
        "only), JSON lines (every request), or auto: human on a terminal, JSON otherwise "
        "(default: PRESSROOM_LOG_FORMAT, else auto)",
    )
    sv.set_defaults(func=cmd_serve)

    wk = sub.add_parser("worker", help="a worker pool on its own (for another host)")
    wk.add_argument(
        "--lane",
        choices=["bulk", "interactive"],
        default=None,
        help="the lane to work (default bulk); with --check, the lane to check (default any)",
    )
    wk.add_argument("--concurrency", type=_positive, default=1)
    wk.add_argument(
        "--check",
        action="store_true",
        help="health check: exit 0 when a worker pool of this host is alive and its heartbeat "
        "fresh, else 1 with one line",
    )
    wk.set_defaults(func=cmd_worker)


def _count(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {number}")
    return number


def _positive(value: str) -> int:
    number = _count(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be 1 or more")
    return number


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
