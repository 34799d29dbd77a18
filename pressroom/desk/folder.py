"""The offline review folder (``OUTDIR/review``) as a desk backend: what ``pressroom process``
held, shown, rebuilt with a reviewer's corrections, approved into OUTDIR or rejected. The
folder's format (the held copy, its note, the decisions) is ``offline.folder``'s.

Over 500 lines: one backend of the desk's port, each method a desk action over the folder (list,
show, draw, apply in the background, approve, reject) under the locking they share."""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pressroom.corrections import (
    Corrections,
    ReviewSheet,
    SheetPage,
    burned_counts,
    corrected_reason,
    total_counts,
)
from pressroom.deskport import (
    Approved,
    Decision,
    HeldDetail,
    HeldItem,
    Viewer,
    Which,
)
from pressroom.errors import (
    BadRequest,
    Conflict,
    Corrected,
    NotFound,
    PressroomError,
    ReviewRequired,
)
from pressroom.offline.folder import (
    APPLY_FAILED,
    APPLYING,
    DECISIONS,
    HELD_SHA256,
    INTERRUPTED,
    KEY_ID,
    MAX_WIDTH_PX,
    MISMATCH,
    NOTE_SUFFIX,
    REBUILDING,
    REBUILT_AT,
    Rebuild,
    hold,
    place_private_copy,
    place_text,
    safe_stem,
    write_json,
)
from pressroom.outcomes import Held
from pressroom.settings import Settings

if TYPE_CHECKING:
    from pressroom.pipeline.ocr import OcrEngine

log = logging.getLogger(__name__)

TITLE = "Pressroom review (offline)"


