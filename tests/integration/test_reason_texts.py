"""Reasons carry no document text (issue 40, N5): a value the redaction finds in the body text
("Jane Whitfield") is planted, as one word, in every name a PDF can carry — a font's /BaseFont
and its descriptor's /FontName, resource names, an annotation's subtype, XObject names,
metadata keys, optional content group names, colour space and colourant names, glyph names,
a field's name — and plain, PDF/A and redaction jobs are run through `pressroom process` in
this process. No reason line on stderr, no reason in a held copy's note, and no log record
carries it."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

import pikepdf
import pytest
from pikepdf import Array, Dictionary, Name, String

from pressroom.cli import main
from pressroom.errors import UnsupportedForm
from pressroom.pipeline.archive import pdfa_problems
from pressroom.pipeline.flatten import flatten_into

pytestmark = pytest.mark.integration

PLANT = "JaneWhitfield"
BODY = "Dear Jane Whitfield, your account is open now."
KEPT = "The meeting is on Tuesday at the harbour office."


def _helvetica(pdf: pikepdf.Pdf) -> pikepdf.Object:
    return pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name.Helvetica,
            Encoding=Name.WinAnsiEncoding,
        )
    )


def _page(pdf: pikepdf.Pdf, ops: str, resources: Dictionary) -> pikepdf.Page:
    return pikepdf.Page(
        Dictionary(
            Type=Name.Page,
            MediaBox=Array([0, 0, 320, 90]),
            Resources=resources,
            Contents=pdf.make_stream(ops.encode()),
        )
    )


Plant = Callable[[pikepdf.Pdf, Dictionary, list[str]], None]


def _basefont(pdf: pikepdf.Pdf, res: Dictionary, ops: list[str]) -> None:
    """A font that is not embedded, named after the person (PDF/A refuses it: 6.2.11.4)."""
    res.Font.F2 = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.TrueType,
            BaseFont=Name("/" + PLANT),
            FirstChar=32,
            LastChar=126,
            Widths=Array([500] * 95),
            Encoding=Name.WinAnsiEncoding,
            FontDescriptor=pdf.make_indirect(
                Dictionary(
                    Type=Name.FontDescriptor,
                    FontName=Name("/" + PLANT + ",Bold"),
                    Flags=32,
                    FontBBox=Array([0, -200, 1000, 900]),
                    ItalicAngle=0,
                    Ascent=900,
                    Descent=-200,
                    CapHeight=700,
                    StemV=80,
                )
            ),
        )
    )
    ops.append(f"BT /F2 10 Tf 10 20 Td ({KEPT}) Tj ET")


def _resource_names(pdf: pikepdf.Pdf, res: Dictionary, ops: list[str]) -> None:
    """The person's name as the name of a font, a form, a graphics state, a colour space, a
    pattern and a property list in the resources, and of a marked-content tag."""
    n = PLANT
    res.Font[f"/F_{n}"] = res.Font.F1
    res.XObject = Dictionary(
        {
            f"/X_{n}": pdf.make_stream(
                b"0 0 1 rg 0 0 20 5 re f",
                Type=Name.XObject,
                Subtype=Name.Form,
                BBox=Array([0, 0, 20, 5]),
            )
        }
    )
    res.ExtGState = Dictionary({f"/GS_{n}": Dictionary(Type=Name.ExtGState, CA=1, ca=1)})
    res.ColorSpace = Dictionary({f"/CS_{n}": Name.DeviceRGB})
    res.Properties = Dictionary({f"/P_{n}": Dictionary(Kind=Name("/" + n))})
    ops.append(
        f"/{n} /P_{n} BDC /GS_{n} gs /CS_{n} cs 0 0 0 sc "
        f"BT /F_{n} 10 Tf 10 20 Td ({KEPT}) Tj ET EMC q 1 0 0 1 250 10 cm /X_{n} Do Q"
    )


def _annotation(pdf: pikepdf.Pdf, res: Dictionary, ops: list[str]) -> None:
    """An annotation whose subtype is the person's name, with no appearance of its own (the
    job is refused UNSUPPORTED_FORM)."""
    del res, ops
    pdf.pages[0].obj.Annots = Array(
        [
            pdf.make_indirect(
                Dictionary(
                    Type=Name.Annot,
                    Subtype=Name("/" + PLANT),
                    Rect=Array([200, 40, 300, 60]),
                    F=4,
                )
            )
        ]
    )


def _drawn_annotation(pdf: pikepdf.Pdf, res: Dictionary, ops: list[str]) -> None:
    """The same subtype with an appearance (drawn in), a name and a field name after the
    person."""
    del res, ops
    appearance = pdf.make_stream(
        b"0 0 1 RG 0 0 100 20 re S",
        Type=Name.XObject,
        Subtype=Name.Form,
        BBox=Array([0, 0, 100, 20]),
    )
    pdf.pages[0].obj.Annots = Array(
        [
            pdf.make_indirect(
                Dictionary(
                    Type=Name.Annot,
                    Subtype=Name("/" + PLANT),
                    Rect=Array([200, 40, 300, 60]),
                    F=4,
                    NM=String(PLANT),
                    AP=Dictionary(N=appearance),
                )
            )
        ]
    )


def _metadata(pdf: pikepdf.Pdf, res: Dictionary, ops: list[str]) -> None:
    """Metadata keys after the person: in the document information and in the XMP."""
    del res, ops
    pdf.docinfo[f"/{PLANT}"] = String("yes")
    with pdf.open_metadata(set_pikepdf_as_editor=False) as meta:
        meta[f"{{http://example.com/ns/}}{PLANT}"] = "yes"


def _optional_content(pdf: pikepdf.Pdf, res: Dictionary, ops: list[str]) -> None:
    """An optional content group named after the person, drawing the kept line."""
    group = pdf.make_indirect(Dictionary(Type=Name.OCG, Name=String(PLANT)))
    pdf.Root.OCProperties = Dictionary(
        OCGs=Array([group]), D=Dictionary(ON=Array([group]), Name=String(PLANT))
    )
    res.Properties = Dictionary(OC1=group)
    ops.append(f"/OC /OC1 BDC BT /F1 10 Tf 10 20 Td ({KEPT}) Tj ET EMC")


def _colourant(pdf: pikepdf.Pdf, res: Dictionary, ops: list[str]) -> None:
    """A separation colour space whose colourant is the person's name."""
    tint = pdf.make_stream(
        b"{dup dup}",
        FunctionType=4,
        Domain=Array([0, 1]),
        Range=Array([0, 1, 0, 1, 0, 1]),
    )
    res.ColorSpace = Dictionary(
        CS0=Array([Name.Separation, Name("/" + PLANT), Name.DeviceRGB, tint])
    )
    ops.append(f"/CS0 cs 1 sc BT /F1 10 Tf 10 20 Td ({KEPT}) Tj ET")


