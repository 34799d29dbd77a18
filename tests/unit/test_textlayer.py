"""The text layer's shape: what every reader relies on to group glyphs into words and lines."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pikepdf

from pressroom.models import Box, Word
from pressroom.pipeline.textlayer import glyphless_font, text_layer_ops, text_lines, to_unicode


def word(
    text: str, x: float, y: float, line: int, *, angle: float = 0.0, size: float = 30.0
) -> Word:
    advance = 20.0 * len(text)
    return Word(
        text=text,
        confidence=90.0,
        box=Box(x, y - size, x + advance, y),
        origin=(x, y),
        advance=advance,
        size=size,
        angle=angle,
        line=line,
    )


def objects(ops: bytes) -> list[str]:
    return re.findall(r"BT .*?\nET", ops.decode(), flags=re.S)


def test_each_line_is_one_level_text_object_with_its_words_once_and_real_spaces() -> None:
    # a line climbing 2 degrees (a scan kept as it is), then a level one
    climb = math.tan(math.radians(2.0))
    first = [
        word(t, 100 + 200 * i, 500 - 200 * i * climb, 0, angle=2.0)
        for i, t in enumerate(["Waiver", "signed", "today"])
    ]
    second = [word(t, 100 + 200 * i, 600, 1) for i, t in enumerate(["Payout", "approved"])]
    ops = text_layer_ops(
        first + second, font="/F", origin=(0, 0), frame_height_px=1000, scale=(0.24, 0.24)
    )
    found = objects(ops)
    assert len(found) == 2
    for obj in found:
        # one matrix per line and it is level: no rotation, no Td steps that could drift
        assert len(re.findall(r" Tm", obj)) == 1 and " Td" not in obj
        assert re.search(r"BT 3 Tr /F [\d.]+ Tf 1 0 0 1 [\d.]+ [\d.]+ Tm", obj)
    shown = [
        bytes.fromhex(h).decode("utf-16-be") for h in re.findall(r"<([0-9a-f]+)> Tj", found[0])
    ]
    assert shown == ["Waiver", " ", "signed", " ", "today"]
    # the line sits on its mean baseline: the middle word's, for an evenly climbing line
    y = float(re.search(r"1 0 0 1 [\d.]+ ([\d.]+) Tm", found[0]).group(1))  # type: ignore[union-attr]
    middle = first[1].origin[1] - math.sin(math.radians(2.0)) * first[1].advance / 2
    assert abs(y - (1000 - middle) * 0.24) < 0.5


def test_glyph_advances_land_each_word_on_its_place_and_never_overlap() -> None:
    words = [word("Claims", 100, 500, 0), word("must", 215, 500, 0), word("be", 300, 500, 0)]
    # "Claims" (120 px wide) overlaps "must" at 215: the layout must cut it back, not overlap
    (line,) = text_lines(words)
    for a, b in zip(line.words, line.words[1:], strict=False):
        assert a.x1 < b.x0
    assert [w.x0 for w in line.words] == [100, 215, 300]
    ops = text_layer_ops(words, font="/F", origin=(0, 0), frame_height_px=1000, scale=(1.0, 1.0))
    (obj,) = objects(ops)
    size = float(re.search(r"/F ([\d.]+) Tf", obj).group(1))  # type: ignore[union-attr]
    x = float(re.search(r"1 0 0 1 ([\d.]+) ", obj).group(1))  # type: ignore[union-attr]
    starts = []
    for tz, hexed in re.findall(r"([\d.]+) Tz <([0-9a-f]+)> Tj", obj):
        text = bytes.fromhex(hexed).decode("utf-16-be")
        if text != " ":
            starts.append(x)
        x += len(text) * 0.5 * size * float(tz) / 100
    assert [round(s, 2) for s in starts] == [100, 215, 300]
    assert round(x, 2) == 340  # "be" ends where its box does


def test_lines_keep_the_order_they_were_read_in_even_when_a_line_comes_back() -> None:
    # faint print found afterwards joins its line: each line is still one object
    words = [word("alpha", 100, 300, 0), word("gamma", 100, 400, 1), word("beta", 300, 300, 0)]
    lines = text_lines(words)
    assert [[w.text for w in line.words] for line in lines] == [["alpha", "beta"], ["gamma"]]


def test_characters_outside_the_font_and_blank_words_are_left_out() -> None:
    words = [word("ok\U0001f600", 100, 300, 0), word("  ", 300, 300, 0)]
    (line,) = text_lines(words)
    assert [w.text for w in line.words] == ["ok"]
    assert (
        text_layer_ops(
            [word(" ", 1, 1, 0)], font="/F", origin=(0, 0), frame_height_px=10, scale=(1, 1)
        )
        == b""
    )


def test_to_unicode_maps_latin_1_by_range_and_every_other_code_point_used_by_itself() -> None:
    cmap = to_unicode([0x20AC, 0x2019, 0x20AC, 0xD800, 0x1F600, *range(0x400, 0x4C8)]).decode()
    cmap = cmap.split("endcodespacerange")[1]
    ranges = re.findall(r"<([0-9A-F]{4})> <([0-9A-F]{4})> <([0-9A-F]{4})>", cmap)
    # one range, its destination starting with 00: only its last byte varies
    assert ranges == [("0000", "00FF", "0000")]
    pairs = re.findall(r"^<([0-9A-F]{4})> <([0-9A-F]{4})>$", cmap, flags=re.M)
    assert all(a == b for a, b in pairs)
    assert {int(a, 16) for a, _b in pairs} == {0x20AC, 0x2019} | set(range(0x400, 0x4C8))
    for block in re.findall(r"(\d+) beginbf(?:char|range)", cmap):
        assert int(block) <= 100  # the CMap format's limit per block


def test_the_documents_map_names_what_its_pages_show(tmp_path: Path) -> None:
    from pressroom.models import PageText
    from pressroom.pipeline.geometry import PlacedSource
    from pressroom.pipeline.output import OutputBuilder
    from pressroom.templates import resolve_template

    builder = OutputBuilder(resolve_template(None), {}, producer="test")
    blank = builder.pdf.make_stream(b"")
    placed = PlacedSource(blank, (1, 0, 0, 1, 0, 0), 600, 800)
    for text in ("\u20ac294.13 days\u2019", "na\u00efve \u03a9mega"):
        words = tuple(word(t, 100 + 300 * i, 400, 0) for i, t in enumerate(text.split()))
        builder.add_page(placed, PageText(0, "ocr", words, 1000, 1000), 0, 1)
    out = tmp_path / "o.pdf"
    builder.save(out, title="t", created=datetime(2026, 1, 1, tzinfo=UTC))
    with pikepdf.open(out) as pdf:
        font = pdf.pages[0].Resources.Font.Gly
        assert font.ToUnicode.read_bytes() == to_unicode([0x20AC, 0x2019, 0x3A9])


def test_the_glyphless_font_says_what_its_glyphs_are() -> None:
    pdf = pikepdf.new()
    font = glyphless_font(pdf)
    cid = font.DescendantFonts[0]
    assert cid.DW == 500  # the embedded glyph is 1024 of 2048 units wide
    assert font.ToUnicode.read_bytes() == to_unicode()
    descriptor = cid.FontDescriptor
    assert descriptor.Ascent - descriptor.Descent == 1000


def test_a_printed_line_the_engine_split_in_two_is_one_line_again() -> None:
    # a fax header: the engine read "07:48" and "FROM: +6" as two lines of one row,
    # the first with a speck read as a tall letter; then the body's next line below
    words = [
        word("07:48", 100, 300, 0, size=60.0),
        word("FROM:", 400, 303, 1),
        word("+6", 560, 303, 1),
        word("Councillors", 100, 400, 2),
    ]
    lines = text_lines(words)
    assert [[w.text for w in line.words] for line in lines] == [
        ["07:48", "FROM:", "+6"],
        ["Councillors"],
    ]
    assert lines[0].size == 30.0  # the size of most of its characters, not the speck's


def test_lines_stacked_or_overlapping_across_are_never_merged() -> None:
    above = [word("left", 100, 300, 0), word("column", 300, 300, 0)]
    # the next line starts left of where this one ends: another line, even at the same height
    beside = [word("again", 250, 305, 1)]
    below = [word("next", 700, 340, 2)]  # to the right, but a line lower
    assert len(text_lines(above + beside + below)) == 3


def test_a_speck_in_one_words_box_does_not_size_its_line() -> None:
    # the engine sizes a line by its tallest word: a streak through "council" made its box,
    # and so the line, three times the others' height
    line = [word("The", 100, 500, 0), word("city", 200, 500, 0), word("voted", 500, 500, 0)]
    streaked = word("council", 300, 500, 0, size=90.0)
    words = [replace(w, size=90.0) for w in (*line[:2], streaked, line[2])]
    (found,) = text_lines(words)
    assert found.size == 30.0
    # an accented capital stands a quarter taller than the rest: that is print, and sizes it
    accented = [replace(w, size=37.5) for w in (line[0], word("Élan", 200, 500, 0, size=37.5))]
    assert text_lines(accented)[0].size == 37.5
    # x-height words do not set the typical height: "on" and "a" beside "Judge" are print
    low = [
        replace(word(t, 100 + 100 * i, 500, 0, size=20.0), size=30.0)
        for i, t in enumerate("on a".split())
    ]
    assert text_lines([*low, word("Judge", 400, 500, 0)])[0].size == 30.0


def test_a_line_split_around_a_line_between_is_one_line_again() -> None:
    # a streak through "had": "... defendant nt", then "years." below, then "d failed ..."
    # on the first line's baseline, starting where "nt" ends
    words = [
        word("defendant", 100, 500, 0),
        word("nt", 300, 500, 0),
        word("years.", 100, 560, 1),
        word("d", 341, 500, 2),
        word("failed", 380, 500, 2),
    ]
    assert [[w.text for w in line.words] for line in text_lines(words)] == [
        ["defendant", "nt", "d", "failed"],
        ["years."],
    ]


def test_a_lists_items_read_after_their_numbers_stay_lines_of_their_own() -> None:
    # the engine read the numbers as a column first; each item starts a word space or more
    # after its number: moving the items up to their numbers would read them out of order
    numbers = [word(f"{n}.", 100, 500 + 60 * n, n) for n in range(3)]  # 40 px wide
    items = [word("Item", 150, 500 + 60 * n, 3 + n) for n in range(3)]
    lines = text_lines(numbers + items)
    assert [[w.text for w in line.words] for line in lines] == [
        ["0."],
        ["1."],
        ["2."],
        ["Item"],
        ["Item"],
        ["Item"],
    ]
