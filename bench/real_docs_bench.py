"""Redaction on real documents nobody here made (``bench/real_docs.py``), the way a user runs it.

Each document of the manifest goes through

- ``pressroom process --redact name,address,account-number -o DIR FILE`` (one process a document,
  under ``nice -n 10``, killed past ``--timeout`` seconds): delivered (exit 0), held for review
  (exit 3, with its reason code), refused (exit 2, with its code), crashed (exit 1 or any other),
  or timed out;
- ``pressroom detect --redact name,address,account-number FILE…`` (a few documents a process, so
  the models load once a batch; a batch that runs past its time is run again a document at a
  time): the findings, per page and class.

Per half (``tune``, ``held-out``) it prints the outcomes (and the reason codes), findings per page
of each class (median and max over the documents), the findings a held document carries, and the
words lost from delivered outputs: the words of the source's own text layer (``pdftotext``) that
the output's text no longer has, as a share of the source's words (median and max; documents
whose source has no text layer, scans, are left out of it). Last, a random sample (fixed seed)
of ``--sample`` name findings, pooled over the halves run, each with 40 characters of the page's
text either side (from the source's text layer where the finding's box lies on its words), is
written to ``--sample-file`` for labelling by eye: person or not.

The code measured is whatever ``python -m pressroom.cli`` imports in the environment the bench
runs in (``PYTHONPATH``, the working folder); the JSON records which. Before and after:

    cd /tmp/base && PYTHONPATH=/tmp/base /work/main/.venv/bin/python \\
        /work/main/bench/real_docs_bench.py --json before.json --sample 100
    .venv/bin/python bench/real_docs_bench.py --json after.json --sample 100

Options: ``--half tune|held-out|all``, ``--kinds KIND,…``, ``--only SHA-PREFIX,…``, ``--timeout S``
(per document), ``--parallel N`` (documents at once; 1 by default: on a small machine more
would make timeouts of slow documents, distorting the outcomes), ``--cache``, ``--mirrors``,
``--work`` (kept outputs), ``--seed``. It asserts nothing: it prints figures.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # appended: the code measured comes from PYTHONPATH first
    sys.path.append(str(HERE.parent))

from bench.real_docs import CACHE, HALVES, MIRRORS, Doc, materialise, select  # noqa: E402

CLASSES = ("name", "address", "account-number")
REDACT = ",".join(CLASSES)
OUTCOMES = ("delivered", "held", "refused", "crashed", "timed out")
CODE = re.compile(r"^([A-Z][A-Z0-9_]+): ", re.M)
WORD = re.compile(r"\w+")
CONTEXT = 40


@dataclass
class Result:
    """One document's figures (plain values: they go to JSON)."""

    sha256: str
    name: str
    repo: str
    path: str
    kind: str
    half: str
    pages: int = 0
    outcome: str = ""
    code: str = ""  # the reason code of a hold, a refusal or a crash
    seconds: float = 0.0  # wall-clock
    cpu_seconds: float | None = None  # the process run's own CPU (children's, parallel 1 only)
    held_findings: int | None = None  # what the held copy's note lists
    reason: str = ""  # the held copy's note's reason (Pressroom's words, no document text)
    source_words: int = 0
    words_lost: float | None = None  # share of the source's words the delivered output lacks
    detect_code: str = ""  # a refusal or crash of detect
    findings: dict[str, int] = field(default_factory=dict)  # per class, from detect
    names: list[dict[str, Any]] = field(default_factory=list)  # detect's name findings


def pressroom_cmd() -> list[str]:
    return ["nice", "-n", "10", sys.executable, "-m", "pressroom.cli"]


