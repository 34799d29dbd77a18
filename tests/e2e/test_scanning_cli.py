"""The offline paths through a real clamd (``tests/clamd.py``): `pressroom process` with
``--scan`` or PRESSROOM_SCANNER=clamd, one process and several (`-j 2`, where a document's pages
are spread only after it was scanned), and the hot folder (`watch --once`). A finding is exit 2
with the one line ``MALWARE_FOUND: …``; a scanner that cannot be reached is retried for
PRESSROOM_SCANNER_RETRY_SECONDS, then exit 75 with ``SCANNER_UNAVAILABLE: …`` as the last line."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pressroom.synth import text_pdf
from tests.clamd import (
    EICAR_SIGNATURE,
    Clamd,
    SwappingProxy,
    clean_pdf,
    embedded_eicar_pdf,
    hashed_pdf,
    start_clamd,
)
from tests.e2e.conftest import PRESSROOM

pytestmark = pytest.mark.e2e

THREE = [["page one of three"], ["page two of three"], ["page three of three"]]


@pytest.fixture(scope="module")
def clamd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clamd]:
    folder = tmp_path_factory.mktemp("clamd")
    daemon = start_clamd(folder, hashed_pdf(folder / "hashed.pdf"))
    yield daemon
    daemon.stop()


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRESSROOM_")}
    return {**env, "PRESSROOM_SCRATCH_DIR": str(scratch), **extra}


def _process(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PRESSROOM), "process", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_process_scan_refuses_a_finding_with_exit_2_and_one_line(
    clamd: Clamd, tmp_path: Path
) -> None:
    infected = embedded_eicar_pdf(tmp_path / "letter.pdf")
    out = tmp_path / "out"
    env = _env(tmp_path, PRESSROOM_CLAMD_ADDRESS=str(clamd.socket_path))
    done = _process(env, "--scan", str(infected), "-o", str(out))
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("MALWARE_FOUND: ") and EICAR_SIGNATURE in last, done.stderr
    assert not (out / "letter.pdf").exists()
    # a clean one goes through the same scanner
    clean = _process(env, "--scan", str(clean_pdf(tmp_path / "clean.pdf")), "-o", str(out))
    assert clean.returncode == 0, clean.stderr
    assert (out / "clean.pdf").is_file()


def test_the_setting_alone_scans_every_file_of_a_spread_run(clamd: Clamd, tmp_path: Path) -> None:
    # -j 2: a plain document of several pages is spread over processes once it is counted,
    # and it is scanned before it is counted
    folder = tmp_path / "in"
    folder.mkdir()
    embedded_eicar_pdf(folder / "a-three.pdf", pages=THREE)
    text_pdf(THREE, folder / "b-clean.pdf")
    out = tmp_path / "out"
    env = _env(
        tmp_path, PRESSROOM_SCANNER="clamd", PRESSROOM_CLAMD_ADDRESS=f"127.0.0.1:{clamd.port}"
    )
    done = _process(env, "-j", "2", str(folder), "-o", str(out))
    assert done.returncode == 2, done.stderr
    refused = [line for line in done.stderr.splitlines() if line.startswith("MALWARE_FOUND: ")]
    assert len(refused) == 1 and "a-three.pdf" in refused[0], done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["b-clean.pdf"]


def test_a_scanner_that_cannot_be_reached_ends_exit_75_after_its_retries(
    tmp_path: Path,
) -> None:
    env = _env(
        tmp_path,
        PRESSROOM_SCANNER="clamd",
        PRESSROOM_CLAMD_ADDRESS=str(tmp_path / "no-clamd.sock"),
        PRESSROOM_SCANNER_RETRY_SECONDS="1.5",
    )
    out = tmp_path / "out"
    done = _process(env, str(clean_pdf(tmp_path / "clean.pdf")), "-o", str(out))
    assert done.returncode == 75, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith("SCANNER_UNAVAILABLE: ")
    assert not out.exists() or list(out.iterdir()) == []


def test_the_hot_folder_moves_an_infected_file_aside(clamd: Clamd, tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    embedded_eicar_pdf(inbox / "infected.pdf")
    clean_pdf(inbox / "clean.pdf")
    out = tmp_path / "out"
    env = _env(tmp_path, PRESSROOM_SCANNER="clamd", PRESSROOM_CLAMD_ADDRESS=str(clamd.socket_path))
    done = subprocess.run(
        [str(PRESSROOM), "watch", str(inbox), "-o", str(out), "--settle", "0.2", "--once"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2, done.stderr  # --once: a file was refused
    assert "MALWARE_FOUND" in done.stderr and EICAR_SIGNATURE in done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["clean.pdf"]
    assert (inbox / ".failed" / "infected.pdf").is_file()


# --- the bytes read are the bytes scanned ---------------------------------------------------

SWAPPED = [["SWAPPED IN AFTER THE SCAN"], ["two"], ["three"]]


def _letter(path: Path) -> Path:
    """Three pages of text, with room after its end for the infected file that replaces it."""
    text_pdf(THREE, path)
    with path.open("ab") as grow:  # bytes after %%EOF: a PDF reader ignores them
        grow.write(b"%" + b"0" * (64 << 10) + b"\n")
    return path


def _text(pdf: Path) -> str:
    import pypdfium2

    doc = pypdfium2.PdfDocument(pdf)
    try:
        return "".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))
    finally:
        doc.close()


@pytest.fixture
def swapper(clamd: Clamd, tmp_path: Path) -> Iterator[SwappingProxy]:
    """After clamd passes ``letter.pdf`` (anywhere under the test's ``in``), the file is
    rewritten in place with an infected one: what a dropper holding it open could do."""
    infected = embedded_eicar_pdf(tmp_path / "swap.pdf", pages=SWAPPED).read_bytes()
    (tmp_path / "in").mkdir()
    proxy = SwappingProxy(tmp_path / "p.sock", clamd.socket_path, tmp_path / "in", "letter.pdf",
                          infected)  # fmt: skip
    yield proxy
    proxy.close()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_process_reads_the_copy_it_scanned_never_the_input_again(
    swapper: SwappingProxy, tmp_path: Path, jobs: str
) -> None:
    # -j 2: the count scans, its chunks and their assembly read later, in other processes
    letter = _letter(tmp_path / "in" / "letter.pdf")
    out = tmp_path / "out"
    env = _env(tmp_path, PRESSROOM_CLAMD_ADDRESS=str(swapper.path))
    done = _process(env, "--scan", "-j", jobs, str(letter), "-o", str(out))
    assert swapper.swapped == 1, done.stderr  # the input did change after its verdict
    assert done.returncode == 0, done.stderr
    text = _text(out / "letter.pdf")
    assert "page two of three" in text and "SWAPPED" not in text
    assert list((tmp_path / "scratch").iterdir()) == []  # the copy went with its job


def test_the_hot_folder_reads_the_copy_it_scanned(swapper: SwappingProxy, tmp_path: Path) -> None:
    _letter(tmp_path / "in" / "letter.pdf")
    out = tmp_path / "out"
    env = _env(tmp_path, PRESSROOM_SCANNER="clamd", PRESSROOM_CLAMD_ADDRESS=str(swapper.path))
    done = subprocess.run(
        [str(PRESSROOM), "watch", str(tmp_path / "in"), "-o", str(out), "--settle", "0.2",
         "--once", "-j", "2"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert swapper.swapped == 1, done.stderr
    assert done.returncode == 0, done.stderr
    text = _text(out / "letter.pdf")
    assert "page two of three" in text and "SWAPPED" not in text


def test_detect_scans_each_input_and_refuses_a_finding(clamd: Clamd, tmp_path: Path) -> None:
    infected = embedded_eicar_pdf(tmp_path / "letter.pdf", pages=[["Jane Doe wrote this."]])
    clean = clean_pdf(tmp_path / "clean.pdf", marker="Jane Doe wrote this.")
    for env, flag in (
        (_env(tmp_path, PRESSROOM_CLAMD_ADDRESS=str(clamd.socket_path)), ["--scan"]),
        (_env(tmp_path, PRESSROOM_SCANNER="clamd", PRESSROOM_CLAMD_ADDRESS=clamd.tcp), []),
    ):
        done = subprocess.run(
            [str(PRESSROOM), "detect", *flag, str(infected), str(clean)],
            capture_output=True, text=True, env=env, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        refused = [line for line in done.stderr.splitlines() if line.startswith("MALWARE_")]
        assert len(refused) == 1 and refused[0].startswith("MALWARE_FOUND: letter.pdf: ")
        assert EICAR_SIGNATURE in refused[0]
        assert "letter.pdf" not in done.stdout and "clean.pdf" in done.stdout  # its findings


def test_a_held_copy_is_rebuilt_only_from_the_bytes_scanned(
    swapper: SwappingProxy, tmp_path: Path
) -> None:
    """A redaction held for review keeps the digest of the copy it read: the input swapped
    after its scan no longer matches it, so the desk refuses to rebuild from it."""
    import hashlib
    import json

    letter = _letter(tmp_path / "in" / "letter.pdf")
    scanned = hashlib.sha256(letter.read_bytes()).hexdigest()
    out = tmp_path / "out"
    env = _env(tmp_path, PRESSROOM_CLAMD_ADDRESS=str(swapper.path))
    done = _process(
        env, "--scan", "--redact", "name", "--review", "always", str(letter), "-o", str(out)
    )
    assert swapper.swapped == 1 and done.returncode == 3, done.stderr  # held
    note = json.loads((out / "review" / "letter.findings.json").read_text())
    assert note["input_sha256"] == scanned
    assert hashlib.sha256(letter.read_bytes()).hexdigest() != scanned
