"""How every reader reads the output, side by side with OCRmyPDF, on scans as varied as real ones;
then one big file split across worker processes, in the same run.

For each half of the generated corpus (tests/scans.py: ``dev``, which we tune on, and
``held-out``, which we never do) and each kind of page (skewed, rotated, faint, fax, phone
photo, small print, two columns or a table), in one run on one pinned core:

- Tesseract's bare recognise time on the same pixels (the limit), Pressroom levelled (the
  default: each page read at the scale its print needs, blank pages not read), Pressroom as
  it was before that (``native``: every page read at its own resolution), Pressroom with
  ``--keep-pixels``, and OCRmyPDF (``--rotate-pages --deskew``), in interleaved rounds (best
  of ``--rounds``): pages/min/core from CPU time;
- the CER of every page in each of seven readers (poppler, PDFium, pdfminer, pdf.js, PDFBox,
  MuPDF, Ghostscript), for each system;
- the scale each page was read at, and per page whether reading at it cost any reader
  accuracy against the native reading;
- each output's size as a share of its source's;
- what levelling costs: the ``straighten`` stage's time per levelled page, as a share of its
  page's time, and the levelled run against the kept one.

Then, with the process's own CPU set given back (the pin is inherited, and worker processes
sharing one core could not be faster than one), bench/split_bench.py's measurement: a
``--split-pages`` scan (400; 0 skips it) through ``pressroom serve`` and ``pressroom worker
--concurrency N`` for each N of ``--split-workers`` (``1,all``: all = the CPUs this process
could use before it pinned itself), admission to artifact, the speed-up against the target
(1.8x with 2 workers), and the load average before and after (the machine is shared). The
serve and worker run this checkout's code (``PYTHONPATH``), as the reading halves do.

Last, a summary puts the headline figures of every half and the split side by side.

Prints figures; asserts nothing. About 10-15 minutes with ``--per-kind 1 --rounds 2``, and
about 8 more for the 400-page split on 2 cores.

    .venv-test/bin/python bench/reading_bench.py [--per-kind 1] [--rounds 2] [--halves dev,held-out]
        [--split-pages 400] [--split-size 50] [--split-workers 1,all]

OCRmyPDF is looked for in .venv-bench (``python3 -m venv .venv-bench &&
.venv-bench/bin/pip install ocrmypdf``) or on PATH; without it its columns are left out.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.split_bench import big_scan, measure  # noqa: E402
from pressroom.bench import OCRMYPDF_ARGS, cpu_children, find_ocrmypdf  # noqa: E402
from pressroom.engines.straighten import STRAIGHTEN_MIN  # noqa: E402
from tests.readers import READERS, cer, read_all  # noqa: E402
from tests.scans import HALVES, KINDS, Document, Page, generate  # noqa: E402

SYSTEMS = ("pressroom", "native", "keep-pixels", "ocrmypdf")
HEAVY = ("skewed", "rotated", "faint", "fax", "photo")  # the held-out-style pages
LIMIT_TARGET = 1.30  # issue 16: Pressroom's pages/min/core as a multiple of the limit
SPLIT_TARGET = 1.8  # issue 16: 400 pages, admission to artifact, 1 -> 2 worker processes

# Run in a child so each system's CPU time is its own, Tesseract included (tesserocr runs
# in-process). One line of JSON per document: CPU seconds, stage timings, page skews.
_PRESSROOM = """
import json, sys, time
from pathlib import Path
from pressroom.engines.tesseract import TesseractEngine
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.plain import process_document
from pressroom.settings import Settings
from pressroom.templates import resolve_template
import pressroom.pipeline.plain as plain
mode = sys.argv[1]
keep = mode == "keep"
if mode == "native":  # as before issue 16: every page read at its own resolution
    fitted = plain.OcrStage
    plain.OcrStage = lambda *a, **k: fitted(*a, **{**k, "fit_resolution": False,
                                                   "skip_blank": False})
engine = TesseractEngine(tessdata_prefix=Settings.from_env().tessdata_prefix)
shown = []
class Seen:  # the real engine, noting the width of each image it is shown
    name = property(lambda self: engine.name)
    def recognize(self, image, **kw):
        shown.append(image.width)
        return engine.recognize(image, **kw)
    def detect_orientation(self, image, **kw):
        return engine.detect_orientation(image, **kw)
