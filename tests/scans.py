"""Varied, realistic scanned pages with known text: a corpus for measuring how readers read
our text layer (character error rate per page).

Two halves that share nothing but the machinery: ``dev`` (tune on it) and ``held-out`` (never
tune on it). They differ in their sentence banks, names, date and amount formats, page
layouts, fonts (where installed; see below), glyph widths and every defect range.

Kinds of page (``Page.kind``), each a scanner's or a phone's way of getting a page wrong:

``skewed``   letter, 300 dpi grey, turned by 0.5°..3° either way, JPEG in a PDF (or a JPEG).
``rotated``  turned 90, 180 or 270 degrees clockwise, sometimes with a small skew too.
``faint``    worn toner: light grey low-contrast ink, blurred, streaky.
``fax``      bilevel 204x196 or 200x200 dpi, speckled, with a fax header line; two-page
             documents, one as a multi-page group-4 TIFF and one as a CCITT G4 image PDF.
``photo``    a phone photo of a page: RGB, keystoned, unevenly lit, on a darker desk.
``small``    8 pt (held-out: 7.5 or 8 pt) small print.
``mixed``    a big bold heading over two columns, or over a ruled table, with body text.

``Page.truth`` is exactly the text drawn, line by line in reading order (two columns: the
whole left column, then the right; tables: row by row, cells left to right, joined by a
space; a fax's header line first). Nothing else that could be read as text is drawn; what
is drawn besides (rules, table grids, dust, fax speckle and streaks, highlighter, punched
holes, a fold's shadow, a desk around a photo) is not text.

``Page.params`` records the defects, so a measurement can undo them: ``rotate`` is how far
the page was turned clockwise (turn the image counter-clockwise by it to read it) and
``skew`` is the counter-clockwise tilt of the text on the upright page, in degrees; photos
add ``quad``, the page's corners (top-left, top-right, bottom-right, bottom-left) in image
pixels. ``dpi`` is (x, y).

Fonts come from fonts-dejavu-core (DejaVu Sans, Serif, Sans Mono and their bolds). Where
other families are installed (DejaVu condensed, Liberation, FreeFont) a page may use them;
where not, it falls back to the nearest core family, so pages then differ only in their
glyphs. Each half also stretches glyph widths by its own disjoint factors, so the halves'
letter shapes differ even with only the core fonts.
"""

from __future__ import annotations

import io
import math
import os
import random
import re
import struct
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pikepdf
from pikepdf import Array, Dictionary, Name
from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont, ImageOps, TiffImagePlugin

from pressroom.synth import FONT_DIRS, find_font

KINDS = ("skewed", "rotated", "faint", "fax", "photo", "small", "mixed")
HALVES = ("dev", "held-out")


@dataclass(frozen=True)
class Page:
    name: str  # unique, e.g. "dev-skewed-1"
    kind: str  # one of KINDS
    half: str  # "dev" | "held-out"
    truth: str  # the text drawn, lines in reading order joined with newlines
    params: dict[str, Any] = field(hash=False)  # the defects, e.g. {"skew": -1.7, "rotate": 180}


@dataclass(frozen=True)
class Document:
    path: Path  # the file written
    pages: tuple[Page, ...]


