"""A plain job keeps what the source carries besides its pages (issue 43, item 1): outlines,
named destinations, links, /Lang, the title and other information, page labels. Read back
with pikepdf and with readers of their own (poppler's ``pdfinfo``, MuPDF's ``mutool``), on a
document made here and on OCRmyPDF's ``tagged.pdf`` and ``toc.pdf`` where a mirror is at
hand. Links land on the same words, targets on the same headings, with a cover and bands
too; a split document (``-j 2``) is the same bytes as a whole one."""

from __future__ import annotations

import itertools
import subprocess
from pathlib import Path

import pikepdf
import pytest
from pikepdf import Array, Dictionary, Name, String

from pressroom.engines import pdfium
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.plain import process_document
from pressroom.templates import resolve_template
from pressroom.testing import FakeOcrEngine
from tests.e2e.test_cli import run_cli
from tests.e2e.test_detect_brochure import ocrmypdf_mirror
from tests.helpers import delivered

TITLE = "Harbour Lane annual report"
W, H = 612.0, 792.0
HEADING_Y = 700.0  # each page's heading baseline
URI = "https://example.org/annual-report"


def _page(
    pdf: pikepdf.Pdf, font: pikepdf.Object, number: int, secret: str | None = None
) -> pikepdf.Page:
    """A page of real text, each block marked content with an MCID (a tagged document's)."""
    lines = [
        f"/H1 <</MCID 0>> BDC BT /F1 18 Tf 72 {HEADING_Y:.0f} Td (Heading {number}) Tj ET EMC",
        "/P <</MCID 1>> BDC BT /F1 12 Tf 72 650 Td "
        f"(Page {number} of the report carries enough plain words to be kept.) Tj ET EMC",
    ]
    if number == 2 and secret:
        lines.append(f"BT /F1 12 Tf 72 620 Td (Prepared by {secret} for the board.) Tj ET")
    if number == 1:
        lines += [
            "/P <</MCID 2>> BDC BT /F1 12 Tf 72 600 Td (Visit example dot org) Tj ET EMC",
            "/P <</MCID 3>> BDC BT /F1 12 Tf 72 560 Td (Read chapter two) Tj ET EMC",
        ]
    return pikepdf.Page(
        Dictionary(
            Type=Name.Page,
            MediaBox=Array([0, 0, W, H]),
            Resources=Dictionary(Font=Dictionary(F1=font)),
            Contents=pdf.make_stream("\n".join(lines).encode()),
            StructParents=number - 1,
        )
    )


