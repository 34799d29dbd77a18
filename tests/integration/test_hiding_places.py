"""Every hiding place of the corpus (tests/hiding.py): a redaction job never delivers the name
inside, in any reader; and a plain job carries none of the undrawn carriers either."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pikepdf
import pytest

from pressroom.engines.tesseract import TesseractEngine
from pressroom.errors import OutputCheckFailed, RedactionLeak
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.plain import process_document
from pressroom.redact.leaks import find_leaks
from pressroom.templates import resolve_template
from tests import hiding
from tests.helpers import delivered

pytestmark = pytest.mark.integration


# Text drawn inside a Type 3 glyph is drawn: pruning keeps it, so the check must hold it. Every
# other case is cleared and delivered; a check that held everything would fail here.
HELD = {"Type 3 glyph that shows text"}


@pytest.mark.parametrize("case", list(hiding.CASES))
def test_a_name_in_any_hiding_place_is_never_delivered(
    case: str, tmp_path: Path, engine: TesseractEngine
) -> None:
    outcome = hiding.judge(case, tmp_path, engine)
    if case in HELD:
        assert outcome.state == "held"
        assert outcome.reason.split(":")[0] in ("REDACTION_LEAK", "OUTPUT_CHECK_FAILED")
    else:
        assert outcome.state == "delivered", outcome.reason
        assert outcome.found_in == [], f"{case}: still readable in {outcome.found_in}"
    if case in UNSEEN:
        # the name was never visible on page 2: no box marks where it was
        assert longest_dark_run(tmp_path / "out.pdf", 1) < 100
    if case == "shared resources, Identity-H font":
        assert longest_dark_run(tmp_path / "out.pdf", 0) > 150  # page 1's name is burned
    if case in ("one appearance shared by two pages, Identity-H", "field value with no appearance"):
        # the flattened name is burned where it shows: on page 2 (and page 1 for the shared)
        assert longest_dark_run(tmp_path / "out.pdf", 1) > 100


# Cases whose second page carries the name where nobody sees it.
UNSEEN = {
    "text clipped (Tr 7)",
    "invisible text (Tr 3)",
    "text drawn off the page",
    "white text on white",
    "text under a white rectangle",
    "text under a picture",
    "optional-content layer (hidden)",
    "layer hidden by a visibility expression",
    "layer hidden by auto-state",
    "annotation never viewed (NoView), Identity-H",
}


def longest_dark_run(path: Path, index: int) -> int:
    """The longest row of near-black pixels on a page at 150 dpi: a burned name is one, a line
    of type never is."""
    import numpy as np
    import pypdfium2

    doc = pypdfium2.PdfDocument(path)
    try:
        grey = np.asarray(doc[index].render(scale=150 / 72).to_pil().convert("L")) < 40
    finally:
        doc.close()
    best = 0
    for row in grey:
        edges = np.flatnonzero(np.diff(np.concatenate(([0], row.astype(np.int8), [0]))))
        if len(edges):
            best = max(best, int((edges[1::2] - edges[::2]).max()))
    return best


def test_the_font_walk_reads_what_byte_searches_cannot(tmp_path: Path) -> None:
    """The sources themselves: a name shown through Identity-H or /Differences codes in a form
    no page of the second half draws is found by the font walk, page and form named."""
    for build in (hiding.shared_identity_h, hiding.shared_differences):
        src = build(tmp_path / f"{build.__name__}.pdf")
        font = [leak for leak in find_leaks(src, [hiding.NAME]) if leak.parser == "font-text"]
        assert font and not any(leak.unreadable for leak in font)
        assert {leak.where for leak in font} <= {"page 1", "page 2"}


def test_text_the_walk_cannot_read_holds_a_redaction(tmp_path: Path) -> None:
    """Glyph names that say nothing (g1, g2, …) and no ToUnicode: unreadable, so held."""
    from pikepdf import Array, Dictionary, Name

    pdf = pikepdf.Pdf.new()
    font = pdf.make_indirect(
        Dictionary(
            Type=Name.Font,
            Subtype=Name.Type1,
            BaseFont=Name.Helvetica,
            Encoding=Dictionary(Differences=Array([1, *(Name(f"/g{i}") for i in range(1, 6))])),
        )
    )
    pdf.pages.append(
        pikepdf.Page(
            Dictionary(
                Type=Name.Page,
                MediaBox=Array([0, 0, 612, 792]),
                Resources=Dictionary(Font=Dictionary(F1=font)),
                Contents=pdf.make_stream(b"BT /F1 12 Tf 72 700 Td <0102030405> Tj ET"),
            )
        )
    )
    pdf.save(tmp_path / "g.pdf")
    leaks = find_leaks(tmp_path / "g.pdf", [hiding.NAME])
    assert [(leak.where, leak.count, leak.unreadable) for leak in leaks] == [("page 1", 5, True)]
    assert find_leaks(tmp_path / "g.pdf", []) == []  # nothing to look for: nothing to hold
    assert issubclass(OutputCheckFailed, Exception) and not issubclass(
        OutputCheckFailed, RedactionLeak
    )


@pytest.mark.parametrize(
    "build",
    [
        hiding.unused_form,
        hiding.image_xmp,
        hiding.form_private_keys,
        hiding.content_comment,
        hiding.actual_text,
        hiding.alt_text,
        hiding.shared_identity_h,
    ],
)
def test_a_plain_job_carries_only_what_its_pages_draw(
    build: object, tmp_path: Path, engine: TesseractEngine
) -> None:
    """As the docs promise for every job: no comment, unused form, XMP, private key or marked
    content property list rides along; the page's words stay."""
    src = build(tmp_path / "src.pdf")  # type: ignore[operator]
    out = tmp_path / "out.pdf"
    delivered(process_document(src, out, JobOptions(template=resolve_template("plain")), engine))
    text = subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True).stdout
    assert hiding.PAGE2[0] in text and hiding.OPENING in text
    qdf = subprocess.run(
        ["qpdf", "--qdf", "--object-streams=disable", str(out), "-"],
        capture_output=True,
        check=False,
    ).stdout
    if build is hiding.shared_identity_h:
        # the name is drawn on page 1 of a plain job: it stays there, and only there
        pages = [
            subprocess.run(
                ["pdftotext", "-f", str(n), "-l", str(n), str(out), "-"],
                capture_output=True,
                text=True,
            ).stdout
            for n in (1, 2)
        ]
        assert hiding.SURNAME in pages[0] and hiding.SURNAME not in pages[1]
        with pikepdf.open(out) as pdf:
            second = pdf.pages[1]
            assert "/Fx" not in repr(second.obj.Resources)
        return
    # the name stays where page 1 draws it; none of page 2's carriers of it stays
    for carrier in (
        b"prepared for",
        b"/ActualText",
        b"/Alt",
        b"/PieceInfo",
        b"/ACME_Owner",
        b"<rdf:li>" + hiding.NAME.encode(),
        b"/Fy",
    ):
        assert carrier not in qdf, carrier
    assert qdf.count(hiding.SURNAME.encode()) == 1  # page 1's own line