def generate(
    folder: Path,
    half: str,
    *,
    per_kind: int = 1,
    seed: int = 0,
    kinds: Sequence[str] | None = None,
) -> list[Document]:
    """Write ``per_kind`` instances of each kind into ``folder``; the same seed, the same files.

    Each instance is one document, except a fax instance, which is two (a TIFF and a PDF of
    two pages each). Every page draws its own random numbers from (half, kind, index, seed),
    so a subset of kinds gives the same pages as the full set.
    """
    if half not in HALVES:
        raise ValueError(f"half must be one of {HALVES}, not {half!r}")
    chosen = tuple(dict.fromkeys(KINDS if kinds is None else kinds))  # each kind once
    unknown = [k for k in chosen if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown kinds {unknown}; known: {KINDS}")
    folder.mkdir(parents=True, exist_ok=True)
    jobs = [
        _Job(
            folder,
            half,
            kind,
            index,
            random.Random(f"pressroom-scans/{half}/{kind}/{index}/{seed}"),
            KNOBS[half],
            BANKS[half],
        )
        for kind in chosen
        for index in range(per_kind)
    ]
    # Pillow and numpy let go of the GIL for the heavy lifting, so threads pay; each job
    # has its own random streams, so the order they run in changes nothing.
    workers = max(1, min(len(jobs), os.cpu_count() or 1, 8))
    with ThreadPoolExecutor(workers) as pool:
        made = list(pool.map(lambda job: _MAKERS[job.kind](job), jobs))
    return [doc for docs in made for doc in docs]


# --------------------------------------------------------------------------------------------
# The two halves' knobs. Ranges are (low, high), drawn uniformly unless said otherwise.

Range = tuple[float, float]


@dataclass(frozen=True)
class Knobs:
    families: tuple[str, ...]  # body font families (see FAMILIES), with core fallbacks
    styles: tuple[str, ...]  # layouts of ordinary pages
    hstretch: tuple[Range, ...]  # glyph width factor: one range picked, then a value in it
    size_pt: Range  # body text
    leading: Range  # line pitch / font size
    margin_in: Range
    a4: float  # chance of an A4 page rather than letter (never for "skewed")
    scan_dpi: tuple[int, ...]  # resolutions of grey scans other than "skewed" and "small"
    blur: Range  # scanner optics, box-blur radius in pixels at 300 dpi
    gamma: Range  # tone curve on the ink edges: >1 spreads the ink (bolder), <1 thins it
    ink: Range  # grey level of solid ink
    paper: Range  # grey level of the paper
    noise: Range  # sensor noise sigma, grey levels
    jpeg: tuple[int, int]
    specks: tuple[int, int]  # dust specks per page
    lid_shadow: float  # chance of a dark band along one edge (the scanner lid)
    highlight: float  # chance of highlighter strokes over a few lines
    holes: float  # chance of punched holes in the left margin
    fold: float  # chance of a fold line across the page
    skew_sign: int  # sign of the first skewed page's skew; it alternates after
    rotations: tuple[int, ...]  # clockwise turns of "rotated", cycled
    rotated_skew: tuple[float, Range]  # chance of a skew on a rotated page, and its size
    faint_ink: Range
    faint_paper: Range
    faint_blur: Range
    faint_streak: Range  # how much the worn-drum streaks weaken the ink
    small_pt: tuple[float, ...]
    fax_dpi: tuple[tuple[int, int], tuple[int, int]]  # (TIFF, PDF) resolutions
    fax_skew: Range
    fax_specks: Range  # black speckle, fraction of pixels
    fax_threshold: Range
    fax_streak: float  # chance of a vertical streak (dirty scanner glass)
    fax_cover: float  # chance the first page is a cover sheet
    photo_frames: tuple[tuple[int, int], ...]  # width, height in pixels (portrait)
    photo_fill: Range  # page height / frame height
    photo_keystone: Range  # top edge shorter than the bottom by this fraction
    photo_turn: Range  # in-plane turn, degrees, either way
    photo_vignette: Range
    photo_gradient: Range
    photo_blur: Range  # pixels
    photo_jpeg: tuple[int, int]
    heading_pt: Range


KNOBS: dict[str, Knobs] = {
    "dev": Knobs(
        families=("dejavu-serif", "dejavu-sans", "dejavu-sans-condensed", "liberation-serif"),
        styles=("letter", "memo", "report"),
        hstretch=((1.0, 1.0), (0.96, 1.04)),
        size_pt=(9.0, 13.0),
        leading=(1.15, 1.6),
        margin_in=(0.75, 1.25),
        a4=0.0,
        scan_dpi=(300, 300, 200),
        blur=(0.5, 1.0),
        gamma=(0.7, 1.6),
        ink=(10, 50),
        paper=(232, 250),
        noise=(2.0, 5.0),
        jpeg=(65, 88),
        specks=(0, 25),
        lid_shadow=0.3,
        highlight=0.25,
        holes=0.15,
        fold=0.15,
        skew_sign=1,
        rotations=(90, 180, 270),
        rotated_skew=(0.5, (0.2, 1.2)),
        faint_ink=(155, 178),
        faint_paper=(236, 248),
        faint_blur=(0.8, 1.2),
        faint_streak=(0.0, 0.2),
        small_pt=(8.0,),
        fax_dpi=((204, 196), (200, 200)),
        fax_skew=(0.0, 0.6),
        fax_specks=(0.0003, 0.0008),
        fax_threshold=(115, 140),
        fax_streak=0.0,
        fax_cover=0.5,
        photo_frames=((3000, 4000), (2448, 3264)),
        photo_fill=(0.78, 0.9),
        photo_keystone=(0.01, 0.04),
        photo_turn=(0.0, 2.0),
        photo_vignette=(0.15, 0.3),
        photo_gradient=(0.05, 0.15),
        photo_blur=(0.6, 1.0),
        photo_jpeg=(78, 85),
        heading_pt=(16.0, 20.0),
    ),
    "held-out": Knobs(
        families=("dejavu-mono", "dejavu-serif-condensed", "liberation-sans", "free-serif"),
        styles=("article", "notice", "minutes"),
        hstretch=((0.9, 0.95), (1.05, 1.1)),
        size_pt=(9.0, 13.0),
        leading=(1.15, 1.75),
        margin_in=(0.65, 1.1),
        a4=0.6,
        scan_dpi=(300, 200, 240),
        blur=(0.7, 1.3),
        gamma=(0.6, 2.0),
        ink=(30, 70),
        paper=(220, 242),
        noise=(3.0, 7.0),
        jpeg=(50, 80),
        specks=(10, 60),
        lid_shadow=0.6,
        highlight=0.4,
        holes=0.35,
        fold=0.4,
        skew_sign=-1,
        rotations=(270, 180, 90),
        rotated_skew=(0.6, (0.3, 1.5)),
        faint_ink=(165, 190),
        faint_paper=(226, 242),
        faint_blur=(1.0, 1.5),
        faint_streak=(0.15, 0.35),
        small_pt=(7.5, 8.0),
        fax_dpi=((200, 200), (204, 196)),
        fax_skew=(0.2, 1.0),
        fax_specks=(0.0006, 0.0015),
        fax_threshold=(105, 150),
        fax_streak=0.5,
        fax_cover=0.3,
        photo_frames=((2736, 3648), (2268, 3024), (1944, 2592)),
        photo_fill=(0.72, 0.84),
        photo_keystone=(0.03, 0.07),
        photo_turn=(1.0, 4.0),
        photo_vignette=(0.25, 0.45),
        photo_gradient=(0.1, 0.25),
        photo_blur=(1.0, 1.6),
        photo_jpeg=(72, 82),
        heading_pt=(18.0, 24.0),
    ),
}

# Standalone image files among the ordinary PDFs: the format of instance i is
# FORMATS[kind][(i + offset) % len], the offset 0 for dev and 1 for held-out.
FORMATS = {
    "skewed": ("pdf", "jpeg", "pdf"),
    "rotated": ("png", "pdf"),
    "faint": ("pdf", "tiff"),
    "photo": ("jpeg", "pdf"),
    "small": ("tiff", "pdf"),
    "mixed": ("pdf", "png"),
}

# --------------------------------------------------------------------------------------------
# Fonts

FONT_SEARCH = (
    *FONT_DIRS,
    "/usr/share/fonts/truetype/liberation",
    "/usr/share/fonts/truetype/liberation2",
    "/usr/share/fonts/truetype/freefont",
)

# family: (regular file, bold file, fallback family or None for the fonts-dejavu-core ones)
FAMILIES: dict[str, tuple[str, str, str | None]] = {
    "dejavu-serif": ("DejaVuSerif.ttf", "DejaVuSerif-Bold.ttf", None),
    "dejavu-sans": ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", None),
    "dejavu-mono": ("DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf", None),
    "dejavu-sans-condensed": (
        "DejaVuSansCondensed.ttf",
        "DejaVuSansCondensed-Bold.ttf",
        "dejavu-sans",
    ),
    "dejavu-serif-condensed": (
        "DejaVuSerifCondensed.ttf",
        "DejaVuSerifCondensed-Bold.ttf",
        "dejavu-serif",
    ),
    "liberation-serif": ("LiberationSerif-Regular.ttf", "LiberationSerif-Bold.ttf", "dejavu-serif"),
    "liberation-sans": ("LiberationSans-Regular.ttf", "LiberationSans-Bold.ttf", "dejavu-sans"),
    "free-serif": ("FreeSerif.ttf", "FreeSerifBold.ttf", "dejavu-serif"),
}


@lru_cache(maxsize=64)
def font_file(family: str, bold: bool = False) -> Path:
    """The family's file if installed, else its fonts-dejavu-core fallback's."""
    regular, heavy, fallback = FAMILIES[family]
    name = heavy if bold else regular
    for folder in FONT_SEARCH:
        path = Path(folder) / name
        if path.is_file():
            return path
    if fallback is None:
        return find_font(name)  # raises, naming the package to install
    return font_file(fallback, bold)


def _face(path: Path, px: int) -> ImageFont.FreeTypeFont:
    """A loaded face, one per thread: a FreeType face is not safe to share between threads."""
    return _thread_face(path, px, threading.get_ident())


@lru_cache(maxsize=512)
def _thread_face(path: Path, px: int, thread: int) -> ImageFont.FreeTypeFont:
    # the basic layout, with or without libraqm: the same line breaks (and truth) everywhere
    return ImageFont.truetype(str(path), px, layout_engine=ImageFont.Layout.BASIC)


# --------------------------------------------------------------------------------------------
# Text: two banks of sentence templates with half-specific slot fillers.

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


def _pick(options: Sequence[str]) -> Callable[[random.Random], str]:
    return lambda rng: rng.choice(options)


def _money(rng: random.Random, low: float, high: float) -> float:
    """Log-uniform: small sums as common as large ones."""
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def _dev_amount(rng: random.Random, low: float = 900, high: float = 250_000) -> str:
    return f"{rng.choice('£$€')}{_money(rng, low, high):,.2f}"


def _held_amount(rng: random.Random, low: float = 40_000, high: float = 9_000_000) -> str:
    value = _money(rng, low, high)
    sym = rng.choice(("$", "£", "€"))
    if value >= 1_000_000:
        return f"{sym}{value / 1e6:.1f} million"
    return f"{sym}{round(value, -2):,.0f}"


def _dev_date(rng: random.Random) -> str:
    return f"{rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.randint(2024, 2026)}"


def _held_date(rng: random.Random) -> str:
    return f"{rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(2023, 2026)}"


def _dev_ref(rng: random.Random) -> str:
    return rng.choice(
        (
            f"INV-{rng.randint(2024, 2026)}-{rng.randint(0, 9999):04d}",
            f"PO {rng.randint(10000, 99999)}",
            f"ACC/{rng.randint(100, 999)}/{rng.choice('ABCDEFGHJK')}{rng.choice('LMNPRSTW')}",
            f"CR-{rng.randint(10000, 99999)}",
        )
    )


def _held_case(rng: random.Random) -> str:
    return f"No. {rng.randint(20, 25)}-CV-{rng.randint(1000, 9999)}"


def _held_lot(rng: random.Random) -> str:
    return rng.choice(
        (f"Lot {rng.randint(1, 99)}{rng.choice('ABC')}", f"HB{rng.randint(100000, 999999)}")
    )


def _held_ref(rng: random.Random) -> str:
    return f"P/{rng.randint(20, 25)}/{rng.randint(100, 999):04d}/FUL"


DEV_SENTENCES = (
    "Thank you for your letter of {date} regarding the renewal of our service agreement.",
    "Please find enclosed invoice {ref} for {amount}, payable within 30 days of receipt.",
    "Our records show that a payment of {amount} was received on {date}.",
    "The delivery to our {city} warehouse was delayed by two days because of a customs inspection.",
    "We would be grateful if you could confirm the revised delivery schedule by {date}.",
    "{name} will take over as your account manager from the beginning of next month.",
    "The quarterly review meeting has been moved to {day}, {date}, at {time} in Room 4B.",
    "Minutes of the previous meeting were approved without amendment.",
    "Any queries about this statement should be directed to our accounts team on 0113 496 0{num3}.",
    "Under clause 7.2, either party may terminate the contract with 90 days' written notice.",
    "The annual subscription will increase by {pct} to {fee} with effect from {date}.",
    "We apologise for the inconvenience and have credited {fee} to your account.",
    "Goods returned without an authorisation number cannot be accepted.",
    "Stock of item no. {sku} fell below the reorder point of {num} units last week.",
    "Please sign both copies of the agreement and return one to this office.",
    "Purchase order {po} covers 250 cartons of A4 copier paper and 40 toner cartridges.",
    "Travel expenses must be claimed on form EX-12 together with the original receipts.",
    "Staff are reminded that the car park will be closed for resurfacing on {date}.",
    "Sales in the {region} region rose by {pct} compared with the same quarter last year.",
    "The board approved a budget of {amount} for the refurbishment of the {city} office.",
    "Your policy number {ref} remains valid until midnight on {date}.",
    "If you have already made this payment, please disregard this reminder.",
    "A late payment fee of {fee} will be added to balances outstanding after 60 days.",
    "The new telephone system goes live on Monday; extension numbers will not change.",
    "{name} asked whether the pallets could be collected before 10:00 on Friday.",
    "All visitors must sign in at reception and wear a badge at all times.",
    "We enclose a copy of the certificate of insurance for your files.",
    "Please note our new bank details: sort code 40-11-62, account number 7391 0428.",
    "The supplier has agreed to hold its current prices until the end of the financial year.",
    "Interviews for the post of payroll assistant will be held on {date}.",
    "Overtime worked during the stocktake will be paid at time and a half.",
    "According to the carrier, consignment {ref} was signed for by J. Walsh at {time}.",
    "The audit found no material errors, although three invoices lacked an approval signature.",
    "Holiday requests for August should reach your line manager by the end of May.",
    "We regret that the model you ordered has been discontinued by the manufacturer.",
    "A replacement unit, serial {serial}, was dispatched by courier this morning.",
    "Net profit for the year was {amount}, an increase of {pct} on the previous year.",
    "The fire alarm is tested every Wednesday at 11:00; no action is required.",
    "Kindly quote reference {ref} in all future correspondence.",
    "The lease on Unit 7, {city} Business Park, expires on {date}.",
    "Our engineer will call on {day} between 8:00 and 12:00 to service the boiler.",
    "Please allow 5 to 7 working days for the refund to appear on your statement.",
    "The conference fee of {fee} includes lunch, refreshments and the evening dinner.",
    "{name} took the minutes and will circulate them before the next meeting.",
    "Following your complaint, we have reviewed the handling of your claim in full.",
    "Attached is the signed timesheet for the week ending {date}.",
    "Unit prices quoted exclude VAT at 20% and delivery charges.",
    "The warehouse team shipped {bignum} orders in March, a record for the site.",
    "Should you wish to discuss this matter further, please do not hesitate to contact me.",
    "Our offices will be closed on {date} for the public holiday.",
    "Cheques should be made payable to {company} and crossed A/C payee only.",
    "The contract value is {amount}, of which 30% is due on signature.",
    "Outstanding items from the last audit (ref. {ref}) must be cleared by {date}.",
    "Each department is asked to reduce its stationery spending by {pct} this year.",
    "The forklift in Bay 3 is out of service until its annual inspection is complete.",
    "Please update your standing order so that it reflects the new monthly fee of {fee}.",
    "As agreed on the phone, we will waive the cancellation charge on this occasion.",
    "Two of the {num} cartons delivered on {date} arrived damaged and were refused.",
)

HELD_OUT_SENTENCES = (
    "The city council voted 7 to 2 on {date} to approve the new cycle lane on {street}.",
    "Residents packed the library hall on Tuesday evening to hear plans for the bypass.",
    "Water rates in {town} will rise by {pct} from April, the utility said in a statement.",
    "The museum, which reopened in 2019, welcomed {bignum} visitors last year.",
    "Police are appealing for witnesses after a collision on the A{road} near {town} at"
    " about {time}.",
    "Researchers at the university measured soil samples from 46 sites over three winters.",
    "The findings, published on {date}, suggest that early frost cuts yields by up to {pct}.",
    "A spokesperson for {org} declined to comment on the allegations.",
    "The court heard that the defendant had failed to file accounts for four consecutive years.",
    "Judge {surname} adjourned the hearing until {date} to allow further evidence to be filed.",
    "Tickets cost {price} for adults; children under 12 go free.",
    "The bridge, built in 1887, has been closed to heavy goods vehicles since the autumn.",
    "Planning permission was granted subject to 14 conditions, including limits on working hours.",
    "Three-bedroom houses in the area now sell for an average of {house}, agents say.",
    "The vendor is seeking offers in excess of {house} for the freehold.",
    "Turnout in the by-election was {pct}, the lowest in the ward since 1998.",
    "{person} scored twice in the second half as the home side came from behind to win 3-2.",
    "The festival programme runs from {date} and includes more than 60 free events.",
    "Scientists caution that the sample was small and the results need to be replicated.",
    "Emergency crews were called to the industrial estate shortly after {time} on Sunday.",
    "The headteacher said the new sports hall would be open to the community at weekends.",
    "Unemployment in the region fell to {pct} in the three months to June.",
    "Under the proposals, parking on the seafront would double to {price} an hour.",
    "The charity said demand for its food bank had risen sharply since January.",
    "An inquest into the death of a 71-year-old cyclist was opened and adjourned on {date}.",
    "The report, commissioned by the health board, runs to 212 pages.",
    "Shares in {org} closed 4.6% higher after the company raised its full-year forecast.",
    "Farmers say the dry spring has left hay prices at their highest level for a decade.",
    "Applications for the community grants scheme close at noon on {date}.",
    "The orchestra will perform works by Elgar and Sibelius at the Corn Exchange on Saturday.",
    "Witnesses described hearing a loud bang before smoke was seen rising from the roof.",
    "The ferry to the island will be suspended for two weeks while the pier is repaired.",
    "{person}, {age}, was elected chair of the parish council at its annual meeting.",
    "Officials estimate the repairs will cost {amount} and take at least eighteen months.",
    "The study followed {bignum} patients for an average of 6.2 years.",
    "Rainfall at the airport weather station totalled 142 mm in October, twice the average.",
    "The appeal was dismissed, and costs of {costs} were awarded to the respondent.",
    "A petition to keep the post office open has gathered more than {bignum} signatures.",
    "Temperatures are expected to fall below freezing overnight, with ice on untreated roads.",
    "The exhibition includes letters, maps and photographs donated by local families.",
    'In a statement, the trust said it was "deeply sorry" for the delays to treatment.',
    "Volunteers planted 1,200 native trees along the river bank over the weekend.",
    "The new timetable, which takes effect on {date}, adds an hourly bus to {town}.",
    "Property {lot} comprises a detached bungalow, a double garage and a large garden.",
    "The tenant is responsible for the repair of internal fixtures and fittings.",
    "Councillors will decide next month whether to sell the former bus depot for housing.",
    "Average broadband speeds in rural parishes remain below 10 Mbps, a survey found.",
    "The club confirmed that its captain will miss the rest of the season with a knee injury.",
    "The lab's new microscope can resolve structures smaller than 0.2 nanometres.",
    "A public consultation on the draft local plan will run until {date}.",
    "Objections to planning application {ref} must be lodged within 21 days.",
    "Case {case} was listed for a two-day trial beginning on {date}.",
    "Visitors are advised to book ahead, as places are limited to 40 per session.",
    "Moorland fires in the national park have burned about {acres} acres since May.",
    "{person} told the inquiry that warnings about the roof had been ignored for years.",
    "Enrolment at the college has grown by {pct} since the new campus opened.",
    "The harbour master said three fishing boats had broken their moorings in the storm.",
    "Archaeologists uncovered the remains of a Roman villa beneath the old cattle market.",
    "The price of a season ticket will be frozen at {price} for the coming year.",
)


@dataclass(frozen=True)
class Bank:
    sentences: tuple[str, ...]
    fillers: dict[str, Callable[[random.Random], str]]
    headings: tuple[str, ...]
    people: tuple[str, ...]  # full names, for signatures and lists
    titles: tuple[str, ...]  # job titles
    organisations: tuple[str, ...]
    places: tuple[str, ...]
    streets: tuple[str, ...]
    closings: tuple[str, ...]
    postcode: Callable[[random.Random], str]
    date: Callable[[random.Random], str]

    def fill(self, template: str, rng: random.Random) -> str:
        return re.sub(r"\{(\w+)\}", lambda m: self.fillers[m.group(1)](rng), template)

    def deck(self, rng: random.Random) -> Deck:
        return Deck(self, rng)


class Deck:
    """One document's sentences: every template at most once (so a page never repeats
    itself), each filled afresh; empty once the bank is used up, which ends the text."""

    def __init__(self, bank: Bank, rng: random.Random) -> None:
        self.bank, self.rng = bank, rng
        self.left = list(bank.sentences)
        rng.shuffle(self.left)

    def take(self, n: int) -> str:
        picked, self.left = self.left[:n], self.left[n:]
        return " ".join(self.bank.fill(template, self.rng) for template in picked)


DEV_PEOPLE = (
    "Helen Novak",
    "Daniel Okafor",
    "Ingrid Lindqvist",
    "Priya Patel",
    "Sean Brennan",
    "Lucia Ferreira",
    "Omar Haddad",
    "Agnieszka Kowalczyk",
    "Pieter Achterberg",
    "Thandi Mbeki",
    "Kenji Sato",
    "Ruth Dunmore",
)
HELD_OUT_PEOPLE = (
    "Margaret Ellison",
    "Tobias Marchetti",
    "Grace Oyelaran",
    "Rafael Castellanos",
    "Declan Fitzgerald",
    "Fiona Abernethy",
    "Yuki Nakamura",
    "Samuel Quigley",
    "Ama Mensah",
    "Lars Henriksen",
    "Beatriz Moreno",
    "Colin Whitfield",
)
DEV_COMPANIES = (
    "Harbourline Freight Ltd",
    "Greenfield Office Supplies",
    "Northgate Insurance plc",
    "Alder & Finch LLP",
    "Meridian Payroll Services",
    "Cobalt Facilities Management",
    "Brightwater Catering Co.",
    "Stanmore Logistics",
    "Pennant Print & Design",
    "Oakridge Engineering Ltd",
)
HELD_OUT_ORGS = (
    "Riverside Water Authority",
    "Kestrel Biotech",
    "the Eastbrook Housing Trust",
    "Calloway Construction",
    "the Western Health Board",
    "Pembury Rovers",
    "Thornbury Parish Council",
    "the Coastal Ferry Company",
)


def _dev_postcode(rng: random.Random) -> str:
    return (
        f"{rng.choice(('LS', 'M', 'G', 'CF', 'S', 'EC'))}{rng.randint(1, 20)} "
        f"{rng.randint(1, 9)}{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}{rng.choice('ABDEFGHJLNPRTUWXY')}"
    )


def _held_postcode(rng: random.Random) -> str:
    return f"{rng.choice(('WA', 'OR', 'NS', 'ME'))} {rng.randint(10000, 99999)}"


BANKS: dict[str, Bank] = {
    "dev": Bank(
        sentences=DEV_SENTENCES,
        fillers={
            "date": _dev_date,
            "amount": _dev_amount,
            "fee": lambda rng: _dev_amount(rng, 25, 900),
            "po": lambda rng: f"PO {rng.randint(10000, 99999)}",
            "ref": _dev_ref,
            "pct": lambda rng: f"{rng.uniform(1.5, 14):.1f}%",
            "num": lambda rng: str(rng.randint(12, 480)),
            "num3": lambda rng: str(rng.randint(100, 999)),
            "bignum": lambda rng: f"{rng.randint(1100, 9800):,}",
            "time": lambda rng: f"{rng.randint(8, 17):02d}:{rng.choice((0, 15, 30, 45)):02d}",
            "name": lambda rng: (
                rng.choice(("Ms ", "Mr ", "Dr ", "Mrs ")) + rng.choice(DEV_PEOPLE).split()[-1]
            ),
            "company": _pick(DEV_COMPANIES),
            "city": _pick(
                ("Leeds", "Rotterdam", "Denver", "Glasgow", "Toronto", "Lyon", "Cardiff")
            ),
            "region": _pick(("North West", "Benelux", "Scottish", "Midlands", "Pacific")),
            "day": _pick(WEEKDAYS),
            "sku": lambda rng: f"{rng.choice(('KX', 'PL', 'MT', 'RB'))}-{rng.randint(1000, 9999)}",
            "serial": lambda rng: f"SN {rng.randint(1000, 9999)}-{rng.randint(1000, 9999)}",
        },
        headings=(
            "Renewal of service agreement",
            "Overdue account",
            "Revised delivery schedule",
            "Quarterly sales review",
            "Office relocation",
            "Annual price review",
            "Change of bank details",
            "Certificate of insurance",
            "Stocktake arrangements",
            "Car park closure",
            "Expenses policy update",
            "Replacement equipment",
        ),
        people=DEV_PEOPLE,
        titles=(
            "Accounts Manager",
            "Operations Director",
            "Office Administrator",
            "Credit Controller",
            "Head of Procurement",
            "Customer Services Lead",
        ),
        organisations=DEV_COMPANIES,
        places=("Leeds", "Rotterdam", "Denver", "Glasgow", "Toronto", "Lyon", "Cardiff"),
        streets=("Wharf Road", "Station Approach", "Mill Lane", "King Street", "Canal Side"),
        closings=("Yours sincerely,", "Kind regards,", "Yours faithfully,"),
        postcode=_dev_postcode,
        date=_dev_date,
    ),
    "held-out": Bank(
        sentences=HELD_OUT_SENTENCES,
        fillers={
            "date": _held_date,
            "amount": _held_amount,
            "house": lambda rng: _held_amount(rng, 180_000, 1_400_000),
            "costs": lambda rng: _held_amount(rng, 2_000, 60_000),
            "ref": _held_ref,
            "case": _held_case,
            "lot": _held_lot,
            "pct": lambda rng: rng.choice(
                (f"{rng.uniform(2, 40):.1f} per cent", f"{rng.randint(3, 45)} percent")
            ),
            "price": lambda rng: f"${rng.randint(2, 60)}.{rng.choice((0, 25, 50, 75)):02d}",
            "bignum": lambda rng: f"{rng.randint(1200, 68000):,}",
            "acres": lambda rng: f"{rng.randint(300, 4800):,}",
            "age": lambda rng: str(rng.randint(34, 79)),
            "road": lambda rng: str(rng.randint(30, 4999)),
            "time": lambda rng: (
                f"{rng.randint(1, 11)}.{rng.choice((5, 20, 35, 50)):02d}{rng.choice(('am', 'pm'))}"
            ),
            "person": _pick(HELD_OUT_PEOPLE),
            "surname": lambda rng: rng.choice(HELD_OUT_PEOPLE).split()[-1],
            "org": _pick(HELD_OUT_ORGS),
            "town": _pick(("Galway", "Porto", "Tacoma", "Adelaide", "Bremen", "Halifax")),
            "street": _pick(("Harbour Street", "Elm Avenue", "Quay Parade", "North Terrace")),
        },
        headings=(
            "Council backs cycle lane despite objections",
            "Bypass plans draw packed hall",
            "Water bills to rise from April",
            "Historic bridge stays shut to lorries",
            "Food bank demand soars",
            "Ferry link suspended for pier repairs",
            "Study links early frost to poorer harvests",
            "Petition to save post office gathers pace",
            "Roman villa found under cattle market",
            "College enrolment climbs again",
        ),
        people=HELD_OUT_PEOPLE,
        titles=(
            "Town Clerk",
            "Chief Executive",
            "Planning Officer",
            "Head of Communications",
            "Chair of Governors",
            "Senior Reporter",
        ),
        organisations=HELD_OUT_ORGS,
        places=("Galway", "Porto", "Tacoma", "Adelaide", "Bremen", "Halifax"),
        streets=("Harbour Street", "Elm Avenue", "Quay Parade", "North Terrace", "Glebe Road"),
        closings=("Respectfully,", "With best wishes,", "Sincerely,"),
        postcode=_held_postcode,
        date=_held_date,
    ),
}

# Table contents: rows of cells, per half.


def _dev_table(rng: random.Random, rows: int) -> list[list[str]]:
    goods = (
        "Copier paper A4, 80 gsm",
        "Toner cartridge, black",
        "Lever arch files",
        "Desk lamp, LED",
        "Pallet wrap, 500 mm",
        "Ergonomic chair",
        "Whiteboard markers",
        "Shipping labels, 100",
        "Archive boxes",
        "USB-C docking station",
        "Hand sanitiser, 5 l",
        "Safety boots, size 9",
    )
    table = [["Code", "Description", "Qty", "Unit price", "Amount"]]
    total = 0.0
    for desc in rng.sample(goods, rows):
        qty = rng.randint(1, 60)
        price = round(math.exp(rng.uniform(math.log(1.5), math.log(420))), 2)
        total += round(qty * price, 2)
        code = f"{rng.choice(('KX', 'PL', 'MT', 'RB'))}-{rng.randint(1000, 9999)}"
        table.append([code, desc, str(qty), f"{price:,.2f}", f"{qty * price:,.2f}"])
    table.append(["", "Total", "", "", f"{total:,.2f}"])
    return table


def _held_table(rng: random.Random, rows: int) -> list[list[str]]:
    if rng.random() < 0.5:
        wards = (
            "Abbey",
            "Castle",
            "Docklands",
            "Fairfield",
            "Glebe",
            "Harbour",
            "Kingsmead",
            "Moorside",
            "Priory",
            "St Anne's",
            "Westgate",
            "Woodlands",
        )
        table = [["Ward", "Electorate", "Votes cast", "Turnout"]]
        for ward in rng.sample(wards, rows):
            electorate = rng.randint(2400, 9800)
            cast = round(electorate * rng.uniform(0.18, 0.52))
            table.append([ward, f"{electorate:,}", f"{cast:,}", f"{100 * cast / electorate:.1f}%"])
        return table
    sites = ("Ashby", "Brook Farm", "Carrow", "Deane", "Elmore", "Fenwick", "Gorse Hill")
    table = [["Site", "Samples", "Mean pH", "Nitrate mg/l", "Frost days"]]
    for site in rng.sample(sites, min(rows, len(sites))):
        table.append(
            [
                site,
                str(rng.randint(6, 40)),
                f"{rng.uniform(5.2, 7.9):.2f}",
                f"{rng.uniform(3, 48):.1f}",
                str(rng.randint(12, 71)),
            ]
        )
    return table


TABLES = {"dev": _dev_table, "held-out": _held_table}


# --------------------------------------------------------------------------------------------
# Page layout: a writer that draws lines and keeps the truth in step with the pixels.


@dataclass(frozen=True)
class _Type:
    regular: Path
    bold: Path


class _Writer:
    """Draws text top-down on a white L canvas; ``lines`` is what was drawn, in order."""

    def __init__(
        self, size: tuple[int, int], dpi: float, margins: tuple[float, float, float, float]
    ) -> None:
        self.image = Image.new("L", size, 255)
        self.draw = ImageDraw.Draw(self.image)
        self.dpi = dpi
        self.left, self.top = round(margins[0]), round(margins[1])
        self.right, self.bottom = size[0] - round(margins[2]), size[1] - round(margins[3])
        self.y = float(self.top)
        self.lines: list[str] = []
        self.boxes: list[tuple[float, float, float, float]] = []  # where each line went

    def face(self, path: Path, pt: float) -> ImageFont.FreeTypeFont:
        return _face(path, max(6, round(pt * self.dpi / 72)))

    def px(self, pt: float) -> float:
        return pt * self.dpi / 72

    def wrap(
        self, text: str, face: ImageFont.FreeTypeFont, width: float, first: float = 0.0
    ) -> list[str]:
        lines: list[str] = []
        current: list[str] = []
        for word in text.split():
            avail = width - (first if not lines else 0.0)
            if current and face.getlength(" ".join([*current, word])) > avail:
                lines.append(" ".join(current))
                current = [word]
            else:
                current.append(word)
        if current:
            lines.append(" ".join(current))
        return lines

    def put(
        self,
        text: str,
        face: ImageFont.FreeTypeFont,
        x0: float,
        x1: float,
        align: str = "left",
        justify: bool = False,
    ) -> None:
        """One line at the current y, recorded in the truth."""
        width = face.getlength(text)
        if justify and " " in text:
            words = text.split(" ")
            gap = (x1 - x0 - sum(face.getlength(w) for w in words)) / (len(words) - 1)
            x = x0
            for word in words:
                self.draw.text((x, self.y), word, font=face, fill=0)
                x += face.getlength(word) + gap
            x, width = x0, x1 - x0
        else:
            x = {"center": (x0 + x1 - width) / 2, "right": x1 - width}.get(align, x0)
            self.draw.text((x, self.y), text, font=face, fill=0)
        self.lines.append(text)
        self.boxes.append((x, self.y, x + width, self.y + face.size * 1.15))

    def paragraph(
        self,
        text: str,
        face: ImageFont.FreeTypeFont,
        leading: float,
        *,
        align: str = "left",
        indent: float = 0.0,
        hang: str = "",
        before: float = 0.0,
        partial: bool = False,
        x0: float | None = None,
        x1: float | None = None,
    ) -> bool:
        """Wrap and draw ``text``; False (drawing nothing) when it does not fit, unless
        ``partial``, which draws the lines that fit. ``hang`` is a label ("3.") set in the
        left margin of the first line, the text indented by ``indent`` on every line."""
        left = self.left if x0 is None else x0
        right = self.right if x1 is None else x1
        body_left = left + (indent if hang else 0.0)
        first = 0.0 if hang else indent
        lines = self.wrap(text, face, right - body_left, first)
        if not lines:
            return False
        room = int((self.bottom - self.y - before) // leading)
        if room < len(lines) and (not partial or room <= 0):
            return False
        shown = lines[:room]
        self.y += before
        for i, line in enumerate(shown):
            start = body_left + (first if i == 0 else 0.0)
            last = i == len(lines) - 1
            if hang and i == 0:
                self.draw.text((left, self.y), hang, font=face, fill=0)
                self.put(line, face, start, right, align, justify=align == "justify" and not last)
                self.lines[-1] = f"{hang} {line}"
            else:
                self.put(line, face, start, right, align, justify=align == "justify" and not last)
            self.y += leading
        return True

    def line(
        self, text: str, face: ImageFont.FreeTypeFont, leading: float, align: str = "left"
    ) -> bool:
        if self.y + leading > self.bottom:
            return False
        self.put(text, face, self.left, self.right, align)
        self.y += leading
        return True

    def rule(self, before: float, after: float, weight: int = 3) -> None:
        y = round(self.y + before)
        self.draw.rectangle((self.left, y, self.right, y + weight - 1), fill=0)
        self.y = y + weight + after


@dataclass
class _Layout:
    """What a page's text looks like; recorded in the page's params."""

    dpi: int
    page: str  # "letter" | "A4"
    size_in: tuple[float, float]
    family: str
    type: _Type
    size_pt: float
    leading: float
    margin_in: float
    hstretch: float

    def params(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "font": self.type.regular.name,
            "size_pt": self.size_pt,
            "leading": self.leading,
            "margin_in": self.margin_in,
            "hstretch": self.hstretch,
        }


PAGE_SIZES = {"letter": (8.5, 11.0), "A4": (8.27, 11.69)}


def _r(value: float, places: int = 2) -> float:
    return round(value, places)


def _layout(job: _Job, dpi: int, *, size_pt: float | None = None, letter: bool = False) -> _Layout:
    rng, k = job.rng, job.knobs
    page = "A4" if (not letter and rng.random() < k.a4) else "letter"
    family = rng.choice(k.families)
    lo, hi = rng.choice(k.hstretch)
    return _Layout(
        dpi=dpi,
        page=page,
        size_in=PAGE_SIZES[page],
        family=family,
        type=_Type(font_file(family), font_file(family, bold=True)),
        size_pt=size_pt if size_pt is not None else _half_points(rng, k.size_pt),
        leading=_r(rng.uniform(*k.leading)),
        margin_in=_r(rng.uniform(*k.margin_in)),
        hstretch=_r(rng.uniform(lo, hi), 3),
    )


def _half_points(rng: random.Random, span: Range) -> float:
    steps = round((span[1] - span[0]) * 2)
    return span[0] + rng.randint(0, steps) / 2


def _writer(lay: _Layout, dpi: float | None = None) -> _Writer:
    """A canvas ``1 / hstretch`` as wide as the page: stretched back, glyphs get wider."""
    d = lay.dpi if dpi is None else dpi
    w, h = lay.size_in[0] * d / lay.hstretch, lay.size_in[1] * d
    m = lay.margin_in * d
    return _Writer((round(w), round(h)), d, (m / lay.hstretch, m, m / lay.hstretch, m))


def _finish(writer: _Writer, lay: _Layout, dpi: float | None = None) -> Image.Image:
    d = lay.dpi if dpi is None else dpi
    size = (round(lay.size_in[0] * d), round(lay.size_in[1] * d))
    if writer.image.size == size:
        return writer.image
    return writer.image.resize(size, Image.Resampling.BICUBIC)


# Page styles: each fills the writer with a plausible document, ending where the page (or the
# target fill) ends.


def _body(
    w: _Writer,
    lay: _Layout,
    deck: Deck,
    rng: random.Random,
    *,
    stop: float,
    align: str = "left",
    indent: float = 0.0,
    gap: float | None = None,
    numbered: bool = False,
    partial_last: bool = True,
) -> None:
    """Paragraphs of 2-5 sentences until y passes ``stop`` (a fraction of the page height)."""
    face = w.face(lay.type.regular, lay.size_pt)
    lead = w.px(lay.size_pt) * lay.leading
    between = lead * 0.6 if gap is None else gap
    limit = stop * w.image.height
    number = 1
    first = True
    while w.y < limit:
        text = deck.take(rng.randint(2, 5))
        if not text:
            break
        hang = f"{number}." if numbered else ""
        ok = w.paragraph(
            text,
            face,
            lead,
            align=align,
            indent=w.px(lay.size_pt) * 2.2 if numbered else indent,
            hang=hang,
            before=0.0 if first else between,
            partial=partial_last,
        )
        if not ok:
            break
        first = False
        number += 1


def _style_letter(w: _Writer, lay: _Layout, job: _Job, closing: bool = True) -> None:
    rng, bank = job.rng, job.bank
    deck = job.deck
    reg, bold = lay.type.regular, lay.type.bold
    size = lay.size_pt
    lead = w.px(size) * lay.leading
    company = rng.choice(bank.organisations)
    w.line(company, w.face(bold, size + rng.choice((4, 6, 8))), w.px(size + 8) * 1.3, "center")
    street = f"{rng.randint(2, 180)} {rng.choice(bank.streets)}"
    where = f"{rng.choice(bank.places)} {bank.postcode(rng)}"
    w.line(f"{street}, {where}", w.face(reg, size - 1), w.px(size) * 1.3, "center")
    w.rule(w.px(size) * 0.4, lead * 1.2, weight=2)
    w.line(bank.date(rng), w.face(reg, size), lead * 2, rng.choice(("left", "right")))
    who = rng.choice(bank.people)
    for part in (
        who,
        rng.choice(bank.organisations),
        f"{rng.randint(1, 90)} {rng.choice(bank.streets)}",
        f"{rng.choice(bank.places)} {bank.postcode(rng)}",
    ):
        w.line(part, w.face(reg, size), lead)
    w.y += lead
    w.line(f"Dear {rng.choice(('Ms', 'Mr', 'Dr'))} {who.split()[-1]},", w.face(reg, size), lead)
    w.y += lead * 0.5
    w.line(f"Re: {rng.choice(bank.headings)}", w.face(bold, size), lead * 1.5)
    if not closing:  # the letter goes on overleaf
        _body(w, lay, deck, rng, stop=1.0)
        return
    closing_room = lead * 5.5
    w.bottom -= round(closing_room)
    _body(w, lay, deck, rng, stop=rng.uniform(0.6, 1.0), partial_last=False)
    w.bottom += round(closing_room)
    w.y += lead * 0.8
    face = w.face(reg, size)
    w.line(rng.choice(bank.closings), face, lead * 3)
    w.line(rng.choice(bank.people), face, lead)
    w.line(rng.choice(bank.titles), face, lead)


def _style_memo(w: _Writer, lay: _Layout, job: _Job) -> None:
    rng, bank = job.rng, job.bank
    deck = job.deck
    reg, bold = lay.type.regular, lay.type.bold
    size = lay.size_pt
    lead = w.px(size) * lay.leading
    w.line(rng.choice(("MEMORANDUM", "Internal memo", "MEMO")), w.face(bold, size + 8), lead * 2.2)
    face = w.face(reg, size)
    people = rng.sample(bank.people, 3)
    for label, value in (
        ("To:", f"{people[0]}, {rng.choice(bank.titles)}"),
        ("From:", people[1]),
        ("Cc:", people[2]),
        ("Date:", bank.date(rng)),
        ("Subject:", rng.choice(bank.headings)),
    ):
        w.line(f"{label} {value}", face, lead)
    w.rule(lead * 0.3, lead, weight=3)
    _body(w, lay, deck, rng, stop=rng.uniform(0.55, 1.0))


def _style_report(w: _Writer, lay: _Layout, job: _Job) -> None:
    rng, bank = job.rng, job.bank
    deck = job.deck
    reg, bold = lay.type.regular, lay.type.bold
    size = lay.size_pt
    lead = w.px(size) * lay.leading
    w.line(rng.choice(bank.headings), w.face(bold, size + 6), w.px(size + 6) * 1.6)
    w.line(f"{rng.choice(bank.organisations)}, {bank.date(rng)}", w.face(reg, size), lead * 1.8)
    heads = (
        "Background",
        "Summary",
        "Current position",
        "Costs",
        "Next steps",
        "Recommendations",
    )
    face = w.face(reg, size)
    for n, head in enumerate(rng.sample(heads, 4), start=1):
        if not w.line(f"{n}. {head}", w.face(bold, size + 1), lead * 1.3):
            break
        for _ in range(rng.randint(1, 2)):
            text = deck.take(rng.randint(2, 4))
            if not w.paragraph(text, face, lead, partial=True):
                return
            w.y += lead * 0.5
        w.y += lead * 0.4


def _style_article(w: _Writer, lay: _Layout, job: _Job) -> None:
    rng, bank = job.rng, job.bank
    deck = job.deck
    reg, bold = lay.type.regular, lay.type.bold
    size = lay.size_pt
    lead = w.px(size) * lay.leading
    head = w.face(bold, size + rng.choice((8, 10, 12)))
    w.paragraph(rng.choice(bank.headings), head, head.size * 1.25, align="center")
    w.y += lead * 0.5
    face = w.face(reg, size)
    w.line(f"By {rng.choice(bank.people)}", face, lead, "center")
    w.line(f"{rng.choice(bank.places).upper()}, {bank.date(rng)}", face, lead * 1.8, "center")
    _body(w, lay, deck, rng, stop=1.0, align="justify", indent=w.px(size) * 2, gap=0.0)


def _style_notice(w: _Writer, lay: _Layout, job: _Job) -> None:
    rng, bank = job.rng, job.bank
    deck = job.deck
    reg, bold = lay.type.regular, lay.type.bold
    size = lay.size_pt
    lead = w.px(size) * lay.leading
    w.line("PUBLIC NOTICE", w.face(bold, size + 10), w.px(size + 10) * 1.5, "center")
    w.paragraph(
        f"{rng.choice(bank.organisations)}: {rng.choice(bank.headings)}",
        w.face(bold, size + 2),
        w.px(size + 2) * 1.3,
        align="center",
    )
    w.y += lead
    w.bottom -= round(lead * 3.5)
    _body(w, lay, deck, rng, stop=rng.uniform(0.55, 1.0), numbered=True, partial_last=False)
    w.bottom += round(lead * 3.5)
    w.y += lead
    face = w.face(reg, size)
    w.line(f"Dated {bank.date(rng)}", face, lead)
    w.line(f"{rng.choice(bank.people)}, {rng.choice(bank.titles)}", face, lead)


def _style_minutes(w: _Writer, lay: _Layout, job: _Job) -> None:
    rng, bank = job.rng, job.bank
    deck = job.deck
    reg, bold = lay.type.regular, lay.type.bold
    size = lay.size_pt
    lead = w.px(size) * lay.leading
    w.paragraph(
        f"Minutes of the meeting of {rng.choice(bank.organisations)} held on {bank.date(rng)}",
        w.face(bold, size + 4),
        w.px(size + 4) * 1.3,
    )
    w.y += lead * 0.5
    face = w.face(reg, size)
    present = ", ".join(rng.sample(bank.people, rng.randint(4, 7)))
    w.paragraph(f"Present: {present}.", face, lead)
    w.y += lead * 0.5
    items = ("Apologies", "Matters arising", "Finance", "Planning", "Correspondence", "AOB")
    for n, item in enumerate(items, start=1):
        if not w.line(f"{n}. {item}", w.face(bold, size), lead * 1.2):
            return
        text = deck.take(rng.randint(1, 4))
        if not w.paragraph(text, face, lead, partial=True):
            return
        w.y += lead * 0.6


STYLES: dict[str, Callable[[_Writer, _Layout, _Job], None]] = {
    "letter": _style_letter,
    "memo": _style_memo,
    "report": _style_report,
    "article": _style_article,
    "notice": _style_notice,
    "minutes": _style_minutes,
}


def _draw_style(job: _Job, lay: _Layout, style: str, dpi: float | None = None) -> _Writer:
    w = _writer(lay, dpi)
    STYLES[style](w, lay, job)
    return w


def _draw_small(job: _Job, lay: _Layout) -> _Writer:
    """Small print: a bold heading and numbered clauses, dense."""
    rng = job.rng
    w = _writer(lay)
    heading = "Terms and conditions of sale" if job.half == "dev" else "Notes and disclosures"
    head = w.face(lay.type.bold, lay.size_pt + 3)
    w.line(heading, head, head.size * 1.6)
    align = "left" if job.half == "dev" else "justify"
    _body(w, lay, job.deck, rng, stop=rng.uniform(0.5, 0.95), align=align, numbered=True)
    return w


def _draw_columns(job: _Job, lay: _Layout) -> _Writer:
    """A heading across the page, then body text flowing down the left column, then the
    right; truth is the heading, the whole left column, the whole right column."""
    rng, bank = job.rng, job.bank
    w = _writer(lay)
    head = w.face(lay.type.bold, _r(rng.uniform(*job.knobs.heading_pt), 0))
    w.paragraph(rng.choice(bank.headings), head, head.size * 1.25, align="left")
    w.y += head.size * 0.4
    w.rule(0, w.px(lay.size_pt) * 1.2, weight=2)
    face = w.face(lay.type.regular, lay.size_pt)
    lead = w.px(lay.size_pt) * lay.leading
    gutter = w.dpi * rng.uniform(0.25, 0.45)
    mid = (w.left + w.right) / 2
    columns = ((w.left, mid - gutter / 2), (mid + gutter / 2, w.right))
    top = w.y
    if rng.random() < 0.5:
        x = round(mid)
        w.draw.line((x, round(top), x, w.bottom), fill=0, width=2)
    deck = job.deck
    align = "justify" if job.half == "held-out" else rng.choice(("left", "justify"))
    for x0, x1 in columns:
        w.y = top
        first = True
        while True:
            text = deck.take(rng.randint(2, 4))
            before = 0.0 if first else lead * 0.5
            if not w.paragraph(
                text, face, lead, align=align, before=before, partial=True, x0=x0, x1=x1
            ):
                break
            first = False
    return w


def _draw_table(job: _Job, lay: _Layout) -> _Writer:
    """A heading, a paragraph, a ruled table (row by row in the truth), a paragraph."""
    rng, bank = job.rng, job.bank
    w = _writer(lay)
    deck = job.deck
    head = w.face(lay.type.bold, _r(rng.uniform(*job.knobs.heading_pt), 0))
    w.paragraph(rng.choice(bank.headings), head, head.size * 1.25)
    w.y += head.size * 0.5
    size = lay.size_pt
    face, bold = w.face(lay.type.regular, size), w.face(lay.type.bold, size)
    lead = w.px(size) * lay.leading
    w.paragraph(deck.take(rng.randint(2, 4)), face, lead)
    w.y += lead
    table = TABLES[job.half](rng, rng.randint(5, 9))
    pad = w.px(size) * 1.2
    widths = [max(bold.getlength(row[c]) for row in table) + 2 * pad for c in range(len(table[0]))]
    scale = min(1.0, (w.right - w.left) / sum(widths))
    if scale < 1.0:  # too wide: a smaller size for the table
        face, bold = w.face(lay.type.regular, size * scale), w.face(lay.type.bold, size * scale)
        widths = [x * scale for x in widths]
        pad *= scale
    xs = [float(w.left)]
    for x in widths:
        xs.append(xs[-1] + x)
    row_h = max(lead, face.size * 1.6)
    grid = job.half == "held-out"
    top = round(w.y)
    w.draw.line((xs[0], top, xs[-1], top), fill=0, width=3)
    for r, row in enumerate(table):
        if w.y + row_h > w.bottom:
            break
        f = bold if r == 0 or (job.half == "dev" and r == len(table) - 1) else face
        cells: list[str] = []
        text_y = w.y + (row_h - f.size) / 2
        for c, cell in enumerate(row):
            if not cell:
                continue
            numeric = c > 0 and bool(re.fullmatch(r"[\d.,%]+", cell))
            x = xs[c + 1] - pad - f.getlength(cell) if numeric else xs[c] + pad
            w.draw.text((x, text_y), cell, font=f, fill=0)
            cells.append(cell)
        w.lines.append(" ".join(cells))
        w.y += row_h
        y = round(w.y)
        if r == 0 or grid or r == len(table) - 1:
            w.draw.line((xs[0], y, xs[-1], y), fill=0, width=2 if grid and r else 3)
    if grid:
        for x in xs:
            w.draw.line((round(x), top, round(x), round(w.y)), fill=0, width=2)
    w.y += lead * 1.5
    _body(w, lay, deck, rng, stop=1.0)
    return w


# --------------------------------------------------------------------------------------------
# Scanner and phone defects


@dataclass
class _Job:
    folder: Path
    half: str
    kind: str
    index: int
    rng: random.Random
    knobs: Knobs
    bank: Bank
    deck: Deck = field(init=False)

    def __post_init__(self) -> None:
        self.deck = self.bank.deck(self.rng)

    @property
    def name(self) -> str:
        return f"{self.half}-{self.kind}-{self.index + 1}"

    def np_rng(self) -> np.random.Generator:
        return np.random.default_rng(self.rng.getrandbits(64))

    def format(self) -> str:
        options = FORMATS[self.kind]
        return options[(self.index + (self.half == "held-out")) % len(options)]


def _specks(image: Image.Image, rng: random.Random, count: int, dpi: float) -> None:
    """Dust on the glass: small dark dots, before the optics blur them."""
    draw = ImageDraw.Draw(image)
    for _ in range(count):
        x, y = rng.uniform(0, image.width), rng.uniform(0, image.height)
        r = rng.uniform(0.6, 2.2) * dpi / 300
        draw.ellipse((x - r, y - r * rng.uniform(0.6, 1.4), x + r, y + r), fill=0)


def _noise(size: tuple[int, int], sigma: float, nrng: np.random.Generator) -> Image.Image:
    """Gaussian noise around 128, from a 1024-pixel tile (drawing 8 million normals per page
    would take longer than everything else together)."""
    w, h = size
    tile = nrng.normal(128.0, sigma, size=(1024, 1024)).clip(0, 255).astype(np.uint8)
    reps = (-(-h // 1024), -(-w // 1024))
    return Image.fromarray(np.ascontiguousarray(np.tile(tile, reps)[:h, :w]), "L")


def _stretch(values: np.ndarray, size: tuple[int, int], across: bool) -> Image.Image:
    """A 1-D profile (0..1) as an L image constant down the columns (across) or rows."""
    row = np.clip(values * 255, 0, 255).astype(np.uint8)
    small = Image.fromarray(row[None, :] if across else row[:, None], "L")
    return small.resize(size, Image.Resampling.NEAREST)


def _marks(image: Image.Image, w: _Writer, job: _Job, dpi: float) -> dict[str, Any]:
    """What people do to paper before it is scanned: highlighter over a few lines, holes
    punched in the left margin. Neither is text."""
    rng, k = job.rng, job.knobs
    sx = image.width / w.image.width  # the glyph-width stretch
    highlights = 0
    if w.boxes and rng.random() < k.highlight:
        shade = rng.randint(165, 215)  # a yellow marker scans light, a pink or green one darker
        for _ in range(rng.randint(1, 3)):
            x0, y0, x1, y1 = rng.choice(w.boxes)
            a = x0 + (x1 - x0) * rng.uniform(0, 0.5)
            b = x0 + (x1 - x0) * rng.uniform(0.6, 1.0)
            box = (round(a * sx), round(y0 - 0.15 * (y1 - y0)), round(b * sx), round(y1))
            region = image.crop(box)
            image.paste(ImageChops.multiply(region, Image.new("L", region.size, shade)), box)
            highlights += 1
    holes = 0
    if rng.random() < k.holes:
        holes = rng.choice((2, 3))
        r, x = 0.125 * dpi, 0.4 * dpi
        centres = (0.5,) if holes == 1 else ((0.3, 0.7) if holes == 2 else (0.2, 0.5, 0.8))
        draw = ImageDraw.Draw(image)
        dark = rng.randint(40, 120)  # the scanner's backing, seen through the hole
        for c in centres:
            y = c * image.height
            draw.ellipse((x - r, y - r, x + r, y + r), fill=dark)
    return {"highlights": highlights, "punch_holes": holes}


def _grey_scan(
    image: Image.Image,
    job: _Job,
    dpi: int,
    *,
    skew: float,
    blur: float,
    gamma: float,
    ink: float,
    paper: float,
    noise: float,
    specks: int,
    streak: float = 0.0,
) -> tuple[Image.Image, dict[str, Any]]:
    """Ink on paper through a flatbed: dust, optics blur, skew, tone, lamp falloff, noise."""
    rng, nrng = job.rng, job.np_rng()
    _specks(image, rng, specks, dpi)
    out = image
    if skew:  # the paper lies askew; the optics blur what lies there (hiding the resampling)
        out = out.rotate(skew, resample=Image.Resampling.NEAREST, fillcolor=255)
    if blur > 0:
        out = out.filter(ImageFilter.BoxBlur(blur * dpi / 300))
    out = out.point([round(ink + (paper - ink) * (v / 255) ** gamma) for v in range(256)])
    w, h = out.size
    if streak > 0:  # a worn drum: vertical bands where the ink is weaker
        knots = nrng.uniform(1 - streak, 1.0, size=w // 40 + 2)
        weak = np.interp(np.arange(w) / 40, np.arange(len(knots)), knots)
        out = Image.composite(
            out, Image.new("L", out.size, round(paper)), _stretch(weak, out.size, True)
        )
    # the lamp falls off towards the sides; the lid may leave a dark band along one edge
    fall = rng.uniform(0, 0.03)
    across = 1 - fall * np.linspace(-1, 1, w) ** 2
    down = np.ones(h)
    lid = ""
    if rng.random() < job.knobs.lid_shadow:
        lid = rng.choice(("left", "right", "top", "bottom"))
        depth, width = rng.uniform(0.15, 0.5), rng.uniform(8, 40)
        profile = across if lid in ("left", "right") else down
        band = depth * np.exp(-np.arange(len(profile)) / width)
        profile *= 1 - (band if lid in ("left", "top") else band[::-1])
    fold = None
    if rng.random() < job.knobs.fold:  # folded in three for the envelope: a crease's shadow
        fold = round(h * rng.choice((rng.uniform(0.3, 0.37), rng.uniform(0.63, 0.7))))
        depth, width = rng.uniform(0.05, 0.14), rng.uniform(1.5, 4.0) * dpi / 300
        down *= 1 - depth * np.exp(-(((np.arange(h) - fold) / width) ** 2))
    out = ImageChops.multiply(out, _stretch(across, out.size, True))
    if lid in ("top", "bottom") or fold is not None:
        out = ImageChops.multiply(out, _stretch(down, out.size, False))
    out = ImageChops.add(out, _noise(out.size, noise, nrng), 1.0, -128)
    params = {
        "skew": _r(skew),
        "blur": _r(blur),
        "gamma": _r(gamma),
        "ink": round(ink),
        "paper": round(paper),
        "noise": _r(noise),
        "specks": specks,
        "lid_shadow": lid or None,
        "fold_y": fold,
    }
    if streak:
        params["streak"] = _r(streak)
    return out, params


def _scanner_defects(job: _Job, skew: float) -> dict[str, Any]:
    k, rng = job.knobs, job.rng
    return {
        "skew": skew,
        "blur": rng.uniform(*k.blur),
        "gamma": rng.uniform(*k.gamma),
        "ink": rng.uniform(*k.ink),
        "paper": rng.uniform(*k.paper),
        "noise": rng.uniform(*k.noise),
        "specks": rng.randint(*k.specks),
    }


# --------------------------------------------------------------------------------------------
# Writing files


@dataclass(frozen=True)
class _Raster:
    data: bytes
    filter: Name
    colorspace: Name
    bpc: int
    size: tuple[int, int]
    dpi: tuple[float, float]
    decode_parms: Dictionary | None = None


def _jpeg_bytes(image: Image.Image, quality: int, dpi: tuple[float, float]) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=quality, dpi=dpi)
    return buf.getvalue()


def _jpeg_raster(image: Image.Image, quality: int, dpi: tuple[float, float]) -> _Raster:
    space = Name.DeviceRGB if image.mode == "RGB" else Name.DeviceGray
    return _Raster(_jpeg_bytes(image, quality, dpi), Name.DCTDecode, space, 8, image.size, dpi)


def _g4_raster(image: Image.Image, dpi: tuple[int, int]) -> _Raster:
    """CCITT group 4, as a fax server writes it into a PDF (0 bits white, as faxes code)."""
    data = _g4_strip(image)
    parms = Dictionary(K=-1, Columns=image.width, Rows=image.height, BlackIs1=False)
    return _Raster(data, Name.CCITTFaxDecode, Name.DeviceGray, 1, image.size, dpi, parms)


def _g4_strip(image: Image.Image) -> bytes:
    """One strip of G4 data coding black ink as black runs: encode the inverted image (ink as
    1 bits, which libtiff codes as black) in a single strip."""
    buf = io.BytesIO()
    _inverted(image).save(buf, format="TIFF", compression="group4", strip_size=1 << 30)
    with Image.open(io.BytesIO(buf.getvalue())) as tif:
        assert isinstance(tif, TiffImagePlugin.TiffImageFile)
        offsets, counts = tif.tag_v2[273], tif.tag_v2[279]
        assert len(offsets) == 1, "expected one strip"
    return buf.getvalue()[offsets[0] : offsets[0] + counts[0]]


def _inverted(image: Image.Image) -> Image.Image:
    return ImageOps.invert(image.convert("L")).convert("1", dither=Image.Dither.NONE)


def _write_pdf(path: Path, rasters: Sequence[_Raster]) -> Path:
    pdf = pikepdf.Pdf.new()
    for r in rasters:
        stream = pdf.make_stream(r.data)
        stream.Type = Name.XObject
        stream.Subtype = Name.Image
        stream.Width, stream.Height = r.size
        stream.ColorSpace = r.colorspace
        stream.BitsPerComponent = r.bpc
        stream.Filter = r.filter
        if r.decode_parms is not None:
            stream.DecodeParms = r.decode_parms
        w_pt, h_pt = r.size[0] * 72 / r.dpi[0], r.size[1] * 72 / r.dpi[1]
        content = f"q {w_pt:.3f} 0 0 {h_pt:.3f} 0 0 cm /Im0 Do Q".encode()
        page = pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, round(w_pt, 3), round(h_pt, 3)]),
                Resources=Dictionary(XObject=Dictionary(Im0=stream)),
                Contents=pdf.make_stream(content),
            )
        )
        pdf.pages.append(page)
    pdf.save(path, deterministic_id=True)
    return path


