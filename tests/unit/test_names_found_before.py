"""A person the detector found last round and misses now fails this test, not only a benchmark.

``tests/data/names_found_before.json`` holds the documents of our own corpus
(``corpora.documents``, both halves, ``dev`` and ``held-out``), as the names benchmark reads them
(``bench/names_bench.py``'s ``own_docs``: words in drawing order, a tab between table cells, a new
line where a line ends), and every person mention of the corpus's own ground truth (people only,
never organisations or places) that the detector found in full when the file was written: every
letter and digit of the mention inside a finding of class ``name`` of what ``pressroom detect
--jsonl --redact name`` runs (``Detector.for_classes(["name"]).find_all``). The test reads each
document again and asserts that each of those mentions is still found in full. Mentions missed
then are not asserted (they are counted in the file, for the record); a fix that finds them is
welcome, a change that loses one fails here.

The texts are stored, not regenerated: a change to the corpus generator must not change what is
guarded. Regenerating is a deliberate act, done only when a loss is understood and accepted or
when more is found and should be guarded from now on:

    .venv-test/bin/python -m tests.unit.test_names_found_before --regenerate [--accept-losses]

It refuses to write a file that drops a mention the old one guarded, unless ``--accept-losses``
is given (and then lists what it drops: say why in the commit). The file was first written at
commit b660694 (its ``commit`` field), with the model of that commit.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "names_found_before.json"
DOCUMENTS_PER_HALF = 18  # as bench/names_bench.py's --own default
Span = tuple[int, int]


def in_full(text: str, span: Span, findings: Sequence[Span]) -> bool:
    """Every letter and digit of ``text[span]`` inside one of ``findings`` (the names bench's
    "full")."""
    a, b = span
    return all(any(s <= i < e for s, e in findings) for i in range(a, b) if text[i].isalnum())


def _name_spans(detector: Any, text: str) -> list[Span]:
    return [(f.start, f.end) for f in detector.find_all(text) if f.kind == "name"]


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return data


def test_the_record_is_whole(recorded: dict[str, Any]) -> None:
    """The file guards something: both halves, hundreds of mentions, each one a span of its
    document that spells the value written beside it."""
    docs = recorded["documents"]
    assert {d["half"] for d in docs} == {"dev", "held-out"}
    guarded = [m for d in docs for m in d["found"]]
    assert len(guarded) >= 200
    for d in docs:
        for start, end, value in d["found"]:
            assert d["text"][start:end] == value


def test_every_person_found_before_is_found_now(recorded: dict[str, Any]) -> None:
    from pressroom.redact.detect.detector import Detector

    detector = Detector.for_classes(["name"])
    lost: list[str] = []
    for d in recorded["documents"]:
        spans = _name_spans(detector, d["text"])
        for start, end, value in d["found"]:
            if not in_full(d["text"], (start, end), spans):
                line = d["text"][d["text"].rfind("\n", 0, start) + 1 : start + 60].split("\n")[0]
                lost.append(f"{d['id']} ({d['half']}): {value!r} in {line!r}")
    assert lost == [], f"{len(lost)} person mention(s) found in full before, missed now:\n" + (
        "\n".join(lost)
    )


# ------------------------------------------------------------------------------ regenerating


def build(commit: str | None = None) -> dict[str, Any]:
    """The record as the detector of this checkout finds it."""
    sys.path.insert(0, str(ROOT))
    from bench.names_bench import own_docs
    from pressroom.redact.detect.detector import Detector

    detector = Detector.for_classes(["name"])
    documents = []
    for doc in own_docs(DOCUMENTS_PER_HALF):
        spans = _name_spans(detector, doc.text)
        found = [(s, e) for s, e in doc.people if in_full(doc.text, (s, e), spans)]
        documents.append(
            {
                "id": doc.id,
                "half": "dev" if doc.split == "tune" else "held-out",
                "text": doc.text,
                "people": len(doc.people),
                "found": [[s, e, doc.text[s:e]] for s, e in found],
            }
        )
    commit = (
        commit
        or subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    )
    return {
        "about": "person mentions of corpora.documents found in full by detect --jsonl "
        "--redact name; tests/unit/test_names_found_before.py asserts each is still found "
        "(regenerate only deliberately: see that module)",
        "licence": "generated by this project's own corpus generator (corpora.documents)",
        "commit": commit or "unknown",
        "documents": documents,
    }


def _keys(record: dict[str, Any]) -> set[tuple[str, int, int]]:
    return {(d["id"], s, e) for d in record["documents"] for s, e, _v in d["found"]}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="rewrite tests/data/names_found_before.json")
    ap.add_argument("--regenerate", action="store_true", help="required: write the file")
    ap.add_argument(
        "--accept-losses", action="store_true", help="write it even if it guards less than before"
    )
    ap.add_argument("--out", type=Path, default=DATA)
    ap.add_argument("--commit", help="the commit to record (a checkout exported without .git)")
    args = ap.parse_args(argv)
    if not args.regenerate:
        ap.error("nothing done: regenerating the record is deliberate (--regenerate)")
    new = build(args.commit)
    if args.out.exists():
        old = json.loads(args.out.read_text(encoding="utf-8"))
        texts_same = {d["id"]: d["text"] for d in old["documents"]} == {
            d["id"]: d["text"] for d in new["documents"]
        }
        lost = _keys(old) - _keys(new) if texts_same else _keys(old)
        if lost and not args.accept_losses:
            print(f"refused: {len(lost)} guarded mention(s) would be dropped", file=sys.stderr)
            return 1
        for key in sorted(lost):
            print(f"dropped: {key}", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(new, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    total = sum(d["people"] for d in new["documents"])
    print(f"{len(_keys(new))}/{total} person mentions found in full, written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
