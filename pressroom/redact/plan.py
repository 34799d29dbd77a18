"""From findings to boxes: whole tokens, every occurrence. Pure functions, no I/O. (What is
found on a page, and the words beside a name that go with it: ``redact.detection``.)"""

from __future__ import annotations

import re
import unicodedata
import weakref
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from difflib import SequenceMatcher
from typing import Any, TypeVar, cast

from pressroom.models import Box, Word
from pressroom.redact.detect.detector import is_mention
from pressroom.redact.detect.name_words import COMMON
from pressroom.redact.detection import Hit, name_neighbours, starts_sentence

PAD_PX = 3.0
T = TypeVar("T")
_NOT_ASCII_ALNUM = re.compile(r"[^a-z0-9]+")


def normalise(text: str) -> str:
    """Accents folded, case folded, only letters and digits: how values are compared."""
    if text.isascii():
        # the same result without the per-character walk: ASCII has no decompositions and
        # no combining marks, its casefold is lower(), and its \w is [A-Za-z0-9_]
        return _NOT_ASCII_ALNUM.sub("", text.lower())
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in decomposed if not unicodedata.combining(c))
    return re.sub(r"[\W_]+", "", kept.casefold())


def covered_words(
    words: Sequence[Word],
    hits: Iterable[Hit],
    values: Iterable[str] = (),
    tokens: frozenset[str] = frozenset(),
) -> set[int]:
    """Words covered by a finding on this page, by any value found anywhere in the document,
    or by a name token of a person found anywhere (a surname alone, a possessive, capitals).

    A document's values are searched for through one automaton, built the first time they
    are asked for (``value_search``) and kept while the caller keeps them: a page costs its
    own words, never the values of every other page again."""
    hit: set[int] = set()
    names: set[int] = set()
    for h in hits:
        hit.update(h.words)
        if h.finding.kind == "name":
            names.update(h.words)
    if tokens:
        common = _per_set(tokens, "common", lambda: tokens & COMMON)
        for i, w in enumerate(words):
            if is_mention(w.text, tokens) and (
                not is_mention(w.text, common) or not starts_sentence(words, i)
            ):
                names.add(i)
        hit |= names
    hit |= name_neighbours(words, names)
    search = value_search(values)
    if search.values:
        hit |= _runs_holding(words, search)
    return hit


