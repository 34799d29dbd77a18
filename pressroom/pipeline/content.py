"""Measure what a PDF page asks a renderer to do before any renderer does it.

A page of a few kilobytes can inflate to millions of drawing operators, draw a form that draws
a form (each drawn again at every use: PDFium parses a form once per ``Do``), or hide a
gigapixel image ten forms deep. PDFium parses all of it as soon as a page is loaded, so the
measuring happens here, on pikepdf's objects, with every stream decoded under a byte cap and
never past it: the inflated bytes, an estimate of the operators and of the text bytes shown
(both counted with each form's uses), and every image drawn at any depth (forms, patterns,
Type 3 glyphs, soft masks, annotation appearances, inline images), with the sizes a decoder
would really allocate.

Over 500 lines: one security-critical concept, a page's cost measured before any renderer sees
it; the operator count, the form walk and the image census share one capped decoder.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pikepdf
from pikepdf import Name

from pressroom.engines.prune import content_streams, inherited
from pressroom.engines.streams import TooBig, decoded, image_pixels
from pressroom.errors import ContentLimit
from pressroom.settings import Limits

# PDFium stops drawing forms nested deeper than this; nothing real comes near it.
MAX_FORM_DEPTH = 40
CHUNK = 1 << 20  # bytes scanned at a time: numpy's temporaries stay ~30 MB

_WHITE = b"\x00\t\n\x0c\r "
_DELIMS = _WHITE + b"()<>[]{}%"
_IS_DELIM = np.zeros(256, dtype=bool)
_IS_DELIM[list(_DELIMS)] = True
_STARTS_OPERATOR = np.zeros(256, dtype=bool)  # operators are keywords: letters, ' and "
_STARTS_OPERATOR[list(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'\"")] = True
# PDF's own lexical rules, not Python's: NUL is white space, a comment runs to the end of its
# line and separates tokens as white space does, and these characters end a name or keyword.
_WS = rb"[\x00\t\n\f\r ]"
_GAP = rb"(?:" + _WS + rb"|%[^\r\n]*)"
_REGULAR = rb"[^\x00\t\n\f\r ()<>\[\]{}/%]"
_DO = re.compile(rb"/(" + _REGULAR + rb"+)" + _GAP + rb"*Do(?!" + _REGULAR + rb")")
_INLINE = re.compile(rb"(?<!" + _REGULAR + rb")BI(?!" + _REGULAR + rb")")
# Inline images are found by a small tokenising scan, not by matching bytes, so that text never
# reads as an operator: ``(BIG Corp) Tj`` or a name split by kerning, ``[(BI) 11.2 (AN)] TJ``.
# _SKIP steps over everything that cannot be BI, ID or EI in one C-level match: other bytes,
# whole literal strings without nesting (backslash escapes included), hex strings, dictionary
# brackets and comments. It stops at a string that nests (walked by hand) or never ends, at a
# hex string that never ends, and at each B, I or E that starts BI, ID or EI.
_SKIP = re.compile(
    rb"(?:[^()<%BIE]++"
    rb"|\((?:[^()\\]++|\\.)*+\)"
    rb"|<<|<[^>]*+>"
    rb"|%[^\r\n]*+"
    rb"|B(?!I)|I(?!D)|E(?!I)"
    rb"|\)"
    rb")*+",
    re.S,
)
_PAREN = re.compile(rb"[()\\]")
_IS_REGULAR = np.ones(256, dtype=bool)  # bytes that go on a keyword or a name
_IS_REGULAR[list(_DELIMS + b"/")] = False
# where a string or hex string never ends, what follows is matched as bytes (as before): a
# renderer reads it some way of its own, so nothing is hidden from the caps by it
_KEYWORD_RAW = re.compile(rb"(?<!" + _REGULAR + rb")(?:BI|ID|EI)(?!" + _REGULAR + rb")")
# the end of an inline image's binary data: EI standing alone
_DATA_END = re.compile(rb"(?<!" + _REGULAR + rb")EI(?!" + _REGULAR + rb")")
# An inline image's dictionary is a few short entries; a longer one is refused, not skipped.
_INLINE_DICT = 64 * 1024
_INLINE_W = re.compile(rb"/(?:W|Width)(?!" + _REGULAR + rb")" + _GAP + rb"*(\d{1,12})")
_INLINE_H = re.compile(rb"/(?:H|Height)(?!" + _REGULAR + rb")" + _GAP + rb"*(\d{1,12})")
# What sizes an unfiltered inline image's data exactly: bits per component, its colour space
# (or an image mask) and whether any filter is named
_INLINE_BPC = re.compile(
    rb"/(?:BPC|BitsPerComponent)(?!"
    + _REGULAR
    + rb")"
    + _GAP
    + rb"*(\d{1,2})(?!"
    + _REGULAR
    + rb")"
)
_INLINE_CS = re.compile(
    rb"/(?:CS|ColorSpace)(?!"
    + _REGULAR
    + rb")"
    + _GAP
    + rb"*(\["
    + _GAP
    + rb"*)?/("
    + _REGULAR
    + rb"+)"
)
_INLINE_MASK = re.compile(
    rb"/(?:IM|ImageMask)(?!" + _REGULAR + rb")" + _GAP + rb"*true(?!" + _REGULAR + rb")"
)
_INLINE_FILTER = re.compile(
    rb"/(?:F|Filter)(?!" + _REGULAR + rb")" + _GAP + rb"*(?:/|\[" + _GAP + rb"*[/\]])"
)
# components of the colour spaces an inline image may name by itself (abbreviated or not); an
# indexed one is an array opening with /I or /Indexed: one component, an index
_COMPONENTS = {
    b"G": 1,
    b"DeviceGray": 1,
    b"RGB": 3,
    b"DeviceRGB": 3,
    b"CMYK": 4,
    b"DeviceCMYK": 4,
}
_INDEXED = {b"I", b"Indexed"}
# After filtered data (or data whose length the dictionary cannot tell), EI ends it only where
# a content stream could go on after it: white space, then the stream's end or an operator
_OPERATORS = frozenset(
    b"b B b* B* BDC BI BMC BT BX c cm CS cs d d0 d1 Do DP EI EMC ET EX f F f* G g gs h i ID j "
    b"J K k l m M MP n q Q re RG rg ri s S SC sc SCN scn sh T* Tc Td TD Tf Tj TJ TL Tm Tr Ts Tw "
    b"Tz v w W W* y ' \"".split()
)
_WHITE_RUN = re.compile(_WS + rb"*")
_NUMBER = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)")
_NAME_TOKEN = re.compile(rb"/" + _REGULAR + rb"*")
_KEYWORD = re.compile(_REGULAR + rb"+")
_FOLLOW = 64  # bytes looked at after a candidate EI
_NAME_ESCAPE = re.compile(rb"#([0-9A-Fa-f]{2})")


@dataclass(frozen=True, slots=True)
class PageCost:
    """What one page asks of a renderer."""

    content_bytes: int
    operators: int
    text_bytes: int
    objects: int  # streams and resources walked to learn this
    largest_image: int  # pixels of the largest image drawn
    image_pixels: int  # pixels of every distinct image drawn, summed (PDFium keeps them all)


@dataclass
class _Cost:
    content_bytes: int = 0
    operators: int = 0
    text_bytes: int = 0
    images: dict[object, int] = field(default_factory=dict)  # image identity -> pixels

    def add(self, other: _Cost, times: int = 1) -> None:
        self.content_bytes += other.content_bytes * times
        self.operators += other.operators * times
        self.text_bytes += other.text_bytes * times
        self.images.update(other.images)


@dataclass(frozen=True, slots=True)
class _Tally:
    content_bytes: int
    operators: int
    text_bytes: int
    uses: Counter[str]  # XObject name -> times drawn
    inline: tuple[int, ...]  # pixels of each inline image


class ContentMeter:
    """Measures the pages of one open document; what it learnt of shared forms and images is
    kept for the next page. Raises ``ContentLimit`` at the first cap passed, never decoding
    more than a cap's worth of any stream."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._forms: dict[object, _Cost] = {}
        self._pixels: dict[object, int] = {}
        self._page = 0
        self._touched: set[object] = set()
        self._inline = itertools.count()

    def page(self, page: pikepdf.Page, number: int) -> PageCost:
        """The cost of page ``number`` (from 1)."""
        self._page = number
        self._touched = set()
        obj = page.obj
        resources = inherited(obj, "/Resources")
        cost = _Cost()
        for stream in content_streams(obj.get("/Contents")):
            self._touch(stream)
            self._add_content(cost, self._tally(stream, cost), resources, ())
        self._add_resources(cost, resources, ())
        annots = obj.get("/Annots")
        if isinstance(annots, pikepdf.Array):
            for annot in annots:
                self._touch(annot)
                appearance = annot.get("/AP") if isinstance(annot, pikepdf.Dictionary) else None
                normal = (
                    appearance.get("/N") if isinstance(appearance, pikepdf.Dictionary) else None
                )
                states = (
                    [normal]
                    if isinstance(normal, pikepdf.Stream)
                    else list(normal.values())
                    if isinstance(normal, pikepdf.Dictionary)
                    else []
                )
                for form in states:
                    if isinstance(form, pikepdf.Stream):
                        self._touch(form)
                        cost.add(self._form(form, resources, ()))
                        self._check(cost)
        images = cost.images.values()
        return PageCost(
            cost.content_bytes,
            cost.operators,
            cost.text_bytes,
            len(self._touched),
            max(images, default=0),
            sum(images),
        )

    # -- the walk ---------------------------------------------------------------------------

    def _touch(self, obj: object) -> None:
        """Count a distinct object this page's walk reaches."""
        self._touched.add(_key(obj))
        if len(self._touched) > self.limits.max_page_objects:
            raise ContentLimit(
                f"page {self._page} draws from more than {self.limits.max_page_objects:,} "
                "objects (forms, images, patterns, glyphs)"
            )

    def _check(self, cost: _Cost) -> None:
        lim = self.limits
        where = f"page {self._page}"
        if cost.content_bytes > lim.max_page_content_bytes:
            raise ContentLimit(
                f"{where}'s drawing instructions inflate past {lim.max_page_content_bytes:,} bytes"
            )
        if cost.operators > lim.max_page_operators:
            raise ContentLimit(
                f"{where} holds more than {lim.max_page_operators:,} drawing operators"
            )
        if cost.text_bytes > lim.max_page_text_bytes:
            raise ContentLimit(f"{where} shows more than {lim.max_page_text_bytes:,} bytes of text")

    def _add_content(
        self,
        cost: _Cost,
        tally: _Tally,
        resources: pikepdf.Object | None,
        path: tuple[object, ...],
    ) -> None:
        """A content stream's own cost, then what each ``Do`` draws, times its uses."""
        cost.content_bytes += tally.content_bytes
        cost.operators += tally.operators
        cost.text_bytes += tally.text_bytes
        for pixels in tally.inline:
            cost.images[("inline", next(self._inline))] = pixels
        self._check(cost)
        xobjects = _get(resources, "/XObject")
        for name, times in tally.uses.items():
            target = _get(xobjects, name)
            if not isinstance(target, pikepdf.Stream):
                continue  # a name with nothing behind it: a renderer draws nothing
            self._touch(target)
            subtype = target.get("/Subtype")
            if subtype == Name.Image:
                self._image(cost, target)
            elif subtype == Name.Form:
                cost.add(self._form(target, resources, path), times)
                self._check(cost)

    def _form(
        self, form: pikepdf.Stream, parent: pikepdf.Object | None, path: tuple[object, ...]
    ) -> _Cost:
        key = _key(form)
        if key in path:
            return _Cost()  # a form drawing itself: PDFium refuses the inner draw
        if len(path) >= MAX_FORM_DEPTH:
            raise ContentLimit(f"page {self._page} nests forms more than {MAX_FORM_DEPTH} deep")
        own = form.get("/Resources")
        resources = own if isinstance(own, pikepdf.Dictionary) else parent
        # a form without resources of its own draws from its caller's: it costs what each
        # caller's resources make it cost, so only a form with its own is remembered (every
        # use still adds to the page's caps, so measuring each use again stays bounded)
        memo = key if resources is own else None
        known = self._forms.get(memo) if memo is not None else None
        if known is not None:
            return known
        cost = _Cost()
        inner = (*path, key)
        self._add_content(cost, self._tally(form, cost), resources, inner)
        self._add_resources(cost, resources if own is not None else None, inner)
        if memo is not None:
            self._forms[memo] = cost
        return cost

    def _add_resources(
        self, cost: _Cost, resources: pikepdf.Object | None, path: tuple[object, ...]
    ) -> None:
        """What resources draw besides ``Do``, each counted once: tiling patterns, soft masks'
        groups, Type 3 glyph procedures."""
        if not isinstance(resources, pikepdf.Dictionary):
            return
        patterns = _get(resources, "/Pattern")
        if isinstance(patterns, pikepdf.Dictionary):
            for pattern in patterns.values():
                self._touch(pattern)
                if isinstance(pattern, pikepdf.Stream):  # a tiling pattern has content
                    cost.add(self._form(pattern, resources, path))
        states = _get(resources, "/ExtGState")
        if isinstance(states, pikepdf.Dictionary):
            for state in states.values():
                self._touch(state)
                mask = state.get("/SMask") if isinstance(state, pikepdf.Dictionary) else None
                group = mask.get("/G") if isinstance(mask, pikepdf.Dictionary) else None
                if isinstance(group, pikepdf.Stream):
                    cost.add(self._form(group, resources, path))
        fonts = _get(resources, "/Font")
        if isinstance(fonts, pikepdf.Dictionary):
            for font in fonts.values():
                self._touch(font)
                if not isinstance(font, pikepdf.Dictionary) or font.get("/Subtype") != Name.Type3:
                    continue
                procs = font.get("/CharProcs")
                if not isinstance(procs, pikepdf.Dictionary):
                    continue
                glyph_resources = font.get("/Resources")
                for proc in procs.values():
                    if isinstance(proc, pikepdf.Stream):
                        self._touch(proc)
                        cost.add(
                            self._form(
                                proc,
                                glyph_resources
                                if isinstance(glyph_resources, pikepdf.Dictionary)
                                else resources,
                                path,
                            )
                        )
        self._check(cost)

    def _image(self, cost: _Cost, image: pikepdf.Stream) -> None:
        """The image and its masks, at the size a decoder allocates."""
        for part in (image, image.get("/SMask"), image.get("/Mask")):
            if not isinstance(part, pikepdf.Stream):
                continue
            self._touch(part)
            key = _key(part)
            pixels = self._pixels.get(key)
            if pixels is None:
                pixels = image_pixels(part)
                self._pixels[key] = pixels
            cost.images[key] = pixels

    # -- one stream -------------------------------------------------------------------------

    def _tally(self, stream: pikepdf.Stream, so_far: _Cost) -> _Tally:
        """Bytes, operators, text bytes, ``Do`` uses and inline images of one content stream,
        decoded under the page's remaining byte allowance."""
        lim = self.limits
        room = max(0, lim.max_page_content_bytes - so_far.content_bytes)
        try:
            data = decoded(stream, room)
        except TooBig:
            raise ContentLimit(
                f"page {self._page}'s drawing instructions inflate past "
                f"{lim.max_page_content_bytes:,} bytes"
            ) from None
        scan = _Scanner()
        for start in range(0, len(data), CHUNK):
            scan.feed(data[start : start + CHUNK])
            if so_far.operators + scan.operators > lim.max_page_operators:
                break  # _check says so; the rest need not be read
        scan.finish()
        uses: Counter[str] = Counter()
        inline: list[int] = []
        if (
            so_far.operators + scan.operators <= lim.max_page_operators
            and so_far.text_bytes + scan.text_bytes <= lim.max_page_text_bytes
        ):
            # bounded by the operator cap: each match is an operator; and by the text cap:
            # strings that nest, walked byte by byte in Python, are text (past either cap
            # _check refuses the page, so the rest need not be read)
            for m in _DO.finditer(data):
                uses[_name(m.group(1))] += 1
            for head in _inline_heads(data):
                twice = _repeated_key(head)
                if twice is not None:
                    # a renderer takes one of them (PDFium the last), we would size by
                    # another: refused, never guessed
                    raise ContentLimit(
                        f"page {self._page} holds an inline image that names its {twice} twice"
                    )
                w, h = _INLINE_W.search(head), _INLINE_H.search(head)
                if not (w and h):
                    # what a renderer might decode but we cannot size: refused, never skipped
                    raise ContentLimit(
                        f"page {self._page} holds an inline image whose size cannot be read"
                    )
                inline.append(int(w.group(1)) * int(h.group(1)))
        return _Tally(len(data), scan.operators, scan.text_bytes, uses, tuple(inline))


