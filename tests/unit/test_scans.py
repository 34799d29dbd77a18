"""The scan corpus generator: deterministic, two disjoint halves, files that open as claimed."""

from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pikepdf
import pytest
from PIL import Image, ImageSequence, TiffImagePlugin

from tests.scans import BANKS, KINDS, KNOBS, Document, generate

HALVES = ("dev", "held-out")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Document]]:
    root = tmp_path_factory.mktemp("scans")
    return {half: generate(root / half, half) for half in HALVES}


def _sentences(text: str) -> set[str]:
    """Sentence-like runs of five words or more, whitespace collapsed."""
    flat = " ".join(text.split())
    return {s for s in re.split(r"(?<=[.!?])\s+", flat) if len(s.split()) >= 5}


def _image(page: pikepdf.Page) -> pikepdf.Stream:
    (image,) = page.get_images().values()  # a scan: one image per page
    assert isinstance(image, pikepdf.Stream)
    return image


def _frames(doc: Document) -> list[Image.Image]:
    if doc.path.suffix == ".pdf":
        with pikepdf.open(doc.path) as pdf:
            return [pikepdf.PdfImage(_image(page)).as_pil_image() for page in pdf.pages]
    with Image.open(doc.path) as im:
        return [frame.copy() for frame in ImageSequence.Iterator(im)]


def test_same_seed_same_files_whatever_else_is_made(
    corpus: dict[str, list[Document]], tmp_path: Path
) -> None:
    again = generate(tmp_path / "again", "held-out", kinds=["rotated"])
    (before,) = [d for d in corpus["held-out"] if d.pages[0].kind == "rotated"]
    assert again[0].path.suffix == ".pdf"  # so the PDF writer is deterministic too
    assert again[0].pages == before.pages
    assert again[0].path.read_bytes() == before.path.read_bytes()


def test_another_seed_other_pages(corpus: dict[str, list[Document]], tmp_path: Path) -> None:
    other = generate(tmp_path, "dev", kinds=["small"], seed=1)
    (before,) = [d for d in corpus["dev"] if d.pages[0].kind == "small"]
    assert other[0].pages[0].truth != before.pages[0].truth


@pytest.mark.parametrize("half", HALVES)
def test_each_half_has_every_kind_and_the_expected_pages(
    corpus: dict[str, list[Document]], half: str
) -> None:
    docs = corpus[half]
    pages = [p for d in docs for p in d.pages]
    assert {p.kind for p in pages} == set(KINDS)
    assert {p.half for p in pages} == {half}
    assert len(pages) == 10  # one of each kind, the fax kind being two 2-page documents
    assert len({p.name for p in pages}) == len(pages)
    assert all(p.name.startswith(f"{half}-{p.kind}-") for p in pages)
    suffixes = {d.path.suffix for d in docs}
    assert {".pdf", ".tif", ".png", ".jpg"} <= suffixes
    for page in pages:
        lines = page.truth.split("\n")
        assert len(lines) >= 8 and all(line.strip() for line in lines), page.name


@pytest.mark.parametrize("half", HALVES)
def test_files_open_with_one_frame_per_page(corpus: dict[str, list[Document]], half: str) -> None:
    for doc in corpus[half]:
        frames = _frames(doc)
        assert len(frames) == len(doc.pages), doc.path.name
        for frame, page in zip(frames, doc.pages, strict=True):
            grey = np.asarray(frame.convert("L"))[::3, ::3]  # a sample is plenty
            if page.kind == "photo":  # the page, not the desk around it
                h, w = grey.shape
                grey = grey[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4]
            ink = grey < np.median(grey) - 30
            assert 0.002 < ink.mean() < 0.3, page.name  # darker text on a lighter page
            if page.kind == "photo":
                assert frame.mode == "RGB" and frame.width * frame.height <= 12_000_000
            elif page.kind == "fax":
                assert frame.mode == "1"
            else:
                assert frame.mode == "L"


@pytest.mark.parametrize("half", HALVES)
def test_fax_is_two_pages_of_g4_with_a_header_line(
    corpus: dict[str, list[Document]], half: str
) -> None:
    faxes = [d for d in corpus[half] if d.pages[0].kind == "fax"]
    assert sorted(d.path.suffix for d in faxes) == [".pdf", ".tif"]
    resolutions = set()
    for doc in faxes:
        assert len(doc.pages) == 2
        for n, page in enumerate(doc.pages, start=1):
            header = page.truth.split("\n")[0]  # the receiving machine's line comes first
            assert "FROM:" in header and f"PAGE {n}" in header, header
        dpi = doc.pages[0].params["dpi"]
        resolutions.add(tuple(dpi))
        if doc.path.suffix == ".tif":
            with Image.open(doc.path) as tif:
                assert isinstance(tif, TiffImagePlugin.TiffImageFile)
                assert tif.n_frames == 2
                assert tif.info["compression"] == "group4"
                assert tif.tag_v2[262] == 0  # WhiteIsZero, as fax servers write
                assert tuple(round(v) for v in tif.info["dpi"]) == tuple(dpi)
        else:
            with pikepdf.open(doc.path) as pdf:
                first = pdf.pages[0]
                assert _image(first).Filter == pikepdf.Name.CCITTFaxDecode
                box = [float(v) for v in first.mediabox]
                # the page is letter-sized whatever the pixels' aspect
                assert box[2] == pytest.approx(612, abs=1) and box[3] == pytest.approx(792, abs=1)
    assert (204, 196) in resolutions  # non-square pixels, in each half


def test_kind_parameters_stay_in_their_ranges(corpus: dict[str, list[Document]]) -> None:
    pages = [p for half in HALVES for d in corpus[half] for p in d.pages]
    by_kind = {p.kind: [q for q in pages if q.kind == p.kind] for p in pages}
    for page in by_kind["skewed"]:
        assert 0.5 <= abs(page.params["skew"]) <= 3.0 and page.params["rotate"] == 0
    assert {p.params["skew"] > 0 for p in by_kind["skewed"]} == {True, False}
    assert all(p.params["rotate"] in (90, 180, 270) for p in by_kind["rotated"])
    # each half cycles through all three turns, from a different start
    assert {p.params["rotate"] for p in by_kind["rotated"]} == {90, 270}
    assert all(sorted(KNOBS[h].rotations) == [90, 180, 270] for h in HALVES)
    assert all(p.params["size_pt"] <= 8.0 for p in by_kind["small"])
    assert {p.params["layout"] for p in by_kind["mixed"]} == {"two-columns", "table"}
    for page in by_kind["photo"]:
        assert len(page.params["quad"]) == 4


def test_held_out_shares_no_sentence_with_dev(corpus: dict[str, list[Document]]) -> None:
    dev, held = (BANKS[h].sentences for h in HALVES)
    assert len(set(dev)) >= 40 and len(set(held)) >= 40
    assert not set(dev) & set(held)
    seen = {
        half: set().union(*(_sentences(p.truth) for d in corpus[half] for p in d.pages))
        for half in HALVES
    }
    assert len(seen["dev"]) >= 40 and len(seen["held-out"]) >= 40
    assert not seen["dev"] & seen["held-out"]


@pytest.mark.parametrize("half", HALVES)
def test_every_template_fills(half: str) -> None:
    bank, rng = BANKS[half], random.Random(1)
    for template in bank.sentences:
        text = bank.fill(template, rng)
        assert "{" not in text and "}" not in text and text.endswith((".", '"')), template
