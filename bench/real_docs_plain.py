"""Plain processing of real documents nobody here made (``bench/real_docs.py``), beside OCRmyPDF.

Each document of the manifest goes, the way a user runs it, through

- ``pressroom process -o DIR FILE`` (plain, default options; one process a document under
  ``nice -n 10``, its whole process group killed past ``--timeout`` seconds): delivered (exit 0
  and a PDF), refused (exit 2, with the code of its ``CODE: file: …`` line), held (exit 3),
  temporary (exit 75), crashed (any other exit, a traceback, or ``INTERNAL_ERROR``: a bug) or
  timed out;
- ``ocrmypdf FILE OUT`` (OCRmyPDF's defaults, ``--jobs`` as ``--jobs-ocrmypdf`` says, 1 unless
  told): its exit code is its outcome (``ocrmypdf.ExitCode``): 0 delivered, 10 delivered but not
  PDF/A, 6 refused ``PriorOcrFoundError`` (a page already has text: OCRmyPDF's default refuses it
  and says to use ``--skip-text``, ``--redo-ocr`` or ``--force-ocr``), 2, 4, 7, 8 and the others
  of the documented set refused by their name; 15 (an unexpected exception), a traceback or an
  exit outside the set crashed;
- ``ocrmypdf --skip-text FILE OUT``, which is how users run a mixed set. Where the default run
  delivered, no page had text, so ``--skip-text`` would do the same work: its row reuses that
  result (marked ``reused`` in the JSON) instead of running it again.

One Pressroom process and one OCRmyPDF process run at a time, side by side (a small, shared
machine: more would make timeouts of slow documents). Per half (``tune``, ``held-out``) it prints
delivered / refused by code / held / crashed / timed out and the total wall seconds, for Pressroom
and both OCRmyPDF runs side by side; for Pressroom's delivered outputs: ``qpdf --check`` passes,
page count equal, page sizes equal (as displayed: ``/Rotate`` applied; "or turned" counts a page
turned upright), and of the documents whose source has a title, outlines, links, ``/Lang``, a
structure tree or page labels, how many outputs still have them (item 1 of issue 43). Last, the
documents Pressroom refuses (or fails) that OCRmyPDF (either run) delivers.

The code measured is whatever ``python -m pressroom.cli`` imports where the bench runs
(``PYTHONPATH``, the working folder); the JSON records it and its git commit. Before and after:

    git worktree add /tmp/rd_base HEAD
    cd /tmp/rd_base && PYTHONPATH=/tmp/rd_base /work/main/.venv/bin/python \\
        /work/main/bench/real_docs_plain.py --json before.json
    ... --no-ocrmypdf --ocrmypdf-from before.json --json after.json   # OCRmyPDF's figures kept

``--report F.json [G.json]`` prints the tables of saved runs (two: before and after, side by
side) without running anything. Options: ``--half tune|held-out|all``, ``--only SHA-PREFIX,…``,
``--timeout S``, ``--jobs-ocrmypdf N``, ``--no-ocrmypdf``, ``--no-pressroom``, ``--cache``,
``--mirrors``, ``--work`` (kept outputs; a temporary folder otherwise). It asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # appended: the code measured comes from PYTHONPATH first
    sys.path.append(str(HERE.parent))

from bench.real_docs import CACHE, HALVES, MIRRORS, Doc, materialise, select  # noqa: E402

OCRMYPDF = Path(
    os.environ.get("PRESSROOM_BENCH_OCRMYPDF", HERE.parent / ".venv-bench/bin/ocrmypdf")
)
CODE = re.compile(r"^([A-Z][A-Z0-9_]+): ", re.M)
OK_LINE = re.compile(r"^ok\s+\S+\s+(.*)$", re.M)
OCRMYPDF_ERROR = re.compile(r"^([A-Z]\w*(?:Error|Exception)): ", re.M)
TOOLS = ("pressroom", "ocrmypdf", "ocrmypdf --skip-text")
OUTCOMES = ("delivered", "refused", "held", "temporary", "crashed", "timed out")
KEPT = ("title", "outlines", "links", "lang", "struct", "labels")

# ocrmypdf.ExitCode: the documented set, each by the exception a user sees
OCRMYPDF_EXIT = {
    1: "BadArgsError",
    2: "InputFileError",
    3: "MissingDependencyError",
    4: "OutputFileAccessError/InvalidOutputPdf",
    5: "FileAccessError",
    6: "PriorOcrFoundError",
    7: "SubprocessOutputError",
    8: "EncryptedPdfError",
    9: "InvalidConfig",
    130: "KeyboardInterrupt",
}


@dataclass
class Run:
    """One tool's run on one document (plain values: they go to JSON)."""

    outcome: str = ""
    code: str = ""  # the refusal code (Pressroom's, or OCRmyPDF's exception name), or "exit N"
    exit: int | None = None
    seconds: float = 0.0
    last_line: str = ""  # stderr's last line, for a crash (file names are the cache's hashes)
    reused: bool = False  # the --skip-text row copied from the default run (same work)
    checks: dict[str, Any] = field(default_factory=dict)  # a delivered output's, see ``inspect``
    ok_line: str = ""  # Pressroom's ``ok`` line after the file's name: what it did


