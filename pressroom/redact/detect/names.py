"""Names by their context: form labels, honorifics, letter conventions, "my name is", transcript
speaker labels, and first+last pairs from the 1990 US Census lists (the `names` package,
public-domain data). The named-entity model (``ner.py``) finds names with no cue; these find
the ones a model misses (capitals, unusual names right after a label)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources

from pressroom.redact.detect import Finding

KIND = "name"
# Upper- and lower-case letters of the Latin, Greek and Cyrillic blocks: Python's re has no \p{Lu}
_SCRIPTS = (*range(0x41, 0x530), *range(0x1E00, 0x1F00))  # Latin (with Vietnamese), Greek, Cyrillic
_UP = "".join(sorted({c for c in map(chr, _SCRIPTS) if c.isupper() and c.isalpha()}))
_LO = "".join(sorted({c for c in map(chr, _SCRIPTS) if c.islower() and c.isalpha()}))
UPPER = f"[{re.escape(_UP)}]"
LETTER = f"[{re.escape(_UP + _LO)}]"
APOSTROPHES = "'\u2019"
# a name token: a capital, then letters, apostrophes or hyphens (O'Neill, Okafor-Smith, DE LA CRUZ)
_TOKEN = (
    rf"(?:{UPPER}(?:{LETTER}|[{APOSTROPHES}\-](?={LETTER}))+|{UPPER}\.|{UPPER}(?=[ \t]+{UPPER}))"
)
# lower-case particles inside a name: "Ludwig van Beethoven", "Maria de la Cruz", "Ali bin Said"
_PARTICLE = r"(?:van|von|der|den|de|del|della|di|da|dos|du|la|le|bin|binti|ibn|al|el|ter|ten)"
_NAME = rf"{_TOKEN}(?:[ \t]+(?:{_PARTICLE}[ \t]+)*{_TOKEN}){{0,3}}"
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
_FULL = rf"{UPPER}{LETTER}+(?:[{APOSTROPHES}\-]{LETTER}+)?"
NEWS_RE = re.compile(
    rf"(?P<name>{_FULL}[ \t]+(?:{UPPER}\.?[ \t]+)?{_FULL}),[ \t]+(?:who|whose|aged|a|an|the)\b"
    rf"|(?P<before>{_FULL}[ \t]+{_FULL})[ \t]+(?:said|says|told|added|explained|recalled|wrote|"
    r"argued|admitted|insisted|warned|noted)\b"
    rf"|\b(?:said|says|according\s+to|added|wrote)[ \t]+(?P<after>{_FULL}[ \t]+{_FULL})\b"
)
# a name asked for and given: "What's your last name? Arcuri", "maiden name is nyberg"
ASKED_RE = re.compile(
    r"(?i:\b(?:first|last|middle|family|given|full|maiden|sur|fore|christian)\s*names?)"
    r"(?:\s+(?:is|was))?[ \t]*[?:]?[ \t]+(?P<name>[^\W\d_]{2,}(?:[ \t]+[^\W\d_]{2,})?)"
)
SIGN_OFF_RE = re.compile(
    r"(?i:\b(?:yours\s+(?:sincerely|faithfully|truly)|(?:kind|best|warm)\s+regards|regards"
    rf"|best\s+wishes|sincerely))[ \t]*+,?+[ \t]*+\n?+[ \t]*+(?P<name>{_NAME})"
    r"|(?i:\b(?:cheers|thanks|many\s+thanks|love|warmly|respectfully))[ \t]*+,?+[ \t]*+\n[ \t]*+"
    rf"(?P<alone>{_NAME})[ \t]*(?:\n|$)"
)
HONORIFIC = r"(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof|Sir|Dame|Rev|Lady|Lord|Madam|Mme|Mlle|Herr|Frau|Sr|Sra)"
# "Dr" after a street word or a house number is Drive: "12 Elm Dr Springfield"
HONORIFIC_RE = re.compile(rf"(?<![0-9][ \t])(?<!\d)\b(?i:{HONORIFIC})\.?[ \t]+(?P<name>{_NAME})")
_STREET_BEFORE = re.compile(r"\d+[A-Za-z]?[ \t]+(?:[A-Z][\w'\-]*[ \t]+){1,3}$")
# bank statements: the payee after the transaction type ("BILL PAYMENT BRATHEN", "SEPA CT
# <IBAN> SJOBERG", "PAYMENT TO T YAMAMOTO")
_CAPS_TOKEN = rf"(?:{UPPER}[{re.escape(_UP)}'\u2019\-]+|{UPPER}\.?)"
STATEMENT_RE = re.compile(
    r"(?:\bBILL\s+PAYMENT(?:\s+TO)?|\bPAYMENT\s+(?:TO|FROM)|\bTRANSFER\s+(?:TO|FROM)|\bTFR(?:\s+TO)?"
    r"|\bSTANDING\s+ORDER(?:\s+TO)?|\bCHEQUE(?:\s+TO)?"
    r"|\bDEPOSIT(?:\s+FROM)?|\bSEPA\s+CT|\bSTO|\bSO|\bFPO|\bFPI|\bBP|\bDD|\bCHQ|\bBGC|\bCR|\bDR)"
    r"(?:\s+(?:TO|FROM))?(?:\s+[A-Z]{2}\d{2}[A-Z0-9 ]{8,40}?)?[ \t]+"
    rf"(?P<name>{_CAPS_TOKEN}(?:[ \t]+{_CAPS_TOKEN}){{0,3}})"
)
# "T YAMAMOTO", "SIDDIQUI A", "R IBANEZ" in capitals: an initial beside a surname
_CAPS_WORD = rf"{UPPER}[{re.escape(_UP)}'\u2019\-]{{2,}}"
INITIAL_CAPS_RE = re.compile(
    rf"(?<![{re.escape(_UP + _LO)}])(?P<name>[B-HJ-Z]\.?[ \t]+{_CAPS_WORD}"
    rf"|{_CAPS_WORD}[ \t]+[B-HJ-Z](?![{re.escape(_UP + _LO)}.]))"
)
# transcripts: a speaker label at the start of a line ("OKAFOR:", "Maria Okafor:")
SPEAKER_RE = re.compile(rf"(?m)^[ \t]*(?P<name>{_NAME})[ \t]*:[ \t]")
# a lookahead, so pairs overlap: in "Contact Mary Johnson" the pair "Mary Johnson" is tried too
PAIR_RE = re.compile(
    rf"(?=\b(?P<pair>(?P<first>{UPPER}{LETTER}+)[ \t]+(?:{UPPER}\.[ \t]+)?"
    rf"(?P<last>{UPPER}(?:{LETTER}|['\u2019\-](?={LETTER}))+)))"
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
    railway motors utilities housing homes""".split()
)
# titles of office before a name: burned with it never, part of it never
TITLES = frozenset(
    """councillor minister mayor senator governor professor judge detective sergeant captain
    colonel general bishop rabbi imam reverend pastor chancellor secretary president chief
    inspector constable lieutenant major commander admiral ambassador dean""".split()
)
# Speaker labels and cues that name a role, not a person.
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


