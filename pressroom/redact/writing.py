"""Which writing a page is in — the scripts of its letters and, for Latin text, a guess at the
language — and which writings the recognisers were made for: a page in a writing they do not
read is not unreadable, and it is not checked for names either (``redact.engine`` holds it).

Scripts come from each letter's Unicode name (no dictionary, no model); the language of Latin
text from its commonest short words, lists written here for the big European languages. Both
are cheap enough for every page of a redaction."""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pressroom.settings import DEFAULT_NER_MODEL, RedactionSettings

# a page with fewer letters than this says too little to judge its writing (a form's labels,
# a page number, a stamp): it is read as any page
MIN_LETTERS = 30
# a page is "mostly" in writing the recognisers do not read when this share of its letters
# is: a few words of another script (a quoted title, an address abroad) do not hold a page;
# a bilingual page does
UNREAD_SHARE = 1 / 3
# the language of Latin text is guessed from at least this many of its short words, and from
# words that are this share of all its words at least (a table of figures and names has few)
MIN_STOP_WORDS = 6
MIN_STOP_SHARE = 0.08
# a word repeated down a table's column counts this many times at most, and a language is
# named only on this many different words of its own
MAX_PER_WORD = 5
MIN_DISTINCT = 4
# another language than English is named only when its words outnumber English's by this much
LANGUAGE_MARGIN = 1.5

# Each language's commonest short words, written for this guess: a word English uses too ("in",
# "a", "on", "so", "was", "no", "to", "as") is left out of the others' lists, so English text
# scores nothing in them; so is every word of one letter ("y", "e", "o", "à", "i", "w"): letter-
# spaced headings ("N O T I C E"), initials and labels ("a1 a2") are full of them.
STOP_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        "the and of to in is that for it with was on be by this are from at or an have has not "
        "which but were his her they their will would been had we you he she there who its "
        "what when into than them these those our your can could should may".split()
    ),
    "fr": frozenset(
        "le la les des du une et est dans pour qui que sur avec pas par au aux ce cette ces "
        "sont ont été où il elle nous vous ils elles leur leurs mais ou se sa son ses qu "
        "plus être fait comme très aussi tout tous entre depuis avait était de un".split()
    ),
    "de": frozenset(
        "der die das und ist nicht mit den dem des ein eine einer eines zu von auf für sich auch "
        "es im bei wird wurde sind aus nach oder werden wie dass zum zur über noch nur hat haben "
        "sie er wir ich durch gegen unter vor nicht kein keine".split()
    ),
    "es": frozenset(
        "el los las del en que por con para una es se lo como más pero sus su al fue está "
        "son ha muy también este esta entre sobre desde hasta cuando todo de un".split()
    ),
    "it": frozenset(
        "il di che della delle dei degli per non una con sono gli nel nella al alla anche "
        "come più ma ha da questo questa lo la del essere stato tra fra un".split()
    ),
    "nl": frozenset(
        "de het een en van dat die niet zijn op te voor met ook aan er maar om wordt werd bij "
        "naar deze dit heeft hebben worden nog wel kan uit tot ze zich geen".split()
    ),
    "pt": frozenset(
        "os da do das dos em um uma não para com que se por mais como foi ao são está também "
        "pela pelo seu sua na de ele ela muito já".split()
    ),
    "pl": frozenset(
        "na się nie do jest że jak od po przez dla ale są oraz który która które było "
        "tym czy tak jego jej ich już".split()
    ),
    # Latin, for the placeholder text (lorem ipsum) documents carry: told apart so that it is
    # not taken for French or Italian, and read as any Latin text (``PLACEHOLDER``)
    "la": frozenset(
        "lorem ipsum dolor sit amet consectetur consetetur adipiscing adipisicing elit sed eiusmod "
        "tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud "
        "exercitation ullamco laboris nisi aliquip ex ea commodo consequat duis aute irure "
        "reprehenderit voluptate velit esse cillum fugiat nulla pariatur excepteur sint occaecat "
        "cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum "
        "diam nonumy eirmod invidunt erat sadipscing".split()
    ),
    "sv": frozenset(
        "och att det som en är på för med har inte av den till om ett jag var de kan sig men "
        "vid från också eller efter".split()
    ),
}
LANGUAGE_NAMES = {
    "en": "English",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "it": "Italian",
    "nl": "Dutch",
    "pt": "Portuguese",
    "pl": "Polish",
    "sv": "Swedish",
    "la": "Latin (placeholder text)",
    "ru": "Russian",
    "el": "Greek",
    "ar": "Arabic",
    "he": "Hebrew",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "th": "Thai",
    "hi": "Hindi",
}

