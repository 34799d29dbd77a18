"""Only what a page draws goes into an output: a kept page's content is parsed and written
again, and its resources are rebuilt from the names that content uses.

A source page carries more than it shows. Pages may share one ``/Resources`` dictionary, so a
page without a finding would carry the forms and fonts of a page with one; a content stream
may hold comments; an unused form, an image's own XMP, a form's ``/PieceInfo``, a marked
content property list (``/ActualText``, ``/Alt``, ``/E``) or a hidden optional-content layer
may hold text nobody sees. None of it survives this copy:

- content streams (the page's, forms', tiling patterns', Type 3 glyphs', soft masks' groups)
  are parsed and unparsed: comments and anything that is not an instruction go;
- marked content goes (tags and property lists alike: the output has no structure tree for
  them to serve), and so does any operator PDF does not define;
- content in an optional-content group hidden in the source's default view is removed, and a
  form or image hidden that way is not drawn; what is shown stays shown (the output has no
  layers);
- each resource category holds only the names used, recursively; forms and patterns are
  copied with the keys drawing needs, images and fonts lose their ``/Metadata`` and private
  keys in place.

Everything here works on pikepdf objects of one document; nothing is rendered.

Over 500 lines: one security-critical concept, a page copied with only what it draws; the
content rewrite and the resource rebuild must be read together."""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial

import pikepdf
from pikepdf import Array, Dictionary, Name

from pressroom.engines.fonts import embedded, fill_simple_truetype, substitute
from pressroom.engines.pdfstr import text_of

# keys a renderer needs, by kind of object; every other key is dropped
_FORM_KEYS = frozenset({"/Type", "/Subtype", "/FormType", "/BBox", "/Matrix", "/Group"})
_IMAGE_KEYS = frozenset(
    {
        "/Type",
        "/Subtype",
        "/Width",
        "/Height",
        "/ColorSpace",
        "/BitsPerComponent",
        "/Filter",
        "/DecodeParms",
        "/Decode",
        "/ImageMask",
        "/Mask",
        "/SMask",
        "/SMaskInData",
        "/Interpolate",
        "/Intent",
        "/Matte",
        "/Length",
    }
)
_PATTERN_KEYS = frozenset(
    {"/Type", "/PatternType", "/PaintType", "/TilingType", "/BBox", "/XStep", "/YStep", "/Matrix"}
)
# what drawing needs of the other kinds of object a page uses, by kind (the key that tells it)
_STREAM = {"/Length", "/Filter", "/DecodeParms"}
_ALLOWED: dict[str, frozenset[str]] = {
    "font": frozenset(
        """/Type /Subtype /BaseFont /FirstChar /LastChar /Widths /FontDescriptor /Encoding
        /ToUnicode /DescendantFonts /FontBBox /FontMatrix /CharProcs /Resources /Name
        /CIDSystemInfo /DW /W /DW2 /W2 /CIDToGIDMap""".split()
    ),
    "descriptor": frozenset(
        """/Type /FontName /FontFamily /FontStretch /FontWeight /Flags /FontBBox /ItalicAngle
        /Ascent /Descent /Leading /CapHeight /XHeight /StemV /StemH /AvgWidth /MaxWidth
        /MissingWidth /FontFile /FontFile2 /FontFile3 /CharSet /Style /Lang /FD
        /CIDSet""".split()
    ),
    "fontfile": frozenset({"/Length1", "/Length2", "/Length3", "/Subtype", *_STREAM}),
    "cmap": frozenset({"/Type", "/CMapName", "/CIDSystemInfo", "/WMode", "/UseCMap", *_STREAM}),
    "encoding": frozenset({"/Type", "/BaseEncoding", "/Differences"}),
    "state": frozenset(
        """/Type /LW /LC /LJ /ML /D /RI /OP /op /OPM /Font /BG /BG2 /UCR /UCR2 /TR /TR2 /HT
        /FL /SM /SA /BM /SMask /CA /ca /AIS /TK""".split()
    ),
    "group": frozenset({"/Type", "/S", "/CS", "/I", "/K"}),
    "shading": frozenset(
        """/ShadingType /ColorSpace /Background /BBox /AntiAlias /Coords /Domain /Function
        /Extend /Matrix /BitsPerCoordinate /BitsPerComponent /BitsPerFlag /Decode
        /VerticesPerRow""".split()
    )
    | _STREAM,
    "function": frozenset(
        """/FunctionType /Domain /Range /Size /BitsPerSample /Order /Encode /Decode /C0 /C1
        /N /Functions /Bounds""".split()
    )
    | _STREAM,
    "pattern": frozenset({"/Type", "/PatternType", "/Shading", "/Matrix", "/ExtGState"}),
    "icc": frozenset({"/N", "/Alternate", "/Range", *_STREAM}),
}
_FONT_FILES = ("/FontFile", "/FontFile2", "/FontFile3")
_SIMPLE = (Name.Type1, Name.MMType1, Name.TrueType)
# keys that carry data about an object rather than its drawing, dropped wherever they are met
_NOT_DRAWING = frozenset(
    {"/Metadata", "/PieceInfo", "/LastModified", "/StructParent", "/StructParents", "/OPI"}
)
_DEVICE_SPACES = frozenset({"/DeviceGray", "/DeviceRGB", "/DeviceCMYK", "/Pattern"})
# the colour spaces device colour is painted in where a resource dictionary defines them
_DEFAULT_SPACES = ("/DefaultGray", "/DefaultRGB", "/DefaultCMYK")
_CATEGORIES = ("/Font", "/XObject", "/ExtGState", "/ColorSpace", "/Pattern", "/Shading")
MAX_DEPTH = 40  # as deep as a renderer draws forms (pipeline.content)
# PDF's content operators; anything else draws nothing and is not copied
_OPERATORS = frozenset(
    """b B b* B* BI BT BX c cm CS cs d d0 d1 Do EI ET EX f F f* G g gs h i ID j J K k l m M
    n q Q re RG rg ri s S SC sc SCN scn sh T* Tc Td TD Tf TJ Tj TL Tm Tr Ts Tw Tz v w W W* y
    ' \"""".split()
)
_MARKED = frozenset({"BMC", "BDC", "EMC", "MP", "DP", "BX", "EX"})


