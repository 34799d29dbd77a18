"""The document kinds (news, feature, interview, statement, letter, form, sideways, faint,
invoice), how each arrives, and the corpus halves and CI documents built from them."""

from __future__ import annotations

import random
import zlib
from collections.abc import Sequence

from corpora.documents.cast import (
    Cast,
    make_account,
    make_card,
    make_date,
    make_iban,
    make_money,
    make_sort_code,
)
from corpora.documents.layout import Builder, Frame, Run, Seg
from corpora.documents.model import DIGITAL, KINDS, SCAN, SPLITS, Document
from corpora.documents.vocab import DEV, VOCABS, Vocab

MARGIN = 60.0
WIDTH = 612 - 2 * MARGIN


def _news(b: Builder, v: Vocab) -> None:
    c = Cast(b, v, sexes={2: "f"} if v is DEV else None)
    pg = b.page()
    masthead = c.orgs[2].upper() if b.rng.random() < 0.5 else "The Coastal Ledger"
    b.line(pg, MARGIN, 70, [b.keep(masthead)], size=9, face="sans-bold")
    b.rule(pg, MARGIN, 78, 612 - MARGIN, 78, 1.2)
    head = [b.keep(b.rng.choice(v.headlines))]
    base = b.para(pg, MARGIN, 108, WIDTH, head, size=22, face="serif-bold", leading=26)
    byline = [*c.text("byline"), " · ", b.keep(make_date(b.rng))]
    base = b.para(pg, MARGIN, base + 2, WIDTH, byline, size=9, face="sans")
    col = (WIDTH - 18) / 2
    paras = [c.fill(t) for t in v.text["news"]]
    paras[0] = [b.keep(c.places[0].upper()), " — ", *paras[0]]
    # two balanced columns
    lines = sum(len(b.wrap(p, col, 9.5, "serif")) for p in paras)
    bottom = base + 6 + (lines + 1) // 2 * 12.4 + 2 * len(paras) + 12.4
    frames = [
        Frame(pg, MARGIN, base + 6, col, bottom),
        Frame(pg, MARGIN + col + 18, base + 6, col, 740),
    ]
    b.flow(frames, paras, size=9.5, leading=12.4)


def _feature(b: Builder, v: Vocab) -> None:
    c = Cast(b, v, people=6)
    p1, p2 = b.page(), b.page()
    title = b.rng.choice(v.headlines) if b.rng.random() < 0.3 else v.text["feature-title"][0]
    b.para(p1, MARGIN, 110, WIDTH, [b.keep(title)], size=24, face="serif-bold", leading=28)
    texts = v.text["feature"]
    base = b.para(p1, MARGIN, 160, WIDTH, c.fill(texts[0]), size=12.5, face="sans", leading=16)
    base = b.para(p1, MARGIN, base + 4, WIDTH, c.text("credits"), size=8.5, face="sans")
    # a photograph (a flat grey block here) with its caption
    top = base + 8
    b.rule(p1, MARGIN, top + 95, 612 - MARGIN, top + 95, 190, 215)
    base = b.para(p1, MARGIN, top + 204, WIDTH, c.text("caption"), size=8, face="sans", grey=60)
    frames = [Frame(p1, MARGIN, base + 8, WIDTH, 740), Frame(p2, MARGIN, 70, WIDTH, 740)]
    b.flow(frames, [c.fill(t) for t in texts[1:]], size=10.5, leading=14.5, indent=12)


def _interview(b: Builder, v: Vocab) -> None:
    c = Cast(b, v, sexes={3: "f", 4: "m"} if v is DEV else None)
    pg = b.page()
    b.line(pg, MARGIN, 72, [b.keep("TRANSCRIPT")], size=13, face="sans-bold")
    y = 92.0
    for n in range(len(v.text["interview-head"])):
        b.line(pg, MARGIN, y, c.text("interview-head", n), size=10)
        y += 16
    b.rule(pg, MARGIN, y - 6, 612 - MARGIN, y - 6)
    face = b.rng.choice(("mono", "sans"))
    base = y + 20
    for n, t in enumerate(v.text["interview"]):
        # the speaker label: "{p1c}:" gives OKAFOR:, "{tp1C}:" gives DR TANAKA:
        label = "{" + v.text["speaker"][0].format(n=1 + n % 2) + "}:"
        b.line(pg, MARGIN, base, c.fill(label), size=9.5, face=face)
        base = b.para(
            pg, MARGIN + 100, base, WIDTH - 100, c.fill(t), size=9.5, face=face, leading=13
        )
        base += 7
    b.line(pg, MARGIN, base + 12, [b.keep("END OF RECORDING")], size=9, face=face)


