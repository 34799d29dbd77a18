"""`pressroom watch INBOX`: a hot folder, offline (``-o OUTDIR``) or through a running service
(``--url``). The steps a file goes through are ``pressroom.hotfolder``'s."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from pressroom.cli.common import EXIT_INTERRUPTED, EXIT_OK
from pressroom.errors import BadRequest, PressroomError
from pressroom.fsutil import escaped
from pressroom.hints import for_cli
from pressroom.hotfolder import (
    Handled,
    Inbox,
    Watcher,
    dir_mode,
    fresh_name,
    watching,
)
from pressroom.settings import Settings

if TYPE_CHECKING:
    from pressroom.cli.process import Prepared
    from pressroom.cli.progress import Board
    from pressroom.client import PressroomClient


def _mode(value: str) -> int:
    try:
        mode = int(value, 8)
    except ValueError:
        raise argparse.ArgumentTypeError("an octal mode such as 0640") from None
    if not 0 <= mode <= 0o777 or mode & 0o400 == 0:
        raise argparse.ArgumentTypeError("an octal mode from 0400 to 0777 the owner can read")
    return mode


DAY_S = 86_400.0
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": DAY_S}


def _duration(value: str) -> float:
    """Seconds from ``604800``, ``90m``, ``12h`` or ``7d``."""
    text = value.strip().lower()
    unit = _UNITS.get(text[-1:])
    try:
        seconds = float(text[:-1] if unit else text) * (unit or 1.0)
    except ValueError:
        raise argparse.ArgumentTypeError("seconds, or a number and s, m, h or d (7d)") from None
    if not 0 <= seconds < float("inf"):
        raise argparse.ArgumentTypeError("0 or more")
    return seconds


def _outputs(outdir: Path, names: Sequence[str]) -> list[Path]:
    """Where each file's output goes: ``NAME.pdf`` in OUTDIR, or a fresh name beside an output
    already there (a later file of the same name never replaces an earlier one's)."""
    taken: set[Path] = set()
    out = []
    for name in names:
        # a name whose sidecar text is free too: one never lands over another's NAME.txt
        dest = fresh_name(outdir, Path(name).stem + ".pdf", taken, beside=(".txt",))
        taken.add(dest)
        taken.add(dest.with_suffix(".txt"))
        out.append(dest)
    return out


def _placed(dest: Path) -> None:
    """An output (and its sidecar) in the group of the folder it is in (never through a
    link someone put in its place: that link's own group changes, not its target's)."""
    for path in (dest, dest.with_suffix(".txt")):
        with contextlib.suppress(OSError):
            os.chown(path, -1, path.parent.stat().st_gid, follow_symlinks=False)


def _board(show: bool) -> Board:
    """The progress board, told each file's name escaped: a name may hold a terminal's own
    escape sequences (it is drawn on stderr while the file is read)."""
    from pressroom.cli.progress import Board

    class _Escaped(Board):
        def begin(self, key: object, name: str, pages: int) -> None:  # every name passes here
            super().begin(key, escaped(name), pages)

    return _Escaped(show)


class OfflineHandler:
    """Each batch processed here, as `process` would (``-j``: over its processes)."""

    def __init__(
        self,
        args: argparse.Namespace,
        prepared: Prepared,
        settings: Settings,
        board: Board,
        mode: int,
    ) -> None:
        from pressroom.offline.spread import Run

        self.outdir: Path = args.output
        self.board = board
        self.jobs = args.jobs
        self.run = Run(
            prepared.template,
            args.title,
            prepared.policy,
            args.keep_pixels,
            settings,
            args.template,
            args.review == "always",
            prepared.choice,
            mode,
            scan=args.scan,
        )
        from pressroom.offline.spread import Spreader

        self.spreader = Spreader(args.jobs) if args.jobs > 1 else None

    def close(self, *, at_once: bool = False) -> None:
        if self.spreader is not None:
            self.spreader.close(at_once=at_once)

    def __call__(
        self, files: Sequence[tuple[Path, str, str]], finished: Callable[[int, Handled], None]
    ) -> None:
        from pressroom.offline.process import Outcome
        from pressroom.offline.spread import run_one

        dests = _outputs(self.outdir, [name for _p, name, _s in files])
        work = [(path, dest) for (path, _n, _s), dest in zip(files, dests, strict=True)]

        def ended(n: int, outcome: Outcome) -> None:
            if outcome.exit_code == EXIT_OK:
                _placed(work[n][1])
            finished(n, Handled(outcome.exit_code, outcome.line, crashed=outcome.crashed,
                                redacted=self.run.redacts))  # fmt: skip

        if self.spreader is not None:
            self.spreader.run(work, self.run, self.board, ended)
        else:
            passes = 2 if self.run.redacts else 1
            for n, (path, dest) in enumerate(work):
                outcome = run_one(
                    self.run, path, dest, self.board.pages_callback(path, path.name, passes)
                )
                self.board.end(path)
                ended(n, outcome)


class RemoteHandler:
    """Each file sent to the service (its content's hash as the idempotency key: the service
    too takes one content once); with ``-o``, waited for and downloaded."""

    def __init__(
        self, args: argparse.Namespace, client: PressroomClient, board: Board, mode: int
    ) -> None:
        self.args = args
        self.client = client
        self.board = board
        self.mode = mode
        # the names a file's output was given, kept for its next try: a download cut short
        # is finished under the same names, not beside them as NAME (2)
        self._dests: dict[str, Path] = {}

    def __call__(
        self, files: Sequence[tuple[Path, str, str]], finished: Callable[[int, Handled], None]
    ) -> None:
        for n, (path, name, sha) in enumerate(files):
            finished(n, self._one(path, name, sha))

    def _one(self, path: Path, name: str, sha: str) -> Handled:
        from pressroom.client import EXIT, EXIT_TEMPORARY, ApiError, job_label

        args = self.args
        redacts = bool(args.redact)
        try:
            job = self.client.submit(
                path,
                template=args.template,
                title=args.title,
                lane=args.lane,
                redact=args.redact,
                keep_pixels=args.keep_pixels,
                review=args.review if args.redact else None,
                output_type=args.output_type,
                sidecar=args.sidecar,
                allow_no_text=args.allow_no_text,
                optimize=args.optimize,
                label=(None if args.no_label else job_label(args.label, name, redacts=redacts)),
                languages=args.language,
                ocr=args.ocr,
                idempotency_key=f"watch-{sha}",
            )
            redacted = redacts or bool(job.data.get("redact"))
            if args.output is None:
                return Handled(EXIT_OK, f"accepted  {name}  as {job.id}", redacted=redacted)
            job = self.client.wait(job.id, timeout_s=args.timeout)
            if job.state != "complete":
                # a held or refused redaction's source is a redaction's source all the same:
                # it leaves .done/ when --keep-done says
                return Handled(
                    EXIT[job.state],
                    f"{job.reason}: {name}: {for_cli(job.reason, str(job.message))}",
                    redacted=redacted,
                )
            dest = self._dests.get(sha) or _outputs(args.output, [name])[0]
            self._dests[sha] = dest
            # the sidecar first: the PDF, last, says the output is whole; each made with the
            # operator's mode and the folder's group on the open file
            gid = dest.parent.stat().st_gid
            if job.data.get("sidecar_url"):
                self.client.download(
                    job, dest.with_suffix(".txt"), sidecar=True, mode=self.mode, group=gid
                )
            self.client.download(job, dest, mode=self.mode, group=gid)
            self._dests.pop(sha, None)
            return Handled(
                EXIT_OK, f"ok  {dest}  {job.pages} page(s)  job {job.id}", redacted=redacted
            )
        except ApiError as exc:
            temporary = exc.temporary or exc.status is None
            return Handled(EXIT_TEMPORARY if temporary else 2, f"{exc.code}: {name}: {exc.detail}")
        except TimeoutError:
            return Handled(EXIT_TEMPORARY, f"UNAVAILABLE: {name}: still running after --timeout")
        except OSError as exc:
            return Handled(EXIT_TEMPORARY, f"UNAVAILABLE: {name}: {exc.strerror}")


class _Stop:
    """SIGTERM and SIGINT: finish the file being read, then stop; a second one stops at once
    (what was being read stays claimed, and is read from the start next time)."""

    def __init__(self) -> None:
        self.asked = False

    def __call__(self, signum: int, _frame: FrameType | None) -> None:
        if self.asked:
            raise KeyboardInterrupt
        self.asked = True

    def __bool__(self) -> bool:
        return self.asked


def _outdir(outdir: Path, mode: int) -> None:
    """OUTDIR made where missing: readable as the outputs are (0640 → 0750); one already there
    is left as the operator made it. One that cannot be made is a one-line refusal."""
    if outdir.is_dir():
        return
    try:
        outdir.mkdir(parents=True)
        outdir.chmod(dir_mode(mode))
    except OSError as exc:
        raise BadRequest(f"-o {outdir}: cannot be made ({exc.strerror})") from None


def cmd_watch(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    os.umask(0o077)
    inbox_root: Path = args.inbox
    try:
        if args.url is None and args.output is None:
            raise BadRequest("give -o OUTDIR (processed here) or --url URL (sent to the service)")
        if args.output is not None:
            _outdir(args.output, args.mode)
        if args.output is not None and args.output.resolve() == inbox_root.resolve():
            raise BadRequest("OUTDIR is INBOX: every output would be taken as a new scan")
        redacts = bool(args.redact)  # with --url: what the jobs' answers say is added later
        inbox = Inbox(
            inbox_root,
            settle_s=args.settle,
            mode=args.mode,
            state=args.state,
            max_bytes=settings.limits.max_bytes,
            keep_done_s=args.keep_done,
        )
        inbox.lock()
    except PressroomError as exc:
        print(escaped(exc.one_line()), file=sys.stderr)
        return exc.exit_code
    stop = _Stop()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    show = sys.stderr.isatty() and not args.quiet
    handler: Any = None
    at_once = False
    client = None
    try:
        with _board(show) as board:
            if args.url is None:
                from pressroom.cli.process import prepare

                try:
                    prepared = prepare(args, settings)
                except PressroomError as exc:
                    print(escaped(exc.one_line()), file=sys.stderr)
                    return exc.exit_code
                handler = OfflineHandler(args, prepared, settings, board, args.mode)
                redacts = handler.run.redacts
                where = f"-> {args.output}"
            else:
                from pressroom.cli.remote import _target
                from pressroom.client import PressroomClient

                target = _target(args)
                if target is None:
                    return 2
                client = PressroomClient(*target)
                handler = RemoteHandler(args, client, board, args.mode)
                where = f"-> {target[0]}" + (f" -> {args.output}" if args.output else "")
            if not args.quiet:
                print(
                    escaped(
                        f"watching {inbox_root} {where} (settled after {args.settle:g}s"
                        f"{', polling' if args.poll else ''}); SIGTERM or Ctrl-C stops after "
                        "the file being read"
                    ),
                    file=sys.stderr,
                    flush=True,
                )

            def report(handled: Handled) -> None:  # its line is escaped by the watcher
                if handled.exit_code == EXIT_OK:
                    if not args.quiet:
                        print(handled.line, flush=True)
                else:
                    print(handled.line, file=sys.stderr, flush=True)

            watcher = Watcher(inbox, handler, report, batch=max(1, args.jobs) * 2, redacts=redacts)
            started = time.monotonic()
            try:
                with watching(inbox_root, poll=args.poll, poll_s=args.interval) as wait:
                    watcher.run(stop=lambda: bool(stop), wait=wait, once=args.once,
                                interval_s=args.interval)  # fmt: skip
            except KeyboardInterrupt:
                at_once = True
                print(
                    f"stopped at once: {inbox.left()} file(s) left claimed, read again on the "
                    "next start",
                    file=sys.stderr,
                )
                return EXIT_INTERRUPTED
            except PressroomError as exc:  # a folder swapped under it: one line, it stops
                at_once = True
                print(escaped(exc.one_line()), file=sys.stderr)
                return exc.exit_code
            except OSError as exc:  # a folder gone with its mount, a full disk
                at_once = True
                print(f"UNAVAILABLE: the hot folder: {exc.strerror}", file=sys.stderr)
                return 75
    finally:
        if isinstance(handler, OfflineHandler):
            handler.close(at_once=at_once)
        if client is not None:
            client.close()
        inbox.close()
    s = watcher.stats
    if not args.quiet:
        print(
            f"{s['done']} done, {s['failed']} refused, {s['duplicate']} duplicate(s), "
            f"{s['later']} to try again, in {time.monotonic() - started:.1f}s",
            file=sys.stderr,
        )
    if args.once:  # for a script: whether everything taken was done
        return 2 if s["failed"] else 75 if s["later"] else EXIT_OK
    return EXIT_OK


def add_commands(sub: Any) -> None:
    """watch"""
    from pressroom.cli.process import add_process_options

    w = sub.add_parser(
        "watch",
        help="a hot folder: process each file that lands in INBOX, once",
        description="Each file that lands in INBOX (copied, moved, or written by a scanner) is "
        "taken once its size has not changed for --settle seconds, processed once (by its "
        "content: a restart never does it twice), then moved to INBOX/.done/ or "
        "INBOX/.failed/ (with NAME.reason). Offline with -o OUTDIR; through a running "
        "service with --url (with -o the results are downloaded there, without it they are "
        "only submitted).",
    )
    w.add_argument("inbox", type=Path, metavar="INBOX", help="the folder to watch")
    w.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        metavar="OUTDIR",
        help="folder for the output PDFs (created if missing)",
    )
    add_process_options(w)
    w.add_argument(
        "--url",
        default=None,
        help="send each file to this service instead of processing it here",
    )
    w.add_argument(
        "--key",
        default=None,
        help="with --url: API key (default: PRESSROOM_API_KEY or the data dir's api-key file)",
    )
    w.add_argument(
        "--lane",
        choices=["bulk", "interactive"],
        default=None,
        help="with --url: the lane (default bulk)",
    )
    named = w.add_mutually_exclusive_group()
    named.add_argument(
        "--label",
        default=None,
        metavar="TEXT",
        help="with --url: each job's label; {name} stands for the file's name (default: the "
        "file's name for a plain job, none with --redact: a file is often named after the "
        "person in it; --label '{name}' sends it anyway)",
    )
    named.add_argument(
        "--no-label",
        action="store_true",
        help="with --url: send no label at all",
    )
    w.add_argument(
        "--timeout",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="with --url and -o: how long to wait for one job (default 3600)",
    )
    w.add_argument(
        "--settle",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="a file is taken once its size and time have not changed for this long (default 5)",
    )
    w.add_argument(
        "--mode",
        type=_mode,
        default=0o640,
        help="octal mode of outputs and moved files, which also take their folder's group "
        "(default 0640)",
    )
    w.add_argument(
        "--state",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder for the watcher's own files (work, tries, ledger, lock), made 0700 and "
        "its user's alone (default: INBOX/.pressroom)",
    )
    w.add_argument(
        "--keep-done",
        type=_duration,
        default=7 * DAY_S,
        metavar="DURATION",
        help="with --redact: how long a source stays in INBOX/.done/ once its redaction is "
        "delivered (7d, 12h, 90m, seconds; 0: removed at once; default 7d)",
    )
    w.add_argument(
        "--poll",
        action="store_true",
        help="look at INBOX every --interval seconds instead of being told of changes "
        "(for SMB and NFS mounts, where inotify hears nothing)",
    )
    w.add_argument(
        "--interval",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="how often INBOX is looked at when nothing is heard (default 1)",
    )
    w.add_argument(
        "--once",
        action="store_true",
        help="take what is in INBOX (waiting for files still being written), then exit",
    )
    w.add_argument("-q", "--quiet", action="store_true", help="print errors only")
    w.set_defaults(func=cmd_watch)
