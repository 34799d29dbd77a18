"""The words the name detectors weigh a candidate against: ordinary English the census lists
share, words that end a name or name a field, organisations' and places' words, titles of office,
roles, and the 1990 US Census name lists themselves (the `names` package, public-domain data).
Shared by the cue detectors, the named-entity model's filters and the redaction plan."""

from __future__ import annotations

import gzip
import unicodedata
from functools import cache, lru_cache
from importlib import resources

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
        "dean",
        "king",
        "major",
        "love",
        "summer",
        "winter",
        "autumn",
        "spring",
        "sterling",
        "guy",
        "sun",
        "star",
        "faith",
        "chance",
    ]
)
# Words that end a name in running text or are field names, never part of a person's name.
_MORE_STOP = frozenset(
    [
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "postcode",
        "post",
        "sort",
        "acct",
        "our",
        "your",
        "their",
        "reference",
        "bill",
        "relation",
        "relationship",
        "sister",
        "brother",
        "mother",
        "father",
        "son",
        "daughter",
        "wife",
        "husband",
        "countersigned",
        "pictures",
        "picture",
        "photo",
        "photograph",
        "caption",
        "payment",
        "payments",
        "deposit",
        "refund",
        "transfer",
        "tfr",
        "sepa",
        "ct",
        "bp",
        "dd",
        "so",
        "sto",
        "fpo",
        "fpi",
        "fps",
        "chq",
        "atm",
        "pos",
        "card",
        "visa",
        "debit",
        "credit",
        "interest",
        "fee",
        "fees",
        "charge",
        "charges",
        "cash",
        "withdrawal",
        "salary",
        "rent",
        "loan",
        "mortgage",
        "direct",
        "standing",
        "order",
        "faster",
        "online",
        "mobile",
        "contactless",
        "purchase",
        "balance",
        "brought",
        "forward",
        "carried",
        "ref",
        "inv",
        "gbp",
        "eur",
        "usd",
        "nok",
        "sek",
        "dkk",
        "pln",
        "czk",
        "chf",
        "partners",
        "partner",
        "shipping",
        "freight",
        "logistics",
        "holdings",
        "insurance",
        "services",
        "solutions",
        "systems",
        "consulting",
        "capital",
        "investments",
        "properties",
        "foods",
        "motors",
        "energy",
        "media",
        "press",
        "news",
        "times",
        "herald",
        "gazette",
        "post",
        "journal",
        "tribune",
        "chronicle",
    ]
)
_MORE_STOP |= frozenset(
    """surname surnames forename forenames firstname lastname initials code photographs
    photography illustration illustrations graphics bgc invoice prepared""".split()
)
STOP = (
    frozenset(
        [
            "date",
            "signature",
            "address",
            "phone",
            "telephone",
            "tel",
            "mobile",
            "email",
            "e-mail",
            "account",
            "number",
            "no",
            "sort",
            "code",
            "iban",
            "bic",
            "swift",
            "reference",
            "ref",
            "amount",
            "balance",
            "total",
            "description",
            "payee",
            "payer",
            "the",
            "and",
            "of",
            "for",
            "to",
            "from",
            "at",
            "in",
            "on",
            "by",
            "with",
            "street",
            "road",
            "avenue",
            "city",
            "town",
            "postcode",
            "zip",
            "country",
            "bank",
            "branch",
            "subject",
            "re",
            "note",
            "question",
            "answer",
            "interviewer",
            "interview",
            "transcript",
            "page",
            "section",
            "part",
            "item",
            "dear",
            "regards",
            "sincerely",
            "yours",
            "birth",
            "born",
            "id",
            "card",
            "statement",
            "period",
            "opening",
            "closing",
            "credit",
            "debit",
            "transaction",
            "details",
            "summary",
            "name",
            "full",
            "print",
            "signed",
            "customer",
            "client",
            "member",
            "policy",
            "plan",
            "order",
            "invoice",
            "receipt",
            "paid",
            "payment",
            "transfer",
            "standing",
            "direct",
            "faster",
            "ltd",
            "limited",
            "plc",
            "inc",
            "llc",
            "corp",
            "company",
            "group",
            "university",
            "college",
            "school",
            "hospital",
            "council",
            "ministry",
            "department",
            "office",
            "agency",
            "association",
            "foundation",
            "trust",
            "society",
            "club",
            "committee",
            "board",
            "church",
            "court",
            "house",
            "building",
            "tower",
            "centre",
            "center",
            "hall",
            "station",
            "airport",
            "street",
            "bridge",
            "square",
            "place",
            "england",
            "scotland",
            "wales",
            "ireland",
            "london",
            "monday",
            "tuesday",
            "wednesday",
            "thursday",
            "friday",
            "saturday",
            "sunday",
            "january",
            "february",
            "march",
            "april",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ]
    )
    | _MORE_STOP
)
# Words of organisations and places: a "person" that holds one is not a person.
ORG_WORDS = frozenset(
    """partners shipping freight logistics holdings insurance services solutions systems
    consulting capital investments properties foods motors energy media press news times herald
    gazette journal tribune chronicle hospital council university college school bank group
    company ltd limited plc inc llc corp corporation trust society club committee board church
    cathedral court foundation association agency ministry department office station airport
    centre center hotel restaurant cafe museum library theatre theater orchestra band quartet
    fund institute laboratory labs clinic pharmacy studio studios gallery stadium arena water
    savings gas electric electricity telecom broadband transit transport airways airlines rail
    railway motors utilities housing homes fc cf afc sc united rovers wanderers athletic
    athletics hotspur sporting electronics industries technologies technology software mining
    minerals resources petroleum pharmaceuticals pharma chemicals steel metals manufacturing
    engineering construction developments enterprises ventures brothers bros sons associates
    incorporated llp gmbh
    """.split()
)
# titles of office before a name: burned with it never, part of it never
TITLES = frozenset(
    """councillor minister mayor senator governor professor judge detective sergeant captain
    colonel general bishop rabbi imam reverend pastor chancellor secretary president chief
    inspector constable lieutenant major commander admiral ambassador dean""".split()
)
# Speaker labels and cues that name a role, not a person.
# words for a relative or a friend that the model takes for a name on their own ("Dad said")
KIN = frozenset(
    """dad daddy mum mummy mom mommy mama papa pa ma hubby wifey bro bruh brah bruv sis sista
    dude babe baby bae grandma grandpa granny grandad grandad nan nana auntie aunty uncle
    cousin bestie mate buddy pal fam""".split()
)
ROLES = frozenset(
    """director manager officer head chair secretary treasurer editor correspondent caseworker
    administrator coordinator assistant adviser advisor consultant engineer accountant
    solicitor barrister attorney inspector superintendent supervisor president executive
    senior junior principal chief deputy team department inst""".split()
) | frozenset(
    [
        "interviewer",
        "interviewee",
        "moderator",
        "host",
        "guest",
        "reporter",
        "narrator",
        "speaker",
        "presenter",
        "caller",
        "operator",
        "agent",
        "chair",
        "chairman",
        "chairwoman",
        "judge",
        "counsel",
        "clerk",
        "witness",
        "defendant",
        "plaintiff",
        "applicant",
        "respondent",
        "unknown",
        "all",
        "both",
        "voice",
        "officer",
        "doctor",
        "nurse",
        "teacher",
    ]
)


@cache
def census() -> tuple[frozenset[str], frozenset[str]]:
    package = resources.files("names")

    def read(name: str, limit: int) -> frozenset[str]:
        lines = package.joinpath(name).read_text().splitlines()
        return frozenset(line.split()[0].lower() for line in lines[:limit] if line.strip())

    first = read("dist.male.first", 1219) | read("dist.female.first", 4275)
    return first, read("dist.all.last", 88799)


@lru_cache(maxsize=1 << 16)
def fold(text: str) -> str:
    """Accents folded, case folded: how name tokens are compared. Cached: a page of names
    folds the same words thousands of times."""
    if text.isascii():
        return text.replace("\u2019", "'").casefold()
    decomposed = unicodedata.normalize("NFKD", text.replace("\u2019", "'"))
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


@cache
def english() -> frozenset[str]:
    """Lower-case English words (SCOWL, ``english.txt.gz``; ``scripts/build_english.py``)."""
    raw = resources.files("pressroom.redact.detect").joinpath("english.txt.gz").read_bytes()
    lines = gzip.decompress(raw).decode("utf-8").splitlines()
    return frozenset(line for line in lines if line and line[0] != "#")
