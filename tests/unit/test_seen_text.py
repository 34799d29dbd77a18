"""Which own text ``redact.seen`` trusts to say what a page shows, before any pixel is looked at:
a symbol font's bullet and a sideways margin stamp are no reason to OCR a page; letters a font
hides in private-use codes, unmapped characters and a page of sideways text are."""

from __future__ import annotations

from pressroom.models import Box, Word
from pressroom.redact.seen import _text_trusted


def word(text: str, x: float, y: float, *, sideways: bool = False) -> Word:
    w, h = (20.0, 12.0 * len(text)) if sideways else (12.0 * len(text), 20.0)
    box = Box(x, y, x + w, y + h)
    return Word(text, 100.0, box, (box.x0, box.y1), box.width, box.height, 0.0, 0)


PROSE = [word(t, 100 + 80 * n, 100) for n, t in enumerate("The committee meets in spring".split())]


def test_a_bullet_and_a_margin_stamp_are_trusted() -> None:
    assert _text_trusted(PROSE)
    assert _text_trusted([word("\uf0b7", 50, 100), *PROSE])  # a Symbol font's bullet
    assert _text_trusted([*PROSE, word("arXiv:1601", 10, 400, sideways=True)])


def test_hidden_letters_unmapped_characters_and_sideways_pages_are_not() -> None:
    assert not _text_trusted([*PROSE, word("\ue001\ue002\ue003", 100, 200)])  # a name in PUA
    assert not _text_trusted([*PROSE, word("Whit\ufffdeld", 100, 200)])
    assert not _text_trusted([*PROSE, word("Jane\x07", 100, 200)])
    turned = [
        word(t, 100, 100 + 200 * n, sideways=True)
        for n, t in enumerate(["Margaret", "met", "Daniel"])
    ]
    assert not _text_trusted([*PROSE[:2], *turned])


def _dots(rows: int, per_row: int, pitch: float) -> list[Word]:
    """Full stops (300-dpi pixels, 8 x 8), ``per_row`` to a row, rows ``pitch`` apart."""
    return [
        Word(".", 100.0, Box(x, y, x + 8, y + 8), (x, y + 8), 8.0, 8.0, 0.0, r)
        for r in range(rows)
        for x in [100.0 + 10 * n for n in range(per_row)]
        for y in [600.0 + pitch * r]
    ]


def test_dots_draw_only_row_over_row_and_past_a_bound_all_count() -> None:
    """A leader of dots on its line draws nothing; the same dots in rows 2 pt apart draw; past
    ``MOST_ART_WORDS`` such words on a page every one counts, unplaced (the places of so many
    are not compared: the page is OCR'd)."""
    import numpy as np

    from pressroom.redact.seen import MOST_ART_WORDS, SEEN_DPI, _glyph_art

    k = SEEN_DPI / 300.0
    changed = np.ones((1650, 1275), dtype=bool)  # every pixel shows ink (the count is of ink)
    assert not _glyph_art(changed, [*PROSE, *_dots(1, 120, 0.0)], k)  # a long leader
    assert not _glyph_art(changed, [*PROSE, *_dots(12, 10, 60.0)], k)  # a leader a line
    assert _glyph_art(changed, [*PROSE, *_dots(12, 10, 9.0)], k)  # rows 2 pt apart
    many = _dots(1, MOST_ART_WORDS + 1, 0.0)
    assert _glyph_art(changed, [*PROSE, *many], k)
