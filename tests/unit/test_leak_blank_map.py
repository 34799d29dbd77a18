"""The leak check passes over our text layer's blank-glyph map, and only over it (issue 46).

The glyphless font of every text layer carries a CIDToGIDMap of 65,536 two-byte entries, each
"glyph 1". Read as text it spells one letter 65,536 times and parsed as a content stream it is
65,536 operators: most of a one-page scan's leak check, for bytes that spell nothing. Those
exact bytes are passed over; a stream that differs from them in one place is read as any other
stream. Work is counted in characters folded and streams parsed, never timed."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import pikepdf
import pytest
from pikepdf import Dictionary, Name

from pressroom.pipeline.textlayer import BLANK_GLYPH_MAP, glyphless_font
from pressroom.redact import leaks
from pressroom.redact.leaks import find_leaks

NAME = "Whitfield"


def _pdf(path: Path, extra: bytes | None = None) -> Path:
    """A page whose resources carry the glyphless font; ``extra``: one more Flate stream."""
    pdf = pikepdf.new()
    pdf.add_blank_page(page_size=(200, 200))
    font = glyphless_font(pdf)
    pdf.pages[0].obj.Resources = Dictionary(Font=Dictionary(F1=font))
    pdf.pages[0].obj.Contents = pdf.make_stream(b"BT /F1 12 Tf 10 10 Td <0041> Tj ET")
    if extra is not None:
        stream = pdf.make_stream(zlib.compress(extra))
        stream.Filter = Name.FlateDecode
        pdf.Root.Extra = stream
    pdf.save(path)
    return path


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts: characters the leak check folded (``normalise``) and streams it parsed."""
    counts = {"chars": 0, "parsed": 0, "longest": 0}
    fold, parse = leaks.normalise, leaks._content_strings_hits

    def counted_fold(text: str) -> str:
        counts["chars"] += len(text)
        counts["longest"] = max(counts["longest"], len(text))
        return fold(text)

    def counted_parse(stream: pikepdf.Stream, wanted: Any) -> int:
        counts["parsed"] += 1
        return parse(stream, wanted)

    monkeypatch.setattr(leaks, "normalise", counted_fold)
    monkeypatch.setattr(leaks, "_content_strings_hits", counted_parse)
    return counts


def test_the_text_layers_blank_map_is_not_read_as_text(
    tmp_path: Path, work: dict[str, int]
) -> None:
    path = _pdf(tmp_path / "layer.pdf")
    with pikepdf.open(path) as pdf:
        maps = [o for o in pdf.objects if isinstance(o, pikepdf.Stream) and "/Filter" in o]
        assert any(bytes(o.read_bytes()) == BLANK_GLYPH_MAP for o in maps)  # it is there
    assert find_leaks(path, [NAME]) == []
    # the page's few bytes and the fonts' maps are read; 65,536 entries are not
    assert work["longest"] < 10_000
    assert work["chars"] < 60_000


@pytest.mark.parametrize("where", ["inside", "after"])
def test_a_map_that_differs_from_the_blank_one_is_read_whole(
    tmp_path: Path, work: dict[str, int], where: str
) -> None:
    spelt = NAME.encode("utf-16-be")
    if where == "inside":
        # the name over some entries, the length unchanged
        data = BLANK_GLYPH_MAP[:1000] + spelt + BLANK_GLYPH_MAP[1000 + len(spelt) :]
    else:
        data = BLANK_GLYPH_MAP + spelt
    assert data != BLANK_GLYPH_MAP
    leaked = find_leaks(_pdf(tmp_path / "hidden.pdf", data), [NAME])
    assert [(k.parser, k.where) for k in leaked] == [("pikepdf-walk", "stream")]
    assert work["longest"] >= len(BLANK_GLYPH_MAP) // 2  # read as any stream is