@dataclass
class Result:
    sha256: str
    name: str
    repo: str
    path: str
    kind: str
    half: str
    pages: int = 0
    runs: dict[str, Run] = field(default_factory=dict)


def last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[-1][:240] if lines else ""


def timed(cmd: Sequence[str], timeout: float) -> tuple[int | None, str, float]:
    """Run ``cmd`` in its own process group under ``nice -n 10``; (exit, stdout and stderr,
    seconds), exit None when it ran past ``timeout`` (the whole group is killed: Tesseract and
    Ghostscript too)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        ["nice", "-n", "10", *cmd],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        err, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        err, _ = proc.communicate()
        return None, err or "", round(time.monotonic() - t0, 1)
    return proc.returncode, err or "", round(time.monotonic() - t0, 1)


def run_pressroom(pdf: Path, out: Path, timeout: float) -> Run:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    rc, err, secs = timed(
        [sys.executable, "-m", "pressroom.cli", "process", "-o", str(out), str(pdf)], timeout
    )
    r = Run(exit=rc, seconds=secs)
    ok = OK_LINE.search(err)
    r.ok_line = ok.group(1)[:240] if ok else ""
    m = CODE.search(err)
    code = m.group(1) if m else ""
    if rc is None:
        r.outcome = "timed out"
    elif "Traceback (most recent call last)" in err or code == "INTERNAL_ERROR":
        r.outcome, r.code, r.last_line = "crashed", code or f"exit {rc}", last_line(err)
    elif rc == 0 and (out / pdf.name).is_file():
        r.outcome = "delivered"
    elif rc == 2:
        r.outcome, r.code = "refused", code or "exit 2"
    elif rc == 3:
        r.outcome, r.code = "held", code or "exit 3"
        r.last_line = last_line(err)
    elif rc == 75:
        r.outcome, r.code = "temporary", code or "exit 75"
    else:
        r.outcome, r.code, r.last_line = "crashed", code or f"exit {rc}", last_line(err)
    return r


def run_ocrmypdf(pdf: Path, out: Path, timeout: float, jobs: int, skip_text: bool) -> Run:
    out.unlink(missing_ok=True)
    cmd = [
        str(OCRMYPDF),
        "--jobs",
        str(jobs),
        *(["--skip-text"] if skip_text else []),
        str(pdf),
        str(out),
    ]
    rc, err, secs = timed(cmd, timeout)
    r = Run(exit=rc, seconds=secs)
    if rc in (0, 10) and out.is_file():
        r.checks = inspect(pdf, out)
    if rc is None:
        r.outcome = "timed out"
    elif (
        "Traceback (most recent call last)" in err
        or rc == 15
        or (rc not in OCRMYPDF_EXIT and rc not in (0, 10))
    ):
        r.outcome, r.code, r.last_line = "crashed", f"exit {rc}", last_line(err)
    elif rc in (0, 10) and out.is_file():
        r.outcome, r.code = "delivered", "" if rc == 0 else "not PDF/A (exit 10)"
    else:
        code = OCRMYPDF_EXIT.get(rc, f"exit {rc}")
        named = OCRMYPDF_ERROR.search(err)  # the exception it names: a subclass says more
        if named and named.group(1) not in code:
            code += f" ({named.group(1)})"
        r.outcome, r.code = "refused", code
        r.last_line = last_line(err)
    return r


# --- what a delivered output kept ---------------------------------------------------------------


def _outline_count(pdf: Any) -> int:
    try:
        with pdf.open_outline() as ol:
            n, todo = 0, list(ol.root)
            while todo and n < 100000:
                item = todo.pop()
                n += 1
                todo.extend(item.children)
            return n
    except Exception:  # a broken outline counts as none
        return 0


def _title(pdf: Any) -> str:
    import pikepdf

    title = ""
    try:
        t = pdf.docinfo.get("/Title")
        if t is not None:
            title = str(t).strip()
    except Exception:  # an unreadable title counts as none
        title = ""
    if not title:
        try:
            with pdf.open_metadata() as meta:
                title = str(meta.get("dc:title", "") or "").strip()
        except (pikepdf.PdfError, ValueError, KeyError, AttributeError):
            pass
    # as a reader shows it: a C string's NUL or a stray control character is no part of it
    return "".join(ch for ch in title if ch.isprintable()).strip()


def _labels(pdf: Any) -> tuple[str, ...]:
    try:
        return tuple(str(page.label) for page in pdf.pages)
    except Exception:  # a broken number tree counts as none
        return ()


def _displayed_sizes(pdf: Any) -> list[tuple[float, float]]:
    sizes = []
    for page in pdf.pages:
        box = page.obj.get("/CropBox", None) or page.mediabox
        try:
            x0, y0, x1, y1 = (float(v) for v in box)
        except (TypeError, ValueError):
            x0, y0, x1, y1 = (float(v) for v in page.mediabox)
        w, h = abs(x1 - x0), abs(y1 - y0)
        rot = int(page.obj.get("/Rotate", 0)) % 360
        sizes.append((h, w) if rot in (90, 270) else (w, h))
    return sizes


def features(path: Path) -> tuple[dict[str, Any], list[tuple[float, float]]]:
    """What an archive keeps, as found in one PDF: its title, outline items, link annotations,
    ``/Lang``, structure tree and page labels; and the pages' displayed sizes."""
    import pikepdf

    with pikepdf.open(path) as pdf:
        root = pdf.Root
        links = 0
        for page in pdf.pages:
            for annot in page.obj.get("/Annots", None) or []:
                try:
                    if annot.get("/Subtype") == pikepdf.Name.Link:
                        links += 1
                except (AttributeError, pikepdf.PdfError):
                    pass
        lang = str(root.get("/Lang", "") or "").strip()
        return {
            "title": _title(pdf),
            "outlines": _outline_count(pdf),
            "links": links,
            "lang": lang,
            "struct": "/StructTreeRoot" in root,
            "labels": _labels(pdf) if "/PageLabels" in root else (),
        }, _displayed_sizes(pdf)


