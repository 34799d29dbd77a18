"""Detectors: find the values a policy names in a page's text, as character spans."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Protocol

# a name finding scored below this is half believed: burned all the same (fail closed), marked
# ``doubt`` for the reviewer, and never spread to the other mentions of its words
DOUBT_BELOW = 0.7


@dataclass(frozen=True, slots=True)
class Finding:
    kind: str  # a policy class: name | address | account-number
    start: int  # character span in the text that was searched
    end: int
    value: str
    recognizer: str
    score: float = 1.0
    # a name with positive evidence of a person (a cue, a known given name, a title, a
    # person's verb): a document whose names mostly lack it is held (``evidence.implausible``)
    support: bool = True

    @property
    def doubt(self) -> bool:
        """A half-believed name. Only names: an operator's recogniser scoring an account
        number low must not take it out of propagation and the leak checks."""
        return self.kind == "name" and self.score < DOUBT_BELOW


class Recognizer(Protocol):
    @property
    def kind(self) -> str: ...

    def find(self, text: str) -> list[Finding]: ...


# UTF-16 code units that are not a character on their own; a Python string can hold them
# (a font's ToUnicode map or PDFium may hand one over), UTF-8 cannot, and every tokeniser that
# hashes or encodes its words (spaCy's) fails on them
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def valid_text(text: str) -> str:
    """``text`` as valid Unicode, each lone surrogate replaced by U+FFFD: the same length, so
    every offset into it is an offset into the text it came from."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(REPLACEMENT, text)
    return text


