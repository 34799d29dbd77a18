"""Boxes that tell nothing: one solid box per value per line, never a word's length."""

from __future__ import annotations

from pressroom.models import Box, Word
from pressroom.redact.plan import PAD_PX, boxes_for


def _line(texts: list[str], line: int = 0, y: float = 100.0, x: float = 50.0) -> list[Word]:
    words = []
    for t in texts:
        w = 18.0 * len(t)
        words.append(Word(t, 95.0, Box(x, y, x + w, y + 20), (x, y + 16), w, 16.0, 0.0, line))
        x += w + 12.0
    return words


def test_a_value_over_several_words_is_one_box_without_gaps() -> None:
    words = _line(["IBAN", "GB82", "WEST", "1234", "5698", "7654", "32", "thanks"])
    (box,) = boxes_for(words, range(1, 7))
    assert box.x0 == words[1].box.x0 - PAD_PX and box.x1 == words[6].box.x1 + PAD_PX
    assert box.y0 == words[1].box.y0 - PAD_PX


def test_a_card_number_shows_no_grouping() -> None:
    words = _line(["4111", "1111", "1111", "1111"])
    assert len(boxes_for(words, range(4))) == 1


def test_each_line_of_a_wrapped_value_gets_its_own_box() -> None:
    words = _line(["Jane"], line=0) + _line(["Whitfield"], line=1, y=130.0)
    boxes = boxes_for(words, [0, 1])
    assert len(boxes) == 2 and boxes[0].y1 < boxes[1].y1


def test_a_word_that_stays_is_never_covered() -> None:
    words = _line(["Jane", "and", "Whitfield"])
    boxes = boxes_for(words, [0, 2])
    assert len(boxes) == 2
    assert not any(b.x0 < words[1].box.x1 and words[1].box.x0 < b.x1 for b in boxes)


def test_a_word_drawn_over_a_run_cuts_it() -> None:
    """Two covered words next to each other in reading order with a kept word between them
    on the page (a table's cells): joining them would burn the kept word."""
    words = _line(["Jane", "Whitfield"])
    kept = _line(["Committee"], x=words[0].box.x1 + 2)[0]
    words = [words[0], words[1], kept]
    boxes = boxes_for(words, [0, 1])
    assert len(boxes) == 2


def test_a_quantum_widens_every_box_to_whole_quanta() -> None:
    for texts in (["Al"], ["Bartholomew"], ["Jo", "Li"]):
        words = _line(texts)
        (box,) = boxes_for(words, range(len(texts)), quantum=64.0)
        width = box.x1 - box.x0
        assert abs(width / 64.0 - round(width / 64.0)) < 1e-6
        assert box.x0 <= words[0].box.x0 and box.x1 >= words[-1].box.x1
