"""The offline reviewer's desk as a reviewer meets it: `pressroom process --redact` holds a
document in OUTDIR/review, and ``FolderDesk`` lists it, shows it, rebuilds it, delivers it into
OUTDIR (never over a file already there) or throws it away, recording each decision."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pikepdf
import pytest
from fastapi.testclient import TestClient
from PIL import Image, ImageDraw, ImageFont

from pressroom.corrections import Area, Corrections, SheetPage
from pressroom.desk.config import DeskConfig
from pressroom.desk.folder import DECISIONS, FolderDesk, safe_stem
from pressroom.desk.gate import OneTimeGate
from pressroom.desk.routes import desk_app
from pressroom.desk.views import render
from pressroom.deskport import Viewer
from pressroom.engines.tesseract import TesseractEngine
from pressroom.errors import BadRequest, Conflict, NotFound, PermanentError
from pressroom.models import SourceKind
from pressroom.offline.process import process_one
from pressroom.redact.policy import parse_policy
from pressroom.settings import Settings
from pressroom.synth import find_font, image_pdf
from pressroom.templates import resolve_template

pytestmark = pytest.mark.integration

DPI = 300
VIEWER = Viewer(None, "offline", "offline")
# a detector that never settles (tests/operator_recognizers.py): every build is held
RESTLESS = "tests.operator_recognizers:watch_list_and_restless"
WATCH_LIST = "tests.operator_recognizers:watch_list"  # settles: a rebuild passes its checks


def _settings(scratch: Path, recognizers: str) -> Settings:
    base = Settings.from_env()
    return dataclasses.replace(
        base,
        scratch_dir=scratch,
        redaction=dataclasses.replace(base.redaction, recognizers=(recognizers,)),
    )


def _visit(folder: Path) -> Path:
    image = Image.new("L", (round(8.5 * DPI), round(5 * DPI)), 255)
    draw = ImageDraw.Draw(image)
    face = ImageFont.truetype(str(find_font("DejaVuSerif.ttf")), round(11 * DPI / 72))
    for y, text in (
        (1.0, "Zephyrine Quillfeather visited Lighthouse today."),
        (1.4, "The visit went well for Everyone involved."),
    ):
        draw.text((1.0 * DPI, y * DPI), text, fill=0, font=face)
    return image_pdf([image], folder / "visit.pdf", DPI)


@pytest.fixture(scope="module")
def held_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real `process --redact name` run that is held: its OUTDIR (the source beside it)."""
    root = tmp_path_factory.mktemp("held")
    source = _visit(root)
    out = root / "out"
    out.mkdir()
    outcome = process_one(
        source,
        out / "visit.pdf",
        resolve_template(None),
        "Visit",
        policy=parse_policy("name", now=0),
        settings=_settings(root, RESTLESS),
        template_name=None,
    )
    assert outcome.exit_code == 3, outcome.line
    assert "REDACTION_LEAK" in outcome.line
    return out


@pytest.fixture
def outdir(held_once: Path, tmp_path: Path) -> Path:
    """A private copy of the held run's OUTDIR for one test (the source stays where it was)."""
    out = tmp_path / "out"
    shutil.copytree(held_once, out)
    return out


@pytest.fixture
def desk(outdir: Path, tmp_path: Path, engine: TesseractEngine) -> FolderDesk:
    return FolderDesk(outdir / "review", _settings(tmp_path, RESTLESS), engine=engine)


def _note(outdir: Path, stem: str = "visit") -> dict[str, object]:
    note = json.loads((outdir / "review" / f"{stem}.findings.json").read_text())
    assert isinstance(note, dict)
    return note


def _decisions(outdir: Path) -> list[dict[str, object]]:
    path = outdir / "review" / DECISIONS
    return [json.loads(line) for line in path.read_text().splitlines()]


def _second(outdir: Path, stem: str) -> None:
    """A second held document: the first's copy and note under another name."""
    review = outdir / "review"
    shutil.copy2(review / "visit.pdf", review / f"{stem}.pdf")
    note = _note(outdir)
    note["source"], note["held_copy"] = stem, f"{stem}.pdf"
    (review / f"{stem}.findings.json").write_text(json.dumps(note))


