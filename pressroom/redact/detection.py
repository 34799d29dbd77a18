"""Detection on a page's words: the words joined into texts in three orders (reading order,
visual rows, columns), each text handed to the detector, and each finding taken back to the
words it covers (a ``Hit``). And the words beside a found name that belong to the person (a
given name or surname the recognisers missed, a title in front): ``redact.plan`` covers them
with the name. Pure functions, no I/O."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from pressroom.models import Box, Word
from pressroom.redact.detect import Finding
from pressroom.redact.detect.detector import Detector, without_possessive
from pressroom.redact.detect.name_cues import HONORIFIC
from pressroom.redact.detect.name_words import COMMON, ORG_WORDS, ROLES, STOP, TITLES


def _wide_gap(left: Box, right: Box) -> bool:
    """A gap wider than one and a half line heights: a table's cells, not words of a phrase."""
    return right.x0 - left.x1 > 1.5 * max(left.height, 1.0)


@dataclass(frozen=True, slots=True)
class IndexedText:
    """Words joined into one text in some order, and where each word's characters start.

    Two orders are read: the reading order (lines as OCR or the PDF gives them) and visual rows
    across the whole page (a table's label cell and value cell on one line, a wide gap as a
    tab), so a value is found to the right of its label even when the cells are apart.
    """

    text: str
    starts: tuple[int, ...]
    order: tuple[int, ...]  # the word index at each position
    ends: tuple[int, ...]  # where each word's characters end: rising, as the starts do

    @classmethod
    def of(cls, words: Sequence[Word]) -> IndexedText:
        seps = [
            "\n"
            if i and w.line != words[i - 1].line
            # a wide gap inside a line is two cells ("Beacon Court      3 April 2026")
            else "\t"
            if i and _wide_gap(words[i - 1].box, w.box)
            else " "
            for i, w in enumerate(words)
        ]
        return cls._join(words, list(range(len(words))), seps)

    @classmethod
    def rows(cls, words: Sequence[Word]) -> IndexedText:
        order: list[int] = []
        seps: list[str] = []
        for row in cls._rows(words):
            for k, i in enumerate(row):
                if not order:
                    seps.append(" ")
                elif k == 0:
                    seps.append("\n")
                else:
                    seps.append("\t" if _wide_gap(words[row[k - 1]].box, words[i].box) else " ")
                order.append(i)
        return cls._join(words, order, seps)

    @classmethod
    def columns(cls, words: Sequence[Word]) -> IndexedText:
        """Cells (runs of a row between wide gaps) stacked by the column their left edges
        share, top to bottom: a value wrapped inside a narrow column is one value again, even
        when OCR read its second line into the row of the table beside it."""
        rows = cls._rows(words)
        cells: list[list[int]] = []
        for row in rows:
            cell: list[int] = []
            for k, i in enumerate(row):
                if cell and _wide_gap(words[row[k - 1]].box, words[i].box):
                    cells.append(cell)
                    cell = []
                cell.append(i)
            if cell:
                cells.append(cell)
        columns: list[tuple[float, float, list[list[int]]]] = []  # left edge, line height, cells
        for cell in cells:
            x0 = words[cell[0]].box.x0
            h = max(words[cell[0]].box.height, 1.0)
            for n, (cx, ch, members) in enumerate(columns):
                if abs(cx - x0) <= 1.5 * max(h, ch):
                    members.append(cell)
                    columns[n] = (cx, ch, members)
                    break
            else:
                columns.append((x0, h, [cell]))
        order: list[int] = []
        seps: list[str] = []
        for _x, _h, members in sorted(columns, key=lambda c: c[0]):
            for c, cell in enumerate(members):
                for k, i in enumerate(cell):
                    seps.append(
                        " " if k else ("\n" if order else " ") if c else ("\n\n" if order else " ")
                    )
                    order.append(i)
        return cls._join(words, order, seps)

    @classmethod
    def _rows(cls, words: Sequence[Word]) -> list[list[int]]:
        rows: list[list[int]] = []
        # the last row's summed tops and bottoms, added in the row's order: its mean edges
        # without summing the row again for each word (a page of one long row)
        tops = bottoms = 0.0
        for i in sorted(range(len(words)), key=lambda i: words[i].box.y0 + words[i].box.y1):
            b = words[i].box
            centre = (b.y0 + b.y1) / 2
            if rows:
                n = len(rows[-1])
                if tops / n <= centre <= bottoms / n:
                    rows[-1].append(i)
                    tops += b.y0
                    bottoms += b.y1
                    continue
            rows.append([i])
            tops, bottoms = 0.0 + b.y0, 0.0 + b.y1
        for row in rows:
            row.sort(key=lambda i: words[i].box.x0)
        return rows

    @classmethod
    def _join(cls, words: Sequence[Word], order: list[int], seps: list[str]) -> IndexedText:
        """The words in ``order``, each after its separator (the first separator unused)."""
        parts: list[str] = []
        starts: list[int] = []
        pos = 0
        for k, i in enumerate(order):
            if k:
                parts.append(seps[k])
                pos += len(seps[k])
            starts.append(pos)
            parts.append(words[i].text)
            pos += len(words[i].text)
        ends = tuple(s + len(words[i].text) for s, i in zip(starts, order, strict=True))
        return cls("".join(parts), tuple(starts), tuple(order), ends)

    def words_in(self, start: int, end: int) -> list[int]:
        """Indexes of the words a character span touches: redaction covers whole tokens."""
        # words never overlap (a separator between each two), so their starts and ends both
        # rise and the words touched are one run of positions: found by bisection, not by
        # reading every word of the page for each finding
        first = bisect_right(self.ends, start)
        last = bisect_left(self.starts, end, lo=first)
        return [self.order[k] for k in range(first, last)]


