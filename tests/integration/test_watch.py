"""The hot folder's promises, with a recording handler and a clock that moves only when told:
each file is taken once it has settled, handled once by its content however often the watcher
stops and starts, moved aside with its reason, never over a file already there; and through
the service, each file is one job (its hash the idempotency key)."""

from __future__ import annotations

import hashlib
import os
import stat
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.errors import BadRequest, UnsafeFolder
from pressroom.hotfolder import Handled, Inbox, Watcher, taken
from pressroom.service import Services
from tests.conftest import FakeClock
from tests.integration.test_service import png_bytes, work

pytestmark = pytest.mark.integration


class Crash(BaseException):
    """The watcher's process dying mid-file (a SIGKILL): nothing after it runs."""


@dataclass
class Recorder:
    """Handles a file by copying it to ``out``; ``codes`` (name → exit codes, one a try)
    says how a try ends; ``crash_on``: the name whose handling kills the watcher once."""

    out: Path
    codes: dict[str, list[int]] = field(default_factory=dict)
    crash_on: str | None = None
    completed: Counter[str] = field(default_factory=Counter)  # by content hash
    tries: list[str] = field(default_factory=list)

    def __call__(
        self, files: Sequence[tuple[Path, str, str]], finished: Callable[[int, Handled], None]
    ) -> None:
        for n, (path, name, sha) in enumerate(files):
            assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
            self.tries.append(name)
            if name == self.crash_on:
                self.crash_on = None
                raise Crash
            code = self.codes.get(name, [0]).pop(0) if self.codes.get(name) else 0
            if code == 0:
                (self.out / name).write_bytes(path.read_bytes())
                self.completed[sha] += 1
                finished(n, Handled(0, f"ok  {name}"))
            else:
                finished(n, Handled(code, f"CODE{code}: {name}: refused for the test"))


def _watcher(
    root: Path, recorder: Recorder, clock: FakeClock, lines: list[Handled], **kw: object
) -> Watcher:
    inbox = Inbox(root, settle_s=5.0, clock=clock, **kw)  # type: ignore[arg-type]
    return Watcher(inbox, recorder, lines.append, batch=3)


def _drop(root: Path, name: str, data: bytes) -> Path:
    path = root / name
    path.write_bytes(data)
    return path


def _settle(watcher: Watcher, clock: FakeClock) -> int:
    """A pass that sees the files, the window, and the pass that takes them."""
    seen = watcher.step()
    clock.advance(5.0)
    return seen + watcher.step()


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    root = tmp_path / "inbox"
    root.mkdir()
    return root


@pytest.fixture
def recorder(tmp_path: Path) -> Recorder:
    (tmp_path / "out").mkdir()
    return Recorder(tmp_path / "out")


def test_a_burst_is_handled_once_each_and_moved_to_done(
    inbox: Path, recorder: Recorder, clock: FakeClock
) -> None:
    names = [f"scan{n:02d}.pdf" for n in range(20)]
    for n, name in enumerate(names):
        _drop(inbox, name, b"%PDF-1.7 burst " + bytes([n]))
    lines: list[Handled] = []
    watcher = _watcher(inbox, recorder, clock, lines)
    assert watcher.step() == 0  # seen, not settled yet: nothing taken
    assert _settle(watcher, clock) == 20
    assert sorted(recorder.tries) == names and set(recorder.completed.values()) == {1}
    assert sorted(p.name for p in (inbox / ".done").iterdir()) == names
    assert [p.name for p in inbox.iterdir() if not p.name.startswith(".")] == []
    assert len((inbox / ".pressroom" / "ledger").read_text().split()) == 20
    assert watcher.step() == 0 and len(lines) == 20


def test_a_file_still_being_written_waits_until_its_size_stays(
    inbox: Path, recorder: Recorder, clock: FakeClock
) -> None:
    lines: list[Handled] = []
    watcher = _watcher(inbox, recorder, clock, lines)
    growing = _drop(inbox, "scanner.pdf", b"")
    _drop(inbox, ".scanner.pdf.tmp", b"partial")  # hidden and partial names: never taken
    _drop(inbox, "copy.pdf.part", b"partial")
    for step in range(6):  # a slow scanner: 4 s between writes, each under the 5 s window
        with growing.open("ab") as fh:
            fh.write(b"%%PDF page %d\n" % step)
        os.utime(growing, ns=(step * 10**9 + 1, step * 10**9 + 1))
        assert watcher.step() == 0, step
        clock.advance(4.0)
    assert recorder.tries == []
    clock.advance(1.0)  # now 5 s without a change
    assert watcher.step() == 1 and recorder.tries == ["scanner.pdf"]
    empty = _drop(inbox, "empty.pdf", b"")
    clock.advance(60)
    assert _settle(watcher, clock) == 0 and empty.exists()  # an empty file is never taken
    assert sorted(p.name for p in inbox.iterdir() if not p.name.startswith(".")) == [
        "copy.pdf.part",
        "empty.pdf",
    ]
    assert not taken("~$lock.pdf") and not taken("x.crdownload") and taken("Scan 1.PDF")