def test_the_held_note_keeps_what_a_rebuild_needs(held_once: Path) -> None:
    review = held_once / "review"
    assert stat.S_IMODE(review.stat().st_mode) == 0o700
    for name in ("visit.pdf", "visit.findings.json"):
        assert stat.S_IMODE((review / name).stat().st_mode) == 0o600
    note = _note(held_once)
    # the fields the review folder always had
    assert note["code"] == "REDACTION_LEAK" and note["source"] == "visit"
    assert note["held_copy"] == "visit.pdf" and note["findings"]
    # what the desk rebuilds from
    source = held_once.parent / "visit.pdf"
    assert note["input"] == str(source.resolve())
    assert isinstance(note["input_sha256"], str) and len(note["input_sha256"]) == 64
    assert note["policy"] == {"redact": ["name"], "expires_at": None}
    assert note["template"] is None and note["title"] == "Visit"
    assert note["keep_pixels"] is False
    assert isinstance(note["held_at"], float)
    assert "sheet" in note
    assert [p.name for p in review.iterdir() if p.name.startswith(".")] == []


def test_the_held_note_has_the_review_sheet(held_once: Path, desk: FolderDesk) -> None:
    note = _note(held_once)
    assert isinstance(note["sheet"], dict) and note["sheet"]["pages"]
    detail = desk.detail(VIEWER, "visit")
    assert detail.sheet is not None and len(detail.sheet.pages) == 1
    assert {f.kind for f in detail.sheet.findings} == {"name"}
    assert detail.item.pages == 1


def test_the_desk_lists_and_shows_the_held_document(desk: FolderDesk, outdir: Path) -> None:
    (item,) = desk.held(VIEWER)
    assert item.id == "visit" and item.tenant is None and item.deadline is None
    assert item.reason_code == "REDACTION_LEAK" and "1 name" in item.reason
    assert set(item.counts) == {"name"} and item.counts["name"] >= 1
    assert item.held_since == _note(outdir)["held_at"] and item.state == "review"
    detail = desk.detail(VIEWER, "visit")
    assert detail.item == item and detail.can_apply and detail.decisions == ()
    # no value found reaches what the desk shows
    shown = repr(desk.held(VIEWER)) + repr(detail)
    for value in ("Zephyrine", "Quillfeather", "Lighthouse", "Everyone"):
        assert value not in shown


def test_a_name_that_is_not_an_item_is_not_found(desk: FolderDesk, outdir: Path) -> None:
    # a note and copy one folder up, where "../x" would lead if an id were taken as a path
    (outdir / "x.findings.json").write_text(json.dumps(_note(outdir)))
    shutil.copy2(outdir / "review" / "visit.pdf", outdir / "x.pdf")
    for bad in ("../x", "..", "", ".hidden", "a/b", "visit/../visit", "/etc/passwd", "decisions"):
        with pytest.raises(NotFound):
            desk.detail(VIEWER, bad)
        with pytest.raises(NotFound):
            desk.reject(VIEWER, bad)
    assert not safe_stem("../x") and safe_stem("Scan 2024-01-02") and safe_stem("Überweisung")
    assert (outdir / "review" / "visit.pdf").is_file()


def test_a_note_without_its_held_copy_is_not_listed(desk: FolderDesk, outdir: Path) -> None:
    (outdir / "review" / "visit.pdf").unlink()
    assert desk.held(VIEWER) == []
    with pytest.raises(NotFound):
        desk.detail(VIEWER, "visit")


def test_reject_removes_the_held_files_and_records_it(desk: FolderDesk, outdir: Path) -> None:
    _second(outdir, "other")
    desk.reject(VIEWER, "visit")
    review = outdir / "review"
    assert sorted(p.name for p in review.iterdir()) == [
        DECISIONS,
        "other.findings.json",
        "other.pdf",
    ]
    assert stat.S_IMODE((review / DECISIONS).stat().st_mode) == 0o600
    (line,) = _decisions(outdir)
    assert line["action"] == "reject" and line["key_id"] == "offline" and line["item"] == "visit"
    assert isinstance(line["at"], float)
    assert [i.id for i in desk.held(VIEWER)] == ["other"]
    assert [d.action for d in desk.detail(VIEWER, "other").decisions] == []
    assert not (outdir / "visit.pdf").exists()
    with pytest.raises(NotFound):
        desk.reject(VIEWER, "visit")