def which_pressroom() -> str:
    run = subprocess.run(
        [sys.executable, "-c", "import pressroom; print(pressroom.__file__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    return run.stdout.strip() or run.stderr.strip()[-200:]


def page_count(pdf: Path) -> int:
    run = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=False)
    m = re.search(r"^Pages:\s+(\d+)", run.stdout, re.M)
    return int(m.group(1)) if m else 0


def pdftext(pdf: Path) -> str:
    run = subprocess.run(
        ["pdftotext", "-q", str(pdf), "-"], capture_output=True, check=False, timeout=120
    )
    return run.stdout.decode("utf-8", "replace")


def words(text: str) -> Counter[str]:
    return Counter(WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


def share_lost(source: Counter[str], output: Counter[str]) -> float:
    total = sum(source.values())
    lost = sum(max(0, n - output.get(w, 0)) for w, n in source.items())
    return lost / total if total else 0.0


def first_code(stderr: str, default: str) -> str:
    m = CODE.search(stderr)
    return m.group(1) if m else default


def held_note(review: Path) -> tuple[int | None, str]:
    """The findings the held copy's note lists (``review/NAME.findings.json``), and its reason."""
    for note in review.glob("*.findings.json"):
        try:
            data = json.loads(note.read_text())
        except (OSError, ValueError):
            return None, ""
        if not isinstance(data, dict):
            return None, ""
        found = data.get("findings")
        return (len(found) if isinstance(found, list) else None), str(data.get("reason", ""))[:200]
    return None, ""


def children_cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def run_process(doc: Doc, pdf: Path, work: Path, timeout: float, res: Result) -> None:
    out = work / doc.name.removesuffix(".pdf")
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cmd = [*pressroom_cmd(), "process", "--redact", REDACT, "-o", str(out), str(pdf)]
    t0, cpu0 = time.monotonic(), children_cpu()
    try:
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        res.seconds = round(time.monotonic() - t0, 1)
        res.outcome = "timed out"
        return
    res.seconds = round(time.monotonic() - t0, 1)
    res.cpu_seconds = round(children_cpu() - cpu0, 1)
    delivered = out / doc.name
    if run.returncode == 0 and delivered.is_file():
        res.outcome = "delivered"
        source = words(pdftext(pdf))
        res.source_words = sum(source.values())
        if res.source_words >= 20:  # a scan's source has no text layer to lose words from
            res.words_lost = round(share_lost(source, words(pdftext(delivered))), 4)
    elif run.returncode == 3:
        res.outcome, res.code = "held", first_code(run.stderr, "?")
        res.held_findings, res.reason = held_note(out / "review")
    elif run.returncode == 2:
        res.outcome, res.code = "refused", first_code(run.stderr, "?")
    else:
        res.outcome = "crashed"
        res.code = first_code(run.stderr, f"exit {run.returncode}")


def run_detect(batch: Sequence[tuple[Doc, Path]], timeout: float) -> dict[str, Any] | None:
    """detect over a batch: {file: (findings, refusal code)}; None when it ran past its time."""
    cmd = [*pressroom_cmd(), "detect", "--redact", REDACT, *(str(p) for _, p in batch)]
    try:
        run = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout * len(batch), check=False
        )
    except subprocess.TimeoutExpired:
        return None
    found: dict[str, Any] = {str(p): ([], "") for _, p in batch}
    for line in run.stdout.splitlines():
        try:
            f = json.loads(line)
        except ValueError:
            continue
        if isinstance(f, dict) and f.get("file") in found:
            found[f["file"]][0].append(f)
    for line in run.stderr.splitlines():
        m = CODE.match(line)
        if not m or m.group(1) == "TOO_MANY_FINDINGS":  # printed up to the cap: findings stand
            continue
        for _, p in batch:
            if f": {p.name}: " in line or line.startswith(f"{m.group(1)}: {p}"):
                found[str(p)] = (found[str(p)][0], m.group(1))
    if run.returncode not in (0, 2) and len(batch) == 1 and not found[str(batch[0][1])][1]:
        found[str(batch[0][1])] = (found[str(batch[0][1])][0], f"exit {run.returncode}")
    return found


def detect_all(
    docs: Sequence[tuple[Doc, Path]], results: dict[str, Result], timeout: float, size: int
) -> None:
    batches = [docs[i : i + size] for i in range(0, len(docs), size)]
    for batch in batches:
        found = run_detect(batch, timeout)
        if found is None:  # one document held it up: each alone, with its own time
            for one in batch:
                got = run_detect([one], timeout)
                res = results[one[0].sha256]
                if got is None:
                    res.detect_code = "timed out"
                else:
                    apply_detect(res, *got[str(one[1])])
            continue
        for doc, pdf in batch:
            apply_detect(results[doc.sha256], *found[str(pdf)])


def apply_detect(res: Result, findings: list[dict[str, Any]], code: str) -> None:
    res.detect_code = code
    res.findings = dict(Counter(str(f.get("class")) for f in findings))
    res.names = [
        {"page": f.get("page"), "box": f.get("box"), "value": f.get("value", "")}
        for f in findings
        if f.get("class") == "name"
    ]


_BBOX = re.compile(
    r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>'
)


def page_words(pdf: Path, page: int) -> list[tuple[tuple[float, float, float, float], str]]:
    run = subprocess.run(
        ["pdftotext", "-q", "-bbox", "-f", str(page), "-l", str(page), str(pdf), "-"],
        capture_output=True,
        check=False,
        timeout=120,
    )
    text = run.stdout.decode("utf-8", "replace")
    return [
        ((float(a), float(b), float(c), float(d)), html.unescape(w))
        for a, b, c, d, w in _BBOX.findall(text)
    ]


def context_of(pdf: Path, page: int, box: Sequence[float], value: str) -> tuple[str, str]:
    """(context, how): the page's words around the finding, from the source's text layer: the
    words whose middle lies in the finding's box, else the value looked for in the page's text,
    else the value alone (a scan: its text is OCR's, not in the source)."""
    ws = page_words(pdf, page)
    joined, starts = "", []
    for _, w in ws:
        starts.append(len(joined) + (1 if joined else 0))
        joined = f"{joined} {w}" if joined else w
    hit = [
        i
        for i, ((x0, y0, x1, y1), _) in enumerate(ws)
        if len(box) == 4
        and box[0] - 1 <= (x0 + x1) / 2 <= box[2] + 1
        and box[1] - 1 <= (y0 + y1) / 2 <= box[3] + 1
    ]
    if hit:
        a, b = starts[hit[0]], starts[hit[-1]] + len(ws[hit[-1]][1])
        how = "box"
    else:
        flat = " ".join(value.split())
        a = joined.find(flat) if flat else -1
        if a < 0:
            return f"[{value}]", "value only"
        b, how = a + len(flat), "text"
    return f"{joined[max(0, a - CONTEXT) : a]}[{joined[a:b]}]{joined[b : b + CONTEXT]}", how


def median(xs: Iterable[float]) -> float | None:
    xs = list(xs)
    return statistics.median(xs) if xs else None


def fmt(x: float | None, pct: bool = False) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.1f} %" if pct else f"{x:.2f}"


