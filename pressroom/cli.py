"""The ``pressroom`` command: offline processing now, the service's commands as they arrive."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pressroom import __version__
from pressroom.errors import BadConfig, PressroomError, ReviewRequired
from pressroom.fsutil import staged_copy
from pressroom.settings import Settings

if TYPE_CHECKING:
    from pressroom.redact.policy import RedactionPolicy
    from pressroom.templates import Template

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class ProgressBar:
    """A one-line progress bar on a terminal; silent when stderr is not one."""

    def __init__(self, label: str, stream: TextIO, enabled: bool) -> None:
        self.label = label
        self.stream = stream
        self.enabled = enabled
        self.start = time.monotonic()
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        width = 28
        filled = round(width * done / total)
        elapsed = time.monotonic() - self.start
        eta = elapsed / done * (total - done) if done else 0.0
        self.stream.write(
            f"\r{self.label[:32]:<32} [{'#' * filled}{'.' * (width - filled)}] "
            f"{done}/{total} pages  {elapsed:5.1f}s  eta {eta:5.1f}s"
        )
        self.stream.flush()
        self.drawn = True

    def clear(self) -> None:
        if self.drawn:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()


def _publish(built: Path, dest: Path) -> None:
    """Move a finished file into place atomically: readers see all of it or nothing."""
    tmp = staged_copy(built, dest.parent, ".pressroom-")
    try:
        tmp.chmod(0o644)
        tmp.replace(dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _hold_for_review(built: Path, dest: Path, exc: ReviewRequired) -> Path:
    """The held copy and what detection found, in OUTDIR/review/ (0700, files 0600), so a
    person can judge it: nothing is delivered beside the other outputs."""
    import json

    folder = dest.parent / "review"
    folder.mkdir(mode=0o700, exist_ok=True)
    folder.chmod(0o700)
    report = {
        "code": exc.code,
        "reason": exc.message,
        "source": dest.stem,
        "held_copy": dest.name if built.is_file() else None,
        "findings": [f.as_json() for f in exc.findings],
    }
    if built.is_file():
        copy = staged_copy(built, folder, ".pressroom-")
        copy.chmod(0o600)
        copy.replace(folder / dest.name)
    note = folder / f"{dest.stem}.findings.json"
    tmp = folder / f".pressroom-{dest.stem}.findings.json"
    with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
        json.dump(report, out, indent=2, ensure_ascii=False)
    tmp.replace(note)
    return folder


def _output_names(inputs: Sequence[Path]) -> list[str]:
    names: list[str] = []
    for path in inputs:
        name = path.stem + ".pdf"
        if name in names:
            name = path.name + ".pdf"
        names.append(name)
    return names


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one input: crosses process boundaries, so plain values only."""

    exit_code: int
    line: str  # for stdout when delivered, stderr otherwise
    pages: int = 0


_ENGINE: Any = None  # one Tesseract per process, reused for every file it processes


def process_one(
    path: Path,
    dest: Path,
    template: Template,
    title: str | None,
    progress: bool = False,
    policy: RedactionPolicy | None = None,
    keep_pixels: bool = False,
    settings: Settings | None = None,
) -> Outcome:
    """Process one input into ``dest``; every failure becomes a one-line Outcome. ``settings``:
    the command's, read once (None: read here)."""
    global _ENGINE
    from pressroom.engines.tesseract import TesseractEngine
    from pressroom.pipeline.core import JobOptions
    from pressroom.pipeline.variants import Processing
    from pressroom.scratch import job_scratch

    settings = Settings.from_env() if settings is None else settings
    if not path.is_file():
        return Outcome(2, f"NOT_FOUND: {path}: no such file")
    if _ENGINE is None:
        _ENGINE = TesseractEngine(
            languages=settings.languages, tessdata_prefix=settings.tessdata_prefix
        )
    bar = ProgressBar(path.name, sys.stderr, progress)
    t0 = time.monotonic()
    try:
        with job_scratch(settings.scratch_dir) as scratch:
            built = scratch / "output.pdf"
            options = JobOptions(
                template=template,
                title=title,
                limits=settings.limits,
                keep_pixels=keep_pixels,
                redaction=settings.redaction,
            )
            processing = Processing(policy)
            try:
                result = processing(path, built, options, _ENGINE, progress=bar)
            except ReviewRequired as exc:
                if not processing.holds_output:
                    raise
                held = _hold_for_review(built, dest, exc)
                return Outcome(
                    exc.exit_code, f"{exc.code}: {path.name}: {exc.message} (held: {held})"
                )
            _publish(built, dest)
    except PressroomError as exc:
        return Outcome(exc.exit_code, f"{exc.code}: {path.name}: {exc.message}")
    except Exception as exc:  # a bug: one line, never a traceback, and go on
        return Outcome(EXIT_INTERNAL, f"INTERNAL_ERROR: {path.name}: {type(exc).__name__}")
    finally:
        bar.clear()
    turned = sum(1 for r in result.rotations if r)
    return Outcome(
        EXIT_OK,
        f"ok  {dest}  {result.pages} page(s): {result.ocr_pages} OCR, {result.kept_pages} kept text"
        + (f", {turned} turned upright" if turned else "")
        + (f", {result.levelled_pages} levelled" if result.levelled_pages else "")
        + f"  {time.monotonic() - t0:.1f}s",
        result.pages,
    )


