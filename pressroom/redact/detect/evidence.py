"""Negative evidence for names that is not a capital letter, and the evidence that a finding is
a person at all.

A capital letter says little in a brochure, a table or a heading: "Song", "Track", "MIDI",
"PLAY", "LinnSequencer" and "Linn Electronics" are capitalised and are not people. What the
model and the weak shapes (a column, a results line, two words in capitals) call a name is
weighed here against the document it stands in:

- **a common noun of this document**: the word stands in lower case elsewhere in the same text
  ("Song" beside "a song"; "CREATE SONG" beside "to create a song");
- **an abbreviation or a label**: a word in capitals that no census lists as a name ("MIDI",
  "LCD", "POS", "AIRFARE");
- **a product's word**: a word with a capital inside after three letters or more
  ("LinnSequencer", "PowerPoint"; never "McDonald", "MacArthur", "DeShawn", "FitzGerald");
- **an organisation's word**: a word that stands before an organisation's word in this text
  ("Linn" of "Linn Electronics, Inc.", "Northgate" of "Northgate Mining");
- **a table's header**: a cell of a line without figures that heads a run of lines with them
  ("Name<tab>Age<tab>Sex", then rows of people and ages);
- **a place** on its own ("WASHINGTON", "Leeds"): the model's guess, not a person.

A finding is dropped only when every word of it is such a word and no confident source calls
it a person: a cue (a label, an honorific, "said", a signature, a speaker label, a scorecard),
a census given name with a surname, a given name in a sentence. A confident person is never
dropped (fail closed); a name of two words whose first is a known given name stays whatever
its words are ("Mark Price", "Rose Green").

``supported`` says whether a name finding has positive evidence of a person (a cue, a known
given name, a title before it, a person's verb after it): a document whose findings mostly have
none is itself evidence that the detector is over-firing (``implausible``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import cache
from importlib import resources

from pressroom.redact.detect import Finding
from pressroom.redact.detect.name_cues import HONORIFIC, LETTER, UPPER
from pressroom.redact.detect.name_words import (
    COMMON,
    ORG_WORDS,
    ROLES,
    STOP,
    TITLES,
    census,
    english,
    fold,
)
from pressroom.redact.detect.places import mostly_place
from pressroom.redact.detect.structure import AFTER_PERSON, BEFORE_PERSON

KIND = "name"
# sources that call a person by what surrounds the words, not by their capitals
CONFIDENT = frozenset(
    {
        "label",
        "i-comma",
        "self",
        "self-lower",
        "asked",
        "honorific",
        "cue",
        "sign-off",
        "speaker",
        "statement",
        "news",
        "scorecard",
        "scorers",
    }
)
# shapes that say "a person" by themselves: a byline, a caption, a signature, a line-up, a
# column under a header that names people, a person's verb, the years of a life
TELLING = frozenset({"byline", "caption", "line-up", "verb-context", "life", "table-column"})
# sources whose call is weighed against the document (the model, and the shapes a capital
# letter alone makes)
WEIGHED = frozenset(
    {
        "ner",
        "initial-caps",
        "results",
        "column",
        "given-name",
        "census",
        "table-column",
        "verb-context",
        "caption",
        "byline",
        "life",
    }
)
# the legal forms that end a company's name, written without their stops
ORG_SUFFIXES = frozenset(
    """sa nv bv ag se ab asa oy oyj spa srl sarl pty kk co inc ltd plc llc llp lp gmbh kg
    aps sl sas bhd sdn ltda cia""".split()
)


def organisation_suffix(value: str) -> bool:
    """Whether a value ends in a company's legal form ("N.V.", "S.A.", "GmbH", "Ltd.")."""
    words = value.split()
    return len(words) >= 2 and fold(words[-1].replace(".", "").strip(",;")) in ORG_SUFFIXES