def same_sizes(a: list[tuple[float, float]], b: list[tuple[float, float]], turned: bool) -> bool:
    if len(a) != len(b):
        return False
    for (w1, h1), (w2, h2) in zip(a, b, strict=True):
        if abs(w1 - w2) <= 1 and abs(h1 - h2) <= 1:
            continue
        if turned and abs(w1 - h2) <= 1 and abs(h1 - w2) <= 1:
            continue
        return False
    return True


def inspect(source: Path, output: Path) -> dict[str, Any]:
    """A delivered output against its source: ``qpdf --check`` (warnings pass), page count,
    page sizes, and for each of ``KEPT`` the source has, whether the output still has it: the
    same title, ``/Lang`` and page labels; at least as many outline items and links; a
    structure tree."""
    q = subprocess.run(["qpdf", "--check", str(output)], capture_output=True, check=False)
    checks: dict[str, Any] = {"qpdf_ok": q.returncode in (0, 3), "qpdf_warnings": q.returncode == 3}
    try:
        src, src_sizes = features(source)
        out, out_sizes = features(output)
    except Exception as exc:  # a file pikepdf cannot read: said, not counted
        checks["inspect_error"] = type(exc).__name__
        return checks
    checks["pages_equal"] = len(src_sizes) == len(out_sizes)
    checks["sizes_equal"] = same_sizes(src_sizes, out_sizes, turned=False)
    checks["sizes_equal_turned"] = same_sizes(src_sizes, out_sizes, turned=True)
    checks["source_has"] = [k for k in KEPT if src[k]]
    kept = []
    for k in checks["source_has"]:
        if k in ("outlines", "links"):
            ok = out[k] >= src[k]
        elif k == "struct":
            ok = bool(out[k])
        else:
            ok = out[k] == src[k]
        if ok:
            kept.append(k)
    checks["output_kept"] = kept
    checks["output_title"] = "Document" if out["title"] == "Document" else ""  # the default's
    return checks


