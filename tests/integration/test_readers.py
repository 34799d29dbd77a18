"""The seven-reader harness itself: every reader installed, and each reads known text back.

A missing reader fails here rather than skips: `make test` installs them all (`make readers`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pressroom.synth import text_pdf
from tests.readers import READERS, ReaderError, _run, cer, missing, read_all, read_pages

pytestmark = pytest.mark.integration

PAGES = (
    (
        "Participant waiver and release of liability for the summer sailing programme.",
        "Reference 2026-0417 was approved by the finance office on 12 March 2026.",
        "Total amount due: 1,250.00 payable by bank transfer or cheque.",
    ),
    (
        "Medical conditions, allergies and medication must be listed on page two.",
        "Signed copies are stored securely and destroyed after seven years.",
    ),
)


@pytest.fixture(scope="module")
def two_pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return text_pdf(PAGES, tmp_path_factory.mktemp("readers") / "two-pages.pdf")


def test_every_reader_is_installed() -> None:
    assert missing() == [], "readers missing; run `make readers`:\n" + "\n".join(missing())


@pytest.mark.parametrize("reader", READERS)
def test_reader_reads_each_page(two_pages: Path, reader: str) -> None:
    pages = read_pages(two_pages, reader)
    assert len(pages) == 2, f"{reader}: {len(pages)} pages"
    for n, (want, got) in enumerate(zip(PAGES, pages, strict=True), start=1):
        rate = cer("\n".join(want), got)
        assert rate < 0.01, f"{reader} page {n}: CER {rate:.1%}, read {got!r}"


def test_page_limit_and_blank_cover_agree_across_readers(tmp_path: Path) -> None:
    pdf = text_pdf([(), *PAGES], tmp_path / "cover.pdf")  # an empty cover page first
    pages = read_all(pdf, pages=2)
    assert list(pages) == list(READERS)
    for reader, got in pages.items():
        assert len(got) == 2, f"{reader}: {len(got)} pages"
        assert got[0].strip() == "", f"{reader} read text on the blank cover: {got[0]!r}"
        assert cer("\n".join(PAGES[0]), got[1]) < 0.01, f"{reader}: read {got[1]!r}"


def test_failure_and_timeout_are_errors_not_empty_text() -> None:
    with pytest.raises(ReaderError, match="exit status 1"):
        _run("poppler", ["pdftotext", "/nonexistent.pdf", "-"], timeout=10)
    with pytest.raises(ReaderError, match="timed out"):
        _run("poppler", ["sleep", "5"], timeout=0.2)
    with pytest.raises(ValueError, match="unknown reader"):
        read_pages(Path("any.pdf"), "acrobat")


def test_cer_collapses_whitespace() -> None:
    assert cer("a b\nc", "  a\tb   c\f") == 0.0
    assert cer("abcd", "abxd") == 0.25
    assert cer("", "") == 0.0
    assert cer("", "x") == 1.0