def test_a_restart_mid_burst_does_no_file_twice_and_loses_none(
    inbox: Path, recorder: Recorder, clock: FakeClock
) -> None:
    """The watcher dies while handling the 5th file (its batch of 3 half done); a new one on
    the same inbox takes up the claimed files first, then the rest."""
    names = [f"f{n}.png" for n in range(9)]
    for n, name in enumerate(names):
        _drop(inbox, name, b"\x89PNG restart " + bytes([n]))
    recorder.crash_on = "f4.png"
    first = _watcher(inbox, recorder, clock, [])
    first.step()
    clock.advance(5.0)
    with pytest.raises(Crash):
        first.step()
    done_before = {p.name for p in (inbox / ".done").iterdir()}
    assert done_before == {"f0.png", "f1.png", "f2.png", "f3.png"}
    claimed = {p.name for p in (inbox / ".pressroom" / "work").iterdir()}
    assert "f4.png" in claimed  # claimed, not finished: not lost
    lines: list[Handled] = []
    again = _watcher(inbox, recorder, clock, lines)  # a fresh process: a fresh Inbox
    _settle(again, clock)
    assert sorted(p.name for p in (inbox / ".done").iterdir()) == names
    assert list((inbox / ".pressroom" / "work").iterdir()) == []
    assert len(recorder.completed) == 9 and set(recorder.completed.values()) == {1}
    assert sorted(p.name for p in recorder.out.iterdir()) == names


def test_content_done_before_is_skipped_and_moved_under_a_fresh_name(
    inbox: Path, recorder: Recorder, clock: FakeClock
) -> None:
    lines: list[Handled] = []
    watcher = _watcher(inbox, recorder, clock, lines)
    _drop(inbox, "a.pdf", b"%PDF same")
    _settle(watcher, clock)
    _drop(inbox, "a.pdf", b"%PDF same")  # the same name and content, again
    _drop(inbox, "renamed.pdf", b"%PDF same")
    _settle(watcher, clock)
    assert recorder.tries == ["a.pdf"]
    assert sorted(p.name for p in (inbox / ".done").iterdir()) == [
        "a (2).pdf",
        "a.pdf",
        "renamed.pdf",
    ]
    skipped = [h.line for h in lines if h.line.startswith("skipped: duplicate")]
    assert len(skipped) == 2 and all(h.exit_code == 0 for h in lines)


def test_refused_files_go_aside_with_their_reason_and_never_block_the_rest(
    inbox: Path, recorder: Recorder, clock: FakeClock
) -> None:
    recorder.codes = {"bad.pdf": [2], "held.pdf": [3]}
    for name in ("bad.pdf", "good.pdf", "held.pdf", "later.pdf"):
        _drop(inbox, name, name.encode())
    lines: list[Handled] = []
    watcher = _watcher(inbox, recorder, clock, lines)
    _settle(watcher, clock)
    failed = inbox / ".failed"
    assert sorted(p.name for p in failed.iterdir()) == ["bad.pdf", "bad.pdf.reason"]
    assert (failed / "bad.pdf.reason").read_text() == "CODE2: bad.pdf: refused for the test\n"
    done = sorted(p.name for p in (inbox / ".done").iterdir())
    assert done == ["good.pdf", "held.pdf", "held.pdf.reason", "later.pdf"]
    # refused content is not in the ledger: dropped again (fixed upstream, say), it is tried
    _drop(inbox, "bad.pdf", b"bad.pdf")
    _settle(watcher, clock)
    assert recorder.tries.count("bad.pdf") == 2
    assert sorted(p.name for p in failed.iterdir()) == ["bad.pdf", "bad.pdf.reason"]
    assert (inbox / ".done" / "bad.pdf").exists()