def _statement(b: Builder, v: Vocab) -> None:
    c = Cast(b, v)
    rng = b.rng
    pg = b.page()
    heads = v.text["statement-head"]
    b.line(pg, MARGIN, 64, [b.keep(c.bank)], size=15, face="sans-bold")
    b.line(pg, 612 - MARGIN, 64, [b.keep(heads[0])], size=10, align="right")
    caps = rng.random() < 0.6
    title = c.title(c.person(1))
    holder: list[Run] = [
        title.upper() + " " if caps else title + " ",
        c.name(1, "full-capitals" if caps else "full"),
    ]
    lines = [ln.upper() for ln in c.address()] if caps else c.address()
    b.line(pg, MARGIN + 10, 130, holder, size=10)
    addr = b.value("address", "\n".join(lines), "block")
    b.para(pg, MARGIN + 10, 143, 230, [addr], size=10, face="sans", leading=13)
    # the details table: label and value in separate cells
    x0, x1, x2 = 300.0, 382.0, 612 - MARGIN
    country = "GB" if v is DEV else rng.choice(v.iban_countries)
    values: list[Run] = [
        b.value("account-number", make_account(rng), "account"),
        b.value("account-number", make_sort_code(rng), "sort-code"),
        b.value("account-number", make_iban(rng, country), "iban"),
        b.keep("MMBK" + ("GB22" if v is DEV else "FRPP")),
        b.keep(f"1 to 28 {c.fixed['month']} 2026"),
    ]
    y = 112.0
    for label, value in zip(v.text["statement-labels"], values, strict=True):
        b.rule(pg, x0, y, x2, y, 0.4)
        b.line(pg, x0 + 4, y + 12, [label], size=8.5)
        small = isinstance(value, Seg) and value.text.startswith(country)
        b.line(pg, x1 + 4, y + 12, [value], size=7.6 if small else 8.5)
        y += 17
    b.rule(pg, x0, y, x2, y, 0.4)
    for x in (x0, x1, x2):
        b.rule(pg, x, 112, x, y, 0.4)
    # transactions: date, description, paid out, paid in, balance
    y = 260.0
    cols = (MARGIN, MARGIN + 52, 430.0, 485.0, 612 - MARGIN)
    b.line(pg, cols[0], y, [heads[1]], size=8.5, face="sans-bold")
    b.line(pg, cols[1], y, [heads[2]], size=8.5, face="sans-bold")
    b.line(pg, cols[2], y, [heads[3]], size=8.5, face="sans-bold", align="right")
    b.line(pg, cols[3], y, [heads[4]], size=8.5, face="sans-bold", align="right")
    b.line(pg, cols[4], y, [heads[5]], size=8.5, face="sans-bold", align="right")
    b.rule(pg, MARGIN, y + 5, 612 - MARGIN, y + 5, 0.8)
    balance = rng.randint(800, 9000) + rng.random()
    month = c.fixed["month"][:3]
    rows = list(v.text["statement"])
    rng.shuffle(rows)
    y += 20
    for n, row in enumerate(rows):
        b.line(pg, cols[0], y, [b.keep(f"{min(28, 2 + 2 * n):02d} {month}")], size=8.5)
        b.line(pg, cols[1], y, c.fill(row.lstrip("+")), size=8.5, face="sans")
        amount = rng.randint(5, 900) + rng.randint(0, 99) / 100
        incoming = row.startswith("+")
        balance += amount if incoming else -amount
        money = [b.keep(f"{amount:,.2f}")]
        b.line(pg, cols[3] if incoming else cols[2], y, money, size=8.5, align="right")
        b.line(pg, cols[4], y, [f"{balance:,.2f}"], size=8.5, align="right")
        b.rule(pg, MARGIN, y + 5, 612 - MARGIN, y + 5, 0.3, 120)
        y += 19
    b.para(pg, MARGIN, 730, WIDTH, c.text("statement-foot"), size=7, face="sans", grey=70)


