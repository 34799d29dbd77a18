"""A page's writing: scripts by letter, the language of Latin prose by its short words, and
which of them the recognisers read (issue 41, item 6)."""

# ruff: noqa: RUF001  (letters of other scripts that look like Latin ones are the point here)

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pressroom.redact.writing import (
    covers,
    guess_language,
    language_bound,
    languages_said,
    model_languages,
    name_languages,
    ocr_languages,
    script_of,
    unread,
    unread_pages,
    writing_of,
)
from pressroom.settings import RedactionSettings

ENGLISH = frozenset({"en"})

PROSE = {
    "en": "The council met on Monday at the town hall to discuss the budget of the city and the "
    "works that are planned in the schools, which the mayor said would be finished by spring.",
    "fr": "Le conseil municipal s'est réuni lundi à la mairie pour discuter du budget de la "
    "ville et des travaux prévus dans les écoles, que le maire veut terminer au printemps.",
    "de": "Der Gemeinderat hat sich am Montag im Rathaus getroffen, um über den Haushalt der "
    "Stadt und die geplanten Arbeiten an den Schulen zu sprechen, die bis zum Frühjahr fertig "
    "sein sollen.",
    "es": "El consejo municipal se reunió el lunes en el ayuntamiento para discutir el "
    "presupuesto de la ciudad y las obras previstas en las escuelas, que el alcalde quiere "
    "terminar en la primavera.",
    "it": "Il consiglio comunale si è riunito lunedì in municipio per discutere il bilancio "
    "della città e i lavori previsti nelle scuole, che il sindaco vuole finire entro la "
    "primavera.",
    "nl": "De gemeenteraad is maandag in het stadhuis bijeengekomen om de begroting van de stad "
    "en de geplande werken aan de scholen te bespreken, die de burgemeester voor de lente wil "
    "afronden.",
    "pt": "O conselho municipal reuniu-se na segunda-feira na câmara para discutir o orçamento "
    "da cidade e as obras previstas nas escolas, que o presidente quer terminar na primavera.",
}

OTHER_SCRIPTS = {
    "Cyrillic script": "Совет директоров собрался в понедельник. Иван Петрович Сидоров "
    "представил годовой отчёт компании.",
    "Greek script": "Το διοικητικό συμβούλιο συνεδρίασε τη Δευτέρα. Ο Γιώργος Παπαδόπουλος "
    "παρουσίασε την ετήσια έκθεση.",
    "Arabic script": "اجتمع مجلس الإدارة يوم الاثنين وقدم محمد أحمد التقرير السنوي للشركة",
    "Hebrew script": "מועצת המנהלים התכנסה ביום שני ודוד כהן הציג את הדוח השנתי של החברה",
    "Korean (Hangul)": "회의는 월요일에 시청에서 열렸으며 시 예산에 대해 논의했습니다. 김철수 씨가 "
    "설명했습니다.",
    "Japanese": "会議は月曜日に市役所で開かれ、市の予算について話し合いました。田中太郎さんが"
    "説明しました。",
    "Chinese (Han)": "董事会于星期一召开会议，王小明先生介绍了公司的年度报告和明年的预算计划。",
    "Thai script": "คณะกรรมการประชุมเมื่อวันจันทร์และสมชายได้นำเสนอรายงานประจำปีของบริษัท",
}


@pytest.mark.parametrize(
    ("char", "script"),
    [
        ("a", "Latin"),
        ("ø", "Latin"),
        ("ß", "Latin"),
        ("ǅ", "Latin"),
        ("Ａ", "Latin"),  # fullwidth
        ("Ж", "Cyrillic"),
        ("λ", "Greek"),
        ("ش", "Arabic"),
        ("ﻻ", "Arabic"),  # a presentation form, as some PDFs carry Arabic
        ("א", "Hebrew"),
        ("ก", "Thai"),
        ("한", "Hangul"),
        ("漢", "Han"),
        ("々", "Han"),
        ("か", "Kana"),
        ("カ", "Kana"),
        ("ｶ", "Kana"),  # halfwidth
        ("ー", "Kana"),
        ("क", "Devanagari"),
        ("3", None),
        ("-", None),
        ("µ", None),
        ("\u0301", None),  # a combining mark counts with no script
    ],
)
def test_the_script_of_a_letter(char: str, script: str | None) -> None:
    assert script_of(char) == script