seen = Seen()
scales = []  # per page: the scale it was recognised at (its last reading), 0 when not read
class Noting:  # the stage the pipeline makes, noting each page's scale
    def __init__(self, stage):
        self.stage = stage
    def __call__(self, image, dpi, **kw):
        before = len(shown)
        reading = self.stage(image, dpi, **kw)
        scales.append(shown[-1] / reading.size[0] if len(shown) > before else 0.0)
        return reading
made = plain.OcrStage
plain.OcrStage = lambda *a, **k: Noting(made(*a, **k))
warm = True  # a worker is long-lived: its imports and Tesseract's start are not a page's cost
for line in sys.stdin:
    src, out = line.rstrip("\\n").split("\\t")
    if warm:  # the first document once untimed, as the limit starts its API before timing
        process_document(Path(src), Path(out),
            JobOptions(template=resolve_template(None), keep_pixels=keep), seen)
        warm = False
    shown.clear()
    scales.clear()
    t = time.process_time()
    r = process_document(Path(src), Path(out),
        JobOptions(template=resolve_template(None), keep_pixels=keep), seen)
    print(json.dumps({"cpu": time.process_time() - t, "timings": r.timings,
        "skews": list(r.skews), "rotations": list(r.rotations),
        "levelled": r.levelled_pages, "pages": r.pages, "shown": list(shown),
        "scales": list(scales)}), flush=True)
