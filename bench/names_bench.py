"""Names on text others wrote and labelled, side by side with Presidio (a benchmark, not a test).

    .venv-test/bin/python bench/names_bench.py [--no-presidio] [--split test] [--examples 3]
        [--ner-datasets-repo PATH] [--presidio-research-repo PATH]

Corpora (``bench/names_corpora.py`` reads them from local git mirrors; the licence of each is in
its ``LICENCES`` and the README's data table): WNUT-17 and the Broad Twitter Corpus (social
text), WikiGold (encyclopaedia prose), re3d's public-domain and OGL sources (government news
releases), presidio-research's synthetic sentences (measured only), and our own realistic
documents (``corpora.documents``: articles, transcripts, letters, statements, forms, faint
scans) and the held-out half of our generated news and business text (``corpora.news``,
``news-own``: results tables, line-ups, bylines, captions, boards, company news, minutes;
reported apart, never pooled with the third-party corpora). Every corpus that may be trained
or tuned on is split train/tune/test; the headline is the ``test`` split (``--split tune``
shows the other half; our own corpus's test half is its ``held-out`` half).

Both systems read every document in one process each, in one run: Pressroom through its scoring
interface (``pressroom detect --jsonl --redact name``), Presidio's analyzer on the same small
spaCy model (its PERSON entities; see ``bench/peer_vectors.py`` for its environment).

Per corpus and per kind of mention:

- **full**: person mentions whose every letter and digit lies inside a name finding;
  **part**: mentions touched by one;
- **prec**: name findings that touch a person mention; **org/place**: findings that touch an
  organisation or a place and no person; **keep**: other labelled entities (organisations,
  places, works, products, the strings that must stay) not touched by any name finding;
- **doubt**: findings marked ``"doubt": true``; **held**: documents the redaction engine would
  hold ``DOUBTFUL_NAMES`` (three doubtful names or more, past ``--hold-share``).

Kinds of mention (each mention has one, the first that fits): ``table`` (its line is a line of a
table or a list: a tab, a rank or bullet at its start, or two numbers or more and few lower-case
words), ``caps`` (in capitals), ``surname`` (one word, the last word of a longer mention of the
same document), ``one-word`` (any other single word), ``prose`` (the rest).

Twitter @handles and #hashtags are neither counted as mentions nor as false findings.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import names_corpora as nc  # noqa: E402
from bench.peer_vectors import (  # noqa: E402
    PRESIDIO_VENV,
    Case,
    VectorSet,
    presidio_command,
    presidio_version,
    run_jsonl,
)

Span = tuple[int, int]
KINDS = ("table", "caps", "surname", "one-word", "prose")
OWN = "own"
_NUMBER = re.compile(r"(?<![\w.])[+-]?\d+(?:[.,:/]\d+)*(?![\w])")
_LIST_START = re.compile(r"^\s*(?:\d{1,3}[.)]?|[-*\u2022\u2013])\s+\S")
_LOWER_WORD = re.compile(r"\b[a-z][a-z'\u2019]+\b")


# ------------------------------------------------------------------------------ our own corpus


def own_docs(
    count: int, halves: Sequence[tuple[str, str]] = (("tune", "dev"), ("test", "held-out"))
) -> list[nc.Doc]:
    """Our generated documents as text: words in drawing order, a new line where a line ends
    (the next word starts left of it or on another baseline); people and strings that must stay
    as the runs of words that belong to them."""
    from corpora.documents.kinds import documents

    out: list[nc.Doc] = []
    for split, ours in halves:
        for doc in documents(ours, count):
            parts: list[str] = []
            at = 0
            runs: list[tuple[str | None, int, int]] = []
            prev = None
            sep = "\n"
            for w in doc.words:
                if prev is not None:
                    same_line = (
                        w.page == prev.page
                        and abs(w.box[3] - prev.box[3]) < 2.0
                        and w.box[0] >= prev.box[2] - 1.0
                    )
                    # a wide gap is two cells of a table, as the page text has it
                    wide = w.box[0] - prev.box[2] > 1.5 * max(prev.box[3] - prev.box[1], 1.0)
                    sep = ("\t" if wide else " ") if same_line else "\n"
                    parts.append(sep)
                    at += 1
                s = at
                parts.append(w.text)
                at += len(w.text)
                # a run goes on along its line; a name also over a line end (wrapped)
                if (
                    runs
                    and w.owner is not None
                    and runs[-1][0] == w.owner
                    and (sep != "\n" or w.owner == "name")
                ):
                    runs[-1] = (w.owner, runs[-1][1], at)
                else:
                    runs.append((w.owner, s, at))
                prev = w
            text = "".join(parts)
            people = [_trim(text, s, e) for o, s, e in runs if o == "name"]
            others = [("keep", s, e) for o, s, e in runs if o == "keep"]
            out.append(nc.Doc(f"own:{doc.id}", OWN, split, text, people, others))
    return out


def _trim(text: str, s: int, e: int) -> Span:
    """A person's words without the punctuation or possessive drawn with them."""
    m = re.search(r"(?:['\u2019]s?)?[^\w]*$", text[s:e])
    return s, e - (len(m.group()) if m else 0)


