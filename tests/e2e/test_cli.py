"""`pressroom process` as a user runs it: files in, PDFs out, one line per refusal, no litter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pressroom.synth import image_pdf, save_png, text_pdf
from tests.helpers import cer, content_rect, output_text, small_scan

pytestmark = pytest.mark.e2e

PRESSROOM = Path(sys.executable).with_name("pressroom")


def run_cli(
    *args: str, scratch: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(scratch), **(env or {})}
    return subprocess.run(
        [str(PRESSROOM), *args], capture_output=True, text=True, env=env, timeout=300, check=False
    )


def test_process_writes_one_pdf_per_input_and_leaves_no_scratch(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    scan = small_scan(seed=5, lines=3)
    png = save_png(scan.image, tmp_path / "form.png", 300)
    letter = text_pdf(
        [["A typed letter with more than enough characters of text."]], tmp_path / "letter.pdf"
    )
    out = tmp_path / "out"
    done = run_cli(
        "process", str(png), str(letter), "-o", str(out), "--template", "sample", scratch=scratch
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["form.pdf", "letter.pdf"]
    # page 0 is the sample brand's cover
    content = content_rect("sample", 612, 187.2)  # the bands fit inside the page
    assert cer(scan.text, output_text(out / "form.pdf", 1, content)) <= 0.05
    assert list(scratch.iterdir()) == []
    assert "2/2 delivered" in done.stdout


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"<!doctype html><html><body>hi</body></html>", "BAD_MIME"),
        (b"", "BAD_MIME"),
        (b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog", "CORRUPT"),
    ],
)
def test_refusal_is_one_line_exit_2_and_nothing_written(
    tmp_path: Path, content: bytes, code: str
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    bad = tmp_path / "upload.pdf"
    bad.write_bytes(content)
    out = tmp_path / "out"
    done = run_cli("process", str(bad), "-o", str(out), scratch=scratch)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{code}: ")
    assert "Traceback" not in done.stderr
    assert list(out.iterdir()) == []
    assert list(scratch.iterdir()) == []


def test_unknown_template_is_refused_before_any_work(tmp_path: Path) -> None:
    png = save_png(small_scan(lines=2, dpi=100).image, tmp_path / "a.png", 100)
    done = run_cli(
        "process", str(png), "-o", str(tmp_path / "out"), "--template", "nope", scratch=tmp_path
    )
    assert done.returncode == 2
    assert done.stderr.startswith("UNKNOWN_TEMPLATE: ")


def test_a_broken_template_is_one_line_bad_template_and_exit_2(tmp_path: Path) -> None:
    png = save_png(small_scan(lines=2, dpi=100).image, tmp_path / "a.png", 100)
    brand = tmp_path / "brand"
    brand.mkdir()
    (brand / "template.toml").write_text('name = "brand"\nversion = "1"\n[header]\nheight = "x"\n')
    out = tmp_path / "out"
    done = run_cli("process", str(png), "-o", str(out), "--template", str(brand), scratch=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "BAD_TEMPLATE: template [header] height must be a number from 0 to 200"
    ], done.stderr
    assert not out.exists() or list(out.iterdir()) == []


def test_one_bad_file_does_not_stop_the_others(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"GIF89a not really")
    good = save_png(small_scan(seed=2, lines=3).image, tmp_path / "good.png", 300)
    out = tmp_path / "out"
    done = run_cli("process", str(bad), str(good), "-o", str(out), scratch=scratch)
    assert done.returncode == 2
    assert [p.name for p in out.iterdir()] == ["good.pdf"]
    assert done.stderr.count("\n") == 1


def test_jobs_process_files_in_parallel_with_the_same_results(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    scans = [small_scan(seed=s, lines=2) for s in (31, 32, 33)]
    inputs = [str(save_png(s.image, tmp_path / f"f{i}.png", 300)) for i, s in enumerate(scans)]
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"not a document")
    out = tmp_path / "out"
    done = run_cli("process", *inputs, str(bad), "-o", str(out), "--jobs", "2", scratch=scratch)
    assert done.returncode == 2
    assert done.stderr.strip().startswith("BAD_MIME: bad.pdf")
    for i, s in enumerate(scans):
        assert cer(s.text, output_text(out / f"f{i}.pdf")) <= 0.05
    assert "3/4 delivered" in done.stdout
    assert list(scratch.iterdir()) == []


def _three_page_scan(tmp: Path) -> Path:
    pages = [small_scan(seed=s, lines=2, dpi=150).image for s in (41, 42, 43)]
    return image_pdf(pages, tmp / "bundle.pdf", 150)


def test_j2_spreads_one_documents_pages_and_writes_j1s_bytes(tmp_path: Path) -> None:
    """Real Tesseract, dates pinned by SOURCE_DATE_EPOCH: -j 2 reads the document's pages in
    two processes and delivers exactly what -j 1 delivers, its sidecar text too."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    scan = _three_page_scan(tmp_path)
    env = {"SOURCE_DATE_EPOCH": "1767225600"}
    runs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        done = run_cli(
            "process", str(scan), "-o", str(out), "-j", jobs, "--sidecar", "--template",
            "sample", scratch=scratch, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""  # not a terminal: no progress drawn
        runs.append(out)
    assert (runs[0] / "bundle.pdf").read_bytes() == (runs[1] / "bundle.pdf").read_bytes()
    assert (runs[0] / "bundle.txt").read_text() == (runs[1] / "bundle.txt").read_text()
    assert list(scratch.iterdir()) == []


def test_a_malformed_source_date_epoch_is_refused_before_any_work(tmp_path: Path) -> None:
    scan = save_png(small_scan(lines=2, dpi=100).image, tmp_path / "a.png", 100)
    out = tmp_path / "out"
    done = run_cli(
        "process", str(scan), "-o", str(out), scratch=tmp_path, env={"SOURCE_DATE_EPOCH": "soon"}
    )
    assert done.returncode == 2
    assert done.stderr.startswith("BAD_CONFIG: SOURCE_DATE_EPOCH must be whole seconds")
    assert not out.exists()


def test_on_a_terminal_each_file_has_a_line_and_the_run_a_total(tmp_path: Path) -> None:
    """stderr a terminal (a pty): one line per file being read and a total with pages a
    minute; the outcome lines stay on stdout and the drawn lines are cleared at the end."""
    import pty
    import select

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    scans = [_three_page_scan(tmp_path)]
    for n in range(2):
        copy = tmp_path / f"copy{n}.pdf"
        copy.write_bytes(scans[0].read_bytes())
        scans.append(copy)
    leader, follower = pty.openpty()
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(scratch), "COLUMNS": "100"}
    proc = subprocess.Popen(
        [str(PRESSROOM), "process", *map(str, scans), "-o", str(tmp_path / "out"), "-j", "2"],
        stdout=subprocess.PIPE,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    drawn = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        drawn += chunk
    stdout, _ = proc.communicate(timeout=120)
    os.close(leader)
    assert proc.returncode == 0
    text = drawn.decode("utf-8", "replace")
    assert "total (" in text and "pages/min" in text and "bundle.pdf" in text, text[-2000:]
    assert "9/9" in text  # the total counts every page of the three files
    lines = stdout.decode().splitlines()
    assert sum(line.startswith("ok  ") for line in lines) == 3
    assert lines[-1].startswith("3/3 delivered, 9 pages")


def test_skewed_scans_are_levelled_unless_the_pixels_must_be_kept(tmp_path: Path) -> None:
    import pikepdf

    from pressroom.synth import distort, save_jpeg

    scan = small_scan(seed=9, lines=4)
    jpeg = save_jpeg(distort(scan.image, skew=1.5), tmp_path / "skewed.jpg", 300)
    outputs = {}
    for flag in ((), ("--keep-pixels",)):
        out = tmp_path / ("kept" if flag else "levelled")
        done = run_cli("process", str(jpeg), "-o", str(out), *flag, scratch=tmp_path)
        assert done.returncode == 0, done.stderr
        assert ("1 levelled" in done.stdout) is not bool(flag), done.stdout
        result = out / "skewed.pdf"
        assert cer(scan.text, output_text(result)) <= 0.05
        with pikepdf.open(result) as pdf:
            (image,) = pdf.pages[0].get_images().values()
            outputs[bool(flag)] = bytes(image.read_raw_bytes())
    assert outputs[True] == jpeg.read_bytes()  # kept: the very bytes of the source
    assert outputs[False] != jpeg.read_bytes() and outputs[False][:2] == b"\xff\xd8"  # a JPEG


def test_a_bad_setting_is_one_line_naming_it_and_exit_2(tmp_path: Path) -> None:
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(tmp_path), "PRESSROOM_MAX_PAGES": "lots"}
    for args in (["process", "x.pdf", "-o", str(tmp_path / "out")], ["worker"]):
        done = subprocess.run(
            [str(PRESSROOM), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        assert done.returncode == 2
        assert done.stderr == (
            "error: BAD_CONFIG: PRESSROOM_MAX_PAGES: expected a positive whole number, got 'lots'\n"
        )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("first", [["keys", "create", "--tenant", "zz"], ["db", "upgrade"]])
def test_whichever_command_runs_first_the_data_dir_is_the_users_alone(
    tmp_path: Path, first: list[str]
) -> None:
    """Under a permissive umask too, and an existing data dir made 0755 is tightened."""
    import stat

    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    data.chmod(0o755)
    (data / "notes").mkdir(mode=0o755)
    env = {
        **os.environ,
        "PRESSROOM_DATA_DIR": str(data),
        "PRESSROOM_SCRATCH_DIR": str(tmp_path),
    }
    done = subprocess.run(
        ["sh", "-c", 'umask 000; exec "$@"', "sh", str(PRESSROOM), *first],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loose = {
        str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.stat().st_mode))
        for p in (data, *data.rglob("*"))
        if stat.S_IMODE(p.stat().st_mode) & 0o077
    }
    assert loose == {}
    assert (data / "pressroom.db").exists()


def test_serve_refuses_an_https_public_url_with_no_trusted_proxy(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PRESSROOM_DATA_DIR": str(tmp_path / "data"),
        "PRESSROOM_SCRATCH_DIR": str(tmp_path),
        "PRESSROOM_PUBLIC_URL": "https://desk.example.org",
    }
    env.pop("PRESSROOM_TRUSTED_PROXIES", None)
    done = subprocess.run(
        [str(PRESSROOM), "serve", "--port", "0", "--workers", "0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "PRESSROOM_TRUSTED_PROXIES" in done.stderr
    assert not (tmp_path / "data").exists()  # refused before anything was made


def test_watch_stops_on_sigterm_after_its_file_and_a_restart_does_the_rest_once(
    tmp_path: Path,
) -> None:
    """A real watcher on a burst: SIGTERM once the first output is out ends it with exit 0
    after the file it was reading; started again with --once it does the rest, none twice, and
    moves the file it refuses aside with its reason."""
    import signal

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    for n in range(4):
        save_png(small_scan(seed=60 + n, lines=2, dpi=100).image, inbox / f"s{n}.png", 100)
    (inbox / "notes.txt").write_text("not a scan")
    out = tmp_path / "out"
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(scratch)}
    watch = [str(PRESSROOM), "watch", str(inbox), "-o", str(out), "--settle", "0.2"]
    proc = subprocess.Popen(
        [*watch, "--interval", "0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith("ok  "), first
    proc.send_signal(signal.SIGTERM)
    _rest, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "done," in err.splitlines()[-1]
    before = sorted(p.name for p in out.iterdir())
    assert 1 <= len(before) < 5
    refused_before = (inbox / ".failed" / "notes.txt").exists()
    again = subprocess.run(
        [*watch, "--once"], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    # --once exits 2 when it refused a file (notes.txt, unless the first run did)
    assert again.returncode == (0 if refused_before else 2), again.stderr
    assert sorted(p.name for p in out.iterdir()) == [f"s{n}.pdf" for n in range(4)]
    assert sorted(p.name for p in (inbox / ".done").iterdir()) == [f"s{n}.png" for n in range(4)]
    refused = sorted(p.name for p in (inbox / ".failed").iterdir())
    assert refused == ["notes.txt", "notes.txt.reason"]
    assert (inbox / ".failed" / "notes.txt.reason").read_text().startswith("BAD_MIME: notes.txt")
    assert oct((out / "s0.pdf").stat().st_mode & 0o777) == "0o640"
    assert oct(out.stat().st_mode & 0o777) == "0o750"
    assert list(scratch.iterdir()) == []


def test_a_second_ctrl_c_stops_watch_at_once_and_the_next_start_reads_the_file(
    tmp_path: Path,
) -> None:
    """Ctrl-C twice while a pool reads a long scan: the watcher exits 130 at once (without
    finishing the scan, which one Ctrl-C would), says the file stays claimed, writes no
    output; the next start reads that file from the start and delivers it once."""
    import signal
    import time

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    pages = [small_scan(seed=80 + n, lines=6, dpi=200).image for n in range(12)]
    image_pdf(pages, tmp_path / "long.pdf", 200).rename(inbox / "long.pdf")
    out = tmp_path / "out"
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(scratch)}
    watch = [str(PRESSROOM), "watch", str(inbox), "-o", str(out), "--settle", "0.2", "-j", "2"]
    proc = subprocess.Popen(
        [*watch, "--interval", "0.1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    work = inbox / ".pressroom" / "work"
    deadline = time.monotonic() + 60
    while not (work.is_dir() and any(work.iterdir())):  # claimed: its reading has begun
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=120)
    # one Ctrl-C alone finishes the scan and exits 0 with its output: 130 and none is "at once"
    assert proc.returncode == 130, err
    assert "stopped at once: 1 file(s) left claimed" in err, err
    assert not out.exists() or list(out.iterdir()) == []
    again = subprocess.run(
        [*watch, "--once"], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert again.returncode == 0, again.stderr
    assert [p.name for p in out.iterdir()] == ["long.pdf"]
    assert [p.name for p in (inbox / ".done").iterdir()] == ["long.pdf"]
    assert list(work.iterdir()) == [] and list(scratch.iterdir()) == []


def test_stdin_to_stdout_is_the_same_pdf_and_a_held_one_writes_nothing(tmp_path: Path) -> None:
    """`process - -o -` in a pipe: the PDF on stdout is the one a folder run writes; a
    document held for review exits 3 with stdout empty; -o - takes one input and no
    sidecar; nothing is left in scratch."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    scan = save_png(small_scan(seed=71, lines=3).image, tmp_path / "in.png", 300)
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(scratch), "SOURCE_DATE_EPOCH": "1767225600"}

    def pipe(*args: str) -> subprocess.CompletedProcess[bytes]:
        with scan.open("rb") as stdin:
            return subprocess.run(
                [str(PRESSROOM), "process", *args], stdin=stdin, capture_output=True,
                env=env, timeout=300, check=False,
            )  # fmt: skip

    piped = pipe("-", "-o", "-", "--template", "sample")
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr.decode().startswith("ok  -  1 page(s)")
    folder = run_cli(
        "process", str(scan), "-o", str(tmp_path / "out"), "--template", "sample",
        scratch=scratch, env={"SOURCE_DATE_EPOCH": "1767225600"},
    )  # fmt: skip
    assert folder.returncode == 0, folder.stderr
    assert piped.stdout == (tmp_path / "out" / "in.pdf").read_bytes()
    named = pipe("-", "-o", str(tmp_path / "named"))  # stdin into a folder: stdin.pdf
    assert named.returncode == 0 and (tmp_path / "named" / "stdin.pdf").exists()
    held = pipe("-", "-o", "-", "--redact", "name", "--review", "always")
    assert held.returncode == 3 and held.stdout == b""
    assert b"REVIEW_REQUESTED" in held.stderr and b"not kept with -o -" in held.stderr
    other = tmp_path / "other.png"
    other.write_bytes(scan.read_bytes())
    two = run_cli("process", str(scan), str(other), "-o", "-", scratch=scratch)
    assert two.returncode == 2 and two.stderr.startswith("BAD_REQUEST: -o - (stdout) takes one")
    sidecar = pipe("-", "-o", "-", "--sidecar")
    assert sidecar.returncode == 2 and sidecar.stdout == b""
    assert list(scratch.iterdir()) == []


def test_ocr_redo_and_force_read_pages_that_carry_text_and_j2_writes_j1s_bytes(
    tmp_path: Path,
) -> None:
    """--ocr on a born-digital document under a wrong hidden layer: skip keeps the layer,
    redo drops it and keeps the visible words, force renders and reads every page (-j 2 the
    same bytes as -j 1); a made-up mode is refused before any work."""
    from tests.layers import digital_page

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    src = digital_page(tmp_path / "d.pdf", "Visible heading words", "Qzx garbage layer", pages=2)
    env = {"SOURCE_DATE_EPOCH": "1767225600"}
    texts = {}
    for mode, jobs in (("skip", "1"), ("redo", "1"), ("force", "1"), ("force", "2")):
        out = tmp_path / f"{mode}{jobs}"
        done = run_cli(
            "process", str(src), "-o", str(out), "--ocr", mode, "-j", jobs,
            scratch=scratch, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        texts[mode + jobs] = subprocess.run(
            ["pdftotext", str(out / "d.pdf"), "-"], capture_output=True, text=True, check=True
        ).stdout
    assert "Qzx garbage layer" in texts["skip1"]
    assert "Qzx" not in texts["redo1"] and texts["redo1"].count("Visible heading words") == 2
    assert "Qzx" not in texts["force1"] and texts["force1"].count("Visible heading words") == 2
    assert (tmp_path / "force1" / "d.pdf").read_bytes() == (
        tmp_path / "force2" / "d.pdf"
    ).read_bytes()
    bad = run_cli(
        "process", str(src), "-o", str(tmp_path / "bad"), "--ocr", "again", scratch=scratch
    )
    assert bad.returncode == 2 and "--ocr" in bad.stderr and not (tmp_path / "bad").exists()
    assert list(scratch.iterdir()) == []