@dataclass(frozen=True, slots=True)
class FontLeft:
    """A replaced standard font a page range's walk left unfilled, for the assembly."""

    font: Dictionary
    stem: str
    source: tuple[int, int]  # the source font's object number and generation
    codes: frozenset[int]


def fill_replaced(
    pdf: pikepdf.Pdf,
    font: Dictionary,
    stem: str,
    codes: Iterable[int],
    shared: dict[tuple[str, frozenset[int]], pikepdf.Object],
) -> None:
    """``font`` made the embedded Pressroom font ``stem`` for ``codes``, keeping the source's
    encoding and widths (``engines.fonts``); subsets shared through ``shared``."""
    widths, first = font.get("/Widths"), font.get("/FirstChar")
    fill_simple_truetype(
        pdf,
        font,
        stem,
        font.get("/Encoding"),
        codes,
        widths=widths if isinstance(widths, Array) else None,
        first_char=int(first) if isinstance(first, int) else None,
        shared=shared,
    )


def fill_left(pdf: pikepdf.Pdf, left: Sequence[FontLeft]) -> dict[tuple[int, int], Dictionary]:
    """The fonts page ranges left (``PageCleaner.finish_fonts``), now in one document: the
    copies of one source font, each range's, filled alike with the codes every range showed
    (all 256 where any range showed text in a font it could not tell, as one walk would);
    returns each copy but the first mapped to the first, for the caller to point every use
    at (one font object, as one walk makes)."""
    groups: dict[tuple[int, int], list[FontLeft]] = {}
    for item in left:
        groups.setdefault(item.source, []).append(item)
    everything = any(len(item.codes) == 256 for item in left)
    shared: dict[tuple[str, frozenset[int]], pikepdf.Object] = {}
    again: dict[tuple[int, int], Dictionary] = {}
    for key in sorted(groups):
        items = groups[key]
        codes = range(256) if everything else sorted(set().union(*(i.codes for i in items)))
        first = items[0].font
        fill_replaced(pdf, first, items[0].stem, codes, shared)
        for item in items[1:]:
            if item.font.objgen != first.objgen:
                again[item.font.objgen] = first
    return again


