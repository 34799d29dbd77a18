"""Postal addresses (US, Canada, UK): pyap2 finds them in free text, usaddress's tagger finds one-
line US addresses pyap misses, an "Address:" label anchors the rest of its line, and a block of
address lines (a window-envelope block: PO box or building, street, town, postcode) is taken
whole when its last line is an address."""

from __future__ import annotations

import bisect
import importlib
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pressroom.redact.detect import Finding

KIND = "address"
COUNTRIES: tuple[Literal["US", "CA", "GB"], ...] = ("US", "CA", "GB")
LABEL_RE = re.compile(
    r"(?i)\b(?:home\s+|postal\s+|mailing\s+|street\s+|residential\s+|correspondence\s+)?"
    r"address\s*[:\-\t]\s*(?P<value>[^\n\t]{6,120})"
)
HOUSE_NUMBER = re.compile(r"\b\d+[A-Za-z]?\b")
UK_POSTCODE = re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}\b")
CA_POSTCODE = re.compile(r"\b[A-Z]\d[A-Z]\s?\d[A-Z]\d\b")
US_ZIP_LINE = re.compile(r"\b[A-Z]{2}\s+\d{5}(?:-\d{4})?\b")
# first lines of an address block that carry no house number
BLOCK_LINE = re.compile(
    r"(?i)^(?:(?:p\.?\s*o\.?|post\s+office)\s*box\s*#?\s*\w+.*"
    r"|(?:flat|apartment|apt|suite|unit|room|floor)\s+\w+.*"
    r"|[\w' \-]+\s(?:house|court|building|lodge|cottage|farm|mansions|tower|hall|manor|"
    r"chambers|buildings|barn|mill|centre|center|estate|forge|granary|grange|rectory|vicarage|"
    r"villa|stables|works|chapel|oast|croft|steading|bothy|lodge)\b.*"
    r"|[\w' \-]+\s(?:lane|road|street|avenue|close|drive|way|crescent|terrace|place|grove|"
    r"gardens|hill|row|walk|mews|square|court|rd|st|ave)\.?"
    r"|\d+[A-Za-z]?(?:[ ,\-]+\d+)?\s+[A-Za-z].*)$"
)
_LEAD_NOISE = re.compile(r"(?:[\d,.]+[ \t]+(?:[a-z]+[ \t]+)+)+(?=\d)")
STREET_TYPES = (
    r"street|st|road|rd|lane|ln|row|way|avenue|ave|close|drive|dr|court|ct|crescent|cres|place|pl"
    r"|square|sq|terrace|grove|gardens|gdns|hill|walk|mews|quay|wharf|parade|boulevard|blvd"
    r"|highway|hwy|parkway|pkwy|circle|cir|trail|green|rise|view|wynd|gate|yard|broadway|causeway"
)
# "122 Chandlers Row, Penrith": a house number, a street with its type, and a town after it
STREET_LINE_RE = re.compile(
    # an address wrapped at a line end in a narrow column is one address: a line break may
    # stand wherever a space does
    r"(?<![\w/\-])(?P<value>\d{1,5}[A-Za-z]?(?:[\-\u2013]\d{1,5})?,?(?:[ \t]+|[ \t]*\n[ \t]*)"
    r"(?:[A-Z][\w'\u2019\-]*\.?(?:[ \t]+|[ \t]*\n[ \t]*)){1,3}"
    rf"(?i:{STREET_TYPES})\b\.?"
    r"(?:,?(?:[ \t]+|[ \t]*\n[ \t]*)(?:[A-Z][\w'\u2019\-]+)(?:[ \t]+[A-Z][\w'\u2019\-]+)?)?)"
)
PO_BOX_RE = re.compile(
    r"(?i)(?P<value>\b(?:p\.?[ \t]?o\.?|post[ \t]+office)[ \t]*box[ \t]*#?[ \t]*[A-Z]?\d+"
    r"(?:[ \t,]+[^\n]{0,60}?(?:\b[A-Z]{1,2}\d[A-Z\d]?[ \t]*\d[A-Z]{2}\b|\b\d{5}(?:-\d{4})?\b))?)"
)
ZIP = re.compile(r"^\d{5}(?:-\d{4})?[.,;]?$")
# five digits alone: what a ZIP code token (``ZIP``) needs, as usaddress cuts tokens
_ZIP_TOKEN = re.compile(r"(?<!\d)\d{5}(?!\d)")