def test_a_temporary_failure_stays_claimed_and_is_tried_again_later(
    inbox: Path, recorder: Recorder, clock: FakeClock
) -> None:
    recorder.codes = {"wait.pdf": [75, 75, 0]}
    _drop(inbox, "wait.pdf", b"%PDF service down")
    lines: list[Handled] = []
    watcher = _watcher(inbox, recorder, clock, lines)
    _settle(watcher, clock)
    assert recorder.tries == ["wait.pdf"]
    assert [p.name for p in (inbox / ".pressroom" / "work").iterdir()] == ["wait.pdf"]
    clock.advance(4.0)
    watcher.step()
    assert len(recorder.tries) == 1  # 5 s after the first try, not sooner
    clock.advance(1.0)
    watcher.step()
    clock.advance(9.0)
    watcher.step()
    assert len(recorder.tries) == 2  # then 10 s
    clock.advance(1.0)
    watcher.step()
    assert len(recorder.tries) == 3 and (inbox / ".done" / "wait.pdf").exists()
    assert [h.exit_code for h in lines] == [75, 75, 0]


def test_moved_files_take_the_operators_mode_and_a_second_watcher_is_refused(
    inbox: Path, recorder: Recorder, clock: FakeClock
) -> None:
    (inbox / ".done").mkdir(mode=0o700)
    (inbox / ".done" / "a.pdf").write_bytes(b"an earlier a.pdf, kept")
    lines: list[Handled] = []
    watcher = _watcher(inbox, recorder, clock, lines, mode=0o604)
    watcher.inbox.lock()
    with pytest.raises(BadRequest, match="another pressroom watch"):
        Inbox(inbox, clock=clock).lock()
    _drop(inbox, "a.pdf", b"%PDF a new a")
    _settle(watcher, clock)
    assert (inbox / ".done" / "a.pdf").read_bytes() == b"an earlier a.pdf, kept"
    moved = inbox / ".done" / "a (2).pdf"
    assert moved.read_bytes() == b"%PDF a new a"
    assert stat.S_IMODE(moved.stat().st_mode) == 0o604
    assert stat.S_IMODE((inbox / ".failed").stat().st_mode) == 0o705  # made here: + search
    assert moved.stat().st_gid == (inbox / ".done").stat().st_gid
    watcher.inbox.unlock()
    free = Inbox(inbox, clock=clock)
    free.lock()  # free again
    free.unlock()


def test_through_the_service_each_file_is_one_job_and_its_output_comes_back(
    tmp_path: Path, services: Services, clock: FakeClock
) -> None:
    """--url with -o: submitted with its hash as the idempotency key, followed, downloaded;
    a content sent again (a restart after the upload) is the same job, not a second one."""
    import argparse

    from pressroom.cli.progress import Board
    from pressroom.cli.watch import RemoteHandler
    from pressroom.client import PressroomClient

    key = services.store.tenancy.create_key("acme", now=services.clock())
    http = TestClient(create_app(services))
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    _drop(inbox, "form.png", png_bytes(tmp_path))
    args = argparse.Namespace(
        template="sample", title="Forms", lane=None, redact=None, keep_pixels=False,
        review="doubt", output_type=None, sidecar=None, allow_no_text=False, optimize=0,
        no_label=False, label=None, language=None, ocr="skip", output=out, timeout=60.0,
    )  # fmt: skip
    with PressroomClient(
        "http://testserver", key, http=http, sleep=lambda _s: work(services)
    ) as client:
        handler = RemoteHandler(args, client, Board(False), 0o640)
        lines: list[Handled] = []
        watcher = Watcher(Inbox(inbox, settle_s=5.0, clock=clock), handler, lines.append)
        _settle(watcher, clock)
        assert [h.exit_code for h in lines] == [0], lines
        assert (out / "form.pdf").read_bytes().startswith(b"%PDF")
        assert stat.S_IMODE((out / "form.pdf").stat().st_mode) == 0o640
        sha = hashlib.sha256((inbox / ".done" / "form.png").read_bytes()).hexdigest()
        again: list[Handled] = []
        handler([(inbox / ".done" / "form.png", "form.png", sha)], lambda _n, h: again.append(h))
        assert again[0].exit_code == 0 and (out / "form (2).pdf").exists()
        jobs = http.get("/v1/jobs", headers={"Authorization": f"Bearer {key}"}).json()
        assert len(jobs["jobs"]) == 1  # the same content: the same job
        assert jobs["jobs"][0]["label"] == "form.png"


