"""Redaction with real Tesseract: values gone from every parser, everything else kept."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pikepdf
import pypdfium2
import pytest
from PIL import ImageDraw

from pressroom.engines.tesseract import TesseractEngine
from pressroom.pipeline.core import JobOptions
from pressroom.redact.engine import redact_document
from pressroom.redact.leaks import find_leaks
from pressroom.redact.policy import parse_policy
from pressroom.synth import draw_page, image_pdf, text_pdf
from pressroom.templates import resolve_template
from tests.helpers import delivered, held_by, output_text

pytestmark = pytest.mark.integration

IBAN = "GB82 WEST 1234 5698 7654 32"
ACCOUNT = "12345678"
POLICY = parse_policy("account-number", now=0)


def run(src: Path, tmp: Path, engine: TesseractEngine, template: str = "plain") -> Path:
    out = tmp / "out.pdf"
    delivered(
        redact_document(src, out, JobOptions(template=resolve_template(template)), POLICY, engine)
    )
    return out


def pdftotext(path: Path) -> str:
    return subprocess.run(
        ["pdftotext", str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


def extractions(path: Path) -> list[str]:
    """The output's text as three independent extractors read it."""
    from pdfminer.high_level import extract_text

    return [pdftotext(path), extract_text(str(path)), output_text(path)]


def squashed(text: str) -> str:
    return "".join(text.split())