def _trim_start(text: str, start: int, end: int) -> int:
    """pyap's UK pattern can start mid-word or on the line before ("r Jane at the office.\n
    Send to 12 Elm Street, Leeds LS1 4DY"): start at the house number then."""
    while start < end and text[start].isspace():
        start += 1
    # "500 to 12 Elm Street": an amount and lower-case words before the house number
    lead = _LEAD_NOISE.match(text, start, end)
    if lead:
        start = lead.end()
    value = text[start:end]
    number = HOUSE_NUMBER.search(value)
    if number is not None and number.start() > 0:
        prefix = value[: number.start()]
        begins_mid_word = start > 0 and text[start - 1].isalnum()
        if "\n" in prefix or begins_mid_word or not value[:1].isupper():
            start += number.start()
    elif number is None:
        # no house number: the address starts after the last sentence break before the street
        cut = max(value.rfind(". "), value.rfind("\n"), value.rfind(": "))
        if cut >= 0:
            start += cut + 2 if value[cut] != "\n" else cut + 1
    return start


_PYAP_STEPS = (
    # from the start of a run only: tried inside a long run of spaces it is quadratic
    (re.compile(r"(?<![ \t])[ \t]*(?:,[ \t]*)+"), ", "),
    (re.compile(r" +"), " "),
    (re.compile("[\u2010-\u2015]"), "-"),
)


def normalised_with_map(text: str) -> tuple[str, list[int]]:
    """The text as pyap normalises it (comma runs as ", ", space runs as one, dashes as "-"),
    and for each character of that copy the offset of its source character: pyap's offsets
    are into its copy, never the original."""
    where = list(range(len(text)))
    for pattern, repl in _PYAP_STEPS:
        out: list[str] = []
        moved: list[int] = []
        pos = 0
        for m in pattern.finditer(text):
            out.append(text[pos : m.start()])
            moved += where[pos : m.start()]
            anchor = m.start() + max(m.group().find(","), 0)
            out.append(repl)
            moved += [where[anchor]] * len(repl)
            pos = m.end()
        out.append(text[pos:])
        moved += where[pos:]
        text, where = "".join(out), moved
    return text, where


# pyap's patterns run over bounded windows of the text, never the whole page: its US pattern
# costs ~0.2 ms a character wherever digits stand (a page of "1 2 3 …" took 22 s), its GB pattern
# ~30 µs a character of any prose, and its own normalisation is quadratic in a run of tabs. Every
# match of a country's full-address pattern holds a part found cheaply (US: a state or a ZIP
# code after a town's letter; CA: a province; GB: a postcode), so the pattern is tried only
# from PYAP_BEFORE characters before such a part to PYAP_AFTER after it, windows joined where
# they touch: each character is read at most once a country, and a page with no such part
# costs nothing. The margins are far
# wider than the street, town and country pyap's patterns allow around that part (about 150
# characters before it, 60 after), except a street given by a number hundreds of digits long.
PYAP_BEFORE = 300
PYAP_AFTER = 200
_SPACE = re.compile(r"\s")
# A US match's state or ZIP code follows its town: a letter, then at most the town's trailing
# spaces, hyphens, apostrophes and dots (20), a divider (3: "," or whitespace, " - " or "-")
# and a country's dots before it (a state needs the divider). So only a state or ZIP with a
# letter so close before it anchors a window: a page of ZIP-like numbers, or IBANs whose "DE"
# reads as Delaware, anchors none, where each was otherwise a window of the whole page.
_US_BEFORE = r"[A-Za-z](?:[\s,'.\-]{{1,40}}(?:{region})|[\s,'.\-]{{0,40}}(?:{postal}))"


