"""A redaction keeps the source's carriers only where they hold no value it removes (issue 43,
item 1, failing closed): a name planted in the title, an outline item's title and a link's
URI is in none of the output's bytes, decompressed; what holds nothing stays, and the result
names what was dropped."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pikepdf
import pytest

from pressroom.engines.tesseract import TesseractEngine
from pressroom.pipeline.core import JobOptions
from pressroom.redact.engine import redact_document
from pressroom.redact.leaks import find_leaks
from pressroom.redact.policy import parse_policy
from pressroom.templates import resolve_template
from tests.e2e.test_structure_carriers import structured_pdf

pytestmark = pytest.mark.integration

NAME = "Margaret Thornbury"


def test_a_name_in_the_title_an_outline_and_a_link_survives_nowhere(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    src = structured_pdf(tmp_path / "report.pdf", secret=NAME)
    out = tmp_path / "out.pdf"
    options = JobOptions(template=resolve_template("sample"))
    result = redact_document(src, out, options, parse_policy("name", now=0), engine)
    assert set(result.dropped) == {"title", "outlines", "links"}
    # the name is on one born-digital page once: found in its text and in its pixels, one
    # value burned
    assert result.redacted == {"name": 1}
    qdf = tmp_path / "qdf.pdf"
    subprocess.run(
        ["qpdf", "--qdf", "--object-streams=disable", str(out), str(qdf)],
        check=True,
        timeout=60,
    )
    everything = qdf.read_bytes()
    for part in ("Thornbury", "Margaret", "Thornbury".encode("utf-16-be").decode("latin-1")):
        assert part.encode("latin-1") not in everything
    assert find_leaks(out, [NAME]) == []
    with pikepdf.open(out) as pdf:
        # the title fell back to the template's; the items and the link with nothing in them
        # stayed, on their pages
        assert str(pdf.docinfo.Title) == "Processed document"
        with pdf.open_outline() as outline:
            titles = [item.title for item in outline.root]
        assert titles == ["Cover", "Front matter", "Chapter one"]
        annots = pdf.pages[1].obj.Annots
        assert len(annots) == 1 and "/Dest" in annots[0]
        assert [p.label for p in pdf.pages] == ["Cover", "i", "ii", "1", "2"]
        assert "/StructTreeRoot" not in pdf.Root


@pytest.mark.parametrize(
    "where",
    ["title", "outline", "uri", "destination", "label"],
)
def test_the_leak_check_reads_every_carrier_an_output_may_keep(tmp_path: Path, where: str) -> None:
    """Were a carrier with the value kept, the output check would see it: each place the
    carriers are written is read by find_leaks."""
    from pressroom.pipeline.geometry import PageLayout
    from pressroom.pipeline.structure import (
        Carriers,
        Frame,
        Label,
        Link,
        Outline,
        Placed,
        Target,
        write_carriers,
    )

    target = Target(0, "/Fit")
    carriers = Carriers(
        outlines=(Outline(f"About {NAME}" if where == "outline" else "About", target),),
        dests=((NAME if where == "destination" else "top", target),),
        links=(Link(0, (0, 0, 10, 10), uri=f"https://x.org/{NAME}" if where == "uri" else None,
                    target=target),),
        labels=(Label(0, "/D", f"{NAME}-" if where == "label" else ""),),
        frames=(Frame((0, 0, 612, 792)),),
    )  # fmt: skip
    pdf = pikepdf.Pdf.new()
    pdf.add_blank_page(page_size=(612, 792))
    layout = PageLayout(612, 792, (0, 0, 612, 792))
    write_carriers(pdf, carriers, [Placed(0, 0, layout, 0)], cover=None)
    if where == "title":
        with pdf.open_metadata() as meta:
            meta["dc:title"] = NAME
    path = tmp_path / "carried.pdf"
    pdf.save(path)
    assert find_leaks(path, [NAME]), where


def test_a_target_on_a_sideways_scan_follows_it_upright(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    """A redaction rebuilds a page with a value from its pixels, turned upright: the outline's
    target on it (a rectangle around a heading, in the sideways page's space) still frames the
    heading."""
    from pikepdf import Array, Dictionary, Name, String

    from pressroom.synth import draw_page, image_pdf

    lines = ["Chapter Seven begins here", "Account number: 12345678", "The rest of the page."]
    upright = draw_page(lines, height_in=3.0, dpi=300).image
    src = image_pdf([upright.rotate(90, expand=True)], tmp_path / "sideways.pdf", 300)
    with pikepdf.open(src, allow_overwriting_input=True) as pdf:
        # the heading, in the sideways page's space (612 pt high: the upright page's width)
        frame = Array([pdf.pages[0].obj, Name.FitR, 58, 60, 95, 300])
        item = pdf.make_indirect(Dictionary(Title=String("Chapter Seven"), Dest=frame))
        pdf.Root.Outlines = pdf.make_indirect(
            Dictionary(Type=Name.Outlines, First=item, Last=item, Count=1)
        )
        pdf.save(src)
    out = tmp_path / "out.pdf"
    options = JobOptions(template=resolve_template("plain"))
    result = redact_document(src, out, options, parse_policy("account-number", now=0), engine)
    assert result.redacted and result.rotations[0] in (0, 90, 270)
    with pikepdf.open(out) as pdf:
        page = pdf.pages[0]
        assert [float(v) for v in page.mediabox[2:]] == [612.0, 216.0]  # upright
        with pdf.open_outline() as outline:
            (item,) = outline.root
            dest = item.destination
        assert dest[1] == Name.FitR
        rect = tuple(float(v) for v in dest[2:6])
    from pressroom.engines import pdfium

    with pdfium.open_pdf(out) as doc:
        assert "Chapter Seven" in pdfium.page_text(doc, 0, rect)


def test_a_name_only_in_the_carriers_is_found_there_by_detection(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    """No page shows the name, so no found value matches it: the carriers are read by the
    job's detection too (build_output's detector), and what it finds is dropped."""
    from pressroom.synth import text_pdf

    src = text_pdf(
        [["The committee met on Tuesday to discuss the library budget."]], tmp_path / "s.pdf"
    )
    with pikepdf.open(src, allow_overwriting_input=True) as pdf:
        pdf.docinfo.Title = f"Notes for {NAME}"
        with pdf.open_outline() as outline:
            outline.root.append(pikepdf.OutlineItem(f"Letter to {NAME}", 0))
            outline.root.append(pikepdf.OutlineItem("Budget", 0))
        pdf.save(src)
    out = tmp_path / "out.pdf"
    options = JobOptions(template=resolve_template("plain"))
    result = redact_document(src, out, options, parse_policy("name", now=0), engine)
    assert {"title", "outlines"} <= set(result.dropped)
    qdf = tmp_path / "qdf.pdf"
    subprocess.run(["qpdf", "--qdf", "--object-streams=disable", str(out), str(qdf)], check=True)
    assert b"Thornbury" not in qdf.read_bytes()
    with pikepdf.open(out) as pdf, pdf.open_outline() as outline:
        assert [item.title for item in outline.root] == ["Budget"]


def _qdf_text(tmp_path: Path, out: Path) -> bytes:
    qdf = tmp_path / "qdf.pdf"
    subprocess.run(["qpdf", "--qdf", "--object-streams=disable", str(out), str(qdf)], check=True)
    return qdf.read_bytes()


def _with_link(src: Path, uri: str) -> None:
    with pikepdf.open(src, allow_overwriting_input=True) as pdf:
        link = pdf.make_indirect(
            pikepdf.Dictionary(
                Type=pikepdf.Name.Annot,
                Subtype=pikepdf.Name.Link,
                Rect=[72, 700, 300, 720],
                F=4,
                A=pikepdf.Dictionary(S=pikepdf.Name.URI, URI=pikepdf.String(uri)),
            )
        )
        pdf.pages[0].obj.Annots = pikepdf.Array([link])
        pdf.save(src)


@pytest.mark.parametrize(
    "uri",
    [
        "https://example.org/M%61rgaret%20Thornbury",  # percent-encoded whole name
        "https://example.org/~thornbury/cv.pdf",  # the surname inside a path
        "mailto:m.thornbury@example.org",
        "https://example.org/?n=thornbury%2C%20margaret",
    ],
    ids=["percent", "path", "mailto", "query"],
)
def test_a_link_holding_the_name_in_any_spelling_is_dropped(
    tmp_path: Path, engine: TesseractEngine, uri: str
) -> None:
    """The fresh-eyes review's R2 findings 1 and 3: escapes are read as what they spell, and a
    carrier is cut into words at every punctuation mark as well as at spaces."""
    from pressroom.synth import text_pdf

    src = text_pdf([[f"Notes taken by {NAME} at the meeting on Tuesday."]], tmp_path / "s.pdf")
    _with_link(src, uri)
    out = tmp_path / "out.pdf"
    options = JobOptions(template=resolve_template("plain"))
    result = redact_document(src, out, options, parse_policy("name", now=0), engine)
    assert "links" in result.dropped
    assert b"hornbury" not in _qdf_text(tmp_path, out)
    assert find_leaks(out, [NAME]) == []


def test_the_leak_check_reads_a_percent_encoded_address() -> None:
    from pressroom.redact.leaks import _object_strings_hits
    from pressroom.redact.plan import ValueSearch

    wanted = ValueSearch([NAME])
    said = pikepdf.String("https://example.org/M%61rgaret%20Thornbury")
    assert _object_strings_hits(said, wanted) == 1
    assert _object_strings_hits(pikepdf.Name("/Margaret#20Thornbury"), wanted) == 1


def test_a_name_only_the_title_holds_is_burned_where_a_page_shows_its_surname(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    """R2 finding 2: the title names "Margaret Thornbury", a page says only "Thornbury": the
    carriers' own findings join the document's values, so the page's surname is burned too."""
    from pressroom.synth import text_pdf

    src = text_pdf(
        [
            [
                "The figures were checked twice by the regional office.",
                "Figures from Thornbury were checked twice.",
            ]
        ],
        tmp_path / "s.pdf",
    )
    with pikepdf.open(src, allow_overwriting_input=True) as pdf:
        pdf.docinfo.Title = f"Interview with {NAME}"
        pdf.docinfo.Subject = "Testimony of Thornbury"
        pdf.save(src)
    out = tmp_path / "out.pdf"
    options = JobOptions(template=resolve_template("plain"))
    result = redact_document(src, out, options, parse_policy("name", now=0), engine)
    assert {"title", "subject"} <= set(result.dropped)
    assert b"hornbury" not in _qdf_text(tmp_path, out)
    text = subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True).stdout
    assert "regional office" in text and "Thornbury" not in text