"""


@dataclass
class Run:
    cpu: float = float("inf")  # best over rounds
    output: Path | None = None
    timings: dict[str, float] = field(default_factory=dict)
    skews: list[float] = field(default_factory=list)
    rotations: list[int] = field(default_factory=list)
    levelled: int = 0
    shown: list[int] = field(default_factory=list)  # widths of the images recognised
    scales: list[float] = field(default_factory=list)  # per page, its recognition scale; 0: unread


@dataclass(frozen=True)
class HalfFigures:
    """The headline figures of one half, as report() computed and printed them."""

    half: str
    pages: int
    limit: float  # pages/min/core, recognise-only on the pixels as scanned
    throughput: dict[str, float]  # pages/min/core, per system
    of_limit: dict[str, float]  # the same as a multiple of the limit
    worst_cer: dict[str, float]  # worst page in any reader, per system
    # Pressroom as a multiple of each limit: as scanned, and upright and levelled (every
    # pixel; Tesseract reads a skewed or turned page as scanned fast and wrong); with and
    # without the documents that hold a blank page; and the ceiling's multiple of the limit
    multiples: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class SplitFigures:
    pages: int
    split: int
    seconds: dict[int, float]  # best admission-to-artifact seconds, per worker processes
    load: tuple[float, float]  # 1-minute load average before and after


def limit_seconds(
    docs: list[Document], turns: dict[str, list[tuple[int, float, float]]] | None = None
) -> dict[str, float]:
    """Bare Tesseract recognise CPU time per document: on the pixels as scanned, or (with
    ``turns``: each page's clockwise turn, levelling angle and recognition scale) on the pixels
    Pressroom read; a page at scale 0 (blank, not read) costs nothing."""
    code = """
import json, sys, time
from pathlib import Path
import pikepdf
from PIL import Image, ImageSequence
from pressroom.engines.straighten import level
from pressroom.engines.tesseract import TesseractEngine
from pressroom.pipeline.ocr import rotate_cw
from pressroom.pipeline.resolution import reduce
from pressroom.settings import Settings
api = TesseractEngine(tessdata_prefix=Settings.from_env().tessdata_prefix)._recognizer()
def frames(path):
    if path.suffix == ".pdf":
        with pikepdf.open(path) as pdf:
            for page in pdf.pages:
                (raw,) = page.get_images().values()
                yield pikepdf.PdfImage(raw).as_pil_image()
    else:
        with Image.open(path) as im:
            for f in ImageSequence.Iterator(im):
                yield f.copy()
for line in sys.stdin:
    path, turns = line.rstrip("\\n").split("\\t")
    turns = json.loads(turns)
    total = 0.0
    for i, im in enumerate(frames(Path(path))):
        g = im.convert("L")
        if turns:
            if not turns[i][2]:
                continue
            g = level(rotate_cw(g, turns[i][0]), turns[i][1])
            g = reduce(g, turns[i][2]) if turns[i][2] < 1.0 else g
        data = g.tobytes()
        t = time.process_time()
        api.SetImageBytes(data, g.width, g.height, 1, g.width)
        api.SetSourceResolution(300); api.Recognize(); api.Clear()
        total += time.process_time() - t
    print(json.dumps({"cpu": total}), flush=True)
"""
    given = turns or {}
    out = subprocess.run(
        [sys.executable, "-c", code],
        input="".join(f"{d.path}\t{json.dumps(given.get(d.path.stem, []))}\n" for d in docs),
        capture_output=True,
        text=True,
        check=True,
        env=_env(),
    )
    return {
        d.path.stem: json.loads(line)["cpu"]
        for d, line in zip(docs, out.stdout.splitlines(), strict=True)
    }


def _env() -> dict[str, str]:
    return {**os.environ, "OMP_THREAD_LIMIT": "1", "PYTHONPATH": str(ROOT)}


def run_pressroom(docs: list[Document], folder: Path, mode: str, runs: dict[str, Run]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{d.path}\t{folder / (d.path.stem + '.pdf')}\n" for d in docs)
    out = subprocess.run(
        [sys.executable, "-c", _PRESSROOM, mode],
        input=lines,
        capture_output=True,
        text=True,
        env=_env(),
    )
    if out.returncode:
        raise SystemExit(f"pressroom failed:\n{out.stderr[-2000:]}")
    for d, line in zip(docs, out.stdout.splitlines(), strict=True):
        got = json.loads(line)
        run = runs.setdefault(d.path.stem, Run())
        if got["cpu"] < run.cpu:
            run.cpu, run.timings = got["cpu"], got["timings"]
        run.output = folder / (d.path.stem + ".pdf")
        run.skews, run.levelled = got["skews"], got["levelled"]
        run.rotations = got["rotations"]
        run.shown = got["shown"]
        run.scales = got["scales"]


def run_ocrmypdf(exe: str, docs: list[Document], folder: Path, runs: dict[str, Run]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for d in docs:
        out = folder / (d.path.stem + ".pdf")
        before = cpu_children()
        done = subprocess.run(
            [
                exe,
                *OCRMYPDF_ARGS,
                "--image-dpi",  # for images whose own resolution is not credible (a phone's 72)
                "300",
                "--quiet",
                str(d.path),
                str(out),
            ],
            capture_output=True,
            text=True,
            env=_env(),
        )
        run = runs.setdefault(d.path.stem, Run())
        if done.returncode:
            print(f"  ocrmypdf failed on {d.path.name}: {done.stderr.strip()[-300:]}")
            continue
        run.cpu = min(run.cpu, cpu_children() - before)
        run.output = out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-kind", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--halves", default=",".join(HALVES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-ocrmypdf", action="store_true")
    parser.add_argument("--kinds", default=",".join(KINDS), help="kinds of page to generate")
    parser.add_argument("--blank", type=int, default=1, help="blank scanned pages to add")
    parser.add_argument(
        "--systems", default=",".join(SYSTEMS), help="which of " + ", ".join(SYSTEMS)
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep the files in this folder")
    parser.add_argument(
        "--split-pages", type=int, default=400, help="pages of the split measurement; 0 skips it"
    )
    parser.add_argument("--split-size", type=int, default=50, help="PRESSROOM_SPLIT_PAGES")
    parser.add_argument(
        "--split-workers",
        default="1,all",
        help="worker processes per split run, in order; all = the CPUs this process may use",
    )
    args = parser.parse_args()
    original: set[int] | None = None
    try:
        original = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(original)})  # one core, children too
    except (AttributeError, OSError):
        print("(could not pin to one core)")
    cpus = len(original) if original else os.cpu_count() or 1
    split_runs = [
        cpus if w.strip() == "all" else int(w) for w in args.split_workers.split(",") if w.strip()
    ]
    exe = None if args.no_ocrmypdf else find_ocrmypdf()
    wanted = args.systems.split(",")
    systems = [s for s in SYSTEMS if s in wanted and (s != "ocrmypdf" or exe)]
    if "ocrmypdf" in wanted and not exe:
        print("(OCRmyPDF is not installed: its columns are left out; see bench/README.md)")
    with tempfile.TemporaryDirectory(prefix="pressroom-reading-") as tmp:
        root = args.keep or Path(tmp)
        halves = [report(half, root / half, args, exe, systems) for half in args.halves.split(",")]
        split = None
        if args.split_pages > 0:
            if original is not None:
                os.sched_setaffinity(0, original)
            try:
                split = split_report(args.split_pages, args.split_size, split_runs, root / "split")
            except Exception as error:  # the halves' figures are still worth their summary
                print(f"  split measurement failed: {type(error).__name__}: {error}")
            finally:
                if original is not None:
                    os.sched_setaffinity(0, {min(original)})
    summary(halves, split, systems)


def report(
    half: str, folder: Path, args: argparse.Namespace, exe: str | None, systems: list[str]
) -> HalfFigures:
    t0 = time.perf_counter()
    docs = generate(
        folder / "scans", half, per_kind=args.per_kind, seed=args.seed, kinds=args.kinds.split(",")
    )
    docs += [blank_document(folder / "scans", half, i) for i in range(args.blank)]
    pages = sum(len(d.pages) for d in docs)
    print(
        f"\n=== {half}: {len(docs)} documents, {pages} pages "
        f"(generated in {time.perf_counter() - t0:.0f} s)"
    )
    runs: dict[str, dict[str, Run]] = {s: {} for s in systems}
    limit: dict[str, float] = {}
    read_limit: dict[str, float] = {}
    ceiling: dict[str, float] = {}
    for r in range(args.rounds):
        # interleaved: every system once per round, the limits too, best of the rounds kept
        for doc, seconds in limit_seconds(docs).items():
            limit[doc] = min(limit.get(doc, float("inf")), seconds)
        run_pressroom(docs, folder / "pressroom", "level", runs["pressroom"])
        turns = {
            stem: [
                (rot, skew if abs(skew) >= STRAIGHTEN_MIN else 0.0, 1.0)
                for rot, skew in zip(run.rotations, run.skews, strict=True)
            ]
            for stem, run in runs["pressroom"].items()
        }
        for doc, seconds in limit_seconds(docs, turns).items():
            read_limit[doc] = min(read_limit.get(doc, float("inf")), seconds)
        # the ceiling: bare recognition of exactly what Pressroom recognised (upright,
        # levelled, at its scale, blank pages not at all); Pressroom can be no faster
        scaled = {
            stem: [
                (rot, skew, scale)
                for (rot, skew, _one), scale in zip(pages, run.scales, strict=True)
            ]
            for stem, pages in turns.items()
            for run in (runs["pressroom"][stem],)
        }
        for doc, seconds in limit_seconds(docs, scaled).items():
            ceiling[doc] = min(ceiling.get(doc, float("inf")), seconds)
        if "native" in runs:
            run_pressroom(docs, folder / "native", "native", runs["native"])
        if "keep-pixels" in runs:
            run_pressroom(docs, folder / "keep-pixels", "keep", runs["keep-pixels"])
        if exe and "ocrmypdf" in runs:
            run_ocrmypdf(exe, docs, folder / "ocrmypdf", runs["ocrmypdf"])
        print(f"  round {r + 1}/{args.rounds} done ({time.perf_counter() - t0:.0f} s)", flush=True)

    # throughput
    print(f"\nthroughput, pages/min/core (CPU time, best of {args.rounds} interleaved rounds):")
    total_limit = sum(limit.values())
    throughput: dict[str, float] = {}
    of_limit: dict[str, float] = {}
    print(
        f"  {'recognise-only limit':24s} {60 * pages / total_limit:7.1f}   (the pixels as scanned)"
    )
    if read_limit and ceiling:
        cpu = sum(run.cpu for run in runs["pressroom"].values())
        total_ceiling = sum(ceiling.values())
        for label, seconds, what in (
            ("  on the pixels read", sum(read_limit.values()), "upright, levelled, every pixel"),
            (
                "  at the scale read",
                total_ceiling,
                "the ceiling: exactly what Pressroom recognised, "
                f"{total_limit / total_ceiling:.2f}x the limit",
            ),
        ):
            print(
                f"  {label:24s} {60 * pages / seconds:7.1f}   ({what}; "
                f"Pressroom is {seconds / cpu:.0%} of it)"
            )
    for s in systems:
        cpu = sum(run.cpu for run in runs[s].values() if run.output is not None)
        done = sum(len(d.pages) for d in docs if runs[s].get(d.path.stem, Run()).output)
        share = total_limit / cpu * done / pages
        throughput[s], of_limit[s] = 60 * done / cpu, share
        line = f"  {s:24s} {60 * done / cpu:7.1f}   {share:5.0%} of the limit"
        if "ocrmypdf" in runs and s != "ocrmypdf":
            oc = sum(r.cpu for r in runs["ocrmypdf"].values() if r.output is not None)
            line += f"   {oc / cpu:4.1f}x OCRmyPDF"
        print(line)

    print("\n  CPU seconds per document:")
    print(
        f"  {'document':24s} {'pages':>5s} {'limit':>7s} {'as read':>7s} {'ceiling':>7s} "
        + " ".join(f"{s:>11s}" for s in systems)
    )
    for d in docs:
        cells = []
        for s in systems:
            run = runs[s].get(d.path.stem)
            cells.append(f"{run.cpu:11.2f}" if run and run.output else f"{'-':>11s}")
        as_read = read_limit.get(d.path.stem)
        print(
            f"  {d.path.stem[:24]:24s} {len(d.pages):5d} {limit[d.path.stem]:7.2f} "
            + (f"{as_read:7.2f} " if as_read is not None else f"{'-':>7s} ")
            + (f"{ceiling[d.path.stem]:7.2f} " if d.path.stem in ceiling else f"{'-':>7s} ")
            + " ".join(cells)
        )
    if ceiling and "pressroom" in runs:
        by_kind(docs, limit, read_limit, ceiling, runs["pressroom"])

    # what levelling costs
    level_pages = [
        (run.timings.get("straighten", 0.0), run.cpu / max(1, len(run.skews)), run.levelled)
        for run in runs["pressroom"].values()
        if run.levelled
    ]
    if level_pages:
        per_page = sum(t for t, _c, _n in level_pages) / sum(n for _t, _c, n in level_pages)
        page_time = statistics.mean(c for _t, c, _n in level_pages)
        print(
            f"\nlevelling: {sum(n for *_x, n in level_pages)} pages levelled, "
            f"{1000 * per_page:.0f} ms a levelled page = "
            f"{per_page / page_time:.1%} of its page's time"
        )
    if "keep-pixels" in runs:
        lv = sum(r.cpu for r in runs["pressroom"].values())
        kp = sum(r.cpu for r in runs["keep-pixels"].values())
        print(f"  levelled run {lv:.1f} s CPU, pixels kept {kp:.1f} s CPU ({lv / kp - 1:+.1%})")

    # CER in every reader
    print("\nCER per page in each reader (%):")
    header = f"  {'page':24s} {'system':12s} " + " ".join(f"{r[:7]:>7s}" for r in READERS)
    print(header)
    worst: dict[tuple[str, str, str], float] = {}
    for doc in docs:
        for s in systems:
            run = runs[s].get(doc.path.stem)
            if run is None or run.output is None:
                print(f"  {doc.path.stem:24s} {s:12s} (no output)")
                continue
            read = read_all(run.output)
            for i, page in enumerate(doc.pages):
                errors = [cer(page.truth, read[r][i]) for r in READERS]
                for r, e in zip(READERS, errors, strict=True):
                    key = (s, page.kind, r)
                    worst[key] = max(worst.get(key, 0.0), e)
                flag = "  <-- over 2 %" if max(errors) > 0.02 else ""
                print(
                    f"  {page.name[:24]:24s} {s:12s} "
                    + " ".join(f"{100 * e:7.2f}" for e in errors)
                    + flag
                )
    print("\nworst page per kind and reader (%):")
    print(f"  {'kind':8s} {'system':12s} " + " ".join(f"{r[:7]:>7s}" for r in READERS))
    for kind in KINDS:
        for s in systems:
            if (s, kind, READERS[0]) in worst:
                print(
                    f"  {kind:8s} {s:12s} "
                    + " ".join(f"{100 * worst[s, kind, r]:7.2f}" for r in READERS)
                )
    for s in systems:
        heavy = [worst[s, k, r] for k in HEAVY for r in READERS if (s, k, r) in worst]
        over = sum(1 for e in heavy if e > 0.02)
        print(
            f"  {s}: skewed/rotated/faint/fax/photo pages, worst in any reader "
            f"{100 * max(heavy):.2f} %; "
            f"{over} kind x reader cells over 2 %"
        )
    worst_cer = {
        s: max((e for (w, *_k), e in worst.items() if w == s), default=0.0) for s in systems
    }

    if "native" in runs:
        resolution_report(docs, runs, limit)

    # sizes
    print("\noutput size / source size:")
    print(f"  {'document':24s} {'source':>10s} " + " ".join(f"{s:>12s}" for s in systems))
    for doc in docs:
        size = doc.path.stat().st_size
        cells = []
        for s in systems:
            run = runs[s].get(doc.path.stem)
            cells.append(
                f"{run.output.stat().st_size / size:12.2f}" if run and run.output else f"{'-':>12s}"
            )
        print(f"  {doc.path.name[:24]:24s} {size / 1024:8.0f}KB " + " ".join(cells))
    jpeg = [d for d in docs if _is_jpeg(d.path)]
    for s in systems:
        ratios = [
            runs[s][d.path.stem].output.stat().st_size / d.path.stat().st_size  # type: ignore[union-attr]
            for d in jpeg
            if runs[s].get(d.path.stem) and runs[s][d.path.stem].output
        ]
        if ratios:
            print(
                f"  {s}: JPEG scans, largest {max(ratios):.2f}x, "
                f"mean {statistics.mean(ratios):.2f}x the source"
            )
    multiples: dict[str, float] = {}
    if "pressroom" in runs and read_limit and ceiling:
        mine = runs["pressroom"]
        inked = [d.path.stem for d in docs if all(p.kind != "blank" for p in d.pages)]
        for label, stems in (("", [d.path.stem for d in docs]), (", no blank", inked)):
            cpu = sum(mine[stem].cpu for stem in stems)
            multiples[f"pressroom x limit as scanned{label}"] = sum(limit[s] for s in stems) / cpu
            multiples[f"pressroom x levelled limit{label}"] = (
                sum(read_limit[s] for s in stems) / cpu
            )
        multiples["ceiling x limit as scanned"] = total_limit / sum(ceiling.values())
        multiples["ceiling x levelled limit"] = sum(read_limit.values()) / sum(ceiling.values())
    return HalfFigures(
        half, pages, 60 * pages / total_limit, throughput, of_limit, worst_cer, multiples
    )


def split_report(pages: int, split: int, runs: list[int], folder: Path) -> SplitFigures:
    """bench/split_bench.py's measurement, run by its own functions, on the CPUs given back."""
    # the serve and worker it starts run this checkout's code, as the reading halves' children do
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p
    )
    folder.mkdir(parents=True, exist_ok=True)
    before = os.getloadavg()[0]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"\n=== split: {pages} pages, PRESSROOM_SPLIT_PAGES={split}, worker processes "
        f"{','.join(map(str, runs))} on {cores} CPU(s); load average at start {before:.2f}",
        flush=True,
    )
    t0 = time.perf_counter()
    source = big_scan(folder / f"scan-{pages}.pdf", pages)
    print(f"  scan generated in {time.perf_counter() - t0:.0f} s", flush=True)
    best = measure(source, pages, runs, split, folder)
    after = os.getloadavg()[0]
    figures = SplitFigures(pages, split, best, (before, after))
    for workers, seconds in sorted(best.items()):
        print(
            f"  {workers} worker process(es), best: {seconds:.1f} s, "
            f"{60 * pages / seconds:.1f} pages/min"
        )
    print(f"  {_speed_up(figures)}")
    print(f"  load average at end {after:.2f} (at start {before:.2f}; the machine is shared)")
    return figures


