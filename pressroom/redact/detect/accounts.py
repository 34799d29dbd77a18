"""Account numbers: validated by checksum where one exists (IBAN mod 97, card Luhn on issuer
prefixes, US ABA routing), label-anchored where none does (account numbers, UK sort codes).

Values may be written in any case, with or without spaces, and wrapped over two lines (the page
text joins lines with a newline, which the separators accept)."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import cache

from stdnum import luhn, numdb
from stdnum.us import rtn

from pressroom.redact.detect import Finding

KIND = "account-number"
_SEP = r"(?:[ \-\u00a0]|[ \t]*\n[ \t]*)?"
CARD_RE = re.compile(r"(?<![\d-])\d(?:" + _SEP + r"\d){11,18}(?![\d-])")
# What OCR reads for a digit, in the print of a scan: a letter of the same shape ("GBO6": O for
# 0, "4299 7220 O332": the same), and the letter a digit is read for where a letter belongs.
# A value misread so is still readable to a person, and every later reading may misread it the
# same way: it is found by the digits (and letters) its format demands, and its checksum.
_MISREAD = "OoQDIliZzSsGbBgq"
DIGIT_OF = str.maketrans(_MISREAD, "0000111225566899")
LETTER_OF = str.maketrans("012568", "OIZSGB")
_LIKE_DIGIT = "0-9" + _MISREAD
# a run that may hold an IBAN: country, check digits, then up to 30 letters and digits in groups;
# in capitals, one of the check digits may be misread ("GBO6 FDLP …")
IBAN_RUN_RE = re.compile(
    r"(?<![A-Za-z0-9])(?:[A-Za-z]{2}\d{2}|[A-Z]{2}(?:\d[" + _MISREAD + r"]|[" + _MISREAD + r"]\d))"
    r"(?:" + _SEP + r"[A-Za-z0-9]{1,4}){2,9}"
)
# a card-shaped run with one or two digits misread as letters ("4299 7220 O332 2451")
CARD_MISREAD_RE = re.compile(
    r"(?<![A-Za-z0-9-])\d(?:" + _SEP + r"[" + _LIKE_DIGIT + r"]){11,18}(?![A-Za-z0-9-])"
)
MISREAD_MAX = 3  # characters read again per value: more, and it is some other code
ABA_RE = re.compile(
    r"(?<![\d-])\d{3}[ \-]?\d{3}[ \-]?\d{3}(?![\d-])|(?<![\d-])\d{4}-\d{4}-\d(?![\d-])"
)
_LABEL_WORDS = (
    r"(?:account|acct|a/c|acc)\.?\s*(?:no\.?|number|num\.?|nr\.?|#)?"
    r"|(?:bank\s+)?account\s+details"
    r"|iban|bsb|clabe"
)
LABEL_RE = re.compile(
    # a table rule read as "|" stands between a label and its value as often as a colon
    rf"(?i)\b(?:{_LABEL_WORDS})\s*(?:is|was|:|#|-|=|\|)?\s*(?:is\s*)?[:#]?\s*"
    # digits in groups (single spaces or hyphens): "Account number: 1234 5678   Reference …"
    r"(?P<value>(?:(?-i:[A-Z]{1,4})[ \-]?)?\d(?:[ \-]?\d){3,29})"
)
# a UK sort code, an Irish NSC, a branch code: six digits in pairs after their label, beside it,
# in the next cell or on the next line
SORT_RE = re.compile(
    r"(?i)\b(?:sort\s*code|sort|branch(?:\s*(?:code|no\.?|number|sort\s*code))?|nsc|bank\s*code"
    r"|bsb|transit(?:\s*(?:no\.?|number))?)"
    r"\s*(?:is\s*)?[:#\-|]?\s*(?P<value>\d{2}[ \-]?\d{2}[ \-]?\d{2})(?![\d\-])"
)
ROUTING_LABEL_RE = re.compile(r"(?i)\b(?:routing|aba|rtn|transit)\b")
# IBAN lengths per country (ISO 13616 registry); a run is cut to its country's length
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
    "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32,
    "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19,
    "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24,
    "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24, "SC": 31,
    "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28, "TL": 23,
    "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip
# Issuer prefixes and lengths of payment cards (Visa, Mastercard, Amex, Discover, JCB, Diners,
# Maestro, UnionPay, Mir): a Luhn-valid digit run outside these is some other number (a national
# id, an order number) and stays.
CARD_PREFIX_RE = re.compile(
    r"^(?:4(?:\d{12}|\d{15}|\d{18})"  # Visa: 13, 16, 19
    r"|5[1-5]\d{14}|2(?:2[2-9]|[3-6]\d|7[01])\d{13}|2720\d{12}"  # Mastercard
    r"|3[47]\d{13}"  # Amex
    r"|6(?:011|5\d\d|4[4-9]\d)\d{12,15}"  # Discover
    r"|35(?:2[89]|[3-8]\d)\d{12,15}|(?:2131|1800)\d{11}"  # JCB
    r"|3(?:0[0-5]|[89]\d)\d{11}|36\d{12}"  # Diners: 14
    r"|(?:50|5[6-8])(?:\d{10}|\d{14}|\d{16,17})"  # Maestro: 12, 16, 18, 19 without a cue
    r"|(?:6304|6759|676[1-3])(?:\d{8}|\d{12}|\d{14,15})"
    r"|62\d{14,17}"  # UnionPay
    r"|220[0-4]\d{12}"  # Mir
    r"|1\d{14})$"  # UATP
)
# "card" nearby: a Luhn-valid number of card length is a card whatever its prefix
CARD_CUE_RE = re.compile(r"(?i)\b(?:card|visa|mastercard|amex|maestro|debit|credit|cc)\b")


def _alnum(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z]", "", text)


def iban_ok(candidate: str) -> bool:
    """ISO 13616: the country's length and the mod-97 checksum. No bank-registry look-up: a
    real account at a bank the registry does not list is still an account."""
    number = candidate.upper()
    if IBAN_LENGTHS.get(number[:2]) != len(number):
        return False
    moved = number[4:] + number[:4]
    digits = "".join(str(int(c, 36)) for c in moved)
    return int(digits) % 97 == 1


@cache
def _bban_shape(country: str) -> str | None:
    """The registry's format of a country's account part, one letter a character ("4!a6!n8!n":
    "aaaannnnnnnnnnnnnn"; n a digit, a a letter, c either); None where the registry has none."""
    for _part, props in numdb.get("iban").info(country):
        shape = props.get("bban")
        if shape:
            return "".join(kind * int(n) for n, kind in re.findall(r"(\d+)!([nac])", shape))
    return None


def iban_read_again(candidate: str) -> str | None:
    """An IBAN whose digits (or letters) OCR misread, read as its format demands: the check
    digits as digits, and each character of the account part as the registry's format for its
    country has it; the IBAN so read when its checksum holds and at most ``MISREAD_MAX``
    characters changed, else None. ``candidate``: letters and digits only."""
    country = candidate[:2].upper()
    shape = _bban_shape(country)
    fixed = list(country + candidate[2:4].translate(DIGIT_OF))
    for i, c in enumerate(candidate[4:]):
        want = shape[i] if shape is not None and i < len(shape) else "c"
        fixed.append(
            c.translate(DIGIT_OF) if want == "n" else c.translate(LETTER_OF) if want == "a" else c
        )
    number = "".join(fixed).upper()
    changed = sum(a != b for a, b in zip(number, candidate.upper(), strict=True))
    if not 0 < changed <= MISREAD_MAX or not number[2:4].isdigit():
        return None
    if shape is not None and len(shape) == len(number) - 4:
        for c, want in zip(number[4:], shape, strict=True):
            if (want == "n" and not c.isdigit()) or (want == "a" and not c.isalpha()):
                return None
    return number if iban_ok(number) else None


def _iban_candidates(text: str) -> list[tuple[int, int, bool]]:
    """IBAN-shaped runs cut to their country's length ("GB82 WEST 1234 5698 7654 32 REF": the
    run stops before "REF"), and whether the checksum holds, as written or as its format
    reads it again (``iban_read_again``). A run whose check digits are not digits is kept only
    where it is an IBAN so read."""
    spans: list[tuple[int, int, bool]] = []
    for m in IBAN_RUN_RE.finditer(text):
        want = IBAN_LENGTHS.get(m.group()[:2].upper())
        if want is None:
            continue
        count = 0
        end = m.start()
        for i in range(m.start(), m.end()):
            if text[i].isalnum():
                count += 1
                end = i + 1
                if count == want:
                    break
        # glued to more letters or digits: a longer code, not this IBAN
        glued = end < len(text) and text[end].isalnum()
        number = _alnum(text[m.start() : end])
        valid = count == want and not glued and (iban_ok(number) or bool(iban_read_again(number)))
        if valid or text[m.start() + 2 : m.start() + 4].isdigit():
            spans.append((m.start(), end, valid))
    return spans


@dataclass(frozen=True, slots=True)
class AccountNumberRecognizer:
    kind: str = KIND

    def find(self, text: str) -> list[Finding]:
        found: list[Finding] = []
        candidates = _iban_candidates(text)
        for start, end, valid in candidates:
            if valid:
                found.append(Finding(KIND, start, end, text[start:end], "iban"))
        # an IBAN-shaped run, valid or not, is no place for a card number
        # (the runs come in order and apart, so their ends rise too: the last run starting
        # before a number's end is the only one that may reach into it)
        starts = [s for s, _e, _valid in candidates]
        for m in CARD_RE.finditer(text):
            before = bisect.bisect_left(starts, m.end())
            if before and candidates[before - 1][1] > m.start():
                continue
            if _inside_code(text, m.start(), m.end()):
                continue
            number = _alnum(m.group())
            cue = CARD_CUE_RE.search(text[max(0, m.start() - 40) : m.start()])
            if (CARD_PREFIX_RE.match(number) or cue) and luhn.is_valid(number):
                found.append(Finding(KIND, m.start(), m.end(), m.group(), "card-luhn"))
        for m in CARD_MISREAD_RE.finditer(text):
            # digits misread as letters: one to MISREAD_MAX of them, the rest digits
            letters = sum(c.isalpha() for c in m.group())
            if not 0 < letters <= MISREAD_MAX:
                continue
            before = bisect.bisect_left(starts, m.end())
            if before and candidates[before - 1][1] > m.start():
                continue
            number = _alnum(m.group()).translate(DIGIT_OF)
            cue = CARD_CUE_RE.search(text[max(0, m.start() - 40) : m.start()])
            if (CARD_PREFIX_RE.match(number) or cue) and luhn.is_valid(number):
                found.append(Finding(KIND, m.start(), m.end(), m.group(), "card-luhn"))
        for m in ABA_RE.finditer(text):
            # nine digits pass the ABA checksum one time in ten by chance: a routing number
            # needs its label nearby as well
            window = text[max(0, m.start() - 40) : m.start()]
            number = _alnum(m.group())
            if rtn.is_valid(number) and ROUTING_LABEL_RE.search(window):
                found.append(Finding(KIND, m.start(), m.end(), m.group(), "aba-routing"))
        for m in LABEL_RE.finditer(text):
            value = m.group("value").strip(" -")
            if sum(c.isdigit() for c in value) >= 4:
                start = m.start("value")
                found.append(Finding(KIND, start, start + len(value), value, "labelled-account"))
        for m in SORT_RE.finditer(text):
            found.append(
                Finding(KIND, m.start("value"), m.end("value"), m.group("value"), "sort-code")
            )
        return [
            Finding(f.kind, f.start, f.end, text[f.start : f.end], f.recognizer)
            for f in _merge(found)
        ]


def _inside_code(text: str, start: int, end: int) -> bool:
    """A digit run glued to letters ("XX12" + digits of a malformed IBAN, "INV-2024…") is part of
    some other code."""
    before = text[max(0, start - 4) : start]
    return bool(re.search(r"[A-Za-z]{2}\d{0,2}$", before))


def _merge(found: list[Finding]) -> list[Finding]:
    """Overlapping findings become one span (named after the one that starts first)."""
    found.sort(key=lambda f: (f.start, -(f.end - f.start)))
    merged: list[Finding] = []
    for f in found:
        if merged and f.start < merged[-1].end:
            last = merged[-1]
            if f.end > last.end:
                merged[-1] = Finding(last.kind, last.start, f.end, last.value, last.recognizer)
            continue
        merged.append(f)
    return merged