class _Scanner:
    """Operators (keywords outside strings) and text bytes (inside strings; hex digits count
    half), over chunks, vectorised: a few numpy passes a chunk whatever its content."""

    def __init__(self) -> None:
        self.operators = 0
        self.text_bytes = 0
        self._prev = 0x0A
        self._tail = b""
        self._depth = 0  # literal string nesting, relative to its lowest point so far
        self._floor = 0
        self._hex = 0
        self._hex_floor = 0
        self._hex_digits = 0

    def feed(self, chunk: bytes) -> None:
        buf = self._tail + chunk
        if len(buf) < 2:
            self._tail = buf
            return
        self._tail = buf[-1:]  # its next byte decides what it is
        self._scan(buf)

    def finish(self) -> None:
        if self._tail:
            self._scan(self._tail + b"\n")
            self._tail = b""
        self.text_bytes += (self._hex_digits + 1) // 2

    def _scan(self, buf: bytes) -> None:
        whole = np.frombuffer(buf, dtype=np.uint8)
        a = whole[:-1]
        nxt = whole[1:]
        prev = np.empty_like(a)
        prev[0] = self._prev
        prev[1:] = a[:-1]
        self._prev = int(a[-1])
        escaped = prev == 0x5C
        opens = (a == 0x28) & ~escaped
        closes = (a == 0x29) & ~escaped
        depth = _running(opens, closes, self._depth)
        floor = np.minimum.accumulate(depth)
        np.minimum(floor, self._floor, out=floor)
        inside = depth > floor
        self._depth, self._floor = int(depth[-1]), int(floor[-1])
        lt, gt = a == 0x3C, a == 0x3E
        hopen = lt & (nxt != 0x3C) & (prev != 0x3C) & ~inside
        hclose = gt & (nxt != 0x3E) & (prev != 0x3E) & ~inside
        hdepth = _running(hopen, hclose, self._hex)
        hfloor = np.minimum.accumulate(hdepth)
        np.minimum(hfloor, self._hex_floor, out=hfloor)
        in_hex = (hdepth > hfloor) & ~hopen
        self._hex, self._hex_floor = int(hdepth[-1]), int(hfloor[-1])
        self.text_bytes += int(np.count_nonzero(inside))
        self._hex_digits += int(np.count_nonzero(in_hex & ~_IS_DELIM[a]))
        starts = _STARTS_OPERATOR[a] & _IS_DELIM[prev] & ~inside & ~in_hex
        self.operators += int(np.count_nonzero(starts))