def structured_pdf(path: Path, *, secret: str | None = None, own_fonts: bool = False) -> Path:
    """Four pages labelled i, ii, 1, 2; nested outlines (one through a named destination,
    one through a GoTo action); a URI link and an internal link on page one; /Lang; a title,
    an author; a small structure tree over the pages' marked content. ``secret``: a name
    planted in an outline title, the URI and the title (for a redaction). ``own_fonts``:
    each page a font object of its own (pages cut into ranges that share a font write it
    once a range: not the same bytes as a whole document, whatever it carries)."""
    pdf = pikepdf.Pdf.new()
    font = pdf.make_indirect(
        Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica)
    )
    for number in range(1, 5):
        if own_fonts:
            font = pdf.make_indirect(
                Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica)
            )
        pdf.pages.append(_page(pdf, font, number, secret))
    pages = [p.obj for p in pdf.pages]
    pdf.Root.Lang = String("en-GB")
    pdf.Root.PageLabels = Dictionary(
        Nums=Array([0, Dictionary(S=Name("/r")), 2, Dictionary(S=Name.D)])
    )
    chap1 = Array([pages[2], Name.XYZ, 72, HEADING_Y + 20, 0])
    names = pikepdf.NameTree.new(pdf)
    names["chap1"] = chap1
    pdf.Root.Names = Dictionary(Dests=names.obj)
    uri = URI if secret is None else f"{URI}?for={secret.replace(' ', '+')}"
    link_uri = pdf.make_indirect(
        Dictionary(
            Type=Name.Annot,
            Subtype=Name.Link,
            Rect=Array([70, 595, 210, 614]),
            A=Dictionary(S=Name.URI, URI=String(uri)),
            StructParent=10,
        )
    )
    link_goto = pdf.make_indirect(
        Dictionary(
            Type=Name.Annot,
            Subtype=Name.Link,
            Rect=Array([70, 555, 200, 574]),
            Dest=Array([pages[3], Name.XYZ, 72, HEADING_Y + 20, 0]),
            StructParent=11,
        )
    )
    pages[0].Annots = Array([link_uri, link_goto])

    def item(title: str, **kw: object) -> Dictionary:
        return pdf.make_indirect(Dictionary(Title=String(title), **kw))

    front = item("Front matter", Dest=Array([pages[0], Name.Fit]))
    preface = item("Preface", Dest=Array([pages[1], Name.XYZ, 72, HEADING_Y + 20, 0]))
    chapter1 = item("Chapter one", Dest=String("chap1"))
    section = item("Section 1.1", Dest=Array([pages[2], Name.FitH, 670]))
    chapter2 = item(
        f"Chapter two, by {secret}" if secret else "Chapter two",
        A=Dictionary(S=Name.GoTo, D=Array([pages[3], Name.XYZ, 72, HEADING_Y + 20, 0])),
    )
    root = pdf.make_indirect(Dictionary(Type=Name.Outlines))
    for parent, kids in (
        (root, [front, chapter1, chapter2]),
        (front, [preface]),
        (chapter1, [section]),
    ):
        for a, b in itertools.pairwise(kids):
            a.Next, b.Prev = b, a
        for kid in kids:
            kid.Parent = parent
        parent.First, parent.Last = kids[0], kids[-1]
    front.Count = 1
    chapter1.Count = -1
    root.Count = 4
    pdf.Root.Outlines = root
    _struct_tree(pdf, pages, [link_uri, link_goto])
    pdf.docinfo.Title = f"{TITLE} for {secret}" if secret else TITLE
    pdf.docinfo.Author = "Harbour Lane Services"
    pdf.save(path)
    return path


def _struct_tree(
    pdf: pikepdf.Pdf, pages: list[pikepdf.Object], links: list[pikepdf.Object]
) -> None:
    root = pdf.make_indirect(Dictionary(Type=Name.StructTreeRoot))
    document = pdf.make_indirect(Dictionary(Type=Name.StructElem, S=Name.Document, P=root))
    kids = []
    parents: list[object] = []
    for index, page in enumerate(pages):
        elems = []
        for mcid, tag in enumerate(
            ["/H1", "/P", "/Link", "/Link"] if index == 0 else ["/H1", "/P"]
        ):
            elem = pdf.make_indirect(
                Dictionary(Type=Name.StructElem, S=Name(tag), P=document, Pg=page, K=mcid)
            )
            if tag == "/H1":
                elem.Alt = String(f"Heading {index + 1}")
            elems.append(elem)
        if index == 0:
            for elem, link in zip(elems[2:], links, strict=True):
                elem.K = Array([elem.K, Dictionary(Type=Name.OBJR, Obj=link, Pg=page)])
        kids += elems
        parents += [index, Array(elems)]
    parents += [10, kids[2], 11, kids[3]]
    document.K = Array(kids)
    root.K = document
    root.ParentTree = pdf.make_indirect(Dictionary(Nums=Array(parents)))
    root.ParentTreeNextKey = 12
    pdf.Root.StructTreeRoot = root
    pdf.Root.MarkInfo = Dictionary(Marked=True)