class FullPattern:
    """A country's full-address pattern, compiled the first time a text needs it (a window
    around that country's anchor): compiling pyap's US pattern costs ~0.07 s and its Canadian
    one ~0.03 s, a fixed cost of every process, most of whose pages anchor no Canadian address."""

    __slots__ = ("country",)

    def __init__(self, country: str) -> None:
        self.country = country

    def finditer(
        self, text: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        return _full_pattern(self.country).finditer(text, pos, endpos)


@dataclass(frozen=True, slots=True)
class PyapPatterns:
    """One country's pyap patterns, compiled from pyap's own sources (pinned in the
    requirements): the full address, and the part every full address holds."""

    full: FullPattern
    anchor: re.Pattern[str]


def _us_anchor(data: Any) -> str:
    """A state or ZIP code just after a town's letter, looked for at every position (a
    look-ahead), so that no anchor hides inside another; its span is the group ``part``."""
    before = _US_BEFORE.format(region=data.make_region1(), postal=data.postal_code_re)
    return f"(?=(?P<part>{before}))"


def _source(country: str) -> Any:
    return importlib.import_module(f"pyap.source_{country}.data")


@lru_cache(maxsize=len(COUNTRIES))
def _full_pattern(country: str) -> re.Pattern[str]:
    from pyap import utils

    return re.compile(_source(country).full_address, utils.DEFAULT_FLAGS)


@lru_cache(maxsize=len(COUNTRIES))
def pyap_patterns(country: str) -> PyapPatterns:
    from pyap import utils

    data = _source(country)
    anchor: str = (
        _us_anchor(data)
        if country == "US"
        else data.region1
        if country == "CA"
        else data.postal_code
    )
    return PyapPatterns(FullPattern(country), re.compile(anchor, utils.DEFAULT_FLAGS))


def pyap_windows(clean: str, anchor: re.Pattern[str]) -> list[tuple[int, int]]:
    """Spans of pyap's copy of the text worth reading for one country, in order and apart:
    around each anchor, widened to whitespace so no window starts or ends inside a word."""
    windows: list[tuple[int, int]] = []
    part = "part" if "part" in anchor.groupindex else 0
    for m in anchor.finditer(clean):
        a = max(0, m.start(part) - PYAP_BEFORE)
        b = min(len(clean), m.end(part) + PYAP_AFTER)
        if windows and a <= windows[-1][1]:
            a = windows[-1][0]
            if b <= windows[-1][1]:
                continue
        else:
            floor = windows[-1][1] if windows else 0
            while a > floor and not clean[a - 1].isspace():
                a -= 1
        space = _SPACE.search(clean, b)
        b = space.start() if space else len(clean)
        if windows and a <= windows[-1][1]:
            windows[-1] = (windows[-1][0], b)
        else:
            windows.append((a, b))
    return windows


def _pyap(text: str) -> list[Finding]:
    """pyap's addresses, its patterns run directly over our normalised copy (pyap would
    normalise it again: a no-op on that copy, and quadratic in a run of tabs), window by
    window (``pyap_windows``): a window ends before whitespace, so the pattern's look-aheads
    read there what they would read in the whole text, and its look-behinds see the text
    before the window."""
    clean, where = normalised_with_map(text)
    found: list[Finding] = []
    for country in COUNTRIES:
        patterns = pyap_patterns(country)
        for a, b in pyap_windows(clean, patterns.anchor):
            for m in patterns.full.finditer(clean, a, b):
                if m.end() <= m.start():
                    continue
                start, end = where[m.start()], where[m.end() - 1] + 1
                start = _trim_start(text, start, end)
                value = text[start:end].rstrip(" ,;\n\t")
                end = start + len(value)
                if end > start:
                    found.append(Finding(KIND, start, end, value, f"pyap-{country}"))
    return found


def _usaddress_lines(text: str) -> list[Finding]:
    """US addresses on one line that pyap's patterns miss, found by usaddress's tagger: a house
    number, a street and a ZIP code, in order, make an address (from the number to the ZIP)."""
    import usaddress

    found: list[Finding] = []
    offset = 0
    for line in text.split("\n"):
        # the tagger reads a whole line (~13 µs a character); without a ZIP code it finds none
        if _ZIP_TOKEN.search(line):
            try:
                tagged = usaddress.parse(line)
            except Exception:  # the tagger's own errors: no address on this line
                tagged = []
            labels = [label for _token, label in tagged]
            if "AddressNumber" in labels and "StreetName" in labels and "ZipCode" in labels:
                first = labels.index("AddressNumber")
                last = len(labels) - 1 - labels[::-1].index("ZipCode")
                if first < labels.index("StreetName") < last and ZIP.match(tagged[last][0]):
                    start = line.find(tagged[first][0])
                    zip_token = tagged[last][0].rstrip(".,;")
                    end = line.find(zip_token, start) + len(zip_token)
                    if 0 <= start < end:
                        found.append(
                            Finding(
                                KIND, offset + start, offset + end, line[start:end], "usaddress"
                            )
                        )
        offset += len(line) + 1
    return found


def _is_last_line(line: str) -> bool:
    """A town-and-postcode line: the end of a postal address block."""
    return bool(UK_POSTCODE.search(line) or CA_POSTCODE.search(line) or US_ZIP_LINE.search(line))


def _left_cell(text: str, start: int, end: int) -> tuple[int, int]:
    """The first cell of a line: "Flat 4, Beacon Court<tab>3 April 2026" holds two."""
    line = text[start:end]
    cut = line.find("\t")
    cell = line if cut < 0 else line[:cut]
    lead = len(cell) - len(cell.lstrip())
    return start + lead, start + len(cell.rstrip())


class _Lines:
    """Where each line of a text starts, its first character that is not whitespace and its
    first tab, each worked out once: many findings on one long line must not each copy it."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0, *(m.end() for m in re.finditer("\n", text))]
        self._firsts: dict[int, tuple[int, int]] = {}

    def start_of(self, pos: int) -> int:
        """The start of the line holding ``pos``: ``text.rfind("\\n", 0, pos) + 1``."""
        return self.starts[bisect.bisect_right(self.starts, pos) - 1]

    def _first(self, line_start: int) -> tuple[int, int]:
        """The line's first character that is not whitespace, and its first tab (or its end)."""
        if line_start not in self._firsts:
            end = self.text.find("\n", line_start)
            end = len(self.text) if end < 0 else end
            line = self.text[line_start:end]
            tab = line.find("\t")
            self._firsts[line_start] = (
                line_start + len(line) - len(line.lstrip()),
                line_start + (len(line) if tab < 0 else tab),
            )
        return self._firsts[line_start]

    def first_char(self, line_start: int) -> int:
        return self._first(line_start)[0]

    def left_cell(self, line_start: int, end: int) -> tuple[int, int]:
        """``_left_cell(text, line_start, end)`` for a span that starts a line."""
        first, tab = self._first(line_start)
        cut = min(tab, end)
        if first >= cut:
            return cut, line_start  # only whitespace: no cell
        while self.text[cut - 1].isspace():
            cut -= 1
        return first, cut


def _blocks(text: str, found: list[Finding]) -> list[Finding]:
    """Grow a finding upwards over the block lines above it (PO box, building, street), so an
    address written as a block is taken whole, not cut to its last line. Each line above is a
    finding of its own, its first cell only (a date beside the block is no address)."""
    grown: list[Finding] = []
    lines = _Lines(text)
    for f in found:
        line_start = lines.start_of(f.start)
        text_before = lines.first_char(line_start) < f.start
        if text_before and not _is_last_line(text[f.start : f.end]):
            continue
        start = line_start if not text_before else f.start
        for _ in range(3):
            if start == 0:
                break
            prev_start = lines.start_of(start - 1)
            a, b = lines.left_cell(prev_start, start - 1)
            if b <= a or b - a > 60 or not BLOCK_LINE.match(prev := text[a:b]):
                break
            grown.append(Finding(KIND, a, b, prev, f.recognizer + "-block"))
            start = prev_start
    return grown


def _postcode_blocks(text: str) -> list[Finding]:
    """A postcode line under one or two address lines, where no recogniser saw the whole:
    each line's first cell."""
    found: list[Finding] = []
    lines = text.split("\n")
    offsets = []
    pos = 0
    for line in lines:
        offsets.append(pos)
        pos += len(line) + 1
    for i, line in enumerate(lines):
        if not _is_last_line(line) or len(line.strip()) > 60 or i == 0:
            continue
        first = i
        while first > 0 and i - first < 3:
            a, b = _left_cell(text, offsets[first - 1], offsets[first - 1] + len(lines[first - 1]))
            prev = text[a:b]
            if not prev or len(prev) > 60 or not BLOCK_LINE.match(prev):
                break
            first -= 1
        if first == i:
            continue
        for k in range(first, i + 1):
            a, b = _left_cell(text, offsets[k], offsets[k] + len(lines[k]))
            if b > a:
                found.append(Finding(KIND, a, b, text[a:b], "block"))
    return found


@dataclass(frozen=True, slots=True)
class AddressRecognizer:
    kind: str = KIND

    def find(self, text: str) -> list[Finding]:
        found = _pyap(text)
        found += _usaddress_lines(text)
        for regex, source in ((STREET_LINE_RE, "street"), (PO_BOX_RE, "po-box")):
            for m in regex.finditer(text):
                if source == "street" and not _street_words(m.group("value")):
                    continue
                value = m.group("value").rstrip(" ,.")
                found.append(
                    Finding(KIND, m.start("value"), m.start("value") + len(value), value, source)
                )
        found += _blocks(text, found)
        found += _postcode_blocks(text)
        for m in LABEL_RE.finditer(text):
            value = m.group("value").strip()
            start = m.start("value")
            found.append(Finding(KIND, start, start + len(value), value, "label"))
        # a line of a block stands with the address it belongs to ("Harbour House")
        return [f for f in found if f.recognizer.endswith("block") or _looks_like_address(f.value)]


def _street_words(value: str) -> bool:
    """ "12 Mar SEPA CT" is a statement row, not 12 Mar Sepa Court: a street's name holds no
    month, money or form word."""
    from pressroom.redact.detect.name_words import STOP

    words = [w.strip(",.").casefold() for w in value.split()[1:-1]]
    return not any(w in STOP and w not in _STREETISH for w in words)


_STREETISH = frozenset(
    "street road lane avenue park hall court house station bridge square".split()
)


def _looks_like_address(value: str) -> bool:
    """At least two words and something an address has: a number or a postcode."""
    words = value.split()
    return len(words) >= 2 and any(c.isdigit() for c in value) and len(value.strip()) >= 8