# the languages each script writes, as far as a model's language says which scripts it reads
# (a model of any of them is taken to read the script's names)
SCRIPT_LANGUAGES: dict[str, frozenset[str]] = {
    "Latin": frozenset(STOP_WORDS) | {"ro", "cs", "sk", "hu", "fi", "da", "nb", "tr", "vi"},
    "Cyrillic": frozenset({"ru", "uk", "bg", "sr", "mk", "be", "kk"}),
    "Greek": frozenset({"el"}),
    "Arabic": frozenset({"ar", "fa", "ur"}),
    "Hebrew": frozenset({"he", "yi"}),
    "Han": frozenset({"zh", "ja"}),
    "Kana": frozenset({"ja"}),
    "Hangul": frozenset({"ko"}),
    "Thai": frozenset({"th"}),
    "Devanagari": frozenset({"hi", "mr", "ne"}),
}
# languages a page is told to be in only so that it is named rightly: placeholder text (lorem
# ipsum) names no one, so recognisers of any Latin-script language read it
PLACEHOLDER = frozenset({"la"})
NON_LATIN = frozenset().union(*(v for k, v in SCRIPT_LANGUAGES.items() if k != "Latin"))
# Tesseract's codes of the languages above (ISO 639-2/T, its Chinese by variant)
TESSERACT_LANGUAGES = {
    "eng": "en", "fra": "fr", "deu": "de", "spa": "es", "ita": "it", "nld": "nl", "por": "pt",
    "pol": "pl", "swe": "sv", "ron": "ro", "ces": "cs", "slk": "sk", "hun": "hu", "fin": "fi",
    "dan": "da", "nor": "nb", "tur": "tr", "vie": "vi", "rus": "ru", "ukr": "uk", "bul": "bg",
    "srp": "sr", "mkd": "mk", "bel": "be", "kaz": "kk", "ell": "el", "ara": "ar", "fas": "fa",
    "urd": "ur", "heb": "he", "yid": "yi", "chi_sim": "zh", "chi_tra": "zh", "jpn": "ja",
    "kor": "ko", "tha": "th", "hin": "hi", "mar": "mr", "nep": "ne",
}  # fmt: skip
# how a script is named to a person, where its name alone would not say the language
SCRIPT_NAMES = {
    "Kana": "Japanese",
    "Hangul": "Korean (Hangul)",
    "Han": "Chinese (Han)",
}
# the words of Unicode character names that say a script (a letter's name holds one: "LATIN
# SMALL LETTER A", "FULLWIDTH LATIN …", "HALFWIDTH KATAKANA …", "CJK UNIFIED IDEOGRAPH-4E00");
# a letter whose name holds none ("MICRO SIGN", "MODIFIER LETTER …", "MATHEMATICAL BOLD …")
# is counted in no script
_NAME_SCRIPTS = {
    **{
        word: word.capitalize()
        for word in (
            "LATIN CYRILLIC GREEK ARABIC HEBREW HANGUL THAI DEVANAGARI BENGALI GURMUKHI "
            "GUJARATI ORIYA TAMIL TELUGU KANNADA MALAYALAM SINHALA LAO TIBETAN MYANMAR "
            "GEORGIAN ARMENIAN ETHIOPIC KHMER MONGOLIAN SYRIAC THAANA BOPOMOFO YI"
        ).split()
    },
    "CJK": "Han",
    "IDEOGRAPHIC": "Han",
    "HIRAGANA": "Kana",
    "KATAKANA": "Kana",
    "KATAKANA-HIRAGANA": "Kana",
}

# the languages of the recognisers that are not the name model: addresses are found in the
# formats of the US, Canada and the UK (``detect.addresses``)
ADDRESS_LANGUAGES = frozenset({"en"})
# what a model's name says of its language, where its own files do not: spaCy's packages are
# named ``<lang>_core_…``/``<lang>_ent_…``, Pressroom's ``pressroom_names_<lang>``;
# ``xx_ent_wiki_sm`` is WikiNER's languages
MULTILINGUAL = {"xx": frozenset({"en", "de", "es", "fr", "it", "nl", "pl", "pt", "ru"})}

_WORD = re.compile(r"[^\W\d_]+")