@pytest.mark.parametrize("language", sorted(PROSE))
def test_a_paragraph_of_prose_is_told_by_its_short_words(language: str) -> None:
    assert guess_language(PROSE[language]) == language


def test_too_few_words_or_a_table_say_no_language() -> None:
    assert guess_language("Le conseil") is None
    assert guess_language("Total 1,200 Paris 300 Lyon 450 Nantes 450 Lille 120") is None
    assert guess_language("") is None
    # names and figures, no sentence: nothing to tell a language by
    assert guess_language("Anne Dubois; Jean Martin; Marie Leroy; Pierre Moreau; 12; 14") is None


def test_english_with_a_french_quotation_stays_english() -> None:
    text = PROSE["en"] + " He quoted the motto « liberté, égalité, fraternité » on the wall."
    assert guess_language(text) == "en"


def test_english_prose_is_read_by_the_english_models() -> None:
    assert unread(writing_of(PROSE["en"]), ENGLISH) is None
    # accented names in English prose are English prose
    text = PROSE["en"] + " Søren Kierkegaard, Łukasz Żółć and Nguyễn Thị Minh Khai spoke."
    assert unread(writing_of(text), ENGLISH) is None


@pytest.mark.parametrize("language", sorted(set(PROSE) - {"en"}))
def test_other_latin_prose_is_named_by_its_language(language: str) -> None:
    said = unread(writing_of(PROSE[language]), ENGLISH)
    assert (
        said is not None
        and said
        == {
            "fr": "French",
            "de": "German",
            "es": "Spanish",
            "it": "Italian",
            "nl": "Dutch",
            "pt": "Portuguese",
        }[language]
    )
    # a model of that language reads it
    assert unread(writing_of(PROSE[language]), frozenset({language})) is None


@pytest.mark.parametrize("said", sorted(OTHER_SCRIPTS))
def test_other_scripts_are_not_read_by_english_models(said: str) -> None:
    assert unread(writing_of(OTHER_SCRIPTS[said]), ENGLISH) == said


def test_a_model_of_the_script_reads_it() -> None:
    assert unread(writing_of(OTHER_SCRIPTS["Cyrillic script"]), frozenset({"ru"})) is None
    assert unread(writing_of(OTHER_SCRIPTS["Japanese"]), frozenset({"ja"})) is None
    assert unread(writing_of(OTHER_SCRIPTS["Korean (Hangul)"]), frozenset({"ja"})) is not None
    assert covers(frozenset({"ru"}), "Cyrillic", None)
    assert not covers(ENGLISH, "Cyrillic", None)
    assert covers(ENGLISH, "Latin", None)  # Latin of no clear language: read as theirs
    assert not covers(ENGLISH, "Latin", "fr")


def test_a_few_words_of_another_script_do_not_make_a_page_unread() -> None:
    text = PROSE["en"] + " " + PROSE["en"] + " The report (Годовой отчёт) was adopted."
    assert unread(writing_of(text), ENGLISH) is None


def test_a_bilingual_page_is_unread() -> None:
    text = PROSE["en"] + " " + OTHER_SCRIPTS["Cyrillic script"]
    assert unread(writing_of(text), ENGLISH) == "Cyrillic script"


def test_a_page_with_few_letters_says_nothing() -> None:
    assert unread(writing_of("Стр. 3 — 12.05.2024"), ENGLISH) is None
    assert unread(writing_of(""), ENGLISH) is None


def test_the_languages_a_model_reads() -> None:
    assert model_languages("pressroom_names_en") == ENGLISH
    assert model_languages("en_core_web_md") == ENGLISH
    assert model_languages("de_core_news_sm") == frozenset({"de"})
    assert model_languages("fr-core-news-md") == frozenset({"fr"})
    assert "ru" in model_languages("xx_ent_wiki_sm")
    assert model_languages("pressroom_names_fr") == frozenset({"fr"})
    assert model_languages("/srv/models/custom") == ENGLISH  # nothing says: English


def test_a_model_folder_says_its_language_in_its_meta(tmp_path: Path) -> None:
    folder = tmp_path / "names"
    folder.mkdir()
    (folder / "meta.json").write_text(json.dumps({"lang": "ru", "name": "names"}))
    assert model_languages(str(folder)) == frozenset({"ru"})


