"""Refusals that say what to do (issue 43, item 4): ``UNREADABLE_SCAN`` ends its one line with
the flags (CLI) or the upload fields (API) that would change it, each surface in its own
words; a code that is no Tesseract code gets the nearest one suggested on its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pressroom.errors import UnsupportedLanguage
from pressroom.hints import for_api, for_cli
from pressroom.languages import check_listed, missing, nearest_code, parse_languages
from pressroom.offline import process as offline
from pressroom.offline.process import process_one
from pressroom.settings import Settings
from pressroom.synth import draw_page, image_pdf
from pressroom.templates import resolve_template
from pressroom.testing import FakeOcrEngine

CLI_HINT = "(try --allow-no-text or --ocr force)"
API_HINT = "(try allow_no_text=true or ocr=force)"


def test_each_surface_names_its_own_way_past_an_unreadable_scan() -> None:
    said = "only 12 letters or digits could be read from the whole document"
    assert for_cli("UNREADABLE_SCAN", said) == f"{said} {CLI_HINT}"
    assert for_api("UNREADABLE_SCAN", said) == f"{said} {API_HINT}"
    # a CLI line made from the API's answer (submit --wait, watch --url) names flags only
    assert for_cli("UNREADABLE_SCAN", for_api("UNREADABLE_SCAN", said)) == f"{said} {CLI_HINT}"
    # asked twice, said once
    assert for_api("UNREADABLE_SCAN", for_api("UNREADABLE_SCAN", said)) == f"{said} {API_HINT}"
    # a refusal no option changes is left as it is
    assert for_cli("CORRUPT", "no PDF header") == "no PDF header"
    assert for_api(None, "no PDF header") == "no PDF header"


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("fr", "fra"),
        ("de", "deu"),
        ("en", "eng"),
        ("zh", "chi_sim"),
        ("nb", "nor"),
        ("he", "heb"),
        ("FR", "fra"),
        ("fre", "fra"),
        ("ger", "deu"),
        ("ENG", "eng"),
        ("engl", "eng"),
        ("chi_smi", "chi_sim"),
        ("chi-sim", "chi_sim"),
    ],
)
def test_a_code_that_is_none_gets_the_nearest_suggested(typed: str, meant: str) -> None:
    assert nearest_code(typed) == meant


@pytest.mark.parametrize("typed", ["eng", "fra", "srp", "deu_latf", "xx", "zz", "abc"])
def test_a_real_code_or_one_far_from_any_gets_no_guess(typed: str) -> None:
    # srp is Serbian, not a slip for spa: a real code is never "corrected"
    assert nearest_code(typed) is None


def test_an_installed_code_is_no_slip_either() -> None:
    assert nearest_code("xyz_custom", installed=("xyz_custom",)) is None
    assert nearest_code("xyz_custon", installed=("xyz_custom",)) == "xyz_custom"


def test_the_form_refusal_suggests_the_code_on_its_one_line() -> None:
    with pytest.raises(UnsupportedLanguage) as refused:
        parse_languages("eng+fr")
    line = refused.value.one_line()
    assert line == (
        "UNSUPPORTED_LANGUAGE: 'fr' is not a Tesseract language code (such as eng, deu, "
        "chi_sim); did you mean 'fra'?"
    )
    with pytest.raises(UnsupportedLanguage) as far:
        parse_languages("xx")
    assert "did you mean" not in far.value.message


def test_the_missing_pack_refusal_keeps_its_package_and_adds_the_guess(tmp_path: Path) -> None:
    (tmp_path / "eng.traineddata").write_bytes(b"")
    line = missing(["fre"], prefix=str(tmp_path)).one_line()
    assert "\n" not in line
    assert "install tesseract-ocr-fre" in line
    assert line.endswith("installed: eng; did you mean 'fra'?")
    # a real pack that is missing is named as before, with no guess
    assert "did you mean" not in missing(["deu"], prefix=str(tmp_path)).message
    with pytest.raises(UnsupportedLanguage) as at_door:
        check_listed(["ger"], ["eng"])
    assert "install tesseract-ocr-ger where they run" in at_door.value.message
    assert at_door.value.message.endswith("; did you mean 'deu'?")


def test_process_refuses_an_unreadable_scan_on_one_line_naming_the_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blank = image_pdf([draw_page([], dpi=100, height_in=3).image], tmp_path / "blank.pdf", 100)
    monkeypatch.setattr(offline, "_ENGINE", FakeOcrEngine(lines=()))  # reads nothing at all
    settings = Settings(data_dir=tmp_path / "data", scratch_dir=tmp_path / "scratch")
    outcome = process_one(
        blank, tmp_path / "out.pdf", resolve_template(None), None, settings=settings
    )
    assert outcome.exit_code == 2, outcome.line
    assert outcome.line.startswith("UNREADABLE_SCAN: blank.pdf: "), outcome.line
    assert outcome.line.endswith(f" {CLI_HINT}"), outcome.line
    assert "\n" not in outcome.line
    assert "allow_no_text" not in outcome.line  # the API's field is not the CLI's flag
    assert not (tmp_path / "out.pdf").exists()