_WORD = re.compile(rf"{LETTER}(?:{LETTER}|['\u2019\-](?={LETTER}))*")
_POSSESSIVE = re.compile(r"['\u2019]s?$")
# a capital inside a word after three letters or more: a product's or a brand's word
_INNER_CAPITAL = re.compile(rf"^{UPPER}(?P<head>{LETTER}*?[a-zß-ÿ]{{2,}}){UPPER}")
# the heads of names that carry a capital inside ("MacArthur", "FitzGerald", "VanDyke")
_NAME_HEADS = frozenset(
    """mac fitz van von der den del della ter ten dos das ben abu al el la le de di du""".split()
)
_TITLE_BEFORE = re.compile(rf"(?:\b(?i:{HONORIFIC})\.?|\b(?i:{'|'.join(sorted(TITLES))}))[ \t]+$")
# what people do in news and minutes, right after their name: not "is", "has" or "will"
_PERSON_AFTER = re.compile(
    r"^(?:['\u2019]s?)?[ \t]*(?:,[ \t]*)?(?:\(\d{1,3}\)|,?[ \t]*\d{1,3},|"
    r"(?:said|says|told|asked|added|explained|wrote|writes|recalled|replied|noted|argued|"
    r"insisted|admitted|warned|thanked|praised|resigned|retired|died|married|scored|agreed|"
    r"spoke|phoned|emailed|"
    r"who|whose|aged|himself|herself|and[ \t]+(?:his|her)|(?:his|her)[ \t]+(?:wife|husband|"
    r"son|daughter|mother|father|brother|sister))\b)"
)
_PERSON_BEFORE = re.compile(
    r"\b(?:according[ \t]+to|thanks?[ \t]+to|thanked|told|met|married|interviewed|asked|"
    r"spoke[ \t]+(?:to|with)|phoned|emailed|wrote[ \t]+to|"
    r"(?:son|daughter|wife|husband|widow|mother|father)[ \t]+of|signed[ \t]+by|"
    r"written[ \t]+by|by)[ \t]+$",
    re.IGNORECASE,
)


# a word among this many of the census's most common surnames is a surname before it is a
# dictionary's word ("Brown", "Turner", "Bush"; not "Record", rank 10,030, nor "Age")
SURNAME_RANK = 10_000


@cache
def surnames() -> frozenset[str]:
    """The census's ``SURNAME_RANK`` most common surnames, folded."""
    lines = resources.files("names").joinpath("dist.all.last").read_text().splitlines()
    return frozenset(line.split()[0].lower() for line in lines[:SURNAME_RANK] if line.strip())


def spreads(f: Finding) -> bool:
    """Whether a finding is spread to the other mentions of its words: every class's value is,
    a name only when believed and a person by evidence (a cue, a given name, a title, a
    person's verb) or a name of two words or more. One word that only the model or a capital
    letter called ("Caloi", "ISIL") is burned where it stands, never multiplied."""
    if f.kind != KIND:
        return True
    if f.doubt:
        return False
    if f.support or len(f.value.split()) >= 2:
        return True
    # one word that reads as a name, not as a word ("Okonkwo", not "Stabilizer" or "ISIL"):
    # spread, so that a person the model found once is burned on every page
    word = _POSSESSIVE.sub("", f.value.strip(" .,;:"))
    key = fold(word)
    return (
        not word.isupper()
        and key not in english()
        and _INNER_CAPITAL.match(word) is None
        and not mostly_place(word)
    )


# a given name among this many of the census's commonest (by the rank in either list) is a
# name before it is a dictionary's word ("Mark", "Rose", "Will"; not "Honey", "Gala", "Marry")
GIVEN_RANK = 1_000


@cache
def common_given() -> frozenset[str]:
    """The census's ``GIVEN_RANK`` commonest male and female given names, folded."""
    out: set[str] = set()
    for name in ("dist.male.first", "dist.female.first"):
        lines = resources.files("names").joinpath(name).read_text().splitlines()
        out.update(line.split()[0].lower() for line in lines[:GIVEN_RANK] if line.strip())
    return frozenset(out)


