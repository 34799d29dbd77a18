"""The hot folder against the people who can write its INBOX (security review 2026-12-06: N1,
N6, N11; the stranger's S9): the watcher keeps its files only in folders of its own, opens
them once and never follows a link planted in them, refuses a folder swapped under it in one
line, checks a file's size before it reads a byte, prints names escaped, and takes its pool
with it when it is killed.

The attacks run in a child process as another user (uid 65534) where this process may switch
(root, as in CI), with INBOX writable by everyone and no sticky bit: what the review's second
member of the inbox's group did. Elsewhere they run as this user, where the mode checks refuse
the same folders."""

from __future__ import annotations

import os
import select
import signal
import stat
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pressroom.errors import UnsafeFolder
from pressroom.hotfolder import Handled, Inbox, Watcher
from tests.conftest import FakeClock

pytestmark = pytest.mark.integration

ATTACKER = 65534
PRESSROOM = Path(sys.executable).with_name("pressroom")


def as_other_user(where: Path, act: Callable[[], None]) -> None:
    """``act`` run in ``where`` by another user where this process may switch, else by this
    one: a writer of the inbox, with no other rights."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        code = 1
        try:
            os.chdir(where)
            if os.geteuid() == 0:
                os.setgroups([])
                os.setgid(ATTACKER)
                os.setuid(ATTACKER)
            act()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the attack itself failed"


@dataclass
class Recorder:
    """Handles a file by reading it (as a handler would) and ending it with ``codes``."""

    codes: dict[str, int] = field(default_factory=dict)
    read: list[bytes] = field(default_factory=list)

    def __call__(
        self, files: Sequence[tuple[Path, str, str]], finished: Callable[[int, Handled], None]
    ) -> None:
        for n, (path, name, _sha) in enumerate(files):
            self.read.append(path.read_bytes())
            code = self.codes.get(name, 0)
            finished(n, Handled(code, f"CODE{code}: {name}: refused for the test"))


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    root = tmp_path / "inbox"
    root.mkdir()
    root.chmod(0o777)  # any writer may rename and make folders in it: no sticky bit
    return root


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A file of the watcher's user that nobody else may read."""
    path = tmp_path / "victim"
    path.write_bytes(b"ORIGINAL authorized content\n")
    path.chmod(0o600)
    return path


def _untouched(victim: Path, content: bytes = b"ORIGINAL authorized content\n") -> None:
    st = victim.stat()
    assert victim.read_bytes() == content
    assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_gid == os.getegid()


def _watcher(root: Path, recorder: Recorder, clock: FakeClock, **kw: object) -> Watcher:
    inbox = Inbox(root, settle_s=1.0, clock=clock, **kw)  # type: ignore[arg-type]
    return Watcher(inbox, recorder, lambda _h: None)


def _settle(watcher: Watcher, clock: FakeClock) -> None:
    watcher.step()
    clock.advance(1.0)
    watcher.step()


# --- N1: the review's three reproductions ---------------------------------------------------


def test_a_failed_folder_swapped_for_one_with_a_linked_reason_writes_nothing_through_it(
    inbox: Path, victim: Path, clock: FakeClock
) -> None:
    """Reproduction 1: `.failed` renamed away and made again by an inbox writer, with
    `NAME.reason` a link to a file of the watcher's user and NAME holding a line of theirs."""
    name = "evil\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIATTACKERKEY attacker@example\n.pdf"
    recorder = Recorder(codes={name: 2})
    watcher = _watcher(inbox, recorder, clock)  # .failed is made here, the watcher's

    def attack() -> None:
        Path(".failed").rename(".failed-old")
        Path(".failed").mkdir()
        Path(".failed").chmod(0o777)
        Path(f".failed/{name}.reason").symlink_to(victim)
        Path(name).write_bytes(b"not a pdf")

    as_other_user(inbox, attack)
    with pytest.raises(UnsafeFolder, match=r"\.failed"):
        _settle(watcher, clock)
    _untouched(victim)
    with pytest.raises(UnsafeFolder, match=r"\.failed"):  # and at the next start
        Inbox(inbox)
    _untouched(victim)


def test_a_state_folder_moved_away_is_a_refusal_and_a_new_one_with_a_linked_lock_too(
    inbox: Path, victim: Path, clock: FakeClock
) -> None:
    """Reproduction 2: `.pressroom` renamed while the watcher runs (it died with a
    traceback), then made again with `lock` a link (the restart truncated the target)."""
    watcher = _watcher(inbox, Recorder(), clock)
    watcher.inbox.lock()
    as_other_user(inbox, lambda: Path(".pressroom").rename(".pressroom-old"))
    (inbox / "a.pdf").write_bytes(b"%PDF-1.7 a scan")
    with pytest.raises(UnsafeFolder, match=r"moved, removed or replaced"):
        _settle(watcher, clock)
    watcher.inbox.unlock()

    def attack() -> None:
        for folder in (".pressroom", ".pressroom/work", ".pressroom/tries"):
            Path(folder).mkdir()
            Path(folder).chmod(0o777)
        Path(".pressroom/lock").symlink_to(victim)

    as_other_user(inbox, attack)
    with pytest.raises(UnsafeFolder, match=r"\.pressroom"):
        Inbox(inbox).lock()
    _untouched(victim)