def _report(outcome: Outcome, quiet: bool) -> None:
    if outcome.exit_code != EXIT_OK:
        print(outcome.line, file=sys.stderr)
    elif not quiet:
        print(outcome.line)


def cmd_process(args: argparse.Namespace) -> int:
    from pressroom.redact.detect.checks import check_policy_classes
    from pressroom.redact.policy import parse_policy
    from pressroom.templates import resolve_template

    settings = Settings.from_env()
    os.umask(0o077)
    try:
        template = resolve_template(args.template, settings.template_dirs)
        policy = parse_policy(args.redact, now=time.time())
        if not policy.empty:
            check_policy_classes(policy.classes, settings.redaction)
    except PressroomError as exc:
        print(exc.one_line(), file=sys.stderr)
        return exc.exit_code
    outdir: Path = args.output
    outdir.mkdir(parents=True, exist_ok=True)
    work = [
        (path, outdir / name)
        for path, name in zip(args.inputs, _output_names(args.inputs), strict=True)
    ]
    started = time.monotonic()
    outcomes: list[Outcome] = []
    try:
        if args.jobs <= 1 or len(work) == 1:
            show = sys.stderr.isatty() and not args.quiet
            for path, dest in work:
                outcomes.append(
                    process_one(
                        path, dest, template, args.title, show, policy, args.keep_pixels, settings
                    )
                )
                _report(outcomes[-1], args.quiet)
        else:
            with ProcessPoolExecutor(max_workers=args.jobs) as pool:
                futures = [
                    pool.submit(
                        process_one,
                        path,
                        dest,
                        template,
                        args.title,
                        False,
                        policy,
                        args.keep_pixels,
                        settings,
                    )
                    for path, dest in work
                ]
                for future in as_completed(futures):
                    outcomes.append(future.result())
                    _report(outcomes[-1], args.quiet)
    except KeyboardInterrupt:
        print("INTERRUPTED: stopped; no partial output was left", file=sys.stderr)
        return EXIT_INTERRUPTED
    if not args.quiet and len(work) > 1:
        delivered = sum(1 for o in outcomes if o.exit_code == EXIT_OK)
        print(
            f"{delivered}/{len(work)} delivered, {sum(o.pages for o in outcomes)} pages in "
            f"{time.monotonic() - started:.1f}s -> {outdir}"
        )
    return max((o.exit_code for o in outcomes), default=EXIT_OK)


