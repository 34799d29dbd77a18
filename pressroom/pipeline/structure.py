"""What an archive keeps of a source besides its pages: title and document information,
language, outlines (bookmarks), named destinations, links, page labels.

An output's pages are new pages that draw the source's pages (``pipeline.output``), and
everything of the source's catalog is dropped before it is written: nothing the source carries
comes along unless it is read here into plain values and written again onto the new pages. So
a carrier is never copied as the source wrote it: an outline item keeps its title and where it
goes, a link its area and its URI or target, and nothing else (no script, no other action, no
appearance). Targets and areas are mapped through each page's placement (its crop box and
/Rotate, the turn that set it upright, the scale and offset that made room for the bands),
so a link lands on the same spot it did in the source. A tagged source's structure tree is
made anew too (``keep_tree``): its elements of the keys a structure element defines and
plain attribute values only, and not at all past ``MAX_ELEMENTS`` nodes. /Lang is kept only
where it is a language tag.

The values are JSON-able: a page range written as a part of a split document carries them in
its part file (``embed`` / ``embedded``), and the range's assembly writes them as a whole
document's build does, so a split document is the same bytes.

Over 500 lines: one concept, a source's carriers read into plain values and written again onto
new pages; six carriers, each read and written with the same placement maths."""

from __future__ import annotations

import itertools
import json
import math
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from decimal import Decimal
from typing import Any

import pikepdf
from pikepdf import Array, Dictionary, Name, String

from pressroom.engines.pdfstr import text_of
from pressroom.engines.prune import is_tagged
from pressroom.pipeline.geometry import Matrix, PageLayout, compose, turn_cw

# a hostile file may nest or chain its outline, names and labels without end
MAX_ITEMS = 5000
MAX_DEPTH = 32
_KINDS = ("/XYZ", "/Fit", "/FitH", "/FitV", "/FitR", "/FitB", "/FitBH", "/FitBV")
_STYLES = ("/D", "/R", "/r", "/A", "/a")
_SWAP = {"/FitH": "/FitV", "/FitBH": "/FitBV", "/FitV": "/FitH", "/FitBV": "/FitBH"}
# a language tag (RFC 3066 as PDF uses it: en, en-GB, x-klingon); any other /Lang goes
_LANG = re.compile(r"[A-Za-z]{1,8}(-[A-Za-z0-9]{1,8})*")
# where the embedded values live in a part file's catalog (never in an output)
PART_KEY = "/PressroomStructure"


@dataclass(frozen=True, slots=True)
class Target:
    """A place in the document: a source page (from 0), a view kind (/XYZ, /FitH, …) and
    its numbers in the source page's space (None: unchanged)."""

    page: int
    kind: str
    args: tuple[float | None, ...] = ()


@dataclass(frozen=True, slots=True)
class Outline:
    """One bookmark: its title, where it goes (a target, a named destination or a URI),
    whether it shows its children, and its children."""

    title: str
    target: Target | None = None
    name: str | None = None  # a named destination (resolved into ``target`` too)
    uri: str | None = None
    open: bool = False
    children: tuple[Outline, ...] = ()


@dataclass(frozen=True, slots=True)
class Link:
    """A link annotation of a source page: its area (and quadrilaterals) in the page's space,
    where it goes."""

    page: int
    rect: tuple[float, float, float, float]
    quads: tuple[float, ...] = ()
    target: Target | None = None
    name: str | None = None
    uri: str | None = None
    key: int | None = None  # its /StructParent: its place in a tagged document's tree


@dataclass(frozen=True, slots=True)
class Label:
    """A page label range: from source page ``start`` (from 0), numbered in ``style`` (a
    PDF name, or None for a prefix only), after ``prefix``, from ``first``."""

    start: int
    style: str | None
    prefix: str = ""
    first: int = 1


@dataclass(frozen=True, slots=True)
class Frame:
    """A source page's crop box and own /Rotate: its space onto its displayed frame."""

    box: tuple[float, float, float, float]
    rotate: int = 0


