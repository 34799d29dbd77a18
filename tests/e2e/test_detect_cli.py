"""`pressroom detect` as a person runs it: a page past the findings cap is printed up to the cap
and said once on stderr (exit 0: the dry run reports, it does not fail); `--ocr` reads pages as
a job in that mode would; file names reach the terminal escaped."""

from __future__ import annotations

import json
from pathlib import Path

from pressroom.synth import text_pdf
from tests.e2e.test_cli import run_cli

ACCOUNTS = ["12345678", "23456789", "34567890", "45678901", "56789012"]


def test_detect_prints_a_crowded_page_up_to_the_cap_and_says_so(tmp_path: Path) -> None:
    src = text_pdf(
        [[f"Account number: {a}" for a in ACCOUNTS], ["Account number: 67890123"]],
        tmp_path / "refunds.pdf",
    )
    env = {"PRESSROOM_MAX_PAGE_FINDINGS": "3"}
    run = run_cli("detect", "--redact", "account-number", str(src), scratch=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    found = [json.loads(line) for line in run.stdout.splitlines()]
    assert [f["page"] for f in found] == [1, 1, 1, 2]
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("TOO_MANY_FINDINGS: refunds.pdf: page 1: 5 ")
    # at the cap, all of it and nothing on stderr
    env = {"PRESSROOM_MAX_PAGE_FINDINGS": "5"}
    run = run_cli("detect", "--redact", "account-number", str(src), scratch=tmp_path, env=env)
    assert run.returncode == 0 and len(run.stdout.splitlines()) == 6 and not run.stderr.strip()


def test_detect_reads_pages_as_the_ocr_mode_does(tmp_path: Path) -> None:
    src = text_pdf([["Account number: 12345678"]], tmp_path / "in.pdf")
    for mode in ("skip", "redo", "force"):
        run = run_cli(
            "detect", "--redact", "account-number", "--ocr", mode, str(src), scratch=tmp_path
        )
        assert run.returncode == 0, (mode, run.stderr)
        assert [json.loads(line)["value"] for line in run.stdout.splitlines()] == ["12345678"]
    run = run_cli("detect", "--ocr", "sometimes", str(src), scratch=tmp_path)
    assert run.returncode == 2 and "invalid choice" in run.stderr


def test_file_names_reach_the_terminal_escaped(tmp_path: Path) -> None:
    name = "esc\x1b[31mRED\x1b[0m\nline\u202e.pdf"
    bad = tmp_path / name
    bad.write_bytes(b"not a pdf at all")
    for args in (
        ["process", str(bad), "-o", str(tmp_path / "out")],
        ["detect", "--redact", "name", str(bad)],
    ):
        run = run_cli(*args, scratch=tmp_path)
        assert run.returncode == 2, run.stderr
        line = run.stderr.strip()
        assert "\n" not in line and "\x1b" not in line and "\u202e" not in line
        assert line.startswith("BAD_MIME: ") and "esc\\x1b[31mRED" in line and "\\n" in line