def _letter(b: Builder, v: Vocab) -> None:
    c = Cast(b, v)
    rng = b.rng
    pg = b.page()
    b.line(pg, MARGIN, 66, [c.slot("org1")], size=16, face="serif-bold")
    site = "www." + c.orgs[0].lower().split()[0].replace("'", "") + ".org"
    b.line(pg, MARGIN, 80, [b.keep(site), " · 0300 123 4567"], size=8, face="sans", grey=60)
    # the window: name, building or PO box, street, town, postcode
    b.line(pg, MARGIN + 8, 150, [c.title(c.person(1)) + " ", c.name(1, "full")], size=10.5)
    addr = b.value("address", "\n".join(c.address(us=rng.random() < 0.25)), "block")
    b.para(pg, MARGIN + 8, 164, 250, [addr], size=10.5, face="sans", leading=14)
    ref: list[Run] = [
        v.text["letter-ref"][0] + " ",
        b.keep(f"{c.orgs[0][:3].upper()}/{rng.randint(1000, 9999)}"),
    ]
    b.line(pg, 612 - MARGIN, 150, ref, size=9, align="right")
    b.line(pg, 612 - MARGIN, 164, [c.slot("date3")], size=9, align="right")
    base = b.para(pg, MARGIN, 280, WIDTH, c.text("letter-open"), size=10.5)
    for t in v.text["letter"]:
        base = b.para(pg, MARGIN, base + 6, WIDTH, c.fill(t), size=10.5, leading=14)
    base = b.para(pg, MARGIN, base + 14, 300, [rng.choice(v.text["letter-close"])], size=10.5)
    base = b.para(pg, MARGIN, base + 28, 300, [c.name(2, "full")], size=10.5)
    base = b.para(pg, MARGIN, base, 300, [b.keep(rng.choice(v.roles))], size=10.5)
    cc: list[Run] = ["cc: ", c.name(4, "full"), ", ", c.slot("org2")]
    b.para(pg, MARGIN, base + 16, 400, cc, size=9, face="sans")


def _form(b: Builder, v: Vocab) -> None:
    c = Cast(b, v)
    rng = b.rng
    pg = b.page()
    labels = iter(v.text["form"])
    sections = iter(v.text["form-sections"])
    b.line(pg, MARGIN, 70, [c.slot("org1")], size=12, face="sans-bold")
    title = [b.keep(rng.choice(v.text["form-title"]))]
    b.line(pg, MARGIN, 94, title, size=15, face="serif-bold")
    x0, x1, x2 = MARGIN, 200.0, 612 - MARGIN
    y = 120.0

    def section() -> None:
        nonlocal y
        b.line(pg, x0, y - 5, [b.keep(next(sections))], size=9, face="sans-bold")
        y += 4

    def row(value: Sequence[Run], height: float = 22.0) -> None:
        """A label cell and its value cell."""
        nonlocal y
        b.rule(pg, x0, y, x2, y, 0.5)
        b.line(pg, x0 + 5, y + 14, [next(labels)], size=8.5, face="sans-bold")
        b.para(pg, x1 + 6, y + 15, x2 - x1 - 12, value, size=10, face="sans", leading=13)
        for x in (x0, x1, x2):
            b.rule(pg, x, y, x, y + height, 0.5)
        y += height

    section()
    row([c.name(1, "capitals")])
    row([c.name(1, "given")])
    born = f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/{rng.randint(1950, 2004)}"
    row([b.keep(born)])
    lines = c.address(po=False)
    row([b.value("address", "\n".join(lines[:-1]), "block")], height=14 + 13 * len(lines[:-1]))
    row([b.value("address", lines[-1], "cell")])
    row([b.keep(f"07{rng.randint(100, 999)} {rng.randint(100000, 999999)}")])
    y += 18
    section()
    row([c.name(1, "full")])
    row([b.value("account-number", make_sort_code(rng), "sort-code")])
    row([b.value("account-number", make_account(rng), "account")])
    row([b.value("account-number", make_card(rng), "card")])
    y += 18
    section()
    row([c.name(2, "full")])
    row([rng.choice(("Sister", "Neighbour", "Son", "Friend"))])
    base = b.para(pg, x0, y + 24, x2 - x0, c.text("form-sign"), size=9.5, leading=12.5)
    b.line(pg, x0, base + 18, c.text("form-sign", 1), size=10, face="serif")
    b.line(pg, 360, base + 18, c.text("form-sign", 2), size=10, face="serif")
    b.rule(pg, x0, base + 36, x2, base + 36, 0.5, 100)
    b.line(pg, x0, base + 52, c.text("form-sign", 3), size=8.5, face="sans", grey=70)