def _running(opens: np.ndarray, closes: np.ndarray, start: int) -> np.ndarray:
    """Nesting depth after each byte: ``start`` plus opens so far minus closes so far."""
    step = opens.astype(np.int32)
    step -= closes
    np.cumsum(step, out=step)
    step += start
    return step


# -- inline images ----------------------------------------------------------------------------


def _inline_heads(data: bytes) -> Iterator[bytes]:
    """The dictionary of each inline image in a content stream, the bytes between ``BI`` and
    ``ID``; empty where no ``ID`` follows within ``_INLINE_DICT`` bytes (the caller refuses
    it). Its binary data, after ``ID`` up to ``EI``, is skipped, never read as operators."""
    if not _INLINE.search(data):
        return  # no BI anywhere, as most streams: nothing to tokenise
    words = _Keywords(data)
    while (found := words.next()) is not None:
        word, _, end = found
        if word != b"BI":
            continue  # an ID or EI with no BI before it draws nothing
        after = words.next()
        if after is None or after[0] != b"ID" or after[2] > end + _INLINE_DICT:
            yield b""
            return  # refused: nothing after it is read
        head = data[end : after[1]]
        yield head
        stop = _data_end(data, head, after[2])
        if stop is None:
            return  # the image's data runs to the end of the stream
        words.pos = stop


