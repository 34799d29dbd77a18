"""One document, however it is cut, is the same bytes: read whole, written out in parts (a long
image source), or read as page ranges in other processes and put together (`process -j N`).
And `-j N` cuts its pages into chunks that shrink toward the end (tests/integration/
test_spread_dynamic.py: handed out as processes free up)."""

from __future__ import annotations

import dataclasses
import itertools
import os
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pikepdf
import pytest

from pressroom.cli.progress import Board
from pressroom.models import SourceKind
from pressroom.offline import process as offline
from pressroom.offline.process import Outcome, OutputChoice
from pressroom.offline.spread import MOST_PAGES, Run, page_chunks, run_spread
from pressroom.pipeline import plain
from pressroom.pipeline.assembly import assemble
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.inspect import file_sha256
from pressroom.pipeline.plain import process_document, read_range
from pressroom.redact.policy import parse_policy
from pressroom.settings import Settings
from pressroom.stages import StageTimer
from pressroom.synth import draw_page, image_pdf, page_lines, save_tiff
from pressroom.templates import resolve_template
from pressroom.testing import FakeOcrEngine
from tests.helpers import delivered

pytestmark = pytest.mark.integration

WHEN = datetime(2026, 5, 6, 7, 8, 9, tzinfo=UTC)
LINES = ("Pressroom fake engine reads this line", "Ünïcödé beyond Latin-1: Ωμέγα ŁÓDŹ")