def _sideways(b: Builder, v: Vocab) -> None:
    c = Cast(b, v)
    rng = b.rng
    p1 = b.page()
    head = v.text["memo-head"]
    b.line(p1, MARGIN, 72, [b.keep(head[0])], size=14, face="sans-bold")
    for n in range(1, len(head)):
        b.line(p1, MARGIN, 84 + 16 * n, c.text("memo-head", n), size=10.5)
    b.rule(p1, MARGIN, 142, 612 - MARGIN, 142)
    base = 166.0
    for t in v.text["memo"]:
        base = b.para(p1, MARGIN, base, WIDTH, c.fill(t), size=10.5, leading=14) + 6
    b.para(p1, MARGIN, base + 10, 300, [c.name(2, "surname")], size=10.5)
    # page 2: a landscape schedule, fed into the scanner the other way round
    p2 = b.page(792, 612, scan_turn=rng.choice((90, 270)))
    words = v.text["schedule"]
    b.line(p2, MARGIN, 64, [b.keep(words[0])], size=13, face="sans-bold")
    cols = (MARGIN, 215.0, 430.0, 670.0)
    for text, x in zip(words[1:5], cols, strict=True):
        b.line(p2, x, 96, [text], size=9, face="sans-bold")
    b.rule(p2, MARGIN, 101, 792 - MARGIN, 101, 0.8)
    y = 120.0
    for n in range(3, 6):
        iban_value = make_iban(rng, rng.choice(v.iban_countries))
        street = f"{rng.randint(2, 240)} {rng.choice(v.streets)}, {rng.choice(v.towns)[0]}"
        b.line(p2, cols[0], y, [c.name(n, "full")], size=9.5)
        b.line(p2, cols[1], y, [b.value("account-number", iban_value, "iban")], size=9)
        b.line(p2, cols[2], y, [b.value("address", street, "cell")], size=8.5)
        b.line(p2, cols[3], y, [b.keep(make_money(rng, 100, 9000))], size=9.5)
        y += 22
    b.para(p2, MARGIN, y + 20, 792 - 2 * MARGIN, c.text("schedule", 5), size=9.5)


def _faint(b: Builder, v: Vocab) -> None:
    c = Cast(b, v)
    rng = b.rng
    pg = b.page(612, 560)
    b.line(pg, MARGIN, 66, [c.slot("org1")], size=12, face="sans-bold")
    b.line(pg, MARGIN, 88, [b.keep(v.text["faint-head"][0])], size=15, face="serif-bold")
    greys = [150, 160, 170, 180, 190, 200]
    rng.shuffle(greys)
    y = 124.0
    values: list[list[Run]] = [
        [c.name(1, "full")],
        [b.value("account-number", make_account(rng), "account")],
        [b.value("account-number", make_sort_code(rng), "sort-code")],
        [b.value("address", ", ".join(c.address(po=False)), "inline")],
        [b.keep(make_money(rng, 50, 3000))],
        [b.keep(f"PO-{rng.randint(10000, 99999)}")],
    ]
    for label, value, grey in zip(v.text["faint-labels"], values, greys, strict=True):
        b.line(pg, MARGIN, y, [label + ":"], size=10, face="sans-bold")
        b.line(pg, 190, y, value, size=10.5, face="mono", grey=grey)
        b.rule(pg, 185, y + 4, 612 - MARGIN, y + 4, 0.4, 150)
        y += 26
    y += 14
    for t in v.text["faint"]:
        grey = rng.choice((170, 185, 200))
        y = b.para(pg, MARGIN, y, WIDTH, c.fill(t), size=10, face="mono", grey=grey, leading=14)
        y += 4
    grey = rng.choice((155, 175))
    b.para(pg, MARGIN, y + 16, WIDTH, c.text("faint-head", 1), size=9.5, face="sans", grey=grey)