class PageCleaner:
    """Clean copies of one document's pages, each shared object cleaned once."""

    def __init__(
        self,
        pdf: pikepdf.Pdf,
        *,
        scrub_images: bool = False,
        defer_fonts: bool = False,
        keep_marked: bool | None = None,
    ) -> None:
        self.pdf = pdf
        # a tagged document's marked content (BMC/BDC/EMC at page level, each property list
        # made again of its MCID and text alternatives) stays, so its structure tree still
        # points at the content (pipeline.structure); None: where the document is tagged and
        # the copy is not a redaction's (scrub_images)
        self.keep_marked = (
            keep_marked if keep_marked is not None else (not scrub_images and is_tagged(pdf))
        )
        # a standard font replaced by an embedded one gets only the glyphs its text shows,
        # once every page is read (``finish_fonts``); else every Latin glyph at first use (a
        # page copied out at once, as redaction's kept pages are)
        self.defer_fonts = defer_fonts
        self._pending: dict[tuple[int, int], tuple[Dictionary, str]] = {}
        self._shown: dict[tuple[int, int], set[int]] = {}
        self._unattributed = False  # text shown in a font this walk could not tell
        # JPEG images lose their APPn and comment segments (EXIF, XMP, a camera's notes):
        # each is rewritten in memory, so only where the output is a redaction's
        self.scrub_images = scrub_images
        self.hidden = hidden_groups(pdf)
        self._streams: dict[tuple[int, int], pikepdf.Object] = {}  # Type 3 fonts
        self._forms: dict[tuple[tuple[int, int], object], pikepdf.Object] = {}
        self._open: set[tuple[tuple[int, int], object]] = set()  # forms being cleaned
        self._objects: set[tuple[int, int]] = set()
        self._names: dict[int, dict[tuple[str, str], str]] = {}  # per content stream
        self._embedded: set[tuple[int, int]] = set()  # fonts judged for embedding
        self._font_files: dict[tuple[str, frozenset[int]], pikepdf.Object] = {}

    def page_form(self, page: pikepdf.Page, bbox: Sequence[float]) -> pikepdf.Stream:
        """The page as a form XObject holding only what its content draws."""
        resources = inherited(page.obj, "/Resources")
        data = b"\n".join(_stream_data(s) for s in content_streams(page.obj.get("/Contents")))
        content, used = self._content(data, resources, 0)
        form = self.pdf.make_stream(content)
        form.Type = Name.XObject
        form.Subtype = Name.Form
        form.BBox = Array([float(v) for v in bbox])
        form.Resources = used
        parents = page.obj.get("/StructParents")
        if self.keep_marked and isinstance(parents, int) and not isinstance(parents, bool):
            # the marked content's MCIDs are now the form's: its key in the parent tree
            # (PDF 32000 14.7.4.3)
            form.StructParents = parents
        group = page.obj.get("/Group")
        if isinstance(group, Dictionary):
            form.Group = self._generic(group, 0)
        return form

    # -- content streams ------------------------------------------------------------------

    def _content(
        self,
        data: bytes,
        resources: pikepdf.Object | None,
        depth: int,
        shared: dict[str, dict[str, pikepdf.Object]] | None = None,
    ) -> tuple[bytes, Dictionary]:
        """``data`` parsed and written again, and the resources it uses, cleaned (into
        ``shared`` when given: streams with one resource dictionary, a Type 3 font's glyphs)."""
        if depth > MAX_DEPTH:
            return b"", Dictionary()
        instructions = _parse(self.pdf, data)
        used: dict[str, dict[str, pikepdf.Object]] = {} if shared is None else shared
        if shared is None:
            self._names[id(used)] = {}  # this stream's renaming, for as long as it is read
        kept: list[pikepdf.ContentStreamInstruction | pikepdf.ContentStreamInlineImage] = []
        skipping = 0  # marked-content depth inside a hidden group (0: drawing)
        marks: list[bool] = []  # each open marked-content sequence: whether it was kept
        keep_marked = self.keep_marked and depth == 0
        font: object = None  # the text font in force (q/Q save and restore it)
        fonts: list[object] = []
        for instruction in instructions:
            if isinstance(instruction, pikepdf.ContentStreamInlineImage):
                if not skipping:
                    kept.append(self._inline(instruction, resources, used))
                continue
            op = text_of(instruction.operator)
            operands = list(instruction.operands)
            if skipping:
                if op in ("BMC", "BDC"):
                    skipping += 1
                elif op == "EMC":
                    skipping -= 1
                continue
            if op == "BDC" and operands and operands[0] == Name("/OC"):
                if self._hidden_mark(operands, resources):
                    skipping = 1
                else:
                    marks.append(False)
                continue
            if keep_marked and op in ("BMC", "BDC", "EMC"):
                if op == "EMC":
                    if marks and marks.pop():
                        kept.append(instruction)
                    continue
                if op == "BDC":
                    marked = _marked(operands, resources)
                    if marked is None:
                        marks.append(False)
                        continue
                    instruction = pikepdf.ContentStreamInstruction(marked, pikepdf.Operator(op))
                elif not operands or not isinstance(operands[0], Name):
                    marks.append(False)
                    continue
                marks.append(True)
                kept.append(instruction)
                continue
            if op in _MARKED or op not in _OPERATORS:
                # marked content carries only tags and property lists (no structure tree
                # here for them to serve); an unknown operator draws nothing
                continue
            if self.defer_fonts:
                if op == "q":
                    fonts.append(font)
                elif op == "Q" and fonts:
                    font = fonts.pop()
                elif op == "Tf" and operands:
                    font = _resource(resources, "/Font", operands[0])
                elif op in ("Tj", "TJ", "'", '"'):
                    self._note_shown(font, operands)
            renamed: list[pikepdf.Object] = list(operands)
            if op == "Do" and operands:
                target = _resource(resources, "/XObject", operands[0])
                if not isinstance(target, pikepdf.Stream) or self._hidden_object(target):
                    continue  # nothing drawn: nothing copied
                renamed[0] = self._named(
                    used, "/XObject", operands[0], partial(self._xobject, target, resources, depth)
                )
            elif op == "Tf" and operands:
                renamed[0] = self._use(used, resources, "/Font", operands[0], depth)
            elif op == "gs" and operands:
                renamed[0] = self._use(used, resources, "/ExtGState", operands[0], depth)
            elif op in ("cs", "CS") and operands:
                if text_of(operands[0]) not in _DEVICE_SPACES:
                    renamed[0] = self._use(used, resources, "/ColorSpace", operands[0], depth)
            elif op in ("scn", "SCN") and operands and isinstance(operands[-1], Name):
                renamed[-1] = self._use(used, resources, "/Pattern", operands[-1], depth)
            elif op == "sh" and operands:
                renamed[0] = self._use(used, resources, "/Shading", operands[0], depth)
            if any(a is not b for a, b in zip(renamed, operands, strict=True)):
                instruction = pikepdf.ContentStreamInstruction(renamed, pikepdf.Operator(op))
            kept.append(instruction)
        self._defaults(used, resources, depth)
        if shared is None:
            del self._names[id(used)]
        out = Dictionary()
        for category in _CATEGORIES:
            if category in used:
                out[category] = Dictionary(used[category])
        return pikepdf.unparse_content_stream(kept), out

    def _defaults(
        self,
        used: dict[str, dict[str, pikepdf.Object]],
        resources: pikepdf.Object | None,
        depth: int,
    ) -> None:
        """The stream's default colour spaces, kept under their own names: no operator names
        them, yet every device colour the stream paints is painted in them (PDF 32000
        8.6.5.6), so without them a calibrated page prints in other colours. Not in a
        redaction's copy (``scrub_images``): an ICC profile's own text (its description,
        copyright) is text a producer chose, which no check reads; device colour is kept."""
        if self.scrub_images:
            return
        group = resources.get("/ColorSpace") if isinstance(resources, Dictionary) else None
        if not isinstance(group, Dictionary):
            return
        for name in _DEFAULT_SPACES:
            space = group.get(name)
            if space is not None:
                used.setdefault("/ColorSpace", {})[name] = self._generic(space, depth)

    def _use(
        self,
        used: dict[str, dict[str, pikepdf.Object]],
        resources: pikepdf.Object | None,
        category: str,
        name: pikepdf.Object,
        depth: int,
    ) -> pikepdf.Object:
        """The name ``name`` goes by in the copy, its resource cleaned and added to ``used``
        (a name with nothing behind it stays as it is: it draws nothing)."""
        target = _resource(resources, category, name)
        if target is None:
            return name
        if category == "/Font":
            clean = lambda: self._font(target, resources, depth)  # noqa: E731
        elif category == "/Pattern":
            clean = lambda: self._pattern(target, resources, depth)  # noqa: E731
        elif category == "/ExtGState":
            clean = lambda: self._state(target, resources, depth)  # noqa: E731
        else:
            clean = lambda: self._generic(target, depth)  # noqa: E731
        return self._named(used, category, name, clean)

    def _named(
        self,
        used: dict[str, dict[str, pikepdf.Object]],
        category: str,
        name: pikepdf.Object,
        clean: Callable[[], pikepdf.Object],
    ) -> Name:
        """Resources are renamed in the copy (``/R0``, ``/R1``…): a name is text a producer
        chose, and may be a person's."""
        names = self._names[id(used)]
        key = (category, name.unparse().decode("latin-1"))  # #xx escapes: one key a name
        if key not in names:
            names[key] = f"/R{len(names)}"
            used.setdefault(category, {})[names[key]] = clean()
        return Name(names[key])

    def _xobject(
        self, target: pikepdf.Stream, resources: pikepdf.Object | None, depth: int
    ) -> pikepdf.Object:
        subtype = target.get("/Subtype")
        if subtype == Name.Form:
            return self._form(target, resources, depth, _FORM_KEYS)
        if subtype == Name.Image:
            return self._image(target, depth)
        return self._generic(target, depth)  # PostScript XObjects: nothing PDF draws

    def _form(
        self,
        form: pikepdf.Stream,
        parent: pikepdf.Object | None,
        depth: int,
        keys: frozenset[str],
    ) -> pikepdf.Object:
        """A form (or tiling pattern, or glyph) copied with its content written again and
        only the resources it uses. One with resources of its own is cleaned once."""
        own = form.get("/Resources")
        resources = own if isinstance(own, Dictionary) else parent
        # one clean copy a form and the resources it reads (its own, or its caller's): a
        # form drawn many times, or drawing itself, is cleaned once, never once a use
        key = (
            (form.objgen, _key(resources) if not isinstance(own, Dictionary) else None)
            if form.is_indirect
            else None
        )
        if key is not None and key in self._forms:
            return self._forms[key]
        if key is not None and key in self._open:
            return self.pdf.make_indirect(self.pdf.make_stream(b""))  # drawing itself
        if key is not None:
            self._open.add(key)
        try:
            content, used = self._content(_stream_data(form), resources, depth + 1)
        finally:
            if key is not None:
                self._open.discard(key)
        copy = self.pdf.make_stream(content)
        for k in keys:
            if k in form:
                value = form[k]
                copy[k] = self._generic(value, depth + 1) if k == "/Group" else value
        copy.Resources = used
        indirect = self.pdf.make_indirect(copy)
        if key is not None:
            self._forms[key] = indirect
        return indirect

    def _inline(
        self,
        instruction: pikepdf.ContentStreamInlineImage,
        resources: pikepdf.Object | None,
        used: dict[str, dict[str, pikepdf.Object]],
    ) -> pikepdf.ContentStreamInstruction | pikepdf.ContentStreamInlineImage:
        """An inline image with only the keys that decode it stays inline; one that carries
        anything else becomes an image XObject with only those keys (a dictionary inside a
        content stream can hold text like any other)."""
        image = instruction.iimage
        try:
            obj = image.obj
            if all(str(k) in _IMAGE_KEYS for k in obj):
                return instruction
            stream = self.pdf.make_stream(bytes(image.read_raw_bytes()))
        except (pikepdf.PdfError, ValueError, TypeError, AttributeError):
            return instruction  # as it came; the leak check reads its dictionary
        for k, value in obj.items():
            if k not in _IMAGE_KEYS or k == "/Length":
                continue
            if k == "/ColorSpace" and isinstance(value, Name) and str(value) not in _DEVICE_SPACES:
                value = _resource(resources, "/ColorSpace", value) or value
            stream[k] = self._generic(value, 1)
        stream.Type, stream.Subtype = Name.XObject, Name.Image
        name = f"/R{len(self._names[id(used)])}"
        self._names[id(used)][("/XObject", name)] = name
        used.setdefault("/XObject", {})[name] = self.pdf.make_indirect(stream)
        return pikepdf.ContentStreamInstruction([Name(name)], pikepdf.Operator("Do"))

    def _image(self, image: pikepdf.Stream, depth: int) -> pikepdf.Object:
        """An image keeps its pixels and the keys that decode them, in place."""
        if _cross_reference(image):
            return image
        if image.is_indirect and image.objgen in self._objects:
            return image
        if image.is_indirect:
            self._objects.add(image.objgen)
        for k in list(image.keys()):
            if k not in _IMAGE_KEYS:
                del image[k]
        if self.scrub_images and _filters(image) == ["/DCTDecode"]:
            raw = bytes(image.read_raw_bytes())
            bare = bare_jpeg(raw)
            if bare != raw:
                parms = image.get("/DecodeParms")
                image.write(
                    bare,
                    filter=Name.DCTDecode,
                    decode_parms=parms if isinstance(parms, Dictionary | Array) else None,
                )
        for k in ("/SMask", "/Mask"):
            mask = image.get(k)
            if isinstance(mask, pikepdf.Stream):
                self._image(mask, depth + 1)
        space = image.get("/ColorSpace")
        if space is not None:
            self._generic(space, depth + 1)
        return image

    def _font(
        self, font: pikepdf.Object, resources: pikepdf.Object | None, depth: int
    ) -> pikepdf.Object:
        if not isinstance(font, Dictionary):
            return font
        if font.get("/Subtype") != Name.Type3:
            return self._embed(self._generic(font, depth))
        # a Type 3 font's glyphs are content streams: each written again, with what they use
        key = font.objgen if font.is_indirect else None
        if key is not None and key in self._streams:
            return self._streams[key]
        own = font.get("/Resources")
        glyph_resources = own if isinstance(own, Dictionary) else resources
        copy = Dictionary()
        merged: dict[str, dict[str, pikepdf.Object]] = {}  # every glyph's, one renaming
        self._names[id(merged)] = {}
        for k, value in font.items():
            if k in _NOT_DRAWING or k == "/Resources" or k not in _ALLOWED["font"]:
                continue
            if k == "/CharProcs" and isinstance(value, Dictionary):
                procs = Dictionary()
                for glyph, proc in value.items():
                    if not isinstance(proc, pikepdf.Stream):
                        continue
                    content, _used = self._content(
                        _stream_data(proc), glyph_resources, depth + 1, merged
                    )
                    procs[glyph] = self.pdf.make_stream(content)
                copy[k] = procs
            else:
                copy[k] = self._generic(value, depth + 1)
        del self._names[id(merged)]
        copy.Resources = Dictionary({c: Dictionary(n) for c, n in merged.items()})
        indirect = self.pdf.make_indirect(copy)
        if key is not None:
            self._streams[key] = indirect
        return indirect

    def _embed(self, font: pikepdf.Object) -> pikepdf.Object:
        """A standard font the source leaves out (Helvetica, Times, Courier and their everyday
        names) made the embedded, metric-compatible Pressroom font, in place: the text keeps
        its codes, encoding and widths (engines.fonts)."""
        if not isinstance(font, Dictionary) or font.get("/Subtype") not in _SIMPLE:
            return font
        key = font.objgen if font.is_indirect else None
        if key is not None and key in self._embedded:
            return font
        if key is not None:
            self._embedded.add(key)
        base = font.get("/BaseFont")
        stem = substitute(str(base)) if isinstance(base, Name) else None
        if stem is None or embedded(font):
            return font
        if self.defer_fonts and key is not None:
            self._pending[key] = (font, stem)
            self._shown.setdefault(key, set())
            return font
        self._fill(font, stem, range(256))
        return font

    def _fill(self, font: Dictionary, stem: str, codes: Iterable[int]) -> None:
        fill_replaced(self.pdf, font, stem, codes, self._font_files)

    def finish_fonts(self, left: list[FontLeft] | None = None) -> None:
        """The replaced fonts, each with the glyphs of the codes its text shows (all of them
        wherever text was shown in a font this walk could not tell: fail open to the glyphs,
        never to a missing one).

        ``left``: this walk read a page range only, whose part is put together with the
        others later: its fonts are left as the source's and said here instead (the source
        font, its stem, the codes shown), so that the assembly fills each once with every
        range's codes (``fill_left``) and the whole is the same bytes as one walk makes."""
        for key, (font, stem) in self._pending.items():
            codes = range(256) if self._unattributed else self._shown[key] | {32}
            if left is not None:
                left.append(FontLeft(font, stem, key, frozenset(codes)))
            else:
                self._fill(font, stem, codes)
        self._pending.clear()

    def _note_shown(self, font: object, operands: Sequence[object]) -> None:
        """The codes a text-showing operator shows in ``font``, for its subset."""
        key = font.objgen if isinstance(font, Dictionary) and font.is_indirect else None
        strings: list[bytes] = []
        for operand in operands:
            if isinstance(operand, pikepdf.String):
                strings.append(bytes(operand))
            elif isinstance(operand, Array):
                strings += [bytes(s) for s in operand if isinstance(s, pikepdf.String)]
        if not strings:
            return
        if key is None:
            if font is None:
                self._unattributed = True  # no Tf seen here: the caller's font, unknown
            return
        if key in self._shown:
            for data in strings:
                self._shown[key].update(data)

    def _pattern(
        self, pattern: pikepdf.Object, resources: pikepdf.Object | None, depth: int
    ) -> pikepdf.Object:
        if isinstance(pattern, pikepdf.Stream):  # a tiling pattern: content of its own
            return self._form(pattern, resources, depth, _PATTERN_KEYS)
        return self._generic(pattern, depth)

    def _state(
        self, state: pikepdf.Object, resources: pikepdf.Object | None, depth: int
    ) -> pikepdf.Object:
        if not isinstance(state, Dictionary):
            return state
        copy = Dictionary()
        for k, value in state.items():
            if k in _NOT_DRAWING or k not in _ALLOWED["state"]:
                continue
            if k == "/SMask" and isinstance(value, Dictionary):
                mask = Dictionary()
                for mk, mv in value.items():
                    if mk == "/G" and isinstance(mv, pikepdf.Stream):
                        mask[mk] = self._form(mv, resources, depth, _FORM_KEYS)
                    elif mk not in _NOT_DRAWING:
                        mask[mk] = self._generic(mv, depth + 1)
                copy[k] = mask
            elif k == "/Font" and isinstance(value, Array) and len(value) == 2:
                copy[k] = Array([self._font(value[0], resources, depth), value[1]])
            else:
                copy[k] = self._generic(value, depth + 1)
        return copy

    def _generic(self, obj: pikepdf.Object, depth: int) -> pikepdf.Object:
        """Any other object, in place: keys that describe rather than draw are dropped from it
        and from everything below it (fonts' files, colour profiles, shadings, functions)."""
        if depth > MAX_DEPTH or _cross_reference(obj):
            return obj
        if isinstance(obj, Dictionary | pikepdf.Stream):
            if obj.is_indirect:
                if obj.objgen in self._objects:
                    return obj
                self._objects.add(obj.objgen)
            allowed = _ALLOWED.get(_kind(obj))
            for k in list(obj.keys()):
                if k in _NOT_DRAWING or (allowed is not None and k not in allowed):
                    del obj[k]
            for k, value in list(obj.items()):
                if k in _FONT_FILES and isinstance(value, pikepdf.Stream):
                    self._only(value, "fontfile")
                elif k == "/ToUnicode" and isinstance(value, pikepdf.Stream):
                    self._only(value, "cmap")
                else:
                    self._generic(value, depth + 1)
        elif isinstance(obj, Array):
            for value in list(obj):
                self._generic(value, depth + 1)
        return obj

    def _only(self, stream: pikepdf.Stream, kind: str) -> None:
        """A stream whose data is what matters (a font program, a CMap): only its keys."""
        if _cross_reference(stream):
            return
        if stream.is_indirect:
            if stream.objgen in self._objects:
                return
            self._objects.add(stream.objgen)
        for k in list(stream.keys()):
            if k not in _ALLOWED[kind]:
                del stream[k]

    # -- optional content -----------------------------------------------------------------

    def _hidden_mark(self, operands: Sequence[pikepdf.Object], resources: object) -> bool:
        if len(operands) < 2:
            return False
        group: object = operands[1]
        if isinstance(group, Name):
            group = _resource(resources, "/Properties", group)
        return self._hidden_group(group)

    def _hidden_object(self, target: pikepdf.Stream) -> bool:
        return self._hidden_group(target.get("/OC"))

    def _hidden_group(self, group: object) -> bool:
        """Whether an optional-content group or membership dictionary is off in the source's
        default view."""
        if not isinstance(group, Dictionary):
            return False
        if group.get("/Type") == Name.OCMD:
            expression = group.get("/VE")
            if expression is not None:
                # what cannot be read is hidden: removed
                return self._visible(expression, 0) is not True
            members = group.get("/OCGs")
            if isinstance(members, Dictionary):
                members = Array([members])
            if not isinstance(members, Array) or not len(members):
                return False
            shown = [not self._off(m) for m in members]
            policy = text_of(group.get("/P", "/AnyOn"))
            if policy == "/AllOn":
                return not all(shown)
            if policy == "/AnyOff":
                return all(shown)
            if policy == "/AllOff":
                return any(shown)
            return not any(shown)
        return self._off(group)

    def _visible(self, expression: object, depth: int) -> bool | None:
        """A visibility expression (``[/And …]``, ``[/Or …]``, ``[/Not …]`` over groups);
        None when it cannot be read."""
        if depth > 16:
            return None
        if isinstance(expression, Dictionary):
            return not self._off(expression)
        if not isinstance(expression, Array) or not len(expression):
            return None
        op, args = expression[0], [self._visible(a, depth + 1) for a in list(expression)[1:]]
        if any(a is None for a in args) or not args:
            return None
        if op == Name.And:
            return all(args)
        if op == Name.Or:
            return any(args)
        if op == Name.Not and len(args) == 1:
            return not args[0]
        return None

    def _off(self, group: object) -> bool:
        return isinstance(group, Dictionary) and group.is_indirect and group.objgen in self.hidden