def summarise(rs: Sequence[Result]) -> dict[str, Any]:
    out: dict[str, Any] = {"documents": len(rs), "pages": sum(r.pages for r in rs)}
    out["outcomes"] = {o: sum(1 for r in rs if r.outcome == o) for o in OUTCOMES}
    for o in ("held", "refused", "crashed"):
        out[f"{o}_codes"] = dict(Counter(r.code for r in rs if r.outcome == o).most_common())
    detected = [r for r in rs if not r.detect_code and r.pages]
    out["detect_failed"] = dict(Counter(r.detect_code for r in rs if r.detect_code))
    per_page: dict[str, Any] = {}
    for c in CLASSES:
        xs = [r.findings.get(c, 0) / r.pages for r in detected]
        per_page[c] = {"median": median(xs), "max": max(xs) if xs else None}
    out["findings_per_page"] = per_page
    totals = [sum(r.findings.values()) for r in detected]
    out["findings_per_document"] = {"median": median(totals), "max": max(totals, default=None)}
    held = [r.held_findings for r in rs if r.outcome == "held" and r.held_findings is not None]
    out["held_findings"] = {"median": median(held), "max": max(held, default=None)}
    lost = [r.words_lost for r in rs if r.outcome == "delivered" and r.words_lost is not None]
    out["words_lost"] = {"n": len(lost), "median": median(lost), "max": max(lost, default=None)}
    out["name_findings"] = sum(r.findings.get("name", 0) for r in detected)
    return out


def medmax(d: dict[str, Any], pct: bool = False) -> str:
    return f"{fmt(d['median'], pct)} / {fmt(d['max'], pct)}"