def test_links_planted_in_a_work_folder_the_watcher_did_not_make_are_never_read(
    inbox: Path, victim: Path, clock: FakeClock
) -> None:
    """Reproduction 3: an inbox writer makes `.pressroom/work/` before the watcher's first
    start, with a link to a PDF of the watcher's user (it was read, delivered to OUT for the
    group, and its mode and group changed)."""
    victim.write_bytes(b"%PDF-1.7 Dear Jane Whitfield")
    victim.chmod(0o600)

    def attack() -> None:
        for folder in (".pressroom", ".pressroom/work", ".pressroom/tries"):
            Path(folder).mkdir()
            Path(folder).chmod(0o777)
        Path(".pressroom/work/grab.pdf").symlink_to(victim)

    as_other_user(inbox, attack)
    recorder = Recorder()
    with pytest.raises(UnsafeFolder, match=r"\.pressroom"):
        _settle(_watcher(inbox, recorder, clock), clock)
    assert recorder.read == []
    _untouched(victim, b"%PDF-1.7 Dear Jane Whitfield")


def test_a_link_or_a_second_name_of_a_file_is_never_taken_even_from_the_watchers_folders(
    inbox: Path, victim: Path, clock: FakeClock
) -> None:
    """A link in the watcher's own work folder (a claim raced with a swap), and a hard link
    dropped in INBOX (another name of a file the dropper may not read): neither is read, nor
    re-moded."""
    recorder = Recorder()
    watcher = _watcher(inbox, recorder, clock)
    (inbox / ".pressroom" / "work" / "grab.pdf").symlink_to(victim)
    os.link(victim, inbox / "hard.pdf")
    (inbox / "fine.pdf").write_bytes(b"%PDF-1.7 fine")
    _settle(watcher, clock)
    assert recorder.read == [b"%PDF-1.7 fine"]
    _untouched(victim)
    assert not (inbox / ".failed" / "grab.pdf").exists()


@pytest.mark.parametrize(
    ("folder", "how"),
    [
        (".done", "another user's"),
        (".failed", "writable by others"),
        (".pressroom", "writable by its group"),
        (".pressroom", "a link"),
        (".pressroom/work", "writable by others, sticky"),  # the watcher's own: never shared
    ],
)
def test_a_folder_not_the_watchers_own_is_refused_at_start_in_one_line(
    inbox: Path, tmp_path: Path, folder: str, how: str
) -> None:
    path = inbox / folder
    if how == "a link":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        path.symlink_to(tmp_path / "elsewhere")
    else:
        path.mkdir(parents=True, mode=0o700)
    if how == "another user's":
        if os.geteuid() != 0:
            pytest.skip("giving a folder to another user needs root (CI runs as root)")
        os.chown(path, ATTACKER, ATTACKER)
    elif how != "a link":
        path.chmod({"writable by others": 0o777, "writable by its group": 0o770}.get(how, 0o1777))
    with pytest.raises(UnsafeFolder) as refused:
        Inbox(inbox)
    assert refused.value.code == "UNSAFE_FOLDER" and refused.value.exit_code == 2
    assert "\n" not in refused.value.one_line() and folder.split("/")[-1] in str(refused.value)


def test_a_shared_folder_with_the_sticky_bit_is_accepted_and_state_may_live_elsewhere(
    inbox: Path, tmp_path: Path, clock: FakeClock
) -> None:
    """`.failed` writable by its group with the sticky bit (nobody may rename or remove
    another's file) is accepted; with ``state`` the watcher keeps nothing of its own in
    INBOX but `.done` and `.failed`; a state folder that is a link is refused."""
    (inbox / ".failed").mkdir()
    (inbox / ".failed").chmod(0o1770)
    state = tmp_path / "state"
    recorder = Recorder(codes={"bad.pdf": 2})
    watcher = _watcher(inbox, recorder, clock, state=state)
    (inbox / "bad.pdf").write_bytes(b"%PDF-1.7 bad")
    (inbox / "good.pdf").write_bytes(b"%PDF-1.7 good")
    _settle(watcher, clock)
    assert sorted(p.name for p in inbox.iterdir()) == [".done", ".failed"]
    assert sorted(p.name for p in state.iterdir()) == ["ledger", "tries", "work"]
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    assert (inbox / ".failed" / "bad.pdf.reason").read_text().endswith("\n")
    (tmp_path / "link").symlink_to(state)
    with pytest.raises(UnsafeFolder, match="link"):
        Inbox(inbox, state=tmp_path / "link")