def _word(token: str) -> str:
    return token.strip(".,;:").casefold()


def trim_name(name: str) -> tuple[int, int]:
    """The span of a name inside a matched run: leading titles dropped, stopped at words that
    end a name in running text ("Jane Doe Date of birth")."""
    kept: list[re.Match[str]] = []
    for token in re.finditer(r"\S+", name):
        word = token.group()
        if not kept and re.fullmatch(rf"(?i:{HONORIFIC})\.?", word):
            continue
        if _word(word) in STOP or _word(word) in ROLES:
            break
        kept.append(token)
    # a particle never ends a name ("Maria de" is "Maria")
    while kept and re.fullmatch(_PARTICLE, kept[-1].group()):
        kept.pop()
    return (kept[0].start(), kept[-1].end()) if kept else (0, 0)


_GIVEN_RE = re.compile(rf"(?<![{re.escape(_UP + _LO)}'\u2019\-])(?P<name>{UPPER}{LETTER}+)\b")
_PERSON_VERB = re.compile(
    r"(?:['\u2019]s\b|[ \t]+(?:is|was|has|had|said|says|told|asked|went|wants|wanted|thinks|"
    r"thought|knows|knew|likes|loves|lives|lived|works|worked|did|does|will|would|can|could|"
    r"should|and\s+I|and\s+his|and\s+her)\b)"
)
_AFTER_BREAK = re.compile(r"(?:^|[.!?:;\n\"\u201c(]\s*)$")
# given names that are also ordinary capitalised words (a bank, a faith, a month, a verb)
AMBIGUOUS_GIVEN = frozenset(
    [
        "chase",
        "christian",
        "frank",
        "earl",
        "guy",
        "pat",
        "sue",
        "gene",
        "dean",
        "ray",
        "victor",
        "king",
        "lane",
        "jack",
        "iris",
        "lily",
        "ivy",
        "holly",
        "hazel",
        "heather",
        "amber",
        "ruby",
        "pearl",
        "crystal",
        "dawn",
        "eve",
        "autumn",
        "summer",
        "sky",
        "rocky",
        "dusty",
        "sandy",
        "buddy",
        "carol",
        "carl",
        "bob",
        "rob",
        "don",
        "ken",
        "lee",
        "jean",
        "joan",
        "van",
        "hunter",
        "mason",
        "taylor",
        "tyler",
        "cooper",
        "parker",
        "porter",
        "carter",
        "baker",
        "harper",
        "jordan",
        "austin",
        "dallas",
        "houston",
        "lincoln",
        "washington",
        "jackson",
        "madison",
        "brooklyn",
        "florence",
        "georgia",
        "virginia",
        "carolina",
        "india",
        "china",
        "paris",
        "sydney",
        "london",
        "israel",
        "jesus",
        "christ",
        "god",
        "lord",
        "allah",
        "angel",
        "queen",
        "prince",
        "princess",
        "duke",
        "baron",
        "countess",
    ]
)


