"""One detector for a policy: our recognisers, the model slot and the operator's extras, with the
rules that settle their disagreements, and document-level propagation (once a person or an account
is found anywhere, every other mention goes too)."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pressroom.redact.detect import Finding, Recognizer, detection_text, valid_text
from pressroom.redact.detect.evidence import WEIGHED, spreads, weigh
from pressroom.redact.detect.name_cues import (
    HONORIFIC,
    LETTER,
    LETTER_SET,
    PARTICLE,
)
from pressroom.redact.detect.name_words import COMMON, ORG_WORDS, ROLES, STOP, census, english, fold
from pressroom.redact.detect.ner import NerRecognizer, ner_recognizer
from pressroom.redact.detect.places import mostly_place
from pressroom.redact.detect.plugins import installed_recognizers
from pressroom.redact.detect.registry import CLASSES, REGISTRY, check_policy_classes
from pressroom.redact.detect.structure import people_headers, structured_names
from pressroom.settings import RedactionSettings

# name findings that a model's "this is an organisation / a place" overrules
WEAK_NAME_SOURCES = frozenset({"census", "speaker", "given-name", "news"})
# name findings that are only half believed when what they found is, as a whole, mostly a
# place or a nationality ("Florida", "Buenos Aires", "Kenyan"): burned where found, never
# spread. A label, an honorific, a speaker label or a sentence about the person ("Mr
# Lincoln", "LINCOLN:", "my name is …") is evidence enough; the model judges its own calls
# (``ner._half_believed``)
PLACE_WEAK_SOURCES = frozenset(
    {"census", "given-name", "news", "initial-caps", "results", "column"}
)
PLACE_DOUBT = 0.6
_WORD = re.compile(rf"{LETTER}(?:{LETTER}|['\u2019\-](?={LETTER}))*(?:['\u2019]s?)?")
_POSSESSIVE = re.compile(r"(?:['\u2019]s?)+$")
_HONORIFIC_WORD = re.compile(rf"(?i:{HONORIFIC})\.?")
_SENTENCE_END = re.compile(r"[.!?:\n]\s*$")


@dataclass
class Detector:
    classes: tuple[str, ...]
    rules: tuple[Recognizer, ...]
    model: NerRecognizer | None = None
    extras: tuple[Recognizer, ...] = field(default_factory=tuple)

    @classmethod
    def for_classes(
        cls, classes: Sequence[str], redaction: RedactionSettings | None = None
    ) -> Detector:
        """Our recognisers for each class, the model for names (loaded on first use in this
        process), and the operator's recognisers, which add and never replace."""
        wanted = tuple(c for c in CLASSES if c in classes)
        redaction = RedactionSettings.given(redaction)
        check_policy_classes(wanted, redaction)
        rules = tuple(REGISTRY[c].recognizer() for c in wanted)
        model = ner_recognizer(redaction) if "name" in wanted else None
        extras = tuple(r for r in installed_recognizers(redaction) if r.kind in wanted)
        return cls(wanted, rules, model, extras)

    @property
    def recognizers(self) -> tuple[Recognizer, ...]:
        return self.rules + ((self.model,) if self.model is not None else ()) + self.extras

    def find(self, text: str, *, model: bool = True) -> list[Finding]:
        """Findings in one text; ``model=False`` skips the model (a second layout of a page
        whose reading order the model has already read). Every recogniser is handed valid
        Unicode (a lone surrogate replaced), each letter composed with its accents (a name
        written decomposed, NFD, reads as the same name): the one gate into detection. The
        findings' spans are in ``text`` as given, marks included."""
        readable = detection_text(text)
        return readable.back(self._find(readable.text, model=model))

    def _find(self, text: str, *, model: bool = True) -> list[Finding]:
        found: list[Finding] = []
        for r in self.rules + self.extras:
            found += r.find(text)
        others: list[tuple[int, int]] = []
        if model and self.model is not None:
            found += self.model.find(text)
            others = self.model.others(text)
        if "name" in self.classes:
            found += structured_names(text, found)
            found = _outside(text, found, people_headers(text))
        return weigh(text, resolve(extend_names(text, found), others))

    def find_all(self, text: str) -> list[Finding]:
        """Findings in one text as one document: detection, then every other mention, with
        overlapping findings of a class joined into one span."""
        text = valid_text(text)
        found = self.find(text)
        found += propagate_text(text, found)
        return merge_spans(text, found)