def print_table(halves: dict[str, dict[str, Any]]) -> None:
    cols, ss = list(halves), list(halves.values())
    rows: list[tuple[str, list[str]]] = [
        ("documents (pages)", [f"{s['documents']} ({s['pages']})" for s in ss])
    ]
    rows += [(o, [str(s["outcomes"][o]) for s in ss]) for o in OUTCOMES]
    for o in ("held", "refused", "crashed"):
        codes = [", ".join(f"{k} {v}" for k, v in s[f"{o}_codes"].items()) or "-" for s in ss]
        rows.append((f"  {o}: codes", codes))
    for c in CLASSES:
        rows.append(
            (f"{c} findings/page, med / max", [medmax(s["findings_per_page"][c]) for s in ss])
        )
    rows.append(("findings/document, med / max", [medmax(s["findings_per_document"]) for s in ss]))
    rows.append(("held: findings, med / max", [medmax(s["held_findings"]) for s in ss]))
    rows.append(
        (
            "delivered: words lost, med / max (n)",
            [f"{medmax(s['words_lost'], True)} ({s['words_lost']['n']})" for s in ss],
        )
    )
    rows.append(("name findings (detect)", [str(s["name_findings"]) for s in ss]))
    rows.append(("detect refused / failed", [str(s["detect_failed"] or "-") for s in ss]))
    w0 = max(len(r[0]) for r in rows)
    ws = [max(len(c), *(len(r[1][i]) for r in rows)) for i, c in enumerate(cols)]
    print(f"{'':{w0}}  " + "  ".join(f"{c:>{ws[i]}}" for i, c in enumerate(cols)))
    for label, vals in rows:
        print(f"{label:{w0}}  " + "  ".join(f"{v:>{ws[i]}}" for i, v in enumerate(vals)))


def print_kinds(rs: Sequence[Result]) -> None:
    """Outcomes and findings per kind of document, both halves pooled."""
    print(
        f"\n{'kind':13}  {'docs':>4}  {'dlv':>3}  {'held':>4}  {'ref':>3}  {'crash':>5}  "
        f"{'t/o':>3}  {'names/doc med':>13}  {'findings/doc max':>16}"
    )
    for kind in sorted({r.kind for r in rs}):
        ks = [r for r in rs if r.kind == kind]
        n = {o: sum(1 for r in ks if r.outcome == o) for o in OUTCOMES}
        ok = [r for r in ks if not r.detect_code]
        names = fmt(median(r.findings.get("name", 0) for r in ok))
        most = max((sum(r.findings.values()) for r in ok), default=0)
        print(
            f"{kind:13}  {len(ks):4}  {n['delivered']:3}  {n['held']:4}  {n['refused']:3}  "
            f"{n['crashed']:5}  {n['timed out']:3}  {names:>13}  {most:16}"
        )


def write_sample(
    results: Sequence[Result], paths: dict[str, Path], n: int, seed: int, dest: Path
) -> list[dict[str, Any]]:
    pool = [(r, f) for r in results if not r.detect_code for f in r.names]
    picked = random.Random(seed).sample(pool, min(n, len(pool)))
    sample = []
    for i, (r, f) in enumerate(picked, 1):
        ctx, how = context_of(paths[r.sha256], int(f["page"] or 1), f["box"] or [], f["value"])
        sample.append(
            {
                "n": i,
                "doc": r.name,
                "kind": r.kind,
                "half": r.half,
                "page": f["page"],
                "value": f["value"],
                "context": ctx,
                "how": how,
            }
        )
    with dest.open("w") as fh:
        fh.write("# label: P (a person) or N (not a person); context: 40 characters either side\n")
        fh.write("# n\tlabel\tdoc\tkind\thalf\tvalue\tcontext\n")
        for s in sample:
            value = " ".join(str(s["value"]).split())
            ctx = " ".join(str(s["context"]).split())
            fh.write(f"{s['n']}\t?\t{s['doc']}\t{s['kind']}\t{s['half']}\t{value}\t{ctx}\n")
    return sample


def halves_of(rs: Sequence[Result], half: str) -> dict[str, dict[str, Any]]:
    halves = {h: summarise([r for r in rs if r.half == h]) for h in HALVES if half in (h, "all")}
    if half == "all":
        halves["all"] = summarise(rs)
    return halves