def _glyph_names(pdf: pikepdf.Pdf, res: Dictionary, ops: list[str]) -> None:
    """A font whose encoding's differences and a Type 3 font whose glyph procedures are
    named after the person."""
    helv = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name.Helvetica,
            Encoding=Dictionary(
                Type=Name.Encoding,
                BaseEncoding=Name.WinAnsiEncoding,
                Differences=Array([126, Name("/" + PLANT)]),
            ),
        )
    )
    glyph = pdf.make_stream(b"500 0 0 0 500 500 d1 0 0 500 500 re f")
    type3 = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type3,
            FontBBox=Array([0, 0, 500, 500]),
            FontMatrix=Array([0.001, 0, 0, 0.001, 0, 0]),
            CharProcs=Dictionary({f"/{PLANT}": glyph}),
            Encoding=Dictionary(Type=Name.Encoding, Differences=Array([65, Name("/" + PLANT)])),
            FirstChar=65,
            LastChar=65,
            Widths=Array([500]),
        )
    )
    res.Font.F3 = helv
    res.Font.F4 = type3
    ops.append(f"BT /F3 10 Tf 10 20 Td ({KEPT}~) Tj ET BT /F4 10 Tf 280 20 Td (A) Tj ET")


def _field(pdf: pikepdf.Pdf, res: Dictionary, ops: list[str]) -> None:
    """A filled text field with no appearance, named after the person."""
    del res, ops
    widget = pdf.make_indirect(
        Dictionary(
            Type=Name.Annot,
            Subtype=Name.Widget,
            FT=Name.Tx,
            T=String(PLANT),
            TU=String(PLANT),
            V=String("Tuesday"),
            Rect=Array([200, 40, 300, 60]),
            DA=String("/Helv 10 Tf 0 g"),
            F=4,
        )
    )
    pdf.pages[0].obj.Annots = Array([widget])
    pdf.Root.AcroForm = Dictionary(
        Fields=Array([widget]),
        DR=Dictionary(Font=Dictionary(Helv=_helvetica(pdf))),
        DA=String("/Helv 10 Tf 0 g"),
    )


