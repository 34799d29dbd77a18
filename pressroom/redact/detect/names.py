"""Names by their context: form labels, honorifics, letter conventions, "my name is", transcript
speaker labels, and first+last pairs from the 1990 US Census lists (the `names` package,
public-domain data). The named-entity model (``ner.py``) finds names with no cue; these find
the ones a model misses (capitals, unusual names right after a label).

The patterns live in ``name_cues``, the word lists in ``name_words``; this module runs the
patterns and keeps what passes the filters (titles trimmed, organisations and roles dropped)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from pressroom.redact.detect import Finding
from pressroom.redact.detect.name_cues import (
    ASKED_RE,
    CUE_RE,
    HONORIFIC,
    HONORIFIC_RE,
    I_RE,
    INITIAL_CAPS_RE,
    LABEL_RE,
    LETTER,
    LETTER_SET,
    NEWS_RE,
    PAIR_RE,
    PARTICLE,
    SELF_LOWER_RE,
    SELF_RE,
    SIGN_OFF_RE,
    SPEAKER_RE,
    STATEMENT_RE,
    STREET_BEFORE,
    UPPER,
)
from pressroom.redact.detect.name_words import COMMON, ORG_WORDS, ROLES, STOP, census

KIND = "name"


def _word(token: str) -> str:
    return token.strip(".,;:").casefold()


def trim_name(name: str) -> tuple[int, int]:
    """The span of a name inside a matched run: leading titles dropped, stopped at words that
    end a name in running text ("Jane Doe Date of birth")."""
    kept: list[re.Match[str]] = []
    for token in re.finditer(r"\S+", name):
        word = token.group()
        if not kept and re.fullmatch(rf"(?i:{HONORIFIC})\.?", word):
            continue
        if _word(word) in STOP or _word(word) in ROLES:
            break
        kept.append(token)
    # a particle never ends a name ("Maria de" is "Maria")
    while kept and re.fullmatch(PARTICLE, kept[-1].group()):
        kept.pop()
    return (kept[0].start(), kept[-1].end()) if kept else (0, 0)


_GIVEN_RE = re.compile(rf"(?<![{LETTER_SET}'\u2019\-])(?P<name>{UPPER}{LETTER}+)\b")
_PERSON_VERB = re.compile(
    r"(?:['\u2019]s\b|[ \t]+(?:is|was|has|had|said|says|told|asked|went|wants|wanted|thinks|"
    r"thought|knows|knew|likes|loves|lives|lived|works|worked|did|does|will|would|can|could|"
    r"should|and\s+I|and\s+his|and\s+her)\b)"
)
_AFTER_BREAK = re.compile(r"(?:^|[.!?:;\n\"\u201c(]\s*)$")
# given names that are also ordinary capitalised words (a bank, a faith, a month, a verb)
AMBIGUOUS_GIVEN = frozenset(
    [
        "chase",
        "christian",
        "frank",
        "earl",
        "guy",
        "pat",
        "sue",
        "gene",
        "dean",
        "ray",
        "victor",
        "king",
        "lane",
        "jack",
        "iris",
        "lily",
        "ivy",
        "holly",
        "hazel",
        "heather",
        "amber",
        "ruby",
        "pearl",
        "crystal",
        "dawn",
        "eve",
        "autumn",
        "summer",
        "sky",
        "rocky",
        "dusty",
        "sandy",
        "buddy",
        "carol",
        "carl",
        "bob",
        "rob",
        "don",
        "ken",
        "lee",
        "jean",
        "joan",
        "van",
        "hunter",
        "mason",
        "taylor",
        "tyler",
        "cooper",
        "parker",
        "porter",
        "carter",
        "baker",
        "harper",
        "jordan",
        "austin",
        "dallas",
        "houston",
        "lincoln",
        "washington",
        "jackson",
        "madison",
        "brooklyn",
        "florence",
        "georgia",
        "virginia",
        "carolina",
        "india",
        "china",
        "paris",
        "sydney",
        "london",
        "israel",
        "jesus",
        "christ",
        "god",
        "lord",
        "allah",
        "angel",
        "queen",
        "prince",
        "princess",
        "duke",
        "baron",
        "countess",
    ]
)


def _given_names(text: str) -> list[Finding]:
    """A capitalised given name from the census lists standing inside a sentence ("Why is
    Rebecca so impulsive?", "Don't go, Brandon!"): a person far more often than not. At a
    sentence start a capitalised word says nothing, so it is left to the model and the cues."""
    first_names, _last = census()
    found: list[Finding] = []
    for m in _GIVEN_RE.finditer(text):
        word = m.group("name")
        key = word.casefold()
        if key not in first_names or key in COMMON or key in AMBIGUOUS_GIVEN or key in STOP:
            continue
        if len(word) < 3 or word.isupper():
            continue
        if re.search(r"\d[ \t]*$", text[max(0, m.start() - 3) : m.start()]) or re.match(
            r"[ \t]*\d", text[m.end() : m.end() + 3]
        ):
            continue  # "02 Jun", "Jan 2026": a date
        # at a sentence start only when a verb of a person follows ("Darren is …")
        starts = _AFTER_BREAK.search(text[max(0, m.start() - 3) : m.start()])
        if starts and not _PERSON_VERB.match(text, m.end()):
            continue
        found.append(Finding(KIND, m.start(), m.end(), word, "given-name"))
    return found


_NEXT_WORDS = re.compile(r"[ \t]+([\w'\u2019\-]+)(?:[ \t]+([\w'\u2019\-]+))?")


def before_organisation(text: str, end: int) -> bool:
    """A "name" followed on its line by an organisation's word is the organisation's name
    ("Silverbirch Building Society", "VALLEY WATER")."""
    m = _NEXT_WORDS.match(text, end)
    if m is None:
        return False
    return any(w and w.casefold() in ORG_WORDS for w in m.groups())


def _caps_name(name: str) -> bool:
    """Words in capitals that may be a person: none is a form, money or statement word."""
    words = [w.strip(".").casefold() for w in name.split()]
    long = [w for w in words if len(w) > 1]
    return bool(long) and not any(
        w in STOP or w in ROLES or w in COMMON or w in ORG_WORDS for w in long
    )


_NOT_A_NAME = frozenset(
    [
        "not",
        "unknown",
        "none",
        "the",
        "a",
        "an",
        "in",
        "on",
        "at",
        "and",
        "or",
        "but",
        "so",
        "just",
        "also",
        "very",
        "really",
        "here",
        "there",
        "this",
        "that",
        "what",
        "who",
        "why",
        "when",
        "where",
        "how",
        "yes",
        "no",
        "ok",
        "okay",
        "sorry",
        "please",
        "thanks",
        "thank",
        "is",
        "was",
    ]
)
_NOT_A_NAME |= frozenset(
    """let me see you it i we they he she hmm um er well sure right wait sorry pardon again
    same spelled spelt like""".split()
)


def _lower_name(value: str) -> tuple[int, int]:
    """A name given in any case after "my name is": its words until one that is no name."""
    kept: list[re.Match[str]] = []
    for token in re.finditer(r"\S+", value):
        if token.group().casefold() in _NOT_A_NAME or token.group().casefold() in STOP:
            break
        kept.append(token)
    return (kept[0].start(), kept[-1].end()) if kept else (0, 0)


def _is_name(name: str) -> bool:
    letters = [c for c in name if c.isalpha()]
    return len(letters) >= 2 and not all(len(t.rstrip(".")) == 1 for t in name.split())


@lru_cache(maxsize=4)
def _speaker_labels(text: str) -> Counter[str]:
    """How often each speaker label stands at a line start: transcripts repeat their speakers."""
    return Counter(m.group("name") for m in SPEAKER_RE.finditer(text))


@dataclass(frozen=True, slots=True)
class NameRecognizer:
    kind: str = KIND
    use_gazetteer: bool = True
    extra: tuple[str, ...] = field(default_factory=tuple)

    def find(self, text: str) -> list[Finding]:
        found: list[Finding] = []
        for regex, source in (
            (LABEL_RE, "label"),
            (I_RE, "i-comma"),
            (SELF_RE, "self"),
            (HONORIFIC_RE, "honorific"),
            (CUE_RE, "cue"),
            (SIGN_OFF_RE, "sign-off"),
            (SPEAKER_RE, "speaker"),
            (SELF_LOWER_RE, "self-lower"),
            (ASKED_RE, "asked"),
            (STATEMENT_RE, "statement"),
            (NEWS_RE, "news"),
            (INITIAL_CAPS_RE, "initial-caps"),
        ):
            for m in regex.finditer(text):
                if source == "honorific" and STREET_BEFORE.search(
                    text, max(0, m.start() - 40), m.start()
                ):
                    continue  # "12 Elm Dr Springfield": Drive, not a doctor
                group = next(
                    g
                    for g in ("name", "cell", "row", "am", "alone", "before", "after")
                    if g in m.groupdict() and m[g]
                )
                a, b = trim_name(m.group(group))
                name = m.group(group)[a:b]
                if not name or not _is_name(name):
                    continue
                if source in ("self-lower", "asked"):
                    a, b = _lower_name(m.group(group))
                    name = m.group(group)[a:b]
                    if not name:
                        continue
                elif not self._confirmed(name, source, text):
                    continue
                start = m.start(group) + a
                if source not in ("label", "i-comma", "self", "self-lower", "asked") and (
                    before_organisation(text, start + len(name))
                ):
                    continue  # "BRIGHTSPARK ENERGY", "Danube Freight Partners"
                found.append(Finding(KIND, start, start + len(name), name, source))
        if self.use_gazetteer:
            found += _given_names(text)
            first_names, last_names = census()
            for m in PAIR_RE.finditer(text):
                first, last = m.group("first").lower(), m.group("last").lower()
                if first in COMMON or last in COMMON or first in STOP or last in STOP:
                    continue
                if first in first_names and last in last_names:
                    start = m.start("pair")
                    found.append(Finding(KIND, start, m.end("pair"), m.group("pair"), "census"))
        return found

    def _confirmed(self, name: str, source: str, text: str) -> bool:
        if source in ("speaker", "cue"):
            return self._plausible(name, source, text)
        if source == "news":  # two words of a name, none of them a field or an organisation
            words = [_word(t) for t in name.split()]
            return len(words) >= 2 and not any(
                w in STOP or w in ROLES or w in ORG_WORDS for w in words
            )
        if source in ("statement", "initial-caps"):
            return _caps_name(name)
        return True

    @staticmethod
    def _plausible(name: str, source: str, text: str) -> bool:
        """Weak cues (a speaker label, "called") need a name-like value: not a role; one word
        must be a known name, or (a speaker label) stand as a label on more than one line —
        transcripts repeat their speakers, forms do not ("Fax:", "When:")."""
        words = [_word(t) for t in name.split()]
        if any(w in ROLES or w in STOP for w in words):
            return False
        if source == "speaker":
            first_names, last_names = census()
            known = any(w in first_names or w in last_names for w in words)
            labels = _speaker_labels(text)
            repeated = labels[name] >= 2
            if len(words) > 1:
                # minutes and transcripts label several speakers: a name of two or three
                # words among them is a person ("ØRJAN HÅKONSEN:" beside "CHAIR:")
                return known or (sum(labels.values()) >= 2 and len(words) <= 3)
            given = words[0] in first_names and words[0] not in COMMON
            return given or (repeated and (known or name.isupper()))
        if source == "cue" and len(words) == 1:
            first_names, last_names = census()
            return words[0] in first_names or words[0] in last_names
        return True
