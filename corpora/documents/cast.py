"""The people, places and account numbers of one document, and the sentence templates that
turn them into tagged runs: valid IBANs, card and account numbers, dates and amounts."""

from __future__ import annotations

import random
import re

from stdnum import iban, luhn

from corpora.documents.layout import Builder, Run, Seg
from corpora.documents.vocab import MONTHS, Person, Vocab


def make_iban(rng: random.Random, country: str, spaced: bool = True) -> str:
    """A valid IBAN (country length, mod 97 and the national check where stdnum has one)."""
    layouts = {
        "GB": "AAAA" + "9" * 14,
        "DE": "9" * 18,
        "NL": "AAAA" + "9" * 10,
        "IE": "AAAA" + "9" * 14,
        "FR": "9" * 10 + "9" * 11 + "99",
        "PL": "9" * 24,
        "NO": "9" * 11,
        "ES": "9" * 20,
        "BE": "9" * 12,
    }
    for _ in range(2000):
        bban = "".join(
            rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c == "A" else "0123456789")
            for c in layouts[country]
        )
        raw = f"{country}{iban.calc_check_digits(country + '00' + bban)}{bban}"
        if iban.is_valid(raw):
            return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4)) if spaced else raw
    raise ValueError(f"no valid {country} IBAN found")


def make_card(rng: random.Random) -> str:
    body = rng.choice(("4", "51", "37")) + "".join(rng.choice("0123456789") for _ in range(13))
    body = body[:15]
    number = body + luhn.calc_check_digit(body)
    return " ".join(number[i : i + 4] for i in range(0, 16, 4))


def make_account(rng: random.Random) -> str:
    return "".join(rng.choice("0123456789") for _ in range(8))


def make_sort_code(rng: random.Random) -> str:
    return "-".join(f"{rng.randint(10, 99)}" for _ in range(3))


def make_date(rng: random.Random, year: int = 2026) -> str:
    return f"{rng.randint(2, 28)} {rng.choice(MONTHS)} {year}"


def make_money(rng: random.Random, lo: int = 20, hi: int = 4000, sign: str = "£") -> str:
    return f"{sign}{rng.randint(lo, hi):,}.{rng.randint(0, 99):02d}"


# ---------------------------------------------------------------------------------------------
# Templates: "{P1}" a full name, "{p1}" the name alone, "{p1s}" possessive, "{tp1}" with a
# title, "{P1C}"/"{p1c}" capitals, "{g1}" the given name; pronouns "{he1}"/"{He1}"/"{him1}"/
# "{his1}"; keep slots "{org1}", "{place1}", "{street1}", "{date1}", "{amount1}", "{month}",
# "{year1}"; account slots "{IBAN1}", "{ACC1}", "{SORT1}".

_SLOT = re.compile(r"\{(\w+)\}")