# --- the runs -----------------------------------------------------------------------------------


def page_count(pdf: Path) -> int:
    run = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=False)
    m = re.search(r"^Pages:\s+(\d+)", run.stdout, re.M)
    return int(m.group(1)) if m else 0


def new_result(doc: Doc, pdf: Path) -> Result:
    return Result(
        sha256=doc.sha256,
        name=pdf.name,
        repo=doc.repo,
        path=doc.path,
        kind=doc.kind,
        half=doc.half,
        pages=page_count(pdf),
    )


def pressroom_all(
    found: Sequence[tuple[Doc, Path]], results: dict[str, Result], work: Path, timeout: float
) -> None:
    for doc, pdf in found:
        res = results[doc.sha256]
        out = work / "pressroom" / pdf.stem
        r = run_pressroom(pdf, out, timeout)
        res.runs["pressroom"] = r
        if r.outcome == "delivered":
            r.checks = inspect(pdf, out / pdf.name)
        shutil.rmtree(out, ignore_errors=True)
        say(f"pressroom  {doc.half:8} {pdf.name} {r.outcome:9} {r.code:24} {r.seconds:6.1f}s")
        checkpoint()


def ocrmypdf_all(
    found: Sequence[tuple[Doc, Path]],
    results: dict[str, Result],
    work: Path,
    timeout: float,
    jobs: int,
) -> None:
    (work / "ocrmypdf").mkdir(parents=True, exist_ok=True)
    for doc, pdf in found:
        res = results[doc.sha256]
        out = work / "ocrmypdf" / pdf.name
        r = run_ocrmypdf(pdf, out, timeout, jobs, skip_text=False)
        res.runs["ocrmypdf"] = r
        if r.outcome == "delivered":
            s = Run(**{**asdict(r), "reused": True})
        else:
            s = run_ocrmypdf(pdf, out, timeout, jobs, skip_text=True)
        out.unlink(missing_ok=True)
        res.runs["ocrmypdf --skip-text"] = s
        say(
            f"ocrmypdf   {doc.half:8} {pdf.name} {r.outcome:9} {r.code:20} {r.seconds:6.1f}s"
            f" | --skip-text {s.outcome:9} {s.code:20} {s.seconds:6.1f}s"
            + (" (reused)" if s.reused else "")
        )
        checkpoint()


_SAY = threading.Lock()
_CHECKPOINT: list[Any] = []  # a callable that saves what is done so far (a long run can be cut)


def checkpoint() -> None:
    with _SAY:
        for save in _CHECKPOINT:
            save()


def say(line: str) -> None:
    with _SAY:
        print(line, file=sys.stderr, flush=True)


# --- the tables ---------------------------------------------------------------------------------


def summary(results: Sequence[dict[str, Any]], tool: str) -> dict[str, Any]:
    runs = [r["runs"][tool] for r in results if tool in r["runs"]]
    if not runs:
        return {}
    out: dict[str, Any] = {"documents": len(runs)}
    for o in OUTCOMES:
        out[o] = sum(1 for x in runs if x["outcome"] == o)
    out["codes"] = dict(
        Counter(
            f"{x['outcome']} {x['code']}"
            for x in runs
            if x["outcome"] not in ("delivered",) and x["code"]
        ).most_common()
    )
    out["seconds"] = round(sum(x["seconds"] for x in runs), 1)
    got = [x["checks"] for x in runs if x["outcome"] == "delivered" and x.get("checks")]
    if got:
        out["qpdf --check passes"] = sum(1 for c in got if c["qpdf_ok"])
        out["pages equal"] = sum(1 for c in got if c.get("pages_equal"))
        out["sizes equal"] = sum(1 for c in got if c.get("sizes_equal"))
        out["sizes equal or turned"] = sum(1 for c in got if c.get("sizes_equal_turned"))
        for k in KEPT:
            had = [c for c in got if k in c.get("source_has", ())]
            out[f"{k} kept"] = f"{sum(1 for c in had if k in c['output_kept'])}/{len(had)}"
        out["titled 'Document'"] = sum(1 for c in got if c.get("output_title") == "Document")
    return out


