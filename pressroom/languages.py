"""OCR languages: Tesseract's codes, joined with ``+`` as its ``-l`` takes them (``eng+deu``).

A job's languages come from, first to last: the job (``process -l``, ``submit -l``, the API's
``languages`` field), its template's ``languages``, then ``PRESSROOM_OCR_LANGUAGES``. A code
whose data is not installed — or that is no Tesseract code at all — is a permanent refusal,
``UNSUPPORTED_LANGUAGE``, naming the Debian package that holds it and the languages installed:
installing the pack fixes it, retrying never does. A code that is no Tesseract code gets the
nearest one suggested on the same line (``'fr'`` → ``fra``): people type the two-letter ISO
639-1 code, Tesseract wants the three-letter one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from pressroom.errors import UnsupportedLanguage

# eng, deu, chi_sim, chi_tra_vert, deu_latf: three letters, then up to two parts of a variant
_CODE = re.compile(r"^[a-z]{3}(?:_[a-z]{2,5}){0,2}$")
MAX_LANGUAGES = 8
# not recognition languages: orientation data, and Tesseract's equation model
NOT_LANGUAGES = frozenset({"osd", "equ"})

# Tesseract's language data as Debian packs it (tesseract-ocr-*), the scripts left out: what a
# code is checked against before a near one is suggested, so a real code is never "corrected"
KNOWN_CODES = frozenset(
    """afr amh ara asm aze aze_cyrl bel ben bod bos bre bul cat ceb ces chi_sim chi_sim_vert
    chi_tra chi_tra_vert chr cos cym dan deu deu_latf div dzo ell eng enm epo est eus fao fas
    fil fin fra frk frm fry gla gle glg grc guj hat heb hin hrv hun hye iku ind isl ita ita_old
    jav jpn jpn_vert kan kat kat_old kaz khm kir kmr kor kor_vert lao lat lav lit ltz mal mar
    mkd mlt mon mri msa mya nep nld nor oci ori pan pol por pus que ron rus san sin slk slv snd
    spa spa_old sqi srp srp_latn sun swa swe syr tam tat tel tgk tha tir ton tur uig ukr urd uzb
    uzb_cyrl vie yid yor""".split()
)
# the codes people type instead: ISO 639-1 (two letters) and the ISO 639-2/B forms that differ
# from Tesseract's (639-2/T), each to Tesseract's code
COMMON_ALIASES = {
    "fr": "fra",
    "de": "deu",
    "en": "eng",
    "es": "spa",
    "it": "ita",
    "pt": "por",
    "nl": "nld",
    "ru": "rus",
    "zh": "chi_sim",
    "ja": "jpn",
    "ko": "kor",
    "ar": "ara",
    "hi": "hin",
    "pl": "pol",
    "sv": "swe",
    "da": "dan",
    "no": "nor",
    "nb": "nor",
    "fi": "fin",
    "tr": "tur",
    "el": "ell",
    "cs": "ces",
    "uk": "ukr",
    "he": "heb",
    "fre": "fra",
    "ger": "deu",
    "dut": "nld",
    "cze": "ces",
    "gre": "ell",
    "chi": "chi_sim",
}

TESSDATA_CANDIDATES = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
    "/usr/local/share/tessdata",
    "/opt/homebrew/share/tessdata",
)


def job_languages(
    asked: Sequence[str] | None, template: Sequence[str], default: Sequence[str]
) -> tuple[str, ...]:
    """A job's OCR languages: its own, else its template's, else the setting's."""
    return tuple(asked or ()) or tuple(template) or tuple(default)


def debian_package(code: str) -> str:
    """The Debian/Ubuntu package with a language's data: ``chi_sim`` → ``tesseract-ocr-chi-sim``."""
    return "tesseract-ocr-" + code.replace("_", "-")


def parse_languages(raw: str | Sequence[str]) -> tuple[str, ...]:
    """``eng+deu`` (or a list of codes) as a tuple, checked for form only: each a Tesseract
    code, none twice, at most eight. Whether the data is installed is ``require``'s question."""
    parts = raw.split("+") if isinstance(raw, str) else list(raw)
    codes = tuple(p.strip() for p in parts)
    if not codes or not all(codes):
        raise UnsupportedLanguage(
            "languages are Tesseract codes joined with '+', such as eng or eng+deu"
        )
    bad = [c for c in codes if not _CODE.match(c) or c in NOT_LANGUAGES]
    if bad:
        raise UnsupportedLanguage(
            f"{_quoted(bad[0])} is not a Tesseract language code (such as eng, deu, chi_sim)"
            + _did_you_mean(bad[0])
        )
    if len(set(codes)) != len(codes):
        raise UnsupportedLanguage("a language is named twice")
    if len(codes) > MAX_LANGUAGES:
        raise UnsupportedLanguage(f"at most {MAX_LANGUAGES} languages a job")
    return codes