@dataclass(frozen=True, slots=True)
class Carriers:
    """What a source carries besides its pages, as plain values."""

    title: str | None = None
    author: str | None = None
    subject: str | None = None
    keywords: str | None = None
    lang: str | None = None
    display_title: bool = False
    outlines: tuple[Outline, ...] = ()
    dests: tuple[tuple[str, Target], ...] = ()  # named destinations, by name
    links: tuple[Link, ...] = ()
    labels: tuple[Label, ...] = ()
    frames: tuple[Frame, ...] = ()
    tagged: bool = False  # the source has a structure tree (kept: keep_tree / place_tree)
    show_outlines: bool = False  # a viewer opens with the bookmarks shown (/PageMode)
    # what was dropped from these (a redaction's carriers holding a found value): kinds
    dropped: tuple[str, ...] = field(default=())

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str) -> Carriers:
        data = json.loads(raw)

        def target(t: Any) -> Target | None:
            return None if t is None else Target(int(t["page"]), str(t["kind"]), tuple(t["args"]))

        def outline(o: Any) -> Outline:
            return Outline(
                o["title"],
                target(o["target"]),
                o["name"],
                o["uri"],
                bool(o["open"]),
                tuple(outline(c) for c in o["children"]),
            )

        return cls(
            title=data["title"],
            author=data["author"],
            subject=data["subject"],
            keywords=data["keywords"],
            lang=data["lang"],
            display_title=bool(data["display_title"]),
            outlines=tuple(outline(o) for o in data["outlines"]),
            dests=tuple((str(n), t) for n, raw_t in data["dests"] if (t := target(raw_t))),
            links=tuple(
                Link(
                    int(k["page"]),
                    (k["rect"][0], k["rect"][1], k["rect"][2], k["rect"][3]),
                    tuple(k["quads"]),
                    target(k["target"]),
                    k["name"],
                    k["uri"],
                    k["key"],
                )
                for k in data["links"]
            ),
            labels=tuple(
                Label(int(b["start"]), b["style"], b["prefix"], int(b["first"]))
                for b in data["labels"]
            ),
            frames=tuple(
                Frame((f["box"][0], f["box"][1], f["box"][2], f["box"][3]), int(f["rotate"]))
                for f in data["frames"]
            ),
            tagged=bool(data["tagged"]),
            show_outlines=bool(data["show_outlines"]),
            dropped=tuple(data["dropped"]),
        )

    def texts(self) -> Iterator[str]:
        """Every piece of text these carriers put into an output: for a leak check."""
        for value in (self.title, self.author, self.subject, self.keywords):
            if value:
                yield value
        for item in _walk(self.outlines):
            yield item.title
            if item.uri:
                yield item.uri
            if item.name:
                yield item.name
        for name, _t in self.dests:
            yield name
        for link in self.links:
            if link.uri:
                yield link.uri
            if link.name:
                yield link.name
        for label in self.labels:
            if label.prefix:
                yield label.prefix

    def only(self, keep: Callable[[str], bool]) -> Carriers:
        """These carriers with each one holding text ``keep`` refuses dropped (fail closed:
        an outline item goes with its children, a link whole), the kinds dropped named."""
        dropped: list[str] = []

        def note(kind: str) -> None:
            if kind not in dropped:
                dropped.append(kind)

        info: dict[str, str | None] = {}
        for key in ("title", "author", "subject", "keywords"):
            value = getattr(self, key)
            if value and not keep(value):
                note(key)
                value = None
            info[key] = value
        dests = tuple((n, t) for n, t in self.dests if keep(n))
        if len(dests) != len(self.dests):
            note("destinations")
        names = {n for n, _t in dests}

        def outline(items: tuple[Outline, ...]) -> tuple[Outline, ...]:
            out = []
            for item in items:
                texts = [item.title, item.uri or ""]
                if not all(keep(t) for t in texts if t):
                    note("outlines")
                    continue
                name = item.name if item.name in names else None
                out.append(replace(item, name=name, children=outline(item.children)))
            return tuple(out)

        links = []
        for link in self.links:
            if link.uri and not keep(link.uri):
                note("links")
                continue
            links.append(replace(link, name=link.name if link.name in names else None))
        labels = []
        for label in self.labels:
            if label.prefix and not keep(label.prefix):
                note("page labels")
                label = replace(label, prefix="")
            labels.append(label)
        return replace(
            self,
            title=info["title"],
            author=info["author"],
            subject=info["subject"],
            keywords=info["keywords"],
            outlines=outline(self.outlines),
            dests=dests,
            links=tuple(links),
            labels=tuple(labels),
            dropped=tuple(dropped),
        )


def _walk(items: Sequence[Outline]) -> Iterator[Outline]:
    for item in items:
        yield item
        yield from _walk(item.children)


# ---------------------------------------------------------------- reading a source


