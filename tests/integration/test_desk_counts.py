"""What the desk says will be burned is what the rebuilt copy burns: for random corrections of a
real redaction (real detection, real build, real checks), the count the desk shows before Apply
(``burned_counts`` of the held sheet with the pending corrections: the header, the rail, the
thumbnails and the approve step all say it), the held reason the rebuild writes, the job page
and the approve step of the rebuilt copy, and the rebuilt PDF's own text agree — finding by
finding: each counted one has no word left in the output, each removed one that no other
finding covers reads as it was."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from pressroom.corrections import (
    Area,
    Corrections,
    ReviewSheet,
    SheetFinding,
    burned_counts,
    corrected_reason,
    removed_findings,
    total_counts,
)
from pressroom.deskport import HeldDetail, HeldItem
from pressroom.engines import pdfium
from pressroom.engines.tesseract import TesseractEngine
from pressroom.models import Box
from pressroom.outcomes import Held
from pressroom.pipeline.core import JobOptions
from pressroom.redact.engine import redact_document
from pressroom.redact.plan import normalise, overlaps
from pressroom.redact.policy import parse_policy
from pressroom.redact.text import extracted_words
from pressroom.service import Services
from pressroom.synth import text_pdf
from pressroom.templates import resolve_template
from tests.conftest import FakeClock
from tests.integration.test_desk_web import FakeDesk, _client, _key, _sign_in, _token

pytestmark = pytest.mark.integration

POLICY = parse_policy("name,address,account-number", now=0)
WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
# a letter with people in prose and a table, a name wrapped over two lines, an address and an
# account number: several findings of every class, some of one value in two places
LINES = [
    "Dear Margaret Okafor,",
    "Thank you for your letter about the payout to your son. Our treasurer, Tobias",
    "Ferreira, has asked me to confirm the transfer to account GB29 NWBK 6016 1331 9268 19.",
    "Please write to 14 Harbour Road, Leeds LS1 4AB if anything is unclear.",
    "Signed for the club: Priya Raman and Margaret Okafor.",
    "This sentence must stay searchable.",
]
ROUNDS = 3


def _options(corrections: Corrections | None = None) -> JobOptions:
    return JobOptions(template=resolve_template("plain"), when=WHEN, corrections=corrections)


def _build(src: Path, out: Path, engine: TesseractEngine, fixes: Corrections | None) -> ReviewSheet:
    """The redaction path as a held job's rebuild runs it: the copy and its sheet, held or
    not."""
    done = redact_document(src, out, _options(fixes), POLICY, engine)
    # held or not, the copy comes with its sheet
    assert done.sheet is not None
    return done.sheet


@pytest.fixture(scope="module")
def letter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ReviewSheet]]:
    folder = tmp_path_factory.mktemp("counts")
    src = text_pdf([LINES], folder / "letter.pdf")
    sheet = _build(src, folder / "first.pdf", TesseractEngine(), None)
    yield src, sheet


def _words_at(pdf: Path, sheet: ReviewSheet) -> list[tuple[str, Box]]:
    """The output's own text, word by word, in the sheet page's frame (its placement undone)."""
    scale, left, top = sheet.pages[0].placement
    with pdfium.open_pdf(pdf) as doc:
        page = doc[len(doc) - len(sheet.pages)]
        try:
            words = extracted_words(page, 1.0)
        finally:
            page.close()
    return [
        (
            w.text,
            Box(
                (w.box.x0 - left) / scale,
                (w.box.y0 - top) / scale,
                (w.box.x1 - left) / scale,
                (w.box.y1 - top) / scale,
            ),
        )
        for w in words
    ]


def _inside(word: Box, box: tuple[float, float, float, float]) -> bool:
    """Most of the word lies inside the box (grown a point: the build pads its boxes)."""
    x0, y0, x1, y1 = box[0] - 1, box[1] - 1, box[2] + 1, box[3] + 1
    w = min(word.x1, x1) - max(word.x0, x0)
    h = min(word.y1, y1) - max(word.y0, y0)
    area = (word.x1 - word.x0) * (word.y1 - word.y0)
    return w > 0 and h > 0 and w * h >= 0.5 * area


def _counted(html: str, marker: str) -> dict[str, int]:
    """Class counts written as ``<span class="k …">class</span> n`` inside the element
    carrying ``marker``."""
    at = html.index(marker)
    part = html[at : html.index("</", html.index("</span>", at) + 7) + 200]
    return {k: int(n) for k, n in re.findall(r'<span class="k [^"]*">([^<]+)</span> (\d+)', part)}


def _corrections(rng: random.Random, sheet: ReviewSheet) -> Corrections:
    """Some findings removed at random (their boxes as the desk sends them), sometimes a box
    drawn over a word no recogniser finds."""
    chosen = [f for f in sheet.findings if rng.random() < 0.4]
    manual: tuple[Area, ...] = ()
    if rng.random() < 0.5:
        manual = (Area(1, (72.0, 700.0, 140.0, 716.0)),)  # blank paper: burned all the same
    return Corrections(removed=tuple(Area(f.page, f.box) for f in chosen), manual=manual)


@pytest.mark.parametrize("seed", range(ROUNDS))
def test_the_desk_the_reason_and_the_rebuilt_copy_agree(
    seed: int,
    letter: tuple[Path, ReviewSheet],
    tmp_path: Path,
    services: Services,
    clock: FakeClock,
) -> None:
    src, first = letter
    assert len(first.findings) >= 6, "the letter no longer gives findings enough to vary"
    rng = random.Random(seed)
    fixes = _corrections(rng, first)
    # what the desk shows before Apply, with these corrections pending
    predicted = burned_counts(first, fixes)
    out = tmp_path / "rebuilt.pdf"
    sheet = _build(src, out, TesseractEngine(), fixes)
    assert sheet.corrections == fixes
    # the rebuilt copy's sheet counts what the desk predicted
    assert burned_counts(sheet) == predicted
    totals = total_counts(predicted)
    # the held reason says the same counts
    reason = corrected_reason(fixes, 0, sheet=sheet)
    said = dict((k, int(n)) for k, n in re.findall(r"([a-z-]+) (\d+)", reason.split("burned: ")[1]))
    assert said == totals
    # the PDF: every counted finding's words are gone from the text where it stood; a removed
    # finding no counted one overlaps reads as it was
    words = _words_at(out, sheet)
    gone = removed_findings(sheet)
    active = [f for i, f in enumerate(sheet.findings) if i not in gone]
    for f in active:
        for part in f.parts:
            left = [t for t, b in words if _inside(b, part)]
            assert not left, f"text left under a counted {f.kind} box"
    text = normalise(" ".join(t for t, _ in words))
    for i in gone:
        f = sheet.findings[i]
        if any(overlaps(Box(*f.box), Box(*g.box)) for g in active):
            continue  # burned for the other finding's sake (the reason says so)
        under = normalise(" ".join(t for t, b in words if _inside(b, f.box)))
        assert under and under in text, "a removed finding's words are not in the copy"
    # the job page and the approve step of the rebuilt copy, as the desk serves them
    _pages_agree(services, clock, sheet, totals, predicted)


def _pages_agree(
    services: Services,
    clock: FakeClock,
    sheet: ReviewSheet,
    totals: dict[str, int],
    by_page: dict[int, dict[str, int]],
) -> None:
    now = clock()
    item = HeldItem(
        id="j_counts",
        tenant="acme",
        reason_code="CORRECTED",
        reason=corrected_reason(sheet.corrections, 0, sheet=sheet),
        counts={},
        pages=len(sheet.pages),
        held_since=now - 60,
        deadline=now + 3600,
    )
    desk = FakeDesk([HeldDetail(item, sheet, can_apply=True)])
    client: TestClient = _client(services, desk)
    _, key = _key(services, "acme")
    _sign_in(client, key)
    page = client.get("/review/jobs/j_counts").text
    header = re.findall(
        r'data-count-kind="([^"]+)"><span class="k [^"]*">[^<]+</span> <b>(\d+)</b>', page
    )
    assert {k: int(n) for k, n in header if int(n)} == totals
    n = sum(totals.values())
    assert re.search(rf'data-testid="page-count-1"[^>]*>\s*{n}\b', page), "rail count"
    if n:
        assert re.search(rf'data-testid="thumb-count-1"[^>]*>\s*{n}\b', page), "thumbnail"
    confirm = client.post("/review/jobs/j_counts/approve", data={"csrf_token": _token(page)})
    assert confirm.status_code == 200
    assert re.search(rf'data-testid="confirm-total">{n}<', confirm.text)
    if n:
        assert _counted(confirm.text, 'data-testid="confirm-counts"') == totals
        for p, kinds in by_page.items():
            line = re.search(rf'<li data-page="{p}">(.*?)</li>', confirm.text)
            assert line is not None
            got = dict(
                (k, int(v))
                for k, v in re.findall(r'<span class="k [^"]*">([^<]+)</span> (\d+)', line.group(1))
            )
            assert got == kinds


def test_a_finding_over_two_lines_is_two_boxes_one_finding(
    letter: tuple[Path, ReviewSheet],
) -> None:
    """The wrapped name: its sheet finding carries one box per line, none as wide as a line,
    and the desk draws a box per line sharing one ``data-finding``."""
    from pressroom.desk.pages import page_items as _page_items

    _, sheet = letter
    wrapped = [f for f in sheet.findings if len(f.parts) > 1]
    assert wrapped, "the wrapped name is no longer found as one finding"
    f = wrapped[0]
    assert len(f.parts) == 2
    (a, b) = f.parts
    assert a[3] <= b[1] + 1  # one line above the other
    assert max(a[2] - a[0], b[2] - b[0]) < 0.5 * (f.box[2] - f.box[0]) + 80
    boxes, entries = _page_items(sheet, f.page)
    mine = [x for x in boxes if x["removes"] == " ".join(f"{round(v, 2):g}" for v in f.box)]
    assert len(mine) == 2 and len({x["finding"] for x in mine}) == 1
    assert [x["line"] for x in mine] == [1, 2]
    assert len([e for e in entries if e["finding"] == mine[0]["finding"]]) == 1


def test_counts_leave_a_removed_finding_out_and_count_a_drawn_box_once() -> None:
    sheet = ReviewSheet(
        pages=(),
        findings=(
            SheetFinding(1, "name", (72, 100, 200, 114)),
            SheetFinding(1, "name", (72, 300, 200, 314)),
            SheetFinding(2, "address", (72, 130, 300, 144)),
            SheetFinding(2, "manual", (10, 10, 60, 30)),
        ),
        corrections=Corrections(
            removed=(Area(1, (72, 100, 200, 114)),), manual=(Area(2, (10, 10, 60, 30)),)
        ),
    )
    assert burned_counts(sheet) == {1: {"name": 1}, 2: {"address": 1, "manual": 1}}
    # pending corrections instead of the applied ones
    assert burned_counts(sheet, Corrections()) == {
        1: {"name": 2},
        2: {"address": 1, "manual": 1},
    }
    # a drawn box a sheet does not list as a finding is counted all the same
    bare = ReviewSheet((), sheet.findings[:3], sheet.corrections)
    assert burned_counts(bare) == {1: {"name": 1}, 2: {"address": 1, "manual": 1}}


# a wrapped name the reviewer keeps, and on its first line a name detection learns only from
# the output (``ContextDependent``: "vanQuaymer" is a name once the watched name is burned)
WRAPPED_LINES = [
    "Dear Zephyrine Quillfeather,",
    "Thank you for the payout we sent. Our treasurer at vanQuaymer, Tobias",
    "Ferreira, has asked me to confirm the transfer today.",
    "Signed for the club: Priya Raman.",
    "This sentence must stay searchable.",
]


def test_a_kept_wrapped_name_lets_stand_its_two_words_only(tmp_path: Path) -> None:
    """Found by a review of this change: a removed finding let stand the rectangle over its
    two lines, so a value learnt on the output inside it was not burned, while the sheet drew
    it burned. Now what is let stand is the finding's words, line by line, judged again with
    what the output taught."""
    from dataclasses import replace

    from pressroom.settings import Settings

    redaction = replace(
        Settings().redaction, recognizers=("tests.operator_recognizers:watch_list_and_late",)
    )
    src = text_pdf([WRAPPED_LINES], tmp_path / "letter.pdf")
    engine = TesseractEngine()

    def build(out: Path, fixes: Corrections | None) -> ReviewSheet:
        options = replace(_options(fixes), redaction=redaction)
        result = redact_document(src, out, options, POLICY, engine)
        if isinstance(result, Held):
            raise AssertionError(f"held {result.code}: {result.message}")
        assert result.sheet is not None
        return result.sheet

    first = build(tmp_path / "first.pdf", None)
    wrapped = [f for f in first.findings if len(f.parts) > 1]
    assert wrapped, "the wrapped name is no longer found as one finding"
    fixes = Corrections(removed=(Area(1, wrapped[0].box),))
    out = tmp_path / "kept.pdf"
    sheet = build(out, fixes)
    words = _words_at(out, sheet)
    assert not [t for t, _ in words if "vanQuaymer" in t]
    gone = removed_findings(sheet)
    for i, f in enumerate(sheet.findings):
        if i not in gone:
            for part in f.parts:
                assert not [t for t, b in words if _inside(b, part)], f"{f.kind} shown burned"
    # the kept name's words stand where no other finding covers them
    assert "Ferreira," in [t for t, _ in words]