def _write_fax_tiff(path: Path, images: Sequence[Image.Image], dpi: tuple[int, int]) -> Path:
    """A multi-page G4 TIFF the way fax servers write it: PhotometricInterpretation
    WhiteIsZero. Pillow would invert pixel by pixel in Python for that, so the inverted image
    is written as BlackIsZero and the tag patched afterwards."""
    frames = [_inverted(im) for im in images]
    frames[0].save(
        path,
        format="TIFF",
        save_all=True,
        append_images=frames[1:],
        dpi=dpi,
        compression="group4",
        strip_size=1 << 30,
    )
    _patch_photometric(path, 0)
    return path


def _patch_photometric(path: Path, value: int) -> None:
    data = bytearray(path.read_bytes())
    order = "<" if data[:2] == b"II" else ">"
    (ifd,) = struct.unpack_from(order + "I", data, 4)
    while ifd:
        (count,) = struct.unpack_from(order + "H", data, ifd)
        for i in range(count):
            entry = ifd + 2 + 12 * i
            tag, typ = struct.unpack_from(order + "HH", data, entry)
            if tag == 262 and typ == 3:
                struct.pack_into(order + "H", data, entry + 8, value)
        (ifd,) = struct.unpack_from(order + "I", data, ifd + 2 + 12 * count)
    path.write_bytes(bytes(data))


