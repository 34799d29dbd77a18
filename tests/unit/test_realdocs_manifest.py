"""The real-document manifest (``bench/real_docs.py``) and what ``bench/real_docs_plain.py`` reads
back from a delivered output.

The manifest is the benchmark's ground: each entry must name one file exactly (repository,
commit, path, SHA-256), the halves must never move (a tuned rule read on the held-out half would
make its figures worthless), and copies of one page must share a half. ``materialise`` is tried
on a mirror made here (a bare git repository holding a PDF we make), so it is tested without the
network or the real mirrors; where a mirror of OCRmyPDF is present, one of its documents is
copied out too. The plain bench's reading of titles, outlines, links, ``/Lang`` and page sizes
is tried on PDFs made here with pikepdf.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from io import BytesIO
from pathlib import Path

import pikepdf
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import real_docs  # noqa: E402
from bench.real_docs import DOCS, LICENCES, Doc, Missing, half_of, materialise_one  # noqa: E402
from bench.real_docs_plain import features, inspect, same_sizes  # noqa: E402


def test_every_entry_names_one_file_exactly() -> None:
    assert len(DOCS) >= 100
    for d in DOCS:
        assert d.repo in LICENCES, d.repo
        assert re.fullmatch(r"[0-9a-f]{40}", d.commit), d.path
        assert re.fullmatch(r"[0-9a-f]{64}", d.sha256), d.path
        assert d.path.lower().endswith(".pdf") and not d.path.startswith("/"), d.path
        assert d.kind, d.path
    assert len({d.sha256 for d in DOCS}) == len(DOCS), "a document listed twice"
    assert len({d.name for d in DOCS}) == len(DOCS), "two cache names meet"
    assert len({(d.repo, d.path) for d in DOCS}) == len(DOCS)


def test_the_halves_never_move() -> None:
    """Pinned: adding documents or changing code must not move one (the split is by hash)."""
    assert half_of("group:linn") == "held-out"
    assert half_of("group:graph") == "held-out"
    halves = {d.path.rsplit("/", 1)[-1]: d.half for d in DOCS if d.repo == "ocrmypdf/OCRmyPDF"}
    assert halves["linn.pdf"] == halves["skew.pdf"] == halves["poster.pdf"] == "held-out"
    assert halves["c02-22.pdf"] == half_of(
        "ae6a3bec3809e1540911bda42dabb42ffbd63cfda17e74a5c3e9dcd87129462a"
    )
    counts = {h: sum(1 for d in DOCS if d.half == h) for h in real_docs.HALVES}
    assert min(counts.values()) >= 0.3 * len(DOCS), counts


def test_copies_of_a_page_share_a_half() -> None:
    groups: dict[str, set[str]] = {}
    for d in DOCS:
        if d.group:
            groups.setdefault(d.group, set()).add(d.half)
    assert groups, "the manifest has no groups"
    assert all(len(h) == 1 for h in groups.values()), groups


def _pdf(title: str = "") -> bytes:
    pdf = pikepdf.new()
    pdf.add_blank_page(page_size=(200, 300))
    if title:
        pdf.docinfo["/Title"] = title
    buf = BytesIO()
    pdf.save(buf)
    return buf.getvalue()


def _mirror(tmp_path: Path, files: dict[str, bytes]) -> tuple[Path, str]:
    """A bare repository under ``tmp_path/mirrors/me+docs/repo`` holding ``files``; its commit."""
    work = tmp_path / "work"
    work.mkdir()
    for name, data in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_bytes(data)
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "docs"], check=True)
    commit = subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    bare = tmp_path / "mirrors" / "me+docs" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return tmp_path / "mirrors", commit


def test_materialise_copies_checks_and_refuses(tmp_path: Path) -> None:
    data = _pdf("A report")
    mirrors, commit = _mirror(tmp_path, {"tests/a.pdf": data})
    sha = hashlib.sha256(data).hexdigest()
    cache = tmp_path / "cache"
    doc = Doc("me/docs", commit, "tests/a.pdf", sha, "report")
    got = materialise_one(doc, cache, mirrors)
    assert got == cache / f"{sha[:16]}.pdf" and got.read_bytes() == data
    with pytest.raises(Missing, match="SHA-256"):
        materialise_one(Doc("me/docs", commit, "tests/a.pdf", "0" * 64, "report"), cache, mirrors)
    with pytest.raises(Missing, match="not in the mirror"):
        materialise_one(Doc("me/docs", commit, "tests/b.pdf", "1" * 64, "report"), cache, mirrors)
    with pytest.raises(Missing, match="no mirror"):
        materialise_one(Doc("you/docs", commit, "tests/a.pdf", "2" * 64, "report"), cache, mirrors)


def test_materialise_from_the_real_mirror(tmp_path: Path) -> None:
    """Where a mirror of OCRmyPDF is here, its documents come out with the manifest's hashes."""
    ours = [d for d in DOCS if d.repo == "ocrmypdf/OCRmyPDF" and d.path.endswith("/tagged.pdf")]
    if not (ours[0].mirror() / "objects").is_dir():
        pytest.skip("no local mirror of OCRmyPDF (the search tool's fetch brings one)")
    got = materialise_one(ours[0], tmp_path)
    assert hashlib.sha256(got.read_bytes()).hexdigest() == ours[0].sha256