PLANTS: dict[str, Plant] = {
    "basefont": _basefont,
    "resource-names": _resource_names,
    "annotation-subtype": _annotation,
    "drawn-annotation": _drawn_annotation,
    "metadata-keys": _metadata,
    "optional-content": _optional_content,
    "colourant": _colourant,
    "glyph-names": _glyph_names,
    "field-name": _field,
}


def planted(path: Path, where: str) -> Path:
    """Two pages: the person's name in the body text of the first (found, burned), and the
    planted name on the second (a kept page: no value is found on it)."""
    pdf = pikepdf.Pdf.new()
    helv = _helvetica(pdf)
    pdf.pages.append(
        _page(pdf, f"BT /F1 11 Tf 10 50 Td ({BODY}) Tj ET", Dictionary(Font=Dictionary(F1=helv)))
    )
    res = Dictionary(Font=Dictionary(F1=helv))
    ops = [f"BT /F1 10 Tf 10 60 Td ({KEPT}) Tj ET"]
    kept = _page(pdf, "", res)
    pdf.pages.append(kept)
    page_res = pdf.pages[1].obj.Resources
    PLANTS[where](pdf, page_res, ops)
    pdf.pages[1].obj.Contents = pdf.make_stream("\n".join(ops).encode())
    pdf.save(path)
    return path


JOBS = {
    "plain": [],
    "pdfa": ["--output-type", "pdfa"],
    "redaction": ["--redact", "name"],
    "redaction-pdfa": ["--redact", "name", "--output-type", "pdfa"],
}


def _said(out: Path, err: str, caplog: pytest.LogCaptureFixture) -> list[str]:
    """Everything a run said: its stderr, each held copy's code and reason, and every log
    record (message and arguments)."""
    said = [err]
    for note in out.rglob("*.json"):
        data = json.loads(note.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            said += [str(data.get("code", "")), str(data.get("reason", ""))]
    for record in caplog.records:
        said.append(record.getMessage())
        said += [str(v) for v in record.__dict__.values() if isinstance(v, str)]
    return said


@pytest.mark.parametrize("where", sorted(PLANTS))
def test_no_reason_or_log_line_names_what_a_file_names(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    where: str,
) -> None:
    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "data"))
    caplog.set_level(logging.DEBUG)
    src = planted(tmp_path / "letter.pdf", where)
    codes = {}
    for job, flags in JOBS.items():
        out = tmp_path / job
        codes[job] = main(["process", *flags, str(src), "-o", str(out)])
        err = capsys.readouterr().err
        for text in _said(out, err, caplog):
            assert PLANT.casefold() not in text.casefold(), f"{job}: {text}"
        caplog.clear()
    # every job got somewhere: delivered (0), refused (2) or held (3), never a bug (1)
    assert set(codes.values()) <= {0, 2, 3}, codes


def test_the_reasons_that_named_a_font_or_an_annotation_name_them_by_number(
    tmp_path: Path,
) -> None:
    """The two reasons the security review saw spell the name (N5), and what they say now."""
    src = planted(tmp_path / "annot.pdf", "annotation-subtype")
    with pytest.raises(UnsupportedForm) as caught:
        flatten_into(src, tmp_path / "flat.pdf")
    assert caught.value.message.startswith(
        "page 1 has an annotation (number 1 on the page, an unknown type)"
    )
    font = planted(tmp_path / "font.pdf", "basefont")
    problems = [p for p in pdfa_problems(font) if p.startswith("6.2.11.4")]
    assert problems and all(PLANT not in p for p in problems)
    assert any("a font is not embedded (object " in p for p in problems)
