"""Names written with letters beyond ASCII, through a whole redaction: born-digital and scanned.

One page laid out with ``corpora.documents``' ``Builder`` (so the ground truth is where the glyphs
are): a byline, a prose paragraph with the surname alone later, a table of results, a photo
caption, a donor line in capitals and a signature block, with names of ``corpora.world_names``
(an own list, never trained on) chosen to cover Nordic, Polish, Turkish, Icelandic, Romanian,
Welsh, Akan and Vietnamese letters. The page is redacted for names as a born-digital PDF and as a
300-dpi scan, and the output is read back by PDFium, poppler and OCR of its pixels
(``corpora.documents.scoring``): no word of any name may be readable. The unit property test
(``tests/unit/test_names_non_ascii.py``) covers the whole list and the decomposed forms; this one
keeps CI time small. Its sentences are none of the unit test's: like those, they measure, and a
rule written to match them proves nothing."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from corpora.documents.layout import Builder, Run
from corpora.documents.model import DIGITAL, SCAN, Document
from corpora.world_names import NAMES, WorldName
from pressroom.engines.tesseract import TesseractEngine
from pressroom.redact.policy import parse_policy

pytestmark = pytest.mark.integration


def _name(full: str) -> WorldName:
    return next(n for n in NAMES if n.full == full)


BYLINE = _name("Øyvind Sørensen")
PROSE = _name("Nguyễn Thị Ánh")
TABLE = (_name("Małgorzata Śliwińska"), _name("Şükrü Öztürk"), _name("Kwabena Ɔpɔku"))
CAPTION = _name("Guðrún Þórðardóttir")
CAPITALS = _name("Ștefan Țurcanu")
SIGNATURE = _name("Llŷr Williams")


def page(medium: str) -> Document:
    b = Builder(f"world-names-{medium}", "news", "held-out", random.Random(41))
    p = b.page()
    x, y = 72.0, 90.0
    b.line(p, x, y, [b.keep("Harbour board names its new chair")], size=16, face="serif-bold")
    y += 22
    b.line(p, x, y, ["By ", b.value("name", BYLINE.full, "full")], size=10)
    y += 20
    y = b.para(
        p,
        x,
        y,
        460,
        [
            "After a long meeting the members chose ",
            b.value("name", PROSE.full, "full"),
            " to lead the trust until 2029. Speaking afterwards, ",
            b.value("name", PROSE.alone, "surname"),
            " promised a review of the ferry timetable.",
        ],
    )
    y += 10
    rows: list[list[Run]] = [["Runner", "Club", "Time"]]
    rows += [
        [b.value("name", n.full, "full"), "Harbour AC", f"2:1{k}:05"] for k, n in enumerate(TABLE)
    ]
    for cells in rows:
        for col, cell in zip((x, x + 190, x + 330), cells, strict=True):
            b.line(p, col, y, [cell], size=10)
        y += 15
    y += 12
    b.line(
        p,
        x,
        y,
        [b.value("name", CAPTION.full, "full"), " at the launch of the lifeboat on Saturday."],
        size=9,
        face="serif",
    )
    y += 24
    b.line(
        p, x, y, ["GIFTS RECEIVED: ", b.value("name", CAPITALS.full.upper(), "capitals"), " 250"]
    )
    y += 30
    for line in (
        ["With thanks,"],
        [b.value("name", SIGNATURE.full, "full")],
        [b.keep("Head of Planning")],
    ):
        b.line(p, x, y, line, size=10)
        y += 15
    return b.build(medium, "pdf", 41)


@pytest.mark.parametrize("medium", [DIGITAL, SCAN])
def test_names_beyond_ascii_are_not_readable_after_redaction(
    tmp_path: Path, engine: TesseractEngine, medium: str
) -> None:
    from corpora.documents.scoring import redact_and_score

    doc = page(medium)
    assert len(doc.values("name")) == 9
    outcome = redact_and_score(doc, tmp_path, 300, engine, parse_policy("name", now=0))
    assert outcome.error is None, outcome.error
    readable = [(s.mention.text, s.readers, s.left) for s in outcome.values if not s.whole]
    assert readable == [], f"{medium}: readable (name, readers, words left): {readable}; " + (
        f"held: {outcome.held}"
    )
