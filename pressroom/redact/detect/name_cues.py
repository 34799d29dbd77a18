"""The patterns that find a person's name by its context: letter classes of the scripts names are
written in, form labels, honorifics, letter and news conventions, statement payees and speaker
labels. Compiled once here; ``names.NameRecognizer`` runs them and filters what they match."""

from __future__ import annotations

import re
import unicodedata

# Upper- and lower-case letters of the Latin, Greek and Cyrillic blocks: Python's re has no \p{Lu}.
# Latin with Vietnamese and the African letters (ɔ ɛ ŋ, Ɔ Ɛ Ŋ), Latin Extended-C and -D, Greek
# (with its extended block) and Cyrillic; the title-case digraphs (ǅ, ǈ) count as capitals.
_SCRIPTS = (
    *range(0x41, 0x530),
    *range(0x1E00, 0x2000),
    *range(0x2C60, 0x2C80),
    *range(0xA720, 0xA800),
)
UPPER_LETTERS = "".join(
    sorted({c for c in map(chr, _SCRIPTS) if (c.isupper() or c.istitle()) and c.isalpha()})
)
# combining marks: an accent written after its letter (text in NFD, "E" + U+0301 for "É") and
# the tone marks Unicode has no composed letter for (Yoruba "ọ̀" is "ọ" + U+0300 even in NFC).
# A mark is part of the word it sits on: never a capital, so it is kept with the lower-case
# letters, which every module uses only joined to the capitals, as "a letter of a word"
MARKS = "".join(
    chr(c)
    for c in (*range(0x300, 0x370), *range(0x1AB0, 0x1B00), *range(0x1DC0, 0x1E00))
    if unicodedata.combining(chr(c))
)
LOWER_LETTERS = (
    "".join(sorted({c for c in map(chr, _SCRIPTS) if c.islower() and c.isalpha()})) + MARKS
)


def char_set(chars: str) -> str:
    """The inside of a character class that matches exactly ``chars``, written as runs
    ("A-Z", not every letter): the compiled pattern is the same either way, but Python's re
    parses a class item by item, and these classes stand dozens of times in every name pattern
    (listed letter by letter, compiling the patterns of the detector's modules took ~0.45 s of
    every process that redacts; as runs, ~0.25 s)."""
    points = sorted({ord(c) for c in chars})
    runs: list[list[int]] = []
    for p in points:
        if runs and runs[-1][1] == p - 1:
            runs[-1][1] = p
        else:
            runs.append([p, p])
    return "".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if b > a else "") for a, b in runs)