# what a kept marked-content property list holds: its structure key and text alternatives
_MARK_KEYS = ("/MCID", "/ActualText", "/Alt", "/E", "/Lang")


def _marked(operands: Sequence[object], resources: object) -> list[pikepdf.Object] | None:
    """A BDC's operands made again: its tag and a property list (inline, or named in the
    resources) of its MCID and text alternatives only; None for one that is malformed."""
    if len(operands) != 2 or not isinstance(operands[0], Name):
        return None
    props = operands[1]
    if isinstance(props, Name):
        props = _resource(resources, "/Properties", props)
    if not isinstance(props, Dictionary):
        return None
    kept = Dictionary()
    for key in _MARK_KEYS:
        value = props.get(key)
        if key == "/MCID":
            if isinstance(value, int) and not isinstance(value, bool):
                kept[key] = value
        elif isinstance(value, pikepdf.String):
            kept[key] = value
    return [operands[0], kept]


def is_tagged(pdf: pikepdf.Pdf) -> bool:
    """Whether the document has a structure tree (a tagged PDF's)."""
    return isinstance(pdf.Root.get("/StructTreeRoot"), Dictionary)


def _filters(stream: pikepdf.Stream) -> list[str]:
    found = stream.get("/Filter")
    if isinstance(found, Name):
        return [text_of(found)]
    if isinstance(found, Array):
        return [text_of(f) for f in found]
    return []