def _save_grey(job: _Job, image: Image.Image, dpi: int, quality: int) -> tuple[Path, str]:
    """One grey page in the kind's format for this instance."""
    fmt = job.format()
    stem = job.folder / job.name
    if fmt == "pdf":
        return _write_pdf(stem.with_suffix(".pdf"), [_jpeg_raster(image, quality, (dpi, dpi))]), fmt
    if fmt == "jpeg":
        path = stem.with_suffix(".jpg")
        path.write_bytes(_jpeg_bytes(image, quality, (dpi, dpi)))
        return path, fmt
    if fmt == "png":
        path = stem.with_suffix(".png")
        image.save(path, format="PNG", dpi=(dpi, dpi), compress_level=1)
        return path, fmt
    path = stem.with_suffix(".tif")
    compression = "tiff_lzw" if job.half == "dev" else "jpeg"
    extra = {"quality": quality} if compression == "jpeg" else {}
    image.save(path, format="TIFF", dpi=(dpi, dpi), compression=compression, **extra)
    return path, f"tiff-{compression.removeprefix('tiff_')}"


def _page(job: _Job, truth: Sequence[str], params: dict[str, Any], name: str = "") -> Page:
    return Page(name or job.name, job.kind, job.half, "\n".join(truth), params)


# --------------------------------------------------------------------------------------------
# The kinds