# the items of a comma list on either side of a word: "France, <word>", "<word>, the Netherlands"
_ITEM = rf"{UPPER}{LETTER}+(?:[ \t]{UPPER}{LETTER}+){{0,2}}"
_LIST_BEFORE = re.compile(rf"(?P<item>{_ITEM}),[ \t]+(?P<and>and[ \t]+)?(?:the[ \t]+)?$")
_LIST_AFTER = re.compile(rf",[ \t]+(?:and[ \t]+)?(?:the[ \t]+)?(?P<item>{_ITEM})")


# an e-mail or a web address: its words are lower case whatever the name ("okafor@…")
_ADDRESS_TOKEN = re.compile(r"\S*[@/]\S*|\bwww\.\S+|\S+\.(?:com|org|net|gov|edu|info|io)\b\S*")


# the verbs the shapes of structure.py read a person by ("went to", "lodged by", "opened")
_SHAPE_BEFORE = re.compile(rf"\b(?i:{BEFORE_PERSON})[ \t]+$")
_SHAPE_AFTER = re.compile(AFTER_PERSON)


def lowercase_words(text: str) -> frozenset[str]:
    """The words that stand in lower case somewhere in ``text`` as words of its prose (not
    inside an e-mail or a web address), folded."""
    prose = _ADDRESS_TOKEN.sub(" ", text)
    return frozenset(fold(m.group()) for m in _WORD.finditer(prose) if m.group().islower())


def organisation_words(text: str) -> frozenset[int]:
    """Where words of this text stand in an organisation's name (their offsets): the
    capitalised words right before an organisation's word ("Linn" of "Linn Electronics",
    "NORTHGATE" of "NORTHGATE MINING LTD"). Only there: the same word elsewhere may be the
    person the organisation is named after ("Thandiwe Mokoena" of "Mokoena Mining")."""
    out: set[int] = set()
    words = list(_WORD.finditer(text))
    plain = english()
    for i, m in enumerate(words):
        if fold(m.group()) not in ORG_WORDS or i == 0:
            continue
        j = i - 1
        while j >= 0 and i - j <= 2:
            prev = words[j]
            between = text[prev.end() : words[j + 1].start()]
            if not prev.group()[:1].isupper() or between.strip(" -&") != "":
                break
            key = fold(prev.group())
            # "Social Media", "Reaches": a dictionary's word is the organisation's kind
            if key in ORG_WORDS or key in plain:
                break
            out.add(prev.start())
            j -= 1
    return frozenset(out)


def header_lines(text: str) -> list[tuple[int, int]]:
    """Spans of lines that head a table: three or more cells, no figure, and the next line
    of as many cells holds figures."""
    spans: list[tuple[int, int]] = []
    lines = text.split("\n")
    at = 0
    starts = []
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    for i, line in enumerate(lines[:-1]):
        cells = [c for c in line.split("\t") if c.strip()]
        if len(cells) < 3 or any(ch.isdigit() for ch in line):
            continue
        after = [c for c in lines[i + 1].split("\t") if c.strip()]
        if len(after) >= len(cells) - 1 and any(ch.isdigit() for ch in lines[i + 1]):
            spans.append((starts[i], starts[i] + len(line)))
    return spans


