"""The two halves' pools (people, organisations, places, phrasings, split by a stable hash),
one document's cast drawn from them, and the text builder that records every entity's span."""

from __future__ import annotations

import hashlib
import random
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Literal

from corpora.news import names as nm
from corpora.news import vocab as vc

Half = Literal["train", "held-out"]
HALVES: tuple[Half, ...] = ("train", "held-out")
HELD_SHARE = 0.3  # the share of every pool that only the held-out half draws from


def _x(key: str) -> float:
    return int.from_bytes(hashlib.sha256(("news:" + key).encode()).digest()[:4], "big") / 2**32


# small words inside names that are no one's name alone ("van den Berg", "Ó Sé", "ap Gwilym")
PARTICLES = frozenset("de la van den der ap ó ní nic mac lo".split())


def in_half(word: str, half: Half) -> bool:
    """Whether a name, a word part or a place belongs to ``half``: the same word always falls
    in the same half, whatever list it is in (a given name that is also a family name), and a
    name of several words belongs to a half only when each of its words does ("Thu Trang")."""
    words = [w for w in word.casefold().split() if w not in PARTICLES] or [word.casefold()]
    return all((_x(w) < HELD_SHARE) == (half == "held-out") for w in words)


def split(pool: Sequence[str], half: Half) -> tuple[str, ...]:
    return tuple(w for w in pool if in_half(w, half))


def split_whole(pool: Sequence[str], half: Half) -> tuple[str, ...]:
    """A pool of whole names (organisations), each in one half by a hash of all of it."""
    return tuple(w for w in pool if (_x("org:" + w) < HELD_SHARE) == (half == "held-out"))


def variants(key: str, n: int, half: Half) -> tuple[int, ...]:
    """The phrasings (0..n-1) of ``key`` a half may use: the held-out half a third of them (at
    least one), ranked by hash, the train half the rest; one phrasing alone is shared."""
    if n == 1:
        return (0,)
    ranked = sorted(range(n), key=lambda i: _x(f"{key}:{i}"))
    k = max(1, n // 3)
    return tuple(sorted(ranked[:k] if half == "held-out" else ranked[k:]))


# ----------------------------------------------------------------------------------- people


@dataclass(frozen=True)
class Person:
    given: str
    family: str
    sex: str  # "f" or "m"
    family_first: bool = False
    short_given: bool = False

    @property
    def full(self) -> str:
        return f"{self.family} {self.given}" if self.family_first else f"{self.given} {self.family}"

    @property
    def short(self) -> str:
        """The name alone after first mention (Okafor; Zhang; Hương for Nguyễn Thị Hương)."""
        return self.given.split()[-1] if self.short_given else self.family

    @property
    def initial(self) -> str:
        """A. Okafor, J.L. Fernández (given-first names); the full name otherwise."""
        if self.family_first:
            return self.full
        return "".join(w[0] + "." for w in re.split(r"[\s-]", self.given) if w) + " " + self.family

    @property
    def sports(self) -> str:
        """Adaeze OKAFOR; ZHANG Wei: the family name in capitals, as results sheets print it."""
        if self.family_first:
            return f"{self.family.upper()} {self.given}"
        return f"{self.given} {self.family.upper()}"

    @property
    def inverted(self) -> str:
        """Okafor, Adaeze (lists sorted by family name); Zhang Wei as written otherwise."""
        return self.full if self.family_first else f"{self.family}, {self.given}"

    @property
    def title(self) -> str:
        return "Ms" if self.sex == "f" else "Mr"


@dataclass(frozen=True)
class Pools:
    half: Half
    origins: tuple[
        tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], bool, bool],
        ...,
    ]
    org_prefix: tuple[str, ...]
    founders: tuple[str, ...]
    towns: tuple[str, ...]
    brands: tuple[str, ...]
    agencies: tuple[str, ...]
    places: tuple[str, ...]
    countries: tuple[tuple[str, str], ...]  # name, code
    registry: tuple[str, ...]  # real organisations (Open Funder Registry, CC0)


@cache
def pools(half: Half) -> Pools:
    origins = []
    for o in nm.ORIGINS:
        gf, gm = split(o.given_f, half), split(o.given_m, half)
        ff = split(o.family + o.family_f, half)
        fm = split(o.family + o.family_m, half)
        if gf and gm and ff and fm:
            origins.append((o.name, gf, gm, ff, fm, o.family_first, o.short_given))
    countries = tuple(
        (c, code)
        for c, code in zip(vc.COUNTRIES, vc.COUNTRY_CODES, strict=True)
        if in_half(c, half)
    )
    taken = {
        w for o in nm.ORIGINS for w in (*o.given_f, *o.given_m, *o.family, *o.family_f, *o.family_m)
    }
    places = tuple(p for p in vc.places() if in_half(p, half) and p not in taken)
    return Pools(
        half,
        tuple(origins),
        split(vc.ORG_PREFIX, half),
        split(vc.FOUNDERS, half),
        split(vc.TOWN, half),
        split(vc.BRAND, half),
        split(vc.AGENCY, half),
        places,
        countries,
        split_whole(vc.registry_orgs(), half),
    )