def _grey_document(
    job: _Job, lay: _Layout, w: _Writer, layout: str, defects: dict[str, Any], turn: int = 0
) -> list[Document]:
    """Scan the drawn page, turn it clockwise by ``turn``, save it in this instance's format."""
    page = _finish(w, lay)
    marks = _marks(page, w, job, lay.dpi)
    image, defects = _grey_scan(page, job, lay.dpi, **defects)
    defects |= marks
    if turn:
        transpose = {
            90: Image.Transpose.ROTATE_270,
            180: Image.Transpose.ROTATE_180,
            270: Image.Transpose.ROTATE_90,
        }
        image = image.transpose(transpose[turn])
    quality = job.rng.randint(*job.knobs.jpeg)
    if job.kind == "small":  # small print survives only a gentle compression
        quality = max(quality, 80)
    path, fmt = _save_grey(job, image, lay.dpi, quality)
    params = {"layout": layout, "format": fmt, "dpi": (lay.dpi, lay.dpi), "rotate": turn}
    params |= lay.params() | defects | {"jpeg_quality": quality}
    return [Document(path, (_page(job, w.lines, params),))]


def _make_skewed(job: _Job) -> list[Document]:
    rng, k = job.rng, job.knobs
    lay = _layout(job, 300, letter=True)
    style = rng.choice(k.styles)
    w = _draw_style(job, lay, style)
    sign = k.skew_sign * (1 if job.index % 2 == 0 else -1)
    skew = sign * rng.uniform(0.5, 3.0)
    return _grey_document(job, lay, w, style, _scanner_defects(job, skew))