def nearest_code(code: str, installed: Iterable[str] = ()) -> str | None:
    """The Tesseract code a person most likely meant by ``code`` when it is none (``fr`` →
    ``fra``, ``Eng`` → ``eng``, ``fre`` → ``fra``, ``chi_smi`` → ``chi_sim``); None when
    ``code`` is a real code (installed or not) or nothing is near enough to guess."""
    known = KNOWN_CODES | frozenset(installed)
    if code in known:
        return None
    low = code.strip().lower().replace("-", "_")
    if low in COMMON_ALIASES:
        return COMMON_ALIASES[low]
    if low in known:
        return low
    close = difflib.get_close_matches(low, sorted(known), n=1, cutoff=0.75)
    return close[0] if close else None


def _did_you_mean(code: str, installed: Iterable[str] = ()) -> str:
    """``; did you mean 'fra'?`` for the refusal's line, or nothing when no guess is near."""
    guess = nearest_code(code, installed)
    return f"; did you mean {guess!r}?" if guess else ""


def _guesses(codes: Iterable[str], installed: Iterable[str]) -> str:
    have = tuple(installed)
    return "".join(_did_you_mean(c, have) for c in codes)


def _quoted(code: str) -> str:
    shown = "".join(c if c.isprintable() else "?" for c in code[:24])
    return repr(shown)


def tessdata_folders(prefix: str = "") -> list[Path]:
    """Where Tesseract's data may be, ``prefix`` (``TESSDATA_PREFIX``) first."""
    folders: list[Path] = []
    for raw in (prefix, *TESSDATA_CANDIDATES):
        if raw:
            folders += [Path(raw), Path(raw) / "tessdata"]
    return folders


def installed_in(folder: Path) -> tuple[str, ...]:
    try:
        names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".traineddata"))
    except OSError:
        return ()
    return tuple(n.removesuffix(".traineddata") for n in names)


def installed_languages(prefix: str = "") -> tuple[str, ...]:
    """The recognition languages of the first tessdata folder that holds any (the one
    Tesseract is pointed at), sorted."""
    for folder in tessdata_folders(prefix):
        found = installed_in(folder)
        if found:
            return tuple(c for c in found if c not in NOT_LANGUAGES)
    return ()


def find_tessdata(languages: Iterable[str] = ("eng",), prefix: str = "") -> Path:
    """The first tessdata folder that holds every language asked for; ``UNSUPPORTED_LANGUAGE``
    naming the missing packs when none does."""
    wanted = list(languages)
    for folder in tessdata_folders(prefix):
        if all((folder / f"{lang}.traineddata").is_file() for lang in wanted):
            return folder
    raise missing(wanted, prefix)


def missing(wanted: Sequence[str], prefix: str = "") -> UnsupportedLanguage:
    """The one-line refusal for languages not installed: which, the packages, what is."""
    installed = installed_languages(prefix)
    absent = [c for c in wanted if c not in installed] or list(wanted)
    packages = " ".join(debian_package(c) for c in absent)
    have = ", ".join(installed) if installed else "none"
    return UnsupportedLanguage(
        f"no Tesseract data for {'+'.join(absent)}: install {packages} (or set "
        f"TESSDATA_PREFIX); installed: {have}" + _guesses(absent, installed)
    )


def require(languages: Sequence[str], prefix: str = "") -> tuple[str, ...]:
    """``languages`` when every one is installed (in one folder, as Tesseract needs); else the
    refusal."""
    codes = parse_languages(languages)
    find_tessdata(codes, prefix)
    return codes


def check_listed(languages: Sequence[str], available: Iterable[str]) -> None:
    """The API's door check against the languages its workers report (or the setting lists):
    the same refusal, naming the packages, without looking at this host's disk."""
    have = sorted(set(available))
    absent = [c for c in languages if c not in have]
    if absent:
        packages = " ".join(debian_package(c) for c in absent)
        raise UnsupportedLanguage(
            f"no Tesseract data for {'+'.join(absent)} on the workers: install {packages} "
            f"where they run; installed: {', '.join(have) or 'none'}" + _guesses(absent, have)
        )
