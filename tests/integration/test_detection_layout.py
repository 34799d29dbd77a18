"""Detection on pages as a reader sees them: faint print, table cells, wrapped values, and the
dry run and offline review as a user meets them on the command line."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from pressroom.engines.tesseract import TesseractEngine
from pressroom.pipeline.core import JobOptions
from pressroom.redact.engine import detect_document
from pressroom.redact.faint import grey_bands
from pressroom.redact.policy import parse_policy
from pressroom.synth import find_font, image_pdf
from pressroom.templates import resolve_template

pytestmark = pytest.mark.integration

IBAN = "GB82 WEST 1234 5698 7654 32"
DPI = 300


def page(rows: list[tuple[float, float, str, int]]) -> Image.Image:
    """A letter-size scan; each row is (x inches, y inches, text, grey level)."""
    image = Image.new("L", (round(8.5 * DPI), round(5 * DPI)), 255)
    draw = ImageDraw.Draw(image)
    face = ImageFont.truetype(str(find_font("DejaVuSerif.ttf")), round(11 * DPI / 72))
    for x, y, text, grey in rows:
        draw.text((x * DPI, y * DPI), text, fill=grey, font=face)
    return image


def findings(tmp: Path, image: Image.Image, engine: TesseractEngine) -> list[tuple[str, str]]:
    src = image_pdf([image], tmp / "scan.pdf", DPI)
    found = detect_document(
        src,
        parse_policy("name,address,account-number", now=0),
        engine,
        JobOptions(template=resolve_template(None)),
    )
    return [(f.kind, f.value) for f in found]


def test_faint_print_a_person_reads_is_found(tmp_path: Path, engine: TesseractEngine) -> None:
    rows = [
        (1.0, 0.8, "Statement of payments for the quarter, as agreed.", 0),
        (1.0, 1.2, "The balance was carried forward without change.", 0),
        (1.0, 1.6, "Account holder: Siobhan Okafor", 175),
        (1.0, 2.0, f"IBAN {IBAN}", 195),
        (1.0, 2.4, "Questions go to the branch office in the usual way.", 0),
    ]
    image = page(rows)
    bands, _paper = grey_bands(image)
    assert bands and all(0.9 * DPI < y0 < 2.4 * DPI for y0, _y1 in bands)
    assert grey_bands(page([(x, y, t, 0) for x, y, t, _ in rows]))[0] == []
    found = findings(tmp_path, image, engine)
    assert ("name", "Siobhan Okafor") in found
    assert any(
        k == "account-number" and "".join(v.split()) == "".join(IBAN.split()) for k, v in found
    )


def test_table_cells_and_wrapped_values(tmp_path: Path, engine: TesseractEngine) -> None:
    rows = [
        (1.0, 0.8, "Payment details", 0),
        (1.0, 1.2, "Sort code", 0),
        (5.0, 1.2, "12-34-56", 0),
        (1.0, 1.6, "Reference", 0),
        (5.0, 1.6, "INV 2291", 0),
        (1.0, 2.2, f"Please pay into {IBAN[:14]}", 0),
        (1.0, 2.5, f"{IBAN[15:]} before the end of the month.", 0),
    ]
    found = findings(tmp_path, page(rows), engine)
    values = ["".join(v.split()) for k, v in found if k == "account-number"]
    assert "12-34-56" in values
    assert "".join(IBAN.split()) in values
    assert not any("2291" in v for v in values)


def _pressroom(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    exe = str(Path(sys.executable).parent / "pressroom")
    return subprocess.run(
        [exe, *args], input=stdin, capture_output=True, text=True, timeout=300, env=env, check=False
    )


def test_detect_jsonl_scores_text_lines_in_order() -> None:
    lines = [
        json.dumps({"id": "a", "text": f"Dear Ms Okafor, your IBAN {IBAN.lower()} is noted."}),
        json.dumps({"id": 7, "text": "Nothing personal here: the Bank of England met in Leeds."}),
        json.dumps(
            {"id": None, "text": "Send it to 1600 Pennsylvania Avenue NW, Washington, DC 20500."}
        ),
        "",  # a blank line is a line too
        "not json",
        '{"id": 1.10, "text": ' + json.dumps("\U0001f600 Stra\u00dfe 5. Dear Ms Okafor, hi") + "}",
    ]
    result = _pressroom("detect", "--jsonl", stdin="\n".join(lines) + "\n")
    assert result.returncode == 2 and "BAD_INPUT: 2 line(s)" in result.stderr
    out = result.stdout.splitlines()
    assert len(out) == len(lines)
    parsed = [json.loads(x) for x in out]
    assert [o["id"] for o in parsed] == ["a", 7, None, None, None, 1.1]
    assert out[5].startswith('{"id": 1.10,')  # echoed as it came
    found = [(f["class"], f["start"], f["end"], f["value"]) for f in parsed[0]["findings"]]
    iban_at = lines[0].index  # offsets are into the text, not the JSON line
    text0 = json.loads(lines[0])["text"]
    assert found == [
        ("name", 8, 14, "Okafor"),
        (
            "account-number",
            text0.index(IBAN.lower()),
            text0.index(IBAN.lower()) + len(IBAN),
            IBAN.lower(),
        ),
    ], iban_at
    assert parsed[1]["findings"] == []
    assert [f["class"] for f in parsed[2]["findings"]] == ["address"]
    assert parsed[3] == {"id": None, "findings": [], "error": "BAD_INPUT"}
    assert parsed[4]["error"] == "BAD_INPUT"
    # code points, not UTF-16 units or bytes: the emoji is one character
    assert [(f["start"], f["end"], f["value"]) for f in parsed[5]["findings"]] == [
        (20, 26, "Okafor")
    ]
    # names only, when asked
    only = _pressroom("detect", "--jsonl", "--redact", "name", stdin=lines[0] + "\n")
    assert {f["class"] for f in json.loads(only.stdout)["findings"]} == {"name"}


def test_detect_jsonl_with_files_is_a_usage_error(tmp_path: Path) -> None:
    result = _pressroom("detect", "--jsonl", str(tmp_path / "x.pdf"), stdin="")
    assert result.returncode == 2 and "usage" in result.stderr


def test_detect_on_a_file_prints_boxes_in_points(tmp_path: Path) -> None:
    src = image_pdf(
        [page([(1.0, 1.0, "Account holder: Siobhan Okafor", 0)])], tmp_path / "s.pdf", DPI
    )
    result = _pressroom("detect", "--redact", "name", str(src))
    assert result.returncode == 0, result.stderr
    (line,) = [json.loads(x) for x in result.stdout.splitlines()]
    assert line["file"] == str(src) and line["page"] == 1 and line["class"] == "name"
    assert line["value"] == "Siobhan Okafor"
    x0, y0, x1, y1 = line["box"]
    # drawn at 1 in from the left and top, after "Account holder: " (~1.6 in at 11 pt)
    assert 72 * 2.0 < x0 < x1 < 72 * 5 and 72 * 0.9 < y0 < y1 < 72 * 1.4
    quiet = _pressroom("detect", "--redact", "name", "--no-values", str(src))
    assert "value" not in json.loads(quiet.stdout)


def _visit(tmp: Path) -> Path:
    lines = [
        (1.0, 1.0, "Zephyrine Quillfeather visited Lighthouse today.", 0),
        (1.0, 1.4, "The visit went well for Everyone involved.", 0),
    ]
    return image_pdf([page(lines)], tmp / "visit.pdf", DPI)


def _with(factory: str) -> dict[str, str]:
    root = str(Path(__file__).resolve().parents[2])  # the subprocess imports tests.*
    return {
        "PYTHONPATH": root,
        **os.environ,
        "PRESSROOM_RECOGNIZERS": f"tests.operator_recognizers:{factory}",
    }


def _redact_visit(tmp: Path, out: Path, factory: str) -> subprocess.CompletedProcess[str]:
    return _pressroom(
        "process", str(_visit(tmp)), "-o", str(out), "--redact", "name", env=_with(factory)
    )


def test_a_value_found_only_on_the_output_is_learnt_and_burned(tmp_path: Path) -> None:
    """Detection changes its mind on the output (as a model reading new context may): the new
    value joins the document's values, the output is built once more, and it is delivered."""
    out = tmp_path / "out"
    result = _redact_visit(tmp_path, out, "watch_list_and_context")
    assert result.returncode == 0, result.stderr
    text = subprocess.run(
        ["pdftotext", str(out / "visit.pdf"), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "Lighthouse" not in text and "Quillfeather" not in text
    assert "visited" in text and "Everyone" in text
    assert not (out / "review").exists()


def test_a_held_document_goes_to_the_review_folder(tmp_path: Path) -> None:
    """A detector that finds something new on every build: exit 3, nothing delivered, the held
    copy and the findings in OUTDIR/review/, private; the reason has classes and counts only."""
    out = tmp_path / "out"
    result = _redact_visit(tmp_path, out, "watch_list_and_restless")
    assert result.returncode == 3, result.stderr
    assert "REDACTION_LEAK" in result.stderr and "1 name" in result.stderr
    assert "Everyone" not in result.stderr and "Lighthouse" not in result.stderr
    assert not (out / "visit.pdf").exists()
    review = out / "review"
    assert stat.S_IMODE(review.stat().st_mode) == 0o700
    held, report = review / "visit.pdf", review / "visit.findings.json"
    for f in (held, report):
        assert stat.S_IMODE(f.stat().st_mode) == 0o600
    data = json.loads(report.read_text())
    assert data["code"] == "REDACTION_LEAK" and "1 name" in data["reason"]
    found = [(f["page"], f["class"], f["value"]) for f in data["findings"]]
    assert (1, "name", "Zephyrine Quillfeather") in found
    assert all(cls == "name" for _page, cls, _value in found)
    assert held.read_bytes().startswith(b"%PDF")


def test_checking_a_policy_never_loads_the_model() -> None:
    """The API checks at upload that the model is installed; loading it (and spaCy, ~130 MiB)
    is for worker processes that redact."""
    code = (
        "import sys\n"
        "from pressroom.redact.detect.registry import check_policy_classes\n"
        "check_policy_classes(('name', 'address', 'account-number'))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('spacy', 'thinc')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"