def _invoice(b: Builder, v: Vocab) -> None:
    c = Cast(b, v)
    rng = b.rng
    pg = b.page()
    words = v.text["invoice-labels"]
    b.line(pg, MARGIN, 72, [b.keep(words[0])], size=20, face="sans-bold")
    b.line(pg, MARGIN, 92, c.text("invoice-labels", 1), size=9.5)
    # the supplier's sidebar: a narrow column where long values wrap
    sx, sw = 430.0, 612 - MARGIN - 430.0
    b.line(pg, sx, 72, [c.name(1, "full")], size=9.5, face="sans-bold")
    addr = b.value("address", "\n".join(c.address(us=rng.random() < 0.3)), "block")
    base = b.para(pg, sx, 86, sw, [addr], size=8.5, face="sans", leading=11)
    base = b.para(pg, sx, base + 14, sw, [b.keep(words[2])], size=8.5, face="sans-bold")
    iban_text = c.iban()
    c.accounts["IBAN1"] = iban_text  # the body repeats it on one line
    groups = iban_text.split(" ")
    cut = rng.randint(2, len(groups) - 2)
    wrapped = " ".join(groups[:cut]) + "\n" + " ".join(groups[cut:])
    bic = b.keep("GRCB" + ("DEFF" if v is DEV else "FRPP"))
    details: list[Run] = [words[3], c.name(1, "full"), "\n" + words[4]]
    details += [b.value("account-number", wrapped, "iban"), "\n" + words[5], bic]
    b.para(pg, sx, base + 1, sw, details, size=8.5, face="sans", leading=11)
    b.line(pg, MARGIN, 140, [b.keep(words[6])], size=8.5, face="sans-bold")
    b.line(pg, MARGIN, 154, [c.slot("org1")], size=9.5)
    b.line(pg, MARGIN, 167, c.text("invoice-labels", 7), size=9.5)
    # items
    y = 260.0
    b.line(pg, MARGIN, y, [words[8]], size=9, face="sans-bold")
    b.line(pg, 612 - MARGIN, y, [words[9]], size=9, face="sans-bold", align="right")
    b.rule(pg, MARGIN, y + 5, 612 - MARGIN, y + 5, 0.8)
    items = list(v.text["invoice-items"])
    rng.shuffle(items)
    y += 20
    for item in items[:4]:
        b.line(pg, MARGIN, y, [b.keep(item)], size=9.5)
        b.line(
            pg, 612 - MARGIN, y, [b.keep(make_money(rng, 60, 1800, "€"))], size=9.5, align="right"
        )
        y += 17
    b.rule(pg, MARGIN, y - 8, 612 - MARGIN, y - 8, 0.8)
    y += 16
    for t in v.text["invoice"]:
        y = b.para(pg, MARGIN, y, 340, c.fill(t), size=9.5, leading=12.5) + 6


_LAYOUTS = {
    "news": _news,
    "feature": _feature,
    "interview": _interview,
    "statement": _statement,
    "letter": _letter,
    "form": _form,
    "sideways": _sideways,
    "faint": _faint,
    "invoice": _invoice,
}
# how each kind arrives, by round (one document of each kind per round): medium and format
_ARRIVES: dict[str, tuple[tuple[str, str], ...]] = {
    "news": ((DIGITAL, "pdf"), (SCAN, "pdf")),
    "feature": ((SCAN, "pdf"), (DIGITAL, "pdf")),
    "interview": ((SCAN, "pdf"), (DIGITAL, "pdf")),
    "statement": ((SCAN, "pdf"), (DIGITAL, "pdf")),
    "letter": ((SCAN, "png"), (SCAN, "jpeg")),
    "form": ((DIGITAL, "pdf"), (SCAN, "tiff")),
    "sideways": ((SCAN, "tiff"), (SCAN, "pdf")),
    "faint": ((SCAN, "pdf"), (SCAN, "png")),
    "invoice": ((DIGITAL, "pdf"), (SCAN, "pdf")),
}


def document(kind: str, split: str, index: int = 0, seed: int = 2026) -> Document:
    """One document of ``kind`` from the ``split`` half; the same arguments give the same one."""
    v = VOCABS[split]
    doc_seed = zlib.crc32(f"{seed}/{split}/{kind}/{index}".encode())
    b = Builder(
        f"{kind}-{'dev' if split == 'dev' else 'ho'}-{index:02d}",
        kind,
        split,
        random.Random(doc_seed),
    )
    _LAYOUTS[kind](b, v)
    medium, fmt = _ARRIVES[kind][index % len(_ARRIVES[kind])]
    return b.build(medium, fmt, doc_seed)


