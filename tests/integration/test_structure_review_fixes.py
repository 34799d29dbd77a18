"""Review findings on what a plain job keeps of a source (issue 43): a split job (``-j 2``)
of a source whose /OutputIntents or structure tree is a direct object; a structure tree
whose elements point at an embedded file, a script or the page tree; a tree past
``MAX_ELEMENTS``; a /Lang that is no language tag; a destination name with #xx escapes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pikepdf
import pytest
from pikepdf import Array, Dictionary, Name, String

from pressroom.pipeline import structure
from pressroom.pipeline.archive import srgb_profile
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.plain import process_document
from pressroom.pipeline.structure import read_carriers, tree_size
from pressroom.templates import resolve_template
from pressroom.testing import FakeOcrEngine
from tests.e2e.test_cli import run_cli
from tests.e2e.test_structure_carriers import _struct_text, structured_pdf
from tests.helpers import delivered

pytestmark = pytest.mark.integration


def _plain_job(src: Path, out: Path, output_type: str = "pdf") -> Path:
    options = JobOptions(template=resolve_template("sample"), output_type=output_type)
    delivered(process_document(src, out, options, FakeOcrEngine(lines=["never read"])))
    return out


def _qdf(path: Path) -> bytes:
    qdf = path.with_suffix(".qdf.pdf")
    subprocess.run(
        ["qpdf", "--qdf", "--object-streams=disable", str(path), str(qdf)],
        check=True,
        timeout=60,
    )
    return qdf.read_bytes()


def test_a_split_job_keeps_direct_output_intents_and_a_direct_tree(tmp_path: Path) -> None:
    """OCRmyPDF's and LibreOffice's PDF/A files write /OutputIntents as a direct array; a
    tree may be direct in the catalog too. ``-j 2`` assembles its parts with them, the
    same bytes as ``-j 1``."""
    src = structured_pdf(tmp_path / "report.pdf", own_fonts=True)
    with pikepdf.open(src, allow_overwriting_input=True) as pdf:
        profile = pdf.make_stream(srgb_profile())
        profile.N = 3
        pdf.Root.OutputIntents = Array(
            [
                Dictionary(
                    Type=Name.OutputIntent,
                    S=Name.GTS_PDFA1,
                    OutputConditionIdentifier=String("sRGB IEC61966-2.1"),
                    DestOutputProfile=profile,
                )
            ]
        )
        tree = pdf.Root.StructTreeRoot
        pdf.Root.StructTreeRoot = Dictionary({k: v for k, v in tree.items()})
        pdf.save(src)
    with pikepdf.open(src) as pdf:
        assert not pdf.Root.OutputIntents.is_indirect
        assert not pdf.Root.StructTreeRoot.is_indirect
    env = {"SOURCE_DATE_EPOCH": "1767225600"}
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        done = run_cli(
            "process", str(src), "-o", str(out), "-j", jobs, "--template", "sample",
            scratch=tmp_path, env=env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        outs.append(out / "report.pdf")
    assert outs[0].read_bytes() == outs[1].read_bytes()
    with pikepdf.open(outs[1]) as pdf:
        assert pdf.Root.OutputIntents[0].S == Name.GTS_PDFA1
        assert pdf.Root.OutputIntents[0].DestOutputProfile.read_bytes() == srgb_profile()
        assert "/StructTreeRoot" in pdf.Root
    assert _struct_text(outs[1]) == _struct_text(src)


SECRET = b"SECRET ATTACHMENT"


def _hostile_tree(path: Path) -> Path:
    """Our tagged fixture, its elements pointing at what no structure element defines: an
    associated file (/AF, an embedded file), a catalog with an open action and names of
    scripts and files, the page tree; an attribute holding a stream and a script action; a
    class map entry holding a file."""
    structured_pdf(path)
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        document = pdf.Root.StructTreeRoot.K
        heading, para = document.K[0], document.K[1]
        attachment = pdf.make_stream(SECRET * 10, Type=Name.EmbeddedFile)
        filespec = Dictionary(
            Type=Name.Filespec,
            F=String("a.exe"),
            UF=String("a.exe"),
            AFRelationship=Name.Data,
            EF=Dictionary(F=attachment),
        )
        heading.AF = Array([filespec])
        pdf.Root.OpenAction = Dictionary(S=Name.JavaScript, JS=String("app.alert('open')"))
        scripts = pikepdf.NameTree.new(pdf)
        scripts["x"] = Dictionary(S=Name.JavaScript, JS=String("app.alert('names')"))
        files = pikepdf.NameTree.new(pdf)
        files["a.exe"] = filespec
        pdf.Root.Names.JavaScript = scripts.obj
        pdf.Root.Names.EmbeddedFiles = files.obj
        heading.X = pdf.Root
        para.Y = pdf.Root.Pages
        para.A = Dictionary(
            O=Name.Layout,
            Placement=Name.Block,
            BBox=Array([0, 0, 10, 10]),
            Evil=pdf.make_stream(SECRET),
            Act=Dictionary(S=Name.JavaScript, JS=String("app.alert('attr')")),
        )
        pdf.Root.StructTreeRoot.ClassMap = Dictionary(Bad=Dictionary(O=Name.Layout, F=filespec))
        pdf.save(path)
    return path


@pytest.mark.parametrize("output_type", ["pdf", "pdfa"])
def test_a_tree_carries_no_file_no_script_and_keeps_the_page_tree(
    tmp_path: Path, output_type: str
) -> None:
    src = _hostile_tree(tmp_path / "report.pdf")
    out = _plain_job(src, tmp_path / "out.pdf", output_type)
    everything = _qdf(out)
    for found in (SECRET, b"/EmbeddedFile", b"/JavaScript", b"/JS", b"/AF", b"/Filespec"):
        assert found not in everything, found
    with pikepdf.open(out) as pdf:
        assert len(pdf.pages) == 5  # the cover and the source's four
        para = pdf.Root.StructTreeRoot.K.K[1]
        assert "/Y" not in para
        # the attribute keeps its plain values only
        assert str(para.A.O) == "/Layout" and list(para.A.BBox) == [0, 0, 10, 10]
        assert "/Evil" not in para.A and "/Act" not in para.A
        assert dict(pdf.Root.StructTreeRoot.ClassMap.Bad) == {"/O": Name.Layout}
    assert _struct_text(out) == _struct_text(src)


def _wide_tree(path: Path, elements: int) -> Path:
    """Our tagged fixture with ``elements`` more (empty) paragraphs under its document."""
    structured_pdf(path)
    with pikepdf.open(path, allow_overwriting_input=True) as pdf:
        document = pdf.Root.StructTreeRoot.K
        for _ in range(elements):
            document.K.append(
                pdf.make_indirect(Dictionary(Type=Name.StructElem, S=Name.P, P=document))
            )
        pdf.save(path)
    return path


def test_the_tree_is_counted_with_bounded_work(tmp_path: Path) -> None:
    with pikepdf.open(structured_pdf(tmp_path / "report.pdf")) as pdf:
        # the document, its ten elements, their ten MCIDs and the two links' OBJRs
        assert tree_size(pdf) == 23
    with pikepdf.open(_wide_tree(tmp_path / "wide.pdf", 2000)) as pdf:
        assert tree_size(pdf) == 23 + 2000
        # past the cap the count gives up: the nodes it visited are the cap and one
        assert tree_size(pdf, cap=50) == 51


def test_a_tree_past_the_cap_is_dropped_and_the_job_delivered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _wide_tree(tmp_path / "wide.pdf", 30)
    monkeypatch.setattr(structure, "MAX_ELEMENTS", 50)
    with pikepdf.open(src) as pdf:
        assert tree_size(pdf) == 51
        assert read_carriers(pdf).tagged is False
    out = _plain_job(src, tmp_path / "out.pdf")
    with pikepdf.open(out) as pdf:
        assert len(pdf.pages) == 5
        assert "/StructTreeRoot" not in pdf.Root and "/MarkInfo" not in pdf.Root
        assert b"/Artifact" not in pdf.pages[0].obj.Contents.read_bytes()
        # what else it carries stays
        assert str(pdf.Root.Lang) == "en-GB"
    monkeypatch.setattr(structure, "MAX_ELEMENTS", 53)
    with pikepdf.open(src) as pdf:
        assert read_carriers(pdf).tagged is True


@pytest.mark.parametrize(
    ("lang", "kept"),
    [
        ("en-GB", "en-GB"),
        ("x-klingon", "x-klingon"),
        ("Margaret Thornbury", None),
        ("en-GB; call 555", None),
        ("", None),
    ],
)
def test_only_a_language_tag_is_kept_as_lang(tmp_path: Path, lang: str, kept: str | None) -> None:
    src = structured_pdf(tmp_path / "report.pdf")
    with pikepdf.open(src, allow_overwriting_input=True) as pdf:
        pdf.Root.Lang = String(lang)
        pdf.save(src)
    with pikepdf.open(src) as pdf:
        assert read_carriers(pdf).lang == kept  # what a redaction's carriers start from too
    out = _plain_job(src, tmp_path / "out.pdf")
    with pikepdf.open(out) as pdf:
        found = pdf.Root.get("/Lang")
        assert (None if found is None else str(found)) == kept


def test_a_destination_name_with_escapes_is_written_decoded(tmp_path: Path) -> None:
    """A name made as /Chapter#201 (as a producer may write it) is "Chapter 1" in the output's
    named destinations and in the link that goes there, so #nameddest=Chapter 1 works."""
    src = structured_pdf(tmp_path / "report.pdf")
    with pikepdf.open(src, allow_overwriting_input=True) as pdf:
        page = pdf.pages[2].obj
        pdf.Root.Dests = Dictionary({"/Chapter#201": Array([page, Name.Fit])})
        link = pdf.pages[0].obj.Annots[1]
        del link["/Dest"]
        link.Dest = Name("/Chapter#201")
        pdf.save(src)
    with pikepdf.open(src) as pdf:
        carriers = read_carriers(pdf)
    assert "Chapter 1" in dict(carriers.dests)
    assert "Chapter 1" in [k.name for k in carriers.links]
    assert not any("#" in text for text in carriers.texts() if not text.startswith("http"))
    out = _plain_job(src, tmp_path / "out.pdf")
    with pikepdf.open(out) as pdf:
        names = dict(pikepdf.NameTree(pdf.Root.Names.Dests).items())
        assert "Chapter 1" in names
        assert names["Chapter 1"][0].objgen == pdf.pages[3].obj.objgen
        dests = [a.get("/Dest") for a in pdf.pages[1].obj.Annots]
        assert String("Chapter 1") in dests