def _speed_up(split: SplitFigures) -> str:
    most = max(split.seconds)
    if 1 not in split.seconds or most == 1:
        return "no speed-up: one worker process only"
    one, many = split.seconds[1], split.seconds[most]
    return (
        f"1 -> {most} worker processes: {one:.1f} s -> {many:.1f} s, {one / many:.2f}x faster "
        f"(target: {SPLIT_TARGET:.1f}x with 2)"
    )


def by_kind(
    docs: list[Document],
    limit: dict[str, float],
    as_read: dict[str, float],
    ceiling: dict[str, float],
    runs: dict[str, Run],
) -> None:
    """Per kind of page: the limits, the ceiling and Pressroom as multiples of each limit.

    Two limits: on the pixels as scanned, and upright and levelled (every pixel). The first
    flatters where Tesseract reads a skewed or turned page as scanned: it reads it fast and
    wrong (a held-out page skewed 2.3 degrees: 0.88 s at 67.6 % CER as scanned, 1.82 s at
    1.07 % levelled). The ceiling is bare recognition of what Pressroom recognised: no faster
    reading exists at that scale, so a kind whose ceiling is under the target cannot reach it
    by any overhead saved."""
    kinds: dict[str, list[Document]] = {}
    for d in docs:
        kinds.setdefault("+".join(dict.fromkeys(p.kind for p in d.pages)), []).append(d)
    print("\n  per kind (CPU seconds; multiples of the limit):")
    print(
        f"  {'kind':14s} {'pages':>5s} {'limit':>7s} {'as read':>7s} {'ceiling':>7s} "
        f"{'pressroom':>9s} {'ceiling x':>9s} {'pressroom x':>11s} {'x as read':>9s}"
    )
    for kind, group in kinds.items():
        lim = sum(limit[d.path.stem] for d in group)
        ceil = sum(ceiling[d.path.stem] for d in group)
        cpu = sum(runs[d.path.stem].cpu for d in group)
        read = sum(as_read[d.path.stem] for d in group)
        print(
            f"  {kind[:14]:14s} {sum(len(d.pages) for d in group):5d} {lim:7.2f} {read:7.2f} "
            f"{ceil:7.2f} {cpu:9.2f} {lim / ceil:8.2f}x {lim / cpu:10.2f}x {read / cpu:8.2f}x"
        )