def bare_jpeg(data: bytes) -> bytes:
    """A JPEG with only the segments that decode it: every APPn but Adobe's colour-transform
    marker (APP14) and every comment go, and so does anything after the end of the image.
    Data that does not parse as a JPEG is given back as it came."""
    if data[:2] != b"\xff\xd8":
        return data
    out = bytearray(b"\xff\xd8")
    i, n = 2, len(data)
    while i < n:
        if data[i] != 0xFF:
            return data
        while i < n and data[i] == 0xFF:
            i += 1
        if i >= n:
            return data
        marker = data[i]
        i += 1
        if marker == 0xD9:  # end of image: whatever follows is not the image
            return bytes(out + b"\xff\xd9")
        if 0xD0 <= marker <= 0xD7 or marker == 0x01:
            out += bytes((0xFF, marker))
            continue
        if i + 2 > n:
            return data
        length = int.from_bytes(data[i : i + 2], "big")
        if length < 2 or i + length > n:
            return data
        segment = data[i : i + length]
        i += length
        metadata = 0xE0 <= marker <= 0xEF or marker == 0xFE
        if not metadata or (marker == 0xEE and segment[2:7] == b"Adobe"):
            out += bytes((0xFF, marker)) + segment
        if marker == 0xDA:  # a scan: its entropy-coded data runs to the next marker
            j = i
            while j + 1 < n and not (data[j] == 0xFF and data[j + 1] not in _IN_SCAN):
                j += 1
            out += data[i:j]
            i = j
    return data  # no end marker: not a JPEG we understand