def _outline(pdf: pikepdf.Pdf) -> list[tuple[int, str, int | None]]:
    """(depth, title, output page from 0) of every outline item, in order."""
    found: list[tuple[int, str, int | None]] = []
    pages = {p.obj.objgen: i for i, p in enumerate(pdf.pages)}
    with pdf.open_outline() as outline:

        def walk(items: list[pikepdf.OutlineItem], depth: int) -> None:
            for it in items:
                dest = it.destination
                if it.action is not None:
                    dest = it.action.get("/D")
                if isinstance(dest, String):
                    dest = pikepdf.NameTree(pdf.Root.Names.Dests)[str(dest)]
                page = pages.get(dest[0].objgen) if isinstance(dest, Array) else None
                found.append((depth, it.title, page))
                walk(it.children, depth + 1)

        walk(outline.root, 0)
    return found


SOURCE_OUTLINE = [
    (0, "Front matter", 0),
    (1, "Preface", 1),
    (0, "Chapter one", 2),
    (1, "Section 1.1", 2),
    (0, "Chapter two", 3),
]


def _tool(*args: str) -> str:
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


def test_a_plain_job_keeps_outlines_destinations_title_language_and_labels(tmp_path: Path) -> None:
    src = structured_pdf(tmp_path / "report.pdf")
    out = tmp_path / "out"
    done = run_cli("process", str(src), "-o", str(out), scratch=tmp_path)
    assert done.returncode == 0, done.stderr
    result = out / "report.pdf"
    with pikepdf.open(src) as source:
        assert _outline(source) == SOURCE_OUTLINE
    with pikepdf.open(result) as pdf:
        assert _outline(pdf) == SOURCE_OUTLINE
        assert str(pdf.Root.Lang) == "en-GB"
        assert str(pdf.docinfo.Title) == TITLE
        assert str(pdf.docinfo.Author) == "Harbour Lane Services"
        assert [p.label for p in pdf.pages] == ["i", "ii", "1", "2"]
        with pdf.open_metadata() as meta:
            assert meta["dc:title"] == TITLE
    info = _tool("pdfinfo", str(result))
    assert f"Title:           {TITLE}" in info
    assert "Author:          Harbour Lane Services" in info
    dests = _tool("pdfinfo", "-dests", str(result))
    assert any(line.split()[:1] == ["3"] and '"chap1"' in line for line in dests.splitlines())
    outline = _tool("mutool", "show", str(result), "outline")
    assert '"Section 1.1"\t#page=3' in outline
    assert '"Chapter two"\t#page=4' in outline


def _text_in(path: Path, page: int, rect: tuple[float, float, float, float] | None) -> str:
    with pdfium.open_pdf(path) as doc:
        return pdfium.page_text(doc, page, rect)


@pytest.mark.parametrize("template", ["plain", "sample"])
def test_links_and_targets_land_on_the_same_words_with_a_cover_and_bands(
    tmp_path: Path, template: str
) -> None:
    """The pipeline itself (no flattening before it): the URI link's area still covers
    "Visit example dot org", the internal link's and the outline's targets sit just above
    their headings; with the sample template the pages are scaled under its bands and a
    cover comes first, with an outline entry and a label of its own."""
    src = structured_pdf(tmp_path / "report.pdf")
    out = tmp_path / "out.pdf"
    options = JobOptions(template=resolve_template(template))
    delivered(process_document(src, out, options, FakeOcrEngine(lines=["never read"])))
    cover = 1 if template == "sample" else 0
    with pikepdf.open(out) as pdf:
        outline = _outline(pdf)
        if cover:
            assert outline[0] == (0, "Cover", 0)
            assert [p.label for p in pdf.pages] == ["Cover", "i", "ii", "1", "2"]
        assert outline[cover:] == [(d, t, p + cover) for d, t, p in SOURCE_OUTLINE]
        annots = list(pdf.pages[cover].obj.Annots)
        assert [a.Subtype for a in annots] == [Name.Link, Name.Link]
        assert all(a.F == 4 for a in annots)
        assert str(annots[0].A.URI) == URI
        rect_uri = tuple(float(v) for v in annots[0].Rect)
        dest = annots[1].Dest
        assert dest[0].objgen == pdf.pages[3 + cover].obj.objgen
        top = float(dest[3])
        width = float(pdf.pages[3 + cover].mediabox[2])
        rect_goto = tuple(float(v) for v in annots[1].Rect)
    assert "Visit example dot org" in _text_in(out, cover, rect_uri)
    assert "Read chapter two" in _text_in(out, cover, rect_goto)
    # the target's top is just above the heading on its page: the heading is the first
    # thing below it
    assert "Heading 4" in _text_in(out, 3 + cover, (0, top - 40, width, top))
    assert "Heading" not in _text_in(out, 3 + cover, (0, top, width, top + 60))
    # an independent reader finds the link where the viewer looks for it
    assert URI in _tool("mutool", "show", str(out), f"pages/{cover + 1}/Annots/1/A/URI")