def _make_rotated(job: _Job) -> list[Document]:
    rng, k = job.rng, job.knobs
    lay = _layout(job, rng.choice(k.scan_dpi))
    style = rng.choice(k.styles)
    w = _draw_style(job, lay, style)
    turn = k.rotations[job.index % len(k.rotations)]
    chance, (lo, hi) = k.rotated_skew
    skew = rng.choice((-1, 1)) * rng.uniform(lo, hi) if rng.random() < chance else 0.0
    return _grey_document(job, lay, w, style, _scanner_defects(job, skew), turn)


def _make_faint(job: _Job) -> list[Document]:
    rng, k = job.rng, job.knobs
    lay = _layout(job, rng.choice(k.scan_dpi))
    style = rng.choice(k.styles)
    w = _draw_style(job, lay, style)
    defects = {
        "skew": rng.choice((-1, 1)) * rng.uniform(0, 0.6),
        "blur": rng.uniform(*k.faint_blur),
        "gamma": rng.uniform(0.7, 1.0),  # worn toner never spreads
        "ink": rng.uniform(*k.faint_ink),
        "paper": rng.uniform(*k.faint_paper),
        "noise": rng.uniform(*k.noise),
        "specks": rng.randint(0, 10),
        "streak": rng.uniform(*k.faint_streak),
    }
    return _grey_document(job, lay, w, style, defects)