@lru_cache(maxsize=4096)
def script_of(char: str) -> str | None:
    """The script of a letter ("Latin", "Cyrillic", "Han", "Kana", "Hangul", …); None for
    anything that is not a letter (digits, marks, punctuation)."""
    if not char.isalpha():
        return None
    if char < "\x80":
        return "Latin"
    for word in unicodedata.name(char, "").split():
        script = _NAME_SCRIPTS.get(word)
        if script is not None:
            return script
    return None


@dataclass(frozen=True, slots=True)
class Writing:
    """A page's letters by script, and the language its Latin words read as (None: no
    clear language, or too few words to say)."""

    letters: int
    scripts: Mapping[str, int]
    language: str | None = None

    @property
    def script(self) -> str | None:
        """The script most of its letters are in."""
        return max(self.scripts, key=lambda s: self.scripts[s]) if self.scripts else None


def writing_of(text: str) -> Writing:
    """The scripts of ``text``'s letters and, where it has Latin words, their language."""
    counts: Counter[str] = Counter()
    for char in text:
        script = script_of(char)
        if script is not None:
            counts[script] += 1
    language = guess_language(text) if counts.get("Latin") else None
    return Writing(sum(counts.values()), dict(counts), language)


def guess_language(text: str) -> str | None:
    """The language of Latin ``text`` by its short words (ISO 639-1: "en", "fr", …), or None
    where they are too few or no language clearly leads. Another language than English is
    named only well ahead of English: a wrong guess holds an English page."""
    words = [w for w in _WORD.findall(text.lower()) if script_of(w[0]) == "Latin"]
    if not words:
        return None
    counts = Counter(w for w in words if len(w) > 1)
    # a word repeated down a table's column ("na", "sus") is one word: it counts a few times
    # at most, and a language needs several different words of its own
    scores = {
        lang: sum(min(n, MAX_PER_WORD) for w, n in counts.items() if w in stop)
        for lang, stop in STOP_WORDS.items()
    }
    best = max(scores, key=lambda lang: scores[lang])
    top = scores[best]
    if top < MIN_STOP_WORDS or top < MIN_STOP_SHARE * len(words):
        return None
    if sum(w in STOP_WORDS[best] for w in counts) < MIN_DISTINCT:
        return None
    if best == "en":
        return "en"
    return best if top >= LANGUAGE_MARGIN * scores["en"] else None


def model_languages(model: str) -> frozenset[str]:
    """The languages a spaCy name model reads, from its ``meta.json`` where it is a folder,
    else from its name; English where neither says (Pressroom's own models are)."""
    path = Path(model)
    meta = path / "meta.json"
    if meta.is_file():
        try:
            lang = json.loads(meta.read_text(encoding="utf-8")).get("lang")
        except (OSError, ValueError):
            lang = None
        if isinstance(lang, str) and lang:
            return MULTILINGUAL.get(lang, frozenset({lang}))
    stem = path.name.lower().replace("-", "_")
    head, _, _ = stem.partition("_")
    if head in MULTILINGUAL:
        return MULTILINGUAL[head]
    if len(head) == 2 and head.isalpha() and stem != head:
        return frozenset({head})
    tail = stem.rpartition("_")[2]
    if stem.startswith("pressroom_") and len(tail) == 2 and tail.isalpha():
        return frozenset({tail})
    return frozenset({"en"})


def name_languages(redaction: RedactionSettings | None = None) -> frozenset[str]:
    """The languages the loaded name models read (ISO 639-1): those of any of the pipelines
    ``PRESSROOM_NER_MODEL`` names (``a+b``). The default model is English."""
    model = redaction.ner_model if redaction is not None else DEFAULT_NER_MODEL
    return frozenset().union(*(model_languages(m) for m in model.split("+") if m.strip()))


# the classes whose recognisers are made for some languages only; account numbers are
# digits and letters in any writing
def language_bound(
    classes: Iterable[str], redaction: RedactionSettings | None = None
) -> dict[str, frozenset[str]]:
    """For each class of ``classes`` that is looked for in some languages only, those."""
    out: dict[str, frozenset[str]] = {}
    for kind in classes:
        if kind == "name":
            out[kind] = name_languages(redaction)
        elif kind == "address":
            out[kind] = ADDRESS_LANGUAGES
    return out


