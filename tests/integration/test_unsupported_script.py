"""A born-digital page in writing the name model was not made for (Cyrillic, Greek, Arabic;
French prose under the English model) redacted for names is neither "unreadable" nor
delivered as if its names had been looked for: held ``UNSUPPORTED_SCRIPT`` after what applies
ran, or refused ``UNSUPPORTED_SCRIPT`` under ``PRESSROOM_UNSUPPORTED_SCRIPT=refuse``; an
English page is redacted as before (issue 41, item 6).

No CJK font is installed where these run (only DejaVu and URW's): Korean and Japanese come as
an invisible text layer over a page that shows nothing (as a scanner's "searchable PDF" carries
its OCR); DejaVu Sans draws Cyrillic, Greek and Arabic."""

# ruff: noqa: RUF001  (Cyrillic and Greek letters that look like Latin ones are the point here)

from __future__ import annotations

import json
from pathlib import Path

import pikepdf
import pytest
from fpdf import FPDF
from pikepdf import Array, Dictionary, Name

from pressroom.engines.tesseract import TesseractEngine
from pressroom.errors import (
    PermanentError,
    ReviewRequired,
    UnreadableScan,
    UnsupportedScript,
    UnsupportedScriptHeld,
)
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.textlayer import glyphless_font, to_unicode
from pressroom.redact.engine import redact_document
from pressroom.redact.leaks import find_leaks
from pressroom.redact.policy import parse_policy
from pressroom.settings import RedactionSettings
from pressroom.synth import find_font, text_pdf
from pressroom.templates import resolve_template
from tests.e2e.test_cli import run_cli
from tests.helpers import delivered, held_by

pytestmark = pytest.mark.integration

NAMES = parse_policy("name,account-number", now=0)
# an IBAN is found by its checksum, in any language (a bare account number needs an English
# label)
ACCOUNT = "GB82 WEST 1234 5698 7654 32"

RUSSIAN = [
    "Отчёт о заседании совета директоров",
    "Иван Петрович Сидоров открыл заседание в десять часов.",
    "Мария Ивановна Кузнецова представила годовой отчёт компании.",
    "Совет утвердил бюджет на следующий год.",
]
# with a payment line: what applies (the IBAN, by its checksum) is found and burned
RUSSIAN_PAYMENT = [*RUSSIAN, f"IBAN {ACCOUNT}"]
GREEK = [
    "Έκθεση της συνεδρίασης του διοικητικού συμβουλίου",
    "Ο Γιώργος Παπαδόπουλος άνοιξε τη συνεδρίαση στις δέκα.",
    "Η Μαρία Οικονόμου παρουσίασε την ετήσια έκθεση της εταιρείας.",
]
ARABIC = [
    "تقرير اجتماع مجلس الإدارة",
    "افتتح محمد أحمد الاجتماع في الساعة العاشرة.",
    "قدمت فاطمة علي التقرير السنوي للشركة.",
]
KOREAN = [
    "이사회 회의록",
    "김철수 대표이사가 오전 열 시에 회의를 열었습니다.",
    "박영희 이사가 회사의 연간 보고서를 발표했습니다.",
]
JAPANESE = [
    "取締役会議事録",
    "田中太郎社長が午前十時に会議を開きました。",
    "山田花子取締役が会社の年次報告書を説明しました。",
]
FRENCH = [
    "Le conseil municipal s'est réuni lundi à la mairie pour discuter du budget.",
    "Madame Claire Dubois a présenté le rapport de la commission des finances.",
    "Les travaux prévus dans les écoles de la ville seront terminés au printemps,",
    "et le maire a remercié les agents pour leur travail pendant toute l'année.",
    f"Le paiement sera versé sur le compte IBAN {ACCOUNT} avant la fin du mois.",
]
ENGLISH = [
    "The council met on Monday at the town hall to discuss the budget.",
    "Mrs Claire Dubois presented the report of the finance committee.",
    "The works planned in the schools of the city will be finished by spring,",
    "and the mayor thanked the staff for their work throughout the year.",
    f"The payment will be made to IBAN {ACCOUNT} before the end of the month.",
]


