"""The words of the two corpus halves: two disjoint sets of names, organisations, places,
streets and phrasings.

Over 500 lines because it is two data tables and nothing else; they stay side by side so that
a reviewer sees at once that the halves share no name, place or phrasing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Person:
    given: str
    family: str
    sex: str  # "f" or "m": titles and pronouns
    family_first: bool = False  # Vietnamese and Chinese order: the family name is written first

    @property
    def full(self) -> str:
        return f"{self.family} {self.given}" if self.family_first else f"{self.given} {self.family}"

    @property
    def short(self) -> str:
        """The name the person goes by alone in English prose."""
        if self.family_first and self.given.split()[-1] != self.given:
            return self.given.split()[-1]  # Vietnamese: the last given name (Hương)
        return self.family


@dataclass(frozen=True)
class Vocab:
    split: str
    people: tuple[Person, ...]
    orgs: tuple[str, ...]
    banks: tuple[str, ...]
    places: tuple[str, ...]
    streets_keep: tuple[str, ...]  # street-like words outside any address
    streets: tuple[str, ...]
    buildings: tuple[str, ...]
    po_boxes: tuple[str, ...]
    towns: tuple[tuple[str, str], ...]  # town, postcode (UK)
    us_towns: tuple[tuple[str, str, str], ...]
    merchants: tuple[str, ...]  # capitals on statements
    iban_countries: tuple[str, ...]
    headlines: tuple[str, ...]
    roles: tuple[str, ...]
    text: dict[str, tuple[str, ...]]


def _p(given: str, family: str, sex: str, first: bool = False) -> Person:
    return Person(given, family, sex, first)


DEV = Vocab(
    split="dev",
    people=(
        _p("Adaeze", "Okafor", "f"),
        _p("Oluwaseun", "Adeyemi", "m"),
        _p("Kwabena", "Mensah-Boateng", "m"),
        _p("Chiamaka", "Nwosu", "f"),
        _p("Haruto", "Sakamoto", "m"),
        _p("Ji-woo", "Park", "f"),
        _p("Wei", "Zhang", "m", True),
        _p("Mei-Ling", "Chen", "f"),
        _p("Priyanka", "Raghunathan", "f"),
        _p("Arjun", "Venkataraman", "m"),
        _p("Farhan", "Chowdhury", "m"),
        _p("Małgorzata", "Wiśniewska", "f"),
        _p("Dmitri", "Volkov", "m"),
        _p("Jiří", "Dvořák", "m"),
        _p("Sigríður", "Jónsdóttir", "f"),
        _p("Øystein", "Bråthen", "m"),
        _p("Linnéa", "Åkesson", "f"),
        _p("José Luis", "Fernández", "m"),
        _p("Ximena", "Castañeda", "f"),
        _p("Rocío", "Ibáñez", "f"),
        _p("Yousef", "Al-Masri", "m"),
        _p("Layla", "Haddad", "f"),
        _p("Omar", "Abdelrahman", "m"),
        _p("Thị Hương", "Nguyễn", "f", True),
        _p("Văn Đức", "Trần", "m", True),
        _p("Siobhán", "O'Sullivan", "f"),
        _p("Vikram", "D'Souza", "m"),
        _p("Anna-Lena", "Meyer-Hoffmann", "f"),
        _p("Rebecca", "Whitfield", "f"),
    ),
    orgs=(
        "Harbourside Credit Union",
        "Lagos Port Authority",
        "Northgate Housing Trust",
        "Baltic Grain Exchange",
        "Riverside Community Clinic",
        "Ministry of Water Resources",
        "Fjordline Ferries",
        "Andes Copper Cooperative",
        "Kestrel Insurance",
        "Tidewater Engineering",
    ),
    banks=("Meridian Mutual Bank", "Harbourside Credit Union", "Northern Savings Bank"),
    places=(
        "Lagos",
        "Kraków",
        "Bergen",
        "Valparaíso",
        "Đà Nẵng",
        "Hyderabad",
        "Amman",
        "Sapporo",
        "Rotterdam",
        "Leeds",
    ),
    streets_keep=("Wall Street", "High Street", "Abbey Road", "Harbour Road"),
    streets=(
        "Ropewalk Lane",
        "Kingfisher Close",
        "Old Mill Road",
        "Orchard Way",
        "Tannery Street",
        "Larkspur Avenue",
    ),
    buildings=("Kestrel House", "Flat 4, Beacon Court", "Unit 7, Riverside Works", "The Old Forge"),
    po_boxes=("PO Box 4471", "P.O. Box 118"),
    towns=(
        ("Hexham", "NE46 3QP"),
        ("Kendal", "LA9 4DH"),
        ("Truro", "TR1 2HX"),
        ("Stirling", "FK8 1QE"),
    ),
    us_towns=(("Bozeman", "MT", "59715"), ("Ithaca", "NY", "14850")),
    merchants=("NORTHERN WATER", "BRIGHTSPARK ENERGY", "CITYLINK TRANSIT", "GREENGROCER CO-OP"),
    iban_countries=("GB", "DE", "NL", "IE"),
    headlines=(
        "Port expansion stalls as dredging costs double",
        "Water tariffs to rise for a second year",
        "Grain exports recover after record harvest",
    ),
    roles=("Tenancy Services Manager", "Claims Officer", "Head of Member Services"),
    text={
        "news": (
            "{org1} said on Tuesday that work on the new container berth in {place1} would pause"
            " until the autumn. {P1}, who chairs the authority's finance committee, told"
            " reporters that the budget had grown to {amount1}.",
            "“We cannot keep signing cheques we do not understand,” {p1} said. {p1s} committee"
            " will publish a revised estimate in {month}.",
            "Local traders were less patient. {P2}, whose family has run a chandlery at {ADDR1}"
            " for three decades, said the delays had already cost {him2} {amount2} in lost"
            " orders. “Every month they promise us the road will open,” {p2} said.",
            "Engineers from {org2} blamed silt levels that were higher than the survey suggested."
            " A spokesperson for the firm confirmed that {P3} had led the original study.",
            "{p3} could not be reached for comment. Analysts on {street1} expect the authority to"
            " borrow again before the end of the year.",
            "The dispute now goes to the regional council, which meets on {date2}. Councillor"
            " {P4} said {he4} would ask for an independent review of {p1s} figures.",
        ),
        "feature": (
            "For forty years {P1} has built wooden boats by hand in a shed above the water at"
            " {place1}. Now {he1} is training the apprentice who may be the last.",
            "The shed smells of tar and spruce. {p1} works without drawings; the shape of each"
            " hull, {he1} says, is already in the timber. {p1s} father built boats here before"
            " {him1}, and the tools on the wall are his.",
            "{P2} arrived three winters ago with a degree in mechanical engineering and no idea"
            " how to steam a plank. “I broke eleven of them the first week,” {p2} says.",
            "The yard survives on repairs and on one new boat a year, paid for in advance by"
            " customers who wait eighteen months. An order from {org1} last spring kept the"
            " lights on, {tp1} admits.",
            "{P3}, a historian at {org2}, has catalogued more than two hundred boats from the"
            " district. In {p3s} archive the oldest surviving drawing dates from {year1}.",
            "“Nobody writes down what they know,” {p3} says. “When the builder goes, the boat"
            " type goes with {him1}.”",
            "In the mornings {p2} sharpens the chisels before anyone else arrives. {p1} pretends"
            " not to notice, but the apprentice\u2019s bench has been moved closer to the window.",
            "On the wall is a photograph of {p1s} first boat, launched on {date1}. It still"
            " fishes out of {place2}, according to {p3s} records.",
            "Money is the question nobody in the shed likes. A new boat sells for {amount2},"
            " which barely covers the timber and the hours. {p1} keeps the accounts in a school"
            " exercise book.",
            "{P6}, who bought one of {p1s} boats in {year1} and still rows it every summer,"
            " calls the yard “the last honest workshop on the coast”. {p6} visits most weeks,"
            " bringing coffee and opinions.",
            "When we leave, {p2} is fitting a thwart while {p1} watches and says nothing. That,"
            " {he2} tells us later, is how you know you got it right.",
            "By spring the apprentice will build a hull alone for the first time. {tp1} says"
            " {he1} will not watch. {p2} does not believe a word of it.",
        ),
        "feature-title": ("The last boatbuilders",),
        "interview": (
            "Can you tell me where you grew up?",
            "In {place1}, near the old fish market. My aunt, {P3}, ran the shop at {ADDR1} until"
            " it closed in {year1}. We lived above it, and later on {street1}.",
            "What kind of shop was it?",
            "Hardware, mostly. Nails, paraffin, rope. {p3s} husband did the accounts and she did"
            " everything else.",
            "And your first job?",
            "With {org1}, loading sacks. The foreman was a man called {P4}. Everybody was afraid"
            " of {p4} except my aunt.",
            "Why was that?",
            "She had lent him money once. {tp4} never forgot it, and neither did she.",
            "Did you stay in touch with {p3}?",
            "Until the end. I still have {p3s} ledger, with every debt written down in pencil.",
        ),
        "letter": (
            "Thank you for your letter of {date1} about the repairs to your home. I am sorry that"
            " the work has taken longer than we promised.",
            "Our surveyor, {P3}, visited on {date2} and agreed that the damp in the back bedroom"
            " needs a new damp-proof course. {tp3} has booked the contractor for {month}.",
            "In the meantime we will refund {amount1} of your rent. The refund will be paid to the"
            " account you gave us, IBAN {IBAN1}, within ten working days.",
            "If anything changes, or if {p3s} report raises questions, please call our repairs"
            " line on 0300 123 4567 and quote the reference above.",
        ),
        "invoice": (
            "Thank you for your business. Payment is due within 30 days of the invoice date.",
            "Please pay by bank transfer to {P1}, IBAN {IBAN1}, and quote the invoice number as"
            " the reference.",
        ),
        "memo": (
            "Please find attached the payment schedule agreed with {org1} on {date1}. {P3} in"
            " finance has checked every line against the contracts.",
            "Two payments differ from last quarter: {p3s} note on the schedule explains why. The"
            " first instalment of {amount1} leaves on {date2}.",
        ),
        "faint": (
            "Approved for payment to {P1} on {date1} by the claims panel.",
            "Paid into account {ACC1}, sort code {SORT1}, at {org1}.",
        ),
        "byline": ("By {P5}",),
        "credits": ("Words by {P4}. Photographs by {P5}.",),
        "caption": ("{P1} at work near {place2}. Photograph: {p5}",),
        "interview-head": (
            "Oral history project, {org2}",
            "Recorded {date2} in {place2}",
            "Interviewer: {P1}",
            "Interviewee: {P2}",
        ),
        "speaker": ("p{n}c",),
        "statement": (
            "CARD PAYMENT {merchant} {n4}",
            "FASTER PAYMENT TO {P2C} REF RENT",
            "SEPA CT {IBANC1} {p3c}",
            "DIRECT DEBIT {merchant}",
            "STANDING ORDER {i4c}",
            "+TRANSFER FROM {r5c}",
            "CASH WITHDRAWAL {place1C}",
            "BILL PAYMENT {p3c} DEPOSIT",
            "+FASTER PAYMENT FROM {p2c} {MON} SHARE",
            "CARD PAYMENT {merchant}",
            "+INTEREST PAID",
        ),
        "statement-head": (
            "Statement of account",
            "Date",
            "Description",
            "Paid out",
            "Paid in",
            "Balance",
        ),
        "statement-labels": ("Account number", "Sort code", "IBAN", "BIC", "Period"),
        "statement-foot": ("{bank} is authorised and regulated in the ordinary way.",),
        "letter-open": ("Dear {tp1},",),
        "letter-close": ("Yours sincerely,", "Kind regards,"),
        "letter-ref": ("Our ref:",),
        "form-title": ("Application for a hardship grant", "Change of bank details"),
        "form": (
            "Surname",
            "First names",
            "Date of birth",
            "Home address",
            "Postcode",
            "Telephone",
            "Account holder",
            "Sort code",
            "Account number",
            "Card (last used)",
            "Name",
            "Relationship",
        ),
        "form-sections": (
            "Section 1: About you",
            "Section 2: Where we pay the grant",
            "Section 3: Emergency contact",
        ),
        "form-sign": (
            "Declaration: I, {P1}, declare that the information on this form is true and"
            " complete. I understand that {org1} may check it with my bank.",
            "Signed: {P1}",
            "Date: {date1}",
            "For office use — checked by {P3} on {date2}",
        ),
        "faint-head": ("Payout request", "Checked by {P2}."),
        "faint-labels": (
            "Claimant",
            "Account number",
            "Sort code",
            "Address",
            "Amount",
            "Reference",
        ),
        "memo-head": ("MEMORANDUM", "To: {P1}", "From: {P2}", "Date: {date3}"),
        "schedule": (
            "Payment schedule",
            "Payee",
            "Account (IBAN)",
            "Address",
            "Amount",
            "Queries about this schedule go to {tp3} or to {org1}.",
        ),
        "invoice-labels": (
            "INVOICE",
            "No. {ref}   Date: {date1}",
            "Payment details",
            "Account name: ",
            "IBAN: ",
            "BIC: ",
            "Bill to",
            "Attn: {P2}",
            "Description",
            "Amount",
        ),
        "invoice-items": (
            "Translation of contract documents",
            "Site visit and report",
            "Editing, second round",
            "Travel (rail fares)",
            "Photography licence",
        ),
    },
)

HELD_OUT = Vocab(
    split="held-out",
    people=(
        _p("Folasade", "Ogunleye", "f"),
        _p("Kofi", "Asante", "m"),
        _p("Ngozi", "Eze", "f"),
        _p("Yaw", "Owusu-Ansah", "m"),
        _p("Takeshi", "Yamamoto", "m"),
        _p("Seo-yeon", "Kim", "f"),
        _p("Li Na", "Huang", "f", True),
        _p("Hiroko", "Tanaka", "f"),
        _p("Lakshmi", "Subramanian", "f"),
        _p("Rohan", "Mehta", "m"),
        _p("Ayesha", "Siddiqui", "f"),
        _p("Wojciech", "Krzyżanowski", "m"),
        _p("Natalia", "Kuznetsova", "f"),
        _p("Bohdan", "Shevchenko", "m"),
        _p("Zdeněk", "Novák", "m"),
        _p("Ragnhildur", "Þórsdóttir", "f"),
        _p("Mikael", "Sjöberg", "m"),
        _p("Jørgen", "Kjærgaard", "m"),
        _p("Guadalupe", "Ordóñez", "f"),
        _p("Joaquín", "Peña Villalobos", "m"),
        _p("Inés", "Barrientos", "f"),
        _p("Khalid", "Al-Rashidi", "m"),
        _p("Noura", "Bensalem", "f"),
        _p("Tariq", "El-Amin", "m"),
        _p("Minh Tuấn", "Phạm", "m", True),
        _p("Thị Ngọc Ánh", "Lê", "f", True),
        _p("Quốc Bảo", "Võ", "m", True),
        _p("Ciarán", "O'Donoghue", "m"),
        _p("Marco", "D'Angelo", "m"),
        _p("Jean-Baptiste", "Moreau-Lefèvre", "m"),
        _p("Harriet", "Ashworth", "f"),
    ),
    orgs=(
        "Accra Cocoa Board",
        "Silverbirch Building Society",
        "Danube Freight Partners",
        "Western Lakes Water Authority",
        "Coastal Teachers' Union",
        "St Brendan's Hospital",
        "Polar Star Shipping",
        "Pacific Rim Textiles",
        "Bureau of Statistics",
        "Granite City Council",
    ),
    banks=("Granite City Bank", "Silverbirch Building Society", "Lakeland Cooperative Bank"),
    places=(
        "Accra",
        "Brno",
        "Tromsø",
        "Cusco",
        "Huế",
        "Pune",
        "Tunis",
        "Busan",
        "Antwerp",
        "Cardiff",
    ),
    streets_keep=("Fleet Street", "Downing Street", "Bourbon Street", "Station Road"),
    streets=(
        "Chandlers Row",
        "Heron Walk",
        "Foundry Lane",
        "Quarry Hill Road",
        "Willowbrook Crescent",
        "Saltmarsh Drive",
    ),
    buildings=(
        "Marlowe House",
        "Apartment 12, Lighthouse Quay",
        "Suite 3, The Granary",
        "Ivy Cottage",
    ),
    po_boxes=("PO Box 902", "Post Office Box 3310"),
    towns=(
        ("Whitby", "YO21 1DH"),
        ("Ludlow", "SY8 1AX"),
        ("Penrith", "CA11 7PT"),
        ("Oban", "PA34 4LW"),
    ),
    us_towns=(("Missoula", "MT", "59802"), ("Asheville", "NC", "28801")),
    merchants=("VALLEY WATER", "SUNRISE POWER", "METRO BUS PASS", "CORNER MARKET"),
    iban_countries=("FR", "PL", "NO", "ES", "BE"),
    headlines=(
        "Cocoa farmers win fairer price deal",
        "River freight returns after dry summer",
        "Hospital waiting lists fall for first time in years",
    ),
    roles=("Customer Relations Lead", "Senior Caseworker", "Director of Housing"),
    text={
        "news": (
            "Farmers around {place1} will receive a higher minimum price for their beans from next"
            " season, {org1} announced on {date1}.",
            "The agreement follows eight months of talks led by {P1}, a former extension officer"
            " who now represents more than four thousand growers. “It is not everything we asked"
            " for, but it is a start,” {tp1} said at a press conference.",
            "Under the deal, buyers must pay at least {amount1} a tonne. {p1s} negotiating team"
            " had pushed for more.",
            "Not everyone is convinced. {P2} runs a drying yard from {ADDR1} and says"
            " transport costs will swallow most of the increase. “Ask anyone here what diesel"
            " costs now,” {p2} said, pointing at a queue of lorries.",
            "Economists at {org2} estimated that the change adds {amount2} to annual export"
            " earnings. Their report, written by {P3} and colleagues, warns that the weather"
            " remains the bigger risk.",
            "Commentators on {street1} reacted calmly. The board reviews the price again in"
            " {month}, and {p3} has been asked to advise it, alongside {P4}.",
        ),
        "feature": (
            "At two in the morning the ovens at the back of a terraced house in {place1} are"
            " already hot. {P1} has run the bakery for nineteen years and has never once slept"
            " past midnight.",
            "{p1s} day starts with the sourdough, fed the evening before and left under a damp"
            " cloth. {He1} tests it with a knuckle, the way {his1} grandmother did.",
            "The night shift is three people. {P2} shapes the loaves; {he2} came to the city to"
            " study chemistry and stayed for the bread. “The hours are terrible,” {p2} says,"
            " smiling, “but nobody phones you at three in the morning.”",
            "The third is {P3}, who drives the van. By five {p3} has loaded two hundred loaves"
            " for cafés across the city, and an order for {org1} that has not changed in a"
            " decade.",
            "Flour prices have risen by a third since {year1}. {tp1} has absorbed most of it;"
            " the price of a loaf went up once, by {amount1}.",
            "“People notice,” says {p1}. “They do not complain, but they notice.”",
            "At six the shop opens on {street1} and the queue is already at the door. {P2}\u2019s"
            " rye is gone by half past.",
            "By then {p3} is back with the empty crates and {p1} is asleep upstairs. The cycle"
            " restarts in nineteen hours; {p2} will feed the starter before going home.",
            "The accounts are kept by {P6}, {p1s} neighbour, who comes in on Fridays with a"
            " calculator and a flask of tea. {p6} says the margins are thinner every year.",
            "In {month} a supermarket chain offered to buy the recipe. {tp1} refused in one"
            " sentence, and {p2} framed the letter; it hangs above the flour bins.",
            "{p3} has started a second round to the villages north of {place3}, where the last"
            " bakery closed in {year1}.",
            "Asked whether the bakery will outlast {him1}, {p1} shrugs and points at {p2s} bench.",
        ),
        "feature-title": ("Night shift at the bakery",),
        "interview": (
            "When did you first come to {place1}?",
            "In {year1}, with two suitcases and a letter for my cousin {P3}. {He3} met me at the"
            " bus station.",
            "What was the work like then?",
            "Long. We sorted parcels for {org1} from six until six. {p3s} friend {P4} got us both"
            " the jobs.",
            "Was {p4} a supervisor?",
            "No, a driver. But everybody listened to {tp4}.",
            "Do you still see your cousin?",
            "Every Sunday. {p3} lives at {ADDR1} now, not far from {street1}.",
        ),
        "letter": (
            "We write about the claim you made on {date1} for storm damage to your roof. Our"
            " assessor has now completed the inspection.",
            "{P3} from our claims team inspected the property on {date2}. {p3s} report confirms"
            " that the damage is covered under section 4 of your policy.",
            "We will pay {amount1} directly into your bank account ({IBAN1}) once you sign and"
            " return the enclosed acceptance form. {tp3} will then arrange the builder.",
            "Should you disagree with the assessment, you may ask for a second inspection within"
            " 28 days of this letter.",
        ),
        "invoice": (
            "Terms: net 14 days. Late payments attract interest at 2% per month.",
            "Remit to {P1} — bank account IBAN {IBAN1} — quoting the invoice reference.",
        ),
        "memo": (
            "Attached is the schedule of refunds approved by {org1} at its meeting on {date1}."
            " {P3} reconciled it against the claims register.",
            "As {p3s} covering note says, two refunds were reissued. The total of {amount1} is"
            " released on {date2}.",
        ),
        "faint": (
            "Settlement of {amount1} authorised for {P1} on {date1}.",
            "Transfer to account no. {ACC1}, branch {SORT1}, {org1}.",
        ),
        "byline": ("{P5}, staff reporter",),
        "credits": ("Story: {P4} · Pictures: {P5}",),
        "caption": ("{P1} in the bakery before dawn. Picture by {p5}",),
        "interview-head": (
            "{org2} — community archive",
            "Session of {date2}, {place2}",
            "Present: {P1} (for the archive) and {P2}",
        ),
        "speaker": ("tp{n}C",),
        "statement": (
            "POS {merchant} {n4}",
            "TFR TO {P2C} RENT",
            "SEPA INST {IBANC1} {p3c} INVOICE",
            "DD {merchant}",
            "SO {i4c} SAVINGS",
            "+BGC {r5c}",
            "ATM {place1C}",
            "BP {p3c} REFUND",
            "+CR FROM {p2c} {MON}",
            "POS {merchant}",
            "+INTEREST",
        ),
        "statement-head": (
            "Your account summary",
            "Posted",
            "Details",
            "Debit",
            "Credit",
            "Running total",
        ),
        "statement-labels": ("Acct no.", "Branch", "IBAN", "SWIFT/BIC", "Dates"),
        "statement-foot": ("Deposits with {bank} are protected up to the statutory limit.",),
        "letter-open": ("Dear {P1},",),
        "letter-close": ("Yours faithfully,", "Best wishes,", "Regards,"),
        "letter-ref": ("Reference:",),
        "form-title": ("Bursary claim", "Member payment details"),
        "form": (
            "Family name",
            "Given name(s)",
            "Born",
            "Residential address",
            "Post code",
            "Phone",
            "Name on the account",
            "Bank sort code",
            "Account no.",
            "Debit card",
            "Next of kin",
            "Relation",
        ),
        "form-sections": (
            "Part A — Applicant",
            "Part B — Bank",
            "Part C — Contact in an emergency",
        ),
        "form-sign": (
            "I, {P1}, confirm that these details are correct and that {org1} may verify them"
            " with my bank.",
            "Signature: {P1}",
            "Dated: {date1}",
            "Verified by {P3}, {date2}",
        ),
        "faint-head": ("Settlement advice", "Countersigned {P2}"),
        "faint-labels": ("Payee", "Acct no.", "Branch code", "Postal address", "Sum", "Our ref"),
        "memo-head": ("INTERNAL NOTE", "For: {P1}", "Prepared by: {P2}", "On: {date3}"),
        "schedule": (
            "Refund schedule",
            "Beneficiary",
            "IBAN",
            "Postal address",
            "Refund",
            "Questions: {tp3}, {org1}.",
        ),
        "invoice-labels": (
            "TAX INVOICE",
            "Invoice no. {ref} · issued {date1}",
            "How to pay",
            "Beneficiary: ",
            "IBAN ",
            "SWIFT: ",
            "Customer",
            "For the attention of {P2}",
            "Item",
            "Total",
        ),
        "invoice-items": (
            "Consulting, March",
            "Workshop facilitation (2 days)",
            "Report design and layout",
            "Venue hire",
            "Printing of handouts",
        ),
    },
)

VOCABS = {"dev": DEV, "held-out": HELD_OUT}
MONTHS = ("January", "February", "March", "April", "June", "July", "September", "October")