# ---------------------------------------------------------------------------------- builder


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    label: str  # "PERSON" | "ORG" | "LOC" | "PRODUCT" | "MISC"


Piece = str | tuple[str, str]  # plain text, or (text, label)
_SLOT = re.compile(r"\{(\w+)\}")


class Text:
    """A document's text as it is written, with the span of every entity put in."""

    def __init__(self, nfd: bool = False) -> None:
        self.parts: list[str] = []
        self.n = 0
        self.spans: list[Span] = []
        self.nfd = nfd  # letters written decomposed: a base letter and combining marks

    def add(self, *pieces: Piece) -> Text:
        for p in pieces:
            if isinstance(p, tuple):
                text, label = p
                if self.nfd:
                    text = unicodedata.normalize("NFD", text)
                self.spans.append(Span(self.n, self.n + len(text), label))
            else:
                text = unicodedata.normalize("NFD", p) if self.nfd else p
                # "Corp." at the end of a sentence takes no second full stop
                if text.startswith(".") and self.parts and self.parts[-1].endswith("."):
                    text = text[1:]
            self.parts.append(text)
            self.n += len(text)
        return self

    def line(self, *pieces: Piece) -> Text:
        """Pieces and a line end."""
        return self.add(*pieces, "\n")

    def row(self, *cells: Piece | Sequence[Piece]) -> Text:
        """Table cells separated by tabs, then a line end; a cell may be several pieces."""
        for i, cell in enumerate(cells):
            if i:
                self.add("\t")
            if isinstance(cell, (str, tuple)):
                self.add(cell)
            else:
                self.add(*cell)
        return self.add("\n")

    def fill(self, template: str, **values: Piece) -> Text:
        """A template with ``{slot}``s: each slot's value is plain text or (text, label)."""
        at = 0
        for m in _SLOT.finditer(template):
            self.add(template[at : m.start()], values[m.group(1)])
            at = m.end()
        return self.add(template[at:])

    @property
    def text(self) -> str:
        return "".join(self.parts)


# ------------------------------------------------------------------------------------- cast


