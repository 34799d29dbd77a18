"""The held document of the desk's at-a-glance browser test (issue 42), and the two stored
states both desks show it from.

The document is ten born-digital letter pages (``pressroom.synth.text_pdf``, Helvetica 11 pt,
14 pt leading). Page 1 carries what the test looks at:

- a name on one line ("Margaret Okafor") and the same on every other page (counts per page);
- a name wrapped over two lines: the given name ends one line, the surname starts the next
  ("... to Daniel" / "Whitfield or ..."): one finding, one box per line; the given name alone
  is a finding too (nested in the first line's box), and "Oliver Grant" after the surname lies
  inside the wrapped name's whole box but on neither of its lines (overlapping is judged line
  by line);
- a name only an operator's recogniser half believes ("Quillfeather said", through
  ``tests.operator_recognizers:hesitant``): a doubtful name (``SheetFinding.doubt``);
- a window-envelope address block: the block is an address, and the street line with its town
  inside it is an address too (findings that nest);
- a line the leak check is said to have found again ("Room 4").

What is real and what is built: the document goes through the real redaction path once (the
service's API and a worker with real Tesseract, ``review=always``): its held copy and its
review sheet (pages, findings with their line boxes, the doubtful name) are what that run made.
The leak hold is built: a real leak is hard to provoke, so the stored state is rewritten to
what a ``REDACTION_LEAK`` hold stores (the code, a reason, and the sheet's ``rechecked`` list
with one box), for the service in the job's row and for the offline desk as the note and held
copy ``pressroom.desk.folder.hold`` writes (the held copy and the sheet are the service run's).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import update

from pressroom.app import create_app
from pressroom.corrections import ReviewSheet, SheetFinding
from pressroom.engines import pdfium
from pressroom.engines.tesseract import TesseractEngine
from pressroom.errors import RedactionLeak
from pressroom.jobs.model import JobState
from pressroom.jobs.schema import jobs
from pressroom.offline.folder import Rebuild, hold
from pressroom.outcomes import Held
from pressroom.redact.policy import parse_policy
from pressroom.redact.text import extracted_words
from pressroom.service import Services
from pressroom.settings import RedactionSettings, Settings
from pressroom.synth import text_pdf
from tests.desk_docs import work

Box = tuple[float, float, float, float]
PAGES = 10
LABEL = "Payout batch 2026-12.pdf"
REDACT = "name,address"
STEM = "batch"  # the offline desk's item id: the held file's stem
PAGE_ONE = (
    "Page 1 of the payout batch.",
    "Payout approved for Margaret Okafor on 3 May.",
    "Please send any questions about the payout to Daniel",
    "Whitfield or Oliver Grant at the finance office before May.",
    "Quillfeather said the minutes stand.",
    "Send the cheque to:",
    "Flat 2, Rosebank House",
    "122 Chandlers Row",
    "Penrith",
    "CA11 7QD",
    "Meeting held in the east wing, Room 4.",
)
OTHER_PAGE = (
    "Payout approved for Margaret Okafor on 3 May.",
    "Meeting held in the east wing, Room 4.",
)
WRAPPED = ("Daniel", "Whitfield")  # the wrapped name: the end of line 3, the start of line 4
# a name of its own inside the wrapped name's whole box, on neither of its line boxes: no
# member of its group
BETWEEN = "Oliver"
DOUBTFUL = "Quillfeather"
ADDRESS_LINES = ("122", "Penrith")  # words of the nested address findings (lines 8 and 9)
LEAK_WORDS = ("Room", "4.")  # where the built leak hold says the check found a value again
LEAK_REASON = "a redacted value is still in the output (page 1: leak 1)"


def glance_pdf(path: Path) -> Path:
    """The ten pages at ``path``."""
    return text_pdf(
        [
            list(PAGE_ONE) if n == 1 else [f"Page {n} of the payout batch.", *OTHER_PAGE]
            for n in range(1, PAGES + 1)
        ],
        path,
    )


@dataclass(frozen=True, slots=True)
class Word:
    text: str
    box: Box  # points from the page's top left


def page_words(pdf: Path, page: int) -> list[Word]:
    """Every word of page ``page`` (from 1) with its box, as PDFium reads it."""
    with pdfium.open_pdf(pdf) as doc:
        p = doc[page - 1]
        try:
            words = extracted_words(p, 1.0)
        finally:
            p.close()
    return [Word(w.text, (w.box.x0, w.box.y0, w.box.x1, w.box.y1)) for w in words]


def word_box(pdf: Path, page: int, word: str) -> Box:
    """The box of ``word`` on page ``page`` (its only occurrence there; punctuation kept)."""
    found = [w.box for w in page_words(pdf, page) if w.text == word]
    assert len(found) == 1, f"{word!r} stands {len(found)} times on page {page}"
    return found[0]


def union(*boxes: Box) -> Box:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def meets(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


# the operator's recogniser that half believes "Quillfeather said" (the doubtful name is a
# real finding of the run, not a built one)
HESITANT = "tests.operator_recognizers:hesitant"


def glance_settings(folder: Path) -> Settings:
    """The service's settings for the run: its data under ``folder``, and ``HESITANT``
    installed beside the built-in recognisers."""
    settings = Settings(
        data_dir=folder / "data",
        scratch_dir=folder / "scratch",
        redaction=RedactionSettings(recognizers=(HESITANT,)),
    )
    settings.scratch_dir.mkdir(parents=True, exist_ok=True)
    return settings


def check_sheet(sheet: ReviewSheet, source: Path) -> None:
    """What the real run must have found for the test to mean anything: said here, so a
    change of the detector fails with a plain message, not a missing box in a browser."""
    first = [f for f in sheet.findings if f.page == 1]
    given, surname = (word_box(source, 1, w) for w in WRAPPED)
    wrapped = [f for f in first if len(f.lines) == 2 and meets(f.box, given)]
    assert wrapped, f"no finding of two lines over the wrapped name: {first}"
    assert meets(wrapped[0].lines[0], given) and meets(wrapped[0].lines[1], surname)
    between = word_box(source, 1, BETWEEN)
    assert meets(wrapped[0].box, between) and not any(meets(b, between) for b in wrapped[0].lines)
    assert any(f.kind == "name" and meets(f.box, between) for f in first), "no name between"
    doubtful = word_box(source, 1, DOUBTFUL)
    assert any(f.doubt and meets(f.box, doubtful) for f in first), "no doubtful name"
    street, town = (word_box(source, 1, w) for w in ADDRESS_LINES)
    nested = [f for f in first if f.kind == "address" and meets(f.box, street)]
    assert len(nested) >= 2, f"no nested address findings: {nested}"
    assert any(meets(f.box, town) for f in nested)
    for n in range(2, PAGES + 1):
        assert any(f.page == n and f.kind == "name" for f in sheet.findings), f"page {n}"


def leak_hold(sheet: ReviewSheet, source: Path) -> ReviewSheet:
    """The sheet as a leak hold stores it: what the check found again (built), page 1."""
    again = SheetFinding(1, "leak", union(*(word_box(source, 1, w) for w in LEAK_WORDS)))
    return dataclasses.replace(sheet, rechecked=(again,))


@dataclass(frozen=True, slots=True)
class ServiceHeld:
    job_id: str
    key: str  # a reviewer's key of the job's tenant
    sheet: ReviewSheet  # the leak hold's, as stored


def held_in_service(services: Services, source: Path, engine: TesseractEngine) -> ServiceHeld:
    """``source`` sent to the service (``review=always``), worked by a real worker, then its
    row rewritten into a leak hold (``REDACTION_LEAK`` and a sheet with ``rechecked``)."""
    now = services.clock()
    _, key = services.store.tenancy.new_key("acme", now=now, role="reviewer")
    _, submitter = services.store.tenancy.new_key("acme", now=now)
    api = TestClient(create_app(services), client=("127.0.0.1", 50000))
    sent = api.post(
        "/v1/jobs",
        headers={"Authorization": f"Bearer {submitter}"},
        files={"file": ("batch.pdf", source.read_bytes())},
        data={"redact": REDACT, "review": "always", "label": LABEL},
    )
    assert sent.status_code == 202, sent.text
    job_id = str(sent.json()["id"])
    work(services, engine)
    job = services.store.queue.get(job_id)
    assert job is not None and job.state is JobState.REVIEW, job
    assert job.review_sheet is not None
    sheet = ReviewSheet.parse(job.review_sheet)
    check_sheet(sheet, source)
    held = leak_hold(sheet, source)
    with services.store.db.tx() as conn:
        conn.execute(
            update(jobs)
            .where(jobs.c.id == job_id)
            .values(reason=RedactionLeak.code, message=LEAK_REASON, review_sheet=held.as_json())
        )
    return ServiceHeld(job_id, key, held)


def held_in_folder(services: Services, held: ServiceHeld, source: Path, folder: Path) -> Path:
    """The offline review folder ``folder`` holding the same document as ``process`` would
    have held it (``folder.hold``): the service run's held copy and the leak hold's sheet."""
    job = services.store.queue.get(held.job_id)
    assert job is not None and job.artifact_key is not None
    copy = folder.parent / "held-copy.pdf"
    folder.parent.mkdir(parents=True, exist_ok=True)
    services.blobs.get_to_path(job.artifact_key, copy)
    leak = Held(RedactionLeak(LEAK_REASON), sheet=held.sheet)
    rebuild = Rebuild.of(source, parse_policy(REDACT, now=services.clock()), None, None, False)
    hold(folder, STEM, copy, leak, rebuild, now=services.clock())
    copy.unlink()
    return folder