def _data_end(data: bytes, head: bytes, after_id: int) -> int | None:
    """Where the inline image whose dictionary is ``head``, its ``ID`` ending at ``after_id``,
    ends: just past its ``EI``; None where it runs to the end of the stream. Unfiltered data
    has the length its dictionary gives (rows of width x components x bits, each row whole
    bytes), so an ``EI`` inside the pixels cannot end it; where that length is not followed by
    ``EI``, or the data is filtered, the first ``EI`` standing alone that white space and an
    operator (or the stream's end) follow ends it (failing that, the first standing alone)."""
    start = after_id + 1 if after_id < len(data) and data[after_id] in _WHITE else after_id
    length = _unfiltered_length(head)
    if length is not None:
        at = start + length
        stop = _WHITE_RUN.match(data, at).end()  # type: ignore[union-attr]  # never None
        if data.startswith(b"EI", stop) and _ends_token(data, stop + 2):
            return stop + 2
    pos = start
    first: int | None = None
    while (m := _DATA_END.search(data, pos)) is not None:
        first = m.end() if first is None else first
        before = m.start() == start or data[m.start() - 1] in _WHITE
        if before and _goes_on(data, m.end()):
            return m.end()
        pos = m.start() + 1
    # none that a stream could go on after: the first, as before (what follows it is read as
    # operators, and an inline image after it still counted, not skipped as data)
    return first