class Cast:
    """One document's draws: every person, organisation and place it names is new to it (a
    person drawn twice is the same person)."""

    def __init__(self, rng: random.Random, half: Half) -> None:
        self.rng = rng
        self.half = half
        self.p = pools(half)
        self.used: set[str] = set()

    def pick(self, seq: Sequence[str]) -> str:
        return str(self.rng.choice(seq))

    def variant(self, key: str, n: int) -> int:
        return self.rng.choice(variants(key, n, self.half))

    def phrase(self, key: str, options: Sequence[str]) -> str:
        return options[self.variant(key, len(options))]

    def _fresh(self, make: Callable[[], str], tries: int = 50) -> str:
        for _ in range(tries):
            s = make()
            if s not in self.used:
                self.used.add(s)
                return s
        return s

    def person(self, sex: str | None = None, origin: str | None = None) -> Person:
        for _ in range(100):
            o = self.rng.choice(self.p.origins)
            if origin is not None:
                o = next((x for x in self.p.origins if x[0] == origin), o)
            _name, gf, gm, ff, fm, family_first, short_given = o
            s = sex or self.rng.choice("fm")
            given = self.rng.choice(gf if s == "f" else gm)
            family = self.rng.choice(ff if s == "f" else fm)
            p = Person(given, family, s, family_first, short_given)
            # one short name per person in a document: "Okafor" alone is never two people
            if p.short not in self.used and p.full not in self.used:
                self.used.update((p.short, p.full))
                return p
        return p

    def people(self, k: int, sex: str | None = None) -> list[Person]:
        return [self.person(sex) for _ in range(k)]

    def org(self) -> str:
        if self.rng.random() < 0.25:
            return self.registered()
        r = self.rng.random()
        if r < 0.55:
            make = lambda: (  # noqa: E731
                f"{self.pick(self.p.org_prefix)} {self.pick(vc.ORG_TRADE)}"
                + (f" {self.pick(vc.ORG_FORM)}" if self.rng.random() < 0.7 else "")
            )
        elif r < 0.7:
            make = lambda: f"{self.pick(self.p.founders)} {self.pick(vc.FOUNDER_FORM)}"  # noqa: E731
        elif r < 0.78:
            # two founders, no legal form: "Thorne Pennock" is a firm, not a person
            make = lambda: f"{self.pick(self.p.founders)} {self.pick(self.p.founders)}"  # noqa: E731
        elif r < 0.9:
            make = lambda: f"{self.pick(self.p.org_prefix)} {self.pick(vc.BANK_FORM)}"  # noqa: E731
        else:
            make = lambda: f"{self.pick(self.p.towns)} {self.pick(vc.PUBLIC_BODY)}"  # noqa: E731
        return self._fresh(make)

    def registered(self) -> str:
        """A real organisation's name from the registry (many carry a person's name)."""
        return self._fresh(lambda: self.pick(self.p.registry))

    def company(self) -> str:
        return self._fresh(
            lambda: (
                f"{self.pick(self.p.org_prefix)} {self.pick(vc.ORG_TRADE)} {self.pick(vc.ORG_FORM)}"
            )
        )

    def firm(self) -> str:
        """A firm named after people (the whole is the organisation)."""
        if self.rng.random() < 0.6:
            return self._fresh(lambda: f"{self.pick(self.p.founders)} {self.pick(vc.FOUNDER_FORM)}")
        return self._fresh(lambda: f"{self.pick(self.p.founders)} {self.pick(self.p.founders)}")

    def body(self) -> str:
        return self._fresh(lambda: f"{self.pick(self.p.towns)} {self.pick(vc.PUBLIC_BODY)}")

    def agency(self) -> str:
        if self.rng.random() < 0.5:
            return self.pick(self.p.agencies)
        return f"{self.pick(self.p.agencies)} {self.pick(vc.AGENCY_FORM)}"

    def club(self) -> str:
        def make() -> str:
            town = self.pick(self.p.towns)
            r = self.rng.random()
            if r < 0.6:
                return f"{town} {self.pick(vc.CLUB_AFTER)}"
            if r < 0.85:
                return f"{self.pick(vc.CLUB_BEFORE)} {town}"
            return f"{self.pick(vc.CLUB_BEFORE)} {town} {self.pick(vc.CLUB_END)}"

        return self._fresh(make)

    def party(self) -> str:
        return self._fresh(
            lambda: (
                f"{self.pick(self.p.org_prefix)} {self.pick(vc.PARTY)}"
                if self.rng.random() < 0.6
                else f"{self.pick(vc.PARTY_BEFORE)} {self.pick(self.p.org_prefix)}"
            )
        )

    def brand(self) -> str:
        return self._fresh(lambda: self.pick(self.p.brands))

    def product(self, brand: str | None = None) -> str:
        def make() -> str:
            b = brand or self.pick(self.p.brands)
            if self.rng.random() < 0.3:
                return f"{self.pick(vc.THING)} {self.pick(vc.MODEL)}"  # Stabilizer Pro X2
            return f"{b} {self.pick(vc.THING)} {self.pick(vc.MODEL)}"

        return self._fresh(make)

    def competition(self) -> str:
        return self._fresh(
            lambda: (
                f"{self.pick(self.p.org_prefix)} {self.pick(vc.COMPETITION)}"
                if self.rng.random() < 0.6
                else f"{self.pick(self.p.towns)} {self.pick(vc.COMPETITION)}"
            )
        )

    def place(self) -> str:
        return self._fresh(lambda: self.pick(self.p.places))

    def country(self) -> tuple[str, str]:
        for _ in range(50):
            c = self.rng.choice(self.p.countries)
            if c[0] not in self.used:
                self.used.add(c[0])
                return c
        return c

    def date(self, year: int = 2026) -> str:
        r = self.rng.random()
        d, m = self.rng.randint(1, 28), self.pick(vc.MONTHS)
        if r < 0.5:
            return f"{d} {m} {year}"
        if r < 0.8:
            return f"{m} {d}, {year}"
        return f"{d:02d}/{vc.MONTHS.index(m) + 1:02d}/{year}"

    def money(self, lo: int = 1, hi: int = 900, plain: bool = False) -> str:
        """An amount: "$645.1m", "NOK 41 million", "€12,345"; ``plain``: no millions."""
        sign = self.pick(("£", "$", "€", "NOK ", "USD "))
        unit = "" if plain else self.pick(("m", "bn", " million", ""))
        if unit:
            return f"{sign}{self.rng.randint(lo, hi)}{'.' + str(self.rng.randint(1, 9)) if self.rng.random() < 0.5 else ''}{unit}"  # noqa: E501
        return f"{sign}{self.rng.randint(lo * 100, hi * 1000):,}"