def _num(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _text(value: object) -> str | None:
    if not isinstance(value, String):
        return None
    text = text_of(value).strip()
    return text or None


def _plain(value: object) -> str | None:
    """A string's text without control characters (a title's line break is a space)."""
    text = _text(value)
    if text is None:
        return None
    return "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in text).strip() or None


def _title(value: object) -> str:
    """An outline item's title as it is (a space stays a space), control characters as
    spaces."""
    if not isinstance(value, String):
        return ""
    return "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in text_of(value))


def _name(name: object) -> str:
    """A name's text without its slash, any #xx escape left in it decoded (a name made as
    ``/Chapter#201`` is "Chapter 1", as a viewer's #nameddest= and the redaction's checks
    read it)."""
    text = text_of(name)[1:]
    if "#" not in text:
        return text
    raw = re.sub(rb"#([0-9A-Fa-f]{2})", lambda m: bytes([int(m[1], 16)]), text.encode("utf-8"))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


class _Reader:
    def __init__(self, pdf: pikepdf.Pdf) -> None:
        self.pdf = pdf
        self.pages = {page.obj.objgen: i for i, page in enumerate(pdf.pages)}
        self.count = 0

    def budget(self) -> bool:
        self.count += 1
        return self.count <= MAX_ITEMS

    def target(self, dest: object) -> Target | None:
        if isinstance(dest, Dictionary):  # a named destination's value may be << /D [...] >>
            dest = dest.get("/D")
        if not isinstance(dest, Array) or len(dest) < 2:
            return None
        page, kind = dest[0], dest[1]
        if not isinstance(page, Dictionary) or not page.is_indirect:
            return None
        index = self.pages.get(page.objgen)
        if index is None or not isinstance(kind, Name) or str(kind) not in _KINDS:
            return None
        return Target(index, str(kind), tuple(_num(v) for v in list(dest)[2:6]))

    def names(self) -> dict[str, Target]:
        found: dict[str, Target] = {}
        old = self.pdf.Root.get("/Dests")
        if isinstance(old, Dictionary):
            for key in sorted(old.keys()):
                if not self.budget():
                    break
                target = self.target(old[key])
                if target is not None:
                    found[_name(key)] = target
        names = self.pdf.Root.get("/Names")
        tree = names.get("/Dests") if isinstance(names, Dictionary) else None
        if isinstance(tree, Dictionary):
            try:
                for key, value in pikepdf.NameTree(tree).items():
                    if not self.budget():
                        break
                    target = self.target(value)
                    if target is not None:
                        found.setdefault(key, target)
            except (pikepdf.PdfError, ValueError, TypeError, RecursionError):
                pass
        return found

    def goes(
        self, node: Dictionary, named: dict[str, Target]
    ) -> tuple[Target | None, str | None, str | None]:
        """Where an outline item or a link goes: (target, name, uri); all None for anything
        but a destination, a GoTo or a URI action (a script, a launch: dropped)."""
        dest = node.get("/Dest")
        action = node.get("/A")
        if dest is None and isinstance(action, Dictionary):
            kind = action.get("/S")
            if kind == Name.URI:
                uri = _text(action.get("/URI"))
                return None, None, uri
            if kind == Name.GoTo:
                dest = action.get("/D")
        if isinstance(dest, String | Name):
            name = _name(dest) if isinstance(dest, Name) else text_of(dest)
            target = named.get(name)
            return (target, name, None) if target is not None else (None, None, None)
        return self.target(dest), None, None

    def outlines(self, named: dict[str, Target]) -> tuple[Outline, ...]:
        root = self.pdf.Root.get("/Outlines")
        if not isinstance(root, Dictionary):
            return ()
        seen: set[tuple[int, int]] = set()

        def level(first: object, depth: int) -> tuple[Outline, ...]:
            items: list[Outline] = []
            node = first
            while isinstance(node, Dictionary) and depth < MAX_DEPTH and self.budget():
                if node.is_indirect:
                    if node.objgen in seen:
                        break
                    seen.add(node.objgen)
                title = _title(node.get("/Title"))
                target, name, uri = self.goes(node, named)
                count = _num(node.get("/Count")) or 0
                children = level(node.get("/First"), depth + 1)
                items.append(Outline(title, target, name, uri, count > 0, children))
                node = node.get("/Next")
            return tuple(items)

        return level(root.get("/First"), 0)

    def links(self, named: dict[str, Target]) -> tuple[Link, ...]:
        return tuple(link for link, _objgen in self.link_objects(named))

    def link_objects(self, named: dict[str, Target]) -> list[tuple[Link, tuple[int, int]]]:
        """The links kept, each with its annotation's object (for the structure tree)."""
        found: list[tuple[Link, tuple[int, int]]] = []
        for index, page in enumerate(self.pdf.pages):
            annots = page.obj.get("/Annots")
            if not isinstance(annots, Array):
                continue
            for annot in annots:
                if not isinstance(annot, Dictionary) or annot.get("/Subtype") != Name.Link:
                    continue
                if not self.budget():
                    return found
                rect = [_num(v) for v in annot.get("/Rect", Array())]
                if len(rect) != 4 or any(v is None for v in rect):
                    continue
                target, name, uri = self.goes(annot, named)
                if target is None and uri is None:
                    continue
                quads_raw = [_num(v) for v in annot.get("/QuadPoints", Array())]
                quads = tuple(v for v in quads_raw if v is not None)
                if len(quads) != len(quads_raw) or len(quads) % 8:
                    quads = ()
                x0, y0, x1, y1 = (float(v or 0.0) for v in rect)
                box = (min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1))
                key = annot.get("/StructParent")
                key = key if isinstance(key, int) and not isinstance(key, bool) else None
                link = Link(index, box, quads, target, name, uri, key)
                found.append((link, annot.objgen))
        return found

    def labels(self) -> tuple[Label, ...]:
        tree = self.pdf.Root.get("/PageLabels")
        if not isinstance(tree, Dictionary):
            return ()
        found = []
        try:
            entries = list(pikepdf.NumberTree(tree).items())
        except (pikepdf.PdfError, ValueError, TypeError, RecursionError):
            return ()
        for start, value in entries[:MAX_ITEMS]:
            if not isinstance(value, Dictionary) or not 0 <= start < len(self.pdf.pages):
                continue
            style = value.get("/S")
            first = _num(value.get("/St"))
            found.append(
                Label(
                    int(start),
                    str(style) if isinstance(style, Name) and str(style) in _STYLES else None,
                    _plain(value.get("/P")) or "",
                    max(1, int(first)) if first is not None else 1,
                )
            )
        return tuple(sorted(found, key=lambda b: b.start))


def _true(value: object) -> bool:
    return isinstance(value, bool) and value


def _frame(page: pikepdf.Page) -> Frame:
    x0, y0, x1, y1 = (float(v) for v in page.cropbox)
    rotate = _num(page.obj.get("/Rotate")) or 0
    return Frame((x0, y0, x1, y1), round(rotate / 90.0) * 90 % 360)


def _xmp(pdf: pikepdf.Pdf) -> dict[str, str]:
    """The XMP's title, description, keywords and creators, where it has them."""
    found: dict[str, str] = {}
    # a source's XMP that does not parse (or parses with complaints) carries nothing
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            meta = pdf.open_metadata()
            for key in ("dc:title", "dc:description", "pdf:Keywords", "dc:creator"):
                value = meta.get(key)
                if isinstance(value, list):
                    value = "; ".join(str(v) for v in value)
                if isinstance(value, str) and value.strip():
                    found[key] = value.strip()
        except Exception:
            return {}
    return found