def test_a_split_document_keeps_them_and_is_the_same_bytes(tmp_path: Path) -> None:
    src = structured_pdf(tmp_path / "report.pdf", own_fonts=True)
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
        assert _outline(pdf)[1:] == [(d, t, p + 1) for d, t, p in SOURCE_OUTLINE]
        assert [p.label for p in pdf.pages] == ["Cover", "i", "ii", "1", "2"]
        assert str(pdf.docinfo.Title) == TITLE
        # the cover and the bands show the source's title, not the template's default
    assert TITLE in _text_in(outs[1], 0, None)


def _mirror_file(name: str, dest: Path) -> Path | None:
    git_dir = ocrmypdf_mirror()
    if git_dir is None:
        return None
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"HEAD:tests/resources/{name}"],
        capture_output=True,
        timeout=60,
    )
    if done.returncode != 0:
        return None
    dest.write_bytes(done.stdout)
    return dest


@pytest.mark.parametrize("name", ["tagged.pdf", "toc.pdf"])
def test_ocrmypdfs_files_keep_their_outlines_title_and_language(tmp_path: Path, name: str) -> None:
    src = _mirror_file(name, tmp_path / name)
    if src is None:
        pytest.skip("no local mirror of OCRmyPDF")
    out = tmp_path / "out"
    done = run_cli("process", str(src), "-o", str(out), scratch=tmp_path)
    assert done.returncode == 0, done.stderr
    result = out / name
    with pikepdf.open(src) as source, pikepdf.open(result) as pdf:
        assert _outline(pdf) == _outline(source)
        assert pdf.Root.get("/Lang") == source.Root.get("/Lang")
        # the source's title, or the template's default where it has none (toc.pdf)
        assert pdf.docinfo.Title == source.docinfo.get("/Title", "Document")
    ours = _tool("mutool", "show", str(result), "outline")
    theirs = _tool("mutool", "show", str(src), "outline")
    # the same titles to the same pages (the views' numbers are the placed page's)
    assert [line.split("#")[0] for line in ours.splitlines()] == [
        line.split("#")[0] for line in theirs.splitlines()
    ]
    assert [line.split("#page=")[1].split("&")[0] for line in ours.splitlines()] == [
        line.split("#page=")[1].split("&")[0] for line in theirs.splitlines()
    ]
    if name == "tagged.pdf":
        assert "Title:           Tagged PDF Demo" in _tool("pdfinfo", str(result))


def _struct_text(path: Path) -> list[str]:
    """The structure tree as poppler reads it, with the text of each element's marked
    content; attributes left out (their order is the writer's) and object references too
    (an OBJR names the link annotation by its object number)."""
    out = _tool("pdfinfo", "-struct-text", str(path))
    return [
        line
        for line in out.splitlines()
        if not line.strip().startswith("/") and not line.strip().startswith("Object ")
    ]


