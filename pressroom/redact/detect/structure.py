"""Names in the shapes that lists and tables give them, where prose cues are absent.

- **Scorecards**: a batting line names the batter, the fielder and the bowler, joined by the
  dismissal ("Cook c Carey b Starc 45", "Root lbw b Lyon 12", "Stokes run out (Head) 5",
  "Broad not out 3").
- **Scorers in brackets** after a team's score: "Leeds 2 (Okonkwo 12, Brennan 77 pen)".
- **Results lists**: a rank, a name, then what they represent in brackets (a country, a
  nationality or a three-letter code) and a figure: "1. Marta Kowalczyk (Poland) 50.12",
  "3 Hanna Lindqvist (SWE) 2:07.44".
- **A column of names**: in a run of three or more lines of one shape (rank, words, figures),
  the words in the name's place of a line are a name when two other lines of the run hold one
  found by other evidence.

What each shape finds is scored as believed (``STRONG``) when the shape alone is telling (a
dismissal, a bracketed country), and doubtful (``WEAK``) otherwise: burned all the same, never
spread to the word's other mentions.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pressroom.redact.detect import Finding
from pressroom.redact.detect.name_cues import HONORIFIC, LETTER, LETTER_SET, UPPER
from pressroom.redact.detect.name_words import ORG_WORDS, ROLES, STOP, TITLES, english, fold
from pressroom.redact.detect.places import mostly_place

STRONG, WEAK = 0.85, 0.6
KIND = "name"

# a capitalised word of two letters or more, an initial ("J." or "J"): one parse each, so a
# failed match cannot try every way of reading "A B C" (no backtracking blow-up); hyphens and
# apostrophes inside a word
_CAP = rf"{UPPER}(?:{LETTER}|['\u2019\-](?={LETTER}))+"
_INITIAL = rf"{UPPER}\.?"
# up to three initials, then one to three words, on one line ("A. N. Other"; "de Kock" is not
# capitalised: left alone)
NAME = rf"(?>(?:{_INITIAL}[ ]){{0,3}}){_CAP}(?:[ ]{_CAP}){{0,2}}"


def _n(group: str) -> str:
    return f"(?P<{group}>{NAME})"


_DISMISSAL = re.compile(
    rf"(?m)^[ \t]*{_n('bat')}[ \t]+(?:"
    rf"c[ \t]+[\u2020*]?{_n('field')}[ \t]+b[ \t]+{_n('bowl')}"
    rf"|c[ \t]*&[ \t]*b[ \t]+{_n('bowl2')}"
    rf"|st[ \t]+[\u2020*]?{_n('keeper')}[ \t]+b[ \t]+{_n('bowl3')}"
    rf"|(?:lbw|hit[ \t]+wkt)[ \t]+b[ \t]+{_n('bowl4')}"
    rf"|b[ \t]+{_n('bowl5')}"
    rf"|run[ \t]+out[ \t]*\([ \t]*{_n('runner')}(?:[ \t]*/[ \t]*{_n('runner2')})?"
    rf"[ \t]*\)"
    rf"|not[ \t]+out"
    rf")[ \t]+\d{{1,3}}\b"
)
# a scorer and their minutes, the next ones after a comma; at most twelve of them
# a goal's minute (0 to 129, stoppage time after a +), a penalty or an own goal after it
_GOAL = r"(?:1[0-2]\d|\d{1,2})\b(?:\+\d{1,2})?'?(?:[ \t]*(?:pen\.?|og|o\.g\.|\(?pen\)?|\(?og\)?))?"
_SCORE_BRACKET = re.compile(
    rf"\b\d{{1,2}}[ \t]*\((?P<inside>(?>[ \t]*{NAME}[ \t]+{_GOAL}"
    rf"(?:[ \t]*[,;][ \t]*(?:{NAME}[ \t]+)?{_GOAL}){{0,11}})[ \t]*)\)"
)
_SCORER = re.compile(rf"(?P<who>{NAME})[ \t]+\d")
# a name with a lower-case particle before it ("de Groot", "van Dijk")
_PNAME = rf"(?:(?:de|van|von|da|di|du|le|la|del|der|den|ten|ter|dos|das)[ ])?{NAME}"
# a line of scorers with no bracket: "de Groot 41 pen, Sepúlveda 67, Bjørklund 86"
_SCORER_LINE = re.compile(
    rf"(?m)^[ \t]*(?:{_PNAME}[ \t]+{_GOAL}(?:[ \t]*,[ \t]*{_GOAL})*[ \t]*(?:[,;][ \t]*|$))+$"
)
_SCORER_ITEM = re.compile(rf"(?P<who>{_PNAME})[ \t]+{_GOAL}")
# a team's line-up after its formation, and the lists a match report labels: "WESTMARCH
# (4-4-2): Hwang; Rahman, O'Donoghue (Ndiaye 56); …", "Bench: Chaouki, Byaruhanga."
_LINEUP = re.compile(
    r"(?m)(?:\(\d(?:[-\u2013]\d){2,3}\)[ \t]*:|^[ \t]*(?:Bench|Substitutes|Subs|Unused[ \t]+subs"
    r"|Booked|Cautioned|Sent[ \t]+off|Yellow[ \t]+cards?|Red[ \t]+cards?|Scorers?|Goals"
    r"|Starting[ \t]+(?:XI|eleven)|Line-?up)[ \t]*:)(?P<list>[^\n]*)"
)
_LIST_ITEM = re.compile(rf"(?:^|(?<=[,;(:]))[ \t]*(?P<who>{_PNAME})(?=[ \t]*(?:[,;.()]|\d|$))")
# a leaders' list: "25 - Diop (Torrefría United)", "12 - A. Kowalski (Poland)"
_LEADER = re.compile(rf"(?m)^[ \t]*\d{{1,3}}[ \t]*[-\u2013\u2014][ \t]*(?P<who>{_PNAME})[ \t]*\(")
# a byline: "By Øyvind Sørensen", "By Ana Ruiz, Staff Reporter", "By A. Okafor and B. Diallo"
_BYLINE = re.compile(
    rf"(?m)^[ \t]*(?:By|BY|Words|WORDS|Text|Report|Reporting|Reporting[ \t]+by|Written[ \t]+by)"
    rf"[ \t]*:?[ \t]+(?P<who>{_PNAME})(?:[ \t]+(?:and|&)[ \t]+(?P<also>{_PNAME}))?"
    r"[ \t]*(?:,[^\n]*)?$"
    rf"|^[ \t]*(?P<credit>{_PNAME})[ \t]*[|\u2022\u00b7,][ \t]*(?:[A-Z][a-z]+[ \t]+){{0,3}}"
    r"(?:Reporter|Correspondent|Editor|Writer|Journalist|Columnist|Photographer)[ \t]*$"
)
# a caption: "Pictured: NAME …", "Above, NAME (left) …", or a line that opens with a name and
# ends with its picture's credit "(Photo: …)"
_CAPTION = re.compile(
    rf"(?m)(?:^|[.!?][ \t]+)(?:Pictured|Photo|Above|Below|Left|Right|Inset|Main picture"
    rf"|From[ \t]+left|From[ \t]+right|Left[ \t]+to[ \t]+right|L-R)"
    rf"[ \t]*[:,][ \t]*(?P<who>{_PNAME})(?=[ \t]|,|\(|$)"
    rf"|^[ \t]*(?P<first>{_PNAME})(?=[ \t]+[a-z][^\n]*\((?:Photo|Picture|Image)[ \t]*:)"
)
# a signature: the name on the first line after a letter's sign-off, blank lines between
_SIGNATURE = re.compile(
    r"(?im)^[ \t]*(?:yours[ \t]+(?:sincerely|faithfully|truly)|(?:kind|best|warm|with[ \t]+best)"
    r"[ \t]+(?:regards|wishes)|regards|sincerely|many[ \t]+thanks|with[ \t]+thanks|respectfully"
    r"|all[ \t]+the[ \t]+best|best|cheers|thanks|yours|warmly|cordially)"
    rf"[ \t]*,?[ \t]*\n(?:[ \t]*\n){{0,3}}[ \t]*(?-i:(?P<who>{_PNAME}))[ \t]*$"
)
# a person by what is said of them: "appointed NAME as", "NAME, who chairs", "NAME opened";
# two or three capitalised words (the shape's NAME), judged by ``_ordinary`` as every shape is
BEFORE_PERSON = (
    r"(?:appointed|thanked|congratulated|elected|named|welcomed|interviewed|praised|hired|"
    r"awarded[ \t]+to|presented[ \t]+to|went[ \t]+to|given[ \t]+to|according[ \t]+to|"
    r"told|met|married|joined[ \t]+by|led[ \t]+by|chaired[ \t]+by|signed[ \t]+by|"
    r"written[ \t]+by|report[ \t]+by|lodged[ \t]+by|filed[ \t]+by|submitted[ \t]+by|"
    r"founded[ \t]+by|run[ \t]+by|(?:verified|approved|checked|witnessed|prepared|certified|"
    r"authori[sz]ed|reviewed|issued|countersigned|completed|received)[ \t]+by|"
    r"(?:speak|spoke|talk|talked|wrote|write|writes)[ \t]+to|"
    r"spokesperson[ \t]+for|lawyer[ \t]+for|on[ \t]+behalf[ \t]+of)"
)
AFTER_PERSON = (
    r"(?:,[ \t]+(?:who|whose|aged)\b|,[ \t]*\d{1,3}[ \t]*,|[ \t]+\(\d{1,3}\)"
    r"|[ \t]+(?:said|says|told|opened|joined|won|wins|presented|presents|received|receives|"
    r"took|takes|coached|coaches|laughed|smiled|has[ \t]+run|runs|ran|lodged|"
    r"inspects|inspected|visited|visits|thanked|resigned|retired|died|married|announced|"
    r"explained|added|wrote|was[ \t]+named|was[ \t]+appointed|has[ \t]+been)\b)"
)
# a capitalised word from its start, read once (no backtracking into it: a page of capitals
# with no spaces must not cost the square of its length)
_WORD_CAP = rf"(?<![\w'\u2019\-]){UPPER}(?>(?:{LETTER}|['\u2019\-](?={LETTER}))+)"
_TWO = rf"{_WORD_CAP}(?:[ ]{_WORD_CAP}){{1,2}}"
_CONTEXT = re.compile(
    rf"\b(?i:{BEFORE_PERSON})[ \t]+(?P<who>{_TWO})\b"
    rf"|(?P<first>{_TWO})(?={AFTER_PERSON})"
)
# a name on a line of its own over the years of a life: "IN MEMORIAM / NAME / 1948 - 2025"
_LIFE = re.compile(
    rf"(?m)^[ \t]*(?P<who>{_PNAME})[ \t]*\n[ \t]*\(?(?:b\.[ \t]*)?\d{{4}}[ \t]*[-\u2013\u2014]"
    r"[ \t]*\d{4}\)?[ \t]*$"
)
_RESULT = re.compile(
    rf"(?m)^[ \t]*\d{{1,3}}[.)]?[ \t]+(?P<who>{NAME})[ \t]*\((?P<team>[^()\n]{{2,40}})\)"
    rf"[ \t,]+[\d:.,]+"
)
_CODE = re.compile(r"[A-Z]{3}")
_LINE_RANK = re.compile(rf"^[ \t]*\d{{1,3}}[.)]?[ \t]+(?P<who>{NAME})(?=[ \t]|\(|$)")


# words that number the parts of a document, not people: "(Section 12, Article 4)"
PARTS = frozenset(
    """section article chapter page pages clause paragraph para item rule part schedule annex
    appendix figure fig table note line lines room gate platform level floor step stage round
    week day year group class grade question exercise verse act scene extras extra total
    totals overs over wickets wicket innings runs bowling batting points score half time
    attendance minute minutes""".split()
)


def _ordinary(value: str, *, shape_telling: bool = False) -> bool:
    """Words a table is made of, not a person: function words, roles, parts of a document,
    organisations, places. A scorecard's shape is telling enough that a bowler named "Lyon"
    or a fielder named "Head" stays a name: only function words are refused there."""
    words = [fold(w.strip(".")) for w in value.split()]
    if not words or all(w in STOP or len(w) <= 1 for w in words):
        return True
    if shape_telling:
        return False
    return any(
        w in STOP or w in ROLES or w in PARTS or w in ORG_WORDS for w in words
    ) or mostly_place(value)


# a title or an honorific before a name is never part of it ("Signed by Mr Quentin Alder")
_LEAD_TITLE = re.compile(rf"(?:(?i:{HONORIFIC}|{'|'.join(sorted(TITLES))})\.?[ \t]+)+(?={UPPER})")


def _finding(text: str, start: int, end: int, source: str, score: float) -> Finding | None:
    lead = _LEAD_TITLE.match(text, start, end)
    if lead:
        start = lead.end()
    value = text[start:end]
    if not value or _ordinary(value, shape_telling=source == "scorecard"):
        return None
    return Finding(KIND, start, end, value, source, score)


def structured_names(text: str, found: Sequence[Finding] = ()) -> list[Finding]:
    """Names the shapes of lists and tables give; ``found``: names other evidence found (for
    a column of names)."""
    out: list[Finding | None] = []
    for m in _DISMISSAL.finditer(text):
        for group, value in m.groupdict().items():
            if value:
                out.append(_finding(text, m.start(group), m.end(group), "scorecard", STRONG))
    for m in _SCORE_BRACKET.finditer(text):
        base = m.start("inside")
        for s in _SCORER.finditer(m.group("inside")):
            out.append(
                _finding(text, base + s.start("who"), base + s.end("who"), "scorers", STRONG)
            )
    for m in _SCORER_LINE.finditer(text):
        items = list(_SCORER_ITEM.finditer(m.group()))
        # one scorer alone on a line only under a score or another line of scorers ("Processed
        # 202" in a footer is none)
        before = text[: m.start()].rstrip().rsplit("\n", 1)[-1]
        if len(items) < 2 and not re.search(r"\d(?:\+\d{1,2})?'?(?:[ \t]*(?:pen|og))?\.?$", before):
            continue
        for s in items:
            a, b = m.start() + s.start("who"), m.start() + s.end("who")
            out.append(_finding(text, a, b, "scorers", STRONG))
    for m in _LINEUP.finditer(text):
        for s in _LIST_ITEM.finditer(m.group("list")):
            a, b = m.start("list") + s.start("who"), m.start("list") + s.end("who")
            out.append(_finding(text, a, b, "line-up", STRONG))
    for regex, source in (
        (_BYLINE, "byline"),
        (_CAPTION, "caption"),
        (_SIGNATURE, "signature"),
        (_CONTEXT, "verb-context"),
        (_LIFE, "life"),
    ):
        for m in regex.finditer(text):
            for group, value in m.groupdict().items():
                if value:
                    out.append(_finding(text, m.start(group), m.end(group), source, STRONG))
    for m in _LEADER.finditer(text):
        out.append(_finding(text, m.start("who"), m.end("who"), "results", STRONG))
    for m in _RESULT.finditer(text):
        team = m.group("team").strip()
        telling = bool(_CODE.fullmatch(team)) or mostly_place(team)
        score = STRONG if telling and " " in m.group("who") else WEAK
        out.append(_finding(text, m.start("who"), m.end("who"), "results", score))
    out += _columns(text, found)
    out += table_columns(text, found)
    out += candidate_headers(text)
    return [f for f in out if f is not None]


def candidate_headers(text: str) -> list[Finding | None]:
    """Results by candidate: a header line without figures over lines of figures, whose cells
    after the first are names ("Precinct<tab>Kowalczyk<tab>Brandt", then votes). A cell that
    is a table's label or a dictionary's word ("Total", "Turnout") is none; the rest are
    doubtful names, burned and marked."""
    out: list[Finding | None] = []
    plain = english()
    for run in table_runs(text):
        head_at, head = run[0]
        line = text[head_at : head[-1][1]]
        if any(c.isdigit() for c in line) or len(head) < 3:
            continue
        rows = [cells for _at, cells in run[1:]]
        if not all(any(ch.isdigit() for ch in text[a:b]) for cells in rows for a, b in cells[1:]):
            continue
        for a, b in head[1:]:
            cell = text[a:b]
            words = cell.split()
            if not 1 <= len(words) <= 3 or _label(cell) or _header(cell):
                continue
            if not all(w[:1].isupper() for w in words) or all(fold(w) in plain for w in words):
                continue
            out.append(_finding(text, a, b, "candidates", WEAK))
    return out


# a column headed by one of these holds people ("MEMBER", "Donor", "Full name")
PERSON_HEADERS = frozenset(
    """name names member members donor donors contributor contributors payee payees recipient
    recipients employee employees staff candidate candidates player players athlete athletes
    driver drivers rider riders speaker speakers attendee attendees voter voters councillor
    councillors director directors trustee trustees witness witnesses defendant defendants
    applicant applicants patient patients student students pupil pupils author authors client
    clients tenant tenants surname surnames forename forenames person people individual
    individuals contact representative delegate delegates nominee nominees winner winners
    signatory signatories volunteer volunteers""".split()
) | frozenset(
    [
        "full name",
        "last name",
        "first name",
        "given name",
        "family name",
        "donor name",
        "member name",
        "employee name",
        "name of donor",
        "name of member",
        "contributor name",
    ]
)
# a cell that may be a person: letters, with the commas, stops, hyphens and apostrophes of
# "OKAFOR, Adaeze", "A. N. Other", "O'Neill-Brown"; one to six words
_CELL_NAME = re.compile(rf"^{LETTER}[{LETTER_SET}.,'\u2019\- ]*$")


def _cells(line: str) -> list[tuple[int, int]]:
    """Each tab-separated cell of a line as its stripped span in the line."""
    spans: list[tuple[int, int]] = []
    at = 0
    for cell in line.split("\t"):
        a = at + len(cell) - len(cell.lstrip())
        b = at + len(cell.rstrip())
        spans.append((a, b))
        at += len(cell) + 1
    return spans


def _person_cell(value: str) -> bool:
    words = value.replace(",", " ").split()
    if not 1 <= len(words) <= 6 or not _CELL_NAME.match(value):
        return False
    if sum(c.isalpha() for c in value) < 2:
        return False
    return not _ordinary(value)


def table_runs(text: str) -> list[list[tuple[int, list[tuple[int, int]]]]]:
    """Runs of three or more consecutive lines of one number of tab-separated cells (two or
    more): each line as (its offset, its cells' spans in the text)."""
    runs: list[list[tuple[int, list[tuple[int, int]]]]] = []
    run: list[tuple[int, list[tuple[int, int]]]] = []
    at = 0
    for line in [*text.split("\n"), None]:
        cells = _cells(line) if line is not None and "\t" in line else None
        if cells is not None and run and len(cells) == len(run[-1][1]):
            run.append((at, [(at + a, at + b) for a, b in cells]))
        else:
            if len(run) >= 3:
                runs.append(run)
            run = [(at, [(at + a, at + b) for a, b in cells])] if cells is not None else []
        at += (len(line) if line is not None else 0) + 1
    return runs


def people_headers(text: str) -> list[tuple[int, int]]:
    """The header lines of tables with a column of people: no figure in them, and a cell
    that names people ("MEMBER<tab>WARD<tab>VOTE"). Nothing in such a line is a person."""
    out: list[tuple[int, int]] = []
    for run in table_runs(text):
        at, cells = run[0]
        line = text[at : cells[-1][1]]
        if _header_line(line, [text[a:b] for a, b in cells]):
            out.append((at, cells[-1][1]))
    return out


def _header_line(line: str, cells: list[str]) -> bool:
    """A table's header: no figure, every cell a label of three words or fewer, each word
    capitalised ("Full name", "MEMBER"), and one of them names people. "Name<tab>John Smith"
    is a form's label and its value, not a header: its second cell is no label."""
    if any(c.isdigit() for c in line) or not any(_header(c) for c in cells):
        return False
    return all(_header(c) or _label(c) for c in cells)


_LABEL_WORDS = frozenset(
    """ward seat party club team country nation constituency district county region division
    votes vote share amount total date time position pos rank no number id ref reference
    occupation role title age sex gender status result results place points pts score class
    category department office address city town state postcode zip phone email notes note
    remarks comment comments purpose type group lane heat event year years term from to""".split()
)


def _label(value: str) -> bool:
    """A header cell that is not about people: a word a table's header is made of."""
    words = fold(value).strip(" :.#*").split()
    return 1 <= len(words) <= 3 and all(w.strip("()/") in _LABEL_WORDS for w in words)


def _header(value: str) -> bool:
    return " ".join(fold(value).strip(" :.#*").split()) in PERSON_HEADERS


def table_columns(text: str, found: Sequence[Finding] = ()) -> list[Finding | None]:
    """The cells of a table's column of people: every cell under a header that names people
    (believed), or, with no such header, the rest of a column where two cells or more hold a
    name found otherwise (doubtful)."""
    believed = [(f.start, f.end) for f in found if f.kind == KIND and not f.doubt]
    out: list[Finding | None] = []
    for run in table_runs(text):
        head_at, head = run[0]
        headed = _header_line(text[head_at : head[-1][1]], [text[a:b] for a, b in head])
        for c in range(len(head)):
            rows = run[1:] if headed else run
            column = [cells[c] for _at, cells in rows]
            if headed and _header(text[head[c][0] : head[c][1]]):
                score = STRONG
            else:
                held = sum(any(a < e and s < b for a, b in believed) for s, e in column)
                if held < 2:
                    continue
                score = WEAK
            for s, e in column:
                if e > s and _person_cell(text[s:e]):
                    out.append(Finding(KIND, s, e, text[s:e], "table-column", score))
    return out


def _columns(text: str, found: Sequence[Finding]) -> list[Finding | None]:
    """Runs of three or more ranked lines: the name's place of each, once two of the run hold
    a name found otherwise."""
    believed = [(f.start, f.end) for f in found if f.kind == KIND and not f.doubt]
    lines: list[tuple[int, int, int] | None] = []  # (line start, who start, who end)
    at = 0
    for line in text.split("\n"):
        m = _LINE_RANK.match(line)
        lines.append((at, at + m.start("who"), at + m.end("who")) if m else None)
        at += len(line) + 1
    out: list[Finding | None] = []
    run: list[tuple[int, int, int]] = []
    for item in [*lines, None]:
        if item is not None:
            run.append(item)
            continue
        if len(run) >= 3:
            held = [any(a < e and s < b for a, b in believed) for _line, s, e in run]
            if sum(held) >= 2:
                for (_line, s, e), known in zip(run, held, strict=True):
                    if not known:
                        out.append(_finding(text, s, e, "column", WEAK))
        run = []
    return out