def _make_small(job: _Job) -> list[Document]:
    rng, k = job.rng, job.knobs
    lay = _layout(job, 300, size_pt=rng.choice(k.small_pt))
    lay.leading = _r(rng.uniform(1.12, 1.35))
    w = _draw_small(job, lay)
    defects = _scanner_defects(job, rng.choice((-1, 1)) * rng.uniform(0, 0.4))
    defects["blur"] = min(defects["blur"], 0.7)
    defects["gamma"] = min(max(defects["gamma"], 0.8), 1.3)
    return _grey_document(job, lay, w, "fine-print", defects)


def _make_mixed(job: _Job) -> list[Document]:
    rng, k = job.rng, job.knobs
    lay = _layout(job, rng.choice(k.scan_dpi))
    lay.size_pt = rng.choice((10.0, 10.5, 11.0, 11.5, 12.0))
    tabular = (job.index + (job.half == "held-out")) % 2 == 1
    w = _draw_table(job, lay) if tabular else _draw_columns(job, lay)
    defects = _scanner_defects(job, rng.choice((-1, 1)) * rng.uniform(0, 0.5))
    return _grey_document(job, lay, w, "table" if tabular else "two-columns", defects)


# Fax --------------------------------------------------------------------------------------


def _fax_header(half: str, page: int, when: str, number: str, sender: str) -> str:
    """The receiving machine's line across the top (each half has its own machine)."""
    if half == "dev":
        return f"FROM: {sender.upper()}   FAX {number}   {when}   PAGE {page}/2"
    return f"{when}   FROM: {number}   {sender.upper()}   P.{page:03d}   PAGE {page} OF 2"


def _fax_pages(
    job: _Job, dpi: tuple[int, int]
) -> tuple[list[Image.Image], list[list[str]], dict[str, Any]]:
    """A two-page fax: a cover sheet or a letter's start, then the rest of the letter."""
    rng, k, bank = job.rng, job.knobs, job.bank
    job.deck = bank.deck(rng)  # each fax its own text
    images: list[Image.Image] = []
    truths: list[list[str]] = []
    sender = rng.choice(bank.organisations).removeprefix("the ")
    d = rng.randint(1, 28)
    mo = rng.randint(1, 12)
    clock = f"{rng.randint(7, 18):02d}:{rng.randint(0, 59):02d}"
    when = f"{d:02d}/{mo:02d}/2026 {clock}" if job.half == "dev" else f"{mo:02d}-{d:02d}-25 {clock}"
    number = f"+{rng.randint(1, 49)} {rng.randint(20, 999)} {rng.randint(1000000, 9999999)}"
    lay = _layout(job, dpi[0], letter=True)
    lay.size_pt = rng.choice((10.5, 11.0, 11.5, 12.0, 12.5))
    cover = rng.random() < k.fax_cover
    skew = rng.choice((-1, 1)) * rng.uniform(*k.fax_skew)
    threshold = rng.uniform(*k.fax_threshold)
    specks = rng.uniform(*k.fax_specks)
    streak = rng.random() < k.fax_streak
    header_pt = rng.choice((7.5, 8.0, 9.0))
    streak_x = rng.uniform(0.05, 0.95)
    for page in (1, 2):
        w = _writer(lay)
        w.top = w.y = round(max(w.y, 0.75 * w.dpi))
        if page == 1 and cover:
            _fax_cover(w, lay, job, sender)
        elif page == 1:
            _style_letter(w, lay, job, closing=False)
        else:
            deck = job.deck
            _body(w, lay, deck, rng, stop=rng.uniform(0.35, 0.8), partial_last=False)
            lead = w.px(lay.size_pt) * lay.leading
            w.y += lead
            face = w.face(lay.type.regular, lay.size_pt)
            w.line(rng.choice(bank.closings), face, lead * 3)
            w.line(rng.choice(bank.people), face, lead)
        image = _finish(w, lay)
        image = _fax_line(
            image,
            job,
            dpi,
            skew=skew,
            threshold=threshold,
            specks=specks,
            streak=streak_x if streak else None,
        )
        header = _fax_header(job.half, page, when, number, sender)
        draw = ImageDraw.Draw(image)
        draw.fontmode = "1"
        mono = font_file("dejavu-mono")
        draw.text(
            (round(0.25 * dpi[0]), round(0.12 * dpi[1])),
            header,
            font=_face(mono, round(header_pt * dpi[1] / 72)),
            fill=0,
        )
        images.append(image)
        truths.append([header, *w.lines])
    params = {
        "dpi": dpi,
        "rotate": 0,
        "skew": _r(skew),
        "threshold": round(threshold),
        "speckle": round(specks, 5),
        "streak": streak,
        "cover_sheet": cover,
        "header_pt": header_pt,
    } | lay.params()
    return images, truths, params


def _fax_cover(w: _Writer, lay: _Layout, job: _Job, sender: str) -> None:
    rng, bank = job.rng, job.bank
    size = lay.size_pt
    lead = w.px(size) * lay.leading
    w.line(
        "FAX" if job.half == "dev" else "Facsimile transmission",
        w.face(lay.type.bold, size + 14),
        w.px(size + 14) * 1.6,
    )
    w.rule(0, lead, weight=4)
    face = w.face(lay.type.regular, size)
    people = rng.sample(bank.people, 2)
    for label, value in (
        ("To:", people[0]),
        ("Fax:", f"{rng.randint(100, 999)} {rng.randint(100, 999)} {rng.randint(1000, 9999)}"),
        ("From:", f"{people[1]}, {sender}"),
        ("Date:", bank.date(rng)),
        ("Pages:", "2 including this cover"),
        ("Re:", rng.choice(bank.headings)),
    ):
        w.line(f"{label} {value}", face, lead * 1.2)
    w.rule(lead * 0.5, lead, weight=2)
    deck = job.deck
    _body(w, lay, deck, rng, stop=rng.uniform(0.45, 0.7), partial_last=False)


