"""From findings to boxes: whole tokens, every occurrence. Pure functions, no I/O."""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from pressroom.models import Box, Word
from pressroom.redact.detect import Finding
from pressroom.redact.detect.detector import Detector, is_mention, without_possessive
from pressroom.redact.detect.name_cues import HONORIFIC
from pressroom.redact.detect.name_words import COMMON, ORG_WORDS, ROLES, STOP, TITLES

PAD_PX = 3.0


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


def normalise(text: str) -> str:
    """Accents folded, case folded, only letters and digits: how values are compared."""
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in decomposed if not unicodedata.combining(c))
    return re.sub(r"[\W_]+", "", kept.casefold())


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


def covered_words(
    words: Sequence[Word],
    hits: Iterable[Hit],
    values: Iterable[str] = (),
    tokens: frozenset[str] = frozenset(),
) -> set[int]:
    """Words covered by a finding on this page, by any value found anywhere in the document,
    or by a name token of a person found anywhere (a surname alone, a possessive, capitals)."""
    hit: set[int] = set()
    names: set[int] = set()
    for h in hits:
        hit.update(h.words)
        if h.finding.kind == "name":
            names.update(h.words)
    if tokens:
        common = tokens & COMMON
        for i, w in enumerate(words):
            if is_mention(w.text, tokens) and (
                not is_mention(w.text, common) or not _starts_sentence(words, i)
            ):
                names.add(i)
        hit |= names
    beside = _given_names_beside(words, names)
    beside |= _surnames_after(words, names | beside)
    hit |= beside | _titles_before(words, names | beside)
    wanted = {v for v in (normalise(v) for v in values) if len(v) >= 3}
    if wanted:
        hit |= _runs_holding(words, wanted)
    return hit


def _runs_holding(words: Sequence[Word], wanted: set[str]) -> set[int]:
    """Words of the shortest run from each word that holds a value, when that word is needed
    for it. A value may span words or sit inside a longer token; a run is at most 16 words,
    and no longer than the longest value and 64 characters more before its last word.

    The runs are read off one text of the words' keys joined: a value lies in words i..j
    when one of its occurrences starts at or after word i and ends by the end of word j, so
    the least end of an occurrence from each position (one pass of ``_least_ends``) gives
    every run at once: the work grows with the text and the values' length, never with
    words times values."""
    keys = [normalise(w.text) for w in words]
    offsets = [0]  # where each word's key starts in the joined text, and its end
    for key in keys:
        offsets.append(offsets[-1] + len(key))
    least = _least_ends("".join(keys), wanted)
    longest = max(len(v) for v in wanted)
    n = len(words)
    out: set[int] = set()
    for i in range(n):
        end = least[offsets[i]]
        if end >= len(least):  # no value from here on
            continue
        j = bisect_left(offsets, end, lo=i + 1) - 1  # the first word whose end reaches it
        if j >= min(i + 16, n) or (j > i and offsets[j] - offsets[i] > longest + 64):
            continue  # past where a run from word i stops growing
        if least[offsets[i + 1]] > offsets[j + 1]:  # word i is needed for the value
            out.update(range(i, j + 1))
    return out


def _least_ends(text: str, values: Iterable[str]) -> list[int]:
    """For each position of ``text`` (and its end), the least end of an occurrence of any of
    ``values`` that starts there or later; ``len(text) + 1`` where none does. One pass of an
    Aho-Corasick automaton: each character read once, whatever the number of values."""
    goto: list[dict[str, int]] = [{}]
    depth = [0]
    ends_value = [False]
    for value in values:
        state = 0
        for c in value:
            nxt = goto[state].get(c)
            if nxt is None:
                nxt = len(goto)
                goto[state][c] = nxt
                goto.append({})
                depth.append(depth[state] + 1)
                ends_value.append(False)
            state = nxt
        ends_value[state] = True
    # shortest[s]: the length of the shortest value that ends the text state s has read (0:
    # none); the shortest starts latest, which is all a least end from a position needs
    fail = [0] * len(goto)
    shortest = [0] * len(goto)
    queue = deque(goto[0].values())
    for s in queue:
        shortest[s] = depth[s] if ends_value[s] else 0
    while queue:
        s = queue.popleft()
        for c, t in goto[s].items():
            f = fail[s]
            while f and c not in goto[f]:
                f = fail[f]
            fail[t] = goto[f].get(c, 0)
            shortest[t] = shortest[fail[t]] or (depth[t] if ends_value[t] else 0)
            queue.append(t)
    none = len(text) + 1
    least = [none] * (len(text) + 1)
    state = 0
    for end, c in enumerate(text, 1):
        while state and c not in goto[state]:
            state = fail[state]
        state = goto[state].get(c, 0)
        if shortest[state]:
            start = end - shortest[state]
            if least[start] > end:
                least[start] = end
    for p in range(len(text) - 1, -1, -1):
        if least[p + 1] < least[p]:
            least[p] = least[p + 1]
    return least


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


def _starts_sentence(words: Sequence[Word], i: int) -> bool:
    return i == 0 or words[i - 1].line != words[i].line or words[i - 1].text[-1:] in '.!?:;"“'


def _given_names_beside(words: Sequence[Word], names: set[int]) -> set[int]:
    """Capitalised words just before a name on its line ("Zdeněk" of "Zdeněk Novák", "Võ" of
    "Võ Quốc Bảo"): the rest of the person, when only part of the name was found. Not across a
    sentence end, not form or role words, not titles."""
    grown: set[int] = set()
    for i in sorted(names):
        j = i - 1
        for _ in range(2):
            if j < 0 or j in names or j in grown or _starts_sentence(words, j + 1):
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