def dejavu_pdf(path: Path, lines: list[str]) -> Path:
    """A born-digital page in DejaVu Sans (embedded, with its ToUnicode map)."""
    pdf = FPDF()
    pdf.add_page()
    pdf.add_font("DejaVu", fname=str(find_font("DejaVuSans.ttf")))
    pdf.set_font("DejaVu", size=12)
    for line in lines:
        pdf.cell(0, 10, line, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def redact(
    src: Path,
    out: Path,
    engine: TesseractEngine,
    *,
    policy: str = "name,account-number",
    refuse: bool = False,
) -> object:
    options = JobOptions(
        template=resolve_template(None),
        redaction=RedactionSettings(unsupported_script="refuse" if refuse else "hold"),
    )
    return redact_document(src, out, options, parse_policy(policy, now=0), engine)


@pytest.mark.parametrize(
    ("lines", "said"),
    [(RUSSIAN, "Cyrillic script"), (GREEK, "Greek script"), (ARABIC, "Arabic script")],
)
def test_a_page_in_another_script_is_held_naming_it(
    tmp_path: Path, engine: TesseractEngine, lines: list[str], said: str
) -> None:
    src = dejavu_pdf(tmp_path / "in.pdf", lines)
    out = tmp_path / "out.pdf"
    held = held_by(redact(src, out, engine), UnsupportedScriptHeld)
    exc = held.reason
    assert exc.code == "UNSUPPORTED_SCRIPT" and isinstance(exc, ReviewRequired)
    assert f"written in {said} (page 1)" in exc.message
    assert "name model (English)" in exc.message
    # the held copy is there for a person, with what was found marked on the sheet
    assert out.is_file() and held.sheet is not None


def cjk_layer_pdf(path: Path, lines: list[str]) -> Path:
    """A page under an invisible text layer in Korean or Japanese (what a scanner's
    "searchable PDF" leaves), drawn in the glyphless font Pressroom's own layers use. No CJK
    font is installed where these tests run, so the page shows nothing: the writing comes from
    its text layer alone."""
    pdf = pikepdf.new()
    font = glyphless_font(pdf)
    font.ToUnicode = pdf.make_stream(to_unicode(ord(c) for line in lines for c in line))
    ops = ["BT 3 Tr /F1 12 Tf 14 TL 72 720 Td"]
    ops += [f"<{''.join(f'{ord(c):04X}' for c in line)}> Tj T*" for line in lines]
    ops.append("ET")
    pdf.pages.append(
        pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, 612, 792]),
                Contents=pdf.make_stream("\n".join(ops).encode()),
                Resources=Dictionary(Font=Dictionary(F1=font)),
            )
        )
    )
    pdf.save(path)
    return path


@pytest.mark.parametrize(
    ("lines", "said"), [(KOREAN, "Korean (Hangul)"), (JAPANESE, "Japanese")], ids=["ko", "ja"]
)
def test_a_page_with_a_korean_or_japanese_text_layer_is_held_naming_it(
    tmp_path: Path, engine: TesseractEngine, lines: list[str], said: str
) -> None:
    src = cjk_layer_pdf(tmp_path / "in.pdf", lines)
    held = held_by(redact(src, tmp_path / "out.pdf", engine), UnsupportedScriptHeld)
    assert f"written in {said} (page 1)" in held.message


def test_what_applies_is_burned_in_the_held_copy(tmp_path: Path, engine: TesseractEngine) -> None:
    src = dejavu_pdf(tmp_path / "in.pdf", RUSSIAN_PAYMENT)
    out = tmp_path / "out.pdf"
    # held whatever held it first: a check that finds something again on the output (what
    # OCR in English misread of the page, read again) keeps its own code, and says the writing
    held = held_by(redact(src, out, engine), ReviewRequired)
    assert "written in Cyrillic script (page 1)" in held.message
    assert held.code in ("UNSUPPORTED_SCRIPT", "REDACTION_LEAK")
    assert any(f.kind == "account-number" for f in held.findings)
    assert find_leaks(out, [ACCOUNT]) == []