# ------------------------------------------------------------------------------------ scoring


def mention_kind(doc: nc.Doc, span: Span) -> str:
    s, e = span
    value = doc.text[s:e]
    a = doc.text.rfind("\n", 0, s) + 1
    b = doc.text.find("\n", e)
    line = doc.text[a : b if b >= 0 else len(doc.text)]
    numbers = len(_NUMBER.findall(line))
    lower = len(_LOWER_WORD.findall(line))
    if "\t" in line or _LIST_START.match(line) or (numbers >= 2 and lower <= 3):
        return "table"
    letters = [c for c in value if c.isalpha()]
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return "caps"
    if len(value.split()) == 1:
        word = value.strip(".,'\u2019s")
        for s2, e2 in doc.people:
            other = doc.text[s2:e2].split()
            if len(other) > 1 and other[-1].strip(".,'\u2019s") == word:
                return "surname"
        return "one-word"
    return "prose"


def _alnum(text: str, s: int, e: int) -> list[int]:
    return [i for i in range(s, e) if text[i].isalnum()]


def _touch(a: Span, b: Span) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@dataclass
class Tally:
    gold: Counter[str] = field(default_factory=Counter)
    full: Counter[str] = field(default_factory=Counter)
    part: Counter[str] = field(default_factory=Counter)
    findings: int = 0
    on_person: int = 0
    on_org_place: int = 0
    keep_total: int = 0
    keep_kept: int = 0
    doubt: int = 0
    held: int = 0
    docs: int = 0
    chars: int = 0
    seconds: float = 0.0
    misses: list[str] = field(default_factory=list)
    false: list[str] = field(default_factory=list)

    def add(self, doc: nc.Doc, findings: Sequence[dict[str, Any]], hold_share: float) -> None:
        self.docs += 1
        self.chars += len(doc.text)
        names = [f for f in findings if f["class"] == "name"]
        spans = [(f["start"], f["end"]) for f in names]
        covered = set()
        for s, e in spans:
            covered.update(range(s, e))
        for span in doc.people:
            kind = mention_kind(doc, span)
            letters = _alnum(doc.text, *span)
            self.gold[kind] += 1
            self.gold["all"] += 1
            hit = [i in covered for i in letters]
            if hit and all(hit):
                self.full[kind] += 1
                self.full["all"] += 1
            if any(hit):
                self.part[kind] += 1
                self.part["all"] += 1
            else:
                self.misses.append(_show(doc, span))
        doubtful = 0
        for f, span in zip(names, spans, strict=True):
            if any(_touch(span, g) for g in doc.ignore):
                continue
            self.findings += 1
            if f.get("doubt"):
                self.doubt += 1
                doubtful += 1
            if any(_touch(span, g) for g in doc.people):
                self.on_person += 1
            else:
                if any(_touch(span, (s, e)) for k, s, e in doc.others if k in (nc.ORG, nc.PLACE)):
                    self.on_org_place += 1
                self.false.append(_show(doc, span))
        # as the redaction engine holds (DOUBTFUL_NAMES): three doubtful names or more, and
        # more than the share of the document's name findings
        if doubtful >= 3 and doubtful / max(1, len(names)) > hold_share:
            self.held += 1
        for _k, s, e in doc.others:
            self.keep_total += 1
            if not any(_touch((s, e), x) for x in spans):
                self.keep_kept += 1


