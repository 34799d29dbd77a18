"""The desk's pages as the templates draw them (``desk.views``, autoescaped): the list of held
jobs, a job's pages with a box per line of each finding and the findings rail beside them, the
approve step's summary of what will be published, and a decision's outcome. Plain values in,
a response out: the routes (``desk.routes``) say which page a request gets."""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from fastapi.responses import HTMLResponse

from pressroom.corrections import (
    MANUAL,
    RECHECK_KINDS,
    Corrections,
    ReviewSheet,
    burned_counts,
    removed_findings,
    removed_match,
    total_counts,
    unlisted_manual,
)
from pressroom.desk.views import item_url as _item_url
from pressroom.desk.views import kind_class, render
from pressroom.deskport import HeldDetail, HeldItem, Viewer

PAGE_W = 1000  # the first picture the job page asks for (desk.js asks again for its size)
THUMB_W = 160
# an Approved.link the page offers as a download; anything else (an offline desk's path) is
# shown as text
LINK_PREFIXES = ("https://", "http://", "/v1/", "/review/")

# the folder of page templates replacing the package's, for the request being answered (set
# by the routes' DeskRoute around each request)
overrides: ContextVar[str | None] = ContextVar("desk_templates", default=None)


def _html(text: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status, headers={"Cache-Control": "no-store"})


def _who_shown(viewer: Viewer | None, token: str | None) -> dict[str, str] | None:
    if viewer is None or token is None:
        return None
    whom = {
        "operator": "operator (every tenant)",
        "offline": "this computer",
        "reviewer": f"reviewer for tenant {viewer.tenant}",
    }.get(viewer.role, f"tenant {viewer.tenant}")
    return {"whom": whom, "key_id": viewer.key_id, "token": token}


def html_page(
    name: str,
    title: str,
    heading: str,
    *,
    status: int = 200,
    viewer: Viewer | None = None,
    token: str | None = None,
    refresh: int | None = None,
    **values: Any,
) -> HTMLResponse:
    """The page template ``name`` filled in (``desk.views``, autoescaped), with who is signed
    in and the session's token where there is one; never cached."""
    text = render(
        name,
        overrides.get(),
        title=title,
        heading=heading,
        who=_who_shown(viewer, token),
        token=token,
        refresh=refresh,
        **values,
    )
    return _html(text, status)


def list_page(
    title: str, viewer: Viewer, items: list[HeldItem], token: str, now: float
) -> HTMLResponse:
    n = len(items)
    return html_page(
        "list.html",
        title,
        f"{n} held job{'s' if n != 1 else ''}",
        viewer=viewer,
        token=token,
        items=items,
        every=viewer.tenant is None,
        now=now,
    )


Points = tuple[float, float, float, float]


def _box_attr(box: Points) -> str:
    return " ".join(f"{round(v, 2):g}" for v in box)


@dataclass(slots=True)
class _Item:
    """One thing the reviewer may press on a page: a finding, a removed area no finding
    matches any more, or an every-occurrence area applied before. Drawn as one box per line
    of its words; listed once in the rail."""

    kind: str
    box: Points  # its whole box: what a removed correction sends
    parts: tuple[Points, ...]  # one box per line: what is drawn (what the build burns)
    finding: str  # the id its boxes share (``data-finding``)
    origin: str  # finding | kept | applied
    removed: bool = False
    doubt: bool = False
    counted: bool = True  # counted in what will be burned (an every area's words are)
    locked: bool = False  # burned for another correction's sake: not a toggle of its own
    group: str = ""


def _items(sheet: ReviewSheet, page: int) -> list[_Item]:
    """What stands on a page for the reviewer, in the order the rail lists it: findings (a
    removed one shown kept, as ``removed_findings`` decides for the build), removed areas no
    finding matches any more, and the every-occurrence areas applied before. A box drawn by
    hand before is a finding of class ``manual`` in the sheet: shown once, as applied."""
    applied = sheet.corrections
    gone = removed_findings(sheet)
    drawn = {a.box for a in applied.manual if a.page == page}
    out: list[_Item] = []
    matched: list[Points] = []
    for i, f in enumerate(sheet.findings):
        if f.page != page:
            continue
        removed = i in gone
        if removed:
            matched.append(f.box)
        by_hand = f.kind == MANUAL and f.box in drawn
        out.append(
            _Item(
                f.kind,
                f.box,
                f.parts,
                "",
                "applied" if by_hand else "finding",
                removed=removed,
                doubt=f.doubt,
                # the words of an every-occurrence area: burned while the area stands
                locked=f.kind == MANUAL and not by_hand,
            )
        )
    for a in unlisted_manual(sheet):
        if a.page == page:
            out.append(_Item(MANUAL, a.box, (a.box,), "", "applied"))
    for r in (a.box for a in applied.removed if a.page == page):
        if removed_match(matched, r) is None:
            out.append(_Item("finding", r, (r,), "", "kept", removed=True, counted=False))
    for a in applied.every:
        if a.page == page:
            out.append(_Item("every", a.box, (a.box,), "", "applied", counted=False))
    for n, item in enumerate(out, 1):
        prefix = {"kept": "k", "applied": "e" if item.kind == "every" else "m"}.get(
            item.origin, "f"
        )
        item.finding = f"{prefix}{page}-{n}"
    _group(out, page)
    return out


