"""The kinds of text, each a function that writes one document into a ``Text`` from a ``Cast``.

Every entity a function puts in is labelled: people (``PERSON``: the name as printed, without
a title), organisations, clubs and brands (``ORG``), places (``LOC``), products (``PRODUCT``),
dates, money, competitions and country codes (``MISC``). Everything else is not an entity: the
table headers, the capitalised words of product copy and UI labels, roles ("Chair"), events.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from corpora.news import vocab as vc
from corpora.news.cast import Cast, Person, Piece, Text, variants

PR = "PRODUCT"


def per(s: str) -> tuple[str, str]:
    return (s, "PERSON")


def org(s: str) -> tuple[str, str]:
    return (s, "ORG")


def loc(s: str) -> tuple[str, str]:
    return (s, "LOC")


def misc(s: str) -> tuple[str, str]:
    return (s, "MISC")


def name(c: Cast, p: Person, key: str, forms: tuple[str, ...]) -> tuple[str, str]:
    """One of a person's printed forms, the phrasing chosen for the half."""
    return per(getattr(p, c.phrase(key, forms)))


def headline(t: Text, c: Cast, template: str, **values: Piece) -> None:
    """A headline as papers set it: sentence case, Title Case (every word capitalised, a trap
    for a detector that reads capitals as names) or all capitals; then a line end."""
    style = c.rng.choice(("sentence", "title", "title", "caps"))
    if style == "sentence":
        t.fill(template, **values).line()
        return
    parts = re.split(r"(\{\w+\})", template)
    out = []
    for part in parts:
        if part.startswith("{"):
            out.append(part)
        elif style == "caps":
            out.append(part.upper())
        else:
            out.append(re.sub(r"\b([a-z])", lambda m: m.group(1).upper(), part))
    if style == "title":
        values = {
            k: re.sub(r"\b([a-z])", lambda m: m.group(1).upper(), v) if isinstance(v, str) else v
            for k, v in values.items()
        }
    if style == "caps":
        values = {
            k: (v[0].upper(), v[1]) if isinstance(v, tuple) else v.upper()
            for k, v in values.items()
        }
    t.fill("".join(out), **values).line()


def _minutes(c: Cast, k: int) -> list[int]:
    return sorted(c.rng.sample(range(2, 95), k))


# ------------------------------------------------------------------------------- standings


def standings(t: Text, c: Cast) -> None:
    comp = c.competition()
    title = c.variant("standings.title", 4)
    if title == 0:
        t.line(misc(comp), " table")
    elif title == 1:
        t.line("STANDINGS")
    elif title == 2:
        t.line(misc(comp.upper()))
    else:
        t.line(misc(comp), ": how they stand after ", misc(c.date()))
    header = vc.HEADERS[c.variant("standings.header", len(vc.HEADERS))].split()
    t.row(*header)
    clubs = [c.club() for _ in range(c.rng.randint(6, 14))]
    played = c.rng.randint(8, 30)
    caps = c.rng.random() < 0.25
    rows = []
    for club in clubs:
        w = c.rng.randint(0, played)
        d = c.rng.randint(0, played - w)
        lo = played - w - d
        gf, ga = c.rng.randint(w, 3 * w + d + 2), c.rng.randint(lo, 3 * lo + d + 2)
        rows.append((3 * w + d, gf - ga, club, w, d, lo, gf, ga))
    rows.sort(key=lambda r: (-r[0], -r[1]))
    for rank, (pts, gd, club, w, d, lo, gf, ga) in enumerate(rows, 1):
        cells: list[str | tuple[str, str]] = []
        for h in header:
            key = h.upper()
            if key in ("POS", "#", "RK"):
                cells.append(str(rank))
            elif key in ("TEAM", "CLUB"):
                cells.append(org(club.upper() if caps else club))
            elif key in ("P", "PLD", "GP", "MP", "PL"):
                cells.append(str(played))
            elif key == "W":
                cells.append(str(w))
            elif key == "D":
                cells.append(str(d))
            elif key in ("L",):
                cells.append(str(lo))
            elif key == "OTL":
                cells.append(str(c.rng.randint(0, 3)))
            elif key in ("GF", "F", "FOR"):
                cells.append(str(gf))
            elif key in ("GA", "A", "AG"):
                cells.append(str(ga))
            elif key in ("GD", "+/-"):
                cells.append(f"{gd:+d}" if gd else "0")
            else:
                cells.append(str(pts))
        t.row(*cells)
    if c.rng.random() < 0.7:
        t.line()
        t.line(c.phrase("standings.scorers", ("Top scorers", "Leading scorers", "GOALS")))
        goals = sorted((c.rng.randint(3, 25) for _ in range(c.rng.randint(3, 7))), reverse=True)
        form = c.variant("standings.scorerform", 4)
        for g in goals:
            p, club = c.person(), c.rng.choice(clubs)
            if form == 0:
                t.line(per(p.full), " (", org(club), ") ", str(g))
            elif form == 1:
                t.row(str(g), per(p.full), org(club))
            elif form == 2:
                t.row(per(p.sports), org(club), str(g))
            else:
                t.line(str(g), " - ", per(p.short), " (", org(club), ")")


# --------------------------------------------------------------------------------- results


def _scorers(c: Cast, k: int) -> list[tuple[str, str] | str]:
    out: list[tuple[str, str] | str] = []
    people = [c.person() for _ in range(max(1, k - c.rng.randint(0, 1)))]
    for i, minute in enumerate(_minutes(c, k)):
        if i:
            out.append(", ")
        p = people[i % len(people)]
        shown = p.initial if c.rng.random() < 0.15 else p.short
        tail = c.rng.choice(("", "", "", " pen", " og", "+2" if minute > 44 else ""))
        out += [per(shown), f" {minute}{tail}"]
    return out