# the keys that size an inline image or its data, by the name a reason gives them
_SIZING_KEYS = (
    ("width", _INLINE_W),
    ("height", _INLINE_H),
    ("bits per component", _INLINE_BPC),
    ("colour space", _INLINE_CS),
    ("image mask", _INLINE_MASK),
    ("filter", _INLINE_FILTER),
)
_NESTED = re.compile(rb"<<|>>|\[|\]")


def _repeated_key(head: bytes) -> str | None:
    """The first key that sizes an inline image (or its data) named more than once at the top
    of its dictionary, or None. Only the top level counts: a ``/DecodeParms`` dictionary has a
    ``/BitsPerComponent`` of its own, and arrays (a filter list, ``/Decode``) hold no keys."""
    top = bytearray(head)
    depth = 0
    for m in _NESTED.finditer(head):
        if m.group() in (b"<<", b"["):
            if depth == 0:
                start = m.end()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                top[start : m.start()] = b" " * (m.start() - start)
    if depth:
        top[start:] = b" " * (len(top) - start)
    for what, pattern in _SIZING_KEYS:
        if len(pattern.findall(bytes(top))) > 1:
            return what
    return None


def _unfiltered_length(head: bytes) -> int | None:
    """The exact byte length of an inline image's data from its dictionary; None where it is
    filtered or its dictionary does not tell (a colour space named in the resources)."""
    if _INLINE_FILTER.search(head):
        return None
    w, h = _INLINE_W.search(head), _INLINE_H.search(head)
    if not (w and h):
        return None
    if _INLINE_MASK.search(head):
        components, bits = 1, 1
    else:
        bpc, cs = _INLINE_BPC.search(head), _INLINE_CS.search(head)
        if not (bpc and cs):
            return None
        name = cs.group(2)
        components = 1 if cs.group(1) and name in _INDEXED else _COMPONENTS.get(name, 0)
        if cs.group(1) and name not in _INDEXED:
            components = 0  # an array names a space the dictionary cannot size
        bits = int(bpc.group(1))
        if not components or bits not in (1, 2, 4, 8, 16):
            return None
    return int(h.group(1)) * ((int(w.group(1)) * components * bits + 7) // 8)


def _ends_token(data: bytes, at: int) -> bool:
    return at >= len(data) or not _IS_REGULAR[data[at]]


def _goes_on(data: bytes, at: int) -> bool:
    """Whether a content stream could go on at ``at``, just past a candidate ``EI``: white
    space, then its end, or operands and an operator within ``_FOLLOW`` bytes (binary data
    rarely spells that)."""
    if at < len(data) and data[at] not in _WHITE:
        return False
    pos = _WHITE_RUN.match(data, at).end()  # type: ignore[union-attr]  # never None
    limit = min(len(data), at + _FOLLOW)
    while pos < limit:
        number = _NUMBER.match(data, pos)
        name = _NAME_TOKEN.match(data, pos) if number is None else None
        token = number or name
        if token is not None:
            if not _ends_token(data, token.end()):
                return False
            pos = _WHITE_RUN.match(data, token.end()).end()  # type: ignore[union-attr]
            continue
        keyword = _KEYWORD.match(data, pos)
        return keyword is not None and keyword.group() in _OPERATORS
    return pos >= len(data)


class _Keywords:
    """The ``BI``, ``ID`` and ``EI`` operators of a content stream, in order, with what is in
    strings, hex strings, comments and names left out. Linear in the stream: ``_SKIP`` works in
    C, and only strings that nest are walked in Python."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self._raw = False

    def next(self) -> tuple[bytes, int, int] | None:
        """The next operator: its bytes, where it starts and where it ends."""
        data = self.data
        while True:
            if self._raw:
                m = _KEYWORD_RAW.search(data, self.pos)
                if m is None:
                    return None
                self.pos = m.end()
                return m.group(), m.start(), m.end()
            at = _SKIP.match(data, self.pos).end()  # type: ignore[union-attr]  # never None
            if at >= len(data):
                return None
            first = data[at]
            if first == 0x28:  # "(": a string that nests, or one that never ends
                end = _string_end(data, at)
                if end is None:
                    self._raw = True
                else:
                    self.pos = end
                continue
            if first == 0x3C:  # "<" with no ">" after it
                self._raw = True
                continue
            # B, I or E starting BI, ID or EI: an operator where it stands alone, not where it
            # ends a name (/BI) or sits inside a longer keyword or name
            end = at + 2
            before = at > 0 and (bool(_IS_REGULAR[data[at - 1]]) or data[at - 1] == 0x2F)
            after = end < len(data) and bool(_IS_REGULAR[data[end]])
            if before or after:
                self.pos = at + 1
                continue
            self.pos = end
            return data[at:end], at, end


def _string_end(data: bytes, start: int) -> int | None:
    """Where the literal string opening at ``start`` ends, its nesting and backslash escapes
    followed; None where it never ends."""
    depth = 0
    pos = start
    while (m := _PAREN.search(data, pos)) is not None:
        at = m.start()
        if data[at] == 0x5C:
            pos = at + 2
            continue
        depth += 1 if data[at] == 0x28 else -1
        pos = at + 1
        if depth == 0:
            return pos
    return None


# -- small helpers --------------------------------------------------------------------------


def _key(obj: object) -> object:
    """An object's identity: its object number where it has one. pikepdf hands a null or a
    number in a dictionary over as a Python value, which has none."""
    objgen = getattr(obj, "objgen", (0, 0))
    return objgen if objgen != (0, 0) else id(obj)


def _get(container: pikepdf.Object | None, key: str) -> pikepdf.Object | None:
    if not isinstance(container, pikepdf.Dictionary):
        return None
    try:
        return container.get(key)
    except (ValueError, TypeError):
        return None


def _name(raw: bytes) -> str:
    return "/" + _NAME_ESCAPE.sub(lambda m: bytes([int(m.group(1), 16)]), raw).decode("latin-1")