class Cast:
    """The people, places and values of one document, turned into runs on demand."""

    def __init__(
        self, b: Builder, v: Vocab, people: int = 5, sexes: dict[int, str] | None = None
    ) -> None:
        self.b, self.v, self.rng = b, v, b.rng
        self.people = b.rng.sample(v.people, people)
        for n, sex in (sexes or {}).items():  # a template says "my aunt" or "a man called"
            if self.people[n - 1].sex != sex:
                spare = [p for p in v.people if p.sex == sex and p not in self.people]
                self.people[n - 1] = b.rng.choice(spare)
        self.orgs = b.rng.sample(v.orgs, 3)
        self.places = b.rng.sample(v.places, 3)
        self.apostrophe = b.rng.choice(("'", "\u2019"))
        self.bank = b.rng.choice(v.banks)
        self.fixed: dict[str, str] = {
            "bank": self.bank,
            "ref": f"2026-{b.rng.randint(100, 999)}",
            "street1": b.rng.choice(v.streets_keep),
            "month": b.rng.choice(MONTHS),
            "year1": str(b.rng.randint(1961, 1999)),
        }
        for n in (1, 2, 3):
            self.fixed[f"date{n}"] = make_date(b.rng)
            self.fixed[f"amount{n}"] = make_money(b.rng, 40, 90000)
        self.accounts: dict[str, str] = {}
        self.titles: dict[Person, str] = {}

    def person(self, n: int) -> Person:
        return self.people[n - 1]

    def title(self, p: Person) -> str:
        """The person's title, the same every time in one document."""
        if p not in self.titles:
            pool = ("Ms", "Mrs", "Dr") if p.sex == "f" else ("Mr", "Dr")
            self.titles[p] = self.rng.choice(pool)
        return self.titles[p]

    def name(self, n: int, form: str) -> Seg:
        p = self.person(n)
        text = {
            "full": p.full,
            "surname": p.short,
            "given": p.given.split()[0],
            "possessive": p.short + self.rng.choice(("'s", "\u2019s")),
            "title": f"{self.title(p)} {p.short}",
            "capitals": p.short.upper(),
            "full-capitals": p.full.upper(),
            "title-capitals": f"{self.title(p)} {p.short}".upper(),
            "initial": f"{p.given[0]} {p.family}".upper(),
            "initial-last": f"{p.family} {p.given[0]}".upper(),
        }[form]
        return self.b.value("name", text, "capitals" if form.endswith("capitals") else form)

    def slot(self, key: str) -> Run:
        """A template slot as a run: a new mention, a keep string or plain text."""
        m = re.fullmatch(r"(P|p|tp|g|i|r)(\d)(s|C|c)?", key)
        if m:
            kind, n, mod = m.group(1), int(m.group(2)), m.group(3) or ""
            forms = {
                "P": {"": "full", "C": "full-capitals"},
                "tp": {"": "title", "C": "title-capitals"},
                "g": {"": "given"},
                "i": {"c": "initial"},
                "r": {"c": "initial-last"},
                "p": {"": "surname", "s": "possessive", "c": "capitals"},
            }
            form = forms[kind][mod]
            return self.name(n, form)
        m = re.fullmatch(r"(he|He|him|his|His)(\d)", key)
        if m:
            f = self.person(int(m.group(2))).sex == "f"
            word = {
                "he": "she" if f else "he",
                "him": "her" if f else "him",
                "his": "her" if f else "his",
            }
            w = word[m.group(1).lower()]
            return w.capitalize() if m.group(1)[0].isupper() else w
        m = re.fullmatch(r"(org|place)(\d)(C?)", key)
        if m:
            pool = self.orgs if m.group(1) == "org" else self.places
            text = pool[int(m.group(2)) - 1]
            return self.b.keep(text.upper() if m.group(3) else text)
        if key in self.fixed:
            return self.b.keep(self.fixed[key])
        if key == "merchant":
            return self.b.keep(self.rng.choice(self.v.merchants))
        if key == "n4":
            return str(self.rng.randint(1000, 9999))
        if key == "MON":
            return self.fixed["month"][:3].upper()
        if key.startswith("IBANC"):  # the same account, written without spaces
            value = self.accounts.setdefault(key[:4] + key[5:], self.iban())
            return self.b.value("account-number", value.replace(" ", ""), "iban-compact")
        if key.startswith("IBAN"):
            value = self.accounts.setdefault(key, self.iban())
            return self.b.value("account-number", value, "iban")
        if key.startswith("ADDR"):
            town, code = self.rng.choice(self.v.towns)
            street = f"{self.rng.randint(2, 240)} {self.rng.choice(self.v.streets)}"
            tail = f" {code}" if self.rng.random() < 0.5 else ""
            return self.b.value("address", f"{street}, {town}{tail}", "inline")
        if key.startswith("ACC"):
            value = self.accounts.setdefault(key, make_account(self.rng))
            return self.b.value("account-number", value, "account")
        if key.startswith("SORT"):
            value = self.accounts.setdefault(key, make_sort_code(self.rng))
            return self.b.value("account-number", value, "sort-code")
        raise KeyError(key)

    def iban(self) -> str:
        return make_iban(self.rng, self.rng.choice(self.v.iban_countries))

    def text(self, key: str, n: int = 0) -> list[Run]:
        """Entry ``n`` of the split's phrasing ``key``, filled."""
        return self.fill(self.v.text[key][n])

    def fill(self, template: str) -> list[Run]:
        out: list[Run] = []
        at = 0
        for m in _SLOT.finditer(template):
            out.append(template[at : m.start()])
            out.append(self.slot(m.group(1)))
            at = m.end()
        out.append(template[at:])
        return [r for r in out if r != ""]

    def address(self, lines: str = "block", us: bool = False, po: bool | None = None) -> list[str]:
        """The lines of a postal address (no name line): building or PO box, street, town,
        postcode, in a mix a window envelope shows."""
        rng, v = self.rng, self.v
        po = rng.random() < 0.3 if po is None else po
        out: list[str] = []
        if po:
            out.append(rng.choice(v.po_boxes))
        else:
            if rng.random() < 0.5:
                out.append(rng.choice(v.buildings))
            out.append(f"{rng.randint(2, 240)} {rng.choice(v.streets)}")
        if us:
            town, state, code = rng.choice(v.us_towns)
            out.append(f"{town}, {state} {code}")
        else:
            town, code = rng.choice(v.towns)
            out += [town, code] if rng.random() < 0.6 else [f"{town} {code}"]
        return out