# a name grows over spaces, never over a tab: a tab is the gap between two cells of a table
_PREV_TOKEN = re.compile(rf"({LETTER}[{LETTER_SET}'\u2019\-]*\.?) +$")
_NEXT_TOKEN = re.compile(rf"^ +({LETTER}[{LETTER_SET}'\u2019\-]*\.?)")


def _outside(text: str, found: list[Finding], heads: Sequence[tuple[int, int]]) -> list[Finding]:
    """Name findings without what lies in a table's header line ("MEMBER<tab>WARD<tab>VOTE"
    heads a column of people; none of its words is one): a finding inside one is dropped, one
    that runs out of it keeps the part after it."""
    if not heads:
        return found
    out: list[Finding] = []
    for f in found:
        if f.kind != "name":
            out.append(f)
            continue
        pieces = [(f.start, f.end)]
        for a, b in heads:
            cut: list[tuple[int, int]] = []
            for s, e in pieces:
                if e <= a or b <= s:
                    cut.append((s, e))
                    continue
                cut += [(s, a - 1)] if a - 1 > s else []
                cut += [(b + 1, e)] if e > b + 1 else []
            pieces = cut
        for s, e in pieces:
            value = text[s:e].strip()
            if value:
                s += len(text[s:e]) - len(text[s:e].lstrip())
                out.append(replace(f, start=s, end=s + len(value), value=value))
    return out


def extend_names(text: str, found: Sequence[Finding]) -> list[Finding]:
    """A name found in part ("Kwiatkowski" of "Juliusz A Kwiatkowski") grows over the
    capitalised words beside it on its line: initials, known given names before it, known
    surnames after it, and words found as part of another name in the same text."""
    first, last = census()
    known = name_tokens(f.value for f in found if f.kind == "name")
    out: list[Finding] = []
    for f in found:
        if f.kind != "name":
            out.append(f)
            continue
        start, end = f.start, f.end
        for _ in range(3):
            m = _PREV_TOKEN.search(text, max(0, start - 40), start)
            if not m or not (_grows(m.group(1), first, known) or _given_like(m.group(1))):
                break
            start = m.start(1)
        for _ in range(3):
            m = _NEXT_TOKEN.search(text[end : end + 40])
            if not m:
                break
            word = m.group(1)
            initial = len(word.rstrip(".")) == 1 and word[:1].isupper()
            if initial and _NEXT_TOKEN.search(text[end + m.end() : end + m.end() + 40]):
                end += m.end()
                continue
            if not _grows(word, last, known) or word.endswith("."):
                break
            end += m.end()
        if (start, end) != (f.start, f.end):
            f = Finding(f.kind, start, end, text[start:end], f.recognizer, f.score)
        out.append(f)
    return out


def _given_like(word: str) -> bool:
    """A capitalised word before a found surname that reads as a given name no census lists
    ("Thandiwe" of "Thandiwe Mokoena"): not a dictionary's word, a field's, a role's, an
    organisation's or a place's, and no initial."""
    bare = word.rstrip(".")
    key = fold(bare)
    return (
        len(bare) >= 3
        and bare[:1].isupper()
        and not bare.isupper()
        and bare[1:].islower()
        and key not in english()
        and key not in STOP
        and key not in ROLES
        and key not in COMMON
        and key not in ORG_WORDS
        and not mostly_place(bare)
    )


def _grows(word: str, *name_sets: frozenset[str] | set[str]) -> bool:
    """Whether ``word`` may extend a name: an initial, or a word in any of ``name_sets`` (each
    tested on its own: a union of the census list built for every finding cost ~5 ms each)."""
    bare = word.rstrip(".")
    if not bare[:1].isupper():
        return False
    if len(bare) == 1:
        return True  # an initial
    key = fold(_POSSESSIVE.sub("", bare))
    return (
        any(key in names for names in name_sets)
        and key not in STOP
        and key not in COMMON
        and key not in ROLES
    )


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