def joined_utf16(text: str) -> str:
    """Text read one UTF-16 code unit at a time (PDFium's characters): each high surrogate
    followed by a low one joined into the character the two make, and every surrogate left
    alone replaced by U+FFFD. Shorter than ``text`` where a pair was joined: for whole words,
    never for text that offsets point into (``valid_text`` is for that)."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


# combining marks (accents written after their letter: NFD text, and Yoruba tones that Unicode
# has no precomposed letter for, such as ọ̀) in the blocks of diacritics for Latin, Greek and
# Cyrillic; other scripts' marks (Devanagari vowel signs, Hebrew points) are part of their words
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_MARK = re.compile(f"[{_MARKS}]")
_MARK_CHARS = frozenset(c for c in map(chr, range(0x300, 0xFE30)) if _MARK.fullmatch(c))


def _names_script(c: str) -> bool:
    """A letter of the scripts the name letter classes cover (Latin, Greek, Cyrillic)."""
    o = ord(c)
    return 0x41 <= o < 0x530 or 0x1E00 <= o < 0x2000 or 0x2C60 <= o < 0x2C80 or 0xA720 <= o < 0xA800


def _latin(c: str) -> bool:
    o = ord(c)
    return 0x80 <= o < 0x300 or 0x1E00 <= o < 0x1F00 or 0x2C60 <= o < 0x2C80 or 0xA720 <= o < 0xA800


@dataclass(frozen=True, slots=True)
class DetectionText:
    """The text every recogniser reads (``detection_text``), and the way back from its offsets
    to the text it was made from: ``spans[i]`` is the span of the source that character ``i``
    stands for (``None``: the same text, offset for offset)."""

    text: str
    source: str
    spans: tuple[tuple[int, int], ...] | None = None

    def span(self, start: int, end: int) -> tuple[int, int]:
        """A span of ``text`` as a span of ``source``: whole source characters, with the marks
        that were folded into its last letter."""
        if self.spans is None or start >= end:
            return start, end
        return self.spans[start][0], self.spans[end - 1][1]

    def back(self, found: Iterable[Finding]) -> list[Finding]:
        """Findings on ``text`` as findings on ``source`` (the value as the source writes it)."""
        if self.spans is None:
            if self.text is self.source:
                return list(found)
            # the same offsets (a misread letter read again, one for one)
            return [replace(f, value=self.source[f.start : f.end]) for f in found]
        out: list[Finding] = []
        for f in found:
            start, end = self.span(f.start, f.end)
            out.append(replace(f, start=start, end=end, value=self.source[start:end]))
        return out


# the most marks on one letter that are composed (Vietnamese stacks two, Yoruba three)
MAX_CLUSTER = 16


def detection_text(text: str) -> DetectionText:
    """``text`` as detection reads it: valid Unicode (``valid_text``), each letter composed with
    its accents (NFC: "E" and a combining acute read "É"), and the marks no composed letter
    holds (the grave of Yoruba "ọ̀", an accent on a letter Unicode has no composed form for)
    folded into the Latin, Greek or Cyrillic letter they sit on. A name written decomposed is
    then the same words to every pattern, word list and model as the name written composed; the
    spans map back (``DetectionText.back``) to the characters of ``text``, marks included, so a
    finding burns the accents too. Text with nothing to compose comes back as it is, at the cost
    of one check."""
    text = valid_text(text)
    if unicodedata.is_normalized("NFC", text) and not _MARK.search(text):
        again = _MISREAD_CAPITAL.sub("O", text) if "@" in text or "0" in text else text
        return DetectionText(text, text) if again == text else DetectionText(again, text)
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while i < n:
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        if j - i > MAX_CLUSTER:
            # a letter under a pile of marks (text built to be expensive: composing it costs the
            # square of its length) stands as its letter, the span taking every mark
            out.append(text[i])
            spans.append((i, j))
            i = j
            continue
        cluster = text[i:j]
        composed = (
            unicodedata.normalize("NFC", cluster) if j - i > 1 or ord(text[i]) > 0x7F else cluster
        )
        if composed == cluster and j - i == 1:
            out.append(cluster)
            spans.append((i, j))
            i = j
            continue
        kept = composed
        if _names_script(composed[0]):
            # the marks left over after composing sit on a name letter: fold them into it
            kept = composed[0] + "".join(c for c in composed[1:] if c not in _MARK_CHARS)
        if len(kept) == 1 or kept == cluster:
            for k, c in enumerate(kept):
                out.append(c)
                spans.append((i, j) if len(kept) == 1 else (i + k, i + k + 1))
        else:
            # composed otherwise (a mark of another script kept): each character stands for the
            # whole cluster, which a span then takes whole
            for c in kept:
                out.append(c)
                spans.append((i, j))
        i = j
    return DetectionText(_MISREAD_CAPITAL.sub("O", "".join(out)), text, tuple(spans))


# What OCR reads for a capital its language has no letter for, at the start of a word: "Øystein"
# read "@ystein" or "0ystein" by English Tesseract. Read as the plain capital (one character
# for one, the value kept as written), a name so misread is a name to every recogniser. Not an
# address's "@" (a letter or a dot before it) nor a figure ("10th": a digit before it).
_MISREAD_CAPITAL = re.compile(r"(?<![\w@.\-])[@0](?=[a-z\u00e0-\u00ff]{2,}(?![\w@.]))")


# Latin letters with no accent to take off: the plain letter a reader of English would write
_PLAIN = str.maketrans(
    "øØłŁđĐðÐþÞæÆœŒßıɔƆɛƐŋŊħĦŧŦƀɓƁɗƊƙƘƴƳ",
    "oOlLdDdDtTaAoOsioOeEnNhHtTbbBdDkKyY",
)


_CATALAN_DOT = re.compile("(?<=[lL])\u00b7(?=[lL])")


def plain_letters(text: str) -> str:
    """``text`` with every Latin letter beyond ASCII written as the plain letter it is built on
    ("Ødegård" -> "Odegard", "Nguyễn" -> "Nguyen", "Ɔpɔku" -> "Opoku", "Marcel·lí" ->
    "Marcel-li"), one character for one: every offset into it is an offset into ``text``. Other
    scripts, marks and symbols stay. For a model that learned names from English text, where a
    letter it has rarely seen makes a person's name an unknown word."""
    if text.isascii():
        return text
    out = []
    # the Catalan "l·l" as a hyphenated word ("Marcel·lí" -> "Marcel-li"), one for one
    text = _CATALAN_DOT.sub("-", text)
    for c in text.translate(_PLAIN):
        if c.isascii() or not c.isalpha() or not _latin(c):
            out.append(c)
            continue
        base = unicodedata.normalize("NFD", c)[0]
        out.append(base if base.isascii() and base.isalpha() else c)
    return "".join(out)