def summary(halves: list[HalfFigures], split: SplitFigures | None, systems: list[str]) -> None:
    """The headline figures side by side, as computed above."""
    print("\n=== summary")
    print(f"  {'':38s}" + "".join(f"{h.half:>12s}" for h in halves))
    print(f"  {'pages':38s}" + "".join(f"{h.pages:12d}" for h in halves))
    print(f"  {'limit, pages/min/core':38s}" + "".join(f"{h.limit:12.1f}" for h in halves))
    for s in systems:
        print(
            f"  {s + ', pages/min/core':38s}"
            + "".join(
                f"{h.throughput[s]:12.1f}" if s in h.throughput else f"{'-':>12s}" for h in halves
            )
        )
    if "pressroom" in systems:
        print(
            f"  {f'pressroom / limit (target {LIMIT_TARGET:.2f}x)':38s}"
            + "".join(f"{h.of_limit['pressroom']:11.2f}x" for h in halves)
        )
        print(
            f"  {'pressroom worst page CER, any reader':38s}"
            + "".join(f"{100 * h.worst_cer['pressroom']:10.2f} %" for h in halves)
        )
        for label in dict.fromkeys(k for h in halves for k in h.multiples):
            print(
                f"  {label:38s}"
                + "".join(
                    f"{h.multiples[label]:11.2f}x" if label in h.multiples else f"{'-':>12s}"
                    for h in halves
                )
            )
    if split is None:
        print("  split: not measured")
    else:
        print(f"  split, {split.pages} pages by {split.split}: {_speed_up(split)}")
        print(f"    load average {split.load[0]:.2f} at start, {split.load[1]:.2f} at end")


