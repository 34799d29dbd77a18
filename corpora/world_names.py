"""People's names written with letters beyond ASCII, for the regression guard on names
(``tests/unit/test_names_non_ascii.py``, ``tests/integration/test_names_non_ascii_redaction.py``).

Own list, CC0: every name here was written for this file (a given name and a surname as people of
each origin write them; names are facts, no list was copied). It is a MEASURING list: it must
never be used to train or tune a model or a rule (the training data is made elsewhere, from other
lists), so that the guard measures names the detector has not been shown.

Each entry is a given name, a family name and an origin. ``family_first`` names (Vietnamese) are
written family name first, and a person so named is referred to later by the last word of the
given name ("Nguyễn Thị Ánh" ... "Ánh said"); everyone else by the family name.

The letters the issue asks for, each at least once in lower case and, through the capitals of a
name or its ALL-CAPS form, in upper case: ø å æ ð þ ł ń ś ź ż ß ä ö ü ő ű é è ê ñ ç ğ ş ı ă ț ř ď
ľ ū ė ņ ŷ œ ɔ ɛ ọ, Vietnamese stacked accents, and Yoruba letters with a tone mark that Unicode
has no precomposed form for (ọ̀ is ọ and a combining grave even in NFC).
"""

# ruff: noqa: RUF001, RUF002, RUF003
# (a Turkish dotless ı is the letter these names are spelt with, not a confusable i)
from __future__ import annotations

from dataclasses import dataclass

LICENCE = "CC0 1.0 (own list, written for this project)"


@dataclass(frozen=True, slots=True)
class WorldName:
    given: str
    family: str
    origin: str
    family_first: bool = False

    @property
    def full(self) -> str:
        if self.family_first:
            return f"{self.family} {self.given}"
        return f"{self.given} {self.family}"

    @property
    def alone(self) -> str:
        """The word a text uses for the person once the full name has been given."""
        if self.family_first:
            return self.given.split()[-1]
        words = self.family.split()
        return self.family if words[0] in _IRISH_PARTICLES else words[-1]


# "Ó Briain" alone is still "Ó Briain" in Irish usage; the particle is kept with the surname
_IRISH_PARTICLES = frozenset({"Ó", "Ní", "Mac", "Nic", "Uí", "Mhic"})


def _n(origin: str, *pairs: str, family_first: bool = False) -> tuple[WorldName, ...]:
    out = []
    for pair in pairs:
        given, family = pair.split("|")
        out.append(WorldName(given, family, origin, family_first))
    return tuple(out)