def test_approve_delivers_into_outdir_and_never_overwrites(desk: FolderDesk, outdir: Path) -> None:
    held = (outdir / "review" / "visit.pdf").read_bytes()
    _second(outdir, "other")
    (outdir / "other.pdf").write_bytes(b"someone else's file")
    with pytest.raises(Conflict):
        desk.approve(VIEWER, "other")
    assert (outdir / "other.pdf").read_bytes() == b"someone else's file"
    assert [i.id for i in desk.held(VIEWER)] == ["other", "visit"]  # still held, as it was

    approved = desk.approve(VIEWER, "visit")
    dest = outdir / "visit.pdf"
    assert dest.read_bytes() == held and str(dest) in approved.message
    assert stat.S_IMODE(dest.stat().st_mode) == 0o644
    assert not (outdir / "review" / "visit.pdf").exists()
    assert not (outdir / "review" / "visit.findings.json").exists()
    assert [(d["action"], d["item"]) for d in _decisions(outdir)] == [("approve", "visit")]
    assert [i.id for i in desk.held(VIEWER)] == ["other"]
    with pytest.raises(NotFound):
        desk.approve(VIEWER, "visit")
    leftovers = [p.name for p in (outdir / "review").iterdir() if p.name.startswith(".")]
    assert leftovers == []


class _Gate:
    """The redaction a rebuild runs, stopped after its first page until the test lets it go
    (or with ``fail``, failing then): the middle of a rebuild, seen without a race."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, fail: Exception | None = None) -> None:
        import pressroom.processing as variants

        self.reached = threading.Event()
        self.release = threading.Event()
        real, gate = variants.Processing, self

        class Gated:
            def __init__(self, policy: Any = None) -> None:
                self.inner = real(policy)

            def __call__(self, *args: Any, progress: Any = None, **kw: Any) -> Any:
                progress(1, 2)  # the first page read, as the redaction tells it
                gate.reached.set()
                if not gate.release.wait(120):
                    raise AssertionError("the test never let the rebuild go on")
                if fail is not None:
                    raise fail
                return self.inner(*args, progress=progress, **kw)

        monkeypatch.setattr(variants, "Processing", Gated)


def _notice(desk: FolderDesk, item: str = "visit") -> str:
    """The rebuild notice the job page carries for ``item`` now."""
    detail = desk.detail(VIEWER, item)
    return render(
        "rebuilding.html",
        item=detail.item,
        rebuilding=detail.item.state == "rebuilding",
        decisions=detail.decisions,
    )


def test_apply_answers_at_once_shows_the_rebuilds_progress_and_holds_again(
    desk: FolderDesk, outdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Apply returns while the rebuild is stopped at its first page (it would never return
    if it waited for it); meanwhile the item shows how far it got and refuses every other
    decision; then it is held again with the reason its checks give."""
    gate = _Gate(monkeypatch)
    before = _note(outdir)
    held = (outdir / "review" / "visit.pdf").read_bytes()
    corrections = Corrections(manual=(Area(1, (72.0, 300.0, 200.0, 320.0)),))
    desk.apply(VIEWER, "visit", corrections)
    assert gate.reached.wait(60)
    detail = desk.detail(VIEWER, "visit")
    assert detail.item.state == "rebuilding" and not detail.can_apply
    assert detail.item.progress == (1, 2) and detail.item.rebuild_step == ("reading", 1, 1)
    assert desk.held(VIEWER)[0].state == "rebuilding"
    notice = _notice(desk)
    assert 'data-testid="rebuilding"' in notice and "page 1 of 1" in notice
    assert '<progress data-testid="rebuild-progress" value="1" max="2">' in notice
    # the decision is recorded when Apply is accepted
    (line,) = _decisions(outdir)
    assert line["action"] == "apply" and line["item"] == "visit"
    assert line["corrections"] == {"removed": 0, "manual": 1, "every": 0}
    for decide in (
        lambda: desk.apply(VIEWER, "visit", Corrections()),
        lambda: desk.approve(VIEWER, "visit"),
        lambda: desk.reject(VIEWER, "visit"),
    ):
        with pytest.raises(Conflict, match="a rebuild with corrections is running"):
            decide()
    assert (outdir / "review" / "visit.pdf").read_bytes() == held  # nothing decided
    assert len(_decisions(outdir)) == 1 and not (outdir / "visit.pdf").exists()

    gate.release.set()
    assert desk.wait("visit", timeout=300)
    after = _note(outdir)
    assert after["code"] == "REDACTION_LEAK"  # the restless detector is never satisfied
    assert "apply_started" not in after and "apply_failed" not in after
    assert after["held_at"] == before["held_at"] and after["input"] == before["input"]
    assert (outdir / "review" / "visit.pdf").read_bytes().startswith(b"%PDF")
    assert [d.action for d in desk.detail(VIEWER, "visit").decisions] == ["apply"]
    item = desk.detail(VIEWER, "visit").item
    assert (item.state, item.progress, item.apply_failed) == ("review", None, None)
    assert item.rebuilt_at is not None and item.rebuilt_at >= float(line["at"])  # type: ignore[arg-type]
    notice = _notice(desk)
    assert 'data-testid="rebuilt"' in notice and "REDACTION_LEAK" in notice
    assert desk.detail(VIEWER, "visit").can_apply  # and it can be corrected again