def documents(split: str, count: int = len(KINDS), seed: int = 2026) -> list[Document]:
    """``count`` documents of one half, the kinds in turn."""
    return [document(KINDS[n % len(KINDS)], split, n // len(KINDS), seed) for n in range(count)]


def corpus(count: int = len(KINDS), seed: int = 2026) -> dict[str, list[Document]]:
    return {split: documents(split, count, seed) for split in SPLITS}


def ci_documents(seed: int = 7) -> list[Document]:
    """A few small scanned documents for the CI recall check (under 10 s in all at 300 dpi with
    the read-back): names in prose with surname-alone and possessive mentions, speaker labels and
    payees in capitals, a statement table (sort code in its own cell, an IBAN without spaces in
    a description), an IBAN wrapped over two lines, and a name and an account number in faint
    grey print. Drawn from the dev half's vocabulary. A test does::

        for doc in ci_documents():
            outcome = redact_and_score(doc, tmp_path, 300, engine, policy)
            assert outcome.missed() == [], [s.mention.text for s in outcome.missed()]
    """
    out: list[Document] = []
    rng = random.Random(seed)
    v = DEV

    # 1. prose and capitals
    b = Builder("ci-prose", "news", "ci", random.Random(rng.random()))
    c = Cast(b, v, people=3)
    pg = b.page(612, 330)
    base = b.para(pg, MARGIN, 70, 612 - 2 * MARGIN, c.fill(v.text["news"][0]), size=10.5)
    base = b.para(pg, MARGIN, base + 6, 612 - 2 * MARGIN, c.fill(v.text["news"][1]), size=10.5)
    base = b.para(pg, MARGIN, base + 6, 612 - 2 * MARGIN, c.fill(v.text["news"][2]), size=10.5)
    for speaker, text in ((2, "Where did you grow up?"), (1, "In a small town by the sea.")):
        b.line(pg, MARGIN, base + 10, [c.name(speaker, "capitals"), ":"], size=10, face="mono")
        b.line(pg, MARGIN + 110, base + 10, [text], size=10, face="mono")
        base += 16
    out.append(b.build(SCAN, "pdf", 1))

    # 2. a statement table with a wrapped IBAN beside it
    b = Builder("ci-table", "statement", "ci", random.Random(rng.random()))
    c = Cast(b, v, people=3)
    pg = b.page(612, 330)
    y = 70.0
    for label, value in (
        ("Sort code", b.value("account-number", make_sort_code(b.rng), "sort-code")),
        ("Account number", b.value("account-number", make_account(b.rng), "account")),
    ):
        b.rule(pg, MARGIN, y - 13, 330, y - 13, 0.5)
        b.line(pg, MARGIN + 4, y, [label], size=9.5)
        b.line(pg, 180, y, [value], size=9.5)
        b.rule(pg, 170, y - 13, 170, y + 5, 0.5)
        y += 18
    y += 16
    compact = b.value("account-number", make_iban(b.rng, "DE", spaced=False), "iban-compact")
    rows: list[list[Run]] = [
        ["FASTER PAYMENT TO ", c.name(1, "full-capitals"), " REF RENT"],
        ["SEPA CT ", compact, " ", c.name(2, "capitals")],
        ["CARD PAYMENT ", b.keep(v.merchants[0])],
    ]
    for row in rows:
        b.line(pg, MARGIN, y, [b.keep("12 Mar")], size=9)
        b.line(pg, MARGIN + 50, y, row, size=9)
        y += 16
    groups = make_iban(b.rng, "GB").split(" ")
    wrapped = b.value("account-number", " ".join(groups[:3]) + "\n" + " ".join(groups[3:]), "iban")
    b.para(
        pg, 400, 70, 150, ["Pay to: ", c.name(3, "full"), "\nIBAN: ", wrapped], size=9, face="sans"
    )
    out.append(b.build(SCAN, "pdf", 2))

    # 3. faint print
    b = Builder("ci-faint", "faint", "ci", random.Random(rng.random()))
    c = Cast(b, v, people=2)
    pg = b.page(612, 300)
    b.line(pg, MARGIN, 70, [b.keep("Payout request")], size=14, face="serif-bold")
    b.line(pg, MARGIN, 110, ["Claimant:"], size=10, face="sans-bold")
    b.line(pg, 190, 110, [c.name(1, "full")], size=10.5, face="mono", grey=175)
    b.line(pg, MARGIN, 136, ["Account number:"], size=10, face="sans-bold")
    b.line(
        pg,
        190,
        136,
        [b.value("account-number", make_account(b.rng), "account")],
        size=10.5,
        face="mono",
        grey=160,
    )
    b.para(
        pg,
        MARGIN,
        176,
        612 - 2 * MARGIN,
        c.fill(v.text["faint"][0]),
        size=10,
        face="mono",
        grey=190,
    )
    out.append(b.build(SCAN, "pdf", 3))
    return out