class Evidence:
    """What one text says about the words of its name findings."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lower = lowercase_words(text)
        self.orgs = organisation_words(text)
        self.headers = header_lines(text)
        self.first, self.last = census()
        self.english = english()
        self.given = common_given()
        self._context: dict[tuple[int, int], bool] = {}
        self.named: frozenset[str] = frozenset()

    def ordinary(self, word: str, start: int) -> bool:
        """Whether one word of a finding is a word of this document rather than a name."""
        bare = _POSSESSIVE.sub("", word)
        key = fold(bare)
        if len(key) < 2:
            return True
        if key in self.named:
            return False  # a surname of a person found here
        if key in STOP or key in ROLES or key in ORG_WORDS or start in self.orgs:
            return True
        if key in self.lower:
            return True  # "Song" beside "a song", "CREATE" beside "to create"
        if key in self.first and (key in self.given or key not in self.english):
            return False  # a given name is more than a dictionary's word
        if key in self.english and key not in surnames():
            return True  # "Stabilizer", "AIRFARE"; not "Brown", "Turner", "Park"
        if bare.isupper() and len(key) <= 4 and key not in surnames():
            return True  # an abbreviation or a label: "MIDI", "LCD", "POS"
        head = _INNER_CAPITAL.match(bare)
        if head and fold(bare[: head.end("head")]) not in _NAME_HEADS:
            return True  # "LinnSequencer"
        # a header cell that is a dictionary's word ("Price", "Young"), not a candidate's
        # surname over their votes ("Precinct<tab>Kowalczyk<tab>Brandt")
        return key in self.english and any(a <= start < b for a, b in self.headers)

    def person_shaped(self, value: str, start: int) -> bool:
        """Two words or more, the first a known given name ("Mark Price", "JOHN SMITH"): a
        person's shape whatever the words are."""
        words = [fold(_POSSESSIVE.sub("", w)) for w in value.split()]
        if len(words) < 2:
            return False
        if words[0] in self.given:
            return True  # "Mark Price", "Rose Green": a common given name first
        return (
            words[0] in self.first
            and words[0] not in COMMON
            and start not in self.orgs
            and words[0] not in self.lower
        )

    def in_context(self, start: int, end: int) -> bool:
        """A title before the words, or a person's verb or age after them (asked once a span:
        a page of names asks it thousands of times)."""
        known = self._context.get((start, end))
        if known is None:
            before = self.text[max(0, start - 40) : start]
            after = self.text[end : end + 40]
            spaced = before[-1:].isspace()
            known = bool(
                (spaced and _TITLE_BEFORE.search(before))
                or _PERSON_AFTER.match(after)
                or _SHAPE_AFTER.match(after)
                or (spaced and (_PERSON_BEFORE.search(before) or _SHAPE_BEFORE.search(before)))
            )
            self._context[(start, end)] = known
        return known

    def among_places(self, start: int, end: int) -> bool:
        """A word in a list of places: the items on both sides of it are places ("Denmark,
        France, Jordan, the Netherlands"), or the one before it where it ends the list."""
        before = _LIST_BEFORE.search(self.text, max(0, start - 60), start)
        after = _LIST_AFTER.match(self.text, end)
        sides = [m.group("item") for m in (before, after) if m is not None]
        if not sides or not all(mostly_place(i) or mostly_place(f"the {i}") for i in sides):
            return False
        return len(sides) == 2 or bool(after is None and before and before.group("and"))

    def against(self, f: Finding) -> bool:
        """Whether the document's own words speak against this finding being a person: every
        word of it is one of the document's ordinary words, or it is, as a whole, a place."""
        if self.in_context(f.start, f.end):
            return False
        if mostly_place(f.value) or self.among_places(f.start, f.end):
            return True
        if self.person_shaped(f.value, f.start):
            return False
        words = list(_WORD.finditer(f.value))
        if not words:
            return True
        if organisation_suffix(f.value):
            return True  # "Keystone Solar N.V.", "Nettlebed Plastics S.A."
        keys = [fold(_POSSESSIVE.sub("", m.group())) for m in words]
        if (
            len(keys) >= 2
            and all(key in self.english or key in STOP for key in keys)
            and not any(key in self.given for key in keys)
        ):
            return True  # "Dark Horse", "Marry Him": a phrase, not "Mark Price"
        return all(self.ordinary(m.group(), f.start + m.start()) for m in words)

    def supported(self, f: Finding) -> bool:
        """Positive evidence of a person: a confident source, a known given name in it, a
        title before it, a person's verb after it."""
        if f.recognizer in CONFIDENT or f.recognizer in TELLING:
            return True
        if self.in_context(f.start, f.end):
            return True
        found = list(_WORD.finditer(f.value))
        words = [fold(_POSSESSIVE.sub("", m.group())) for m in found]
        if len(words) >= 2 and any(w in self.first and w not in COMMON for w in words):
            return True
        # two words or more, none of them a word of the document ("Nguyễn Văn An", "Adaeze
        # Okafor"): a name's shape in any language
        return len(words) >= 2 and not any(
            self.ordinary(m.group(), f.start + m.start()) for m in found
        )