def _given_names(text: str) -> list[Finding]:
    """A capitalised given name from the census lists standing inside a sentence ("Why is
    Rebecca so impulsive?", "Don't go, Brandon!"): a person far more often than not. At a
    sentence start a capitalised word says nothing, so it is left to the model and the cues."""
    first_names, _last = census()
    found: list[Finding] = []
    for m in _GIVEN_RE.finditer(text):
        word = m.group("name")
        key = word.casefold()
        if key not in first_names or key in COMMON or key in AMBIGUOUS_GIVEN or key in STOP:
            continue
        if len(word) < 3 or word.isupper():
            continue
        if re.search(r"\d[ \t]*$", text[max(0, m.start() - 3) : m.start()]) or re.match(
            r"[ \t]*\d", text[m.end() : m.end() + 3]
        ):
            continue  # "02 Jun", "Jan 2026": a date
        # at a sentence start only when a verb of a person follows ("Darren is …")
        starts = _AFTER_BREAK.search(text[max(0, m.start() - 3) : m.start()])
        if starts and not _PERSON_VERB.match(text, m.end()):
            continue
        found.append(Finding(KIND, m.start(), m.end(), word, "given-name"))
    return found


_NEXT_WORDS = re.compile(r"[ \t]+([\w'\u2019\-]+)(?:[ \t]+([\w'\u2019\-]+))?")


def before_organisation(text: str, end: int) -> bool:
    """A "name" followed on its line by an organisation's word is the organisation's name
    ("Silverbirch Building Society", "VALLEY WATER")."""
    m = _NEXT_WORDS.match(text, end)
    if m is None:
        return False
    return any(w and w.casefold() in ORG_WORDS for w in m.groups())


def _caps_name(name: str) -> bool:
    """Words in capitals that may be a person: none is a form, money or statement word."""
    words = [w.strip(".").casefold() for w in name.split()]
    long = [w for w in words if len(w) > 1]
    return bool(long) and not any(
        w in STOP or w in ROLES or w in COMMON or w in ORG_WORDS for w in long
    )


_NOT_A_NAME = frozenset(
    [
        "not",
        "unknown",
        "none",
        "the",
        "a",
        "an",
        "in",
        "on",
        "at",
        "and",
        "or",
        "but",
        "so",
        "just",
        "also",
        "very",
        "really",
        "here",
        "there",
        "this",
        "that",
        "what",
        "who",
        "why",
        "when",
        "where",
        "how",
        "yes",
        "no",
        "ok",
        "okay",
        "sorry",
        "please",
        "thanks",
        "thank",
        "is",
        "was",
    ]
)
_NOT_A_NAME |= frozenset(
    """let me see you it i we they he she hmm um er well sure right wait sorry pardon again
    same spelled spelt like""".split()
)