def test_an_unreadable_file_goes_aside_and_a_twin_waits_for_the_first_ones_outcome(
    inbox: Path, recorder: Recorder, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by a review: a file that cannot be read stopped the watcher for good, and the
    second of two equal files in one batch was called done while the first was refused."""
    import pressroom.hotfolder.watcher as watch

    real = watch._sha256_within

    def reading(path: Path, limit: int) -> str | None:
        if path.name == "locked.pdf":
            raise PermissionError(13, "Permission denied")
        return real(path, limit)

    monkeypatch.setattr(watch, "_sha256_within", reading)
    recorder.codes = {"first.pdf": [2]}
    for name in ("first.pdf", "locked.pdf", "twin.pdf"):
        _drop(inbox, name, b"%PDF twins" if name != "locked.pdf" else b"%PDF locked")
    lines: list[Handled] = []
    watcher = _watcher(inbox, recorder, clock, lines)
    _settle(watcher, clock)
    watcher.step()
    failed = sorted(p.name for p in (inbox / ".failed").iterdir())
    assert failed == ["first.pdf", "first.pdf.reason", "locked.pdf", "locked.pdf.reason"]
    assert (
        "cannot be read (Permission denied)"
        in (inbox / ".failed" / "locked.pdf.reason").read_text()
    )
    # the twin was not skipped as done: it was read itself, after the first was refused
    assert recorder.tries == ["first.pdf", "twin.pdf"]
    assert (inbox / ".done" / "twin.pdf").exists() and (recorder.out / "twin.pdf").exists()


def test_a_stop_is_heard_between_batches_and_the_rest_stay_claimed(
    inbox: Path, recorder: Recorder, clock: FakeClock
) -> None:
    for n in range(7):
        _drop(inbox, f"s{n}.pdf", b"%PDF stop " + bytes([n]))
    watcher = _watcher(inbox, recorder, clock, [])  # batches of 3
    watcher.step()
    clock.advance(5.0)
    assert watcher.step(stop=lambda: len(recorder.tries) >= 1) == 3
    assert len(recorder.tries) == 3
    assert len(list((inbox / ".pressroom" / "work").iterdir())) == 4
    assert watcher.step() == 4 and len(recorder.tries) == 7


def test_a_state_folder_that_is_a_link_is_refused(inbox: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (inbox / ".failed").symlink_to(elsewhere)
    with pytest.raises(UnsafeFolder, match="symbolic link"):
        Inbox(inbox)


def test_a_file_whose_reads_never_end_is_set_aside_after_three_and_the_rest_go_on(
    inbox: Path, recorder: Recorder, clock: FakeClock
) -> None:
    """A file that kills the watcher each time it is read (memory, say): read first beside
    another file, then alone three times (so only it is blamed), the next start sets it
    aside RETRIES_EXHAUSTED instead of dying again; the file beside it is delivered."""
    _drop(inbox, "huge.png", b"\x89PNG kills its reader")
    _drop(inbox, "fine.png", b"\x89PNG fine")
    for _start in range(4):
        recorder.crash_on = "huge.png"
        watcher = _watcher(inbox, recorder, clock, [])
        with pytest.raises(Crash):
            _settle(watcher, clock)
    lines: list[Handled] = []
    _settle(_watcher(inbox, recorder, clock, lines), clock)
    assert recorder.tries.count("huge.png") == 4 and recorder.tries.count("fine.png") == 1
    reason = (inbox / ".failed" / "huge.png.reason").read_text()
    assert reason.startswith("RETRIES_EXHAUSTED: huge.png: 3 reads of it alone stopped")
    assert sorted(p.name for p in (inbox / ".done").iterdir()) == ["fine.png"]
    assert list((inbox / ".pressroom" / "tries").iterdir()) == []
    assert list((inbox / ".pressroom" / "work").iterdir()) == []


def test_a_handler_that_fails_does_not_stop_the_watcher_and_an_ended_read_is_not_counted(
    inbox: Path, tmp_path: Path, clock: FakeClock
) -> None:
    """A bug in the handler (an exception, or a pool that lost its process and reports the
    read as died): the watcher goes on, tries the files again after a wait, each alone, and
    sets aside the one that fails alone three times; a file the service answers "try again"
    any number of times is not."""

    class Failing(Recorder):
        def __call__(
            self, files: Sequence[tuple[Path, str, str]], finished: Callable[[int, Handled], None]
        ) -> None:
            for n, (_path, name, _sha) in enumerate(files):
                self.tries.append(name)
                if name == "bug.png":
                    raise RuntimeError("a bug")
                finished(n, Handled(75, f"UNAVAILABLE: {name}: the service is down"))

    (tmp_path / "out").mkdir()
    failing = Failing(tmp_path / "out")
    _drop(inbox, "bug.png", b"\x89PNG bug")
    _drop(inbox, "later.png", b"\x89PNG later")
    lines: list[Handled] = []
    watcher = _watcher(inbox, failing, clock, lines)
    _settle(watcher, clock)
    for _wait in range(6):
        clock.advance(300.0)  # past any retry's wait
        watcher.step()
    assert failing.tries.count("bug.png") == 4  # once beside later.png, then three alone
    assert (inbox / ".failed" / "bug.png.reason").read_text().startswith("RETRIES_EXHAUSTED")
    assert any(h.line.startswith("INTERNAL_ERROR: bug.png: RuntimeError") for h in lines)
    assert failing.tries.count("later.png") >= 5  # still claimed, still tried
    assert [p.name for p in (inbox / ".pressroom" / "work").iterdir()] == ["later.png"]


def test_a_move_to_another_file_system_copies_and_never_lands_over_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """.done on another mount (EXDEV for link and rename): the file is copied under a fresh
    name, made durable, then removed; an output's name is free for its sidecar too."""
    import errno as errno_

    from pressroom.cli.watch import _outputs
    from pressroom.hotfolder import move_fresh

    def cross(*_a: object, **_k: object) -> None:
        raise OSError(errno_.EXDEV, "Invalid cross-device link")

    folder = tmp_path / "done"
    folder.mkdir()
    (folder / "a.pdf").write_bytes(b"earlier")
    src = tmp_path / "a.pdf"
    src.write_bytes(b"new content")
    monkeypatch.setattr(os, "link", cross)
    monkeypatch.setattr(os, "rename", cross)
    moved = move_fresh(src, folder, "a.pdf")
    assert moved.name == "a (2).pdf" and moved.read_bytes() == b"new content"
    assert not src.exists() and (folder / "a.pdf").read_bytes() == b"earlier"
    out = tmp_path / "out"
    out.mkdir()
    (out / "scan.txt").write_text("another file's sidecar")
    assert [p.name for p in _outputs(out, ["scan.png", "scan.tif"])] == [
        "scan (2).pdf",
        "scan (3).pdf",
    ]


def test_a_file_that_changed_while_it_was_read_is_read_again(
    inbox: Path, recorder: Recorder, clock: FakeClock
) -> None:
    class Growing(Recorder):
        def __call__(
            self, files: Sequence[tuple[Path, str, str]], finished: Callable[[int, Handled], None]
        ) -> None:
            first = not self.tries

            def grown(n: int, handled: Handled) -> None:
                if first:  # a scanner that paused past the window writes on mid-read
                    with files[n][0].open("ab") as fh:
                        fh.write(b" more pages")
                finished(n, handled)

            super().__call__(files, grown)

    growing = Growing(recorder.out)
    _drop(inbox, "slow.pdf", b"%PDF-1.7 first part")
    lines: list[Handled] = []
    watcher = _watcher(inbox, growing, clock, lines)
    _settle(watcher, clock)
    assert lines[0].exit_code == 75 and "changed while it was read" in lines[0].line
    clock.advance(5.0)
    watcher.step()
    assert growing.tries == ["slow.pdf", "slow.pdf"]
    assert (inbox / ".done" / "slow.pdf").read_bytes() == b"%PDF-1.7 first part more pages"


def test_a_redactions_source_leaves_done_when_its_time_is_up_and_a_plain_ones_stays(
    inbox: Path, recorder: Recorder, clock: FakeClock
) -> None:
    """The review's note: unredacted sources of redaction jobs stayed in `.done/` for good.
    They leave it after ``keep_done_s`` (a restart does not forget them; 0: at once)."""

    class Redacting(Recorder):
        def __call__(
            self, files: Sequence[tuple[Path, str, str]], finished: Callable[[int, Handled], None]
        ) -> None:
            for n, (_path, name, _sha) in enumerate(files):
                finished(n, Handled(0, f"ok  {name}", redacted=name.startswith("secret")))

    wall = FakeClock(start=1_000_000.0)
    redacting = Redacting(recorder.out)
    first = Watcher(Inbox(inbox, clock=clock, keep_done_s=3600, wall=wall), redacting, print)
    _drop(inbox, "secret.pdf", b"%PDF Dear Jane Whitfield")
    _drop(inbox, "plain.pdf", b"%PDF a plain job")
    _settle(first, clock)
    assert sorted(p.name for p in (inbox / ".done").iterdir()) == ["plain.pdf", "secret.pdf"]
    wall.advance(3599)
    first.step()
    assert (inbox / ".done" / "secret.pdf").exists()  # not yet
    again = Watcher(Inbox(inbox, clock=clock, keep_done_s=3600, wall=wall), redacting, print)
    wall.advance(1)
    again.step()
    assert sorted(p.name for p in (inbox / ".done").iterdir()) == ["plain.pdf"]
    at_once = Watcher(Inbox(inbox, clock=clock, keep_done_s=0, wall=wall), redacting, print)
    _drop(inbox, "secret2.pdf", b"%PDF Dear John Doe")
    _settle(at_once, clock)
    assert sorted(p.name for p in (inbox / ".done").iterdir()) == ["plain.pdf"]
    assert list((inbox / ".pressroom" / "work").iterdir()) == []


@pytest.mark.parametrize(
    ("redact", "label", "sent"),
    [
        (None, None, "Jane Whitfield letter.pdf"),  # a plain job: its name, as before
        ("name", None, None),  # a redaction: no label unless asked
        ("name", "{name}", "Jane Whitfield letter.pdf"),  # asked
        ("name", "case 12 ({name})", "case 12 (Jane Whitfield letter.pdf)"),
    ],
)
def test_submit_and_watch_send_no_label_for_a_redaction_unless_asked(
    tmp_path: Path, redact: str | None, label: str | None, sent: str | None
) -> None:
    """N10: the file's name (often the person's) was every job's label, redactions too."""
    import argparse

    import httpx

    from pressroom.cli.progress import Board
    from pressroom.cli.watch import RemoteHandler
    from pressroom.client import PressroomClient, SubmitOptions, run_submit

    bodies: list[bytes] = []

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(request.read())
        return httpx.Response(202, json={"id": "j1", "state": "accepted", "lane": "bulk"})

    def http() -> httpx.Client:
        return httpx.Client(base_url="http://testserver", transport=httpx.MockTransport(answer))

    path = tmp_path / "Jane Whitfield letter.pdf"
    path.write_bytes(b"%PDF-1.7 a letter")
    opts = SubmitOptions(url="http://testserver", key="k", redact=redact, label=label)
    assert run_submit([path], opts, http=http()) == 0
    args = argparse.Namespace(
        template=None, title=None, lane=None, redact=redact, keep_pixels=False, review=None,
        output_type=None, sidecar=None, allow_no_text=False, optimize=0, no_label=False,
        label=label, language=None, ocr="skip", output=None, timeout=60.0,
    )  # fmt: skip
    with PressroomClient("http://testserver", "k", http=http()) as client:
        handled = RemoteHandler(args, client, Board(False), 0o640)._one(path, path.name, "ab")
    assert handled.exit_code == 0 and handled.redacted == bool(redact)
    for body in bodies:
        if sent is None:
            assert b'name="label"' not in body and b"Whitfield" not in body
        else:
            assert b'name="label"\r\n\r\n' + sent.encode() + b"\r\n" in body


def test_a_held_redaction_sent_with_url_is_a_redactions_source_for_keep_done(
    tmp_path: Path,
) -> None:
    """A redaction the service holds (REDACTION_LEAK) ends the file as exit 3; its source is
    still the unredacted source of a redaction, and leaves .done/ when --keep-done says."""
    import argparse

    import httpx

    from pressroom.cli.progress import Board
    from pressroom.cli.watch import RemoteHandler
    from pressroom.client import PressroomClient

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(202, json={"id": "j1", "state": "accepted", "redact": ["name"]})
        held = {"id": "j1", "state": "review", "reason": "REDACTION_LEAK", "message": "held"}
        return httpx.Response(200, json={**held, "redact": ["name"]})

    path = tmp_path / "letter.pdf"
    path.write_bytes(b"%PDF-1.7 a letter")
    args = argparse.Namespace(
        template=None, title=None, lane=None, redact="name", keep_pixels=False, review=None,
        output_type=None, sidecar=None, allow_no_text=False, optimize=0, no_label=False,
        label=None, language=None, ocr="skip", output=tmp_path / "out", timeout=60.0,
    )  # fmt: skip
    http = httpx.Client(base_url="http://testserver", transport=httpx.MockTransport(answer))
    with PressroomClient("http://testserver", "k", http=http) as client:
        handled = RemoteHandler(args, client, Board(False), 0o640)._one(path, path.name, "ab")
    assert handled.exit_code == 3 and handled.redacted
