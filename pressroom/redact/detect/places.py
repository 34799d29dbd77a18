"""Negative evidence for names: what is mostly a place or a nationality needs more than a guess
to be a person.

``places.txt`` lists countries, US states, continents, capitals and cities of 100,000 people or
more (GeoNames, CC BY 4.0; built by ``scripts/build_places.py``). A word that is also a common
given name or surname ("George", "Jackson", "Victoria") is not mostly a place: a person is as
likely, and a wrong guess there would leave a name unburned. Nationalities and demonyms are
written here.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from pressroom.redact.detect.name_words import fold

# at least this share of the 1990 US Census's people (per cent) bear it as a given name or a
# surname: then a place's name is as likely a person's ("Jordan", "Jackson", "Florence")
COMMON_NAME_PERCENT = 0.05

# several words are joined by "_" here
NATIONALITIES = frozenset(
    w.replace("_", " ")
    for w in """afghan albanian algerian american andorran angolan argentine argentinian armenian
    australian austrian azerbaijani azeri bahamian bahraini bangladeshi barbadian belarusian
    belgian belizean beninese bhutanese bolivian bosnian botswanan brazilian british bruneian
    bulgarian burkinabe burmese burundian cambodian cameroonian canadian chadian chilean chinese
    colombian congolese costa_rican croatian cuban cypriot czech danish djiboutian dominican dutch
    ecuadorian egyptian emirati english eritrean estonian ethiopian fijian filipino finnish french
    gabonese gambian georgian german ghanaian greek grenadian guatemalan guinean guyanese haitian
    honduran hungarian icelandic indian indonesian iranian iraqi irish israeli italian ivorian
    jamaican japanese jordanian kazakh kenyan korean kosovar kuwaiti kyrgyz lao laotian latvian
    lebanese liberian libyan lithuanian luxembourgish macedonian malagasy malawian malaysian
    maldivian malian maltese mauritanian mauritian mexican moldovan monegasque mongolian
    montenegrin moroccan mozambican namibian nepalese nepali nicaraguan nigerian nigerien
    norwegian omani pakistani palestinian panamanian paraguayan peruvian polish portuguese qatari
    romanian russian rwandan salvadoran samoan saudi scottish senegalese serbian sierra_leonean
    singaporean slovak slovakian slovenian somali south_african spanish sri_lankan sudanese
    surinamese swazi swedish swiss syrian taiwanese tajik tanzanian thai togolese tongan
    trinidadian tunisian turkish turkmen ugandan ukrainian uruguayan uzbek venezuelan vietnamese
    welsh yemeni zambian zimbabwean european african asian arab arabic latin hispanic
    scandinavian balkan caribbean""".split()
)


@cache
def places() -> frozenset[str]:
    text = resources.files("pressroom.redact.detect").joinpath("places.txt").read_text("utf-8")
    return frozenset(
        fold(line.strip()) for line in text.splitlines() if line.strip() and line[0] != "#"
    )


@cache
def _common_names() -> frozenset[str]:
    package = resources.files("names")
    common: set[str] = set()
    for name in ("dist.male.first", "dist.female.first", "dist.all.last"):
        for line in package.joinpath(name).read_text().splitlines():
            parts = line.split()
            if len(parts) >= 2 and float(parts[1]) >= COMMON_NAME_PERCENT:
                common.add(parts[0].lower())
    return frozenset(common)


def mostly_place(value: str) -> bool:
    """Whether a found name, as a whole, is a place or a nationality rather than a person:
    "Florida", "Buenos Aires", "Kenyan"; not "George", "Jackson" (common names too), nor a
    longer name that holds a place ("Paris Hilton")."""
    key = fold(value.strip(" .,;:'\u2019")).removesuffix("'s").removesuffix("s'")
    if not key:
        return False
    if key in NATIONALITIES or (key.endswith("s") and key[:-1] in NATIONALITIES):
        return True
    if key not in places():
        return False
    return len(key.split()) > 1 or key not in _common_names()
