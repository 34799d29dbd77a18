"""Names: form labels, "I, <name>,", honorifics, and first+last pairs from the 1990 US Census
lists (the `names` package, public-domain data). Plain recognisers: see the README for why."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from pressroom.redact.detect import Finding

KIND = "name"
_TOKEN = r"(?:[A-Z][a-zA-Z'\u2019\-]+|[A-Z]\.)"
_NAME = rf"{_TOKEN}(?:[ \t]+{_TOKEN}){{0,3}}"
LABELS = (
    r"name",
    r"full\s+name",
    r"print(?:ed)?\s+name",
    r"participant(?:'s)?\s+name",
    r"participant",
    r"payee",
    r"account\s+holder",
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
)
# the name must follow its label on the same line ("Payee:" then a new line is not a name)
LABEL_RE = re.compile(rf"(?i:\b(?:{'|'.join(LABELS)}))[ \t]*[:\-][ \t]*(?P<name>{_NAME})")
I_RE = re.compile(rf"\bI,[ \t]+(?P<name>{_NAME}),")
# letter and form conventions that introduce a person: "Dear X,", "signed by X", "Regards, X"
CUE_RE = re.compile(
    r"(?:\bDear|(?i:\b(?:counter)?signed\s+by|\bwitnessed\s+by|\bon\s+behalf\s+of"
    r"|\battn\.?|\battention|\bc/o|\bcare\s+of))"
    rf"[ \t]*:?[ \t]+(?P<name>{_NAME})"
)
SIGN_OFF_RE = re.compile(
    r"(?i:\b(?:yours\s+(?:sincerely|faithfully|truly)|(?:kind|best|warm)\s+regards|regards"
    r"|best\s+wishes|sincerely))[ \t]*,?[ \t]*\n?[ \t]*"
    rf"(?P<name>{_NAME})"
)
HONORIFIC_RE = re.compile(
    rf"\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame|Rev)\.?[ \t]+(?P<name>{_NAME})"
)
# a lookahead, so pairs overlap: in "Contact Mary Johnson" the pair "Mary Johnson" is tried too
PAIR_RE = re.compile(
    r"(?=\b(?P<pair>(?P<first>[A-Z][a-z]+)[ \t]+(?:[A-Z]\.[ \t]+)?(?P<last>[A-Z][a-z'\-]+)))"
)
# Words the census lists share with ordinary English that start sentences and headings.
COMMON = frozenset(
    [
        "will",
        "may",
        "june",
        "april",
        "august",
        "bill",
        "bank",
        "park",
        "young",
        "white",
        "green",
        "brown",
        "black",
        "page",
        "hall",
        "wood",
        "field",
        "lane",
        "street",
        "road",
        "mark",
        "rose",
        "grace",
        "hope",
        "joy",
        "faith",
        "art",
        "case",
        "long",
        "short",
        "little",
        "price",
    ]
)


@cache
def _census() -> tuple[frozenset[str], frozenset[str]]:
    package = resources.files("names")

    def read(name: str, limit: int) -> frozenset[str]:
        lines = package.joinpath(name).read_text().splitlines()
        return frozenset(line.split()[0].lower() for line in lines[:limit] if line.strip())

    first = read("dist.male.first", 1219) | read("dist.female.first", 4275)
    return first, read("dist.all.last", 88799)


def _trim(name: str) -> str:
    """Stop at words that end a name in running text ("Jane Doe Date of birth")."""
    stop = {"Date", "Signature", "Address", "Phone", "Email", "Account", "The", "And", "Of"}
    kept = []
    for token in name.split():
        if token in stop:
            break
        kept.append(token)
    return " ".join(kept)


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
            (HONORIFIC_RE, "honorific"),
            (CUE_RE, "cue"),
            (SIGN_OFF_RE, "sign-off"),
        ):
            for m in regex.finditer(text):
                name = _trim(m.group("name"))
                if name:
                    start = m.start("name")
                    found.append(Finding(KIND, start, start + len(name), name, source))
        if self.use_gazetteer:
            first_names, last_names = _census()
            for m in PAIR_RE.finditer(text):
                first, last = m.group("first").lower(), m.group("last").lower()
                if first in COMMON or last in COMMON:
                    continue
                if first in first_names and last in last_names:
                    start = m.start("pair")
                    found.append(Finding(KIND, start, m.end("pair"), m.group("pair"), "census"))
        return found