def again(earlier: Path, half: str, dest: Path | None) -> int:
    """An earlier run's figures printed again, its documents in the manifest's halves of now."""
    data = json.loads(earlier.read_text())
    now = {d.sha256: d.half for d in select()}
    rs = [Result(**d) for d in data["documents"]]
    for r in rs:
        r.half = now.get(r.sha256, r.half)
    for s in data.get("sample", []):
        s["half"] = next((r.half for r in rs if r.name == s["doc"]), s["half"])
    rs = [r for r in rs if half in (r.half, "all")]
    data["halves"] = halves_of(rs, half)
    print_table(data["halves"])
    print_kinds(rs)
    print(f"\n{len(rs)} documents, as measured by {data.get('pressroom')}")
    if dest:
        dest.write_text(json.dumps(data, indent=1, ensure_ascii=False))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--half", choices=(*HALVES, "all"), default="all")
    ap.add_argument("--kinds", default="", help="comma list of kinds (default: every kind)")
    ap.add_argument("--only", default="", help="comma list of SHA-256 prefixes")
    ap.add_argument("--json", type=Path, help="write every figure and document here")
    ap.add_argument("--sample", type=int, default=100, help="name findings to sample (0: none)")
    ap.add_argument("--sample-file", type=Path, default=Path("real_docs_sample.tsv"))
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds a document")
    ap.add_argument("--parallel", type=int, default=1, help="documents processed at once")
    ap.add_argument("--detect-batch", type=int, default=8, help="documents a detect process")
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--mirrors", type=Path, default=MIRRORS)
    ap.add_argument("--work", type=Path, help="keep the outputs here (default: a temporary folder)")
    ap.add_argument(
        "--from-json",
        type=Path,
        help="run nothing: print the figures of an earlier --json again, each document in the "
        "half the manifest gives it now (and with --json, write them so)",
    )
    args = ap.parse_args(argv)
    if args.from_json:
        return again(args.from_json, args.half, args.json)

    docs = select(args.half, [k for k in args.kinds.split(",") if k])
    if args.only:
        prefixes = tuple(p for p in args.only.split(",") if p)
        docs = [d for d in docs if d.sha256.startswith(prefixes)]
    found, missing = materialise(docs, args.cache, args.mirrors)
    for _doc, why in missing:
        print(f"left out: {why}", file=sys.stderr)
    where = which_pressroom()
    print(f"pressroom measured: {where}", file=sys.stderr)
    work = args.work or Path(tempfile.mkdtemp(prefix="real-docs-"))
    results = {
        d.sha256: Result(d.sha256, d.name, d.repo, d.path, d.kind, d.half, pages=page_count(p))
        for d, p in found
    }
    paths = {d.sha256: p for d, p in found}
    t0 = time.monotonic()

    def one(item: tuple[Doc, Path]) -> None:
        doc, pdf = item
        res = results[doc.sha256]
        run_process(doc, pdf, work, args.timeout, res)
        print(
            f"{doc.half:8}  {doc.kind:13}  {doc.name}  {res.pages:2} p  {res.outcome:9}  "
            f"{res.code:24}  {res.seconds:6.1f} s  ({res.cpu_seconds or 0:.1f} s CPU)",
            file=sys.stderr,
            flush=True,
        )

    with ThreadPoolExecutor(max(1, args.parallel)) as pool:
        list(pool.map(one, found))
    t_process = time.monotonic() - t0
    detect_all(found, results, args.timeout, max(1, args.detect_batch))
    t_all = time.monotonic() - t0

    rs = list(results.values())
    halves = halves_of(rs, args.half)
    print_table(halves)
    print_kinds(rs)
    print(
        f"\n{len(rs)} documents, {len(missing)} left out; process {t_process:.0f} s, "
        f"process and detect {t_all:.0f} s in all (nice -n 10, parallel {args.parallel})"
    )
    sample: list[dict[str, Any]] = []
    if args.sample:
        sample = write_sample(rs, paths, args.sample, args.seed, args.sample_file)
        print(f"{len(sample)} name findings sampled (seed {args.seed}) to {args.sample_file}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "pressroom": where,
                    "argv": sys.argv[1:],
                    "seconds": {"process": round(t_process), "all": round(t_all)},
                    "missing": [why for _, why in missing],
                    "halves": halves,
                    "documents": [asdict(r) for r in rs],
                    "sample": sample,
                },
                indent=1,
                ensure_ascii=False,
            )
        )
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