def test_the_default_name_model_is_english() -> None:
    assert name_languages() == ENGLISH
    assert name_languages(RedactionSettings()) == ENGLISH
    assert name_languages(RedactionSettings(ner_model="de_core_news_md")) == frozenset({"de"})
    # several pipelines joined by "+": what any of them reads
    pair = RedactionSettings(ner_model="pressroom_names_en+fr_core_news_md")
    assert name_languages(pair) == frozenset({"en", "fr"})


def test_only_names_and_addresses_are_bound_to_languages() -> None:
    bound = language_bound(("name", "address", "account-number"), RedactionSettings())
    assert bound == {"name": ENGLISH, "address": ENGLISH}
    assert language_bound(("account-number",)) == {}


def test_languages_are_said_by_name() -> None:
    assert languages_said(ENGLISH) == "English"
    assert languages_said(frozenset({"en", "fr"})) == "English and French"


def test_ocr_reads_by_script_not_by_language() -> None:
    english_ocr = ocr_languages(("eng",))
    assert english_ocr == ENGLISH
    assert unread(writing_of(PROSE["fr"]), english_ocr, scripts_only=True) is None
    assert unread(writing_of(OTHER_SCRIPTS["Cyrillic script"]), english_ocr, scripts_only=True)
    assert (
        unread(writing_of(OTHER_SCRIPTS["Cyrillic script"]), ocr_languages(("eng", "rus"))) is None
    )
    assert (
        unread(
            writing_of(OTHER_SCRIPTS["Cyrillic script"]), ocr_languages(("rus",)), scripts_only=True
        )
        is None
    )
    # a code not known here stands for itself, and is taken to read Latin letters
    assert ocr_languages(("xyz",)) == frozenset({"xyz"})
    assert unread(writing_of(PROSE["en"]), ocr_languages(("xyz",)), scripts_only=True) is None


def test_the_reason_names_the_writing_the_pages_and_the_readers() -> None:
    pages = [OTHER_SCRIPTS["Cyrillic script"], PROSE["en"], PROSE["fr"]] + [
        OTHER_SCRIPTS["Cyrillic script"]
    ] * 10
    found = unread_pages(pages, {"name": ENGLISH, "address": ENGLISH})
    assert found is not None
    assert sorted(found.pages)[:3] == [1, 3, 4] and 2 not in found.pages
    assert found.reason() == (
        "written in Cyrillic script (pages 1, 4, 5, 6, 7, 8, 9, 10 and 3 more), French (page 3), "
        "which the name model (English) and the address recognisers (English) do not read"
    )
    assert unread_pages([PROSE["en"]] * 3, {"name": ENGLISH}) is None
    assert unread_pages([OTHER_SCRIPTS["Japanese"]], {}) is None


def test_letter_spaced_headings_and_initials_say_no_other_language() -> None:
    # one-letter words ("o", "e", "a", "i", "y") are Portuguese, Italian, Polish or Spanish
    # words too, and letter-spaced type and initials are full of them
    text = "N O T I C E O F P U B L I C H E A R I N G  T h e  S o u t h  C a r o l i n a " * 3
    assert unread(writing_of(text), ENGLISH) is None
    text = "J. R. R. Tolkien, C. S. Lewis, E. M. Forster, A. A. Milne, P. G. Wodehouse " * 3
    assert unread(writing_of(text), ENGLISH) is None


def test_a_word_repeated_down_a_column_is_one_word() -> None:
    # "na" (not available) down a column is Portuguese and Polish for "on"
    rows = " ".join(f"Measure {n} na na na" for n in range(40))
    text = PROSE["en"] + " " + rows
    assert unread(writing_of(text), ENGLISH) is None
    assert guess_language("Forster sus 11 " * 20 + "von und ein") is None


def test_placeholder_latin_is_named_but_read_as_any_latin_text() -> None:
    lorem = (
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor "
        "incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud "
        "exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat."
    )
    assert guess_language(lorem) == "la"
    assert unread(writing_of(lorem), ENGLISH) is None
    assert unread(writing_of(lorem), frozenset({"ru"})) is not None