@dataclass(frozen=True, slots=True)
class Hit:
    """A finding and the words of the page it covers."""

    finding: Finding
    words: tuple[int, ...]


def detect(words: Sequence[Word], detector: Detector) -> list[Hit]:
    """Findings on a page, read in reading order (with the model) and in visual rows."""
    hits: list[Hit] = []
    reading = IndexedText.of(words)
    for f in detector.find(reading.text):
        hits.append(Hit(f, tuple(reading.words_in(f.start, f.end))))
    seen = {(h.finding.kind, h.words): n for n, h in enumerate(hits)}
    texts = {reading.text}
    for layout in (IndexedText.rows(words), IndexedText.columns(words)):
        if layout.text in texts:
            continue
        texts.add(layout.text)
        for f in detector.find(layout.text, model=False):
            hit = Hit(f, tuple(layout.words_in(f.start, f.end)))
            n = seen.get((f.kind, hit.words))
            if n is None:
                seen[(f.kind, hit.words)] = len(hits)
                hits.append(hit)
            elif hits[n].finding.doubt and not f.doubt:
                # the same words believed in another layout (a label beside its value): the
                # finding is believed, and spread
                hits[n] = hit
    return hits


# words that open a sentence or a clause and are never part of a name
FUNCTION_WORDS = frozenset(
    """then when while but and or so if after before as since because yesterday today tomorrow
    now here there this that these those however meanwhile also still only even just thus hence
    later earlier once every each all some many most both neither either no not yes what who
    why how where which whose whom said says according with without from for in on at by to of
    about into over under between against during through like unlike dear hello hi thanks
    thank please sorry welcome is was are were has had have will would can could should may
    might must shall do does did the a an my his her their our your its we you they he she it
    i me us them mr mrs ms dr""".split()
)


def starts_sentence(words: Sequence[Word], i: int) -> bool:
    return i == 0 or words[i - 1].line != words[i].line or words[i - 1].text[-1:] in '.!?:;"“'


def _given_names_beside(words: Sequence[Word], names: set[int]) -> set[int]:
    """Capitalised words just before a name on its line ("Zdeněk" of "Zdeněk Novák", "Võ" of
    "Võ Quốc Bảo"): the rest of the person, when only part of the name was found. Not across a
    sentence end, not form or role words, not titles."""
    grown: set[int] = set()
    for i in sorted(names):
        j = i - 1
        for _ in range(2):
            if j < 0 or j in names or j in grown or starts_sentence(words, j + 1):
                break
            word = words[j].text.strip(",;()\"'“”")
            key = word.casefold().rstrip(".")
            if (
                key in FUNCTION_WORDS
                or not word[:1].isupper()
                or not any(c.isalpha() for c in word)
                or any(c.isdigit() for c in word)
                or key in STOP
                or key in ROLES
                or key in TITLES
                or key in ORG_WORDS
                or re.fullmatch(rf"(?i:{HONORIFIC})\.?", word)
            ):
                break
            grown.add(j)
            j -= 1
    return grown


def _surnames_after(words: Sequence[Word], names: set[int]) -> set[int]:
    """A capitalised word just after a found given name on its line, inside a sentence
    ("Sjöberg" of "Mikael Sjöberg" when the model found only "Mikael"): the rest of the
    person. Not after punctuation, not form, role, title or organisation words."""
    grown: set[int] = set()
    for i in sorted(names):
        j = i + 1
        if j >= len(words) or j in names or words[j].line != words[i].line:
            continue
        if words[i].text[-1:] in ".,;:!?)\"'\u201d\u2019" or _wide_gap(words[i].box, words[j].box):
            continue
        word = words[j].text.strip(",;.:!?()\"'“”")
        key = without_possessive(word.casefold())
        if (
            len(word) >= 2
            and word[:1].isupper()
            and not any(c.isdigit() for c in word)
            and key not in FUNCTION_WORDS
            and key not in STOP
            and key not in ROLES
            and key not in TITLES
            and key not in ORG_WORDS
            and key not in COMMON
        ):
            grown.add(j)
    return grown


def _titles_before(words: Sequence[Word], names: set[int]) -> set[int]:
    """The title in front of a burned name goes with it ("Dr ████" would leave a title that the
    next reading takes for the start of a new name)."""
    return {
        i - 1
        for i in names
        if i > 0
        and words[i - 1].line == words[i].line
        and re.fullmatch(rf"(?i:{HONORIFIC})\.?", words[i - 1].text.strip(",;:()"))
    }


def name_neighbours(words: Sequence[Word], names: set[int]) -> set[int]:
    """The words beside the name words ``names`` (indexes into ``words``) that go with them:
    given names before, a surname after, a title in front."""
    beside = _given_names_beside(words, names)
    beside |= _surnames_after(words, names | beside)
    return beside | _titles_before(words, names | beside)