class _Spans:
    """Spans sorted by start with the furthest end so far: whether any of them overlaps or
    holds a span, in log time (a page of 10,000 findings must not test every pair)."""

    def __init__(self, spans: Iterable[tuple[int, int]]) -> None:
        ordered = sorted(spans)
        self.starts = [a for a, _b in ordered]
        self.reach: list[int] = []
        for _a, b in ordered:
            self.reach.append(max(b, self.reach[-1]) if self.reach else b)

    def _reach(self, count: int) -> int | None:
        """The furthest end among the first ``count`` spans."""
        return self.reach[count - 1] if count > 0 else None

    def overlaps(self, span: tuple[int, int]) -> bool:
        """``any(_overlap(span, s) for s in spans)``"""
        reach = self._reach(bisect.bisect_left(self.starts, span[1]))
        return reach is not None and reach > span[0]

    def holds(self, span: tuple[int, int], *, strictly: bool = False) -> bool:
        """Whether one of them holds ``span`` (``strictly``: and is longer than it)."""
        reach = self._reach(bisect.bisect_right(self.starts, span[0]))
        if reach is None or reach < span[1]:
            return False
        if not strictly or reach > span[1]:
            return True
        # only spans ending where ``span`` ends hold it: one that starts before it is longer
        before = self._reach(bisect.bisect_left(self.starts, span[0]))
        return before is not None and before >= span[1]


def resolve(found: Iterable[Finding], others: Sequence[tuple[int, int]] = ()) -> list[Finding]:
    """Settle disagreements: an account number is not an address (pyap's UK pattern fires inside
    IBANs); a weak name cue on what the model reads as an organisation or a place is no name."""
    found = list(found)
    accounts = _Spans((f.start, f.end) for f in found if f.kind == "account-number")
    people = _Spans((f.start, f.end) for f in found if f.kind == "name" and f.recognizer == "ner")
    addresses = _Spans(
        (f.start, f.end)
        for f in found
        if f.kind == "address" and not accounts.overlaps((f.start, f.end))
    )
    vetoes = _Spans(others)
    kept: list[Finding] = []
    for f in found:
        span = (f.start, f.end)
        if f.kind == "address" and accounts.overlaps(span):
            continue
        if f.kind == "name" and (
            any(c.isdigit() for c in f.value)
            # a town the model took for a person, inside an address found whole
            or (f.recognizer in ("ner", *WEAK_NAME_SOURCES) and addresses.holds(span))
        ):
            continue
        if (
            f.kind == "name"
            and f.recognizer in WEAK_NAME_SOURCES
            and _vetoed(vetoes, span, f.recognizer)
            and not people.overlaps(span)
        ):
            continue
        if f.kind == "name" and f.recognizer in PLACE_WEAK_SOURCES and mostly_place(f.value):
            f = Finding(f.kind, f.start, f.end, f.value, f.recognizer, min(f.score, PLACE_DOUBT))
        kept.append(f)
    return _unique(kept)


def merge_spans(text: str, found: Iterable[Finding]) -> list[Finding]:
    """Overlapping or touching findings of one class as one span, scored as its best part (a
    doubtful name joined to a believed one is believed)."""
    out: list[Finding] = []
    for kind in CLASSES:
        spans = sorted(
            (f.start, f.end, f.recognizer, f.score, f.support) for f in found if f.kind == kind
        )
        current: list[Any] = []
        for start, end, source, score, support in spans:
            if current and start <= current[1]:
                current[1] = max(current[1], end)
                current[3] = max(current[3], score)
                current[4] = current[4] or support
                continue
            if current:
                out.append(_merged(text, kind, current))
            current = [start, end, source, score, support]
        if current:
            out.append(_merged(text, kind, current))
    return sorted(out, key=lambda f: (f.start, f.end))


def _merged(text: str, kind: str, current: list[Any]) -> Finding:
    start, end, source, score, support = current
    return Finding(kind, start, end, text[start:end], source, score, support)


def _vetoed(others: _Spans, span: tuple[int, int], source: str) -> bool:
    """The model's organisation or place overrules a weak name where they overlap; a lone given
    name only when it is part of a longer one ("Rebecca Street"), since the small model's label
    on one word is a guess."""
    if source == "given-name":
        return others.holds(span, strictly=True)
    return others.overlaps(span)