_IN_SCAN = frozenset({0x00, *range(0xD0, 0xD8), 0xFF})


def hidden_groups(pdf: pikepdf.Pdf) -> frozenset[tuple[int, int]]:
    """The optional-content groups the default view hides."""
    props = pdf.Root.get("/OCProperties")
    if not isinstance(props, Dictionary):
        return frozenset()
    view = props.get("/D")
    if not isinstance(view, Dictionary):
        return frozenset()
    every = [g for g in _array(props.get("/OCGs")) if _indirect(g)]
    on = {g.objgen for g in _array(view.get("/ON")) if _indirect(g)}
    off = {g.objgen for g in _array(view.get("/OFF")) if _indirect(g)}
    if view.get("/BaseState") == Name.OFF:
        hidden = {g.objgen for g in every if g.objgen not in on}
    else:
        hidden = set(off)
    # auto-state for viewing (what a viewer applies on opening): a group whose usage says
    # its view state is off is hidden, on is shown
    for usage in _array(view.get("/AS")):
        if not isinstance(usage, Dictionary) or usage.get("/Event") != Name.View:
            continue
        if Name.View not in list(_array(usage.get("/Category"))):
            continue
        for g in _array(usage.get("/OCGs")):
            state = _view_state(g)
            if state is not None and _indirect(g):
                (hidden.add if state == "off" else hidden.discard)(g.objgen)
    return frozenset(hidden)