def blank_document(folder: Path, half: str, index: int) -> Document:
    """A letter at 10 pt, then a scanned page with nothing on it (grey paper, sensor noise, a
    few specks of dust): a document wholly blank is refused, as it should be."""
    from PIL import Image, ImageDraw

    from pressroom.synth import draw_page, image_pdf, page_lines

    rng = np.random.default_rng([HALVES.index(half), index])
    letter = draw_page(page_lines(100 * HALVES.index(half) + index, 24), dpi=300, font_pt=10.0)
    paper = rng.normal(236, 4.0, (3300, 2550)).clip(0, 255).astype(np.uint8)
    image = Image.fromarray(paper)
    draw = ImageDraw.Draw(image)
    for _ in range(12):
        x, y = int(rng.integers(0, 2550)), int(rng.integers(0, 3300))
        draw.point((x, y), fill=int(rng.integers(60, 160)))
    name = f"{half}-blank-{index + 1}"
    path = image_pdf([letter.image, image], folder / f"{name}.pdf", 300)
    return Document(
        path,
        (
            Page(f"{name}-p1", "letter", half, letter.text, {"dpi": (300, 300)}),
            Page(f"{name}-p2", "blank", half, "", {"dpi": (300, 300)}),
        ),
    )


def resolution_report(
    docs: list[Document], runs: dict[str, dict[str, Run]], limit: dict[str, float]
) -> None:
    """The scale each page was read at, and what reading at it did to every reader's CER."""
    print("\nrecognition scale (image widths shown to the engine, chosen / native) and CER:")
    print(
        f"  {'document':24s} {'scale':>14s} {'CPU s chosen':>12s} {'native':>7s} {'limit':>7s}"
        "   worst reader CER chosen / native (%)"
    )
    worse: list[tuple[str, float]] = []
    for doc in docs:
        chosen, native = runs["pressroom"].get(doc.path.stem), runs["native"].get(doc.path.stem)
        if not chosen or not native or not chosen.output or not native.output:
            continue
        scales = (
            "/".join(f"{c / n:.2f}" for c, n in zip(chosen.shown, native.shown, strict=False))
            or "not read"
        )
        read_c, read_n = read_all(chosen.output), read_all(native.output)
        cells = []
        for i, page in enumerate(doc.pages):
            ec = [cer(page.truth, read_c[r][i]) for r in READERS]
            en = [cer(page.truth, read_n[r][i]) for r in READERS]
            cells.append(f"{100 * max(ec):.2f}/{100 * max(en):.2f}")
            gap = max(c - n for c, n in zip(ec, en, strict=True))
            if gap > 0:
                worse.append((page.name, gap))
        print(
            f"  {doc.path.stem[:24]:24s} {scales[:14]:>14s} {chosen.cpu:12.2f} {native.cpu:7.2f}"
            f" {limit[doc.path.stem]:7.2f}   " + "  ".join(cells)
        )
    pages = sum(len(d.pages) for d in docs)
    total_limit = sum(limit.values())
    cpu_c = sum(r.cpu for r in runs["pressroom"].values())
    cpu_n = sum(r.cpu for r in runs["native"].values())
    print(
        f"  pressroom (chosen scale) {60 * pages / cpu_c:.1f} pages/min/core = "
        f"{total_limit / cpu_c:.2f}x the native recognise-only limit "
        f"({60 * pages / total_limit:.1f}); native pressroom {total_limit / cpu_n:.2f}x"
        f" (target: 1.30x)"
    )
    inked = [d.path.stem for d in docs if all(p.kind != "blank" for p in d.pages)]
    if len(inked) < len(docs):
        # a blank page costs the native reading its every turn: the ratio without them too
        lim = sum(limit[s] for s in inked)
        print(
            f"  without the documents holding a blank page: "
            f"{lim / sum(runs['pressroom'][s].cpu for s in inked):.2f}x the limit; native "
            f"pressroom {lim / sum(runs['native'][s].cpu for s in inked):.2f}x"
        )
    if worse:
        print(
            f"  {len(worse)} of {pages} pages read worse than natively in some reader, by at "
            f"most {100 * max(g for _n, g in worse):.2f} CER points: "
            + ", ".join(f"{n} +{100 * g:.2f}" for n, g in worse)
        )
    else:
        print(f"  no page read worse than natively in any reader ({pages} pages)")


def _is_jpeg(path: Path) -> bool:
    if path.suffix.lower() in (".jpg", ".jpeg"):
        return True
    if path.suffix != ".pdf":
        return False
    import pikepdf

    with pikepdf.open(path) as pdf:
        return all(
            pikepdf.PdfImage(raw).filters == ["/DCTDecode"]
            for page in pdf.pages
            for raw in page.get_images().values()
        )


if __name__ == "__main__":
    main()