def results(t: Text, c: Cast) -> None:
    t.line(misc(c.competition()), c.phrase("results.head", (" results", ": ", " - latest")))
    if c.rng.random() < 0.5:
        t.line(misc(c.pick(vc.WEEKDAYS)), ", ", misc(c.date()))
    form = c.variant("results.form", 5)
    for _ in range(c.rng.randint(3, 8)):
        home, away = c.club(), c.club()
        hs, as_ = c.rng.randint(0, 4), c.rng.randint(0, 3)
        if form == 0:
            # Northgate United 2 (Okafor 23, Nilsen 67 pen) Kelbridge Rovers 1 (Berg 88)
            t.add(org(home), f" {hs}")
            if hs:
                t.add(" (", *_scorers(c, hs), ")")
            t.add(" ", org(away), f" {as_}")
            if as_:
                t.add(" (", *_scorers(c, as_), ")")
            t.line()
        elif form == 1:
            t.row(org(home), f"{hs}-{as_}", org(away))
            if hs + as_:
                t.line("   Scorers: ", *_scorers(c, hs + as_))
        elif form == 2:
            t.line(org(home.upper()), f" {hs} ", org(away.upper()), f" {as_}")
            if hs:
                t.line(*_scorers(c, hs))
            if as_:
                t.line(*_scorers(c, as_))
        elif form == 3:
            t.add(org(home), " v ", org(away), f": {hs}-{as_}.")
            if hs + as_:
                t.add(" Goals: ", *_scorers(c, hs + as_), ".")
            ref = c.person()
            t.line(f" Att: {c.rng.randint(800, 60000):,}. Ref: ", per(ref.full), ".")
        else:
            t.row(org(home), str(hs), str(as_), org(away))
        if c.rng.random() < 0.3 and form != 3:
            ref = c.person()
            t.line(
                c.phrase("results.ref", ("Referee: ", "Ref: ", "Match official: ")),
                per(ref.full if c.rng.random() < 0.7 else ref.initial),
                " (",
                loc(c.place()),
                ")",
            )


# ------------------------------------------------------------------------ line-ups and cards


FORMATIONS = ("4-4-2", "4-3-3", "3-5-2", "4-2-3-1", "5-3-2", "3-4-3")


def lineup(t: Text, c: Cast) -> None:
    form = c.variant("lineup.form", 3)
    for _side in range(2):
        club = c.club()
        players = c.people(11)
        if form in (0, 1):
            shape = c.pick(FORMATIONS)
            t.add(org(club.upper() if form == 0 else club), f" ({shape}): ")
            t.add(per(players[0].short), "; ")
            at = 1
            lines = [int(x) for x in shape.split("-")]
            for j, n in enumerate(lines):
                for i in range(n):
                    if i:
                        t.add(", ")
                    p = players[at]
                    at += 1
                    t.add(per(p.short))
                    if c.rng.random() < 0.15:
                        sub = c.person()
                        t.add(" (", per(sub.short), f" {c.rng.randint(46, 90)})")
                t.add("; " if j < len(lines) - 1 else ".")
            t.line()
            subs = c.people(c.rng.randint(2, 5))
            t.add(c.phrase("lineup.subs", ("Subs not used: ", "Substitutes: ", "Bench: ")))
            for i, s in enumerate(subs):
                t.add(", " if i else "", per(s.short))
            t.line(".")
            if c.rng.random() < 0.6:
                t.add("Booked: ")
                for i, b in enumerate(c.rng.sample(players, 2)):
                    t.add(", " if i else "", per(b.short))
                t.line(".")
            mgr = c.person()
            t.line(
                c.phrase("lineup.mgr", ("Manager: ", "Head coach: ", "Coach: ")),
                per(mgr.full),
            )
        else:
            t.line(org(club))
            t.row("No", "Player", "Pos")
            for i, p in enumerate(players, 1):
                pos = "GK" if i == 1 else c.pick(("DF", "MF", "FW"))
                t.row(str(i), per(p.sports), pos)
        t.line()
    if c.rng.random() < 0.5:
        t.line("Referee: ", per(c.person().full), ".")