def test_features_read_what_an_archive_keeps(tmp_path: Path) -> None:
    pdf = pikepdf.new()
    for _ in range(2):
        pdf.add_blank_page(page_size=(200, 300))
    pdf.pages[1].obj.Rotate = 90
    pdf.docinfo["/Title"] = "Annual report"
    pdf.Root.Lang = pikepdf.String("en-GB")
    with pdf.open_outline() as ol:
        top = pikepdf.OutlineItem("Part one", 0)
        top.children.append(pikepdf.OutlineItem("Section", 1))
        ol.root.append(top)
    link = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Annot,
            Subtype=pikepdf.Name.Link,
            Rect=[0, 0, 10, 10],
            A=pikepdf.Dictionary(S=pikepdf.Name.URI, URI=pikepdf.String("https://example.org")),
        )
    )
    pdf.pages[0].obj.Annots = pikepdf.Array([link])
    src = tmp_path / "src.pdf"
    pdf.save(src)
    found, sizes = features(src)
    assert found == {
        "title": "Annual report",
        "outlines": 2,
        "links": 1,
        "lang": "en-GB",
        "struct": False,
        "labels": (),
    }
    assert sizes == [(200, 300), (300, 200)]  # as displayed: the turned page's sides swap

    bare = tmp_path / "bare.pdf"
    bare.write_bytes(_pdf())
    found, sizes = features(bare)
    assert found["title"] == "" and found["outlines"] == 0 and found["links"] == 0
    assert not found["lang"]


def test_same_sizes_within_a_point_and_turned_apart() -> None:
    a = [(612.0, 792.0), (595.0, 842.0)]
    assert same_sizes(a, [(612.4, 791.6), (595.0, 842.0)], turned=False)
    assert not same_sizes(a, [(612.0, 792.0)], turned=True)  # a page lost
    turned = [(612.0, 792.0), (842.0, 595.0)]
    assert not same_sizes(a, turned, turned=False)
    assert same_sizes(a, turned, turned=True)
    assert not same_sizes(a, [(612.0, 792.0), (600.0, 842.0)], turned=True)


def test_inspect_says_what_the_output_lost(tmp_path: Path) -> None:
    """Source: a title, /Lang, an outline, page labels; output: the pages alone, titled
    'Document' (what a plain job made before issue 43's item 1)."""
    pdf = pikepdf.new()
    for _ in range(3):
        pdf.add_blank_page(page_size=(200, 300))
    pdf.docinfo["/Title"] = "Minutes"
    pdf.Root.Lang = pikepdf.String("fr")
    pdf.Root.PageLabels = pikepdf.Dictionary(
        Nums=pikepdf.Array([0, pikepdf.Dictionary(S=pikepdf.Name.r)])
    )
    with pdf.open_outline() as ol:
        ol.root.append(pikepdf.OutlineItem("Ordre du jour", 0))
    src = tmp_path / "src.pdf"
    pdf.save(src)
    out = pikepdf.new()
    for _ in range(3):
        out.add_blank_page(page_size=(200, 300))
    out.docinfo["/Title"] = "Document"
    out.Root.PageLabels = pikepdf.Dictionary(
        Nums=pikepdf.Array([0, pikepdf.Dictionary(S=pikepdf.Name.D)])
    )
    dst = tmp_path / "out.pdf"
    out.save(dst)
    checks = inspect(src, dst)
    assert checks["qpdf_ok"] and checks["pages_equal"] and checks["sizes_equal"]
    assert checks["source_has"] == ["title", "outlines", "lang", "labels"]
    assert checks["output_kept"] == []  # labels 1, 2, 3 are not i, ii, iii
    assert checks["output_title"] == "Document"
    assert inspect(src, src)["output_kept"] == ["title", "outlines", "lang", "labels"]