def _unique(found: Iterable[Finding]) -> list[Finding]:
    """One finding per class and span: the best believed of them (a scorecard's call over the
    model's doubt on the same words)."""
    seen: set[tuple[str, int, int]] = set()
    out: list[Finding] = []
    # a shape's or a cue's call before the model's on the same words: it is not weighed
    for f in sorted(
        found, key=lambda f: (f.start, -f.end, f.kind, f.recognizer in WEIGHED, -f.score)
    ):
        key = (f.kind, f.start, f.end)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def name_tokens(values: Iterable[str]) -> frozenset[str]:
    """The words of found names that identify a person on their own: surnames and given names,
    not honorifics, particles, roles or words a form is made of."""
    tokens: set[str] = set()
    for value in values:
        for raw in value.split():
            word = _POSSESSIVE.sub("", raw.strip(".,;:()"))
            if _HONORIFIC_WORD.fullmatch(word) or re.fullmatch(PARTICLE, word):
                continue
            for part in {word, *word.split("-")}:
                key = fold(part)
                if sum(c.isalpha() for c in key) >= 2 and key not in STOP and key not in ROLES:
                    tokens.add(key)
    return frozenset(tokens)


def without_possessive(word: str) -> str:
    """A word without its possessive ending, straight or curly ("Okafor's" -> "Okafor")."""
    return _POSSESSIVE.sub("", word)


def is_mention(word: str, tokens: frozenset[str]) -> bool:
    """A word as OCR or a PDF gives it, punctuation and all ("(Okafor)", "Okafor!", quoted),
    holding a capitalised name token: a surname alone, a possessive, a hyphenated or apostrophe
    form, capitals."""
    for m in _WORD.finditer(word):
        part = m.group()
        if not part[:1].isupper():
            continue
        base = _POSSESSIVE.sub("", part)
        if any(fold(p) in tokens for p in {base, *base.split("-")} if p):
            return True
    return False


def _lowercase_words(text: str) -> frozenset[str]:
    return frozenset(fold(m.group()) for m in _WORD.finditer(text) if m.group().islower())


def propagate_text(text: str, found: Sequence[Finding]) -> list[Finding]:
    """Every other mention, in one text: name tokens as whole words, account numbers and
    addresses wherever their letters and digits recur (with or without spaces)."""
    out: list[Finding] = []
    # a half-believed name stays where it was found: one wrong call must not burn every
    # mention of a city or a club
    tokens = name_tokens(f.value for f in found if f.kind == "name" and spreads(f))
    if tokens:
        common = (_lowercase_words(text) | COMMON) & tokens
        for m in _WORD.finditer(text):
            word = m.group()
            if not is_mention(word, tokens):
                continue
            # a token that is also an ordinary word here ("Will", "Rose") at a sentence start
            # is the word, not the person
            if fold(_POSSESSIVE.sub("", word)) in common and _SENTENCE_END.search(
                text[max(0, m.start() - 3) : m.start()] or "\n"
            ):
                continue
            # another mention is no evidence of a person of its own
            out.append(Finding("name", m.start(), m.end(), word, "propagated", support=False))
    mapped: tuple[str, list[int]] | None = None
    for kind, minimum in (("account-number", 6), ("address", 12)):
        values = {f.value for f in found if f.kind == kind}
        if not values:
            continue  # folding the whole text costs more than every recogniser's regex
        mapped = mapped or _alnum_map(text)
        for start, end in occurrences(text, values, minimum, mapped):
            out.append(Finding(kind, start, end, text[start:end], "propagated"))
    return out


def _alnum_map(text: str) -> tuple[str, list[int]]:
    """Letters and digits folded, and the offset each folded character came from ("ß" folds to
    two characters, both from the one offset)."""
    keys: list[str] = []
    where: list[int] = []
    for i, c in enumerate(text):
        if c.isalnum():
            for folded in fold(c):
                keys.append(folded)
                where.append(i)
    return "".join(keys), where


def occurrences(
    text: str,
    values: Iterable[str],
    minimum: int,
    mapped: tuple[str, list[int]] | None = None,
) -> list[tuple[int, int]]:
    """Spans of the text whose letters and digits spell one of the values (``mapped``: the
    text's ``_alnum_map``, when the caller has it)."""
    keys, where = mapped or _alnum_map(text)
    spans: list[tuple[int, int]] = []
    for value in values:
        key = _alnum_map(value)[0]
        if len(key) < minimum:
            continue
        at = keys.find(key)
        while at >= 0:
            spans.append((where[at], where[at + len(key) - 1] + 1))
            at = keys.find(key, at + 1)
    return spans