def test_born_digital_values_are_gone_everywhere_and_the_rest_stays(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = text_pdf(
        [
            [
                "Payout form for the summer programme.",
                f"Account number: {ACCOUNT}",
                f"Pay to IBAN {IBAN} by Friday.",
                "This sentence must stay searchable.",
            ],
            [f"Reference {ACCOUNT} again, without its label.", "Nothing else to hide here."],
            ["A third page with no personal data at all on it."],
        ],
        tmp_path / "form.pdf",
    )
    out = run(src, tmp_path, engine)
    everything = pdftotext(out)
    for value in (ACCOUNT, IBAN):
        assert squashed(value) not in squashed(everything)
    assert find_leaks(out, [ACCOUNT, IBAN]) == []
    assert "This sentence must stay searchable." in output_text(out, 0)
    assert "again, without its label." in output_text(out, 1)  # the value alone went
    assert "A third page with no personal data at all on it." in output_text(out, 2)
    with pikepdf.open(out) as pdf:
        # pages with hits were rebuilt from pixels; the page without keeps its vector content
        kinds = []
        for page in pdf.pages:
            xobjects = page.resources.get("/XObject", {})
            kinds.append(sorted(str(x.get("/Subtype")) for x in xobjects.values()))
        assert kinds == [["/Image"], ["/Image"], ["/Form"]]


def test_burned_boxes_are_solid_where_the_value_was(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = text_pdf(
        [["Account number: 12345678", "Kept line of ordinary words."]], tmp_path / "one.pdf"
    )
    out = run(src, tmp_path, engine)
    doc = pypdfium2.PdfDocument(str(out))
    pixels = np.asarray(doc[0].render(scale=1).to_pil().convert("L"))
    doc.close()
    # text_pdf draws line 1 at x=72, baseline y=720 (11 pt Helvetica); the number follows
    # "Account number: " (~90 pt of text)
    top = 792 - 720 - 9
    region = pixels[top : top + 8, 72 + 95 : 72 + 130]
    assert region.mean() < 40, region.mean()


def test_an_iban_is_one_box_that_shows_neither_its_groups_nor_its_length(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    """Word by word, the boxes would spell GB82 WEST 1234…: 4-4-4-4-4-2 is an IBAN's shape."""
    src = text_pdf(
        [[f"Pay to IBAN {IBAN} today.", "Kept line of ordinary words."]], tmp_path / "i.pdf"
    )
    out = run(src, tmp_path, engine)
    doc = pypdfium2.PdfDocument(str(out))
    dark = np.asarray(doc[0].render(scale=1).to_pil().convert("L")) < 40
    doc.close()
    top = 792 - 720 - 9
    row = dark[top + 4]
    # 11 pt Helvetica: the IBAN spans ~150 pt after "Pay to IBAN " (~65 pt)
    assert row[72 + 70 : 72 + 210].all(), "a gap in the box"
    assert "today." in output_text(out) and "IBAN" in output_text(out)


def test_scanned_value_is_burned_into_the_pixels(tmp_path: Path, engine: TesseractEngine) -> None:
    scan = draw_page(
        [
            "Please pay the balance into the account below.",
            f"IBAN {IBAN}",
            "Signed copies are kept for seven years.",
        ],
        height_in=3.0,
    )
    src = image_pdf([scan.image], tmp_path / "scan.pdf", 300)
    out = run(src, tmp_path, engine)
    assert find_leaks(out, [IBAN]) == []
    text = output_text(out)
    assert squashed(IBAN) not in squashed(text)
    assert "Signed copies are kept for seven years." in text


def test_text_only_in_the_pixels_is_found_too(tmp_path: Path, engine: TesseractEngine) -> None:
    """A born-digital page whose account number is an image: extraction cannot see it."""
    src = text_pdf(
        [["This page has a typed line and a stamped number below it."]], tmp_path / "typed.pdf"
    )
    stamp = draw_page([f"Account number: {ACCOUNT}"], height_in=0.6, width_in=4.0).image
    with pikepdf.open(src) as pdf:
        data = stamp.tobytes()
        image = pdf.make_stream(data)
        image.Type, image.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
        image.Width, image.Height = stamp.size
        image.ColorSpace, image.BitsPerComponent = pikepdf.Name.DeviceGray, 8
        page = pdf.pages[0]
        page.Resources.XObject = pikepdf.Dictionary(Stamp=image)
        page.contents_add(pdf.make_stream(b"q 288 0 0 43.2 72 500 cm /Stamp Do Q"))
        pdf.save(tmp_path / "stamped.pdf")
    out = run(tmp_path / "stamped.pdf", tmp_path, engine)
    assert ACCOUNT not in pdftotext(out)
    # and the stamped number is burned: OCR of the output finds no trace of it
    doc = pypdfium2.PdfDocument(str(out))
    rendered = doc[0].render(scale=300 / 72).to_pil().convert("L")
    doc.close()
    again = engine.recognize(rendered, dpi=300)
    assert ACCOUNT not in squashed(again.text)
    assert "typed line" in output_text(out)


def test_leak_checker_finds_values_wherever_they_hide(tmp_path: Path) -> None:
    """The checker must be able to fail: values planted in text, metadata and streams."""
    src = text_pdf([["Nothing to see on this page."]], tmp_path / "p.pdf")
    with pikepdf.open(src) as pdf:
        pdf.docinfo.Keywords = "ref 1234-5678"
        pdf.save(tmp_path / "meta.pdf")
    assert [leak.parser for leak in find_leaks(tmp_path / "meta.pdf", [ACCOUNT])] == [
        "pikepdf-walk"
    ]
    visible = text_pdf([[f"IBAN {IBAN.lower()}"]], tmp_path / "v.pdf")
    parsers = {leak.parser for leak in find_leaks(visible, [IBAN])}
    assert parsers == {"pdfium-text", "pikepdf-walk", "font-text"}
    hex_utf16 = text_pdf([["x"]], tmp_path / "h.pdf")
    with pikepdf.open(hex_utf16) as pdf:
        payload = ("GB82WEST12345698765432").encode("utf-16-be").hex()
        pdf.pages[0].contents_add(pdf.make_stream(f"BT 3 Tr <{payload}> Tj ET".encode()))
        pdf.save(tmp_path / "h2.pdf")
    assert any(leak.parser == "pikepdf-walk" for leak in find_leaks(tmp_path / "h2.pdf", [IBAN]))


def test_cli_redacts_and_refuses_what_it_cannot(tmp_path: Path) -> None:
    import os
    import sys

    pressroom = Path(sys.executable).with_name("pressroom")
    src = text_pdf([[f"Account number: {ACCOUNT}", "Everything else stays."]], tmp_path / "a.pdf")
    env = {**os.environ, "PRESSROOM_SCRATCH_DIR": str(tmp_path)}
    done = subprocess.run(
        [
            str(pressroom),
            "process",
            str(src),
            "-o",
            str(tmp_path / "out"),
            "--redact",
            "account-number",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert ACCOUNT not in pdftotext(tmp_path / "out" / "a.pdf")
    assert "Everything else stays." in pdftotext(tmp_path / "out" / "a.pdf")
    refused = subprocess.run(
        [str(pressroom), "process", str(src), "-o", str(tmp_path / "o2"), "--redact", "email"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert refused.returncode == 2
    assert refused.stderr.startswith("UNSUPPORTED_POLICY: ")
    assert not (tmp_path / "o2").exists() or list((tmp_path / "o2").iterdir()) == []


def _everywhere_pdf(path: Path) -> Path:
    """One visible account number, and the same values hidden in every place a PDF can hide
    them: metadata, XMP, an annotation, a form field, an outline, an attachment, JavaScript, a
    hidden layer, white text, microscopic text and text off the page."""
    from pikepdf import Array, Dictionary, Name, String

    pdf = pikepdf.Pdf.new()
    font = pdf.make_indirect(
        Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica)
    )
    ocg = pdf.make_indirect(Dictionary(Type=Name.OCG, Name=String("private")))
    content = (
        b"BT /F1 12 Tf 72 700 Td (Visible text for the editor stays readable.) Tj ET "
        b"BT /F1 12 Tf 72 680 Td (Account number: 12345678) Tj ET "
        b"/OC /oc1 BDC BT /F1 12 Tf 72 650 Td (IBAN GB82 WEST 1234 5698 7654 32) Tj ET EMC "
        b"1 1 1 rg BT /F1 12 Tf 72 620 Td (white 12345678) Tj ET 0 0 0 rg "
        b"BT /F1 0.5 Tf 72 600 Td (tiny 12345678) Tj ET "
        b"BT /F1 12 Tf 700 900 Td (offpage 12345678) Tj ET"
    )
    annot = pdf.make_indirect(
        Dictionary(
            Type=Name.Annot,
            Subtype=Name.Text,
            Rect=Array([0, 0, 20, 20]),
            Contents=String("Account 12345678"),
        )
    )
    field = pdf.make_indirect(
        Dictionary(
            FT=Name.Tx,
            T=String("acct"),
            V=String("12345678"),
            Type=Name.Annot,
            Subtype=Name.Widget,
            Rect=Array([300, 300, 400, 320]),
        )
    )
    page = pikepdf.Page(
        Dictionary(
            Type=Name.Page,
            MediaBox=Array([0, 0, 612, 792]),
            Resources=Dictionary(Font=Dictionary(F1=font), Properties=Dictionary(oc1=ocg)),
            Contents=pdf.make_stream(content),
            Annots=Array([annot, field]),
        )
    )
    pdf.pages.append(page)
    pdf.Root.OCProperties = Dictionary(OCGs=Array([ocg]), D=Dictionary(OFF=Array([ocg])))
    pdf.Root.AcroForm = Dictionary(Fields=Array([field]))
    outline = pdf.make_indirect(Dictionary(Title=String("GB82WEST12345698765432")))
    pdf.Root.Outlines = pdf.make_indirect(
        Dictionary(Type=Name.Outlines, First=outline, Last=outline, Count=1)
    )
    attachment = pdf.make_stream(b"account 12345678")
    attachment.Type = Name.EmbeddedFile
    pdf.Root.Names = Dictionary(
        EmbeddedFiles=Dictionary(
            Names=Array(
                [
                    String("a.txt"),
                    Dictionary(Type=Name.Filespec, F=String("a.txt"), EF=Dictionary(F=attachment)),
                ]
            )
        )
    )
    pdf.Root.OpenAction = Dictionary(S=Name.JavaScript, JS=String("var a='12345678';"))
    pdf.docinfo.Subject = "IBAN GB82 WEST 1234 5698 7654 32"
    with pdf.open_metadata(set_pikepdf_as_editor=False) as meta:
        meta["dc:description"] = "account 12345678"
    pdf.Root.StructTreeRoot = pdf.make_indirect(
        Dictionary(
            Type=Name.StructTreeRoot,
            K=Dictionary(Type=Name.StructElem, S=Name.Figure, Alt=String("Photo of card 12345678")),
        )
    )
    thumb = pdf.make_stream(b"\x00" * 64)
    thumb.Width, thumb.Height, thumb.BitsPerComponent = 8, 8, 8
    thumb.ColorSpace = Name.DeviceGray
    pdf.pages[0].obj.Thumb = thumb
    pdf.pages[0].obj.PieceInfo = Dictionary(App=Dictionary(Private=String("acct 12345678")))
    pdf.save(path.with_suffix(".v1.pdf"))
    # An earlier revision that still holds a value: an incremental update on top of it only
    # changes the title, so the old bytes stay in the file.
    with pikepdf.open(path.with_suffix(".v1.pdf")) as again:
        again.docinfo.Title = "Revised"
        again.save(path)
    return path


def test_values_hidden_everywhere_are_gone_and_visible_text_stays(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = _everywhere_pdf(tmp_path / "everywhere.pdf")
    assert find_leaks(src, [ACCOUNT, IBAN])  # the fixture does hide them
    out = run(src, tmp_path, engine)
    assert find_leaks(out, [ACCOUNT, IBAN]) == []
    for text in extractions(out):
        assert ACCOUNT not in squashed(text) and squashed(IBAN) not in squashed(text)
        assert "Visible text for the editor stays readable." in text
    with pikepdf.open(out) as pdf:
        for key in (
            "/OCProperties",
            "/AcroForm",
            "/Outlines",
            "/Names",
            "/OpenAction",
            "/StructTreeRoot",
        ):
            assert key not in pdf.Root
        # the page labels are Pressroom's own, never the source's (which may carry a value)
        labels = pdf.Root.PageLabels.Nums
        assert len(labels) == 2 and labels[0] == 0 and dict(labels[1]) == {"/S": "/D"}
        for key in ("/Annots", "/Thumb", "/PieceInfo"):
            assert key not in pdf.pages[0].obj
        assert "/Subject" not in pdf.docinfo
        # the hidden layer's words did not come back as text either
        assert "IBAN" not in output_text(out, 0)


def test_a_second_build_burns_what_the_first_did(
    tmp_path: Path, engine: TesseractEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value found only on the output makes the engine build once more, from the pages as
    read: hidden words ahead of the value on a page must not shift what the hits point at."""
    from pikepdf import Dictionary, Name

    from pressroom.redact.detect import Finding
    from pressroom.redact.detection import Hit
    from pressroom.redact.run import RedactionRun

    pdf = pikepdf.Pdf.new()
    font = pdf.make_indirect(
        Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica)
    )
    content = (
        b"3 Tr BT /F1 12 Tf 72 740 Td (Hidden words of an old text layer here) Tj ET 0 Tr "
        b"BT /F1 12 Tf 72 700 Td (Account number: 12345678) Tj ET "
        b"BT /F1 12 Tf 72 680 Td (This sentence must stay searchable.) Tj ET "
        b"BT /F1 12 Tf 72 660 Td (Nothing else on this page is private.) Tj ET"
    )
    pdf.pages.append(
        pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=pikepdf.Array([0, 0, 612, 792]),
                Resources=Dictionary(Font=Dictionary(F1=font)),
                Contents=pdf.make_stream(content),
            )
        )
    )
    src = tmp_path / "hidden-first.pdf"
    pdf.save(src)
    burned: list[list[tuple[int, float, list[object]]]] = []
    real_build, real_read_back = RedactionRun.build, RedactionRun.read_back

    def build(*args: object, **kwargs: object) -> object:
        built = real_build(*args, **kwargs)  # type: ignore[arg-type]
        burned.append(list(built.burned))
        return built

    def read_back(*args: object, **kwargs: object) -> object:
        if len(burned) == 1:  # as if detection found a new value on the first output
            new = Finding("account-number", 0, 8, "99999999", "test")
            return {1: [Hit(new, ())]}
        return real_read_back(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(RedactionRun, "build", build)
    monkeypatch.setattr(RedactionRun, "read_back", read_back)
    out = run(src, tmp_path, engine)
    assert len(burned) == 2
    assert burned[1] == burned[0]  # the same boxes: the value's, nothing else
    assert find_leaks(out, [ACCOUNT]) == []
    text = output_text(out, 0)
    assert "This sentence must stay searchable." in text
    assert "Nothing else on this page is private." in text
    assert "Hidden" not in text


@pytest.mark.parametrize("rotate", [90, 180, 270])
def test_rotated_pages_are_redacted_where_the_value_is_shown(
    tmp_path: Path, engine: TesseractEngine, rotate: int
) -> None:
    src = text_pdf(
        [[f"Account number: {ACCOUNT}", "This rotated page keeps its other words."]],
        tmp_path / "r.pdf",
        rotate=rotate,
    )
    out = run(src, tmp_path, engine)
    assert find_leaks(out, [ACCOUNT]) == []
    assert "keeps its other words." in output_text(out)
    # the burned box sits on the value as displayed: OCR of the output cannot read it
    doc = pypdfium2.PdfDocument(str(out))
    seen = engine.recognize(doc[0].render(scale=300 / 72).to_pil().convert("L"), dpi=300)
    doc.close()
    assert ACCOUNT not in squashed(seen.text)
    assert "rotated" in seen.text


NAME = "Olusegun Adebayo"
ADDRESS = "1600 Pennsylvania Avenue NW, Washington, DC 20500"


def test_names_and_addresses_on_a_scan_and_a_typed_page(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    lines = [
        f"Payee: {NAME}",
        f"Send the cheque to {ADDRESS} by post.",
        "The programme office keeps this form for seven years.",
    ]
    typed = text_pdf([lines, [f"Thank you, {NAME}, for your payment."]], tmp_path / "t.pdf")
    scanned = image_pdf([draw_page(lines, height_in=3.0).image], tmp_path / "s.pdf", 300)
    policy = parse_policy("name,address", now=0)
    for src in (typed, scanned):
        out = tmp_path / f"{src.stem}-out.pdf"
        delivered(
            redact_document(src, out, JobOptions(template=resolve_template(None)), policy, engine)
        )
        assert find_leaks(out, [NAME, ADDRESS]) == []
        text = output_text(out, 0)
        assert "keeps this form for seven years." in text
        assert "Payee:" in text
    # the name found on page 1 is also taken out of page 2, where no label points at it
    assert "for your payment." in output_text(tmp_path / "t-out.pdf", 1)
    assert "Adebayo" not in output_text(tmp_path / "t-out.pdf", 1)


def test_a_scan_read_with_little_confidence_goes_to_review(tmp_path: Path) -> None:
    from pressroom.errors import ReviewRequired
    from pressroom.testing import FakeOcrEngine

    src = image_pdf(
        [draw_page(["Account number: 12345678", "Ordinary words here."], height_in=2.0).image],
        tmp_path / "s.pdf",
        300,
    )
    unsure = FakeOcrEngine(
        lines=("Account number: 12345678", "Ordinary words here stay."), confidence=55.0
    )
    held = held_by(
        redact_document(
            src, tmp_path / "o.pdf", JobOptions(template=resolve_template(None)), POLICY, unsure
        ),
        ReviewRequired,
    )
    assert re.search("too little confidence", held.message)


def test_box_solidity_check_sees_a_box_that_is_not_burned(tmp_path: Path) -> None:
    from pressroom.models import Box
    from pressroom.redact.readback import unsolid_boxes

    page = draw_page(["Some words"], dpi=100, height_in=2.0).image
    ImageDraw.Draw(page).rectangle((300, 100, 400, 140), fill=0)
    src = image_pdf([page], tmp_path / "p.pdf", 100, jpeg=False)
    assert unsolid_boxes(src, [(0, 100.0, [Box(300, 100, 400, 140)])]) == 0
    assert unsolid_boxes(src, [(0, 100.0, [Box(500, 100, 600, 140)])]) == 1


def test_type0_font_page_under_a_transparent_overlay(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    """Embedded TrueType as a Type0/CID font (Identity-H), with a translucent box drawn over
    the text: the values go, the Unicode text that stays is still searchable."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.add_font("DejaVu", fname="/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")
    pdf.set_font("DejaVu", size=12)
    pdf.cell(0, 10, f"Payee: {NAME}", new_x="LMARGIN", new_y="NEXT")
    pdf.cell(0, 10, f"Account number: {ACCOUNT}", new_x="LMARGIN", new_y="NEXT")
    pdf.cell(0, 10, "Ünïcödé text that must stay searchable.", new_x="LMARGIN", new_y="NEXT")
    with pdf.local_context(fill_opacity=0.3):
        pdf.set_fill_color(255, 0, 0)
        pdf.rect(10, 5, 150, 40, style="F")
    pdf.output(str(tmp_path / "type0.pdf"))
    out = tmp_path / "out.pdf"
    delivered(
        redact_document(
            tmp_path / "type0.pdf",
            out,
            JobOptions(template=resolve_template(None)),
            parse_policy("name,account-number", now=0),
            engine,
        )
    )
    assert find_leaks(out, [NAME, ACCOUNT]) == []
    for text in extractions(out):
        assert "Adebayo" not in text and ACCOUNT not in squashed(text)
    assert "Ünïcödé text that must stay searchable." in output_text(out)


def _simple_truetype_pdf(path: Path, lines: list[str]) -> Path:
    """A page set in an embedded (non-CID) TrueType font with WinAnsi encoding."""
    from pikepdf import Array, Dictionary, Name

    from tests.helpers import dejavu_descriptor

    pdf = pikepdf.Pdf.new()
    descriptor = dejavu_descriptor(pdf)
    font = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.TrueType,
            BaseFont=Name("/DejaVuSans"),
            Encoding=Name.WinAnsiEncoding,
            FirstChar=32,
            LastChar=126,
            Widths=Array([620] * 95),
            FontDescriptor=descriptor,
        )
    )
    ops = ["BT /TT 11 Tf 15 TL 72 720 Td"] + [f"({line}) Tj T*" for line in lines] + ["ET"]
    pdf.pages.append(
        pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, 612, 792]),
                Resources=Dictionary(Font=Dictionary(TT=font)),
                Contents=pdf.make_stream("\n".join(ops).encode()),
            )
        )
    )
    pdf.save(path)
    return path


def test_embedded_simple_truetype_font(tmp_path: Path, engine: TesseractEngine) -> None:
    src = _simple_truetype_pdf(
        tmp_path / "tt.pdf",
        [f"Payee: {NAME}", f"Account number: {ACCOUNT}", "Plain words in a TrueType font stay."],
    )
    out = tmp_path / "out.pdf"
    delivered(
        redact_document(
            src,
            out,
            JobOptions(template=resolve_template(None)),
            parse_policy("name,account-number", now=0),
            engine,
        )
    )
    assert find_leaks(out, [NAME, ACCOUNT]) == []
    for text in extractions(out):
        assert "Adebayo" not in text and ACCOUNT not in squashed(text)
    assert "Plain words in a TrueType font stay." in output_text(out)


def test_an_operator_installed_recognizer_adds_to_its_class(
    tmp_path: Path, engine: TesseractEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pressroom.redact.detect.plugins import ENV_FACTORIES, _installed
    from tests.operator_recognizers import WATCHED

    name = WATCHED[0]  # free text, no label, not in the census lists: ours cannot see it
    lines = [f"The panel thanks {name} warmly.", "Minutes are kept for seven years."]
    src = text_pdf([lines], tmp_path / "in.pdf")
    policy = parse_policy("name", now=0)
    options = JobOptions(template=resolve_template(None))

    _installed.cache_clear()
    monkeypatch.delenv(ENV_FACTORIES, raising=False)
    delivered(redact_document(src, tmp_path / "without.pdf", options, policy, engine))
    assert "Quillfeather" in output_text(tmp_path / "without.pdf")

    monkeypatch.setenv(ENV_FACTORIES, "tests.operator_recognizers:watch_list")
    _installed.cache_clear()
    try:
        delivered(redact_document(src, tmp_path / "with.pdf", options, policy, engine))
    finally:
        _installed.cache_clear()
    assert find_leaks(tmp_path / "with.pdf", [name]) == []
    for text in extractions(tmp_path / "with.pdf"):
        assert "Quillfeather" not in text
        assert "seven years." in text


def test_a_cmap_is_searched_for_what_it_maps_to_not_for_its_code_numbers(tmp_path: Path) -> None:
    from pressroom.pipeline.textlayer import to_unicode

    def pdf_with(stream_data: bytes) -> Path:
        path = tmp_path / f"cmap{len(stream_data)}.pdf"
        with pikepdf.new() as pdf:
            pdf.add_blank_page()
            pdf.Root.Extra = pdf.make_stream(stream_data)
            pdf.save(path)
        return path

    # our own identity map spells digit runs when read as text: no account number in it
    ours = to_unicode([0x2019, 0x2018, 0x20AC])
    assert find_leaks(pdf_with(ours), [ACCOUNT, "0000 00FF 0000", "2019 2019"]) == []
    # a code that stands for a whole name is a leak, whatever the code numbers are
    name = "Ottoline Marsh".encode("utf-16-be").hex().upper()
    crafted = ours.replace(
        b"endcmap", f"1 beginbfchar\n<0001> <{name}>\nendbfchar\nendcmap".encode()
    )
    leaks = find_leaks(pdf_with(crafted), ["Ottoline Marsh"])
    assert [(leak.parser, leak.where) for leak in leaks] == [("pikepdf-walk", "stream")]


def test_a_page_with_more_text_than_detection_reads_is_refused_before_it_is_read(
    tmp_path: Path,
) -> None:
    """TEXT_LIMIT, permanent: never delivered unredacted; no page was rendered or read (the
    fake engine is never called)."""
    from dataclasses import replace as replaced

    from pressroom.errors import PermanentError, TextLimit
    from pressroom.settings import Limits
    from pressroom.testing import FakeOcrEngine

    src = text_pdf([["Alpha Beta said that Gamma Delta wrote this note."] * 40], tmp_path / "w.pdf")
    fake = FakeOcrEngine()
    options = JobOptions(
        template=resolve_template("plain"), limits=replaced(Limits(), max_detect_chars=500)
    )
    with pytest.raises(TextLimit) as refused:
        delivered(
            redact_document(src, tmp_path / "out.pdf", options, parse_policy("name", now=0), fake)
        )
    assert isinstance(refused.value, PermanentError) and refused.value.code == "TEXT_LIMIT"
    assert "page 1" in str(refused.value) and "Gamma" not in str(refused.value)
    assert fake.calls == [] and not (tmp_path / "out.pdf").exists()
    # under the cap the same page is read and redacted
    roomy = JobOptions(template=resolve_template("plain"))
    delivered(redact_document(src, tmp_path / "out.pdf", roomy, parse_policy("name", now=0), fake))
    assert fake.calls


def test_a_doubtful_name_is_burned_where_found_marked_and_held_past_the_share(
    tmp_path: Path, engine: TesseractEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fail closed, and no further: the doubtful call is burned at its place and marked on the
    review sheet, its word is not burned where nothing called it, and the document is held
    only when three doubtful names or more pass the share the operator set."""
    from pressroom.errors import DoubtfulNames
    from pressroom.redact.detect.plugins import ENV_FACTORIES, _installed

    lines = ["Quillfeather said the minutes stand.", "The Quillfeather Trust meets in May."]
    src = text_pdf([lines], tmp_path / "in.pdf")
    three = text_pdf(
        [[*lines, "Quillfeather said so twice.", "Quillfeather said no."]], tmp_path / "3.pdf"
    )
    policy = parse_policy("name", now=0)
    options = JobOptions(template=resolve_template(None))
    monkeypatch.setenv(ENV_FACTORIES, "tests.operator_recognizers:hesitant")
    _installed.cache_clear()
    try:
        # one doubtful name of one: burned, delivered (a pattern of doubt holds, one word not)
        result = delivered(redact_document(src, tmp_path / "kept.pdf", options, policy, engine))
        monkeypatch.setenv("PRESSROOM_DOUBT_HOLD_SHARE", "1")
        delivered(redact_document(three, tmp_path / "three.pdf", options, policy, engine))
        monkeypatch.setenv("PRESSROOM_DOUBT_HOLD_SHARE", "0.5")
        held = held_by(
            redact_document(three, tmp_path / "held.pdf", options, policy, engine), DoubtfulNames
        )
    finally:
        _installed.cache_clear()
    assert result.sheet is not None
    assert [(f.kind, f.doubt) for f in result.sheet.findings] == [("name", True)]
    for out in ("kept.pdf", "three.pdf"):
        for text in extractions(tmp_path / out):
            assert "Quillfeather said" not in text and "said the minutes stand." in text
            assert "The Quillfeather Trust meets in May." in text  # never spread
    assert held.code == "DOUBTFUL_NAMES" and "3 of 3 name findings" in held.message
    assert [f.doubt for f in held.findings] == [True, True, True]
    assert held.sheet is not None
    assert all(f["doubt"] for f in held.sheet.as_json()["findings"])
