"""PDF/A-2b and colour as the source calibrated it (issue 43, item 2): a CMYK document keeps its
CMYK output intent instead of being refused under an sRGB one, the RGB the output adds is
calibrated by a /DefaultRGB space, and the structural check judges device colour against the
intent and the defaults of the resources that draw it. Links are the one kind of annotation an
archive output keeps; the check allows them printed, with URI or GoTo actions, and nothing else.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pikepdf
import pytest
from pikepdf import Array, Dictionary, Name

from pressroom.pipeline.archive import (
    cmyk_intent_profile,
    make_pdfa,
    pdfa_metadata,
    pdfa_problems,
    shows_cmyk,
)

pytestmark = pytest.mark.integration


def cmyk_profile() -> bytes:
    """A CMYK output profile's header (ICC v2, class 'prtr', data colour space 'CMYK', PCS
    Lab) and an empty tag table: enough for what the structural check reads of a profile."""
    header = bytearray(128)
    struct.pack_into(">I", header, 0, 132)
    header[8:12] = bytes([2, 0x10, 0, 0])
    header[12:16] = b"prtr"
    header[16:20] = b"CMYK"
    header[20:24] = b"Lab "
    header[36:40] = b"acsp"
    return bytes(header) + struct.pack(">I", 0)


def pdfx_intents(pdf: pikepdf.Pdf) -> Array:
    profile = pdf.make_stream(cmyk_profile())
    profile.N = 4
    return Array(
        [
            Dictionary(
                Type=Name.OutputIntent,
                S=Name.GTS_PDFX,
                OutputConditionIdentifier=pikepdf.String("CGATS TR 001"),
                DestOutputProfile=profile,
            )
        ]
    )


def cmyk_page(pdf: pikepdf.Pdf, content: bytes = b"q 10 0 0 10 20 20 cm /Im0 Do Q\n") -> None:
    """One page drawing a DeviceCMYK image (and whatever ``content`` adds)."""
    image = pdf.make_stream(
        b"\x00\x00\x00\xff",
        Type=Name.XObject,
        Subtype=Name.Image,
        Width=1,
        Height=1,
        BitsPerComponent=8,
        ColorSpace=Name.DeviceCMYK,
    )
    pdf.add_blank_page(page_size=(200, 200))
    page = pdf.pages[-1]
    page.obj.Resources = Dictionary(XObject=Dictionary(Im0=image))
    page.obj.Contents = pdf.make_stream(content)


def saved_pdfa(pdf: pikepdf.Pdf, path: Path) -> Path:
    with pdf.open_metadata(set_pikepdf_as_editor=False) as meta:
        pdfa_metadata(meta)
    pdf.save(path)
    return path


def colour_problems(path: Path) -> list[str]:
    return [p for p in pdfa_problems(path) if p.startswith(("6.2.3", "6.2.4"))]


def test_a_cmyk_document_takes_the_sources_cmyk_intent_and_passes(tmp_path: Path) -> None:
    pdf = pikepdf.Pdf.new()
    # the RGB an output adds (a band's colour) beside the source's CMYK image
    cmyk_page(pdf, b"q 0.2 0.3 0.4 rg 0 0 200 20 re f Q q 10 0 0 10 20 20 cm /Im0 Do Q\n")
    intents = pdfx_intents(pdf)
    assert shows_cmyk(pdf) and cmyk_intent_profile(intents) is not None
    make_pdfa(pdf, source_intents=intents)
    (intent,) = pdf.Root.OutputIntents
    assert intent.S == Name.GTS_PDFA1 and intent.DestOutputProfile.N == 4
    assert str(intent.OutputConditionIdentifier) == "CGATS TR 001"
    assert intent.DestOutputProfile.read_bytes() == cmyk_profile()
    default = pdf.pages[0].obj.Resources.ColorSpace.DefaultRGB
    assert default[0] == Name.ICCBased and default[1].N == 3
    assert colour_problems(saved_pdfa(pdf, tmp_path / "out.pdf")) == []


def test_the_intent_may_come_from_another_document(tmp_path: Path) -> None:
    source = pikepdf.Pdf.new()
    intents = pdfx_intents(source)
    out = pikepdf.Pdf.new()
    cmyk_page(out)
    make_pdfa(out, source_intents=intents)
    assert out.Root.OutputIntents[0].DestOutputProfile.read_bytes() == cmyk_profile()
    assert colour_problems(saved_pdfa(out, tmp_path / "out.pdf")) == []


def test_without_a_cmyk_intent_the_cmyk_document_still_breaks_the_rgb_one(tmp_path: Path) -> None:
    """No source intent (or only an RGB one): sRGB, and device CMYK is named as before."""
    pdf = pikepdf.Pdf.new()
    cmyk_page(pdf)
    make_pdfa(pdf, source_intents=None)
    assert pdf.Root.OutputIntents[0].DestOutputProfile.N == 3
    problems = colour_problems(saved_pdfa(pdf, tmp_path / "out.pdf"))
    assert problems == ["6.2.4.3: DeviceCMYK colour under an RGB output intent"]


def test_an_rgb_document_keeps_srgb_whatever_the_source_intent(tmp_path: Path) -> None:
    """A CMYK intent is taken only where the output shows CMYK colour."""
    pdf = pikepdf.Pdf.new()
    pdf.add_blank_page(page_size=(100, 100))
    pdf.pages[0].obj.Contents = pdf.make_stream(b"0 0 1 rg 0 0 10 10 re f\n")
    make_pdfa(pdf, source_intents=pdfx_intents(pdf))
    assert pdf.Root.OutputIntents[0].DestOutputProfile.N == 3
    assert colour_problems(saved_pdfa(pdf, tmp_path / "out.pdf")) == []


def test_a_default_cmyk_space_calibrates_device_cmyk_under_srgb(tmp_path: Path) -> None:
    pdf = pikepdf.Pdf.new()
    cmyk_page(pdf)
    make_pdfa(pdf)
    path = saved_pdfa(pdf, tmp_path / "bare.pdf")
    assert any("DeviceCMYK" in p for p in colour_problems(path))
    with pikepdf.open(path) as again:
        profile = again.make_stream(cmyk_profile())
        profile.N = 4
        resources = again.pages[0].obj.Resources
        resources.ColorSpace = Dictionary(DefaultCMYK=Array([Name.ICCBased, profile]))
        again.save(tmp_path / "calibrated.pdf")
    assert colour_problems(tmp_path / "calibrated.pdf") == []


def test_device_rgb_under_a_cmyk_intent_needs_a_default_rgb(tmp_path: Path) -> None:
    pdf = pikepdf.Pdf.new()
    cmyk_page(pdf, b"0 1 0 RG 0 0 m 10 10 l S q 10 0 0 10 20 20 cm /Im0 Do Q\n")
    make_pdfa(pdf, source_intents=pdfx_intents(pdf))
    path = saved_pdfa(pdf, tmp_path / "out.pdf")
    assert colour_problems(path) == []
    with pikepdf.open(path) as again:
        del again.pages[0].obj.Resources.ColorSpace["/DefaultRGB"]
        again.save(tmp_path / "bare.pdf")
    assert colour_problems(tmp_path / "bare.pdf") == [
        "6.2.4.3: DeviceRGB colour set in a content stream (rg, RG or cs)"
    ]


def link(pdf: pikepdf.Pdf, action: Dictionary, flags: int | None = 4) -> Dictionary:
    annot = Dictionary(Type=Name.Annot, Subtype=Name.Link, Rect=Array([0, 0, 10, 10]), A=action)
    if flags is not None:
        annot.F = flags
    return pdf.make_indirect(annot)


@pytest.mark.parametrize(
    ("annots", "wanted"),
    [
        (lambda pdf: [link(pdf, Dictionary(S=Name.URI, URI=pikepdf.String("https://x.org")))], []),
        (lambda pdf: [link(pdf, Dictionary(Type=Name.Action, S=Name.GoTo, D=Array([0])))], []),
        (
            lambda pdf: [link(pdf, Dictionary(S=Name.URI, URI=pikepdf.String("u")), flags=None)],
            ["6.3.2: a link not flagged to print, or flagged hidden"],
        ),
        (
            lambda pdf: [link(pdf, Dictionary(S=Name.URI, URI=pikepdf.String("u")), flags=4 | 2)],
            ["6.3.2: a link not flagged to print, or flagged hidden"],
        ),
        (
            lambda pdf: [
                link(pdf, Dictionary(Type=Name.Action, S=Name.JavaScript, JS=pikepdf.String("1")))
            ],
            ["6.5.1: an action", "6.5: a script or additional action"],
        ),
        (
            lambda pdf: [
                pdf.make_indirect(
                    Dictionary(Type=Name.Annot, Subtype=Name.Text, Rect=Array([0, 0, 5, 5]), F=4)
                )
            ],
            ["6.3: an annotation other than a link"],
        ),
    ],
    ids=["uri", "goto", "unprinted", "hidden", "javascript", "note"],
)
def test_links_are_the_annotations_an_archive_keeps(
    tmp_path: Path, annots: object, wanted: list[str]
) -> None:
    pdf = pikepdf.Pdf.new()
    pdf.add_blank_page(page_size=(100, 100))
    pdf.pages[0].obj.Annots = Array(annots(pdf))  # type: ignore[operator]
    make_pdfa(pdf)
    problems = [
        p for p in pdfa_problems(saved_pdfa(pdf, tmp_path / "out.pdf")) if p.startswith("6.3")
    ]
    problems += [p for p in pdfa_problems(tmp_path / "out.pdf") if p.startswith("6.5")]
    assert sorted(problems) == sorted(wanted)