def test_a_second_apply_while_one_runs_is_409_and_a_failed_rebuild_is_said(
    desk: FolderDesk, outdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the desk's own pages: the first Apply is a redirect at once, the second a 409
    with the reason; the rebuild then fails — the held copy and its note stay as they were,
    and the failure's code is shown, by this desk and by one started again."""
    gate = _Gate(monkeypatch, fail=PermanentError("unreadable", code="CORRUPT"))
    before = _note(outdir)
    held = (outdir / "review" / "visit.pdf").read_bytes()
    client = TestClient(desk_app(DeskConfig(desk, OneTimeGate("t0ken"), b"s" * 32)))
    assert client.get("/review/sign-in?token=t0ken", follow_redirects=False).status_code == 303
    found = re.search(r'name="csrf_token" value="([^"]+)"', client.get("/review/jobs/visit").text)
    assert found is not None
    form = {"csrf_token": found.group(1), "corrections": '{"manual": []}'}
    first = client.post("/review/jobs/visit/apply", data=form, follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/review/jobs/visit"
    assert gate.reached.wait(60)
    page = client.get("/review/jobs/visit")
    assert page.status_code == 200 and 'data-testid="rebuilding"' in page.text
    second = client.post("/review/jobs/visit/apply", data=form, follow_redirects=False)
    assert second.status_code == 409 and second.json()["code"] == "CONFLICT"
    assert "a rebuild with corrections is running" in second.json()["detail"]
    rejected = client.post("/review/jobs/visit/reject", data={"csrf_token": form["csrf_token"]})
    assert rejected.status_code == 409
    assert [d["action"] for d in _decisions(outdir)] == ["apply"]

    gate.release.set()
    assert desk.wait("visit", timeout=60)
    item = desk.detail(VIEWER, "visit").item
    assert (item.state, item.apply_failed, item.rebuilt_at) == ("review", "CORRUPT", None)
    assert (outdir / "review" / "visit.pdf").read_bytes() == held
    assert {**_note(outdir), "apply_failed": None} == {**before, "apply_failed": None}
    assert _note(outdir)["apply_failed"] == "CORRUPT"
    notice = _notice(desk)
    assert 'data-testid="apply-failed"' in notice and "CORRUPT" in notice
    assert 'data-testid="rebuilt"' not in notice
    again = FolderDesk(outdir / "review", desk.settings)
    assert again.detail(VIEWER, "visit").item.apply_failed == "CORRUPT"
    assert again.detail(VIEWER, "visit").can_apply  # to be applied again


def test_an_apply_the_desk_was_stopped_during_is_said(
    desk: FolderDesk, outdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An Apply whose rebuild neither held the item again nor failed (the desk was stopped
    while it ran): a desk started again says so, never that it was rebuilt, and the copy
    held before can be corrected again."""
    gate = _Gate(monkeypatch, fail=PermanentError("unreadable", code="CORRUPT"))
    desk.apply(VIEWER, "visit", Corrections())
    assert gate.reached.wait(60)
    stopped = _note(outdir)  # the folder as a desk stopped here leaves it
    gate.release.set()
    assert desk.wait("visit", timeout=60)
    (outdir / "review" / "visit.findings.json").write_text(json.dumps(stopped))
    again = FolderDesk(outdir / "review", desk.settings)
    item = again.detail(VIEWER, "visit").item
    assert (item.state, item.apply_failed, item.rebuilt_at) == ("review", "APPLY_INTERRUPTED", None)
    assert again.held(VIEWER)[0].apply_failed == "APPLY_INTERRUPTED"
    assert 'data-testid="apply-failed"' in _notice(again)
    assert again.detail(VIEWER, "visit").can_apply


def test_a_rebuild_that_passes_is_held_as_corrected(
    outdir: Path, tmp_path: Path, engine: TesseractEngine
) -> None:
    """With a detector that settles, the rebuilt output passes every check: it replaces the
    held copy and waits, CORRECTED, for the reviewer to approve it; nothing is delivered."""
    desk = FolderDesk(outdir / "review", _settings(tmp_path, WATCH_LIST), engine=engine)
    held = (outdir / "review" / "visit.pdf").read_bytes()
    desk.apply(VIEWER, "visit", Corrections())
    assert desk.wait("visit", timeout=300)
    note = _note(outdir)
    assert note["code"] == "CORRECTED" and note["findings"] == []
    assert "every check passed" in str(note["reason"])
    rebuilt = (outdir / "review" / "visit.pdf").read_bytes()
    assert rebuilt.startswith(b"%PDF") and rebuilt != held
    assert not (outdir / "visit.pdf").exists()
    text = subprocess.run(
        ["pdftotext", str(outdir / "review" / "visit.pdf"), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "Quillfeather" not in text and "visited" in text
    assert desk.held(VIEWER)[0].reason_code == "CORRECTED"


def test_a_changed_or_missing_source_cannot_be_rebuilt(
    desk: FolderDesk, outdir: Path, tmp_path: Path
) -> None:
    review = outdir / "review"
    note = _note(outdir)
    moved = tmp_path / "source.pdf"
    shutil.copy2(str(note["input"]), moved)
    note["input"] = str(moved)
    (review / "visit.findings.json").write_text(json.dumps(note))
    assert desk.detail(VIEWER, "visit").can_apply
    with moved.open("ab") as fh:
        fh.write(b"\n% changed\n")
    assert not desk.detail(VIEWER, "visit").can_apply
    held = (review / "visit.pdf").read_bytes()
    with pytest.raises(Conflict):
        desk.apply(VIEWER, "visit", Corrections())
    moved.unlink()
    assert not desk.detail(VIEWER, "visit").can_apply
    with pytest.raises(NotFound):
        desk.apply(VIEWER, "visit", Corrections())
    assert (review / "visit.pdf").read_bytes() == held
    assert not (review / DECISIONS).exists()


def test_page_images_are_pngs_of_the_source_and_the_held_copy(desk: FolderDesk) -> None:
    for which in ("source", "redacted"):
        png = desk.page_image(VIEWER, "visit", 1, which, 600)
        assert png.startswith(b"\x89PNG\r\n\x1a\n")
        with pytest.raises(NotFound):
            desk.page_image(VIEWER, "visit", 2, which, 600)
    with pytest.raises(NotFound):
        desk.page_image(VIEWER, "../visit", 1, "source", 600)


class _Render:
    """A stand-in for ``pressroom.pipeline.pictures`` that records what it is asked to draw."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def source_page_png(
        self, path: Path, kind: SourceKind, index: int, sheet_page: SheetPage, width_px: int
    ) -> bytes:
        self.calls.append(("source", path, kind, index, sheet_page, width_px))
        return b"\x89PNG source"

    def output_page_png(
        self, path: Path, index: int, width_px: int, frame: SheetPage | None = None
    ) -> bytes:
        self.calls.append(("redacted", path, index, width_px) + ((frame,) if frame else ()))
        return b"\x89PNG redacted"


def test_page_images_ask_for_the_right_pages(
    desk: FolderDesk, outdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Content page n of the held copy is its page n after the cover (output pages minus
    content pages); the source's page n is drawn as the sheet (or, without one, the page as it
    stands) describes it."""
    import pressroom.pipeline

    render = _Render()
    monkeypatch.setitem(sys.modules, "pressroom.pipeline.pictures", render)
    monkeypatch.setattr(pressroom.pipeline, "pictures", render, raising=False)
    held = outdir / "review" / "visit.pdf"
    with pikepdf.open(held, allow_overwriting_input=True) as pdf:  # a cover before page 1
        pdf.add_blank_page(page_size=(612, 792))
        pdf.pages.insert(0, pdf.pages[-1])
        del pdf.pages[-1]
        pdf.save(held)
    assert desk.page_image(VIEWER, "visit", 1, "redacted", 500) == b"\x89PNG redacted"
    assert render.calls[-1] == ("redacted", held, 1, 500)
    assert desk.page_image(VIEWER, "visit", 1, "source", 400) == b"\x89PNG source"
    source_call: tuple[Any, ...] = render.calls[-1]
    what, source, kind, index, page, width = source_call
    assert (what, kind, index, width) == ("source", SourceKind.PDF, 0, 400)
    assert source == Path(str(_note(outdir)["input"]))
    assert isinstance(page, SheetPage)
    assert (round(page.width_pt), round(page.height_pt)) == (612, 360)  # 8.5 x 5 in
    for which in ("source", "redacted"):
        with pytest.raises(NotFound):
            desk.page_image(VIEWER, "visit", 2, which, 500)
    with pytest.raises(BadRequest):
        desk.page_image(VIEWER, "visit", 1, "source", 0)


def _review(*args: str) -> subprocess.CompletedProcess[str]:
    exe = str(Path(sys.executable).parent / "pressroom")
    return subprocess.run(
        [exe, "review", *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_review_refuses_a_host_that_is_not_loopback(outdir: Path) -> None:
    for host in ("0.0.0.0", "192.0.2.7", "example.org", "::"):
        done = _review(str(outdir / "review"), "--host", host)
        assert done.returncode == 2, done.stderr
        assert "loopback" in done.stderr and "Review desk:" not in done.stdout


def test_review_of_a_folder_with_nothing_held_says_so(tmp_path: Path, outdir: Path) -> None:
    empty = tmp_path / "review"
    empty.mkdir()
    done = _review(str(empty))
    assert done.returncode == 0 and "Nothing to review" in done.stdout
    wrong = _review(str(outdir))  # OUTDIR, not OUTDIR/review
    assert wrong.returncode == 0 and "its review/ folder does" in wrong.stdout
    missing = _review(str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "no such folder" in missing.stderr


# Stand-ins for the desk's web layer (pressroom.desk.config, .routes, .gate), installed before
# the command runs: the app answers with what it was built from, so the test sees the command's
# wiring.
_LAUNCH = """
import sys, types
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

class OneTimeGate:
    def __init__(self, token):
        self.token = token

class DeskConfig:
    def __init__(self, backend, gate, secret, **settings):
        self.backend, self.gate, self.secret = backend, gate, secret

def desk_app(config):
    async def sign_in(request):
        return JSONResponse({
            "title": config.backend.title,
            "token_ok": request.query_params.get("token") == config.gate.token,
            "secret_bytes": len(config.secret),
            "held": config.backend.stems(),
        })
    return Starlette(routes=[Route("/review/sign-in", sign_in)])

stand_ins = (("gate", ["OneTimeGate"]), ("config", ["DeskConfig"]), ("routes", ["desk_app"]))
for name, names in stand_ins:
    module = types.ModuleType("pressroom.desk." + name)
    for n in names:
        setattr(module, n, globals()[n])
    sys.modules[module.__name__] = module
from pressroom.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_review_serves_the_folder_on_the_printed_link_until_ctrl_c(outdir: Path) -> None:
    with subprocess.Popen(
        [sys.executable, "-c", _LAUNCH, "review", str(outdir / "review"), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as proc:
        _drive(proc)


def _drive(proc: subprocess.Popen[str]) -> None:
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.startswith("Review desk: http://127.0.0.1:"), first
        url = first.split(": ", 1)[1].strip()
        assert "Ctrl-C" in proc.stdout.readline()
        port = int(url.split(":")[2].split("/")[0])
        assert port > 0 and "/review/sign-in?token=" in url
        answer = httpx.get(url, timeout=30).json()
        assert answer == {
            "title": "Pressroom review (offline)",
            "token_ok": True,
            "secret_bytes": 32,
            "held": ["visit"],
        }
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_an_approved_copy_gets_the_sidecar_its_run_asked_for(
    tmp_path: Path, engine: TesseractEngine
) -> None:
    from pressroom.offline.process import OutputChoice

    source = _visit(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    outcome = process_one(
        source,
        out / "visit.pdf",
        resolve_template(None),
        "Visit",
        policy=parse_policy("name", now=0),
        settings=_settings(tmp_path, WATCH_LIST),
        template_name=None,
        review_always=True,
        output=OutputChoice(sidecar=True),
    )
    assert outcome.exit_code == 3, outcome.line  # held: the run asked for a person
    assert _note(out)["output"]["sidecar"] is True  # type: ignore[index]
    assert not (out / "visit.txt").exists()  # nothing delivered while it is held
    desk = FolderDesk(out / "review", _settings(tmp_path, WATCH_LIST), engine=engine)
    desk.approve(VIEWER, "visit")
    text = (out / "visit.txt").read_text(encoding="utf-8")
    assert "visited Lighthouse today" in " ".join(text.split())
    assert "Quillfeather" not in text  # only what remains of the redaction


def test_a_copy_placed_without_its_note_is_never_approved(
    desk: FolderDesk, outdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by a review of the background Apply: the rebuilt copy is placed, then its note
    written; when the note never follows (a full disk, the desk killed between the two), the
    desk shows the old note's boxes while approval would deliver the new copy. The note names
    its copy's digest: the page says the copy is not the one shown, and approval is refused."""
    import errno

    import pressroom.offline.folder as folder  # the note is written by the folder's format

    before = _note(outdir)
    assert isinstance(before.get("held_sha256"), str)  # every hold names its copy
    real = folder.write_json

    def full_disk(path: Path, value: Any) -> None:
        if isinstance(value, dict) and value.get("rebuilt_at") is not None:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, value)

    monkeypatch.setattr(folder, "write_json", full_disk)
    sheet = before["sheet"]
    assert isinstance(sheet, dict)
    names = [f for f in sheet["findings"] if f["class"] == "name"]
    desk.apply(VIEWER, "visit", Corrections(removed=(Area(1, tuple(names[0]["box"])),)))
    assert desk.wait("visit", timeout=300)
    assert _note(outdir)["held_sha256"] == before["held_sha256"]  # the old note stands
    item = desk.detail(VIEWER, "visit").item
    assert item.apply_failed == "HELD_COPY_MISMATCH"
    with pytest.raises(Conflict, match="not the one its note describes"):
        desk.approve(VIEWER, "visit")
    assert not (outdir / "visit.pdf").exists()
    # the page says so
    page = render(
        "rebuilding.html",
        item=item,
        rebuilding=False,
        decisions=desk.detail(VIEWER, "visit").decisions,
    )
    assert 'data-testid="apply-failed"' in page and "HELD_COPY_MISMATCH" in page