def _group(items: list[_Item], page: int) -> None:
    """Findings whose boxes overlap (an address and the postcode found inside it) form one
    group, ``g{page}-{k}``: listed together, each still its own toggle."""
    parent = list(range(len(items)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    # by the boxes of their lines: a wrapped name's whole box spans every word on the lines
    # between its two parts, which are no part of it
    for i, a in enumerate(items):
        for j in range(i + 1, len(items)):
            if any(_overlap(p, q) for p in a.parts for q in items[j].parts):
                parent[root(j)] = root(i)
    sizes: dict[int, int] = {}
    for i in range(len(items)):
        sizes[root(i)] = sizes.get(root(i), 0) + 1
    names: dict[int, str] = {}
    for i, item in enumerate(items):
        r = root(i)
        if sizes[r] > 1:
            item.group = names.setdefault(r, f"g{page}-{len(names) + 1}")


def _overlap(a: Points, b: Points) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _state(item: _Item) -> str:
    return "kept" if item.removed else "doubt" if item.doubt else "burned"


def _what(item: _Item) -> str:
    what = {"every": "every-occurrence area", MANUAL: "manual box"}.get(
        item.kind, f"{item.kind} box"
    )
    return f"doubtful {what}" if item.doubt else what


def _box(page: int, number: int, item: _Item, line: int, part: Points) -> dict[str, Any]:
    """One box over the page as the template draws it: a button with no text on it (the class
    is named in the findings rail beside the page and in the button's accessible name), one
    per line of its finding, all pressed together."""
    ident = f"{_what(item)} {number} on page {page}"
    if item.locked:
        aria = f"{ident}: burned for an every-occurrence area; remove that area to keep it"
    elif item.removed:
        aria = f"{ident}: removed, the text stays; press to redact it again"
    else:
        aria = f"{ident}: press to remove; the text stays"
    classes = (
        f"box {kind_class(item.kind)}"
        + (" doubt" if item.doubt else "")
        + (" removed" if item.removed else "")
        + (" member" if item.group else "")
    )
    return {
        "number": number,
        "line": line,
        "testid": f"box-{page}-{number}" + (f"-{line}" if line > 1 else ""),
        "kind": item.kind,
        "name": "finding" if item.origin == "kept" else item.kind,
        "origin": item.origin,
        "box": _box_attr(part),
        "removes": _box_attr(item.box),
        "finding": item.finding,
        "group": item.group,
        "counted": 1 if item.counted else 0,
        "locked": item.locked,
        "ident": ident,
        "aria": aria,
        "classes": classes,
        "removed": item.removed,
        "state": _state(item),
        "shown": "kept" if item.removed else "doubt, burned" if item.doubt else "burned",
    }


def _entry(page: int, number: int, item: _Item, members: int) -> dict[str, Any]:
    """A finding's line in the rail: its class, page and state, and the place of its words
    for a crop of the page picture (never the words themselves)."""
    return {
        "number": number,
        "testid": f"finding-{page}-{number}",
        "for": f"box-{page}-{number}",
        "kind": item.kind,
        "name": "finding" if item.origin == "kept" else item.kind,
        "finding": item.finding,
        "crop": _box_attr(item.box),
        "group": item.group,
        "members": members,
        "locked": item.locked,
        "state": _state(item),
        "shown": "kept" if item.removed else "doubt, burned" if item.doubt else "burned",
    }


def page_items(sheet: ReviewSheet, page: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The page's boxes (one per line) and its rail entries (one per item, a group's members
    together, the group's first carrying how many there are)."""
    items = _items(sheet, page)
    boxes = [
        _box(page, n, item, line, part)
        for n, item in enumerate(items, 1)
        for line, part in enumerate(item.parts, 1)
    ]
    size: dict[str, int] = {}
    for item in items:
        if item.group:
            size[item.group] = size.get(item.group, 0) + 1
    order: list[tuple[int, _Item]] = []
    placed: set[str] = set()
    numbered = list(enumerate(items, 1))
    for n, item in numbered:
        if not item.group:
            order.append((n, item))
        elif item.group not in placed:
            placed.add(item.group)
            order += [(m, other) for m, other in numbered if other.group == item.group]
    entries = []
    seen: set[str] = set()
    for n, item in order:
        first = bool(item.group) and item.group not in seen
        seen.add(item.group)
        entries.append(_entry(page, n, item, size[item.group] if first else 0))
    return boxes, entries


def _again(sheet: ReviewSheet, page: int) -> list[dict[str, Any]]:
    """What the check that held the copy found again on a page: boxes of their own kind,
    drawn over the page and listed in the rail, never a correction (pressing one changes
    nothing: what stands there is for the reviewer to see, then remove or approve)."""
    out: list[dict[str, Any]] = []
    for f in (f for f in sheet.rechecked if f.page == page):
        number = len(out) + 1
        what = RECHECK_KINDS.get(f.kind, f"{f.kind} found again on the output")
        out.append(
            {
                "number": number,
                "kind": f.kind,
                "box": _box_attr(f.box),
                "finding": f"a{page}-{number}",
                "state": "leak",
                "classes": f"box again {kind_class(f.kind)}",
                "ident": f"found again {number} on page {page}: {what}",
            }
        )
    return out


def job_page(
    title: str, viewer: Viewer, detail: HeldDetail, token: str, now: float
) -> HTMLResponse:
    item = detail.item
    url = _item_url(item.id)
    sheet = detail.sheet
    rebuilding = item.state == "rebuilding"
    count = len(sheet.pages) if sheet is not None and sheet.pages else (item.pages or 1)
    by_page = burned_counts(sheet) if sheet is not None else {}
    pages = []
    for n in range(1, count + 1):
        sp = sheet.pages[n - 1] if sheet is not None and n <= len(sheet.pages) else None
        source = f"{url}/pages/{n}/source.png"
        # the output's page cut to the page as the redaction read it (its factor and offset
        # on the output page undone): a box lies on the same words in both pictures
        output = f"{url}/pages/{n}/redacted.png" + ("?frame=sheet" if sp is not None else "")
        boxes, entries = page_items(sheet, n) if sheet is not None and sp is not None else ([], [])
        pages.append(
            {
                "n": n,
                "size": (f"{sp.width_pt:g}", f"{sp.height_pt:g}") if sp is not None else None,
                "boxes": boxes,
                "entries": entries,
                "count": sum(by_page.get(n, {}).values()),
                "again": _again(sheet, n) if sheet is not None and sp is not None else [],
                "source": source,
                "output": output,
                "first": f"{source}?w={PAGE_W}",
                "thumb": f"{source}?w={THUMB_W}",
            }
        )
    current = (sheet.corrections if sheet is not None else Corrections()).as_json()
    return html_page(
        "job.html",
        title,
        f"Job {item.label or item.id}",
        viewer=viewer,
        token=token,
        refresh=2 if rebuilding else None,
        item=item,
        now=now,
        show_tenant=viewer.tenant is None,
        decisions=detail.decisions,
        rebuilding=rebuilding,
        editable=detail.can_apply and sheet is not None,
        can_apply=detail.can_apply,
        pages=pages,
        counts=total_counts(by_page) if sheet is not None else dict(item.counts),
        by_page=[{"page": p, "counts": kinds} for p, kinds in by_page.items()],
        again=len(sheet.rechecked) if sheet is not None else 0,
        corrections_json=json.dumps(current, separators=(",", ":")),
    )


def outcome(p: Mapping[str, Any]) -> dict[str, Any]:
    link = p.get("link")
    link = link if isinstance(link, str) and link else None
    return {
        "id": str(p.get("id", "")),
        "action": str(p.get("action", "")),
        "message": str(p.get("message", "")),
        "link": link,
        "linkable": link is not None and link.startswith(LINK_PREFIXES),
    }


def published(detail: HeldDetail) -> dict[str, Any]:
    """What the held copy burns, as the approve step names it: by class over the document
    and by page (``burned_counts``, the count the desk and the held reason use)."""
    if detail.sheet is None:
        return {"counts": dict(detail.item.counts), "by_page": []}
    by_page = burned_counts(detail.sheet)
    return {
        "counts": total_counts(by_page),
        "by_page": [{"page": p, "counts": kinds} for p, kinds in by_page.items()],
    }


# what the approve step's checkbox sends for a copy a check found something again in
ACKNOWLEDGE = "leak"


def found_again(detail: HeldDetail) -> list[dict[str, Any]] | None:
    """What the check that held the copy found again, for the approve step to name, by page
    and class with counts; None when no acknowledgement is asked (no leak hold, nothing found
    again). A leak hold that knows no place (a value in the file's objects) is one line with
    no page."""
    sheet = detail.sheet
    counts = sheet.rechecked_counts() if sheet is not None else {}
    if not counts and detail.item.reason_code != "REDACTION_LEAK":
        return None
    return [
        {"page": page, "counts": dict(sorted(kinds.items()))}
        for page, kinds in sorted(counts.items())
    ]


def held_version(detail: HeldDetail) -> str:
    """Which held copy a confirmation is for: when it was held, why, after how many
    decisions (an Apply holds a new copy, and records itself)."""
    item = detail.item
    return f"{item.held_since!r}/{item.state}/{item.reason_code}/{len(detail.decisions)}"