@pytest.mark.parametrize("pages", range(1, 42))
@pytest.mark.parametrize("processes", [1, 2, 3, 4, 7])
def test_chunks_cover_every_page_once_and_shrink_to_single_pages(
    pages: int, processes: int
) -> None:
    chunks = page_chunks(pages, processes)
    assert chunks[0][0] == 0 and chunks[-1][1] == pages
    assert all(a[1] == b[0] for a, b in itertools.pairwise(chunks))  # no gap, no overlap
    sizes = [end - first for first, end in chunks]
    assert min(sizes) >= 1 and max(sizes) <= MOST_PAGES
    assert sizes == sorted(sizes, reverse=True)  # large first, smaller toward the end
    # while any process could take a chunk, none takes more than its share of what is left
    assert sizes[0] <= max(1, -(-pages // (2 * processes)))
    # the last pages go one at a time: at the end no process holds more than a page
    last = min(pages, 2 * processes - 1)
    assert sizes[-last:] == [1] * last
    assert len(chunks) >= min(processes, pages)  # every process that can have work has some


def _options() -> JobOptions:
    return JobOptions(template=resolve_template("sample"), title="Bundle", when=WHEN)


def _source(tmp: Path, pages: int, kind: str) -> Path:
    drawn = [draw_page(page_lines(40 + n, 4), dpi=100, height_in=3).image for n in range(pages)]
    if kind == "tiff":
        return save_tiff(drawn, tmp / "src.tif", 100)
    return image_pdf(drawn, tmp / "src.pdf", 100)


def _ranges(source: Path, out: Path, spans: list[tuple[int, int]], tmp: Path) -> bytes:
    engine = FakeOcrEngine(lines=LINES)
    parts, pages = [], []
    for n, (first, end) in enumerate(spans):
        part = tmp / f"part{n}.pdf"
        pages += read_range(source, part, _options(), engine, range(first, end)).pages
        parts.append(part)
    kind = SourceKind.PDF if source.suffix == ".pdf" else SourceKind.TIFF
    assemble(
        parts,
        pages,
        out,
        _options(),
        engine,
        StageTimer(),
        source_sha256=file_sha256(source),
        kind=kind,
    )
    return out.read_bytes()


@pytest.mark.parametrize("kind", ["pdf", "tiff"])
def test_ranges_put_together_are_the_whole_documents_bytes(tmp_path: Path, kind: str) -> None:
    source = _source(tmp_path, 5, kind)
    whole = tmp_path / "whole.pdf"
    delivered(process_document(source, whole, _options(), FakeOcrEngine(lines=LINES)))
    for spans in ([(0, 3), (3, 5)], [(0, 1), (1, 2), (2, 5)]):
        assert _ranges(source, tmp_path / "split.pdf", spans, tmp_path) == whole.read_bytes()
    with pikepdf.open(whole) as pdf:  # one band font, one text font, as one builder makes
        fonts = {p.Resources.Font[k].objgen for p in pdf.pages for k in p.Resources.Font}
        assert len(fonts) == 2


def test_a_long_image_source_written_in_parts_is_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An image source's pages are written out PART_PAGES at a time; each part once brought
    its own fonts and logo into the output."""
    source = _source(tmp_path, 5, "tiff")
    outputs = []
    for part_pages in (plain.PART_PAGES, 2):
        monkeypatch.setattr(plain, "PART_PAGES", part_pages)
        out = tmp_path / f"out-{part_pages}.pdf"
        delivered(process_document(source, out, _options(), FakeOcrEngine(lines=LINES)))
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


@dataclass
class PidEngine(FakeOcrEngine):
    """The fake engine, noting which process read each page (a pool's children are forked
    with it, so the note goes to a file)."""

    log: Path = Path("/nonexistent")

    def recognize(self, image: Any, **kwargs: Any) -> Any:
        with self.log.open("a") as fh:
            fh.write(f"{os.getpid()}\n")
        return super().recognize(image, **kwargs)


def _run(tmp: Path, policy: str | None = None) -> Run:
    settings = Settings(data_dir=tmp / "data", scratch_dir=tmp / "scratch")
    return Run(
        resolve_template("sample"),
        "Bundle",
        parse_policy(policy, now=0) if policy else None,
        False,
        settings,
        "sample",
        False,
        OutputChoice(sidecar=True),
    )


@pytest.fixture
def pid_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PidEngine:
    engine = PidEngine(lines=LINES, log=tmp_path / "pids")
    monkeypatch.setattr(offline, "_ENGINE", engine)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(int(WHEN.timestamp())))
    return engine


@pytest.mark.parametrize("title", ["Bundle", "Week\t48\x1b[0m\nbundle"], ids=["plain", "control"])
def test_j2_reads_one_document_in_two_processes_and_delivers_j1s_bytes(
    tmp_path: Path, pid_engine: PidEngine, title: str
) -> None:
    """The same bytes either way, a title with control characters in its band too (each
    drawn as a space: none has a place in a font's Unicode map)."""
    source = _source(tmp_path, 6, "pdf")
    run = dataclasses.replace(_run(tmp_path), title=title)
    whole = offline.process_one(
        source,
        tmp_path / "whole.pdf",
        run.template,
        run.title,
        None,
        None,
        False,
        run.settings,
        output=run.output,
    )
    assert whole.exit_code == 0, whole.line
    pid_engine.log.unlink()
    said: list[Outcome] = []
    (outcome,) = run_spread(
        [(source, tmp_path / "split.pdf")], 2, run, Board(False), lambda _n, o: said.append(o)
    )
    assert outcome.exit_code == 0 and said == [outcome], outcome.line
    assert outcome.line.split()[2:5] == whole.line.split()[2:5]  # "6 page(s): 6 OCR,"
    readers = Counter(pid_engine.log.read_text().split())
    # its 5 chunks (2 1 1 1 1 pages) went to the pool's processes as they freed up
    assert sum(readers.values()) == 6 and len(readers) <= 2 and str(os.getpid()) not in readers
    assert (tmp_path / "split.pdf").read_bytes() == (tmp_path / "whole.pdf").read_bytes()
    assert (tmp_path / "split.txt").read_text() == (tmp_path / "whole.txt").read_text()
    assert list(run.settings.scratch_dir.iterdir()) == []
    if title != "Bundle":
        from pressroom.engines import pdfium

        with pdfium.RecyclingDocument(tmp_path / "whole.pdf") as doc:
            cover = pdfium.page_text(doc, 0)
        assert "Week 48 [0m bundle" in cover.replace("\r\n", " ")
        assert not any(ord(c) < 32 for c in cover.replace("\r\n", ""))


def test_a_redaction_is_read_whole_by_one_process(tmp_path: Path, pid_engine: PidEngine) -> None:
    source = _source(tmp_path, 4, "pdf")
    run = _run(tmp_path, "account-number")
    (outcome,) = run_spread(
        [(source, tmp_path / "r.pdf")], 2, run, Board(False), lambda _n, o: None
    )
    assert outcome.exit_code == 0, outcome.line
    assert len(set(pid_engine.log.read_text().split())) == 1
    assert list(run.settings.scratch_dir.iterdir()) == []


def test_refusals_at_the_count_and_at_the_assembly_leave_the_rest_and_no_parts(
    tmp_path: Path, pid_engine: PidEngine
) -> None:
    """A corrupt file is refused when its pages are counted; a document whose pages hold too
    little text is refused once its ranges are put together (as -j 1 refuses it); the good
    file between them is delivered."""
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog")
    blank = image_pdf([draw_page([], dpi=100, height_in=3).image] * 3, tmp_path / "blank.pdf", 100)
    good = _source(tmp_path, 3, "pdf")
    run = _run(tmp_path)
    offline._ENGINE = PidEngine(lines=(), log=pid_engine.log)  # reads nothing at all
    try:
        outcomes = run_spread(
            [(bad, tmp_path / "o1.pdf"), (blank, tmp_path / "o2.pdf")],
            2,
            run,
            Board(False),
            lambda _n, o: None,
        )
    finally:
        offline._ENGINE = pid_engine
    codes = sorted(o.line.split(":")[0] for o in outcomes)
    assert codes == ["CORRUPT", "UNREADABLE_SCAN"], [o.line for o in outcomes]
    (unread,) = [o.line for o in outcomes if o.line.startswith("UNREADABLE_SCAN")]
    # -j 2 says what -j 1 says: the way past it, on the refusal's own line
    assert unread.endswith(" (try --allow-no-text or --ocr force)") and "\n" not in unread
    (ok,) = run_spread([(good, tmp_path / "o3.pdf")], 2, run, Board(False), lambda _n, o: None)
    assert ok.exit_code == 0, ok.line
    assert sorted(p.name for p in tmp_path.glob("o*")) == ["o3.pdf", "o3.txt"]
    assert list(run.settings.scratch_dir.iterdir()) == []


def test_a_pool_that_lost_a_process_tries_its_files_again_and_the_next_run_has_a_fresh_one(
    tmp_path: Path, pid_engine: PidEngine
) -> None:
    """A process of the pool killed (the OOM killer's SIGKILL): the run's files are each
    "try again" (75, marked as a read that died), nothing is left in scratch, and the next
    run reads them in a pool started afresh."""
    from concurrent.futures.process import BrokenProcessPool

    from pressroom.offline.spread import Spreader

    for n in range(2):
        (tmp_path / f"s{n}").mkdir()
    sources = [_source(tmp_path / f"s{n}", 3, "pdf") for n in range(2)]
    run = _run(tmp_path)
    run.settings.scratch_dir.mkdir()
    work = [(src, tmp_path / f"o{n}.pdf") for n, src in enumerate(sources)]
    with Spreader(2) as spreader:
        lost = spreader._pool.submit(os._exit, 9)
        with pytest.raises(BrokenProcessPool):
            lost.result()
        said: list[Outcome] = []
        first = spreader.run(work, run, Board(False), lambda _n, o: said.append(o))
        assert [(o.exit_code, o.crashed) for o in first] == [(75, True), (75, True)]
        assert said == first and "UNAVAILABLE" in first[0].line
        assert list(run.settings.scratch_dir.iterdir()) == []
        again = spreader.run(work, run, Board(False), lambda _n, o: None)
        assert [o.exit_code for o in again] == [0, 0], [o.line for o in again]