def test_a_short_page_in_another_script_is_not_an_unreadable_scan(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    # OCR in English makes a handful of letters of it: too few for a document, were it read
    # by OCR alone, but the page has text of its own
    src = dejavu_pdf(
        tmp_path / "in.pdf", ["Получатель: Иван Петрович Сидоров", "Адрес: Москва, улица Ленина"]
    )
    held = held_by(redact(src, tmp_path / "out.pdf", engine), UnsupportedScriptHeld)
    assert not isinstance(held.reason, UnreadableScan)


def test_an_accounts_only_redaction_of_a_page_ocr_cannot_read_is_held_not_unreadable(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    # no name is looked for, but OCR in English cannot tell which of the page's words a reader
    # sees: the page is rebuilt from its pixels, and OCR makes little of them
    src = dejavu_pdf(tmp_path / "in.pdf", ["Получатель: Иван Петрович Сидоров", f"IBAN {ACCOUNT}"])
    out = tmp_path / "out.pdf"
    held = held_by(redact(src, out, engine, policy="account-number"), UnsupportedScriptHeld)
    assert "written in Cyrillic script (page 1), which OCR (English) does not read" in (
        held.message
    )
    assert "name model" not in held.message
    assert find_leaks(out, [ACCOUNT]) == []
    with pytest.raises(UnsupportedScript):
        redact(src, out, engine, policy="account-number", refuse=True)


def test_the_refuse_setting_refuses_it_with_its_own_code(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = dejavu_pdf(tmp_path / "in.pdf", RUSSIAN)
    out = tmp_path / "out.pdf"
    with pytest.raises(UnsupportedScript) as refused:
        redact(src, out, engine, refuse=True)
    exc = refused.value
    assert exc.code == "UNSUPPORTED_SCRIPT" and isinstance(exc, PermanentError)
    assert "Cyrillic script" in exc.message and not out.exists()


def test_french_prose_is_held_naming_french(tmp_path: Path, engine: TesseractEngine) -> None:
    src = text_pdf([FRENCH], tmp_path / "in.pdf")
    out = tmp_path / "out.pdf"
    held = held_by(redact(src, out, engine), UnsupportedScriptHeld)
    assert "written in French (page 1)" in held.message
    assert held.result == {"text_layer": "text"}
    assert find_leaks(out, [ACCOUNT]) == []


def test_an_english_page_is_redacted_as_before(tmp_path: Path, engine: TesseractEngine) -> None:
    src = text_pdf([ENGLISH], tmp_path / "in.pdf")
    out = tmp_path / "out.pdf"
    result = redact(src, out, engine)  # delivered: no hold raised
    assert find_leaks(out, ["Claire Dubois", ACCOUNT]) == []
    assert getattr(result, "redacted", {}).get("name", 0) >= 1


def test_an_accounts_only_redaction_of_french_is_unaffected(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = text_pdf([FRENCH], tmp_path / "in.pdf")
    out = tmp_path / "out.pdf"
    delivered(redact(src, out, engine, policy="account-number"))
    assert find_leaks(out, [ACCOUNT]) == []


def test_an_address_redaction_of_french_is_held_too(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    # the address recognisers know the formats of the US, Canada and the UK only
    src = text_pdf([FRENCH], tmp_path / "in.pdf")
    held = held_by(
        redact(src, tmp_path / "out.pdf", engine, policy="address"), UnsupportedScriptHeld
    )
    assert "address recognisers (English)" in held.message
    assert "name model" not in held.message


def test_detect_says_it_on_stderr_and_exits_zero(tmp_path: Path) -> None:
    src = dejavu_pdf(tmp_path / "minutes.pdf", RUSSIAN_PAYMENT)
    run = run_cli("detect", "--redact", "name,account-number", str(src), scratch=tmp_path)
    assert run.returncode == 0, run.stderr
    found = [json.loads(line) for line in run.stdout.splitlines()]
    assert any(f["class"] == "account-number" for f in found)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("UNSUPPORTED_SCRIPT: minutes.pdf: written in Cyrillic script")
    # the refuse setting is said the same way: a redaction of it would be refused
    env = {"PRESSROOM_UNSUPPORTED_SCRIPT": "refuse"}
    run = run_cli("detect", "--redact", "name", str(src), scratch=tmp_path, env=env)
    assert run.returncode == 0 and "PRESSROOM_UNSUPPORTED_SCRIPT=refuse" in run.stderr
    # an English page says nothing
    english = text_pdf([ENGLISH], tmp_path / "letter.pdf")
    run = run_cli("detect", "--redact", "name", str(english), scratch=tmp_path)
    assert run.returncode == 0 and not run.stderr.strip()


def test_process_holds_it_exit_3(tmp_path: Path) -> None:
    src = dejavu_pdf(tmp_path / "minutes.pdf", RUSSIAN)
    out = tmp_path / "out"
    run = run_cli("process", "--redact", "name", str(src), "-o", str(out), scratch=tmp_path)
    assert run.returncode == 3, run.stderr
    assert "UNSUPPORTED_SCRIPT: minutes.pdf: written in Cyrillic script" in run.stderr
    env = {"PRESSROOM_UNSUPPORTED_SCRIPT": "refuse"}
    run = run_cli(
        "process", "--redact", "name", str(src), "-o", str(out), scratch=tmp_path, env=env
    )
    assert run.returncode == 2 and "UNSUPPORTED_SCRIPT: minutes.pdf" in run.stderr