def _fax_line(
    image: Image.Image,
    job: _Job,
    dpi: tuple[int, int],
    *,
    skew: float,
    threshold: float,
    specks: float,
    streak: float | None,
) -> Image.Image:
    """What the sending machine's scanner and the line make of a page: slightly skewed,
    squeezed to the vertical resolution, thresholded with jagged edges, speckled."""
    rng, nrng = job.rng, job.np_rng()
    out = image
    if skew:
        out = out.rotate(skew, resample=Image.Resampling.NEAREST, fillcolor=255)
    out = out.filter(ImageFilter.BoxBlur(0.6))
    if dpi[1] != dpi[0]:
        out = out.resize(
            (out.width, round(out.height * dpi[1] / dpi[0])), Image.Resampling.BILINEAR
        )
    black = np.asarray(ImageChops.add(out, _noise(out.size, 18, nrng), 1.0, -128)) < threshold
    h, w = black.shape
    n = int(h * w * specks)
    black[nrng.integers(0, h, n), nrng.integers(0, w, n)] = True
    for _ in range(rng.randint(5, 30)):  # a few bigger blots
        y, x = rng.randrange(h - 3), rng.randrange(w - 3)
        black[y : y + rng.randint(1, 3), x : x + rng.randint(1, 3)] = True
    if streak is not None:  # dirt on the sender's glass: a broken line down the page
        x, y = round(streak * w), rng.randrange(0, 200)
        while y < h:
            run = rng.randint(4, 60)
            black[y : y + run, x] = True
            y += run + rng.randint(20, 240)
    if rng.random() < 0.5:  # a dropped scan line
        y = rng.randrange(h // 5, h - 10)
        black[y, :] = False
    return Image.fromarray(~black).convert("1", dither=Image.Dither.NONE)


def _make_fax(job: _Job) -> list[Document]:
    docs: list[Document] = []
    base = job.index * 2
    for n, fmt in enumerate(("tiff-g4", "pdf-g4")):
        dpi = job.knobs.fax_dpi[n]
        number = base + n + 1
        images, truths, params = _fax_pages(job, dpi)
        stem = job.folder / f"{job.half}-fax-{number}"
        if fmt == "tiff-g4":
            path = _write_fax_tiff(stem.with_suffix(".tif"), images, dpi)
        else:
            path = _write_pdf(stem.with_suffix(".pdf"), [_g4_raster(im, dpi) for im in images])
        pages = tuple(
            _page(
                job, truth, params | {"format": fmt, "page_of": (i + 1, 2)}, f"{stem.name}-p{i + 1}"
            )
            for i, truth in enumerate(truths)
        )
        docs.append(Document(path, pages))
    return docs


# Photo ------------------------------------------------------------------------------------


def _perspective_coeffs(
    dst: Sequence[tuple[float, float]], src: Sequence[tuple[float, float]]
) -> tuple[float, ...]:
    """PIL's PERSPECTIVE data mapping output points ``dst`` to input points ``src``."""
    a: list[list[float]] = []
    b: list[float] = []
    for (x, y), (u, v) in zip(dst, src, strict=True):
        a.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        a.append([0, 0, 0, x, y, 1, -v * x, -v * y])
        b.extend((u, v))
    sol = np.linalg.solve(np.array(a, dtype=np.float64), np.array(b, dtype=np.float64))
    return tuple(float(c) for c in sol)


def _make_photo(job: _Job) -> list[Document]:
    rng, k = job.rng, job.knobs
    nrng = job.np_rng()
    fw, fh = rng.choice(k.photo_frames)
    lay = _layout(job, 300)
    style = rng.choice(k.styles)
    page_w_in, page_h_in = lay.size_in
    fill = rng.uniform(*k.photo_fill)
    ph = fh * fill
    dpi = ph / page_h_in  # the page as rendered, about the size it lands in the frame
    pw = page_w_in * dpi
    w = _draw_style(job, lay, style, dpi)
    content = w.image  # unstretched: the warp below stretches the glyphs on the way
    marks = _marks(content, w, job, dpi)
    # where the corners land: centred with some slack, turned, keystoned (the top farther away)
    cx = fw / 2 + rng.uniform(-1, 1) * max(0.0, (fw - pw) / 2 - 0.03 * fw) * 0.6
    cy = fh / 2 + rng.uniform(-1, 1) * max(0.0, (fh - ph) / 2 - 0.03 * fh) * 0.6
    key = rng.uniform(*k.photo_keystone)
    turn = math.radians(rng.choice((-1, 1)) * rng.uniform(*k.photo_turn))
    corners = [
        (-pw / 2 * (1 - key), -ph / 2),
        (pw / 2 * (1 - key), -ph / 2),
        (pw / 2 * (1 + key * 0.3), ph / 2),
        (-pw / 2 * (1 + key * 0.3), ph / 2),
    ]
    quad = []
    for x, y in corners:
        x += rng.uniform(-0.006, 0.006) * fw
        y += rng.uniform(-0.006, 0.006) * fh
        quad.append(
            (
                cx + x * math.cos(turn) - y * math.sin(turn),
                cy + x * math.sin(turn) + y * math.cos(turn),
            )
        )
    src = [(0.0, 0.0), (content.width, 0.0), (content.width, content.height), (0.0, content.height)]
    coeffs = _perspective_coeffs(quad, src)
    blur = rng.uniform(*k.photo_blur)
    warped = content.transform(
        (fw, fh), Image.Transform.PERSPECTIVE, coeffs, Image.Resampling.NEAREST, fillcolor=255
    ).filter(ImageFilter.BoxBlur(blur * 0.7))  # the lens (and the shake) after the geometry
    # the page's outline, softened: drawn at half the size and scaled up
    mask = Image.new("L", (fw // 2, fh // 2), 0)
    ImageDraw.Draw(mask).polygon([(x / 2, y / 2) for x, y in quad], fill=255)
    mask = mask.filter(ImageFilter.BoxBlur(1)).resize((fw, fh), Image.Resampling.BILINEAR)
    # uneven light: a vignette, a gradient from one side, sometimes a soft shadow
    vig = rng.uniform(*k.photo_vignette)
    grad = rng.uniform(*k.photo_gradient)
    angle = rng.uniform(0, 2 * math.pi)
    sy, sx = np.mgrid[-1 : 1 : complex(0, fh // 16), -1 : 1 : complex(0, fw // 16)]
    light = (1 - vig * (sx**2 + sy**2) / 2) * (
        1 - grad * (1 + math.cos(angle) * sx + math.sin(angle) * sy) / 2
    )
    shadow = rng.random() < 0.5
    if shadow:  # the phone's, or the photographer's
        ox, oy = rng.uniform(-1, 1), rng.choice((-1.2, 1.2))
        light *= 1 - 0.25 * np.exp(-((sx - ox) ** 2 + (sy - oy) ** 2) / 0.3)
    light_img = Image.fromarray(np.clip(light * 255, 0, 255).astype(np.uint8), "L")
    lit = ImageChops.multiply(warped, light_img.resize((fw, fh), Image.Resampling.BILINEAR))
    lit = ImageChops.add(lit, _noise(lit.size, rng.uniform(2, 5), nrng), 1.0, -128)
    # colours: paper with a white-balance cast, blue-black ink, a desk (wood grain or mottled)
    cast = rng.choice(((246, 240, 226), (236, 240, 246), (242, 242, 238), (250, 236, 214)))
    paper = tuple(min(255, c + rng.randint(-8, 4)) for c in cast)
    ink = (rng.randint(20, 45), rng.randint(20, 45), rng.randint(30, 60))
    page_rgb = ImageOps.colorize(lit, black=ink, white=paper)
    desk = rng.choice(((112, 80, 52), (64, 66, 70), (40, 38, 36), (52, 78, 62), (140, 128, 112)))
    gh, gw = fh // 16, fw // 16
    if rng.random() < 0.5:  # wood: streaks along one axis
        grain = nrng.normal(1.0, 0.1, size=(gh, 1)) * nrng.normal(1.0, 0.03, size=(gh, gw))
    else:  # mottled
        coarse = nrng.normal(128, 12, size=(gh // 8 + 2, gw // 8 + 2)).clip(0, 255)
        smooth = Image.fromarray(coarse.astype(np.uint8), "L").resize(
            (gw, gh), Image.Resampling.BICUBIC
        )
        grain = np.asarray(smooth, dtype=np.float64) / 128 * nrng.normal(1.0, 0.03, size=(gh, gw))
    grain = grain[:, :, None]
    shade = np.array(desk, dtype=np.float64)[None, None, :] * grain * light[:gh, :gw, None]
    bg_small = Image.fromarray(np.clip(shade, 0, 255).astype(np.uint8), "RGB")
    background = bg_small.resize((fw, fh), Image.Resampling.BILINEAR)
    photo = Image.composite(page_rgb, background, mask)
    quality = rng.randint(*k.photo_jpeg)
    fmt = job.format()
    stem = job.folder / job.name
    if fmt == "jpeg":
        path = stem.with_suffix(".jpg")
        exif = Image.Exif()
        exif[0x010F] = "Google" if job.half == "dev" else "samsung"  # Make
        exif[0x0110] = "Pixel 6a" if job.half == "dev" else "SM-A536B"  # Model
        buf = io.BytesIO()
        photo.save(buf, format="JPEG", quality=quality, dpi=(72, 72), exif=exif.tobytes())
        path.write_bytes(buf.getvalue())
        file_dpi: tuple[float, float] = (72, 72)
    else:
        # a scanning app's PDF: the frame shown about 9 inches wide
        d = _r(fw / 9.0)
        file_dpi = (d, d)
        path = _write_pdf(stem.with_suffix(".pdf"), [_jpeg_raster(photo, quality, file_dpi)])
    params = (
        {
            "layout": style,
            "format": fmt,
            "dpi": file_dpi,
            "frame": (fw, fh),
            "quad": tuple((_r(x, 1), _r(y, 1)) for x, y in quad),
            "rotate": 0,
            "skew": _r(-math.degrees(turn)),
            "keystone": _r(key, 3),
            "page_fill": _r(fill),
            "vignette": _r(vig),
            "gradient": _r(grad),
            "shadow": shadow,
            "blur": _r(blur),
            "jpeg_quality": quality,
        }
        | lay.params()
        | marks
    )
    return [Document(path, (_page(job, w.lines, params),))]


_MAKERS: dict[str, Callable[[_Job], list[Document]]] = {
    "skewed": _make_skewed,
    "rotated": _make_rotated,
    "faint": _make_faint,
    "fax": _make_fax,
    "photo": _make_photo,
    "small": _make_small,
    "mixed": _make_mixed,
}