def scorecard(t: Text, c: Cast) -> None:
    team, other = c.club(), c.club()
    t.line(org(team), c.phrase("scorecard.head", (" innings", " 1st innings", " - batting")))
    t.row("Batter", "", "R", "B", "4s", "6s")
    bat = c.people(c.rng.randint(6, 11))
    bowlers = c.people(4)
    fielders = c.people(3)
    total = 0
    for p in bat:
        how = c.rng.random()
        b = c.rng.choice(bowlers)
        if how < 0.35:
            out: list[str | tuple[str, str]] = [
                "c ",
                per(c.rng.choice(fielders).short),
                " b ",
                per(b.short),
            ]
        elif how < 0.6:
            out = ["b ", per(b.short)]
        elif how < 0.75:
            out = ["lbw b ", per(b.short)]
        elif how < 0.85:
            out = ["run out (", per(c.rng.choice(fielders).short), ")"]
        else:
            out = ["not out"]
        r = c.rng.randint(0, 90)
        total += r
        shown = p.initial.replace(".", "") if c.variant("scorecard.names", 2) else p.full
        t.row(per(shown), out, str(r), str(r + c.rng.randint(0, 40)), str(r // 8), str(r // 30))
    extras = c.rng.randint(2, 20)
    t.row(
        "Extras",
        f"(b {extras // 3}, lb {extras // 3}, w {extras - 2 * (extras // 3)})",
        str(extras),
    )
    t.row(
        "Total", f"({min(len(bat), 10)} wkts, {c.rng.randint(20, 50)} overs)", str(total + extras)
    )
    t.line()
    bowl = c.phrase("scorecard.bowl", ("Bowling", "BOWLING", "Bowling (for {other})"))
    t.fill(bowl, other=org(other)).line()
    t.row("", "O", "M", "R", "W")
    for b in bowlers:
        t.row(
            per(b.short),
            str(c.rng.randint(2, 10)),
            str(c.rng.randint(0, 3)),
            str(c.rng.randint(10, 60)),
            str(c.rng.randint(0, 5)),
        )


# ---------------------------------------------------------------------------- race results


def race(t: Text, c: Cast) -> None:
    event = c.pick(("100m", "400m hurdles", "1500m", "5000m", "10,000m", "marathon", "long jump"))
    who = c.pick(("Women's", "Men's"))
    sex = "f" if who == "Women's" else "m"
    t.line(who, " ", event, c.phrase("race.head", (" final", " - result", ", final")))
    form = c.variant("race.form", 4)
    for rank in range(1, c.rng.randint(5, 10)):
        p = c.person(sex)
        country, code = c.country()
        mark = f"{c.rng.randint(9, 59)}.{c.rng.randint(0, 99):02d}"
        if form == 0:
            t.line(str(rank), " ", per(p.sports), " (", misc(code), ") ", mark)
        elif form == 1:
            t.row(f"{rank}.", per(p.inverted), misc(code), mark)
        elif form == 2:
            t.line(f"{rank}. ", per(p.full), " (", loc(country), ") ", mark)
        else:
            t.row(str(rank), per(p.full.upper()), loc(country.upper()), mark)


def medals(t: Text, c: Cast) -> None:
    head = c.phrase("medals.head", ("Medal table", "MEDALS", "Medals after day"))
    t.line(head, f" {c.rng.randint(2, 9)}" if head.endswith("day") else "")
    form = c.variant("medals.form", 3)
    t.row(
        *(
            ("POS", "NOC", "G", "S", "B", "TOT")
            if form != 2
            else ("", "Gold", "Silver", "Bronze", "Total")
        )
    )
    rows = sorted(
        ((c.rng.randint(0, 9), c.rng.randint(0, 9), c.rng.randint(0, 9)) for _ in range(8)),
        reverse=True,
    )
    for rank, (g, s, b) in enumerate(rows, 1):
        country, code = c.country()
        first: tuple[str, str] = misc(code) if form == 0 else loc(country)
        if form == 2:
            t.row(loc(country), str(g), str(s), str(b), str(g + s + b))
        else:
            t.row(str(rank), first, str(g), str(s), str(b), str(g + s + b))


def cities(t: Text, c: Cast) -> None:
    form = c.variant("cities.form", 3)
    if form == 0:
        t.line(c.phrase("cities.wx", ("WEATHER", "Around the world", "Today's forecast")))
        t.row("CITY", "HIGH", "LOW", "SKY")
        for _ in range(c.rng.randint(6, 12)):
            hi = c.rng.randint(-5, 38)
            sky = c.pick(("sunny", "cloudy", "rain", "showers", "fog", "snow", "Sunny", "Cloudy"))
            t.row(loc(c.place()), str(hi), str(hi - c.rng.randint(2, 12)), sky)
    elif form == 1:
        t.line("DEPARTURES")
        t.row("TIME", "DESTINATION", "FLIGHT", "STATUS")
        for _ in range(c.rng.randint(5, 10)):
            code = c.pick(("NX", "LB", "KQ", "SV", "AZ")) + str(c.rng.randint(100, 999))
            status = c.pick(("BOARDING", "DELAYED", "ON TIME", "CANCELLED", "GATE CLOSED"))
            place = c.place()
            t.row(
                f"{c.rng.randint(5, 23):02d}:{c.rng.randint(0, 59):02d}",
                loc(place.upper()),
                code,
                status,
            )
    else:
        party = [c.org() for _ in range(2)]
        t.line(c.phrase("cities.vote", ("Results by city", "How the cities voted", "RESULTS")))
        t.row("", org(party[0]), org(party[1]), "Turnout")
        for _ in range(c.rng.randint(5, 10)):
            a = c.rng.randint(20, 70)
            t.row(loc(c.place()), f"{a}%", f"{100 - a}%", f"{c.rng.randint(40, 80)}%")
        if c.rng.random() < 0.5:
            country, _code = c.country()
            t.line("Nationwide (", loc(country), f"): turnout {c.rng.randint(40, 80)}%")


# ------------------------------------------------------------------------------ news prose


SAID = ("said", "told reporters", "said on " + "{day}", "added", "said in a statement")
NEWS_SENTENCES = (
    "{a}, {arole} of {org}, said the company would open a new plant in {place} next year.",
    "{a}, who joined {org} in 2019, has led the talks since {date}.",
    "The deal values {org} at {money}, {ashort} said.",
    "{ashort} declined to comment on the figures, which were first reported by {org2}.",
    '"We have done what we said we would do," {ashort} told {org2}.',
    "Speaking in {place}, {b}, a spokesperson for {org2}, said the plan had been agreed.",
    "{bshort} said the board would meet again in {place} on {date}.",
    "Shares in {org} rose 4 per cent after {ashort} set out the plan.",
    "{a} won the {comp} title in {place} on {date}, beating {b} in the final.",
    "{ashort}, who trains with {club}, said the track had been fast.",
    "{bshort} finished second, ahead of {c} of {club2}.",
    "The match in {place} was watched by a crowd of 21,000, the club said.",
    "According to {org2}, the new rules take effect on {date}.",
    "{titlea} {ashort} was not available for comment.",
    "{a}, 34, was appointed in {month} after a decade at {org2}.",
    "Police in {place} said {b} had been released without charge.",
    "{ashort}'s lawyer, {c}, said the ruling would be appealed.",
    "The court heard that {bshort} had written to {org} twice.",
    "{a} and {b} will meet in {place} next week.",
    "Among those at the launch were {a}, {b} and {c}.",
    'Asked about the song, {ashort} smiled: "It is only a track on an album."',
    "{c}, an economist at {org2}, expects prices to fall.",
    "Goals from {ashort} and {bshort} gave {club} the lead before half-time.",
    "{titlea} {ashort}, who lives in {place}, has two children.",
    'According to {c}, a professor at {org2}, the figures are "not surprising".',
    "The {day} meeting in {place} was chaired by {b}.",
    "Minister {c} said the government would not step in.",
    "Dr {c} of {org2} led the study; {cshort} said more work was needed.",
    "Coach {b} named an unchanged side for the trip to {place}.",
    "Sales of the {prod} rose in {place}, {org} said.",
    "It was the first time {ashort} had spoken since {day}.",
    "{bshort}, {ashort} and {cshort} all declined to comment.",
    "The report, written by {c} for {org2}, runs to 300 pages.",
    "Fans in {place} waited for {ashort} outside the ground.",
)


def _byline(t: Text, c: Cast, writer: Person) -> None:
    form = c.variant("news.byline", 5)
    if form == 0:
        t.line("By ", per(writer.full.upper()))
    elif form == 1:
        t.line("By ", per(writer.full))
    elif form == 2:
        t.line(
            per(writer.full), ", ", c.pick(("Business", "Sports", "Political")), " Correspondent"
        )
    elif form == 3:
        t.line("By ", per(writer.full), " in ", loc(c.place()))
    else:
        t.line("Words: ", per(writer.full), " | Pictures: ", per(c.person().full))


def _dateline(t: Text, c: Cast, place: str) -> None:
    form = c.variant("news.dateline", 4)
    if form == 0:
        t.add(loc(place.upper()), " (", org(c.agency()), ") - ")
    elif form == 1:
        t.add(loc(place.upper()), ", ", misc(c.date()), " - ")
    elif form == 2:
        t.add(loc(place), " \u2014 ")
    else:
        t.add(loc(place.upper()), ": ")


def news(t: Text, c: Cast) -> None:
    section = c.pick(("BUSINESS", "SPORT", "NEWS", "WORLD", "MARKETS", "Business", "Sport"))
    t.line(section)
    a, b, d = c.person(), c.person(), c.person()
    o, o2 = c.company(), c.org()
    place = c.place()
    heads = (
        "{o} plans expansion as profits rise",
        "Board backs new strategy after record year",
        "Title decided on final day",
        "Talks resume as deadline nears",
        "Record crowd sees late winner",
        "Strike talks break down over pay",
    )
    headline(t, c, c.phrase("news.head", heads), o=org(o.split()[0]))
    writer = c.person()
    _byline(t, c, writer)
    t.line()
    _dateline(t, c, place)
    values: dict[str, Piece] = {
        "a": per(a.full),
        "arole": c.pick(("chief executive", "chair", "finance director", "head coach", "captain")),
        "org": org(o),
        "org2": org(o2),
        "place": loc(c.place()),
        "date": misc(c.date()),
        "money": misc(c.money()),
        "ashort": per(a.short),
        "b": per(b.full),
        "bshort": per(b.short),
        "c": per(d.full),
        "comp": misc(c.competition()),
        "club": org(c.club()),
        "club2": org(c.club()),
        "titlea": a.title,
        "day": misc(c.pick(vc.WEEKDAYS)),
        "month": misc(c.pick(vc.MONTHS)),
        "cshort": per(d.short),
        "prod": (c.product(), PR),
    }
    allowed = [i for i in range(len(NEWS_SENTENCES)) if i in _news_ok(c)]
    first = [i for i in allowed if "{a}" in NEWS_SENTENCES[i]] or [0]
    chosen = [c.rng.choice(first)]
    rest = [i for i in allowed if i not in chosen]
    chosen += c.rng.sample(rest, min(len(rest), c.rng.randint(3, 6)))
    # a full name comes before its surname alone: the first surname becomes the full name
    seen: set[str] = set()
    for n, i in enumerate(chosen):
        s = NEWS_SENTENCES[i]
        for x in ("a", "b", "c"):
            if x not in seen and f"{{{x}short}}" in s:
                at_full = s.find(f"{{{x}}}")
                at_short = s.find(f"{{{x}short}}")
                if at_full < 0 or at_short < at_full:
                    s = s.replace(f"{{{x}short}}", f"{{{x}}}", 1)
                    if at_full >= 0:
                        s = s.replace(f"{{{x}}}", f"{{{x}short}}", 2).replace(
                            f"{{{x}short}}", f"{{{x}}}", 1
                        )
            if f"{{{x}}}" in s or f"{{{x}short}}" in s:
                seen.add(x)
        t.fill(s, **values)
        t.add("\n" if n % 2 else " ")
    t.line()
    quote = c.phrase(
        "news.quote",
        (
            '"It is a good day for {place}," {ashort} said.',
            "{ashort} said the team's form in the spring had been the key.",
        ),
    )
    t.fill(quote, **values).line()
    if c.rng.random() < 0.5:
        t.line("\u00a9 ", org(c.agency()), " ", misc(str(2026)))


def _news_ok(c: Cast) -> set[int]:
    return set(variants("news.sentences", len(NEWS_SENTENCES), c.half))


# -------------------------------------------------------------------------------- captions


def captions(t: Text, c: Cast) -> None:
    for _ in range(c.rng.randint(2, 4)):
        form = c.variant("caption.form", 5)
        a, b = c.person(), c.person()
        photo = c.person()
        credit = c.phrase("caption.credit", ("Photograph: ", "Photo: ", "Picture: ", "(Photo: "))
        if form == 0:
            t.fill(
                "{a} (left) and {b} at the opening of {org}'s new site in {place} on {day}. ",
                a=per(a.full),
                b=per(b.full),
                org=org(c.company()),
                place=loc(c.place()),
                day=misc(c.pick(vc.WEEKDAYS)),
            )
        elif form == 1:
            t.fill(
                "Pictured: {a}, chair of {org}, with {b}. ",
                a=per(a.full),
                b=per(b.full),
                org=org(c.org()),
            )
        elif form == 2:
            k = c.people(c.rng.randint(2, 3))
            t.add("From left: ")
            for i, p in enumerate([a, *k]):
                t.add(", " if 0 < i < len(k) else (" and " if i else ""), per(p.full))
            t.add(". ")
        elif form == 3:
            t.fill(
                "{a} celebrates scoring against {club} at {place}. ",
                a=per(a.full.upper() if c.rng.random() < 0.4 else a.full),
                club=org(c.club()),
                place=loc(c.place()),
            )
        else:
            t.fill(
                "{ashort} with the {product} at the launch in {place}. ",
                ashort=per(a.full),
                product=(c.product(), PR),
                place=loc(c.place()),
            )
        if c.rng.random() < 0.5:
            t.add(credit, per(photo.full), "/", org(c.agency()))
        else:
            t.add(credit, per(photo.full.upper()))
        t.line(")" if credit.startswith("(") else "")
        t.line()


# --------------------------------------------------------------------- officials and boards


ROLES = (
    "Chair",
    "Chief Executive",
    "Finance Director",
    "Company Secretary",
    "Non-executive Director",
    "Senior Independent Director",
    "Treasurer",
    "Vice-Chair",
)


def board(t: Text, c: Cast) -> None:
    form = c.variant("board.form", 4)
    o = c.org()
    if form == 0:
        t.line(c.phrase("board.head", ("Board of Directors", "BOARD OF DIRECTORS", "Directors")))
        t.line(org(o))
        for role in c.rng.sample(ROLES, c.rng.randint(4, 7)):
            p = c.person()
            t.row(per(p.full), role)
    elif form == 1:
        t.line(org(o), " - officers for ", misc(str(c.rng.randint(2024, 2027))))
        for role in c.rng.sample(ROLES, c.rng.randint(4, 7)):
            t.line(role, ": ", per(c.person().full))
    elif form == 2:
        t.line(c.phrase("board.match", ("Match officials", "MATCH OFFICIALS", "Officials")))
        t.line("Referee: ", per(c.person().full), " (", loc(c.place()), ")")
        t.add("Assistants: ")
        t.line(per(c.person().full), ", ", per(c.person().full))
        t.line("Fourth official: ", per(c.person().full))
        if c.rng.random() < 0.6:
            t.line("VAR: ", per(c.person().full))
    else:
        t.line(org(o.upper()))
        t.line(c.phrase("board.committee", ("Committee members", "MEMBERS OF THE BOARD")))
        for p in c.people(c.rng.randint(4, 8)):
            t.row(per(p.inverted), loc(c.place()) if c.rng.random() < 0.5 else "")


# ------------------------------------------------------------------------ company news


def company(t: Text, c: Cast) -> None:
    brand = c.brand()
    co = c.company()
    prod, prod2 = c.product(brand), c.product(brand)
    boss, analyst = c.person(), c.person()
    firm = c.firm()
    values: dict[str, Piece] = {
        "co": org(co),
        "brand": org(brand),
        "prod": (prod, PR),
        "prod2": (prod2, PR),
        "boss": per(boss.full),
        "bshort": per(boss.short),
        "analyst": per(analyst.full),
        "ashort": per(analyst.short),
        "firm": org(firm),
        "money": misc(c.money()),
        "money2": misc(c.money()),
        "place": loc(c.place()),
        "date": misc(c.date()),
        "rival": org(c.company()),
    }
    t.line("COMPANY NEWS")
    heads = (
        "{co} unveils {prod}",
        "{brand} maker lifts forecast",
        "{co}: results for the year to {date}",
        "Record sales as {brand} adds new line",
    )
    headline(t, c, c.phrase("company.head", heads), **values)
    t.line()
    body = (
        "{co}, which sells the {brand} range, said on {date} that sales of the {prod} had "
        "passed expectations. ",
        "Revenue rose to {money}, from {money2} a year earlier. ",
        "{boss}, the chief executive, said the {prod2} would reach shops in {place} in the "
        "spring. ",
        '"Customers want a track they can play again and again," {bshort} said. ',
        "{analyst}, an analyst at {firm}, said {rival} would find it hard to keep up. ",
        "{ashort} kept a buy rating on the shares. ",
        "{firm} advised {co} on the sale of its {place} unit for {money2}. ",
        "The {brand} app adds a Song mode and a Track view; users can record a song and "
        "share the track. ",
        "{rival} said it was not in talks with {co}. ",
    )
    allowed = variants("company.body", len(body), c.half)
    picked = [i for i in range(len(body)) if i in allowed or i in (0, 2)]
    keep = sorted(c.rng.sample(picked, min(len(picked), c.rng.randint(4, 7))))
    if 2 not in keep:
        keep = [k for k in keep if k not in (3,)]
    if 4 not in keep:
        keep = [k for k in keep if k != 5]
    for i in keep:
        t.fill(body[i], **values)
    t.line()


# ------------------------------------------------------------------- brochures (no people)


def brochure(t: Text, c: Cast) -> None:
    brand = c.brand()
    prod = c.product(brand)
    nouns = c.rng.sample(vc.COPY_NOUNS, 6)
    if c.rng.random() < 0.5:  # the words a real brochure burned: "Song", "Track"
        nouns[:2] = ["Song", "Track"]
    labels = c.rng.sample(vc.UI_LABELS, 5)
    t.line(org(brand.upper()) if c.rng.random() < 0.5 else org(brand))
    t.line((prod, PR))
    t.line()
    t.fill(
        c.phrase(
            "brochure.open",
            (
                "The {prod} puts every {n0}, {n1} and {n2} at your fingertips.",
                "Meet the {prod}: one box for every {n0} and {n1}.",
                "With the {prod}, each {n0} becomes a {n1} you can shape.",
            ),
        ),
        prod=(prod, PR),
        n0=nouns[0],
        n1=nouns[1],
        n2=nouns[2],
    ).line()
    t.line(
        f"Press {labels[0]} to start the {nouns[0].lower()}; hold {labels[1]} and turn the "
        f"{nouns[3]} knob to change it. {labels[2]} stores the {nouns[1].lower()} in one of "
        f"64 slots."
    )
    t.line()
    t.line(c.phrase("brochure.feat", ("Features", "FEATURES", "Key features", "What's new")))
    for n in nouns[3:]:
        t.line(
            c.pick(("- ", "\u2022 ", "* ")),
            n,
            c.pick((" editing", " on every pad", " with 16 steps", " memory")),
        )
    t.line()
    t.row("SPEC", "")
    t.row(labels[3], c.pick(("IN/OUT", "Type-C", "3.5 mm", "5-pin DIN")))
    t.row(labels[4], c.pick(("yes", "no", "2 x", "24-bit")))
    t.row("Weight", f"{c.rng.randint(1, 9)}.{c.rng.randint(0, 9)} kg")
    t.line()
    if c.rng.random() < 0.6:
        made = c.phrase(
            "brochure.made", ("Designed in {place} by {brand}.", "Made for {brand} in {place}.")
        )
        t.fill(made, place=loc(c.place()), brand=org(brand)).line()
    t.add("\u00a9 ", misc("2026"), " ", org(f"{brand} {c.pick(vc.ORG_FORM)}"), ". ")
    t.line(f"{nouns[0]} and {nouns[1]} are trademarks of their owners.")


# --------------------------------------------------------------------- letters and minutes


def letter(t: Text, c: Cast) -> None:
    sender, to = c.person(), c.person()
    o_from, o_to = c.org(), c.org()
    t.line(org(o_from))
    t.line(loc(c.place()))
    t.line()
    t.line(misc(c.date()))
    t.line()
    t.line(per(to.full))
    t.line(c.pick(("Director of Operations", "Head of Procurement", "Secretary")))
    t.line(org(o_to))
    t.line()
    form = c.variant("letter.greet", 3)
    if form == 0:
        t.line("Dear ", to.title, " ", per(to.short), ",")
    elif form == 1:
        t.line("Dear ", per(to.full), ",")
    else:
        t.line("Dear ", per(to.given), ",")
    t.line()
    other = c.person()
    t.fill(
        c.phrase(
            "letter.body",
            (
                "Thank you for your letter of {date} about the contract with {org}. ",
                "Further to our meeting in {place}, I write about the contract with {org}. ",
                "I am writing on behalf of {org} about the supply agreement. ",
            ),
        ),
        date=misc(c.date()),
        org=org(c.company()),
        place=loc(c.place()),
    ).line()
    t.fill(
        "My colleague {o} will send the signed copies; please contact {os} directly with "
        "any questions.",
        o=per(other.full),
        os=per(other.short),
    ).line()
    t.line()
    t.line(
        c.phrase(
            "letter.close",
            ("Yours sincerely,", "Kind regards,", "Yours faithfully,", "Best wishes,"),
        )
    )
    t.line()
    t.line(per(sender.full if c.rng.random() < 0.8 else sender.full.upper()))
    t.line(c.pick(("Chief Executive", "Managing Director", "Head of Legal", "Chair")))
    t.line(org(o_from))
    if c.rng.random() < 0.6:
        t.line()
        cc = c.people(c.rng.randint(1, 3))
        t.add("cc: ")
        for i, p in enumerate(cc):
            t.add(", " if i else "", per(p.full))
        t.line()


def minutes(t: Text, c: Cast) -> None:
    o = c.org()
    people = c.people(c.rng.randint(5, 8))
    chair, sec = people[0], people[1]
    t.fill(
        c.phrase(
            "minutes.head",
            (
                "Minutes of the meeting of the board of {org}, held on {date} in {place}",
                "MINUTES - {org} committee meeting, {date}, {place}",
                "{org}: minutes of the meeting held {date} at {place}",
            ),
        ),
        org=org(o),
        date=misc(c.date()),
        place=loc(c.place()),
    ).line()
    t.line()
    t.add("Present: ", per(chair.full), " (Chair)")
    for p in people[2:-2]:
        t.add(", ", per(p.full))
    t.line()
    t.line("In attendance: ", per(sec.full), " (Secretary)")
    t.add("Apologies: ")
    for i, p in enumerate(people[-2:]):
        t.add(", " if i else "", per(p.full))
    t.line()
    t.line()
    t.line("1. Minutes of the previous meeting")
    t.line("The minutes were agreed as a true record.")
    t.line("2. Matters arising")
    speaker = c.rng.choice(people[2:-2] or people)
    t.fill(
        "{s} reported on the contract with {org2}. The board noted the report.",
        s=per(speaker.short),
        org2=org(c.company()),
    ).line()
    t.line("3. Finance")
    t.fill(
        "{s} presented the accounts; the budget of {money} was approved.",
        s=per(sec.short),
        money=misc(c.money()),
    ).line()
    t.add(c.phrase("minutes.action", ("ACTION: ", "Action: ", "Action - ")))
    t.line(per(speaker.short.upper() if c.rng.random() < 0.4 else speaker.short))
    t.line("4. Date of next meeting")
    t.line(misc(c.date()))
    t.line()
    t.line("Signed: ________ (Chair)  ", per(chair.full))


# --------------------------------------------------------------------- names in capitals


LINES = (
    "Thank you. We SHOULD start with the figures.",
    "The Stop button was pressed twice; then PLAY.",
    "I agree with the Chair on this point.",
    "Next slide, please.",
    "The song was on Track 4 of the Sequence, not the Pattern.",
    "Yes. The Board said NO to that in March.",
)


def caps_list(t: Text, c: Cast) -> None:
    form = c.variant("caps.form", 3)
    if form == 0:
        t.line(c.phrase("caps.donors", ("DONORS", "OUR SUPPORTERS", "THANK YOU TO OUR DONORS")))
        t.row("NAME", "AMOUNT")
        for _ in range(c.rng.randint(6, 14)):
            if c.rng.random() < 0.25:
                donor = c.registered() if c.rng.random() < 0.6 else c.company()
                t.row(org(donor.upper()), misc(c.money(1, 50, plain=True)))
            elif c.rng.random() < 0.08:
                t.row("ANONYMOUS", misc(c.money(1, 50, plain=True)))
            else:
                p = c.person()
                t.row(per(p.full.upper()), misc(c.money(1, 50, plain=True)))
    elif form == 1:
        t.line("SPEAKERS")
        speakers = c.people(c.rng.randint(2, 4))
        for p in speakers:
            t.line(per(p.full.upper()), ", ", org(c.org()))
        t.line()
        for _ in range(c.rng.randint(3, 6)):
            p = c.rng.choice(speakers)
            said = c.pick(LINES)
            t.line(per(p.short.upper()), ": ", said)
    else:
        t.line(c.phrase("caps.roll", ("ROLL OF HONOUR", "PRIZE WINNERS", "GRADUATES")))
        for _ in range(c.rng.randint(6, 12)):
            p = c.person()
            t.row(per(p.inverted.upper()), c.pick(("FIRST", "MERIT", "DISTINCTION", "PASS")))


# ------------------------------------------------------------------ more prose and tables


def appointments(t: Text, c: Cast) -> None:
    """People moves: a person between two organisations, one of them named after people."""
    t.line(c.phrase("appointments.head", ("APPOINTMENTS", "People moves", "On the move")))
    t.line()
    for _ in range(c.rng.randint(2, 4)):
        p, before = c.person(), c.person()
        o, frm = c.org(), c.firm() if c.rng.random() < 0.5 else c.org()
        role = c.pick(
            (
                "chief financial officer",
                "head of research",
                "managing director",
                "general counsel",
                "chair",
                "head of sales for Europe",
            )
        )
        form = c.variant("appointments.form", 4)
        if form == 0:
            t.fill(
                "{o} has appointed {p} as {role}. {ps} joins from {frm}, where {pr} was "
                "head of strategy, and succeeds {b}, who retires in {when}.",
                o=org(o),
                p=per(p.full),
                role=role,
                ps=per(p.short),
                frm=org(frm),
                pr="she" if p.sex == "f" else "he",
                b=per(before.full),
                when=misc(c.pick(vc.MONTHS)),
            )
        elif form == 1:
            t.fill(
                "{p} becomes {role} of {o} on {date}. {ps}, previously at {frm}, takes "
                "over from {bs}.",
                p=per(p.full),
                role=role,
                o=org(o),
                date=misc(c.date()),
                ps=per(p.short),
                frm=org(frm),
                bs=per(before.full),
            )
        elif form == 2:
            t.fill(
                "{frm} said {p} would leave to join {o}. {title} {ps} was not available.",
                frm=org(frm),
                p=per(p.full),
                o=org(o),
                title=p.title,
                ps=per(p.short),
            )
        else:
            t.fill(
                "{P} ({o}) - {role}, from {frm}.",
                P=per(p.sports),
                o=org(o),
                role=role,
                frm=org(frm),
            )
        t.line()
        t.line()


def markets(t: Text, c: Cast) -> None:
    """Companies in a table, often in capitals: none of them is a person."""
    t.line(c.phrase("markets.head", ("MARKETS", "Shares", "Stock market: biggest movers")))
    form = c.variant("markets.form", 3)
    t.row(*(("COMPANY", "PRICE", "CHG", "%") if form != 1 else ("", "Close", "Change", "Vol")))
    caps = form == 0 or c.rng.random() < 0.3
    for _ in range(c.rng.randint(6, 12)):
        r = c.rng.random()
        name = c.company() if r < 0.5 else c.firm() if r < 0.75 else c.registered()
        if c.rng.random() < 0.3:  # listings drop the legal form
            name = name.rsplit(" ", 1)[0] if len(name.split()) > 2 else name
        price = c.rng.randint(10, 9000) / 10
        chg = c.rng.randint(-300, 300) / 10
        t.row(
            org(name.upper() if caps else name),
            f"{price:.1f}",
            f"{chg:+.1f}",
            f"{100 * chg / price:+.1f}",
        )
    t.line()
    p = c.person()
    t.fill(
        "{p}, a strategist at {firm}, said the {idx} had its best week since {month}.",
        p=per(p.full),
        firm=org(c.firm()),
        idx=c.pick(("index", "market", "Index")),
        month=misc(c.pick(vc.MONTHS)),
    ).line()


def candidates(t: Text, c: Cast) -> None:
    """Election results: people and parties in a table, places in its heading."""
    place = c.place()
    t.line(
        c.phrase("candidates.head", ("Election results", "RESULT", "Declaration of result")),
        ": ",
        loc(place.upper() if c.rng.random() < 0.3 else place),
    )
    form = c.variant("candidates.form", 3)
    parties = [c.party() for _ in range(3)]
    t.row(*(("Candidate", "Party", "Votes", "%") if form != 2 else ("NAME", "PARTY", "VOTES")))
    votes = sorted((c.rng.randint(200, 30000) for _ in range(c.rng.randint(3, 7))), reverse=True)
    total = sum(votes)
    for i, v in enumerate(votes):
        p = c.person()
        party: str | tuple[str, str] = org(parties[i % 3]) if i < 5 else "Independent"
        if form == 0:
            t.row(per(p.full), party, f"{v:,}", f"{100 * v / total:.1f}")
        elif form == 1:
            t.row(per(p.inverted), party, f"{v:,}", f"{100 * v / total:.1f}")
        else:
            t.row(per(p.inverted.upper()), party, str(v))
    t.line(f"Turnout {c.rng.randint(30, 80)}%. Electorate {c.rng.randint(20, 90) * 1000:,}.")
    w = c.person()
    t.fill("Returning officer: {w}", w=per(w.full)).line()


def profile(t: Text, c: Cast) -> None:
    """A feature: one person introduced in full, then by the surname alone many times, with
    the words of the trade in lower case and in capitals."""
    p, q = c.person(), c.person()
    club, brand = c.club(), c.brand()
    prod = c.product(brand)
    t.line(c.phrase("profile.head", ("PROFILE", "The interview", "Feature")))
    headline(
        t,
        c,
        "{P}: the {what} who made {place} listen",
        P=per(p.full),
        what=c.pick(("producer", "striker", "engineer", "founder")),
        place=loc(c.place()),
    )
    t.line()
    sents: tuple[str, ...] = (
        "{p} was nine when she first heard a song on the radio that she could not forget.",
        "{ps} grew up in {place}, where her father ran a shop selling the {prod}.",
        "Today {ps} plays for {club} and writes music on the side; the Track and Song "
        "buttons on her sampler are worn smooth.",
        '"I record a track, then I play it back until it is right," {ps} says.',
        "{ps}'s coach, {q}, says she is the hardest worker he has seen.",
        "{qs} first saw {ps} play at a youth tournament in {place2}.",
        "It was {qs} who sent her to {club}.",
        "Ask {ps} about the {brand} deal and she laughs.",
        '"PLAY is the only button I need," {ps} says, pointing at the Sequence screen.',
    )
    if p.sex == "m":
        swap = {"she": "he", "her": "his"}
        sents = tuple(re.sub(r"\b(she|her)\b", lambda m: swap[m.group(1)], x) for x in sents)
    ok = variants("profile.sentences", len(sents), c.half)
    keep = [i for i in range(len(sents)) if i in ok or i in (0, 4)]
    values: dict[str, Piece] = {
        "p": per(p.full),
        "ps": per(p.short),
        "q": per(q.full),
        "qs": per(q.short),
        "club": org(club),
        "brand": org(brand),
        "prod": (prod, PR),
        "place": loc(c.place()),
        "place2": loc(c.place()),
    }
    seen_q = False
    for n, i in enumerate(keep):
        x = sents[i]
        if "{qs}" in x and not seen_q:
            x = x.replace("{qs}", "{q}", 1)
        seen_q = seen_q or "{q" in x
        if n == 0:
            x = x.replace("{ps}", "{p}", 1)
        t.fill(x, **values)
        t.add("\n" if n % 3 == 2 else " ")
    t.line()


def ui(t: Text, c: Cast) -> None:
    """Screens, menus and release notes: capitalised words and labels in capitals, a product
    and its maker, and at most one person (the registered owner)."""
    brand = c.brand()
    prod = c.product(brand)
    nouns = c.rng.sample(vc.COPY_NOUNS, 5)
    labels = c.rng.sample(vc.UI_LABELS, 4)
    form = c.variant("ui.form", 3)
    if form == 0:
        t.line(c.pick(("File\tEdit\tView\tTools\tHelp", "FILE  EDIT  VIEW  HELP")))
        t.line(f"Settings > {nouns[0]} > {nouns[1]} {c.pick(('Level', 'Mode', 'Time'))}")
        for n in nouns[2:]:
            t.row(n, c.pick(("On", "Off", "Auto", "ON", "OFF", "High", "Low")))
        t.row(*labels[:2])
        t.line("About this device: ", (prod, PR), " by ", org(brand))
        if c.rng.random() < 0.5:
            owner = c.person()
            t.line(c.pick(("Registered to: ", "Owner: ", "Licensed to ")), per(owner.full))
    elif form == 1:
        version = f"{c.rng.randint(1, 9)}.{c.rng.randint(0, 12)}.{c.rng.randint(0, 9)}"
        t.line((prod, PR), " firmware ", version, " - release notes")
        t.line(f"- Fixed: {nouns[0]} Mode stopped when {nouns[1]} 16 was armed.")
        t.line(f"- New: {labels[0]} and {labels[1]} work in the {nouns[2]} view.")
        t.line(
            f"- Changed: hold {labels[2]} to copy a {nouns[3].lower()} to another "
            f"{nouns[4].lower()}."
        )
        t.line("Thanks to the ", org(brand), " community for the reports.")
    else:
        t.line(c.pick(("Error", "WARNING", "Notice")))
        t.line(
            f"The {nouns[0]} could not be saved. Check the {nouns[1]} and press {labels[0]} "
            f"to try again, or {labels[1]} to cancel."
        )
        t.row("OK", "Cancel", "Retry")
        t.line(
            "Support: ",
            org(brand),
            " customer care, ",
            (prod, PR),
            " manual p. ",
            str(c.rng.randint(4, 90)),
        )


def votes(t: Text, c: Cast) -> None:
    """A roll-call vote of a council: members in a column, often family name first and in
    capitals, with a title before some that is not part of the name."""
    body = c.body() if c.rng.random() < 0.5 else c.org()
    t.fill(
        c.phrase(
            "votes.head",
            ("{o}: record of votes, {date}", "ROLL CALL - {o}", "Division list: {o}, {date}"),
        ),
        o=org(body),
        date=misc(c.date()),
    ).line()
    t.line(
        c.pick(
            (
                "Motion: to approve the budget",
                "Item 4 - Planning application",
                "Resolution 12: Harbour works",
            )
        )
    )
    form = c.variant("votes.form", 3)
    t.row(*(("Member", "Vote") if form != 2 else ("MEMBER", "WARD", "VOTE")))
    tally = {"Aye": 0, "No": 0, "Abstain": 0}
    for p in c.people(c.rng.randint(6, 14)):
        v = c.pick(tuple(tally))
        tally[v] += 1
        if form == 0:
            t.row(["Cllr ", per(p.full)], v)
        elif form == 1:
            t.row(per(p.inverted), v.upper())
        else:
            t.row(per(p.inverted.upper()), loc(c.place()), v.upper())
    t.line(", ".join(f"{k} {n}" for k, n in tally.items()), ". ", c.pick(("Carried.", "Lost.")))


def expenses(t: Text, c: Cast) -> None:
    """Payments to people and firms in one table: the payee column holds both."""
    o = c.body() if c.rng.random() < 0.5 else c.org()
    t.line(
        org(o),
        c.phrase("expenses.head", (" - payments over £500", ": expenditure", " spending report")),
    )
    form = c.variant("expenses.form", 3)
    t.row(
        *(
            ("Date", "Payee", "Purpose", "Amount")
            if form != 1
            else ("DATE", "SUPPLIER", "DESCRIPTION", "NET")
        )
    )
    for _ in range(c.rng.randint(6, 14)):
        r = c.rng.random()
        payee: tuple[str, str]
        if r < 0.4:
            p = c.person()
            payee = per(p.full.upper() if form == 1 else p.inverted if form == 2 else p.full)
        elif r < 0.6:
            payee = org(c.firm())
        else:
            name = c.company() if c.rng.random() < 0.6 else c.registered()
            payee = org(name.upper() if form == 1 else name)
        what = c.pick(
            (
                "Travel",
                "Consultancy",
                "Catering",
                "Legal fees",
                "Printing",
                "Room hire",
                "Software licence",
                "Training",
                "TRAVEL",
                "Grant",
            )
        )
        t.row(misc(c.date()), payee, what, misc(c.money(1, 90, plain=True)))
    approver = c.person()
    t.line("Approved by ", per(approver.full), ", ", c.pick(("Finance Director", "Treasurer")))


def transcript(t: Text, c: Cast) -> None:
    """A hearing or interview transcript: speaker labels in capitals, a title before some."""
    chair, witness, member = c.person(), c.person(), c.person()
    o = c.org()
    t.fill(
        c.phrase(
            "transcript.head",
            ("Transcript of evidence - {o}", "{o}: hearing, {date}", "VERBATIM RECORD"),
        ),
        o=org(o),
        date=misc(c.date()),
    ).line()
    t.line()
    t.add("Witness: ", per(witness.full), ", ", c.pick(("Chief Executive", "Director")), ", ")
    t.line(org(c.company()))
    t.line()
    form = c.variant("transcript.form", 3)

    def label(p: Person) -> list[Piece]:
        if form == 0:
            return [p.title.upper() + " ", per(p.short.upper()), ": "]
        if form == 1:
            return [per(p.full.upper()), ": "]
        return [per(p.short), ": "]

    lines = (
        "Thank you for coming. Can you tell us when the board first heard of this?",
        "In {month}. The Track record of the project was good until then.",
        "And who at {o2} signed the contract?",
        "I did, with {x}. We both read it.",
        "Is {xs} still with the company?",
        "No. That contract ended in the spring. I have the letter here.",
        "Press PLAY on the recording, please. Thank you.",
    )
    x = c.person()
    said: list[Person] = [chair, witness, member, witness, chair, witness, member]
    for who, line_ in zip(said, lines, strict=True):
        if form == 2 and who is chair:
            t.add("THE CHAIR: ")
        else:
            t.add(*label(who))
        t.fill(
            line_, month=misc(c.pick(vc.MONTHS)), o2=org(c.org()), x=per(x.full), xs=per(x.short)
        ).line()


# ------------------------------------------------------------------------------- registry


Write = Callable[[Text, Cast], None]
KINDS: dict[str, Write] = {
    "standings": standings,
    "results": results,
    "lineup": lineup,
    "scorecard": scorecard,
    "race": race,
    "medals": medals,
    "cities": cities,
    "news": news,
    "captions": captions,
    "board": board,
    "company": company,
    "brochure": brochure,
    "letter": letter,
    "minutes": minutes,
    "caps": caps_list,
    "appointments": appointments,
    "markets": markets,
    "candidates": candidates,
    "profile": profile,
    "ui": ui,
    "votes": votes,
    "expenses": expenses,
    "transcript": transcript,
}