def covers(languages: frozenset[str], script: str, language: str | None) -> bool:
    """Whether recognisers of ``languages`` read letters of ``script`` (in ``language``, where
    it is known: Latin text whose language no word gave away is read as theirs). A language
    this module does not know is taken to be written in Latin letters."""
    if script == "Latin":
        if language is not None and language not in PLACEHOLDER:
            return language in languages
        return bool(languages - NON_LATIN)
    return bool(SCRIPT_LANGUAGES.get(script, frozenset()) & languages)


def unread(
    writing: Writing, languages: frozenset[str], *, scripts_only: bool = False
) -> str | None:
    """What a page is written in, said for a person ("Cyrillic script", "French", "Korean
    (Hangul)"), when ``UNREAD_SHARE`` of its letters are in writing that recognisers of
    ``languages`` do not read; None when they read it (or it has too few letters to say).
    ``scripts_only``: the reader reads any language of a script it reads (OCR: English
    Tesseract data reads French prose)."""
    if writing.letters < MIN_LETTERS:
        return None
    language = None if scripts_only else writing.language
    missed = {
        script: n
        for script, n in writing.scripts.items()
        if not covers(languages, script, language)
    }
    if sum(missed.values()) < UNREAD_SHARE * writing.letters:
        return None
    script = max(missed, key=lambda s: missed[s])
    return describe(script, writing)


def describe(script: str, writing: Writing) -> str:
    if script == "Latin" and writing.language is not None:
        return LANGUAGE_NAMES.get(writing.language, writing.language)
    if script == "Han" and writing.scripts.get("Kana", 0) * 10 >= writing.scripts["Han"]:
        return "Japanese"
    return SCRIPT_NAMES.get(script, f"{script} script")


def languages_said(languages: frozenset[str]) -> str:
    """``languages`` for a person: "English", "English and French"."""
    names = sorted(LANGUAGE_NAMES.get(lang, lang) for lang in languages)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# what a class's recognisers are called where a reason names them
RECOGNISERS = {"name": "the name model", "address": "the address recognisers", "ocr": "OCR"}
MAX_PAGES_SAID = 8  # a reason lists this many pages of a writing, then says how many more


def ocr_languages(codes: Iterable[str]) -> frozenset[str]:
    """The languages (ISO 639-1) of Tesseract language codes; a code not known here stands for
    itself (and is taken to read Latin letters)."""
    return frozenset(TESSERACT_LANGUAGES.get(code, code) for code in codes)


@dataclass(frozen=True, slots=True)
class Unread:
    """Pages whose writing the recognisers of a class do not read: each page (from 1) with
    what it is written in, and each class that misses one with the languages it reads."""

    pages: Mapping[int, str]
    kinds: Mapping[str, frozenset[str]]

    def reason(self) -> str:
        """For a person, without a word of the document: "written in Cyrillic script (page 1),
        which the name model (English) does not read"."""
        by_writing: dict[str, list[int]] = {}
        for page, said in sorted(self.pages.items()):
            by_writing.setdefault(said, []).append(page)
        where = ", ".join(
            f"{said} ({_pages_said(pages)})" for said, pages in sorted(by_writing.items())
        )
        readers = " and ".join(
            f"{RECOGNISERS.get(kind, kind)} ({languages_said(langs)})"
            for kind, langs in sorted(self.kinds.items(), key=lambda item: item[0] != "name")
        )
        verb = "does" if len(self.kinds) == 1 else "do"
        return f"written in {where}, which {readers} {verb} not read"


def _pages_said(pages: list[int]) -> str:
    shown = ", ".join(map(str, pages[:MAX_PAGES_SAID]))
    more = len(pages) - MAX_PAGES_SAID
    return ("page " if len(pages) == 1 else "pages ") + shown + (f" and {more} more" * (more > 0))


def unread_pages(texts: Iterable[str], bound: Mapping[str, frozenset[str]]) -> Unread | None:
    """Of pages' texts (in order), those mostly in writing that a class of ``bound`` (class ->
    the languages its recognisers read: ``language_bound``) does not read; None when every
    page is read (or nothing is bound). The class ``"ocr"`` reads by script alone."""
    if not bound:
        return None
    pages: dict[int, str] = {}
    kinds: dict[str, frozenset[str]] = {}
    for n, text in enumerate(texts, 1):
        writing = writing_of(text)
        for kind, languages in bound.items():
            said = unread(writing, languages, scripts_only=kind == "ocr")
            if said is not None:
                pages.setdefault(n, said)
                kinds[kind] = languages
    return Unread(pages, kinds) if pages else None
