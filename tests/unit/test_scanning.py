"""The scanner's rules without a scanner: clamd's answers read strictly, a verdict judged fail
closed, the offline retries driven by a scripted clock (no sleeping), a scanner outage
dead-lettered under its own code once the attempts are spent, and the settings checked."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pressroom.engines.clamd import parse_reply
from pressroom.errors import BadConfig, MalwareFound, ScannerUnavailable, ScanTooLarge, TooLarge
from pressroom.jobs.backoff import RetryPolicy
from pressroom.scanning import Clean, Found, TooLong, Verdict, judge, scan_patiently
from pressroom.settings import Settings


@pytest.mark.parametrize(
    ("raw", "verdict"),
    [
        (b"stream: OK\0", Clean()),
        (b"stream: Win.Test.EICAR_HDB-1 FOUND\0", Found("Win.Test.EICAR_HDB-1")),
        (b"stream: Pressroom.Test.UNOFFICIAL FOUND\0", Found("Pressroom.Test.UNOFFICIAL")),
        (b"INSTREAM size limit exceeded. ERROR\0", TooLong()),
    ],
)  # fmt: skip
def test_clamds_answers_read_strictly(raw: bytes, verdict: Verdict) -> None:
    assert parse_reply(raw) == verdict


@pytest.mark.parametrize(
    "raw",
    [b"", b"\0", b"OK\0", b"stream: ok\0", b"stream: OK\0extra", b"stream: \x01bad FOUND\0",
     b"stream: " + b"A" * 300 + b" FOUND\0", b"UNKNOWN COMMAND\0",
     # cut short: a z-command's answer ends with a NUL, and one without it is not whole
     b"stream: OK", b"stream: OK\n", b"INSTREAM size limit exceeded. ERROR"],
)  # fmt: skip
def test_every_other_answer_is_no_verdict(raw: bytes) -> None:
    with pytest.raises(ScannerUnavailable):
        parse_reply(raw)


def test_only_clean_passes() -> None:
    judge(Clean())
    with pytest.raises(MalwareFound, match=r"Sig\.Name"):
        judge(Found("Sig.Name"))
    with pytest.raises(ScanTooLarge):
        judge(TooLong())


@dataclass
class Clock:
    now: float = 0.0
    slept: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@dataclass
class Flaky:
    """Unavailable ``down`` times, then clean."""

    down: int
    calls: int = 0
    timeouts: list[float | None] = field(default_factory=list)
    clock: Clock | None = None
    takes_s: float = 0.0  # each try's time on ``clock`` (a scanner that hangs till its timeout)

    def scan(self, chunks: Iterable[bytes], timeout_s: float | None = None) -> Verdict:
        self.calls += 1
        self.timeouts.append(timeout_s)
        if self.clock is not None:
            self.clock.now += self.takes_s if timeout_s is None else min(self.takes_s, timeout_s)
        for _ in chunks:
            pass
        if self.calls <= self.down:
            raise ScannerUnavailable("clamd cannot be reached (refused)")
        return Clean()

    def ping(self, timeout_s: float | None = None) -> None: ...


def test_offline_retries_back_off_within_the_budget_then_give_up(tmp_path: Path) -> None:
    source = tmp_path / "a.pdf"
    source.write_bytes(b"%PDF-1.7\n")
    clock = Clock()
    back = Flaky(down=3)
    assert scan_patiently(back, source, 60, sleep=clock.sleep, clock=clock) == Clean()
    assert clock.slept == [1.0, 2.0, 4.0]
    clock = Clock()
    never = Flaky(down=10**6)
    with pytest.raises(ScannerUnavailable):
        scan_patiently(never, source, 60, sleep=clock.sleep, clock=clock)
    assert sum(clock.slept) == 60 and clock.slept[:3] == [1.0, 2.0, 4.0]  # about a minute
    clock = Clock()
    with pytest.raises(ScannerUnavailable):  # a budget of 0: one try
        scan_patiently(Flaky(down=1), source, 0, sleep=clock.sleep, clock=clock)
    assert clock.slept == []


def test_offline_retries_never_wait_past_the_budget_on_a_hanging_scanner(
    tmp_path: Path,
) -> None:
    """Each try after the first has its timeout cut to what is left of the budget: a scanner
    that hangs till its 60 s timeout holds a 100 s budget about 100 s, not 100 + 60."""
    source = tmp_path / "a.pdf"
    source.write_bytes(b"%PDF-1.7\n")
    clock = Clock()
    hangs = Flaky(down=10**6, clock=clock, takes_s=60.0)
    with pytest.raises(ScannerUnavailable):
        scan_patiently(hangs, source, 100, sleep=clock.sleep, clock=clock)
    assert hangs.timeouts[0] is None  # the first try: the scanner's own timeout
    assert all(t is not None and 0 < t <= 100 for t in hangs.timeouts[1:])
    assert clock.now <= 100


def test_a_scanner_outage_is_dead_lettered_under_its_own_code() -> None:
    policy = RetryPolicy(max_attempts=3, uniform=lambda a, b: a)
    said = "clamd cannot be reached (refused)"

    def decide(attempts: int, code: str) -> tuple[bool, str]:
        d = policy.decide(
            attempts=attempts, max_attempts=3, code=code, message=said, permanent=False
        )
        return d.retry, d.reason

    assert decide(1, "SCANNER_UNAVAILABLE") == (True, "SCANNER_UNAVAILABLE")
    assert decide(3, "SCANNER_UNAVAILABLE") == (False, "SCANNER_UNAVAILABLE")
    assert decide(3, "STORAGE_UNAVAILABLE") == (False, "RETRIES_EXHAUSTED")  # as before


def test_scanner_settings_are_checked() -> None:
    default = Settings.from_env({})
    assert default.scanner.kind == "none"
    on = Settings.from_env(
        {
            "PRESSROOM_SCANNER": "clamd",
            "PRESSROOM_CLAMD_ADDRESS": "clamd:3310",
            "PRESSROOM_SCANNER_TIMEOUT": "12.5",
        }
    )
    assert (on.scanner.kind, on.scanner.clamd_address, on.scanner.timeout_s) == (
        "clamd",
        "clamd:3310",
        12.5,
    )
    for bad in (
        {"PRESSROOM_SCANNER": "sophos"},
        {"PRESSROOM_CLAMD_ADDRESS": "clamd"},
        {"PRESSROOM_CLAMD_ADDRESS": "clamd:99999"},
        {"PRESSROOM_CLAMD_ADDRESS": "tcp://clamd:3310"},  # a URL, not a socket path
        {"PRESSROOM_SCANNER_TIMEOUT": "0"},
    ):
        with pytest.raises(BadConfig, match=next(iter(bad))):
            Settings.from_env(bad)


def test_the_scanned_copy_stops_past_the_size_limit_before_any_scan(tmp_path: Path) -> None:
    """The copy that is scanned and read is bounded: a file past PRESSROOM_MAX_BYTES (one
    still growing) is TOO_LARGE, and no scanner is asked (none listens here)."""
    from pressroom.offline.process import scanned_copy

    settings = Settings.from_env(
        {
            "PRESSROOM_SCANNER": "clamd",
            "PRESSROOM_CLAMD_ADDRESS": str(tmp_path / "none.sock"),
            "PRESSROOM_MAX_BYTES": "1000",
        }
    )
    big = tmp_path / "big.pdf"
    big.write_bytes(b"%PDF-1.7\n" + b"0" * 2000)
    folder = tmp_path / "job"
    folder.mkdir()
    with pytest.raises(TooLarge):
        scanned_copy(big, folder, settings, None)
    assert (folder / "source" / "big.pdf").stat().st_size == 1001  # one byte past, no more
    # without a scanner, the input itself is read: no copy
    assert scanned_copy(big, folder, Settings.from_env({}), None) == big