def test_the_structure_tree_still_reaches_the_text_and_the_links(tmp_path: Path) -> None:
    """The tree's elements keep their marked content (read through the page's form), the
    links their object references to the new annotations; what Pressroom adds is an
    artifact."""
    src = structured_pdf(tmp_path / "report.pdf")
    out = tmp_path / "out.pdf"
    options = JobOptions(template=resolve_template("sample"))
    delivered(process_document(src, out, options, FakeOcrEngine(lines=["never read"])))
    ours, theirs = _struct_text(out), _struct_text(src)
    assert ours == theirs
    assert '"Heading 3"' in "\n".join(ours)
    with pikepdf.open(out) as pdf:
        assert pdf.Root.MarkInfo.Marked is True
        root = pdf.Root.StructTreeRoot
        document = root.K
        link_elem = document.K[2]
        assert str(link_elem.S) == "/Link"
        mcr, objr = link_elem.K
        page = pdf.pages[1].obj  # after the cover
        assert mcr.Type == Name.MCR and mcr.Pg.objgen == page.objgen
        assert mcr.Stm.objgen == page.Resources.XObject.Src.objgen
        assert page.Resources.XObject.Src.StructParents == 0
        assert objr.Obj.objgen == page.Annots[0].objgen
        assert page.Annots[0].StructParent == 10
        assert pikepdf.NumberTree(root.ParentTree)[10].objgen == link_elem.objgen
        assert b"/Artifact BMC" in page.Contents.read_bytes()
        assert b"/Artifact BMC" in pdf.pages[0].obj.Contents.read_bytes()  # the cover


def test_a_tagged_document_through_the_cli_keeps_its_tree(tmp_path: Path) -> None:
    src = structured_pdf(tmp_path / "report.pdf")
    out = tmp_path / "out"
    done = run_cli("process", str(src), "-o", str(out), scratch=tmp_path)
    assert done.returncode == 0, done.stderr
    assert _struct_text(out / "report.pdf") == _struct_text(src)
    assert "Tagged:          yes" in _tool("pdfinfo", str(out / "report.pdf"))


def test_ocrmypdfs_tagged_pdf_keeps_its_structure_tree(tmp_path: Path) -> None:
    src = _mirror_file("tagged.pdf", tmp_path / "tagged.pdf")
    if src is None:
        pytest.skip("no local mirror of OCRmyPDF")
    out = tmp_path / "out"
    done = run_cli("process", str(src), "-o", str(out), scratch=tmp_path)
    assert done.returncode == 0, done.stderr
    ours = _struct_text(out / "tagged.pdf")
    assert ours == _struct_text(src)
    assert '"Document text."' in "\n".join(ours)


def test_links_survive_the_cli(tmp_path: Path) -> None:
    src = structured_pdf(tmp_path / "report.pdf")
    out = tmp_path / "out"
    done = run_cli("process", str(src), "-o", str(out), scratch=tmp_path)
    assert done.returncode == 0, done.stderr
    assert URI in _tool("mutool", "show", str(out / "report.pdf"), "pages/1/Annots/1/A/URI")
    assert "Object " in _tool("pdfinfo", "-struct", str(out / "report.pdf"))  # the OBJRs


def test_a_pdfa_output_keeps_the_tree_links_and_outlines_and_passes(tmp_path: Path) -> None:
    from pressroom.pipeline.archive import pdfa_problems

    src = structured_pdf(tmp_path / "report.pdf")
    out = tmp_path / "out.pdf"
    options = JobOptions(template=resolve_template("sample"), output_type="pdfa")
    delivered(process_document(src, out, options, FakeOcrEngine(lines=["never read"])))
    assert pdfa_problems(out) == []
    assert _struct_text(out) == _struct_text(src)
    with pikepdf.open(out) as pdf:
        assert _outline(pdf)[1:] == [(d, t, p + 1) for d, t, p in SOURCE_OUTLINE]
        assert len(pdf.pages[1].obj.Annots) == 2