def table(title: str, columns: dict[str, dict[str, Any]]) -> list[str]:
    cols = {k: v for k, v in columns.items() if v}
    if not cols:
        return []
    keys = ["documents", *OUTCOMES, "seconds"]
    extra = [k for v in cols.values() for k in v if k not in keys and k != "codes"]
    keys += list(dict.fromkeys(extra))
    w = max(24, *(len(c) + 2 for c in cols))
    lines = [title, f"{'':26}" + "".join(f"{c:>{w}}" for c in cols)]
    for k in keys:
        lines.append(f"  {k:24}" + "".join(f"{v.get(k, '')!s:>{w}}" for v in cols.values()))
    for c, v in cols.items():
        for code, n in v.get("codes", {}).items():
            lines.append(f"    {c}: {code} x {n}")
    return lines


def by_kind(data: dict[str, Any], after: dict[str, Any] | None) -> list[str]:
    """Delivered of each kind of document, per tool (both halves)."""
    sets = [("Pressroom", data, "pressroom")]
    if after:
        sets = [("Pressroom before", data, "pressroom"), ("Pressroom after", after, "pressroom")]
    sets += [("OCRmyPDF", data, "ocrmypdf"), ("OCRmyPDF --skip-text", data, "ocrmypdf --skip-text")]
    kinds = sorted({r["kind"] for r in data["results"]})
    lines = ["  delivered by kind: " + " / ".join(label for label, _, _ in sets)]
    for kind in kinds:
        cells = []
        for _, d, tool in sets:
            rs = [r for r in d["results"] if r["kind"] == kind and tool in r["runs"]]
            ok = sum(1 for r in rs if r["runs"][tool]["outcome"] == "delivered")
            cells.append(f"{ok}/{len(rs)}")
        lines.append(f"    {kind:14} " + "  ".join(f"{c:>7}" for c in cells))
    return lines


def report(data: dict[str, Any], after: dict[str, Any] | None = None) -> list[str]:
    lines: list[str] = []
    for half in (*HALVES, "all"):
        rs = [r for r in data["results"] if half == "all" or r["half"] == half]
        if not rs:
            continue
        cols = {"Pressroom" + (" before" if after else ""): summary(rs, "pressroom")}
        if after:
            ra = [r for r in after["results"] if half == "all" or r["half"] == half]
            cols["Pressroom after"] = summary(ra, "pressroom")
        cols["OCRmyPDF"] = summary(rs, "ocrmypdf")
        cols["OCRmyPDF --skip-text"] = summary(rs, "ocrmypdf --skip-text")
        lines += table(f"== {half}: {len(rs)} documents", cols)
        if half == "all":
            lines += by_kind(data, after)
        lines.append("")
    for label, d in (("before", data), ("after", after)) if after else (("", data),):
        if d is None:
            continue
        for r in d["results"]:
            for t, x in r["runs"].items():
                if x["outcome"] == "crashed" and (d is data or t == "pressroom"):
                    lines.append(
                        f"crashed {label} {t}: {r['repo']}:{r['path']} ({r['half']})"
                        f" {x['code']}: {x['last_line']}"
                    )
        for r in d["results"]:
            p = r["runs"].get("pressroom")
            o = [(t, r["runs"][t]) for t in ("ocrmypdf", "ocrmypdf --skip-text") if t in r["runs"]]
            if not o and after is not None and d is after:
                base = {x["sha256"]: x for x in data["results"]}.get(r["sha256"])
                o = [
                    (t, base["runs"][t])
                    for t in ("ocrmypdf", "ocrmypdf --skip-text")
                    if base and t in base["runs"]
                ]
            if p and p["outcome"] != "delivered" and any(x["outcome"] == "delivered" for _, x in o):
                by = ", ".join(t for t, x in o if x["outcome"] == "delivered")
                lines.append(
                    f"Pressroom {label} {p['outcome']} {p['code']} where {by} delivered:"
                    f" {r['repo']}:{r['path']} ({r['half']}, {r['kind']}, {r['pages']} p.)"
                )
        turned = [
            r
            for r in d["results"]
            if "turned" in r["runs"].get("pressroom", {}).get("ok_line", "")
            or "upright" in r["runs"].get("pressroom", {}).get("ok_line", "")
        ]
        for r in turned:
            lines.append(
                f"Pressroom {label} turned: {r['repo']}:{r['path']} ({r['half']}, {r['kind']}):"
                f" {r['runs']['pressroom']['ok_line']}"
            )
    return lines


