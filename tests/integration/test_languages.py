"""OCR languages per job: `process -l`, the API's `languages` field, a template's default, then
the setting. A language whose pack is missing — or a code that is no language — is a
permanent, one-line refusal (`UNSUPPORTED_LANGUAGE`, exit 2, 400) naming the Debian package
and the languages installed; the API checks at the door against what its workers report, the
worker again. The test set-up installs tesseract-ocr-deu and tesseract-ocr-fra."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pressroom.app import create_app
from pressroom.engines.tesseract import TesseractEngine
from pressroom.errors import UnsupportedLanguage
from pressroom.jobs.model import JobState
from pressroom.languages import debian_package, installed_languages, parse_languages, require
from pressroom.pipeline.core import JobOptions
from pressroom.service import Services
from pressroom.synth import draw_page, save_png
from pressroom.templates import load_template, resolve_template
from pressroom.worker.publish import output_digest
from tests.helpers import cer
from tests.integration.test_service import post, work

pytestmark = pytest.mark.integration

PRESSROOM = Path(sys.executable).with_name("pressroom")
# a German page: umlauts and ß, words no English dictionary holds
GERMAN = (
    "Die Prüfung der Unterlagen für das Grundstück",
    "in der Hauptstraße ergab größere Mängel.",
    "Bitte überweisen Sie die Gebühr bis Donnerstag.",
    "Mit freundlichen Grüßen aus Göttingen",
)


def _cli(*args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(tmp)}
    return subprocess.run(
        [str(PRESSROOM), *args], capture_output=True, text=True, env=env, check=False, timeout=300
    )


def test_codes_are_checked_for_form_and_packages_named() -> None:
    assert parse_languages("eng+deu") == ("eng", "deu")
    assert parse_languages("chi_sim") == ("chi_sim",)
    for bad in ("", "xx", "eng+", "eng+eng", "osd", "ENG", "eng deu", "../eng", "e\x00g"):
        with pytest.raises(UnsupportedLanguage):
            parse_languages(bad)
    assert debian_package("deu") == "tesseract-ocr-deu"
    assert debian_package("chi_sim") == "tesseract-ocr-chi-sim"
    # the packs the test set-up installs are found; osd is no recognition language
    assert {"eng", "deu", "fra"} <= set(installed_languages())
    assert "osd" not in installed_languages()
    assert require(("eng", "deu")) == ("eng", "deu")


def test_a_missing_pack_is_one_line_naming_the_package_and_what_is_installed(
    tmp_path: Path,
) -> None:
    only_english = tmp_path / "tessdata"
    only_english.mkdir()
    (only_english / "eng.traineddata").write_bytes(b"x")
    (only_english / "osd.traineddata").write_bytes(b"x")
    with pytest.raises(UnsupportedLanguage) as caught:
        require(("eng", "ita"), str(only_english))
    # the folder TESSDATA_PREFIX names comes first: what it holds is what is installed
    assert caught.value.one_line() == (
        "UNSUPPORTED_LANGUAGE: no Tesseract data for ita: install tesseract-ocr-ita "
        "(or set TESSDATA_PREFIX); installed: eng"
    )
    assert caught.value.exit_code == 2 and caught.value.http_status == 400


def test_process_refuses_a_missing_or_unknown_language_before_any_file(tmp_path: Path) -> None:
    src = save_png(draw_page(GERMAN, dpi=200, height_in=3).image, tmp_path / "de.png", 200)
    out = tmp_path / "out"
    missing = _cli("process", str(src), "-o", str(out), "-l", "eng+ita", tmp=tmp_path)
    assert missing.returncode == 2
    lines = missing.stderr.splitlines()
    assert len(lines) == 1, missing.stderr
    assert lines[0].startswith(
        "UNSUPPORTED_LANGUAGE: no Tesseract data for ita: install tesseract-ocr-ita"
    )
    assert "installed: " in lines[0] and "deu" in lines[0] and "eng" in lines[0]
    unknown = _cli("process", str(src), "-o", str(out), "-l", "xx", tmp=tmp_path)
    assert unknown.returncode == 2
    assert unknown.stderr == (
        "UNSUPPORTED_LANGUAGE: 'xx' is not a Tesseract language code (such as eng, deu, chi_sim)\n"
    )
    assert not out.exists() or list(out.iterdir()) == []
    # the setting is checked as it is read
    bad = _cli("process", str(src), "-o", str(out), tmp=tmp_path)
    env_bad = subprocess.run(
        [str(PRESSROOM), "process", str(src), "-o", str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "PRESSROOM_SCRATCH_DIR": str(tmp_path), "PRESSROOM_OCR_LANGUAGES": "xx"},
        check=False,
    )
    assert bad.returncode == 0, bad.stderr
    assert env_bad.returncode == 2 and "PRESSROOM_OCR_LANGUAGES" in env_bad.stderr


def test_a_german_page_reads_better_with_deu_than_with_eng_alone(tmp_path: Path) -> None:
    src = save_png(draw_page(GERMAN, dpi=200, height_in=3).image, tmp_path / "de.png", 200)
    truth = " ".join(GERMAN)
    errors = {}
    for langs in ("eng", "deu"):
        out = tmp_path / langs
        done = _cli("process", str(src), "-o", str(out), "-l", langs, "--sidecar", tmp=tmp_path)
        assert done.returncode == 0, done.stderr
        errors[langs] = cer(truth, (out / "de.txt").read_text())
    # eng has no ü, ö, ä or ß: every one is a miss; deu reads them
    assert errors["deu"] < errors["eng"], errors
    assert errors["deu"] <= 0.02, errors
    print("character error rate", errors)


def test_the_api_checks_languages_at_the_door_against_what_workers_report(
    services: Services, tmp_path: Path
) -> None:
    key = services.store.tenancy.create_key("acme", now=0)
    headers = {"Authorization": f"Bearer {key}"}
    client = TestClient(create_app(services))
    png = save_png(draw_page(GERMAN, dpi=150, height_in=3).image, tmp_path / "de.png", 150)
    data = png.read_bytes()
    # a form that is no language: refused whatever the workers have
    bad = post(client, headers, data, languages="xx")
    assert bad.status_code == 400 and bad.json()["code"] == "UNSUPPORTED_LANGUAGE"
    # nobody reported yet: accepted, the worker checks
    unknown = post(client, headers, data, languages="ita")
    assert unknown.status_code == 202, unknown.text
    # a live worker reports its packs with its heartbeat
    now = services.clock()
    services.store.stats.worker_seen("h:1:abcdef", ("bulk",), now=now, languages=("deu", "eng"))
    refused = post(client, headers, data, languages="eng+fra")
    assert refused.status_code == 400
    body = refused.json()
    assert body["code"] == "UNSUPPORTED_LANGUAGE"
    assert "tesseract-ocr-fra" in body["detail"] and "installed: deu, eng" in body["detail"]
    accepted = post(client, headers, data, languages="deu")
    assert accepted.status_code == 202 and accepted.json()["languages"] == "deu"
    # none asked: the setting's, made explicit in the job
    plain = post(client, headers, data)
    assert plain.status_code == 202 and plain.json()["languages"] == "eng"
    # a setting that lists the workers' languages is believed before any report
    services.settings = replace(services.settings, languages_available=("eng", "fra"))
    listed = post(client, headers, data, languages="fra")
    assert listed.status_code == 202, listed.text
    assert post(client, headers, data, languages="deu").status_code == 400

    # the worker's own check: the job that asked for ita is dead-lettered, not retried
    services.settings = replace(services.settings, languages_available=())
    work(services, TesseractEngine())  # type: ignore[arg-type]
    job = services.store.queue.get(unknown.json()["id"])
    assert job is not None and job.state is JobState.REJECTED
    assert job.reason == "UNSUPPORTED_LANGUAGE" and job.attempts == 1
    german = services.store.queue.get(accepted.json()["id"])
    assert german is not None and german.state is JobState.COMPLETE


def test_languages_are_part_of_the_artifact_digest_and_a_template_default(
    tmp_path: Path,
) -> None:
    template = resolve_template(None)
    english = output_digest(JobOptions(template=template, languages=("eng",)))
    assert english == output_digest(JobOptions(template=template))  # as before: not named
    german = output_digest(JobOptions(template=template, languages=("eng", "deu")))
    assert german != english and "languages=eng+deu" in german
    folder = tmp_path / "brand"
    folder.mkdir()
    (folder / "template.toml").write_text(
        'name = "brand"\nversion = "1"\n[ocr]\nlanguages = "deu+eng"\n'
    )
    assert load_template(folder).languages == ("deu", "eng")
    (folder / "template.toml").write_text('name = "brand"\nversion = "1"\n[ocr]\nlanguages = 3\n')
    with pytest.raises(Exception, match="languages"):
        load_template(folder)