def _runs_holding(words: Sequence[Word], search: ValueSearch) -> set[int]:
    """Words of the shortest run from each word that holds a value, when that word is needed
    for it. A value may span words or sit inside a longer token; a run is at most 16 words,
    and no longer than the longest value and 64 characters more before its last word.

    The runs are read off one text of the words' keys joined: a value lies in words i..j
    when one of its occurrences starts at or after word i and ends by the end of word j, so
    the least end of an occurrence from each position (one pass of ``least_ends``) gives
    every run at once: the work grows with the text, never with words times values."""
    keys = [normalise(w.text) for w in words]
    offsets = [0]  # where each word's key starts in the joined text, and its end
    for key in keys:
        offsets.append(offsets[-1] + len(key))
    least = search.least_ends("".join(keys))
    longest = search.longest
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
    ``values`` (already compared keys) that starts there or later; ``len(text) + 1`` where
    none does."""
    return _Automaton(values).least_ends(text)


class _Automaton:
    """An Aho-Corasick automaton of values: each character of a text read once, whatever
    the number of values. Built once per set of values (``ValueSearch``)."""

    __slots__ = ("fail", "goto", "shortest")

    def __init__(self, values: Iterable[str]) -> None:
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
        # shortest[s]: the length of the shortest value that ends the text state s has read
        # (0: none); the shortest starts latest, which is all a least end from a position needs
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
        self.goto, self.fail, self.shortest = goto, fail, shortest

    def least_ends(self, text: str) -> list[int]:
        goto, fail, shortest = self.goto, self.fail, self.shortest
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


# Up to this many values a text is searched for each in turn (a pass of C's substring search
# each, faster than any pass made in Python); past it, in one pass of a pattern shaped as the
# values' trie (its work a text's length times at most the longest value, whatever their
# number).
FEW_VALUES = 128


class ValueSearch:
    """Values as they are compared (``normalise``d, three letters or digits or more) and the
    ways a text is searched for them: where they end (``least_ends``, for runs of words) and
    which stand in it (``found_in``, for the leak check). Built once per document's values:
    the normalising, the automaton and the pattern are made the first time each is needed."""

    __slots__ = ("_automaton", "_pattern", "_prefixes", "_tried", "longest", "values")

    def __init__(self, values: Iterable[str]) -> None:
        self.values: tuple[str, ...] = tuple(
            sorted({k for k in (normalise(v) for v in values) if len(k) >= 3})
        )
        self.longest = max(map(len, self.values), default=0)
        self._automaton: _Automaton | None = None
        self._pattern: re.Pattern[str] | None = None
        self._prefixes: dict[str, tuple[str, ...]] = {}
        self._tried = False  # whether the pattern was made (or found too deep to make)

    def least_ends(self, text: str) -> list[int]:
        """See ``_least_ends``: ``text`` holds compared keys."""
        if self._automaton is None:
            self._automaton = _Automaton(self.values)
        return self._automaton.least_ends(text)

    def found_in(self, squashed: str) -> set[str]:
        """The values that stand in ``squashed`` (a text already ``normalise``d)."""
        if len(self.values) <= FEW_VALUES or not self._compiled():
            return {v for v in self.values if v in squashed}
        assert self._pattern is not None
        found: set[str] = set()
        for m in self._pattern.finditer(squashed):
            # the longest value starting here; every value starting here is a prefix of it
            found.update(self._prefixes[m.group(1)])
        return found

    def _compiled(self) -> bool:
        """The values' trie as one pattern, tried at every position (a lookahead, so values
        that overlap are all seen); False where it cannot be compiled (nested too deep), and
        the values are then searched one by one."""
        if self._tried:
            return self._pattern is not None
        self._tried = True
        trie: dict[str, Any] = {}
        for v in self.values:
            node = trie
            for c in v:
                node = node.setdefault(c, {})
            node[""] = v
        prefixes: dict[str, tuple[str, ...]] = {}
        for v in self.values:
            node, on = trie, []
            for c in v:
                node = node[c]
                if "" in node:
                    on.append(node[""])
            prefixes[v] = tuple(on)
        try:
            self._pattern = re.compile("(?=(" + _trie_pattern(trie, 0) + "))")
        except (RecursionError, re.error, OverflowError):
            return False
        self._prefixes = prefixes
        return True


# groups nested deeper than this (values that are prefixes of prefixes of...) are not made
# into a pattern: compiling it would recurse past Python's limit
_MAX_GROUPS = 100


def _trie_pattern(node: dict[str, Any], depth: int) -> str:
    """A trie as a pattern matching the longest of its values at a position: its branches
    begin with different characters, so at most one can go on, and ending here is tried
    last."""
    if depth > _MAX_GROUPS:
        raise RecursionError("a trie nested too deep for one pattern")
    chain = ""
    while len(node) == 1 and "" not in node:  # a run of single children: plain text
        ((c, node),) = node.items()
        chain += re.escape(c)
    branches = [
        re.escape(c) + _trie_pattern(child, depth + 1) for c, child in sorted(node.items()) if c
    ]
    if not branches:
        return chain
    body = "(?:" + "|".join(branches) + ")"
    return chain + (body + "?" if "" in node else body)


# a search made for a set of values, kept while the set lives (and is unchanged): by the id of
# the set, with a weak reference to it, what it held, the kind of thing made, and the thing
_MADE: dict[tuple[int, str], tuple[weakref.ref[Any], frozenset[str], Any]] = {}


def _per_set(values: Any, kind: str, make: Callable[[], T]) -> T:
    """``make()`` once for the set ``values`` as long as it lives unchanged: a document's
    values are asked for page after page, and what is made of them is made once. Nothing
    outlives the set (a job's values are not kept past its document)."""
    if not isinstance(values, set | frozenset):
        return make()
    key = (id(values), kind)
    held = _MADE.get(key)
    if (
        held is not None
        and held[0]() is values
        and (isinstance(values, frozenset) or held[1] == values)
    ):
        return cast(T, held[2])
    made = make()

    def forget(ref: weakref.ref[Any], key: tuple[int, str] = key, made: Any = _MADE) -> None:
        # (``made``: the table itself, still there while the interpreter shuts down)
        entry = made.get(key)
        if entry is not None and entry[0] is ref:
            del made[key]

    snapshot = values if isinstance(values, frozenset) else frozenset(values)
    _MADE[key] = (weakref.ref(values, forget), snapshot, made)
    return made


def value_search(values: Iterable[str]) -> ValueSearch:
    """The search for ``values``: made once for a set while it lives unchanged (a document's
    values, asked for on every page), made anew for anything else."""
    if isinstance(values, ValueSearch):
        return values
    return _per_set(values, "search", lambda: ValueSearch(values))


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
