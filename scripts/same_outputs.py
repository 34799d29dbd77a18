"""Do two checkouts write the same bytes? A refactor's check (issue 44): build a fixed set of
inputs, run ``pressroom process`` over each in several modes with ``SOURCE_DATE_EPOCH`` set,
and write a manifest of every file written (sha256), each run's exit status and its ok/refusal
lines (durations and folders normalised); ``--compare`` then tells two manifests apart.

    python scripts/same_outputs.py --out manifest.json [--pressroom EXE] [--parallel N]
    python scripts/same_outputs.py --compare before.json after.json

Run it with the python of the checkout it is in: the inputs come from that checkout's own
test generators (``tests/scans.py``, ``tests/forms.py``, ``tests/layers.py``,
``tests/hiding.py``, ``tests/helpers.py``, ``pressroom.synth``) plus every file in
``samples/``, and the checkout's root goes first on the children's ``PYTHONPATH``, so the
pressroom code that runs is the checkout's (the manifest records ``pressroom.__file__`` as the
runs import it). Without ``--pressroom`` each run is ``python -c 'pressroom.cli.main()'``.
The manifest also holds each input's sha256: ``--compare`` warns when the two runs' inputs
were not the same bytes (then an output difference says nothing about the code).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EPOCH = "1700000000"
RUNNER = "import sys; from pressroom.cli import main; sys.exit(main())"
WHERE = "import pressroom; print(pressroom.__file__)"
NAMES = "Jane Whitfield, 14 Garden Road, Leeds LS6 2AB. Account number 12345678."

# mode -> the arguments it adds; "j2" only runs on multi-page inputs, "redo" on PDFs that
# carry a text layer already (see Input.tags)
MODES: dict[str, list[str]] = {
    "plain": [],
    "pdfa": ["--output-type", "pdfa"],
    "redact": ["--redact", "name,address,account-number"],
    "ocr-force": ["--ocr", "force"],
    "sidecar": ["--sidecar"],
    "template": ["--template", "sample", "--title", "Same outputs"],
    "redo": ["--ocr", "redo"],
    "j2": ["-j", "2"],
}
ONLY_TAGGED = {"j2": "multi", "redo": "layer"}


@dataclass(frozen=True)
class Input:
    name: str
    path: Path
    tags: frozenset[str]


def _report_pages() -> list[list[str]]:
    # as tests/integration/test_spread_fonts.py: different characters on different pages
    lines = ["It agreed the plans.", "Zebras & quartz jumped!", "Vexing, wry fjords.", "XY 4"]
    return [
        [f"Page {n} of the report: the committee met on Tuesday {n}.", line]
        for n, line in enumerate(lines * 2, start=1)
    ]


def build_inputs(folder: Path) -> list[Input]:
    """Every sample and a spread of the suite's generated fixtures, written into ``folder``."""
    sys.path.insert(0, str(ROOT))  # this checkout's tests/ and pressroom/, nobody else's
    from pressroom import synth
    from tests import forms, helpers, hiding, layers, scans

    folder.mkdir(parents=True, exist_ok=True)
    made: list[Input] = []

    def add(name: str, write: Callable[[Path], object], *tags: str) -> None:
        path = folder / name
        write(path)
        made.append(Input(name, path, frozenset(tags)))

    for sample in sorted((ROOT / "samples").iterdir()):
        if sample.is_file():
            multi = {"multi"} if sample.name == "waiver-scan.pdf" else set()
            add(f"sample-{sample.name}", partial(shutil.copyfile, sample), *multi)

    # scanned pages: skewed (JPEG in a PDF), turned 90 degrees (PNG), two-page faxes (a G4
    # TIFF and a G4 PDF)
    kinds = ("skewed", "rotated", "fax")
    scan_dir = folder / "scans-work"
    for doc in scans.generate(scan_dir, "dev", kinds=kinds):
        tags = {"multi"} if len(doc.pages) > 1 else set()
        add(f"scan-{doc.path.name}", partial(shutil.move, doc.path), *tags)
    shutil.rmtree(scan_dir)

    small = helpers.small_scan(seed=1, dpi=150, lines=3)
    add("small-scan.png", lambda p: synth.save_png(small.image, p, 150))
    six = [
        synth.distort(
            helpers.small_scan(seed=10 + n, dpi=150, lines=3).image,
            rotate=180 if n == 2 else 0,
            skew=1.5 if n == 4 else 0.0,
        )
        for n in range(6)
    ]
    add("six-scans.pdf", lambda p: synth.image_pdf(six, p, 150), "multi")
    add("report-8-pages.pdf", lambda p: synth.text_pdf(_report_pages(), p), "multi")
    add(
        "turned-digital.pdf",
        lambda p: synth.text_pdf([[NAMES, "A page set on its side."]], p, rotate=90),
    )
    add("form-annotations.pdf", forms.form_pdf)
    add("form-field.pdf", lambda p: forms.field_pdf(p, value=NAMES))
    add("layered-scan.pdf", lambda p: layers.layered_scan(p, "GARBAGE WORDS READ BEFORE"), "layer")
    add(
        "digital-hidden.pdf",
        lambda p: layers.digital_page(p, NAMES, "invisible words", pages=2),
        "layer",
        "multi",
    )
    add("random-layers.pdf", lambda p: layers.random_pages(p, seed=7), "layer", "multi")
    add("hidden-layer.pdf", hiding.hidden_layer, "multi")
    add("document-level.pdf", hiding.document_level, "multi")
    add("hostile.pdf", helpers.hostile_pdf)
    for leftover in folder.glob("*-base.pdf"):  # forms' intermediate files
        leftover.unlink()
    for item in made:
        if not item.name.startswith("sample-"):  # the samples stay the repository's bytes
            fix_id(item.path)
    return made