def _indirect(obj: object) -> bool:
    """Whether an array's item is an indirect object (pikepdf hands a null or a number over
    as a Python value, which is not)."""
    return isinstance(obj, pikepdf.Object) and obj.is_indirect


def _view_state(group: object) -> str | None:
    usage = group.get("/Usage") if isinstance(group, Dictionary) else None
    view = usage.get("/View") if isinstance(usage, Dictionary) else None
    state = view.get("/ViewState") if isinstance(view, Dictionary) else None
    if state == Name.OFF:
        return "off"
    if state == Name.ON:
        return "on"
    return None


# -- small helpers --------------------------------------------------------------------------


_FONT_TYPES = frozenset(
    {"/Type0", "/Type1", "/MMType1", "/Type3", "/TrueType", "/CIDFontType0", "/CIDFontType2"}
)


def _cross_reference(obj: object) -> bool:
    """A cross-reference stream, reached from a page by a damaged or hostile reference (a font
    file, an image that is the file's own index). qpdf's trailer is that stream's dictionary:
    a key taken out of it would take the document's /Root with it. It is left as it is (it
    draws nothing a renderer accepts)."""
    return isinstance(obj, pikepdf.Stream) and obj.get("/Type") == Name.XRef


def _kind(obj: pikepdf.Object) -> str:
    """Which allow-list a dictionary (or stream) falls under; "" for none."""
    kind = obj.get("/Type")
    if kind == Name.Font or (kind is None and obj.get("/Subtype") in _FONT_TYPES):
        return "font" if str(obj.get("/Subtype")) in _FONT_TYPES else ""
    if kind == Name.FontDescriptor:
        return "descriptor"
    if kind == Name.Encoding or ("/Differences" in obj and "/Subtype" not in obj):
        return "encoding"
    if kind == Name.ExtGState:
        return "state"
    if kind == Name.Group or obj.get("/S") == Name.Transparency:
        return "group"
    if "/ShadingType" in obj:
        return "shading"
    if "/FunctionType" in obj:
        return "function"
    if obj.get("/PatternType") == 2:
        return "pattern"
    if isinstance(obj, pikepdf.Stream) and "/N" in obj and "/Alternate" in obj:
        return "icc"
    return ""