def git_head(module_file: str) -> str:
    run = subprocess.run(
        ["git", "-C", str(Path(module_file).parent), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return run.stdout.strip()


def which_pressroom() -> str:
    run = subprocess.run(
        [sys.executable, "-c", "import pressroom; print(pressroom.__file__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    return run.stdout.strip() or run.stderr.strip()[-200:]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--half", choices=(*HALVES, "all"), default="all")
    ap.add_argument("--only", default="", help="SHA-256 prefixes, comma-separated")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--timeout", type=float, default=180.0)
    ap.add_argument("--jobs-ocrmypdf", type=int, default=1, help="OCRmyPDF's --jobs (default 1)")
    ap.add_argument("--no-ocrmypdf", action="store_true")
    ap.add_argument("--no-pressroom", action="store_true")
    ap.add_argument("--ocrmypdf-from", type=Path, help="a saved run whose OCRmyPDF rows to show")
    ap.add_argument(
        "--report", type=Path, nargs="+", help="print saved runs (before [after]); run nothing"
    )
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    ap.add_argument("--work", type=Path)
    args = ap.parse_args(argv)

    if args.report:
        saved = [json.loads(p.read_text()) for p in args.report]
        print("\n".join(report(saved[0], saved[1] if len(saved) > 1 else None)))
        return 0

    docs = select(args.half)
    if args.only:
        prefixes = tuple(args.only.split(","))
        docs = [d for d in docs if d.sha256.startswith(prefixes)]
    found, missing = materialise(docs, args.cache, args.mirrors)
    found.sort(key=lambda dp: dp[0].half != "held-out")  # held-out first: a cut run has it whole
    for _doc, why in missing:
        print(f"missing: {why}", file=sys.stderr)
    work = args.work or Path(tempfile.mkdtemp(prefix="real-docs-plain-"))
    results = {doc.sha256: new_result(doc, pdf) for doc, pdf in found}
    module = which_pressroom()
    t0 = time.monotonic()
    if args.json:
        path = args.json

        def save() -> None:
            try:
                data = snapshot(args, module, missing, results, t0)
            except RuntimeError:  # a row changed while copied: the next checkpoint has it
                return
            path.with_suffix(".part").write_text(json.dumps(data, indent=1) + "\n")

        _CHECKPOINT.append(save)
    with ThreadPoolExecutor(2) as pool:
        futures = []
        if not args.no_pressroom:
            futures.append(pool.submit(pressroom_all, found, results, work, args.timeout))
        if not args.no_ocrmypdf:
            futures.append(
                pool.submit(ocrmypdf_all, found, results, work, args.timeout, args.jobs_ocrmypdf)
            )
        for f in futures:
            f.result()
    data = snapshot(args, module, missing, results, t0)
    if args.json:
        args.json.write_text(json.dumps(data, indent=1) + "\n")
    print(f"pressroom: {module} @ {data['pressroom_commit'][:12]}")
    print("\n".join(report(data)))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def snapshot(
    args: argparse.Namespace,
    module: str,
    missing: Sequence[tuple[Doc, str]],
    results: dict[str, Result],
    t0: float,
) -> dict[str, Any]:
    """The run so far as JSON data (documents not yet run by a tool lack its row)."""
    rows = [asdict(r) for r in results.values()]
    if args.ocrmypdf_from:
        old = {r["sha256"]: r for r in json.loads(args.ocrmypdf_from.read_text())["results"]}
        for row in rows:
            for t in ("ocrmypdf", "ocrmypdf --skip-text"):
                if (
                    t not in row["runs"]
                    and row["sha256"] in old
                    and t in old[row["sha256"]]["runs"]
                ):
                    row["runs"][t] = old[row["sha256"]]["runs"][t]
    return {
        "pressroom": module,
        "pressroom_commit": git_head(module) if module.endswith(".py") else "",
        "ocrmypdf": str(OCRMYPDF),
        "ocrmypdf_jobs": args.jobs_ocrmypdf,
        "timeout": args.timeout,
        "half": args.half,
        "wall_seconds": round(time.monotonic() - t0, 1),
        "missing": [why for _, why in missing],
        "results": rows,
    }


if __name__ == "__main__":
    sys.exit(main())