def read_carriers(pdf: pikepdf.Pdf) -> Carriers:
    """What ``pdf`` carries besides its pages. Anything malformed is left out, never
    refused: the pages are what the job delivers."""
    reader = _Reader(pdf)
    info = pdf.trailer.get("/Info")
    info = info if isinstance(info, Dictionary) else Dictionary()
    xmp = _xmp(pdf)
    root = pdf.Root
    prefs = root.get("/ViewerPreferences")
    lang = _lang(root.get("/Lang"))
    named = reader.names()
    return Carriers(
        title=_plain(info.get("/Title")) or xmp.get("dc:title"),
        author=_plain(info.get("/Author")) or xmp.get("dc:creator"),
        subject=_plain(info.get("/Subject")) or xmp.get("dc:description"),
        keywords=_plain(info.get("/Keywords")) or xmp.get("pdf:Keywords"),
        lang=lang,
        display_title=isinstance(prefs, Dictionary) and _true(prefs.get("/DisplayDocTitle")),
        outlines=reader.outlines(named),
        dests=tuple(sorted(named.items())),
        links=reader.links(named),
        labels=reader.labels(),
        frames=tuple(_frame(page) for page in pdf.pages),
        # a tree past MAX_ELEMENTS nodes is not kept: the output is then not tagged
        tagged=is_tagged(pdf) and tree_size(pdf) <= MAX_ELEMENTS,
        show_outlines=root.get("/PageMode") == Name.UseOutlines,
    )


_INTENT_KEYS = (
    "/Type",
    "/S",
    "/OutputCondition",
    "/OutputConditionIdentifier",
    "/RegistryName",
    "/Info",
    "/DestOutputProfile",
)


def output_intents(pdf: pikepdf.Pdf) -> Array | None:
    """The source's output intents, each made again of the keys that say what it is (its
    condition, its ICC profile): nothing else of the source's rides along."""
    found = pdf.Root.get("/OutputIntents")
    if not isinstance(found, Array):
        return None
    intents = Array()
    for intent in list(found)[:8]:
        if not isinstance(intent, Dictionary) or not isinstance(intent.get("/S"), Name):
            continue
        profile = intent.get("/DestOutputProfile")
        if profile is not None and not isinstance(profile, pikepdf.Stream):
            continue
        intents.append(Dictionary({k: intent[k] for k in _INTENT_KEYS if k in intent}))
    return intents if len(intents) else None


def embed(pdf: pikepdf.Pdf, carriers: Carriers) -> None:
    """``carriers`` kept in a part file for the assembly of the whole."""
    pdf.Root[PART_KEY] = pdf.make_stream(carriers.to_json().encode())


def embedded(pdf: pikepdf.Pdf) -> Carriers | None:
    stream = pdf.Root.get(PART_KEY)
    if not isinstance(stream, pikepdf.Stream):
        return None
    try:
        return Carriers.from_json(stream.read_bytes().decode())
    except (ValueError, KeyError, TypeError, IndexError):
        return None


# ---------------------------------------------------------------- writing an output


@dataclass(frozen=True, slots=True)
class Placed:
    """A content page of the output: the source page it shows (from 0), its index in the
    output, how the source sits on it, and the turn that set it upright (clockwise)."""

    source: int
    output: int
    layout: PageLayout
    rotation: int


def placement(frame: Frame, layout: PageLayout, rotation: int) -> Matrix:
    """Source page space onto the output page, as ``OutputBuilder.add_page`` placed it (a
    page levelled by a small angle is taken as placed level: its links move by a hair)."""
    x0, y0, x1, y1 = frame.box
    own, (w, h) = turn_cw(frame.rotate, x1 - x0, y1 - y0)
    upright, _size = turn_cw(rotation, w, h)
    left, bottom, _r, _t = layout.content
    k = layout.scale
    return compose(
        compose(compose((1.0, 0.0, 0.0, 1.0, -x0, -y0), own), upright),
        (k, 0.0, 0.0, k, left, bottom),
    )