def boxes_for(
    words: Sequence[Word], indexes: Iterable[int], pad: float = PAD_PX, quantum: float = 0.0
) -> list[Box]:
    """One solid box for each run of covered words on a line: no gap between a value's words
    shows how long each was, nor an IBAN's grouping or a card's 4-4-4-4. A run is cut only
    where joining it would cover a word that stays. With ``quantum`` (pixels) each box is
    widened to a whole number of quanta, so its width tells less of the value's length."""
    chosen = sorted(set(indexes))
    taken = set(chosen)
    lines: dict[int, list[int]] = {}
    for k, w in enumerate(words):
        lines.setdefault(w.line, []).append(k)
    runs: list[list[int]] = []
    for i in chosen:
        run = runs[-1] if runs else None
        if run is not None and i == run[-1] + 1 and words[i].line == words[run[-1]].line:
            joined = _union([words[j].box for j in (run[0], i)])
            if not any(
                k not in taken and overlaps(joined, words[k].box) for k in lines[words[i].line]
            ):
                run.append(i)
                continue
        runs.append([i])
    boxes = []
    for run in runs:
        b = _union([words[j].box for j in run])
        x0, x1 = b.x0 - pad, b.x1 + pad
        if quantum > 0:
            extra = -(x1 - x0) % quantum
            x0, x1 = x0 - extra / 2, x1 + extra / 2
        boxes.append(Box(x0, b.y0 - pad, x1, b.y1 + pad))
    return boxes


def _union(boxes: Sequence[Box]) -> Box:
    return Box(
        min(b.x0 for b in boxes),
        min(b.y0 for b in boxes),
        max(b.x1 for b in boxes),
        max(b.y1 for b in boxes),
    )


def overlaps(a: Box, b: Box) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def turn_words(words: Sequence[Word], degrees: int, size: tuple[float, float]) -> list[Word]:
    """Words of a ``size`` (w, h) pixel frame as they stand once the frame is turned clockwise."""
    degrees %= 360
    if degrees == 0:
        return list(words)
    w, h = size

    def point(x: float, y: float) -> tuple[float, float]:
        if degrees == 90:
            return h - y, x
        if degrees == 180:
            return w - x, h - y
        return y, w - x

    out = []
    for word in words:
        (ax, ay), (bx, by) = point(word.box.x0, word.box.y0), point(word.box.x1, word.box.y1)
        box = Box(min(ax, bx), min(ay, by), max(ax, bx), max(ay, by))
        out.append(
            Word(
                word.text,
                word.confidence,
                box,
                (box.x0, box.y1 - 0.2 * box.height),
                box.width,
                box.height,
                0.0,
                word.line,
            )
        )
    return out


def _similar(a: str, b: str) -> bool:
    a, b = normalise(a), normalise(b)
    if not a or not b:
        return a == b
    return a in b or b in a or SequenceMatcher(None, a, b).ratio() >= 0.6


def visible_words(extracted: Sequence[Word], seen: Sequence[Word]) -> list[Word]:
    """Extracted words that OCR also saw where they stand: what a reader can actually see.
    Each is compared with the OCR words near it only (a page of 12,000 words compared every
    pair: 72 million comparisons)."""
    index = BoxIndex(cell=64.0)
    for n, o in enumerate(seen):
        index.add(n, o.box)
    return [
        w
        for w in extracted
        if any(
            overlaps(w.box, seen[n].box) and _similar(w.text, seen[n].text)
            for n in index.near(w.box)
        )
    ]


class BoxIndex:
    """Boxes by the cells of a grid they touch, for "which of them may overlap this one": a
    box is a candidate for every box sharing a cell with it, and a box wider than ``wide``
    cells is kept on a short list every question sees (a page holds few such boxes)."""

    __slots__ = ("cell", "grid", "wide", "wide_cells")

    def __init__(self, cell: float, wide_cells: int = 64) -> None:
        self.cell = cell
        self.wide_cells = wide_cells
        self.grid: dict[tuple[int, int], list[int]] = {}
        self.wide: list[int] = []

    def _cells(self, box: Box) -> list[tuple[int, int]] | None:
        x0, y0 = int(box.x0 // self.cell), int(box.y0 // self.cell)
        x1, y1 = int(box.x1 // self.cell), int(box.y1 // self.cell)
        if (x1 - x0 + 1) * (y1 - y0 + 1) > self.wide_cells:
            return None
        return [(x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)]

    def add(self, key: int, box: Box) -> None:
        cells = self._cells(box)
        if cells is None:
            self.wide.append(key)
            return
        for c in cells:
            self.grid.setdefault(c, []).append(key)

    def near(self, box: Box) -> list[int]:
        """Keys of every box that may overlap ``box``, each once, in the order added."""
        cells = self._cells(box)
        if cells is None:  # a wide box: every box is a candidate
            found = set(self.wide).union(*self.grid.values())
        else:
            found = set(self.wide)
            for c in cells:
                found.update(self.grid.get(c, ()))
        return sorted(found)


def remaining(words: Sequence[Word], boxes: Sequence[Box]) -> list[Word]:
    """Words that survive: none that a burned box touches (OCR and extracted words alike)."""
    return [w for w in words if not any(overlaps(w.box, b) for b in boxes)]