def cmd_detect(args: argparse.Namespace) -> int:
    """Findings without redacting: one JSON line each, from files or (``--jsonl``) from text."""
    import json

    from pressroom.redact.policy import CLASSES, parse_policy

    settings = Settings.from_env()
    try:
        policy = parse_policy(args.redact or ",".join(CLASSES), now=time.time())
        if policy.empty:
            policy = parse_policy(",".join(CLASSES), now=time.time())
    except PressroomError as exc:
        print(exc.one_line(), file=sys.stderr)
        return exc.exit_code
    if args.jsonl:
        if args.inputs:
            print("usage: pressroom detect --jsonl reads stdin; give no INPUT", file=sys.stderr)
            return 2
        return _detect_jsonl(policy.classes, json, settings)
    if not args.inputs:
        print("usage: pressroom detect [--redact CLASSES] INPUT... (or --jsonl)", file=sys.stderr)
        return 2
    from pressroom.engines.tesseract import TesseractEngine
    from pressroom.pipeline.core import JobOptions
    from pressroom.redact.engine import detect_document
    from pressroom.templates import resolve_template

    engine = TesseractEngine(languages=settings.languages, tessdata_prefix=settings.tessdata_prefix)
    options = JobOptions(
        template=resolve_template(None, settings.template_dirs),
        limits=settings.limits,
        redaction=settings.redaction,
    )
    code = EXIT_OK
    for path in args.inputs:
        bar = ProgressBar(path.name, sys.stderr, sys.stderr.isatty())
        try:
            if not path.is_file():
                raise FileNotFoundError
            found = detect_document(path, policy, engine, options, progress=bar)
        except FileNotFoundError:
            print(f"NOT_FOUND: {path}: no such file", file=sys.stderr)
            code = max(code, 2)
            continue
        except PressroomError as exc:
            print(f"{exc.code}: {path.name}: {exc.message}", file=sys.stderr)
            code = max(code, exc.exit_code)
            continue
        finally:
            bar.clear()
        for f in found:
            line = {"file": str(path), **f.as_json(values=not args.no_values)}
            print(json.dumps(line, ensure_ascii=False), flush=False)
        sys.stdout.flush()
    return code


def _detect_jsonl(classes: Sequence[str], json: Any, settings: Settings) -> int:
    """Exactly one output line per input line, in order; each line is its own document. A line
    that cannot be read (not UTF-8, not a JSON object with a string "text", a lone surrogate)
    is answered with an "error" and no findings, the run goes on, and the exit code says so."""
    from decimal import Decimal

    from pressroom.redact.detect.detector import Detector

    detector = Detector.for_classes(classes, settings.redaction)
    stdin = open(sys.stdin.fileno(), "rb", closefd=False)  # noqa: SIM115
    out = open(sys.stdout.fileno(), "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    bad = 0

    def refuse(_name: str) -> Any:
        raise ValueError("not JSON")  # NaN, Infinity: no JSON number

    for raw in stdin:
        item: Any = None
        try:
            line = raw.decode("utf-8")
            item = json.loads(line, parse_float=Decimal, parse_constant=refuse)
            text = item["text"]
            if not isinstance(text, str):
                raise TypeError
            text.encode("utf-8")  # a lone surrogate cannot be read, nor written back
            findings = [
                {"class": f.kind, "start": f.start, "end": f.end, "value": text[f.start : f.end]}
                for f in detector.find_all(text)
            ]
            answer = {"id": item.get("id"), "findings": findings}
        except (ValueError, KeyError, TypeError, AttributeError, UnicodeError):
            bad += 1
            ident = item.get("id") if isinstance(item, dict) else None
            answer = {"id": ident, "findings": [], "error": "BAD_INPUT"}
        out.write(_json_line(answer, json) + "\n")
        out.flush()
    if bad:
        print(
            f"BAD_INPUT: {bad} line(s) were not a JSON object with a string text", file=sys.stderr
        )
        return 2
    return EXIT_OK


def _json_line(value: Any, json: Any) -> str:
    """JSON with numbers as they came in: an id of 1.10 goes back as 1.10, not 1.1."""
    from decimal import Decimal

    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(
                f"{json.dumps(k, ensure_ascii=False)}: {_json_line(v, json)}"
                for k, v in value.items()
            )
            + "}"
        )
    if isinstance(value, list):
        return "[" + ", ".join(_json_line(v, json) for v in value) + "]"
    dumped = str(json.dumps(value, ensure_ascii=False))
    try:
        dumped.encode("utf-8")
    except UnicodeError:  # a lone surrogate in an id: escaped, as JSON allows
        dumped = str(json.dumps(value))
    return dumped


