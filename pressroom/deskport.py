"""The desk's port: what the reviewer's pages (``desk/``) need from whoever holds the jobs —
the service's store and blobs (``deskstore``) or an offline review folder (``desk.folder``).
It sits below both: the pages know only this protocol, the backends implement it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from pressroom.corrections import Corrections, ReviewSheet

Which = Literal["source", "redacted"]


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who is at the desk: ``tenant`` None sees every tenant's held jobs (an operator, or the
    one person at an offline desk); ``key_id`` is recorded with each decision."""

    tenant: str | None
    key_id: str
    role: str  # tenant | reviewer | operator | offline


@dataclass(frozen=True, slots=True)
class HeldItem:
    """One held job as the list shows it: codes, classes and counts, never document text."""

    id: str  # a job id, or an offline held file's name without .pdf
    tenant: str | None
    reason_code: str
    reason: str  # the check's message: counts and pages, never values
    counts: dict[str, int]  # findings by class
    pages: int | None
    held_since: float | None  # epoch seconds
    deadline: float | None  # epoch seconds by which it must be decided (None: none)
    state: Literal["review", "rebuilding"] = "review"
    label: str | None = None  # the client's name for it (a file name, a case number)
    title: str | None = None
    # what the held copy burns, by class (``corrections.burned_counts``: a removed finding
    # left out); None where there is no review sheet to count from
    burned: dict[str, int] | None = None
    # while rebuilding: (steps done, steps in all) as the redaction reports them — it reads
    # every page, then builds every page, so a document of N pages has 2N steps; None before
    # the first page is done (waiting for a worker, or for another rebuild to finish)
    progress: tuple[int, int] | None = None
    # the reason code of the last Apply when its rebuild failed (the item held as it was
    # before); None when it did not, or while a rebuild runs
    apply_failed: str | None = None
    # when the copy held now was rebuilt with the reviewer's corrections (epoch seconds);
    # None when the held copy is not the outcome of the last Apply
    rebuilt_at: float | None = None

    @property
    def rebuild_step(self) -> tuple[str, int, int] | None:
        """The progress in words a page understands: ("reading" | "building", page, pages);
        None when there is none to show."""
        if self.progress is None:
            return None
        done, total = self.progress
        if total <= 0:
            return None
        if total % 2 or (self.pages and total != 2 * self.pages):
            return ("processing", min(done, total), total)  # not a redaction's two passes
        pages = total // 2
        if done <= pages:
            return ("reading", max(done, 1), pages)
        return ("building", min(done - pages, pages), pages)


@dataclass(frozen=True, slots=True)
class Decision:
    action: str  # approve | reject | apply
    at: float
    key_id: str
    role: str | None = None


@dataclass(frozen=True, slots=True)
class HeldDetail:
    item: HeldItem
    sheet: ReviewSheet | None  # None: nothing to draw (a hold that found nothing, say)
    can_apply: bool  # the source is still there to rebuild from
    decisions: tuple[Decision, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class Approved:
    """Where the approved output went: a download link (service) or a path (offline)."""

    message: str
    link: str | None = None


@dataclass(frozen=True, slots=True)
class DeadItem:
    """A dead-lettered job as the redrive step names it: codes and counts, no document data
    (the label is the client's own name for it)."""

    id: str
    tenant: str
    lane: str
    label: str | None
    reason_code: str
    attempts: int
    failed_at: float | None


class DeskBackend(Protocol):
    """Every method raises ``NotFound`` for an item the viewer may not see or that is no
    longer held, and runs blocking work (the web layer calls it from a thread)."""

    title: str  # shown in the page header, e.g. "Pressroom review"

    def held(self, viewer: Viewer) -> list[HeldItem]: ...

    def detail(self, viewer: Viewer, item_id: str) -> HeldDetail: ...

    def page_image(
        self,
        viewer: Viewer,
        item_id: str,
        page: int,
        which: Which,
        width_px: int,
        aligned: bool = False,
    ) -> bytes:
        """PNG of content page ``page`` (from 1): the source as the redaction read it (upright
        and levelled, so the sheet's boxes lie on it), or the held output's page — as it is,
        or ``aligned``: cut and scaled to the sheet page's frame (its placement undone)."""
        ...

    def apply(self, viewer: Viewer, item_id: str, corrections: Corrections) -> None:
        """Rebuild through the redaction path with ``corrections`` (the whole set, replacing
        what was applied before); the item is held again with the new output, or with the
        reason its checks give."""
        ...

    def approve(self, viewer: Viewer, item_id: str) -> Approved: ...

    def reject(self, viewer: Viewer, item_id: str) -> None: ...


@runtime_checkable
class DeadLetters(Protocol):
    """An operator's redrive, where the desk runs over a service (the offline desk has no
    queue). ``viewer`` must be an operator's; every method raises ``Forbidden`` otherwise, and
    ``NotFound`` for a job that is not dead-lettered."""

    def dead_letter(self, viewer: Viewer, item_id: str) -> DeadItem: ...

    def redrive(self, viewer: Viewer, item_id: str) -> None:
        """Send it round again, attempts reset; ``Conflict`` when it can no longer be."""
        ...