NAMES: tuple[WorldName, ...] = (
    *_n(
        "nordic",
        "Øyvind|Sørensen",
        "Åse|Bråten",
        "Kjersti|Ødegård",
        "Bjørn|Lægreid",
        "Søren|Kjærgaard",
        "Mette|Frølund",
        "Ørjan|Håkonsen",
        "Ingrid|Bjørnstad",
        "Åsa|Lindström",
        "Göran|Ångström",
        "Märta|Öberg",
        "Linnéa|Sjöström",
        "Henrik|Søndergaard",
        "Jyrki|Mäkelä",
        "Päivi|Hämäläinen",
        "Tuomas|Kärkkäinen",
        "Æbbe|Thygesen",
        "Sigrún|Mærsk",
    ),
    *_n(
        "icelandic-faroese",
        "Guðrún|Þórðardóttir",
        "Þórir|Sigurðsson",
        "Ævar|Guðmundsson",
        "Hrafnhildur|Ólafsdóttir",
        "Sigurður|Eiðsson",
        "Þuríður|Árnadóttir",
        "Eyðun|Jóhannesen",
        "Heðin|Mortensen",
        "Turið|Joensen",
        "Ásgeir|Þorvaldsson",
        "Birna|Hallþórsdóttir",
    ),
    *_n(
        "baltic",
        "Rūta|Šimkutė",
        "Gintarė|Žukauskienė",
        "Jūratė|Petrauskaitė",
        "Kęstutis|Jankūnas",
        "Žydrūnas|Baltrūnas",
        "Jānis|Bērziņš",
        "Kārlis|Ozoliņš",
        "Līga|Kalniņa",
        "Ņina|Ozoliņa",
        "Jēkabs|Kļaviņš",
        "Tõnu|Käärik",
        "Ülle|Õunapuu",
    ),
    *_n(
        "polish",
        "Łukasz|Wróbel",
        "Małgorzata|Śliwińska",
        "Grzegorz|Woźniak",
        "Żaneta|Kaźmierczak",
        "Bożena|Żółtowska",
        "Agnieszka|Dąbrowska",
        "Paweł|Ślęzak",
        "Mikołaj|Zieliński",
        "Jarosław|Łągiewka",
        "Zdzisław|Czyżewski",
        "Ewelina|Kołodziejczyk",
        "Ścibor|Nowacki",
        "Przemysław|Źrałek",
        "Jaśmina|Kośmider",
    ),
    *_n(
        "czech-slovak",
        "Jiří|Dvořák",
        "Kateřina|Růžičková",
        "Tomáš|Řezníček",
        "Ondřej|Procházka",
        "Věra|Čermáková",
        "Bořivoj|Šťastný",
        "Ľubomír|Ďurica",
        "Ľudmila|Kováčová",
        "Dušan|Ďuriš",
        "Ján|Hrušovský",
        "Zdeněk|Kňourek",
        "Ľuboš|Ďurčanský",
        "Marek|Maďarič",
        "Mária|Kráľová",
    ),
    *_n(
        "hungarian",
        "Ödön|Szőke",
        "Gyöngyi|Kőrösi",
        "Zsófia|Bíró",
        "Lőrinc|Győri",
        "Erzsébet|Szűcs",
        "Bálint|Küttel",
        "Réka|Vörös",
        "Ágnes|Ördög",
        "Ildikó|Őri",
        "Ernő|Fűzfa",
        "Kinga|Tűzkő",
    ),
    *_n(
        "german",
        "Jürgen|Müller",
        "Käthe|Weiß",
        "Uwe|Großmann",
        "Jörg|Bäumler",
        "Björn|Köhler",
        "Ulrike|Strauß",
        "Dörte|Jäger",
        "Änne|Schäfer",
        "Günther|Schröder",
        "Maximilian|Großkopf",
        "Sönke|Düwel",
    ),
    *_n(
        "turkish",
        "Şükrü|Öztürk",
        "Ayşe|Yılmaz",
        "Gülşen|Çelik",
        "Çağlar|Doğan",
        "Müge|Güneş",
        "İlkay|Şahin",
        "Ümit|Yıldırım",
        "Oğuz|Kılıç",
        "Sıla|Aydın",
        "Büşra|Ertuğrul",
        "Özlem|Karağaç",
        "Işıl|Coşkun",
    ),
    *_n(
        "romanian",
        "Ștefan|Țurcanu",
        "Ioana|Bălănescu",
        "Răzvan|Stănescu",
        "Andreea|Țăranu",
        "Cătălin|Munteanu",
        "Irina|Șerban",
        "Dănuț|Mărginean",
        "Florin|Cîrstea",
        "Ştefania|Ţepeş",
        "Aurelia|Bârsan",
    ),
    *_n(
        "iberian",
        "José|Muñoz",
        "Íñigo|Ibáñez",
        "Begoña|Peñalver",
        "María|Núñez",
        "Aitor|Ñíguez",
        "Marçal|Ferrer",
        "Núria|Llobet",
        "Mercè|Solà",
        "Marcel·lí|Domènech",
        "Jordi|Puigcercós",
        "João|Gonçalves",
        "Conceição|Araújo",
        "Sebastião|Simões",
        "Inês|Magalhães",
        "Luís|Guimarães",
        "Ângela|Brandão",
        "Ramón|Ortíz",
    ),
    *_n(
        "french",
        "Émile|Lefèvre",
        "Hélène|Bérenger",
        "Noëlle|Cœur",
        "Benoît|Lebœuf",
        "Françoise|Mercier",
        "Geneviève|Côté",
        "Élodie|Brûlé",
        "Anaïs|Ménard",
        "Irène|Laforêt",
        "Gaëtan|Lemaître",
        "Jérôme|Crête",
        "Ève|Bœsch",
    ),
    *_n(
        "irish-welsh",
        "Siobhán|Ní Bhriain",
        "Pádraig|Ó Súilleabháin",
        "Aoife|Ní Dhónaill",
        "Caoimhín|Ó Raghallaigh",
        "Seán|Mac Lochlainn",
        "Máire|Ó Dálaigh",
        "Llŷr|Williams",
        "Llŷr|Pryce",
        "Siân|Llewelyn",
        "Siôn|Rowlands",
        "Gwenllïan|Morgan",
        "Dafydd|Siôn",
    ),
    *_n(
        "west-african",
        # Yoruba, with and without tone marks (ọ̀, ọ́ have no precomposed form)
        "Olúwaṣeun|Adébáyọ̀",
        "Ọláolúwa|Adéyẹmí",
        "Adébísí|Ọ̀ṣúntókun",
        "Bọ́lá|Akínwùmí",
        "Ṣadé|Oyèlárán",
        "Fọlake|Ògúnlẹyẹ",
        "Ọlabisi|Adeyẹmi",
        # Igbo
        "Ngọzi|Ọkọnkwọ",
        "Chịọma|Nwọsụ",
        "Ụchechukwu|Ezeọkọ",
        # Akan (Twi, Fante)
        "Kwabena|Ɔpɔku",
        "Ɛsi|Mensah",
        "Akosua|Ɔsei",
        "Kwadwo|Nyamekyɛ",
        "Kɔfi|Boakye",
        # Ewe
        "Kɔku|Agbɔ",
        "Sɛnam|Dzidzɔ",
        "Kɔmla|Dɔvlo",
    ),
    *_n(
        "south-slavic",
        "Đurđica|Šimić",
        "Đorđe|Petrović",
        "Željko|Čačić",
    ),
    *_n(
        "vietnamese",
        "Thị Ánh|Nguyễn",
        "Đức Thắng|Trần",
        "Thị Hồng Nhung|Lê",
        "Văn Hùng|Phạm",
        "Thu Thảo|Đặng",
        "Quốc Bảo|Hoàng",
        "Thị Mỹ Duyên|Võ",
        "Tiến Dũng|Bùi",
        "Ngọc Sơn|Huỳnh",
        "Mạnh Cường|Đỗ",
        "Thị Ngọc Hân|Dương",
        "Quang Khải|Ngô",
        family_first=True,
    ),
)

# the letters the guard must cover (lower case; their capitals come from str.upper)
REQUIRED_LETTERS = "øåæðþłńśźżßäöüőűéèêñçğşıățřďľūėņŷœɔɛọ"