def weigh(text: str, found: Sequence[Finding]) -> list[Finding]:
    """Name findings that only a capital letter called are dropped where the document's own
    words speak against them and no confident finding holds the same words; every other
    finding is kept as it is."""
    weighed = [f for f in found if f.kind == KIND and f.recognizer in WEIGHED]
    if not weighed:
        return list(found)
    evidence = Evidence(text)
    confident = [(f.start, f.end) for f in found if f.kind == KIND and f.recognizer not in WEIGHED]
    # the words of names of two words or more found here: one of them alone is that person
    # ("Hunt presented the accounts" after "Jordan Hunt", the hunt for a buyer aside)
    evidence.named = frozenset(
        fold(_POSSESSIVE.sub("", w))
        for f in found
        if f.kind == KIND
        and not f.doubt
        and len(f.value.split()) >= 2
        and (f.recognizer not in WEIGHED or not evidence.against(f))
        for w in f.value.split()[1:]
    )
    out: list[Finding] = []
    for whole in found:
        # a cell under a header that names people is believed as the header says
        believed_cell = whole.recognizer == "table-column" and not whole.doubt
        if whole.kind != KIND or whole.recognizer not in WEIGHED or believed_cell:
            out.append(whole)
            continue
        out += _weigh_one(whole, text, evidence, confident)
    return out


def _lines(f: Finding, text: str) -> list[Finding]:
    """A finding as its parts on each line ("SKY\nLabé": a weather word over a town)."""
    if "\n" not in f.value:
        return [f]
    parts: list[Finding] = []
    at = f.start
    for piece in f.value.split("\n"):
        a = at + len(piece) - len(piece.lstrip())
        b = at + len(piece.rstrip())
        if b > a:
            parts.append(replace(f, start=a, end=b, value=text[a:b]))
        at += len(piece) + 1
    return parts


def _weigh_one(
    whole: Finding, text: str, evidence: Evidence, confident: list[tuple[int, int]]
) -> list[Finding]:
    """A weighed finding as what of it stands: a finding over two lines is judged line by
    line, and kept whole when every line of it stands."""
    parts = [whole] if evidence.in_context(whole.start, whole.end) else _lines(whole, text)
    kept: list[Finding] = []
    for f in parts:
        held = any(a < f.end and f.start < b for a, b in confident)
        if not held and evidence.against(f):
            continue
        if not held and not evidence.supported(f):
            f = replace(f, support=False)
        kept.append(f)
    if len(kept) == len(parts) and len(parts) > 1:
        support = all(f.support for f in kept)
        return [whole if support else replace(whole, support=False)]
    return kept


# a document is held NAMES_IMPLAUSIBLE when at least this many of its distinct name values,
# and this share of them, have no evidence of a person anywhere in it
IMPLAUSIBLE_MIN = 12
IMPLAUSIBLE_SHARE = 2 / 3


def implausible(found: Iterable[Finding]) -> tuple[int, int] | None:
    """(names without evidence, names) counted as distinct values, when a document's name
    findings are mostly words that never stand with a given name, a title or a person's verb:
    the detector over-firing (a brochure, a table of products), not a document of people. A
    value counts as supported when any of its findings is. None: the names are plausible."""
    support: dict[str, bool] = {}
    for f in found:
        if f.kind != KIND or f.recognizer == "propagated":
            continue
        key = fold(f.value.strip())
        support[key] = support.get(key, False) or f.support
    bad = sum(1 for ok in support.values() if not ok)
    if bad < IMPLAUSIBLE_MIN or bad < IMPLAUSIBLE_SHARE * len(support):
        return None
    return bad, len(support)
