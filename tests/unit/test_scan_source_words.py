"""The source's own words on a reworked page (``--ocr redo``/``force`` under redaction): which of
them the page lost, which stay on it for the build, and that they never become the output's
text (issue 40, item 2)."""

from __future__ import annotations

from pathlib import Path

from pressroom.models import Box, PageInfo, Word
from pressroom.redact.detect import Finding
from pressroom.redact.detect.detector import name_tokens
from pressroom.redact.detection import Hit
from pressroom.redact.scan import PageScan, _carried, _keep_source_words, _union


def word(text: str, x0: float, y0: float, line: int = 0) -> Word:
    box = Box(x0, y0, x0 + 20 * len(text), y0 + 40)
    return Word(text, 95.0, box, (box.x0, box.y1 - 8), box.width, 40.0, 0.0, line)


def scan(own: list[Word], lost: list[Word], ocr: list[Word], hits: list[Hit]) -> PageScan:
    info = PageInfo(0, 612.0, 792.0, 0, None, True, 100)
    page = PageScan(info, 0, 300.0, (2550, 3300), list(ocr), own + lost, [], list(hits))
    page.own = len(own)
    return page


def test_the_words_a_rework_took_out_are_those_not_carried_at_their_place() -> None:
    kept = [word("Visible", 100, 100), word("words", 260, 100)]
    source = [kept[0], word("Hidden", 100, 600), word("words", 261, 101), word("words", 900, 900)]
    assert _carried(source, kept) == [0, None, 1, None]
    assert _carried(source, []) == [None] * 4  # force: every word was taken out
    # each of the page's words stands for one of the source's: a repeated word is lost once
    twice = [word("Ann", 100, 100), word("Ann", 100, 100)]
    assert _carried(twice, twice[:1]) == [0, None]


def test_a_page_of_one_word_repeated_is_matched_in_linear_time() -> None:
    many = [word("Lee", 10 * (i % 200), 50 * (i // 200)) for i in range(12_000)]
    assert _carried(many, many) == list(range(12_000))


def test_the_sources_words_never_become_the_output_text() -> None:
    own = [word("Visible", 100, 100)]
    lost = [word("Jane", 100, 600, 1), word("Whitfield", 220, 600, 1)]
    page = scan(own, lost, own, [Hit(Finding("name", 0, 14, "Jane Whitfield", "t"), (1, 2))])
    assert page.seen_text == own
    page.visible = [own[0], lost[0]]  # as a build sees them
    assert page.seen_text == own
    forced = scan([], lost, [], [])
    assert forced.seen_text == []  # force: the output's text is OCR's


def test_lost_words_stay_only_where_they_matter() -> None:
    seen = [word("Account", 100, 600, 0), word("holder", 300, 600, 0)]
    # read by OCR where they stand, no finding among them: they go, the page is OCR's
    quiet = scan([], list(seen), list(seen), [])
    _keep_source_words(quiet, set(), frozenset())
    assert quiet.extracted == [] and quiet.own is None
    # a finding in them: they stay
    named = scan([], [*seen, word("Jane", 500, 600)], list(seen), [])
    named.hits_text = [Hit(Finding("name", 0, 4, "Jane", "t"), (2,))]
    _keep_source_words(named, set(), frozenset())
    assert len(named.extracted) == 3 and named.own == 0
    # a name found elsewhere in the document among them: they stay
    spread = scan(
        [], [*seen, word("Whitfield", 500, 600)], [*seen, word("Whitfield", 500, 600)], []
    )
    _keep_source_words(spread, {"Jane Whitfield"}, name_tokens(["Jane Whitfield"]))
    assert len(spread.extracted) == 3
    # a word OCR did not see where it stands (rotated, tiny, hidden): they stay
    unseen = scan([], [*seen, word("Stamped", 500, 900)], list(seen), [])
    _keep_source_words(unseen, set(), frozenset())
    assert len(unseen.extracted) == 3


def test_the_same_finding_from_both_readings_is_kept_once_and_believed() -> None:
    doubt = Hit(Finding("name", 0, 4, "Jane", "t", score=0.01), (0,))
    sure = Hit(Finding("name", 0, 4, "Jane", "t"), (0,))
    other = Hit(Finding("name", 0, 4, "Jane", "t"), (3,))
    assert _union([doubt], [sure, other]) == [sure, other]


def test_pdfium_failing_on_the_sources_page_is_corrupt_never_a_bug(tmp_path: Path) -> None:
    """The source's own text is read from the flattened source, which no inspection judged:
    a page PDFium will not load there is CORRUPT, as everywhere a page is read."""
    from contextlib import ExitStack

    import pypdfium2
    import pytest

    from pressroom.errors import Corrupt
    from pressroom.redact.source import OriginalText
    from pressroom.settings import Limits
    from pressroom.synth import text_pdf

    src = text_pdf([["Dear Ann Whitfield,"]], tmp_path / "in.pdf")

    class Broken:
        def __len__(self) -> int:
            return 1

        def __getitem__(self, index: int) -> object:
            raise pypdfium2.PdfiumError("Failed to load page.")

    with ExitStack() as stack:
        original = OriginalText(stack, src, None, Limits())
        assert original.words(0, (2550.0, 3300.0))  # the page's words, read
        original.doc = Broken()
        with pytest.raises(Corrupt):
            original.words(0, (2550.0, 3300.0))