def _key(obj: object) -> object:
    if isinstance(obj, pikepdf.Object) and obj.objgen != (0, 0):
        return obj.objgen
    return id(obj)


def _array(obj: object) -> Iterable[pikepdf.Object]:
    return list(obj) if isinstance(obj, Array) else []


def _parse(
    pdf: pikepdf.Pdf, data: bytes
) -> list[pikepdf.ContentStreamInstruction | pikepdf.ContentStreamInlineImage]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return list(pikepdf.parse_content_stream(pikepdf.Stream(pdf, data)))


def _stream_data(stream: pikepdf.Stream) -> bytes:
    # (the page's cost was measured under caps before anything gets here: pipeline.content)
    return bytes(stream.read_bytes())


def content_streams(contents: object) -> list[pikepdf.Stream]:
    """A page's ``/Contents``: one stream or an array of them."""
    if isinstance(contents, pikepdf.Stream):
        return [contents]
    if isinstance(contents, Array):
        return [s for s in contents if isinstance(s, pikepdf.Stream)]
    return []


def _resource(resources: object, category: str, name: object) -> pikepdf.Object | None:
    if not isinstance(resources, Dictionary) or not isinstance(name, Name):
        return None
    group = resources.get(category)
    if not isinstance(group, Dictionary):
        return None
    found = group.get(name)  # by the name itself: its bytes need not be UTF-8
    if found is None:
        # a key spelt with #xx escapes where the content spells the character (or the other
        # way round) is the same name to a renderer
        wanted = _unescaped(text_of(name))
        for key, value in group.items():
            if _unescaped(key) == wanted:
                return value
    return found


def _unescaped(name: str) -> str:
    return re.sub(r"#([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), name)


def inherited(page: pikepdf.Object, key: str) -> pikepdf.Object | None:
    """A page attribute, from the page or the nearest node above it that has it."""
    node: pikepdf.Object | None = page
    seen: set[object] = set()
    # as far up as a renderer goes: to the root, however deep the tree (cycles end it)
    while isinstance(node, Dictionary) and _key(node) not in seen:
        seen.add(_key(node))
        value = node.get(key)
        if value is not None:
            return value
        node = node.get("/Parent")
    return None