def _apply(m: Matrix, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return x * a + y * c + e, x * b + y * d + f


def _round(v: float) -> float:
    return round(v, 3) + 0.0


class _Writer:
    def __init__(self, pdf: pikepdf.Pdf, carriers: Carriers, placed: Sequence[Placed]) -> None:
        self.pdf = pdf
        self.carriers = carriers
        self.placed = {p.source: p for p in placed}
        self.names = {n for n, _t in carriers.dests}
        self.annots: dict[int, Dictionary] = {}  # the links written, by their place in order

    def matrix(self, source: int) -> Matrix | None:
        p = self.placed.get(source)
        if p is None or source >= len(self.carriers.frames):
            return None
        return placement(self.carriers.frames[source], p.layout, p.rotation)

    def dest(self, target: Target) -> Array | None:
        p = self.placed.get(target.page)
        m = self.matrix(target.page)
        if p is None or m is None:
            return None
        page = self.pdf.pages[p.output].obj
        args = list(target.args)
        swapped = abs(m[0]) < 1e-9  # a quarter turn: x and y trade places
        kind = target.kind
        out: list[object]
        if kind == "/XYZ":
            left, top = [*args, None, None][:2]
            zoom = args[2] if len(args) > 2 else None
            x, y = _apply(m, left or 0.0, top or 0.0)
            # under a quarter turn the output's left comes from the source's top
            out = [
                None if (top if swapped else left) is None else _round(x),
                None if (left if swapped else top) is None else _round(y),
                zoom,
            ]
        elif kind in ("/FitH", "/FitBH", "/FitV", "/FitBV"):
            value = args[0] if args else None
            horizontal = kind in ("/FitH", "/FitBH")
            if swapped:
                kind = {"/FitH": "/FitV", "/FitBH": "/FitBV", "/FitV": "/FitH", "/FitBV": "/FitBH"}[
                    kind
                ]
            if value is None:
                out = [None]
            else:
                x, y = _apply(m, 0.0, value) if horizontal else _apply(m, value, 0.0)
                out = [_round(x if kind in ("/FitV", "/FitBV") else y)]
        elif kind == "/FitR":
            if len(args) < 4 or any(v is None for v in args[:4]):
                return None
            x0, y0, x1, y1 = (float(v or 0.0) for v in args[:4])
            xs, ys = zip(_apply(m, x0, y0), _apply(m, x1, y1), strict=True)
            out = [_round(min(xs)), _round(min(ys)), _round(max(xs)), _round(max(ys))]
        else:
            out = []
        return Array([page, Name(kind), *out])

    def goes(
        self, node: Dictionary, target: Target | None, name: str | None, uri: str | None
    ) -> bool:
        if uri is not None:
            node.A = Dictionary(S=Name.URI, URI=String(uri))
            return True
        if name is not None and name in self.names:
            node.Dest = String(name)
            return True
        if target is not None:
            dest = self.dest(target)
            if dest is not None:
                node.Dest = dest
                return True
        return False

    def outline_items(self, items: Sequence[Outline], parent: Dictionary) -> int:
        """Children of ``parent`` written; returns how many of them a viewer shows."""
        made: list[Dictionary] = []
        visible = 0
        for item in items:
            node = self.pdf.make_indirect(Dictionary(Title=String(item.title), Parent=parent))
            self.goes(node, item.target, item.name, item.uri)
            shown = self.outline_items(item.children, node) if item.children else 0
            if item.children:
                node.Count = shown if item.open else -len(item.children)
            visible += 1 + (shown if item.open else 0)
            made.append(node)
        for before, after in itertools.pairwise(made):
            before.Next = after
            after.Prev = before
        if made:
            parent.First, parent.Last = made[0], made[-1]
        return visible

    def outlines(self, cover: int | None) -> None:
        items = list(self.carriers.outlines)
        if not items:
            return
        root = self.pdf.make_indirect(Dictionary(Type=Name.Outlines))
        top = []
        if cover is not None:
            top.append(Outline("Cover"))
        top.extend(items)
        count = self.outline_items(top, root)
        if cover is not None:
            root.First.Dest = Array([self.pdf.pages[cover].obj, Name.Fit])
        root.Count = count
        self.pdf.Root.Outlines = root
        if self.carriers.show_outlines:
            self.pdf.Root.PageMode = Name.UseOutlines

    def dests(self) -> None:
        kept = []
        for name, target in self.carriers.dests:
            dest = self.dest(target)
            if dest is not None:
                kept.append((name, dest))
        self.names = {n for n, _d in kept}
        if not kept:
            return
        tree = pikepdf.NameTree.new(self.pdf)
        for name, dest in kept:
            tree[name] = dest
        self.pdf.Root.Names = Dictionary(Dests=tree.obj)

    def links(self) -> None:
        for ordinal, link in enumerate(self.carriers.links):
            p = self.placed.get(link.page)
            m = self.matrix(link.page)
            if p is None or m is None:
                continue
            x0, y0, x1, y1 = link.rect
            corners = [_apply(m, x, y) for x, y in ((x0, y0), (x1, y1))]
            xs, ys = zip(*corners, strict=True)
            annot = Dictionary(
                Type=Name.Annot,
                Subtype=Name.Link,
                Rect=Array([_round(min(xs)), _round(min(ys)), _round(max(xs)), _round(max(ys))]),
                Border=Array([0, 0, 0]),
                F=4,  # print: PDF/A asks it of every annotation
            )
            if link.quads:
                points = [
                    _apply(m, link.quads[i], link.quads[i + 1])
                    for i in range(0, len(link.quads), 2)
                ]
                annot.QuadPoints = Array([_round(v) for xy in points for v in xy])
            if not self.goes(annot, link.target, link.name, link.uri):
                continue
            page = self.pdf.pages[p.output].obj
            if "/Annots" not in page:
                page.Annots = Array()
            made = self.pdf.make_indirect(annot)
            page.Annots.append(made)
            self.annots[ordinal] = made

    def labels(self, cover: int | None, pages: int) -> None:
        nums: list[object] = []
        offset = 1 if cover is not None else 0
        if cover is not None:
            nums += [0, Dictionary(P=String("Cover"))]
        ranges = [b for b in self.carriers.labels if b.start < pages]
        if not ranges or ranges[0].start != 0:
            # the source's first pages unlabelled: numbered from 1, as a viewer numbers them
            ranges.insert(0, Label(0, "/D"))
        for label in ranges:
            entry = Dictionary()
            if label.style is not None:
                entry.S = Name(label.style)
            if label.prefix:
                entry.P = String(label.prefix)
            if label.first != 1:
                entry.St = label.first
            nums += [label.start + offset, entry]
        self.pdf.Root.PageLabels = Dictionary(Nums=Array(nums))


def write_carriers(
    pdf: pikepdf.Pdf,
    carriers: Carriers,
    placed: Sequence[Placed],
    *,
    cover: int | None,
    tree: Dictionary | None = None,
) -> None:
    """``carriers`` written into the output ``pdf`` whose content pages are ``placed``;
    ``cover``: the cover page's index, when there is one (an outline entry and the label
    "Cover" of its own; every target stays on its page). ``tree``: the source's structure
    tree as ``keep_tree`` left it, placed on the output's pages. Title and document
    information are the builder's (it writes them with its own)."""
    writer = _Writer(pdf, carriers, placed)
    writer.dests()
    writer.outlines(cover)
    writer.links()
    writer.labels(cover, len(placed))
    if tree is not None:
        place_tree(pdf, tree, writer)
    root = pdf.Root
    if carriers.lang and _LANG.fullmatch(carriers.lang):
        root.Lang = String(carriers.lang)
    if carriers.display_title:
        root.ViewerPreferences = Dictionary(DisplayDocTitle=True)


# ---------------------------------------------------------------- the structure tree
#
# A tagged source's structure tree points at its pages, its pages' marked content (MCIDs) and
# its link annotations. The output's pages are new and draw each source page as a form
# XObject that keeps the marked content (engines.prune), so the tree is kept in two steps:
# ``keep_tree`` (on the source, before its pages go) puts a placeholder where the tree names
# a page, an MCID or a link, holding only the source page's or link's number; ``place_tree``
# (on the output) puts the new page, a marked-content reference into that page's form
# ({/Type /MCR /Pg page /MCID n /Stm form}) and the new link there. Between the two the tree
# refers to nothing of the source's pages, so a page range's part can carry it to the
# assembly of the whole, and the whole is the same bytes however it was cut.

_PAGE = "/PressroomPage"
_LINK = "/PressroomLink"
# an element's keys of text (the rest it may keep: /S /P /K /Pg /R /A /C, made anew)
_ELEMENT_TEXT = ("/ID", "/T", "/Lang", "/Alt", "/E", "/ActualText")
# a bound on the tree's nodes (elements and their content references): past it the tree
# goes whole, before any of it is walked (tree_size)
MAX_ELEMENTS = 200_000


def _placeholder(key: str, n: int) -> Dictionary:
    return Dictionary({key: n})


def tree_size(pdf: pikepdf.Pdf, cap: int | None = None) -> int:
    """How many nodes of the source's structure tree were counted (its elements and their
    content references, each once) before the count passed ``cap`` (``MAX_ELEMENTS``
    unless given): without recursion, and given up at ``cap + 1``, so the work stays
    bounded by the cap however large the tree is."""
    cap = MAX_ELEMENTS if cap is None else cap
    root = pdf.Root.get("/StructTreeRoot")
    if not isinstance(root, Dictionary):
        return 0
    seen: set[tuple[int, int]] = set()
    stack: list[object] = [root.get("/K")]
    count = 0
    while stack:
        value = stack.pop()
        if isinstance(value, Dictionary | Array) and value.is_indirect:
            if value.objgen in seen:
                continue
            seen.add(value.objgen)
        if isinstance(value, Array):
            for item in value:
                stack.append(item)
                if count + len(stack) > cap:
                    return cap + 1
            continue
        if value is None:
            continue
        count += 1  # an element, a marked-content or object reference, an MCID
        if count > cap:
            return cap + 1
        if isinstance(value, Dictionary) and "/S" in value and "/K" in value:
            stack.append(value.K)
    return count


def _lang(value: object) -> str | None:
    """A /Lang's text where it looks like a language tag (en, en-GB, x-klingon), else None:
    anything else in its place (a name, a sentence) is not kept."""
    text = _plain(value)
    return text if text is not None and _LANG.fullmatch(text) else None


def _scalar(value: object) -> bool:
    return value is None or isinstance(value, bool | int | float | Decimal | Name | String)


def _scalars(value: object, depth: int = 0) -> object | None:
    """A scalar, or an array of scalars (or of such arrays: a table's border colours),
    made anew (direct); None for anything else (a dictionary, a stream)."""
    if isinstance(value, Array):
        if depth > 1:
            return None
        items = [_scalars(v, depth + 1) for v in itertools.islice(value, MAX_ITEMS)]
        if any(made is None for made in items):
            return None
        return Array(items)
    if isinstance(value, pikepdf.Object) and (
        value.is_indirect or not isinstance(value, Name | String)
    ):
        return None  # a dictionary, a stream, or another object of the source's
    return value if _scalar(value) and value is not None else None


def _attributes(value: object) -> Dictionary | None:
    """An attribute object (or a class map's) made anew of its scalar values and arrays
    of them: nothing it points at elsewhere (a stream, a file, an action's dictionary)
    comes along."""
    if not isinstance(value, Dictionary) or isinstance(value, pikepdf.Stream):
        return None
    made = Dictionary()
    for key, item in itertools.islice(value.items(), MAX_ITEMS):
        if (plain := _scalars(item)) is not None:
            made[key] = plain
    return made


def _attribute_list(value: object) -> object | None:
    """An element's /A (or a class map entry): an attribute object, or an array of them
    with revision numbers."""
    if isinstance(value, Array):
        items: list[object] = []
        for item in itertools.islice(value, MAX_ITEMS):
            if isinstance(item, int) and not isinstance(item, bool):
                items.append(item)
            elif (made := _attributes(item)) is not None:
                items.append(made)
        return Array(items) if items else None
    return _attributes(value)


def _classes(value: object) -> object | None:
    if isinstance(value, Name):
        return value
    if isinstance(value, Array):
        items = [
            v
            for v in itertools.islice(value, MAX_ITEMS)
            if isinstance(v, Name) or (isinstance(v, int) and not isinstance(v, bool))
        ]
        return Array(items) if items else None
    return None


def keep_tree(pdf: pikepdf.Pdf) -> Dictionary | None:
    """The source's structure tree, made anew to name pages and links by number (see
    above); None where there is none, or where it is larger than ``MAX_ELEMENTS`` nodes
    (``tree_size``: the output is then not tagged, ``read_carriers`` says so). Each element
    is made again of only the keys a structure element defines, its attributes of plain
    values only (``_attributes``), its parent the element that lists it: nothing else the
    source's element points at (a file, a script, a page tree) comes along. Kids that point
    at what the output does not keep (another annotation, a marked-content sequence in a
    nested form) are left out."""
    root = pdf.Root.get("/StructTreeRoot")
    if not isinstance(root, Dictionary) or tree_size(pdf) > MAX_ELEMENTS:
        return None
    reader = _Reader(pdf)
    links = {objgen: n for n, (_l, objgen) in enumerate(reader.link_objects(reader.names()))}
    pages = reader.pages
    made: dict[tuple[int, int], Dictionary] = {}  # each source element's new one
    seen: set[tuple[int, int]] = set()
    new_root = pdf.make_indirect(Dictionary(Type=Name.StructTreeRoot))

    def page_of(value: object) -> int | None:
        if isinstance(value, Dictionary) and value.is_indirect:
            return pages.get(value.objgen)
        return None

    def kid(value: object, page: int | None) -> object | None:
        """One kid of an element: an MCID, a marked-content or object reference."""
        if isinstance(value, int) and not isinstance(value, bool):
            if page is None:
                return None
            return Dictionary(Type=Name.MCR, Pg=_placeholder(_PAGE, page), MCID=value)
        if not isinstance(value, Dictionary):
            return None
        kind = value.get("/Type")
        if kind == Name.MCR:
            own = page_of(value.get("/Pg"))
            mcid = value.get("/MCID")
            if "/Stm" in value or not isinstance(mcid, int) or isinstance(mcid, bool):
                return None  # in a nested form's content: not kept (engines.prune)
            at = own if own is not None else page
            if at is None:
                return None
            return Dictionary(Type=Name.MCR, Pg=_placeholder(_PAGE, at), MCID=mcid)
        if kind == Name.OBJR:
            target = value.get("/Obj")
            n = links.get(target.objgen) if isinstance(target, Dictionary) else None
            if n is None:
                return None
            return Dictionary(Type=Name.OBJR, Obj=_placeholder(_LINK, n))
        return None

    def is_element(value: object) -> bool:
        return (
            isinstance(value, Dictionary)
            and not isinstance(value, pikepdf.Stream)
            and isinstance(value.get("/S"), Name)
            and value.get("/Type", Name.StructElem) == Name.StructElem
        )

    def element(
        elem: Any, parent: Dictionary, inherited: int | None, depth: int
    ) -> Dictionary | None:
        """The element made anew under ``parent``; None where it was met before (a tree
        that lists an element twice, or in a loop) or lies too deep."""
        if depth > MAX_DEPTH:
            return None
        if elem.is_indirect:
            if elem.objgen in seen:
                return None
            seen.add(elem.objgen)
        new = pdf.make_indirect(Dictionary(Type=Name.StructElem, S=elem.S, P=parent))
        if elem.is_indirect:
            made[elem.objgen] = new
        page = page_of(elem.get("/Pg"))
        if page is not None:
            new.Pg = _placeholder(_PAGE, page)
        for key in _ELEMENT_TEXT:
            value = elem.get(key)
            if key == "/Lang":
                value = String(text) if (text := _lang(value)) is not None else None
            if isinstance(value, String):
                new[key] = String(text_of(value)) if key != "/ID" else String(bytes(value))
        revision = elem.get("/R")
        if isinstance(revision, int) and not isinstance(revision, bool):
            new.R = revision
        if (attrs := _attribute_list(elem.get("/A"))) is not None:
            new.A = attrs
        if (classes := _classes(elem.get("/C"))) is not None:
            new.C = classes
        here = page if page is not None else inherited
        kids = elem.get("/K")
        if kids is None:
            return new
        listed = list(kids) if isinstance(kids, Array) else [kids]
        kept: list[Any] = []
        for value in listed:
            if is_element(value):
                child = element(value, new, here, depth + 1)
                if child is not None:
                    kept.append(child)
                continue
            done = kid(value, here)
            if done is not None:
                kept.append(done)
        new.K = Array(kept)
        return new

    top = root.get("/K")
    tops = list(top) if isinstance(top, Array) else ([] if top is None else [top])
    kept_top = [e for v in tops if is_element(v) and (e := element(v, new_root, None, 0))]
    if len(kept_top) == 1:
        new_root.K = kept_top[0]
    elif kept_top:
        new_root.K = Array(kept_top)

    def mapped(value: object) -> Dictionary | None:
        if isinstance(value, Dictionary) and value.is_indirect:
            return made.get(value.objgen)
        return None

    parents = root.get("/ParentTree")
    if isinstance(parents, Dictionary):
        nums: list[object] = []
        try:
            for key, value in itertools.islice(pikepdf.NumberTree(parents).items(), MAX_ELEMENTS):
                if isinstance(value, Array):
                    nums += [key, Array([mapped(v) for v in itertools.islice(value, MAX_ELEMENTS)])]
                elif (elem := mapped(value)) is not None:
                    nums += [key, elem]
        except (pikepdf.PdfError, ValueError, TypeError, RecursionError):
            nums = []
        new_root.ParentTree = pdf.make_indirect(Dictionary(Nums=Array(nums)))
    next_key = root.get("/ParentTreeNextKey")
    if isinstance(next_key, int) and not isinstance(next_key, bool):
        new_root.ParentTreeNextKey = next_key
    ids = root.get("/IDTree")
    if isinstance(ids, Dictionary):
        names: list[tuple[str, Dictionary]] = []
        try:
            for name, value in itertools.islice(pikepdf.NameTree(ids).items(), MAX_ELEMENTS):
                if (elem := mapped(value)) is not None:
                    names.append((name, elem))
        except (pikepdf.PdfError, ValueError, TypeError, RecursionError):
            names = []
        if names:
            flat = [x for k, e in sorted(names) for x in (String(k), e)]
            new_root.IDTree = Dictionary(Names=Array(flat))
    roles = root.get("/RoleMap")
    if isinstance(roles, Dictionary):
        new_root.RoleMap = Dictionary(
            {k: v for k, v in itertools.islice(roles.items(), MAX_ITEMS) if isinstance(v, Name)}
        )
    classes = root.get("/ClassMap")
    if isinstance(classes, Dictionary):
        entries = {
            k: v
            for k, raw in itertools.islice(classes.items(), MAX_ITEMS)
            if (v := _attribute_list(raw)) is not None
        }
        new_root.ClassMap = Dictionary(entries)
    return new_root


def place_tree(pdf: pikepdf.Pdf, tree: Dictionary, writer: _Writer) -> None:
    """A tree ``keep_tree`` rewrote, onto the output's pages: each placeholder the new page,
    each marked-content reference into that page's form of the source (gone where the page
    is no longer drawn from it: a scan levelled into a new image), each link the new one."""
    forms: dict[int, tuple[Dictionary, pikepdf.Object | None]] = {}
    for source, placed in writer.placed.items():
        page = pdf.pages[placed.output].obj
        xobjects = page.get("/Resources", Dictionary()).get("/XObject", Dictionary())
        form = xobjects.get("/Src")
        keyed = isinstance(form, pikepdf.Stream) and "/StructParents" in form
        forms[source] = (page, form if keyed else None)
    for n, link in enumerate(writer.carriers.links):
        made = writer.annots.get(n)
        if made is not None and link.key is not None:
            made.StructParent = link.key
    seen: set[tuple[int, int]] = set()

    def resolve(value: object) -> object | None:
        """A placeholder's object; the value itself for anything else; None: it goes."""
        if isinstance(value, Dictionary) and not value.is_indirect:
            if _PAGE in value:
                found = forms.get(int(value[_PAGE]))
                return found[0] if found is not None else None
            if _LINK in value:
                return writer.annots.get(int(value[_LINK]))
            if value.get("/Type") == Name.OBJR and isinstance(value.get("/Obj"), Dictionary):
                placeholder = value.Obj
                if _LINK not in placeholder:
                    return value
                annot = writer.annots.get(int(placeholder[_LINK]))
                return None if annot is None else Dictionary(Type=Name.OBJR, Obj=annot)
            if value.get("/Type") == Name.MCR and isinstance(value.get("/Pg"), Dictionary):
                page_ph = value.Pg
                if _PAGE not in page_ph:
                    return value
                found = forms.get(int(page_ph[_PAGE]))
                if found is None or found[1] is None:
                    return None
                return Dictionary(Type=Name.MCR, Pg=found[0], MCID=value.MCID, Stm=found[1])
        return value

    def walk(obj: object, depth: int) -> None:
        if depth > MAX_DEPTH * 4 or not isinstance(obj, Dictionary | Array):
            return
        if obj.is_indirect:
            if obj.objgen in seen:
                return
            seen.add(obj.objgen)
        if isinstance(obj, Dictionary):
            if _PAGE in obj or _LINK in obj:
                return
            for key, value in list(obj.items()):
                if key == "/P":
                    continue
                made = resolve(value)
                if made is None:
                    del obj[key]
                elif made is not value:
                    obj[key] = made
                else:
                    walk(value, depth + 1)
        else:
            kept: list[Any] = []
            changed = False
            for value in list(obj):
                made = resolve(value)
                if made is None:
                    changed = True
                    continue
                if made is not value:
                    changed = True
                else:
                    walk(value, depth + 1)
                kept.append(made)
            if changed:
                for i in reversed(range(len(obj))):
                    del obj[i]
                obj.extend(kept)

    walk(tree, 0)
    pdf.Root.StructTreeRoot = tree
    pdf.Root.MarkInfo = Dictionary(Marked=True)
