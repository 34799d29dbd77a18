"""Spread benchmark (not a test): one mixed scan through `pressroom process -j 1`, `-j 2` and
OCRmyPDF `--jobs 2`, side by side in one run, and whether `-j 2` wrote `-j 1`'s bytes.

    .venv-test/bin/python bench/spread_bench.py [--rounds 2] [--order KINDS] [--jobs 2]
                                                [--systems j1,jN,ocrmypdf] [--keep DIR]

The file is letter-size pages of very different cost, in an uneven order so that fixed halves
would be unbalanced (default ``DSDLDDSDLDDL`` + ``LTLBLTDLTLBL``, 24 pages; the first half
holds nearly all the work): ``D`` a dense 300-dpi scan (44 lines of 10 pt, skewed 1.2°, so it
is levelled), ``S`` the same print speckled with dust (Tesseract works hardest on it), ``L`` a
light scan (5 lines of 12 pt), ``B`` a blank scan with a few specks, ``T`` a born-digital page
(real text, kept). Each round runs every system once, in the order given, so repeats
interleave on a shared machine.

For each run: wall seconds (start to exit), CPU seconds (user + system of the command and of
every process it started: this script makes itself their subreaper, so a pool's processes and
a forkserver orphaned at exit are waited for and counted), the load average before it, pages
a minute, and the speed-up of the best wall time against `-j 1`'s best. ``SOURCE_DATE_EPOCH``
pins Pressroom's dates: `-j 1` and `-j N` must write the same bytes, and the last line says
whether every Pressroom run did. OCRmyPDF (`--jobs N --output-type pdf --optimize 0
--skip-text --rotate-pages --deskew`: keep born-digital pages, level and turn as Pressroom
does) runs from `.venv-bench/bin/ocrmypdf` when it is there (`python3 -m venv .venv-bench &&
.venv-bench/bin/pip install ocrmypdf`); its row is left out with a note when it is not.

``--model`` measures instead what no load can blur: each page's CPU seconds, read by itself
in this process (real Tesseract, after one untimed warm-up read: the model load and imports
are printed apart), the fixed CPU cost of a chunk (a born-digital page's read, which does no
OCR), and from them the time two (``--jobs``) processes would take, each taking the next chunk
as it frees up: fixed halves, ``offline.spread.page_chunks`` and one page a chunk; how long the
first process to finish waits for the last; and the speed-up each allows over one process.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pikepdf

from bench.serving import PRESSROOM
from pressroom.synth import distort, draw_page, image_pdf, page_lines, text_pdf

ROOT = Path(__file__).resolve().parent.parent
OCRMYPDF = ROOT / ".venv-bench" / "bin" / "ocrmypdf"
ORDER = "DSDLDDSDLDDL" + "LTLBLTDLTLBL"
EPOCH = "1767225600"
PR_SET_CHILD_SUBREAPER = 36


def mixed_scan(path: Path, order: str = ORDER) -> Path:
    """The mixed file: one page a letter of ``order`` (see the module's docstring)."""
    scans, texts = [], []
    for n, kind in enumerate(order):
        seed = 2000 + n
        if kind == "D":
            page = draw_page(page_lines(seed, 44), font_pt=10).image
            scans.append(distort(page, skew=1.2))
        elif kind == "S":
            page = draw_page(page_lines(seed, 44), font_pt=10).image
            scans.append(distort(page, noise=0.0005, seed=seed))
        elif kind == "L":
            scans.append(draw_page(page_lines(seed, 5)).image)
        elif kind == "B":
            scans.append(distort(draw_page([]).image, noise=0.00002, seed=seed))
        elif kind == "T":
            texts.append(list(page_lines(seed, 30)))
        else:
            raise SystemExit(f"unknown page kind {kind!r} (D S L B T)")
    scanned = image_pdf(scans, path.with_name("scans.pdf"), 300) if scans else None
    born = text_pdf(texts, path.with_name("text.pdf")) if texts else None
    with pikepdf.new() as out:
        sources = {k: pikepdf.open(p) for k, p in (("s", scanned), ("t", born)) if p}
        taken = {"s": 0, "t": 0}
        for kind in order:
            which = "t" if kind == "T" else "s"
            out.pages.append(sources[which].pages[taken[which]])
            taken[which] += 1
        out.save(path)
        for pdf in sources.values():
            pdf.close()
    for p in (scanned, born):
        if p:
            p.unlink()
    return path


@dataclass
class Timed:
    system: str
    wall: float
    cpu: float
    load: float
    digest: str | None


def _subreaper() -> None:
    """Orphaned descendants (a pool's processes, a forkserver) become this process's
    children, so their CPU is counted when they are waited for."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(system: str, command: list[str], env: dict[str, str], output: Path) -> Timed:
    """``command`` run to its exit, then every process it left behind waited for."""
    load = os.getloadavg()[0]
    cpu = _children_cpu()
    start = time.monotonic()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    code = process.wait()
    wall = time.monotonic() - start
    while True:  # the orphans this run left (reparented here): their CPU is the run's too
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    if code != 0:
        raise SystemExit(f"{system} exited {code}")
    digest = hashlib.sha256(output.read_bytes()).hexdigest() if system != "ocrmypdf" else None
    return Timed(system, wall, _children_cpu() - cpu, load, digest)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--order", default=ORDER, help="page kinds, one letter a page (D S L B T)")
    parser.add_argument("--jobs", type=int, default=2, help="N for -j N and OCRmyPDF's --jobs")
    parser.add_argument("--systems", default="j1,jN,ocrmypdf")
    parser.add_argument("--keep", type=Path, help="a folder to keep the mixed file in")
    parser.add_argument("--model", action="store_true", help="per-page CPU and the schedules")
    args = parser.parse_args()
    if args.model:
        with tempfile.TemporaryDirectory() as tmp:
            model(mixed_scan(Path(tmp) / "mixed.pdf", args.order), args.order, args.jobs)
        return
    _subreaper()
    systems = args.systems.split(",")
    if "ocrmypdf" in systems and not OCRMYPDF.exists():
        print(f"OCRmyPDF row left out: {OCRMYPDF.relative_to(ROOT)} is not installed")
        systems.remove("ocrmypdf")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = mixed_scan(folder / "mixed.pdf", args.order)
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            (args.keep / "mixed.pdf").write_bytes(source.read_bytes())
        pages = len(args.order)
        kinds = {k: args.order.count(k) for k in "DSLBT" if k in args.order}
        half = pages // 2
        print(
            f"{pages}-page mixed file ({' '.join(f'{n} {k}' for k, n in kinds.items())}), "
            f"{source.stat().st_size / 1e6:.1f} MB; first half {args.order[:half]}, second "
            f"{args.order[half:]}; {os.cpu_count()} CPUs",
            flush=True,
        )
        env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH, "PRESSROOM_SCRATCH_DIR": str(folder)}
        results: list[Timed] = []
        for round_ in range(args.rounds):
            for system in systems:
                out = folder / f"out-{system}-{round_}"
                if system == "ocrmypdf":
                    out.mkdir()
                    target = out / "mixed.pdf"
                    command = [
                        str(OCRMYPDF), "--jobs", str(args.jobs), "--output-type", "pdf",
                        "--optimize", "0", "--skip-text", "--rotate-pages", "--deskew",
                        "--quiet", str(source), str(target),
                    ]  # fmt: skip
                else:
                    jobs = "1" if system == "j1" else str(args.jobs)
                    target = out / "mixed.pdf"
                    command = [
                        str(PRESSROOM),
                        "process",
                        str(source),
                        "-o",
                        str(out),
                        "-j",
                        jobs,
                        "-q",
                    ]
                done = timed(system, command, env, target)
                results.append(done)
                label = _label(system, args.jobs)
                print(
                    f"  round {round_ + 1} {label:<18} {done.wall:6.1f} s wall "
                    f"{done.cpu:6.1f} s CPU  {pages / done.wall * 60:6.1f} pages/min  "
                    f"load {done.load:4.1f}"
                    + (f"  sha256 {done.digest[:16]}" if done.digest else ""),
                    flush=True,
                )
    _summary(results, systems, args.jobs, pages)


def model(source: Path, order: str, jobs: int) -> None:
    """Per-page CPU seconds and the schedules they allow (see the module's docstring)."""
    from pressroom.offline.process import OutputChoice, job_options, shared_engine
    from pressroom.offline.spread import page_chunks
    from pressroom.pipeline.ocr import engine_for
    from pressroom.pipeline.plain import read_range
    from pressroom.settings import Settings
    from pressroom.templates import resolve_template

    os.environ["SOURCE_DATE_EPOCH"] = EPOCH
    settings = Settings()
    options = job_options(resolve_template("sample"), None, settings, False, OutputChoice())
    part = source.with_name("part.pdf")
    started = time.process_time()
    engine = engine_for(shared_engine(settings), options.languages)
    read_range(source, part, options, engine, range(len(order) - 1, len(order)))
    print(f"imports, model load and a first read: {time.process_time() - started:.2f} s CPU")
    costs = []
    for n in range(len(order)):
        started = time.process_time()
        read_range(source, part, options, engine, range(n, n + 1))
        costs.append(time.process_time() - started)
    born = [c for c, k in zip(costs, order, strict=True) if k == "T"]
    fixed = min(born) if born else 0.0
    for kind in dict.fromkeys(order):
        mine = [c for c, k in zip(costs, order, strict=True) if k == kind]
        print(f"  {kind}: {len(mine):2d} pages, {min(mine):.2f}-{max(mine):.2f} s CPU a page")
    pages = len(order)
    whole = sum(costs) - (pages - 1) * fixed  # one process, one chunk: -j 1's reading
    print(
        f"every page {sum(costs):.1f} s CPU read a page a chunk, {whole:.1f} s as one chunk; "
        f"a chunk's fixed cost about {fixed:.2f} s (a T page's read, no OCR)"
    )
    half = [(n * pages // jobs, (n + 1) * pages // jobs) for n in range(jobs)]
    for name, chunks in (
        ("fixed ranges", half),
        ("page_chunks", page_chunks(pages, jobs)),
        ("a page a chunk", [(n, n + 1) for n in range(pages)]),
    ):
        # each page's time was read as a chunk of its own, so it holds one fixed cost: a
        # chunk of k pages costs their times less k-1 fixed costs; the next chunk goes to
        # the process that frees first
        free = [0.0] * jobs
        for first, end in chunks:
            n = free.index(min(free))
            free[n] += sum(costs[first:end]) - (end - first - 1) * fixed
        span, idle = max(free), max(free) - min(free)
        sizes = " ".join(str(end - first) for first, end in chunks) if len(chunks) < 12 else "1"
        print(
            f"  {name:<15} {len(chunks):2d} chunks ({sizes}): {span:5.1f} s, the first process "
            f"idle {idle:4.1f} s at the end; {whole / span:.2f}x one process"
        )


def _label(system: str, jobs: int) -> str:
    return {"j1": "pressroom -j 1", "jN": f"pressroom -j {jobs}"}.get(
        system, f"ocrmypdf --jobs {jobs}"
    )


def _summary(results: list[Timed], systems: list[str], jobs: int, pages: int) -> None:
    best = {s: min(r.wall for r in results if r.system == s) for s in systems}
    print("system               best wall  median wall  median CPU  speed-up vs -j 1 (best)")
    for s in systems:
        walls = [r.wall for r in results if r.system == s]
        cpus = [r.cpu for r in results if r.system == s]
        against = f"{best['j1'] / best[s]:.2f}x" if "j1" in best else "-"
        print(
            f"{_label(s, jobs):<20} {best[s]:8.1f} s {statistics.median(walls):10.1f} s "
            f"{statistics.median(cpus):9.1f} s  {against}"
        )
    digests = {r.digest for r in results if r.digest}
    if digests:
        same = len(digests) == 1
        print(
            "pressroom outputs: every -j 1 and -j N run the same bytes"
            if same
            else f"pressroom outputs DIFFER: {len(digests)} digests"
        )


if __name__ == "__main__":
    main()