def cmd_templates(args: argparse.Namespace) -> int:
    from pressroom.templates import load_template, template_folders

    settings = Settings.from_env()
    folders = template_folders(settings.template_dirs)
    if getattr(args, "tenant", None):
        from pressroom.service import open_services

        allowed = open_services(settings).store.tenancy.allowed_templates(args.tenant)
        if allowed is None:
            print(f"tenant {args.tenant!r} has no allow-list: every template is allowed")
        else:
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
    allowed = services.store.tenancy.allowed_templates(args.tenant)
    if allowed is None:
        print(f"tenant {args.tenant!r} has no allow-list: every template is allowed")
    else:
        print(f"tenant {args.tenant!r} may use: {', '.join(sorted(allowed))}")
    return EXIT_OK


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


def _tenant(value: str) -> str:
    from pressroom.storage import TENANT_RE

    if not TENANT_RE.match(value):
        raise argparse.ArgumentTypeError(
            "a tenant name is 1-64 letters, digits, '.', '_' or '-', not starting with '.' '_' '-'"
        )
    return value


def _expiry(value: str) -> float:
    """``--expires``: a duration from now (``90d``, ``12h``, ``30m``) or a UTC date/time
    (``2027-01-31``, ``2027-01-31T18:00:00Z``); returns an epoch time."""
    import datetime as dt
    import re
    import time

    m = re.fullmatch(r"(\d{1,6})([dhm])", value.strip())
    if m:
        unit = {"d": 86400, "h": 3600, "m": 60}[m.group(2)]
        return time.time() + int(m.group(1)) * unit
    try:
        when = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            "give a duration (90d, 12h, 30m) or a date/time (2027-01-31, 2027-01-31T18:00:00Z)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


def _when(epoch: float | None) -> str:
    import datetime as dt

    if epoch is None:
        return "-"
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def cmd_keys_create(args: argparse.Namespace) -> int:
    from pressroom.service import open_services

    services = open_services(Settings.from_env())
    role = "operator" if args.operator else "tenant"
    try:
        key_id, key = services.store.tenancy.new_key(
            args.tenant, now=services.clock(), role=role, expires_at=args.expires
        )
    except ValueError as exc:
        print(f"error: BAD_REQUEST: {exc}", file=sys.stderr)
        return EXIT_USAGE
    what = "operator key" if args.operator else "API key for tenant"
    expiry = "" if args.expires is None else f", expires {_when(args.expires)}"
    print(f"New {what} {args.tenant!r}{expiry} (shown once; it is stored hashed):")
    print(f"id: {key_id}")
    print(key)
    return EXIT_OK