_ID = re.compile(rb"/ID \[<([0-9a-f]{32})><([0-9a-f]{32})>\]")


def fix_id(path: Path) -> None:
    """qpdf gives a new file an /ID from the clock: put one from its content in its place, in
    the trailer, the same length (no offset moves), so an input is the same bytes every run."""
    data = path.read_bytes()
    found = list(_ID.finditer(data))
    if not found:
        return
    last = found[-1]
    blank = data[: last.start()] + _ID.sub(b"/ID [<0><0>]", data[last.start() :], count=1)
    digest = hashlib.md5(blank).hexdigest().encode()
    path.write_bytes(data[: last.start(1)] + digest + b"><" + digest + data[last.end(2) :])


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


VOLATILE = {"held_at"}  # a review hold's wall-clock time: not SOURCE_DATE_EPOCH's


def _steady(value: Any, work: Path) -> Any:
    if isinstance(value, dict):
        return {k: "<time>" if k in VOLATILE else _steady(v, work) for k, v in value.items()}
    if isinstance(value, list):
        return [_steady(v, work) for v in value]
    if isinstance(value, str):
        return value.replace(str(work), "<WORK>")
    return value


def digests(out: Path, work: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Every file's sha256, and for a JSON file the sha256 of it with the work folder and the
    hold's time taken out (what --compare compares for it)."""
    raw: dict[str, str] = {}
    steady: dict[str, str] = {}
    for path in sorted(out.rglob("*")) if out.is_dir() else []:
        if not path.is_file():
            continue
        name = str(path.relative_to(out))
        raw[name] = sha256(path)
        if path.suffix == ".json":
            value = _steady(json.loads(path.read_bytes()), work)
            text = json.dumps(value, sort_keys=True).encode()
            steady[name] = hashlib.sha256(text).hexdigest()
    return raw, steady


def _normalise(text: str, work: Path) -> list[str]:
    text = text.replace(str(work), "<WORK>")
    text = re.sub(r"\b\d+(\.\d+)?(ms|s)\b", "<t>", text)  # durations
    return [line.rstrip() for line in text.splitlines() if line.strip()]


def _env(scratch: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRESSROOM_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["SOURCE_DATE_EPOCH"] = EPOCH
    env["PRESSROOM_SCRATCH_DIR"] = str(scratch)
    env["PRESSROOM_DATA_DIR"] = str(scratch / "data")
    return env


def _python_of(exe: str | None) -> str:
    """The interpreter a console script runs under (its #! line), else this one."""
    if exe is None:
        return sys.executable
    first = Path(exe).read_bytes().split(b"\n", 1)[0]
    return first[2:].decode().strip() if first.startswith(b"#!") else sys.executable


def run_one(item: Input, mode: str, exe: str | None, work: Path) -> dict[str, Any]:
    out = work / "out" / item.name / mode
    scratch = work / "scratch" / item.name / mode
    shutil.rmtree(out, ignore_errors=True)
    scratch.mkdir(parents=True, exist_ok=True)
    command = [exe] if exe else [sys.executable, "-c", RUNNER]
    args = ["process", "-o", str(out), *MODES[mode], str(item.path)]
    done = subprocess.run(
        [*command, *args],
        capture_output=True,
        text=True,
        env=_env(scratch),
        cwd=scratch,
        timeout=900,
        check=False,
    )
    files, steady = digests(out, work)
    shutil.rmtree(scratch, ignore_errors=True)
    return {
        "input": item.name,
        "mode": mode,
        "args": MODES[mode],
        "rc": done.returncode,
        "files": files,
        "steady": steady,
        "lines": _normalise(done.stdout + done.stderr, work),
    }


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    return done.stdout.strip()


def make_manifest(args: argparse.Namespace) -> int:
    work = Path(args.work or tempfile.mkdtemp(prefix="same-outputs-")).resolve()
    inputs = build_inputs(work / "in")
    if args.only:
        inputs = [i for i in inputs if any(s in i.name for s in args.only)]
    modes = args.modes or list(MODES)
    pairs = [
        (item, mode)
        for item in inputs
        for mode in modes
        if ONLY_TAGGED.get(mode) is None or ONLY_TAGGED[mode] in item.tags
    ]
    where = subprocess.run(
        [_python_of(args.pressroom), "-c", WHERE],
        capture_output=True,
        text=True,
        env=_env(work),
        check=False,
    ).stdout.strip()
    if not where.startswith(str(ROOT)):
        print(f"WARNING: the runs import pressroom from {where}, not from {ROOT}", file=sys.stderr)
    print(f"{len(inputs)} inputs, {len(pairs)} runs; pressroom from {where}", file=sys.stderr)

    def one(pair: tuple[Input, str]) -> dict[str, Any]:
        result = run_one(*pair, args.pressroom, work)
        print(f"{result['rc']:>3}  {pair[0].name}  {pair[1]}", file=sys.stderr, flush=True)
        return result

    with ThreadPoolExecutor(max(1, args.parallel)) as pool:
        runs = list(pool.map(one, pairs))
    manifest = {
        "root": str(ROOT),
        "commit": _git("rev-parse", "HEAD"),
        "changed_files": len(_git("status", "--porcelain").splitlines()),
        "python": sys.executable,
        "pressroom_exe": args.pressroom,
        "pressroom_file": where,
        "source_date_epoch": EPOCH,
        "inputs": {i.name: {"sha256": sha256(i.path), "tags": sorted(i.tags)} for i in inputs},
        "runs": runs,
    }
    Path(args.out).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def compare(first: Path, second: Path) -> int:
    a, b = (json.loads(p.read_text()) for p in (first, second))
    print(f"A: {a['commit'][:10]} (+{a['changed_files']} changed) pressroom {a['pressroom_file']}")
    print(f"B: {b['commit'][:10]} (+{b['changed_files']} changed) pressroom {b['pressroom_file']}")
    problems = 0
    for name in sorted(set(a["inputs"]) | set(b["inputs"])):
        da, db = a["inputs"].get(name, {}).get("sha256"), b["inputs"].get(name, {}).get("sha256")
        if da != db:
            problems += 1
            print(f"WARNING: input {name} is not the same bytes: {da} vs {db}")
    runs_a = {(r["input"], r["mode"]): r for r in a["runs"]}
    runs_b = {(r["input"], r["mode"]): r for r in b["runs"]}
    for key in sorted(set(runs_a) | set(runs_b)):
        ra, rb = runs_a.get(key), runs_b.get(key)
        label = f"{key[0]} [{key[1]}]"
        if ra is None or rb is None:
            problems += 1
            print(f"{label}: only in {'B' if ra is None else 'A'}")
            continue
        notes = []
        if ra["rc"] != rb["rc"]:
            notes.append(f"exit {ra['rc']} vs {rb['rc']}")
        for f in sorted(set(ra["files"]) | set(rb["files"])):
            fa, fb = ra["files"].get(f), rb["files"].get(f)
            if f in ra.get("steady", {}) and f in rb.get("steady", {}):
                fa, fb = ra["steady"][f], rb["steady"][f]  # JSON: held_at and folders out
            if fa != fb:
                what = "only in B" if fa is None else "only in A" if fb is None else "differs"
                notes.append(f"{f} {what}")
        if ra["lines"] != rb["lines"]:
            notes.append(f"lines {ra['lines']} vs {rb['lines']}")
        if notes:
            problems += 1
            print(f"{label}: " + "; ".join(notes))
    print(f"{len(runs_a)} vs {len(runs_b)} runs, {problems} difference(s)")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="where to write the manifest (JSON)")
    parser.add_argument("--pressroom", help="the pressroom console script (default: python -c)")
    parser.add_argument("--work", help="keep inputs and outputs in this folder")
    parser.add_argument("--parallel", type=int, default=1, help="runs at once (default 1)")
    parser.add_argument("--only", nargs="+", help="inputs whose names contain one of these")
    parser.add_argument("--modes", nargs="+", choices=list(MODES), help="a subset of the modes")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"))
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if not args.out:
        parser.error("--out or --compare is needed")
    return make_manifest(args)


if __name__ == "__main__":
    sys.exit(main())