def _show(doc: nc.Doc, span: Span) -> str:
    s, e = span
    a, b = max(0, s - 30), min(len(doc.text), e + 30)
    return (doc.text[a:s] + "[" + doc.text[s:e] + "]" + doc.text[e:b]).replace("\n", " / ")


def _r(n: int, d: int) -> str:
    return f"{n / d:.3f}" if d else "  -  "


def line(system: str, t: Tally) -> str:
    kinds = "  ".join(f"{k} {_r(t.full[k], t.gold[k])}/{t.gold[k]}" for k in KINDS if t.gold[k])
    return (
        f"  {system:<9} full {_r(t.full['all'], t.gold['all'])}"
        f" part {_r(t.part['all'], t.gold['all'])}"
        f"  prec {_r(t.on_person, t.findings)} ({t.findings} findings, org/place "
        f"{_r(t.on_org_place, t.findings)})  keep {_r(t.keep_kept, t.keep_total)}"
        f"  doubt {t.doubt} held {t.held}/{t.docs}  {t.seconds:.1f} s\n"
        f"  {'':<9} by kind (full/mentions): {kinds}"
    )


# ------------------------------------------------------------------------------------ running


def pressroom_command() -> list[str]:
    beside = Path(sys.executable).parent / "pressroom"
    if not beside.exists():
        raise SystemExit("names_bench: run with the project's .venv-test/bin/python")
    return [str(beside), "detect", "--jsonl", "--redact", "name"]