def _lower_name(value: str) -> tuple[int, int]:
    """A name given in any case after "my name is": its words until one that is no name."""
    kept: list[re.Match[str]] = []
    for token in re.finditer(r"\S+", value):
        if token.group().casefold() in _NOT_A_NAME or token.group().casefold() in STOP:
            break
        kept.append(token)
    return (kept[0].start(), kept[-1].end()) if kept else (0, 0)


def _is_name(name: str) -> bool:
    letters = [c for c in name if c.isalpha()]
    return len(letters) >= 2 and not all(len(t.rstrip(".")) == 1 for t in name.split())


@lru_cache(maxsize=4)
def _speaker_labels(text: str) -> Counter[str]:
    """How often each speaker label stands at a line start: transcripts repeat their speakers."""
    return Counter(m.group("name") for m in SPEAKER_RE.finditer(text))


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
            (SELF_RE, "self"),
            (HONORIFIC_RE, "honorific"),
            (CUE_RE, "cue"),
            (SIGN_OFF_RE, "sign-off"),
            (SPEAKER_RE, "speaker"),
            (SELF_LOWER_RE, "self-lower"),
            (ASKED_RE, "asked"),
            (STATEMENT_RE, "statement"),
            (NEWS_RE, "news"),
            (INITIAL_CAPS_RE, "initial-caps"),
        ):
            for m in regex.finditer(text):
                if source == "honorific" and _STREET_BEFORE.search(
                    text, max(0, m.start() - 40), m.start()
                ):
                    continue  # "12 Elm Dr Springfield": Drive, not a doctor
                group = next(
                    g
                    for g in ("name", "cell", "row", "am", "alone", "before", "after")
                    if g in m.groupdict() and m[g]
                )
                a, b = trim_name(m.group(group))
                name = m.group(group)[a:b]
                if not name or not _is_name(name):
                    continue
                if source in ("self-lower", "asked"):
                    a, b = _lower_name(m.group(group))
                    name = m.group(group)[a:b]
                    if not name:
                        continue
                elif not self._confirmed(name, source, text):
                    continue
                start = m.start(group) + a
                if source not in ("label", "i-comma", "self", "self-lower", "asked") and (
                    before_organisation(text, start + len(name))
                ):
                    continue  # "BRIGHTSPARK ENERGY", "Danube Freight Partners"
                found.append(Finding(KIND, start, start + len(name), name, source))
        if self.use_gazetteer:
            found += _given_names(text)
            first_names, last_names = census()
            for m in PAIR_RE.finditer(text):
                first, last = m.group("first").lower(), m.group("last").lower()
                if first in COMMON or last in COMMON or first in STOP or last in STOP:
                    continue
                if first in first_names and last in last_names:
                    start = m.start("pair")
                    found.append(Finding(KIND, start, m.end("pair"), m.group("pair"), "census"))
        return found

    def _confirmed(self, name: str, source: str, text: str) -> bool:
        if source in ("speaker", "cue"):
            return self._plausible(name, source, text)
        if source == "news":  # two words of a name, none of them a field or an organisation
            words = [_word(t) for t in name.split()]
            return len(words) >= 2 and not any(
                w in STOP or w in ROLES or w in ORG_WORDS for w in words
            )
        if source in ("statement", "initial-caps"):
            return _caps_name(name)
        return True

    @staticmethod
    def _plausible(name: str, source: str, text: str) -> bool:
        """Weak cues (a speaker label, "called") need a name-like value: not a role; one word
        must be a known name, or (a speaker label) stand as a label on more than one line —
        transcripts repeat their speakers, forms do not ("Fax:", "When:")."""
        words = [_word(t) for t in name.split()]
        if any(w in ROLES or w in STOP for w in words):
            return False
        if source == "speaker":
            first_names, last_names = census()
            known = any(w in first_names or w in last_names for w in words)
            repeated = _speaker_labels(text)[name] >= 2
            if len(words) > 1:
                return known
            given = words[0] in first_names and words[0] not in COMMON
            return given or (repeated and (known or name.isupper()))
        if source == "cue" and len(words) == 1:
            first_names, last_names = census()
            return words[0] in first_names or words[0] in last_names
        return True
