"""Redaction benchmark (not a test): recall per class, precision, keep rate, held documents and
seconds per page, per render scale and per corpus half.

    .venv-test/bin/python bench/redaction_bench.py [--docs 27] [--dpi 300] [--quick] [--jobs 2]

The corpus is ``corpora/documents/``: news and feature articles, interview
transcripts, bank statements, window-envelope letters, forms, a scan with a sideways page, faint
print, invoices with a wrapped IBAN; names from many cultures; organisations, places, dates,
amounts and headlines that must stay. Its two halves use different names, places and phrasings:
``dev`` is the half detection may be tuned on, ``held-out`` the half it must not be. Scanned
documents are rendered at each scale (150, 200, 300 dpi); born-digital ones are the same file at
every scale, so they run once and count in every block.

Each document goes through ``redact_document`` (policy name,address,account-number, the real
Tesseract engine, one core per worker process) and the output is read back by PDFium's text,
poppler's ``pdftotext`` and OCR of its pixels at 300 dpi (a second, high-threshold OCR pass on
pages with faint print). Per class:

- recall over all mentions: full names, surnames alone, possessives, titles, capitals, given
  names, each occurrence apart. A mention counts as removed only if no reader reads it where it
  was printed (compared normalised: case, accents, spaces and punctuation ignored; a one- or
  two-letter OCR slip still counts as read) and its place was actually burned black;
- precision: of the words the output burned, the share that belonged to a mention (per document,
  not per class: the output does not say which class burned a word);
- keep rate: the share of keep strings still searchable (PDFium or poppler) and not burned;
- held: documents held for review (their held copy is still scored), with the reason;
- median and p95 seconds per page of ``redact_document`` itself (every pass: detection, faint
  print, output checks), not of the read-back.

A full run (27 documents a half, three scales) takes five to ten minutes with two worker
processes on two cores; progress goes to stderr, figures to stdout.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

# the corpus is tooling at the repository's root, not part of the installed package
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from corpora.documents.kinds import documents
from corpora.documents.model import CLASSES, DIGITAL, KINDS, SPLITS, Document
from corpora.documents.scoring import Outcome, redact_and_score

POLICY = "name,address,account-number"
_worker: dict[str, Any] = {}


def _init(cores: Any) -> None:
    """One engine, one policy and one warm model per worker process, pinned to one core."""
    core = cores.get()
    if hasattr(os, "sched_setaffinity") and core is not None:
        os.sched_setaffinity(0, {core})
    os.environ["OMP_THREAD_LIMIT"] = "1"
    from pressroom.engines.tesseract import TesseractEngine
    from pressroom.redact.detect.detector import Detector
    from pressroom.redact.policy import parse_policy
    from pressroom.settings import Settings

    policy = parse_policy(POLICY, now=time.time())
    Detector.for_classes(policy.classes).find(
        "Dear Ms Adaeze Okafor, we paid GB29 NWBK 6016 1331 9268 19."
    )
    engine = TesseractEngine(tessdata_prefix=Settings.from_env().tessdata_prefix)
    warm = Image.new("L", (600, 120), 255)
    ImageDraw.Draw(warm).text((20, 40), "Warm up the recogniser", fill=0)
    engine.recognize(warm, dpi=300)
    _worker.update(
        engine=engine,
        policy=policy,
        folder=Path(tempfile.mkdtemp(prefix="pressroom-redaction-bench-")),
    )


def _run(job: tuple[Document, int]) -> Outcome:
    doc, dpi = job
    folder = _worker["folder"] / f"{doc.id}-{dpi}"
    folder.mkdir()
    try:
        return redact_and_score(doc, folder, dpi, _worker["engine"], _worker["policy"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * len(ordered)) - 1))]


def _rate(found: int, total: int) -> str:
    return f"{found / total:.3f} ({found}/{total})" if total else "   -   (0/0)"


def _why(seen: Any) -> str:
    readers = ", ".join(seen.readers) or "no reader"
    return f"read by {readers}; " + ("burned" if seen.burned else "not burned")


def _left(o: Outcome) -> bool:
    """A value, or a word of one, can still be seen in this output."""
    return any(not s.whole for s in o.values)


def _listed(head: str, found: Counter[str], examples: int) -> None:
    """The most common lines first, each once with its count."""
    for line, n in found.most_common(examples):
        print(f"  {head} {line}" + (f" x{n}" if n > 1 else ""))
    rest = sum(found.values()) - sum(n for _, n in found.most_common(examples))
    if rest:
        print(f"  {head} ... and {rest} more")


def block(dpi: int, split: str, outcomes: list[Outcome], examples: int) -> dict[str, Any]:
    """Print one (scale, half) block; returns its headline figures."""
    scans = sum(o.doc.medium != DIGITAL for o in outcomes)
    pages = sum(o.pages for o in outcomes)
    print(
        f"\n== {dpi} dpi · {split} · {len(outcomes)} documents ({scans} scanned at {dpi} dpi, "
        f"{len(outcomes) - scans} born-digital), {pages} pages =="
    )
    figures: dict[str, Any] = {}
    for kind in CLASSES:
        seen = [s for o in outcomes for s in o.values if s.mention.kind == kind]
        removed = sum(s.removed for s in seen)
        whole = sum(s.whole for s in seen)
        figures[kind] = removed / len(seen) if seen else float("nan")
        figures[kind + " whole"] = whole / len(seen) if seen else float("nan")
        forms: dict[str, list[int]] = {}
        for s in seen:
            tally = forms.setdefault(s.mention.form, [0, 0])
            tally[0] += s.removed
            tally[1] += 1
        parts = "  ".join(f"{f} {a}/{b}" for f, (a, b) in sorted(forms.items()))
        print(f"  {kind:<15} recall {_rate(removed, len(seen)):<18} {parts}")
        print(f"  {'':<15} whole  {_rate(whole, len(seen)):<18} (no word of it left to see)")
    lost = [(w, true) for o in outcomes for w, true in o.lost]
    true = sum(t for _, t in lost)
    keeps = [s for o in outcomes for s in o.keeps]
    dropped = [(o, s) for o in outcomes for s in o.dropped()]
    figures["precision"] = true / len(lost) if lost else float("nan")
    figures["keep"] = 1 - len(dropped) / len(keeps) if keeps else float("nan")
    held = [o for o in outcomes if o.held]
    errors = [o for o in outcomes if o.error]
    figures["held"] = len(held)
    figures["held without cause"] = sum(not _left(o) for o in held)
    per_page = [o.seconds / o.pages for o in outcomes for _ in range(o.pages)]
    scan_pages = [
        o.seconds / o.pages for o in outcomes if o.doc.medium != DIGITAL for _ in range(o.pages)
    ]
    figures["p95"] = _percentile(per_page, 0.95) if per_page else float("nan")
    figures["p95 scans"] = _percentile(scan_pages, 0.95) if scan_pages else float("nan")
    print(
        f"  precision {_rate(true, len(lost))} of burned words were in a mention · "
        f"keep rate {_rate(len(keeps) - len(dropped), len(keeps))} · held {len(held)} of "
        f"{len(outcomes)}" + (f" · no output {len(errors)}" if errors else "")
    )
    if per_page:
        line = (
            f"  seconds per page: median {statistics.median(per_page):.2f}, p95 "
            f"{figures['p95']:.2f} ({len(per_page)} pages)"
        )
        if scan_pages:
            line += (
                f"; scans only median {statistics.median(scan_pages):.2f}, p95 "
                f"{_percentile(scan_pages, 0.95):.2f}"
            )
        print(line)
    for o in held:
        cause = "a value really is left" if _left(o) else "no value left: held without cause"
        print(f"  held  {o.doc.id}: {o.held} [{cause}]")
    for o in errors:
        print(f"  error {o.doc.id}: {o.error}")
    for kind in CLASSES:
        missed = Counter(
            f"[{o.doc.kind}] {s.mention.form}: {s.mention.text!r} ({_why(s)})"
            for o in outcomes
            for s in o.missed(kind)
        )
        _listed(f"miss  {kind:<14}", missed, examples)
        partly = Counter(
            f"[{o.doc.kind}] {s.mention.form}: {s.mention.text!r} (left: {' '.join(s.left)!r})"
            for o in outcomes
            for s in o.values
            if s.mention.kind == kind and s.removed and not s.whole
        )
        _listed(f"part  {kind:<14}", partly, max(1, examples // 2))
    wrong = Counter(f"[{o.doc.kind}] {w.text}" for o in outcomes for w, t in o.lost if not t)
    if wrong:
        common = ", ".join(f"{w} x{n}" if n > 1 else w for w, n in wrong.most_common(2 * examples))
        print(f"  burned but in no mention: {common}")
    lost_keeps = Counter(
        f"[{o.doc.kind}] {s.mention.text!r} ({'burned' if s.burned else 'not in the text layer'})"
        for o, s in dropped
    )
    _listed("dropped keep", lost_keeps, examples)
    return figures


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--docs", type=int, default=3 * len(KINDS), help="documents per half")
    parser.add_argument("--dpi", type=int, action="append", choices=(150, 200, 300))
    parser.add_argument("--quick", action="store_true", help="one document of each kind, 300 dpi")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--examples", type=int, default=8, help="misses listed per class")
    args = parser.parse_args(argv)
    dpis = sorted(set(args.dpi or ((300,) if args.quick else (150, 200, 300))))
    count = len(KINDS) if args.quick else args.docs
    halves = {split: documents(split, count, args.seed) for split in SPLITS}
    jobs: list[tuple[Document, int]] = []
    for split in SPLITS:
        for doc in halves[split]:
            # born-digital: the same file at every scale, so it runs once
            for dpi in dpis[-1:] if doc.medium == DIGITAL else dpis:
                jobs.append((doc, dpi))
    pages = sum(len(d.pages) for d, _ in jobs)
    print(
        f"redaction bench: policy {POLICY}; {count} documents a half ({', '.join(SPLITS)}), "
        f"scales {', '.join(map(str, dpis))} dpi; {len(jobs)} runs, {pages} pages; "
        f"{args.jobs} worker process(es), one core each",
        flush=True,
    )
    started = time.perf_counter()
    results: dict[tuple[str, int], Outcome] = {}
    ctx = mp.get_context("fork")
    cores = ctx.Queue()
    available = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    for n in range(args.jobs):
        cores.put(available[n % len(available)] if available else None)
    # the longest first, so the last minutes are not one worker on a two-page scan
    jobs.sort(key=lambda j: -len(j[0].pages))
    with ctx.Pool(args.jobs, initializer=_init, initargs=(cores,)) as pool:
        for done, outcome in enumerate(pool.imap_unordered(_run, jobs), 1):
            results[(outcome.doc.id, outcome.dpi)] = outcome
            missed = len(outcome.missed())
            status = "held" if outcome.held else "error" if outcome.error else "ok"
            print(
                f"[{done:>3}/{len(jobs)}] {time.perf_counter() - started:6.0f} s  "
                f"{outcome.doc.id:<16} {outcome.dpi} dpi  {outcome.pages} p  "
                f"{outcome.seconds / outcome.pages:5.2f} s/page  missed {missed:>2}  {status}",
                file=sys.stderr,
                flush=True,
            )
    summary: list[tuple[int, str, dict[str, Any]]] = []
    for dpi in dpis:
        for split in SPLITS:
            outcomes = [
                results[(d.id, dpis[-1] if d.medium == DIGITAL else dpi)] for d in halves[split]
            ]
            summary.append((dpi, split, block(dpi, split, outcomes, args.examples)))
    print("\n== summary (recall per class; born-digital documents count in every row) ==")
    print(
        f"  {'dpi':>4} {'half':<9} {'name':>6} {'address':>8} {'account':>8} {'prec':>6} "
        f"{'keep':>6} {'held':>5} {'no cause':>8} {'p95 scan':>8}   whole: name address account"
    )
    for dpi, split, f in summary:
        print(
            f"  {dpi:>4} {split:<9} {f['name']:>6.3f} {f['address']:>8.3f} "
            f"{f['account-number']:>8.3f} {f['precision']:>6.3f} {f['keep']:>6.3f} "
            f"{f['held']:>5} {f['held without cause']:>8} {f['p95 scans']:>8.2f}   "
            f"{f['name whole']:>11.3f} {f['address whole']:>7.3f} "
            f"{f['account-number whole']:>7.3f}"
        )
    print(
        f"  targets: name >= 0.95, address >= 0.97, account >= 0.99, keep >= 0.95, no held "
        f"without cause, p95 <= 4 s at 300 dpi. Wall time {time.perf_counter() - started:.0f} s."
    )


if __name__ == "__main__":
    main()