def as_sets(docs: Sequence[nc.Doc]) -> tuple[list[VectorSet], dict[str, list[nc.Doc]]]:
    groups: dict[str, list[nc.Doc]] = defaultdict(list)
    for d in docs:
        groups[f"{d.corpus}/{d.split}"].append(d)
    sets = [
        VectorSet(key, key, "name", "name", "", [Case(d.text, list(d.people)) for d in ds])
        for key, ds in groups.items()
    ]
    return sets, dict(groups)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=nc.SPLITS, default="test")
    ap.add_argument("--all-splits", action="store_true", help="tune and test halves both")
    ap.add_argument("--ner-datasets-repo", type=Path, default=nc.default_mirror(nc.NER_DATASETS))
    ap.add_argument(
        "--presidio-research-repo", type=Path, default=nc.default_mirror(nc.PRESIDIO_RESEARCH)
    )
    ap.add_argument("--no-presidio", action="store_true", help="score Pressroom only")
    ap.add_argument("--presidio-venv", type=Path, default=PRESIDIO_VENV)
    ap.add_argument("--own", type=int, default=18, help="documents of each half of our corpus")
    ap.add_argument(
        "--news", type=int, default=300, help="documents of our generated news's held-out half"
    )
    ap.add_argument("--corpus", action="append", help="only these corpora (repeatable)")
    ap.add_argument("--hold-share", type=float, default=0.5)
    ap.add_argument("--examples", type=int, default=0, help="misses and false findings shown")
    ap.add_argument("--json", type=Path, help="write the figures here as well")
    args = ap.parse_args(argv)

    wanted = set(args.corpus or ())
    ours = {OWN, nc.NEWS_OWN}
    docs: list[nc.Doc] = []
    commits: dict[str, str] = {}
    if not wanted or wanted - ours:  # the mirrors are read only for a third-party corpus
        docs, commits = nc.load(args.ner_datasets_repo, args.presidio_research_repo)
    if not wanted or OWN in wanted:
        docs += own_docs(args.own)
    if not wanted or nc.NEWS_OWN in wanted:
        docs += nc.news_own(args.news)
    splits = ("tune", "test") if args.all_splits else (args.split,)
    docs = [d for d in docs if d.split in splits and (not args.corpus or d.corpus in args.corpus)]
    sets, groups = as_sets(docs)
    print(
        "names_bench: "
        + (", ".join(f"{repo}@{c[:12]}" for repo, c in commits.items()) or "no mirror read")
        + f"; {len(docs)} documents, {sum(len(d.people) for d in docs)} person mentions, "
        + f"{sum(len(d.text) for d in docs):,} characters"
    )
    systems: dict[str, list[str]] = {"pressroom": pressroom_command()}
    if not args.no_presidio:
        systems["presidio"] = presidio_command(args.presidio_venv, 0.0)
        print(f"presidio-analyzer {presidio_version(args.presidio_venv)} on en_core_web_sm 3.8.0")
    results: dict[str, dict[str, Tally]] = {}
    by_doc: dict[str, dict[str, Tally]] = {}  # system, kind of document of our news
    for system, command in systems.items():
        t0 = time.perf_counter()
        run = run_jsonl(command, sets, system)
        print(f"{system}: start-up {run.startup:.1f} s, all {time.perf_counter() - t0:.1f} s")
        for key, ds in groups.items():
            tally = Tally(seconds=run.seconds[key])
            for d, found in zip(ds, run.findings[key], strict=True):
                tally.add(d, found, args.hold_share)
                if d.corpus == nc.NEWS_OWN:  # our news: also by kind of document
                    doc_kind = d.id.split(":")[1]
                    by_doc.setdefault(system, {}).setdefault(doc_kind, Tally()).add(
                        d, found, args.hold_share
                    )
            results.setdefault(key, {})[system] = tally
    figures: dict[str, Any] = {}
    for key in sorted(results, key=lambda k: (k.split("/")[1], k)):
        n = len(groups[key])
        people = sum(len(d.people) for d in groups[key])
        print(f"\n{key}: {n} documents, {people} person mentions")
        for system, tally in results[key].items():
            print(line(system, tally))
            figures.setdefault(key, {})[system] = {
                "full": tally.full["all"] / max(1, tally.gold["all"]),
                "part": tally.part["all"] / max(1, tally.gold["all"]),
                "precision": tally.on_person / max(1, tally.findings),
                "org_place": tally.on_org_place / max(1, tally.findings),
                "keep": tally.keep_kept / max(1, tally.keep_total),
                "held": tally.held,
                "by_kind": {k: [tally.full[k], tally.gold[k]] for k in KINDS},
            }
        if key.split("/")[0] == nc.NEWS_OWN:
            for system, kinds in by_doc.items():
                print(f"  {system:<9} by document (full/mentions, prec/findings):")
                for k, t in sorted(kinds.items()):
                    print(
                        f"  {'':<11}{k:<13} {_r(t.full['all'], t.gold['all'])}/{t.gold['all']:<4}"
                        f" {_r(t.on_person, t.findings)}/{t.findings}"
                    )
        if args.examples:
            mine = results[key]["pressroom"]
            for label, items in (("missed", mine.misses), ("false", mine.false)):
                for ex in _spread(items, args.examples):
                    print(f"    {label}: {ex}")
    third = [k for k in results if k.split("/")[0] not in (OWN, nc.NEWS_OWN, "presidio-synth")]
    if third:
        print("\nthird-party, pooled over " + ", ".join(sorted(third)) + ":")
        for system in systems:
            pooled = _pool(results[k][system] for k in third)
            print(line(system, pooled))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


def _pool(tallies: Iterable[Tally]) -> Tally:
    out = Tally()
    for t in tallies:
        out.gold.update(t.gold)
        out.full.update(t.full)
        out.part.update(t.part)
        out.findings += t.findings
        out.on_person += t.on_person
        out.on_org_place += t.on_org_place
        out.keep_total += t.keep_total
        out.keep_kept += t.keep_kept
        out.doubt += t.doubt
        out.held += t.held
        out.docs += t.docs
        out.chars += t.chars
        out.seconds += t.seconds
    return out


def _spread(items: list[str], k: int) -> list[str]:
    if len(items) <= k:
        return items
    step = len(items) / k
    return [items[int(i * step)] for i in range(k)]


if __name__ == "__main__":
    main()