# --- N6, N11 ----------------------------------------------------------------------------------


def test_a_sparse_file_over_the_limit_is_refused_from_its_size_without_being_read(
    inbox: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pressroom.hotfolder.watcher as watch

    def never(path: Path, limit: int) -> str:
        raise AssertionError(f"{path.name} was hashed")

    monkeypatch.setattr(watch, "_sha256_within", never)
    with (inbox / "huge.pdf").open("wb") as fh:
        fh.truncate(10 * 2**30)  # 10 GiB, none of it on disk
    recorder = Recorder()
    watcher = _watcher(inbox, recorder, clock, max_bytes=2**20)
    _settle(watcher, clock)
    assert recorder.read == []
    reason = (inbox / ".failed" / "huge.pdf.reason").read_text()
    assert reason.startswith("TOO_LARGE: huge.pdf: ") and "PRESSROOM_MAX_BYTES" in reason
    # one claimed before a restart (by a watcher with a larger limit) is judged the same way
    with (inbox / ".pressroom" / "work" / "claimed.pdf").open("wb") as fh:
        fh.truncate(10 * 2**30)
    watcher.step()
    assert recorder.read == []
    assert (inbox / ".failed" / "claimed.pdf.reason").read_text().startswith("TOO_LARGE: ")


def test_a_file_grown_past_the_limit_after_its_size_was_judged_is_never_read_past_it(
    inbox: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dropper who kept the file open grows it (holes) once its size was judged: the hash
    stops at the limit and the file is refused TOO_LARGE."""
    import pressroom.hotfolder as watch

    (inbox / "grows.pdf").write_bytes(b"%PDF small at first")
    recorder = Recorder()
    watcher = _watcher(inbox, recorder, clock, max_bytes=2**20)
    judged = watch.Inbox.size

    def then_grown(self: watch.Inbox, path: Path) -> int:
        size = judged(self, path)  # a claimed file, judged a last time before it is read
        with path.open("r+b") as fh:
            fh.truncate(10 * 2**30)  # after the judgement: 10 GiB, none of it on disk
        return size

    monkeypatch.setattr(watch.Inbox, "size", then_grown)
    _settle(watcher, clock)
    assert recorder.read == []
    reason = (inbox / ".failed" / "grows.pdf.reason").read_text()
    assert reason.startswith("TOO_LARGE: grows.pdf: ")


NASTY = "esc\x1b[31mRED\x1b[0m\x1b]0;pwned\x07 \u202efdp.\x9b2J\rline\nnext\u2028.pdf"


def _clean(text: str) -> None:
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in text), repr(text)
    assert not set(text) & {"\u202e", "\u2028"}, repr(text)


def test_names_reach_reason_files_escaped_one_line_ended_by_a_newline(
    inbox: Path, clock: FakeClock
) -> None:
    recorder = Recorder(codes={NASTY: 2})
    watcher = _watcher(inbox, recorder, clock)
    (inbox / NASTY).write_bytes(b"not a pdf")
    _settle(watcher, clock)
    (note,) = (inbox / ".failed").glob("*.reason")
    text = note.read_text()
    assert text.endswith("\n") and text.count("\n") == 1
    _clean(text[:-1])
    assert "\\x1b[31mRED" in text and "\\n" in text  # shown, not obeyed


def test_the_watch_command_prints_names_escaped_and_refuses_an_outdir_in_one_line(
    tmp_path: Path,
) -> None:
    """N11 on a real terminal's streams: a refused file's line on stderr carries no control
    character; an OUTDIR that cannot be made is one line, exit 2 (it was a traceback)."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / NASTY).write_bytes(b"not a pdf")
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(tmp_path)}
    done = subprocess.run(
        [str(PRESSROOM), "watch", str(inbox), "-o", str(tmp_path / "out"), "--once",
         "--settle", "0"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    for line in done.stderr.splitlines():
        _clean(line)
    assert "BAD_MIME: esc\\x1b[31mRED" in done.stderr
    (tmp_path / "file").write_text("a file, not a folder")
    made = subprocess.run(
        [str(PRESSROOM), "watch", str(inbox), "-o", str(tmp_path / "file" / "out"), "--once"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert made.returncode == 2 and made.stderr.count("\n") == 1, made.stderr
    assert "Traceback" not in made.stderr and made.stderr.startswith("BAD_REQUEST: ")


# --- client.download ------------------------------------------------------------------------


def test_a_download_never_writes_through_a_link_planted_in_the_output_folder(
    tmp_path: Path, victim: Path
) -> None:
    """`OUT/.NAME.part` was opened by name: a link there wrote the download over its target."""
    import httpx

    from pressroom.client import PressroomClient

    out = tmp_path / "out"
    out.mkdir()
    (out / ".scan.pdf.part").symlink_to(victim)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"%PDF-1.7 the output")

    http = httpx.Client(base_url="http://testserver", transport=httpx.MockTransport(answer))
    with PressroomClient("http://testserver", "key", http=http) as client:
        client.download("http://testserver/v1/artifacts/x", out / "scan.pdf")
    assert (out / "scan.pdf").read_bytes() == b"%PDF-1.7 the output"
    _untouched(victim)
    assert sorted(p.name for p in out.iterdir()) == [".scan.pdf.part", "scan.pdf"]


# --- S9 -------------------------------------------------------------------------------------


def _children(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from /proc: each process's parent)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for child, its in parents.items():
            if its == parent and child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_watcher_killed_takes_its_pool_with_it(tmp_path: Path) -> None:
    """`watch -j 2` killed with SIGKILL: its page processes notice their parent is gone and
    exit (they stayed, about 360 MB, with nobody to end them)."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(tmp_path)}
    proc = subprocess.Popen(
        [str(PRESSROOM), "watch", str(inbox), "-o", str(tmp_path / "out"), "-j", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], 120)  # a bound, not a pause
        line = proc.stderr.readline() if ready else ""  # said once its pool is up
        assert line.startswith("watching "), line
        pool = _children(proc.pid)
        assert len(pool) >= 2, pool  # the forkserver and its two page processes, at least
    finally:
        proc.kill()
        proc.wait(timeout=60)
        if proc.stderr is not None:
            proc.stderr.close()
    deadline = time.monotonic() + 60  # generous: a loaded machine; they go within a second
    while any(_alive(pid) for pid in pool) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in pool if _alive(pid)]
    for pid in left:  # never leave them behind, whatever the outcome
        os.kill(pid, signal.SIGKILL)
    assert left == [], "the pool outlived its watcher"


def test_retention_lines_the_watcher_did_not_write_are_dropped_not_a_traceback(
    inbox: Path, clock: FakeClock
) -> None:
    watcher = _watcher(inbox, Recorder(), clock)
    _settle(watcher, clock)
    due = inbox / ".pressroom" / "done-due"
    due.write_text(
        '{"at": "x", "name": "a.pdf", "ino": 1}\n'
        '{"at": 1, "name": 2, "ino": "z"}\n'
        '{"at": null, "name": "b.pdf", "ino": 2}\n'
        "[1, 2]\nnot json\n"
    )
    due.chmod(0o600)
    again = _watcher(inbox, Recorder(), clock)  # a restart reads the file
    _settle(again, clock)
    assert again.inbox._due == []


def test_a_folder_planted_at_the_name_a_move_chose_is_a_name_taken(
    inbox: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a shared .done another writer may make a folder at the very name chosen, between
    the look and the rename: the next free name is taken, the watcher goes on."""
    import pressroom.hotfolder.folders as watch

    (inbox / "a.pdf").write_bytes(b"%PDF-1.7 a scan")
    recorder = Recorder()
    watcher = _watcher(inbox, recorder, clock)
    real = watch._free
    planted: list[str] = []

    def then_taken(dir_fd: int, name: str) -> bool:
        free = real(dir_fd, name)
        done = inbox / ".done"
        in_done = done.is_dir() and os.fstat(dir_fd).st_ino == done.stat().st_ino
        if free and in_done and name == "a.pdf" and not planted:
            os.mkdir(name, dir_fd=dir_fd)  # just after the watcher looked
            planted.append(name)
        return free

    monkeypatch.setattr(watch, "_free", then_taken)
    _settle(watcher, clock)
    assert planted == ["a.pdf"]
    assert (inbox / ".done" / "a.pdf").is_dir()
    assert (inbox / ".done" / "a (2).pdf").read_bytes() == b"%PDF-1.7 a scan"


def test_the_watchers_own_folders_are_closed_to_readers_too(inbox: Path, clock: FakeClock) -> None:
    """An older watcher left .pressroom and its work/ at 0750: the inbox's group could list
    the files others dropped and read the ledger. The watcher's own folders become 0700."""
    for folder in (".pressroom", ".pressroom/work", ".pressroom/tries"):
        (inbox / folder).mkdir()
        (inbox / folder).chmod(0o750)
    watcher = _watcher(inbox, Recorder(), clock)
    _settle(watcher, clock)
    for folder in (".pressroom", ".pressroom/work", ".pressroom/tries"):
        assert stat.S_IMODE((inbox / folder).stat().st_mode) == 0o700, folder