def cmd_keys_list(args: argparse.Namespace) -> int:
    from pressroom.service import open_services

    services = open_services(Settings.from_env())
    now = services.clock()
    for row in services.store.tenancy.list_keys(args.tenant):
        if row["revoked_at"] is not None:
            status = f"revoked {_when(row['revoked_at'])}"
        elif row["expires_at"] is not None and row["expires_at"] <= now:
            status = "expired"
        else:
            status = "live"
        print(
            f"{row['id']}  tenant={row['tenant']}  role={row['role']}  "
            f"created={_when(row['created_at'])}  last_used={_when(row['last_used_at'])}  "
            f"expires={_when(row['expires_at'])}  {status}"
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


def cmd_db_upgrade(_args: argparse.Namespace) -> int:
    from pressroom.service import open_services

    open_services(Settings.from_env(), migrate=True)
    print("database is at the latest schema")
    return EXIT_OK


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pressroom", description="Scans in, searchable branded PDFs out."
    )
    parser.add_argument("--version", action="version", version=f"pressroom {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("process", help="process files offline, without the service")
    p.add_argument(
        "inputs",
        nargs="+",
        type=Path,
        metavar="INPUT",
        help="PDF, PNG, JPEG or TIFF files (type decided by content)",
    )
    p.add_argument(
        "-o",
        "--output",
        type=Path,
        required=True,
        metavar="OUTDIR",
        help="folder for the output PDFs (created if missing)",
    )
    p.add_argument(
        "--template", default=None, help="brand template name or folder (default: plain)"
    )
    p.add_argument("--title", default=None, help="the document title used by the template")
    p.add_argument(
        "--redact",
        default=None,
        metavar="CLASSES",
        help="comma list of name, address, account-number",
    )
    p.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=1,
        help="files processed at once, one process each (default 1)",
    )
    p.add_argument(
        "--keep-pixels",
        action="store_true",
        help="keep each scan's pixels as they are: skewed pages are not levelled (the text "
        "layer is laid level either way)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    p.set_defaults(func=cmd_process)

    d = sub.add_parser(
        "detect",
        help="what redaction would find, without redacting: one JSON line per finding",
    )
    d.add_argument("inputs", nargs="*", type=Path, metavar="INPUT")
    d.add_argument(
        "--redact",
        default=None,
        metavar="CLASSES",
        help="comma list of name, address, account-number (default: all three)",
    )
    d.add_argument(
        "--jsonl",
        action="store_true",
        help='read {"id","text"} JSON lines on stdin; write {"id","findings"} lines',
    )
    d.add_argument("--no-values", action="store_true", help="leave the values out")
    d.set_defaults(func=cmd_detect)

    t = sub.add_parser("templates", help="list brand templates with their content-hash identity")
    t.add_argument("--tenant", type=_tenant, help="only the templates this tenant may use")
    t.set_defaults(func=cmd_templates)
    tsub = t.add_subparsers(dest="templates_command")
    ta = tsub.add_parser(
        "allow",
        help="let a tenant use these templates (a tenant with no list may use every template)",
    )
    ta.add_argument("--tenant", required=True, type=_tenant)
    ta.add_argument("names", nargs="+", metavar="NAME")
    ta.set_defaults(func=cmd_templates_allow)
    td = tsub.add_parser("disallow", help="take templates off a tenant's allow-list")
    td.add_argument("--tenant", required=True, type=_tenant)
    td.add_argument("names", nargs="*", metavar="NAME")
    td.add_argument("--all", action="store_true", help="drop the list: every template allowed")
    td.set_defaults(func=cmd_templates_disallow)

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

    keys = sub.add_parser("keys", help="API keys").add_subparsers(
        dest="keys_command", required=True
    )
    kc = keys.add_parser("create", help="create a key for a tenant; prints it on the last line")
    kc.add_argument(
        "--tenant", required=True, type=_tenant, help="the tenant (for --operator: a label)"
    )
    kc.add_argument(
        "--operator",
        action="store_true",
        help="an operator key: redrive jobs, manage customers, /metrics and /dashboard",
    )
    kc.add_argument(
        "--expires",
        type=_expiry,
        help="when the key stops working: 90d, 12h, 30m, or a UTC date/time (2027-01-31)",
    )
    kc.set_defaults(func=cmd_keys_create)
    kl = keys.add_parser("list", help="one key per line, id first (never the secret)")
    kl.add_argument("--tenant", type=_tenant, help="only this tenant's keys")
    kl.set_defaults(func=cmd_keys_list)
    kr = keys.add_parser("revoke", help="revoke a key by id or by the key itself, at once")
    kr.add_argument("key", metavar="ID_OR_KEY")
    kr.set_defaults(func=cmd_keys_revoke)

    customers = sub.add_parser("customers", help="a tenant's customer registry").add_subparsers(
        dest="customers_command", required=True
    )
    for name, text in (
        ("create", "register an active customer"),
        ("suspend", "suspend a customer: its jobs are rejected UNAUTHORIZED_CUSTOMER"),
        ("activate", "make a suspended customer active again"),
    ):
        cc = customers.add_parser(name, help=text)
        cc.add_argument("--tenant", required=True, type=_tenant)
        cc.add_argument("id", help="the customer id jobs name in their `customer` field")
        cc.set_defaults(func=cmd_customers)

    db = sub.add_parser("db", help="database schema").add_subparsers(
        dest="db_command", required=True
    )
    db.add_parser("upgrade", help="migrate to the latest schema").set_defaults(func=cmd_db_upgrade)

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

    sub.add_parser(
        "bench",
        help="throughput benchmark: pages/min/core and CER beside OCRmyPDF (see bench/README.md)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["bench"]:  # the benchmark parses its own options, --help included
        from pressroom.bench import main as bench_main

        bench_main(args_list[1:])
        return EXIT_OK
    parser = build_parser()
    args = parser.parse_args(args_list)
    try:
        code: int = args.func(args)
    except BadConfig as exc:  # a setting out of range: say which, no traceback
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
