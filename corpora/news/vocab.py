"""Word parts for organisations, clubs, products and brands (own lists, CC0), the hard
negatives (capitalised common nouns of product copy, UI labels, table headers), real
organisations' names from the Open Funder Registry (Crossref, CC0 1.0: ``orgs.txt``), and the
places (GeoNames, CC BY 4.0, read from the detector's own list).

Organisation names are built from parts so that no real company is named on purpose: a prefix
("Northgate"), a trade ("Mining") and a legal form ("Ltd"); a club from a made-up town and a
club word ("Atlético Verano FC", "Kelbridge Rovers"); a product from a brand, a thing and a model
("Stabilizer Pro X2"). Some firms carry a founder's surname ("Hale Brothers Ltd",
"Thorne Pennock"): the whole is an organisation, never a person, and those surnames are kept
apart from the people's lists.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path


def _s(s: str) -> tuple[str, ...]:
    return tuple(s.split())


def _w(s: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in s.strip().splitlines() if x.strip())


# -------------------------------------------------------------------------------- organisations

ORG_PREFIX = _s(
    "Northgate Riverbend Silverline Harbourview Kestrel Ironbridge Bluewater Redcliff Greywell "
    "Highmoor Fernhill Oakridge Larkspur Meridian Polaris Vantage Aurora Corvid Halcyon Tidewater "
    "Copperfield Stonegate Brightwater Eastwind Goldcrest Nordkap Westhaven Sunfield Clearbrook "
    "Blackthorn Summit Keystone Falconridge Amberley Lodestar Cobalt Granite Evergreen Bellwether "
    "Crestline Driftwood Foxglove Hollybank Juniper Marigold Nettlebed Orchard Pinecrest "
    "Quarrybank Saltmarsh Thistledown Umberfield Wrenfield Yarrow Zephyr Alderbank Brackenridge "
    "Cindervale"
)
ORG_TRADE = _s(
    "Mining Logistics Energy Capital Pharmaceuticals Foods Textiles Shipping Telecom Software "
    "Robotics Insurance Holdings Construction Minerals Freight Brewing Steel Ceramics Analytics "
    "Aviation Biotech Cement Chemicals Dairies Fisheries Forestry Media Motors Packaging Paper "
    "Plastics Properties Retail Solar Water Wind Semiconductors Labs Gold Copper Resources"
)
ORG_FORM = _w(
    """
    Ltd
    plc
    Inc.
    Group
    AG
    ASA
    S.A.
    GmbH
    Corp.
    Holdings
    Limited
    Co.
    SE
    N.V.
    Oyj
    A/S
    """
)
# founders' surnames for firms named after people: never a person in this corpus
FOUNDERS = _s(
    "Hale Thorne Ashby Merriweather Pennock Crabtree Fairclough Vandermeer Lindahl Bexley "
    "Gilchrist Harwood Osgood Prentice Quimby Rathbone Stallard Tolliver Underhill Waverley "
    "Yardley Abernethy Brereton Coldwell Dunstable Everard Fothergill Greaves"
)
FOUNDER_FORM = _w(
    """
    Brothers Ltd
    & Sons
    & Partners LLP
    & Co.
    Associates
    Brothers
    Family Trust
    """
)
BANK_FORM = _w(
    """
    Bank
    Savings Bank
    Credit Union
    Investment Bank
    Building Society
    Securities
    Asset Management
    """
)
PUBLIC_BODY = _w(
    """
    Ministry of Water Resources
    Ministry of Transport
    Ministry of Finance
    National Statistics Office
    Competition Authority
    Port Authority
    Environment Agency
    Financial Conduct Board
    Planning Inspectorate
    Food Standards Agency
    Audit Office
    Energy Regulator
    Sports Council
    Football Association
    Athletics Federation
    Chamber of Commerce
    Rowing Union
    Cricket Board
    Health Service Executive
    Maritime Safety Authority
    """
)
AGENCY = _s(
    "Nordpress Meridian Wirecast Tidings Courier Dispatch Herald Newsline Globewire Southwire "
    "Ledgerline Baltpress Capewire Sahelpress Eastwire Harbourpress Pennant Signalpost"
)
AGENCY_FORM = _w(
    """
    Wire
    News
    Press
    Agency
    """
)

PARTY = _w(
    """
    Party
    Alliance
    Movement
    Democrats
    Labour Party
    Greens
    Union
    List
    """
)
PARTY_BEFORE = _w(
    """
    Party of
    Alliance for
    Movement for
    """
)

# -------------------------------------------------------------------------------------- clubs

TOWN = _s(
    "Kelbridge Ashcombe Dunmere Norhaven Westmarch Eastfold Harrowby Lindholm Brackwater "
    "Carrowmore Stenfjord Valdemora Verano Montalba Ríoclaro Tarnowice Velkóvár Birkedal "
    "Ardmore Pennington Holmsby Marrowgate Kirkwall Thornbury Oldcastle Elmstead Farnley "
    "Greystoke Hollinwell Iverstone Jarrowby Kettlewick Lowmoor Mistlebrook Nethercote Orrisdale "
    "Portwynn Quenmore Rushden Sandleigh Tanfield Ulverby Wexcombe Ystradfell Zellingen "
    "Borovany Kalnėnai Sülemiş Vălenii Aldeavera Torrefría Skogby Hvalvík Lõunaküla"
)
CLUB_AFTER = _w(
    """
    United
    City
    Rovers
    Athletic
    Wanderers
    Town
    Albion
    FC
    Rangers
    Harriers
    Celtic
    Sporting
    County
    Hotspur
    Academicals
    """
)
CLUB_BEFORE = _w(
    """
    Atlético
    Real
    Sporting
    Dinamo
    FK
    IF
    Racing
    Olympique
    Union
    Deportivo
    Inter
    SV
    """
)
CLUB_END = _w(
    """
    FC
    CF
    SC
    BK
    AC
    """
)
COMPETITION = _w(
    """
    Premier Division
    First Division
    Championship
    National League
    Super League
    Challenge Cup
    League Cup
    Shield
    Open
    Classic
    Grand Prix
    Invitational
    Trophy
    Masters
    """
)

# ------------------------------------------------------------------------- products and brands

BRAND = _s(
    "Zentra Voltis Lumio Aquor Sonique Brevix Caldera Dynamo Equinox Fluxor Gravitas Helion "
    "Ionix Jovra Kinetra Lyric Maxtor Novalux Orbix Pulsar Quorra Rivo Solara Tessel Ultrix "
    "Vireo Wavecrest Xeno Yonder Zephra Arkon Blyth Cirro Deltra Embra Fennix"
)
THING = _s(
    "Stabilizer Sequencer Blender Router Tracker Scanner Speaker Headset Drone Kettle Monitor "
    "Keyboard Mixer Camera Projector Charger Thermostat Purifier Vacuum Printer Tablet Watch "
    "Amplifier Synth Turntable Console Lantern Scooter"
)
MODEL = _w(
    """
    Pro X2
    Pro
    Max
    Mini
    Air
    Lite
    300
    S
    Plus
    One
    Ultra
    2
    X
    Go
    Studio
    Neo
    500e
    GT
    """
)
# capitalised common nouns of product copy, UI labels in capitals and table-header tokens: not
# entities, and the corpus uses the same words in lower case elsewhere
COPY_NOUNS = _s(
    "Song Track Sequence Pattern Mode Record Play Mix Sample Tempo Loop Voice Scene Bank Edit "
    "Filter Shift Menu Volume Preset Output Input Channel Stereo Battery Power Display Timer "
    "Zoom Focus Studio Live Master Memory Cable Port Charge Clean Eco Turbo Night Shuffle Repeat"
)
UI_LABELS = _s(
    "PLAY STOP REC MENU SELECT ENTER SHIFT EXIT BACK EDIT SAVE LOAD MODE TEMPO SONG TRACK MIDI "
    "USB AUX OUT IN VOL HOLD RESET POWER START PAUSE SYNC TAP UNDO COPY PASTE OK CANCEL"
)
HEADERS = _w(
    """
    POS TEAM P W D L GF GA PTS
    Pos Club Pld W D L GD Pts
    # Team GP W L OTL PTS
    RK TEAM P W D L F A +/- PTS
    Pos Team Pl W D L For Ag Pts
    POS CLUB MP W D L GD PTS
    """
)

MONTHS = _s("January February March April May June July August September October November December")
WEEKDAYS = _s("Monday Tuesday Wednesday Thursday Friday Saturday Sunday")

# ------------------------------------------------------------------------------------- places

PLACES_FILE = Path(__file__).resolve().parents[2] / "pressroom/redact/detect/places.txt"


@cache
def places() -> tuple[str, ...]:
    """Place names from the detector's GeoNames list (CC BY 4.0): countries, US states,
    continents, capitals and cities of 100,000 people or more. Only single- and two-word names
    that no name list or word list here also holds."""
    out = []
    for line in PLACES_FILE.read_text(encoding="utf-8").splitlines():
        name = line.strip()
        if not name or name.startswith("#") or len(name.split()) > 2 or len(name) < 4:
            continue
        out.append(name)
    return tuple(out)


ORGS_FILE = Path(__file__).with_name("orgs.txt")


@cache
def registry_orgs() -> tuple[str, ...]:
    """Real organisations' names from the Open Funder Registry (Crossref, CC0 1.0): companies,
    foundations, societies, non-profits (``build_orgs.py`` wrote the list)."""
    lines = ORGS_FILE.read_text(encoding="utf-8").splitlines()
    return tuple(x for x in lines if x and not x.startswith("#"))


COUNTRIES = _w(
    """
    Norway
    Sweden
    Denmark
    Finland
    Iceland
    Estonia
    Latvia
    Lithuania
    Poland
    Czechia
    Slovakia
    Hungary
    Austria
    Germany
    Slovenia
    Croatia
    Serbia
    Romania
    Bulgaria
    Greece
    Turkey
    Spain
    Portugal
    Ireland
    France
    Italy
    Netherlands
    Belgium
    Nigeria
    Ghana
    Senegal
    Mali
    Kenya
    Ethiopia
    Uganda
    Tanzania
    Rwanda
    Morocco
    Egypt
    Jordan
    India
    Sri Lanka
    Bangladesh
    Nepal
    Pakistan
    China
    Japan
    South Korea
    Vietnam
    Brazil
    Mexico
    Chile
    Argentina
    Colombia
    Canada
    Australia
    New Zealand
    Ukraine
    """
)
# three-letter codes of the countries above, as results tables print them (MISC)
COUNTRY_CODES = _s(
    "NOR SWE DEN FIN ISL EST LAT LTU POL CZE SVK HUN AUT GER SLO CRO SRB ROU BUL GRE TUR ESP POR "
    "IRL FRA ITA NED BEL NGR GHA SEN MLI KEN ETH UGA TAN RWA MAR EGY JOR IND SRI BAN NEP PAK CHN "
    "JPN KOR VIE BRA MEX CHI ARG COL CAN AUS NZL UKR"
)