UPPER_SET = char_set(UPPER_LETTERS)
LETTER_SET = char_set(UPPER_LETTERS + LOWER_LETTERS)
# a word in capitals: capitals and the marks on them
CAPS_SET = char_set(UPPER_LETTERS + MARKS)
MARK = f"[{char_set(MARKS)}]"
UPPER = f"(?:[{UPPER_SET}]{MARK}*)"
LETTER = f"[{LETTER_SET}]"
# what may not follow a name's last letter (``\b`` is no help after a mark: a mark is no \w)
_END = f"(?![{LETTER_SET}])"
APOSTROPHES = "'\u2019"
# what joins the letters of one word of a name: an apostrophe, a hyphen, and the Catalan middle
# dot of "l·l" (Marcel·lí, Gal·la)
_JOIN = rf"(?:[{APOSTROPHES}\-]|(?<=[lL])\u00b7(?=[lL]))"
# a name token: a capital, then letters, apostrophes or hyphens (O'Neill, Okafor-Smith, DE LA CRUZ)
_TOKEN = rf"(?:{UPPER}(?:{LETTER}|{_JOIN}(?={LETTER}))+|{UPPER}\.|{UPPER}(?=[ \t]+{UPPER}))"
# lower-case particles inside a name: "Ludwig van Beethoven", "Maria de la Cruz", "Ali bin Said"
PARTICLE = r"(?:van|von|der|den|de|del|della|di|da|dos|du|la|le|bin|binti|ibn|al|el|ter|ten)"
_NAME = rf"{_TOKEN}(?:[ \t]+(?:{PARTICLE}[ \t]+)*{_TOKEN}){{0,3}}"
LABELS = (
    r"name",
    r"full\s+name",
    r"print(?:ed)?\s+name",
    r"participant(?:'s)?\s+name",
    r"participant",
    r"payee",
    r"payer",
    r"account\s+holder",
    r"account\s+name",
    r"signed",
    r"signature\s+of",
    r"guardian",
    r"parent",
    r"employee",
    r"client",
    r"customer",
    r"beneficiary",
    r"applicant",
    r"patient",
    r"contact",
    r"recipient",
    r"claimant",
    r"tenant",
    r"witness",
    r"borrower",
    r"policyholder",
    r"member",
)
# the name follows its label on the same line, or in the cell or line right after it
# ("Payee:" then a sentence on the next line is not a name: the value must look like one)
LABEL_RE = re.compile(
    rf"(?i:\b(?:{'|'.join(LABELS)}))[ \t]*[:\-|][ \t]*(?P<name>{_NAME})"
    # possessive runs: a page of tabs after a label must not take cubic time
    rf"|(?i:\b(?:{'|'.join(LABELS)}))[ ]*+(?:[:\-][ ]*+)?[\t\n][ \t]*+(?P<cell>{_NAME})"
    r"(?=[ \t]*(?:\n|\t|$))"
    rf"|(?m:^)[ \t]*(?i:(?:{'|'.join(LABELS)}))[ \t]+(?P<row>{_NAME})(?=[ \t]*(?:\n|\t|$))"
)
I_RE = re.compile(rf"\bI,[ \t]+(?P<name>{_NAME}),")
# "my name is X", "I am X" / "I'm X" (a capitalised name only), "this is X speaking", "call me X"
# after "my name is" a name may be written in lower case ("my name is vitoria")
SELF_LOWER_RE = re.compile(
    r"(?i:\bmy\s+name\s+is|\bmy\s+name's|\bcall\s+me|\bi\s+am\s+called)"
    r"[ \t]+(?P<name>[^\W\d_]{2,}(?:[ \t]+[^\W\d_]{2,})?)"
)
SELF_RE = re.compile(
    r"(?i:\bmy\s+name\s+is|\bmy\s+name's|\bname\s+is|\bcall\s+me|\bthis\s+is)"
    rf"[ \t]+(?P<name>{_NAME})"
    rf"|\b(?:I\s+am|I'm|I\u2019m)[ \t]+(?P<am>{_NAME})"
)
# letter and form conventions that introduce a person: "Dear X,", "signed by X", "Regards, X"
CUE_RE = re.compile(
    r"(?i:\bdear|\b(?:counter)?signed\s+by|\bwitnessed\s+by|\bon\s+behalf\s+of"
    r"|\battn\.?|\battention|\bc/o|\bcare\s+of|\bwritten\s+by|\breported\s+by"
    r"|\bspeaking\s+to|\bspoke\s+to|\binterviewed|\bmarried|\bdaughter\s+of|\bson\s+of"
    r"|\bwife\s+of|\bhusband\s+of|\bwidow\s+of|\bpaid\s+to|\bpayable\s+to|\btransfer\s+to"
    r"|\btransfer\s+from|\bcalled|\bnamed|\bchange\s+it\s+to|\bknown\s+as|\balias"
    r"|\b(?:my|his|her|their|our|your)\s+(?:grand)?(?:mother|father|mom|mum|dad|son|daughter|"
    r"wife|husband|kid|child|brother|sister|friend|boss|colleague|partner|uncle|aunt|cousin|"
    r"nephew|niece|neighbou?r|manager|lawyer|doctor)(?:\s+(?:is|was))?,?)"
    rf"[ \t]*:?[ \t]+(?P<name>{_NAME})"
)
# news prose: "Priyanka Raghunathan, who …", "… said Priyanka Raghunathan", "according to …"
_FULL = rf"{UPPER}{LETTER}+(?:{_JOIN}{LETTER}+)?"
NEWS_RE = re.compile(
    rf"(?P<name>{_FULL}[ \t]+(?:{UPPER}\.?[ \t]+)?{_FULL}),[ \t]+(?:who|whose|aged|a|an|the)\b"
    rf"|(?P<before>{_FULL}[ \t]+{_FULL})[ \t]+(?:said|says|told|added|explained|recalled|wrote|"
    r"argued|admitted|insisted|warned|noted)\b"
    rf"|\b(?:said|says|according\s+to|added|wrote)[ \t]+(?P<after>{_FULL}[ \t]+{_FULL}){_END}"
)
# a name asked for and given: "What's your last name? Arcuri", "maiden name is nyberg"
ASKED_RE = re.compile(
    r"(?i:\b(?:first|last|middle|family|given|full|maiden|sur|fore|christian)\s*names?)"
    r"(?:\s+(?:is|was))?[ \t]*[?:]?[ \t]+(?P<name>[^\W\d_]{2,}(?:[ \t]+[^\W\d_]{2,})?)"
)
# a signed letter leaves a blank line or two for the signature between the closing and the name
SIGN_OFF_RE = re.compile(
    r"(?i:\b(?:yours\s+(?:sincerely|faithfully|truly)|(?:kind|best|warm)\s+regards|regards"
    rf"|best\s+wishes|sincerely))[ \t]*+,?+[ \t]*+(?:\r?\n[ \t]*+){{0,3}}+(?P<name>{_NAME})"
    r"|(?i:\b(?:cheers|thanks|many\s+thanks|love|warmly|respectfully))[ \t]*+,?+[ \t]*+\n[ \t]*+"
    rf"(?P<alone>{_NAME})[ \t]*(?:\n|$)"
)
HONORIFIC = r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame|Rev|Lady|Lord|Madam|Mme|Mlle|Herr|Frau|Sr|Sra)"
# "Dr" after a street word or a house number is Drive: "12 Elm Dr Springfield"
HONORIFIC_RE = re.compile(rf"(?<![0-9][ \t])(?<!\d)\b(?i:{HONORIFIC})\.?[ \t]+(?P<name>{_NAME})")
STREET_BEFORE = re.compile(r"\d+[A-Za-z]?[ \t]+(?:[A-Z][\w'\-]*[ \t]+){1,3}$")
# bank statements: the payee after the transaction type ("BILL PAYMENT BRATHEN", "SEPA CT
# <IBAN> SJOBERG", "PAYMENT TO T YAMAMOTO")
_CAPS_TOKEN = rf"(?:{UPPER}[{CAPS_SET}'\u2019\-]+|{UPPER}\.?)"
STATEMENT_RE = re.compile(
    r"(?:\bBILL\s+PAYMENT(?:\s+TO)?|\bPAYMENT\s+(?:TO|FROM)|\bTRANSFER\s+(?:TO|FROM)|\bTFR(?:\s+TO)?"
    r"|\bSTANDING\s+ORDER(?:\s+TO)?|\bCHEQUE(?:\s+TO)?"
    r"|\bDEPOSIT(?:\s+FROM)?|\bSEPA\s+CT|\bSTO|\bSO|\bFPO|\bFPI|\bBP|\bDD|\bCHQ|\bBGC|\bCR|\bDR)"
    r"(?:\s+(?:TO|FROM))?(?:\s+[A-Z]{2}\d{2}[A-Z0-9 ]{8,40}?)?[ \t]+"
    rf"(?P<name>{_CAPS_TOKEN}(?:[ \t]+{_CAPS_TOKEN}){{0,3}})"
)
# "T YAMAMOTO", "SIDDIQUI A", "R IBANEZ" in capitals: an initial beside a surname
_CAPS_WORD = rf"{UPPER}[{CAPS_SET}'\u2019\-]{{2,}}"
INITIAL_CAPS_RE = re.compile(
    rf"(?<![{LETTER_SET}])(?P<name>[B-HJ-Z]\.?[ \t]+{_CAPS_WORD}"
    rf"|{_CAPS_WORD}[ \t]+[B-HJ-Z](?![{LETTER_SET}.]))"
)
# transcripts: a speaker label at the start of a line ("OKAFOR:", "Maria Okafor:")
SPEAKER_RE = re.compile(rf"(?m)^[ \t]*(?P<name>{_NAME})[ \t]*:[ \t]")
# a lookahead, so pairs overlap: in "Contact Mary Johnson" the pair "Mary Johnson" is tried too
PAIR_RE = re.compile(
    rf"(?=\b(?P<pair>(?P<first>{UPPER}{LETTER}+)[ \t]+(?:{UPPER}\.[ \t]+)?"
    rf"(?P<last>{UPPER}(?:{LETTER}|{_JOIN}(?={LETTER}))+)))"
)