class FolderDesk:
    """A ``DeskBackend`` over one offline review folder, for the one person at this machine.
    Changes to an item (apply, approve, reject) run one at a time."""

    title = TITLE

    def __init__(
        self, folder: Path, settings: Settings, *, engine: OcrEngine | None = None
    ) -> None:
        self.folder = folder
        self.outdir = folder.parent
        self.settings = settings
        self._engine = engine
        # held by a request while it reads and changes an item (never while a rebuild runs)
        self._lock = threading.Lock()
        # the rebuilds under way, by item, with their progress (changed under ``_lock``)
        self._rebuilding: dict[str, _Rebuilding] = {}
        # rebuilds run one at a time: the OCR engine is one per process, and not thread-safe
        self._one_rebuild = threading.Lock()
        # the reason codes of rebuilds that failed, by item (also written into the note)
        self._failed: dict[str, str] = {}
        # a source's SHA-256 by path, with the size, mtime and inode it was read at
        self._hashed: dict[Path, tuple[tuple[int, int, int], str]] = {}

    # -- reading -------------------------------------------------------------------------

    def held(self, viewer: Viewer) -> list[HeldItem]:
        items = []
        for stem in self.stems():
            with contextlib.suppress(NotFound):  # decided or malformed meanwhile
                items.append(self._item(stem, self._note(stem)))
        return sorted(items, key=lambda i: (i.held_since or 0.0, i.id))

    def stems(self) -> list[str]:
        """The ids of every held document: a note with its held copy, under a safe name."""
        if not self.folder.is_dir():
            return []
        found = []
        for path in self.folder.iterdir():
            if not path.name.endswith(NOTE_SUFFIX):
                continue
            stem = path.name[: -len(NOTE_SUFFIX)]
            if safe_stem(stem) and (self.folder / f"{stem}.pdf").is_file():
                found.append(stem)
        return sorted(found)

    def unlisted(self) -> int:
        """Notes the desk cannot show: their names hold other characters (rename both files)."""
        if not self.folder.is_dir():
            return 0
        return sum(
            1
            for p in self.folder.iterdir()
            if p.name.endswith(NOTE_SUFFIX)
            and not p.name.startswith(".")
            and not safe_stem(p.name[: -len(NOTE_SUFFIX)])
        )

    def detail(self, viewer: Viewer, item_id: str) -> HeldDetail:
        note = self._note(item_id)
        item = self._item(item_id, note)
        return HeldDetail(
            item=item,
            sheet=_sheet(note),
            can_apply=item.state == "review" and self._can_apply(note),
            decisions=tuple(self._decisions(item_id)),
        )

    def page_image(
        self,
        viewer: Viewer,
        item_id: str,
        page: int,
        which: Which,
        width_px: int,
        aligned: bool = False,
    ) -> bytes:
        from pressroom.pipeline import pictures as render

        if not 1 <= width_px <= MAX_WIDTH_PX:
            raise BadRequest(f"width must be 1 to {MAX_WIDTH_PX} pixels")
        note = self._note(item_id)
        sheet = _sheet(note)
        if which == "redacted":
            held = self._held_copy(item_id)
            content = len(sheet.pages) if sheet else self._source_pages(note)
            output = _pdf_pages(held)
            if not 1 <= page <= (content or output):
                raise NotFound("no such page")
            offset = max(0, output - content) if content else 0
            frame = sheet.pages[page - 1] if aligned and sheet is not None else None
            png: bytes = render.output_page_png(held, page - 1 + offset, width_px, frame)
            return png
        if which != "source":
            raise NotFound("no such view")
        source = self._source(note)
        if sheet is not None:
            if not 1 <= page <= len(sheet.pages):
                raise NotFound("no such page")
            sheet_page = sheet.pages[page - 1]
        else:  # a note without a sheet: the page as it stands, unturned
            sheet_page = self._plain_sheet_page(source, page)
        from pressroom.pipeline.sniff import sniff_file

        png = render.source_page_png(source, sniff_file(source), page - 1, sheet_page, width_px)
        return png

    # -- deciding ------------------------------------------------------------------------

    def apply(self, viewer: Viewer, item_id: str, corrections: Corrections) -> None:
        """Check ``corrections`` (the whole set) and start the rebuild from the source with
        them, the way ``process`` builds, in the background; the answer comes at once. While
        it runs the item shows ``rebuilding`` with its progress; then a clean result is held
        again as ``CORRECTED``, a doubted one with its reason. A rebuild that fails leaves the
        item held as it was, with the failure's code in its note (``apply_failed``). A page
        or box outside the document, a source moved or changed, or a rebuild already running
        (``Conflict``) is refused here, and nothing changes."""
        with self._lock:
            if item_id in self._rebuilding:
                raise Conflict(REBUILDING)
            note = self._note(item_id)
            self._held_copy(item_id)
            rebuild = Rebuild.parse(note)
            if rebuild is None or not rebuild.policy.get("redact"):
                raise Conflict("this held copy does not say how it was made; it cannot be rebuilt")
            sheet = _sheet(note)
            if sheet is not None:  # a page or box outside the document: refused, nothing run
                sheet.check(corrections)
            source = self._source(note)
            held_at = note.get("held_at")  # held since it was first held
            run = _Rebuilding()
            self._rebuilding[item_id] = run
            self._failed.pop(item_id, None)
            try:
                # marked in the note: a desk stopped before the rebuild ends can say so
                marked = {k: v for k, v in note.items() if k != APPLY_FAILED}
                marked[APPLYING] = time.time()
                write_json(self.folder / f"{item_id}{NOTE_SUFFIX}", marked)
                self._decide("apply", item_id, corrections=corrections.counts())
                run.thread = threading.Thread(
                    target=self._run_rebuild,
                    args=(
                        item_id,
                        source,
                        rebuild,
                        corrections,
                        float(held_at) if isinstance(held_at, int | float) else None,
                        run,
                    ),
                    name=f"rebuild-{item_id}"[:60],
                    daemon=True,  # the desk stops on Ctrl-C; the held copy stays as it was
                )
                run.thread.start()
            except BaseException:
                del self._rebuilding[item_id]
                with contextlib.suppress(OSError):  # as it was: nothing was started
                    write_json(self.folder / f"{item_id}{NOTE_SUFFIX}", note)
                raise

    def wait(self, item_id: str, timeout: float | None = None) -> bool:
        """Wait for ``item_id``'s rebuild (if one runs) to end; False when it still runs after
        ``timeout`` seconds. For the command line and tests: the desk itself never waits."""
        with self._lock:
            run = self._rebuilding.get(item_id)
        if run is None or run.thread is None:
            return True
        run.thread.join(timeout)
        return not run.thread.is_alive()

    def _run_rebuild(
        self,
        item_id: str,
        source: Path,
        rebuild: Rebuild,
        corrections: Corrections,
        held_at: float | None,
        run: _Rebuilding,
    ) -> None:
        """The background half of ``apply``: one rebuild at a time, its outcome held; a
        failure kept (memory and note) and logged by its code only (never the item's name)."""
        started = time.monotonic()
        failed: str | None = None
        try:
            with self._one_rebuild:
                self._rebuild(item_id, source, rebuild, corrections, held_at, run)
        except PressroomError as exc:
            failed = exc.code
        except Exception:
            # the item's id is a file name, maybe a person's: the log says the code only
            log.exception("desk rebuild failed", extra={"code": "INTERNAL_ERROR"})
            failed = "INTERNAL_ERROR"
        finally:
            with self._lock:
                if failed is not None:
                    self._failed[item_id] = failed
                    self._note_failure(item_id, failed)
                self._rebuilding.pop(item_id, None)
        log.info(
            "desk rebuild ended",
            extra={
                "code": failed or "HELD",
                "seconds": round(time.monotonic() - started, 3),
            },
        )

    def _note_failure(self, item_id: str, code: str) -> None:
        """The failed rebuild's code in the note, so a desk started again still says it (the
        item may have gone meanwhile: then there is nothing to say it on)."""
        try:
            note = self._note(item_id)
        except NotFound:
            return
        note.pop(APPLYING, None)
        note[APPLY_FAILED] = code
        with contextlib.suppress(OSError):
            write_json(self.folder / f"{item_id}{NOTE_SUFFIX}", note)

    def approve(self, viewer: Viewer, item_id: str) -> Approved:
        """The held copy becomes ``OUTDIR/STEM.pdf`` in one step (a hard link, then the held
        name goes), never over a file already there."""
        with self._lock:
            self._not_rebuilding(item_id)
            note = self._note(item_id)
            held = self._held_copy(item_id)
            if not self._described(held, note):
                raise Conflict(
                    "the held copy is not the one its note describes (an Apply was cut short "
                    "after the copy was placed): apply the corrections again, or reject it"
                )
            dest = self.outdir / f"{item_id}.pdf"
            rebuild = Rebuild.parse(note)
            sheet = _sheet(note)
            text = None
            if rebuild is not None and rebuild.output.get("sidecar") and sheet is not None:
                from pressroom.pipeline.sidecar import held_sidecar

                text = held_sidecar(held, sheet)  # read before the held copy moves
                if dest.with_suffix(".txt").exists():
                    raise Conflict(f"{dest.with_suffix('.txt').name} is already there")
            _deliver(held, dest)
            if text is not None:
                place_text(text, dest.with_suffix(".txt"))
            self._remove(item_id)
            self._decide("approve", item_id)
            return Approved(f"Delivered as {dest}.")

    def reject(self, viewer: Viewer, item_id: str) -> None:
        with self._lock:
            self._not_rebuilding(item_id)
            self._note(item_id)
            self._held_copy(item_id)
            self._remove(item_id)
            self._decide("reject", item_id)

    def _not_rebuilding(self, item_id: str) -> None:
        """A decision waits for the rebuild under way: what it would decide is about to be
        replaced."""
        if item_id in self._rebuilding:
            raise Conflict(f"{REBUILDING}: the copy you would decide on is about to be replaced")

    # -- the parts -----------------------------------------------------------------------

    def _note(self, item_id: str) -> dict[str, Any]:
        if not safe_stem(item_id):
            raise NotFound("no such held document")
        try:
            raw = (self.folder / f"{item_id}{NOTE_SUFFIX}").read_text(encoding="utf-8")
            note = json.loads(raw)
        except (FileNotFoundError, NotADirectoryError):
            raise NotFound("no such held document") from None
        except (OSError, ValueError):
            raise NotFound("the held document's note cannot be read") from None
        if not isinstance(note, dict):
            raise NotFound("the held document's note cannot be read")
        return note

    def _held_copy(self, item_id: str) -> Path:
        held = self.folder / f"{item_id}.pdf"
        if not held.is_file():
            raise NotFound("no held copy for this document")
        return held

    def _item(self, item_id: str, note: Mapping[str, Any]) -> HeldItem:
        self._held_copy(item_id)
        sheet = _sheet(note)
        counts: dict[str, int] = {}
        kinds = (
            [f.kind for f in sheet.findings]
            if sheet is not None
            else [str(f.get("class")) for f in note.get("findings") or [] if isinstance(f, dict)]
        )
        for kind in kinds:
            counts[kind] = counts.get(kind, 0) + 1
        held_at = note.get("held_at")
        if not isinstance(held_at, int | float):
            held_at = (self.folder / f"{item_id}{NOTE_SUFFIX}").stat().st_mtime
        run = self._rebuilding.get(item_id)
        failed = self._failed.get(item_id) or note.get(APPLY_FAILED)
        if not failed and note.get(APPLYING) is not None and run is None:
            failed = INTERRUPTED  # applied, and neither held again nor failed: stopped meanwhile
        if run is None and not self._described(self.folder / f"{item_id}.pdf", note):
            failed = MISMATCH  # what the page shows is not what approval would deliver
        rebuilt_at = note.get(REBUILT_AT)
        return HeldItem(
            id=item_id,
            tenant=None,
            reason_code=str(note.get("code") or ReviewRequired.code),
            reason=str(note.get("reason") or ""),
            counts=counts,
            burned=total_counts(burned_counts(sheet)) if sheet is not None else None,
            pages=len(sheet.pages) if sheet is not None else None,
            held_since=float(held_at),
            deadline=None,
            state="rebuilding" if run is not None else "review",
            progress=run.progress if run is not None else None,
            apply_failed=str(failed) if failed and run is None else None,
            rebuilt_at=(
                float(rebuilt_at)
                if isinstance(rebuilt_at, int | float) and run is None and not failed
                else None
            ),
        )

    def _described(self, held: Path, note: Mapping[str, Any]) -> bool:
        """Whether ``held`` is the copy ``note`` describes (its SHA-256, hashed once per
        size, mtime and inode). A note from before the digest was kept is taken as it is."""
        from pressroom.pipeline.inspect import file_sha256

        wanted = note.get(HELD_SHA256)
        if not isinstance(wanted, str):
            return True
        try:
            facts = held.stat()
        except FileNotFoundError:
            return False
        seen = (facts.st_size, facts.st_mtime_ns, facts.st_ino)
        known = self._hashed.get(held)
        if known is None or known[0] != seen:
            known = (seen, file_sha256(held))
            self._hashed[held] = known
        return known[1] == wanted

    def _can_apply(self, note: Mapping[str, Any]) -> bool:
        rebuild = Rebuild.parse(note)
        if rebuild is None or not rebuild.policy.get("redact"):
            return False
        try:
            self._source(note)
        except (NotFound, Conflict):
            return False
        return True

    def _source(self, note: Mapping[str, Any]) -> Path:
        """The source the held copy was made from, as it was: refused once moved or changed
        (its boxes would no longer lie on it)."""
        from pressroom.pipeline.inspect import file_sha256

        rebuild = Rebuild.parse(note)
        if rebuild is None or not rebuild.input.is_file():
            raise NotFound("the source file is no longer where it was processed from")
        if rebuild.input_sha256:
            facts = rebuild.input.stat()
            seen = (facts.st_size, facts.st_mtime_ns, facts.st_ino)
            known = self._hashed.get(rebuild.input)
            if known is None or known[0] != seen:  # hashed once, not once per page drawn
                known = (seen, file_sha256(rebuild.input))
                self._hashed[rebuild.input] = known
            if known[1] != rebuild.input_sha256:
                raise Conflict("the source file has changed since it was processed")
        return rebuild.input

    def _source_pages(self, note: Mapping[str, Any]) -> int:
        """The content pages of a note without a sheet: the source's (0 when it is gone)."""
        from pressroom.pipeline.inspect import inspect_source

        try:
            return len(inspect_source(self._source(note), self.settings.limits).pages)
        except (NotFound, Conflict):
            return 0

    def _plain_sheet_page(self, source: Path, page: int) -> SheetPage:
        from pressroom.pipeline.inspect import inspect_source

        pages = inspect_source(source, self.settings.limits).pages
        if not 1 <= page <= len(pages):
            raise NotFound("no such page")
        info = pages[page - 1]
        return SheetPage(info.width_pt, info.height_pt)

    def _engine_for(self) -> OcrEngine:
        if self._engine is None:
            from pressroom.engines.tesseract import TesseractEngine

            self._engine = TesseractEngine(
                languages=self.settings.languages, tessdata_prefix=self.settings.tessdata_prefix
            )
        return self._engine

    def _rebuild(
        self,
        item_id: str,
        source: Path,
        rebuild: Rebuild,
        corrections: Corrections,
        held_at: float | None,
        run: _Rebuilding | None = None,
    ) -> None:
        from pressroom.pipeline.core import JobOptions
        from pressroom.processing import Processing
        from pressroom.redact.detect.registry import check_policy_classes
        from pressroom.redact.policy import parse_policy
        from pressroom.scratch import job_scratch
        from pressroom.templates import resolve_template

        now = time.time()
        classes = [str(c) for c in rebuild.policy.get("redact") or []]
        expires = rebuild.policy.get("expires_at")
        policy = parse_policy(
            ",".join(classes), str(expires) if expires is not None else None, now=now
        )
        check_policy_classes(policy.classes, self.settings.redaction)
        template = resolve_template(rebuild.template, self.settings.template_dirs)
        order = rebuild.order(policy.classes, corrections)
        options = JobOptions.of(order, template, self.settings, title=rebuild.title)
        processing = Processing(policy)
        with job_scratch(self.settings.scratch_dir) as scratch:
            built = scratch / "output.pdf"
            from pressroom.pipeline.ocr import engine_for

            done = processing(
                source,
                built,
                options,
                engine_for(self._engine_for(), options.languages),
                progress=run.step if run is not None else None,
            )
            if isinstance(done, Held):  # held again, with the reason its checks give
                with self._lock:
                    hold(
                        self.folder,
                        item_id,
                        built,
                        done,
                        rebuild,
                        now=held_at,
                        keep_previous=True,
                        rebuilt_at=time.time(),
                    )
                return
            corrected = Corrected(
                corrected_reason(
                    corrections,
                    sum(done.redacted.values()),
                    done.overridden,
                    sheet=done.sheet,  # what is burned, counted as the desk counts it
                )
            )
            with self._lock:
                hold(
                    self.folder,
                    item_id,
                    built,
                    Held(corrected, sheet=done.sheet),
                    rebuild,
                    now=held_at,
                    rebuilt_at=time.time(),
                )

    def _remove(self, item_id: str) -> None:
        """The note first (the item is gone from the list at once), then the held copy."""
        (self.folder / f"{item_id}{NOTE_SUFFIX}").unlink(missing_ok=True)
        (self.folder / f"{item_id}.pdf").unlink(missing_ok=True)

    def _decide(self, action: str, item_id: str, **extra: Any) -> None:
        line = {"action": action, "at": time.time(), "key_id": KEY_ID, "item": item_id, **extra}
        path = self.folder / DECISIONS
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.fchmod(fd, 0o600)
            # one write of one whole line: an append is never interleaved with another's
            os.write(fd, (json.dumps(line, ensure_ascii=False) + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    def _decisions(self, item_id: str) -> Iterator[Decision]:
        try:
            lines = (self.folder / DECISIONS).read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return
        for raw in lines:
            try:
                entry = json.loads(raw)
            except ValueError:
                continue  # a line cut short by a crash: the others still count
            if isinstance(entry, dict) and entry.get("item") == item_id:
                yield Decision(
                    str(entry.get("action")),
                    float(entry.get("at") or 0.0),
                    str(entry.get("key_id") or KEY_ID),
                )


class _Rebuilding:
    """One rebuild under way: its thread, and how far it got (told by the redaction, page by
    page, from the rebuild's thread; read by the desk's requests)."""

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.progress: tuple[int, int] | None = None

    def step(self, done: int, total: int) -> None:
        self.progress = (done, total)  # one tuple, replaced whole: a reader sees a pair


def _deliver(held: Path, dest: Path) -> None:
    """``held`` appears whole at ``dest`` (0644, as `process` delivers), never over a file
    already there: a hard link is one step; where the file system has none, the name is taken
    first (empty) and a full copy then moved over it."""
    taken = "the output folder already has a file of this name; move it away, then approve again"
    try:
        os.link(held, dest)
    except FileExistsError:
        raise Conflict(taken) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EXDEV, errno.ENOTSUP, errno.EMLINK):
            raise
        try:
            os.close(os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            raise Conflict(taken) from None
        try:
            place_private_copy(held, dest)
        except BaseException:
            dest.unlink(missing_ok=True)
            raise
    try:
        dest.chmod(0o644)
    except BaseException:
        dest.unlink(missing_ok=True)
        raise


def _sheet(note: Mapping[str, Any]) -> ReviewSheet | None:
    raw = note.get("sheet")
    if not isinstance(raw, dict):
        return None
    try:
        return ReviewSheet.parse(raw)
    except (KeyError, TypeError, ValueError, BadRequest):
        return None


def _pdf_pages(path: Path) -> int:
    import pikepdf

    with pikepdf.open(path) as pdf:
        return len(pdf.pages)
