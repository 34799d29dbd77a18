"""Only what a page draws goes into an output: a kept page's content is parsed and written
again, and its resources are rebuilt from the names that content uses.

A source page carries more than it shows. Pages may share one ``/Resources`` dictionary, so a
page without a finding would carry the forms and fonts of a page with one; a content stream
may hold comments; an unused form, an image's own XMP, a form's ``/PieceInfo``, a marked
content property list (``/ActualText``, ``/Alt``, ``/E``) or a hidden optional-content layer
may hold text nobody sees. None of it survives this copy:

- content streams (the page's, forms', tiling patterns', Type 3 glyphs', soft masks' groups)
  are parsed and unparsed: comments and anything that is not an instruction go;
- marked content keeps its tag only (``BDC`` becomes ``BMC``, ``DP`` becomes ``MP``): the
  output has no structure tree for a property list to serve;
- content in an optional-content group hidden in the source's default view is removed, and a
  form or image hidden that way is not drawn; what is shown stays shown (the output has no
  layers);
- each resource category holds only the names used, recursively; forms and patterns are
  copied with the keys drawing needs, images and fonts lose their ``/Metadata`` and private
  keys in place.

Everything here works on pikepdf objects of one document; nothing is rendered."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence

import pikepdf
from pikepdf import Array, Dictionary, Name

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
# keys that carry data about an object rather than its drawing, dropped wherever they are met
_NOT_DRAWING = frozenset(
    {"/Metadata", "/PieceInfo", "/LastModified", "/StructParent", "/StructParents", "/OPI"}
)
_DEVICE_SPACES = frozenset({"/DeviceGray", "/DeviceRGB", "/DeviceCMYK", "/Pattern"})
_CATEGORIES = ("/Font", "/XObject", "/ExtGState", "/ColorSpace", "/Pattern", "/Shading")
MAX_DEPTH = 40  # as deep as a renderer draws forms (pipeline.content)


class PageCleaner:
    """Clean copies of one document's pages, each shared object cleaned once."""

    def __init__(self, pdf: pikepdf.Pdf) -> None:
        self.pdf = pdf
        self.hidden = hidden_groups(pdf)
        self._streams: dict[tuple[int, int], pikepdf.Object] = {}
        self._objects: set[tuple[int, int]] = set()

    def page_form(self, page: pikepdf.Page, bbox: Sequence[float]) -> pikepdf.Stream:
        """The page as a form XObject holding only what its content draws."""
        resources = inherited(page.obj, "/Resources")
        data = b"\n".join(_stream_data(s) for s in _content_streams(page.obj.get("/Contents")))
        content, used = self._content(data, resources, 0)
        form = self.pdf.make_stream(content)
        form.Type = Name.XObject
        form.Subtype = Name.Form
        form.BBox = Array([float(v) for v in bbox])
        form.Resources = used
        group = page.obj.get("/Group")
        if isinstance(group, Dictionary):
            form.Group = self._generic(group, 0)
        return form

    # -- content streams ------------------------------------------------------------------

    def _content(
        self, data: bytes, resources: pikepdf.Object | None, depth: int
    ) -> tuple[bytes, Dictionary]:
        """``data`` parsed and written again, and the resources it uses, cleaned."""
        if depth > MAX_DEPTH:
            return b"", Dictionary()
        instructions = _parse(self.pdf, data)
        used: dict[str, dict[str, pikepdf.Object]] = {}
        kept: list[pikepdf.ContentStreamInstruction | pikepdf.ContentStreamInlineImage] = []
        skipping = 0  # marked-content depth inside a hidden group (0: drawing)
        for instruction in instructions:
            if isinstance(instruction, pikepdf.ContentStreamInlineImage):
                if not skipping:
                    kept.append(instruction)
                continue
            op = str(instruction.operator)
            operands = list(instruction.operands)
            if skipping:
                if op in ("BMC", "BDC"):
                    skipping += 1
                elif op == "EMC":
                    skipping -= 1
                continue
            if op == "BDC" and operands:
                if operands[0] == Name("/OC") and self._hidden_mark(operands, resources):
                    skipping = 1
                    continue
                kept.append(
                    pikepdf.ContentStreamInstruction([operands[0]], pikepdf.Operator("BMC"))
                )
                continue
            if op == "DP" and operands:
                kept.append(pikepdf.ContentStreamInstruction([operands[0]], pikepdf.Operator("MP")))
                continue
            if op == "Do" and operands:
                target = _resource(resources, "/XObject", operands[0])
                if not isinstance(target, pikepdf.Stream) or self._hidden_object(target):
                    continue  # nothing drawn: nothing copied
                used.setdefault("/XObject", {})[str(operands[0])] = self._xobject(
                    target, resources, depth
                )
            elif op == "Tf" and operands:
                self._use(used, resources, "/Font", operands[0], depth)
            elif op == "gs" and operands:
                self._use(used, resources, "/ExtGState", operands[0], depth)
            elif op in ("cs", "CS") and operands:
                if str(operands[0]) not in _DEVICE_SPACES:
                    self._use(used, resources, "/ColorSpace", operands[0], depth)
            elif op in ("scn", "SCN") and operands and isinstance(operands[-1], Name):
                self._use(used, resources, "/Pattern", operands[-1], depth)
            elif op == "sh" and operands:
                self._use(used, resources, "/Shading", operands[0], depth)
            kept.append(instruction)
        if skipping:
            pass  # an unclosed hidden group hides to the end of the stream
        out = Dictionary()
        for category in _CATEGORIES:
            if category in used:
                out[category] = Dictionary(used[category])
        return pikepdf.unparse_content_stream(kept), out

    def _use(
        self,
        used: dict[str, dict[str, pikepdf.Object]],
        resources: pikepdf.Object | None,
        category: str,
        name: pikepdf.Object,
        depth: int,
    ) -> None:
        if not isinstance(name, Name) or str(name) in used.get(category, {}):
            return
        target = _resource(resources, category, name)
        if target is None:
            return
        if category == "/Font":
            cleaned = self._font(target, resources, depth)
        elif category == "/Pattern":
            cleaned = self._pattern(target, resources, depth)
        elif category == "/ExtGState":
            cleaned = self._state(target, resources, depth)
        else:
            cleaned = self._generic(target, depth)
        used.setdefault(category, {})[str(name)] = cleaned

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
        key = form.objgen if isinstance(own, Dictionary) and form.is_indirect else None
        if key is not None and key in self._streams:
            return self._streams[key]
        content, used = self._content(
            _stream_data(form), own if isinstance(own, Dictionary) else parent, depth + 1
        )
        copy = self.pdf.make_stream(content)
        for k in keys:
            if k in form:
                value = form[k]
                copy[k] = self._generic(value, depth + 1) if k == "/Group" else value
        copy.Resources = used
        indirect = self.pdf.make_indirect(copy)
        if key is not None:
            self._streams[key] = indirect
        return indirect

    def _image(self, image: pikepdf.Stream, depth: int) -> pikepdf.Object:
        """An image keeps its pixels and the keys that decode them, in place."""
        if image.is_indirect and image.objgen in self._objects:
            return image
        if image.is_indirect:
            self._objects.add(image.objgen)
        for k in list(image.keys()):
            if k not in _IMAGE_KEYS:
                del image[k]
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
            return self._generic(font, depth)
        # a Type 3 font's glyphs are content streams: each written again, with what they use
        key = font.objgen if font.is_indirect else None
        if key is not None and key in self._streams:
            return self._streams[key]
        own = font.get("/Resources")
        glyph_resources = own if isinstance(own, Dictionary) else resources
        copy = Dictionary()
        merged: dict[str, dict[str, pikepdf.Object]] = {}
        for k, value in font.items():
            if k in _NOT_DRAWING or k == "/Resources":
                continue
            if k == "/CharProcs" and isinstance(value, Dictionary):
                procs = Dictionary()
                for glyph, proc in value.items():
                    if not isinstance(proc, pikepdf.Stream):
                        continue
                    content, used = self._content(_stream_data(proc), glyph_resources, depth + 1)
                    procs[glyph] = self.pdf.make_stream(content)
                    for category, names in used.items():
                        merged.setdefault(str(category), {}).update(dict(names.items()))
                copy[k] = procs
            else:
                copy[k] = self._generic(value, depth + 1)
        copy.Resources = Dictionary({c: Dictionary(n) for c, n in merged.items()})
        indirect = self.pdf.make_indirect(copy)
        if key is not None:
            self._streams[key] = indirect
        return indirect

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
            if k in _NOT_DRAWING:
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
        if depth > MAX_DEPTH:
            return obj
        if isinstance(obj, Dictionary | pikepdf.Stream):
            if obj.is_indirect:
                if obj.objgen in self._objects:
                    return obj
                self._objects.add(obj.objgen)
            for k in list(obj.keys()):
                if k in _NOT_DRAWING:
                    del obj[k]
            for value in list(obj.values()):
                self._generic(value, depth + 1)
        elif isinstance(obj, Array):
            for value in list(obj):
                self._generic(value, depth + 1)
        return obj

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
            members = group.get("/OCGs")
            if isinstance(members, Dictionary):
                members = Array([members])
            if not isinstance(members, Array) or not len(members):
                return False
            shown = [not self._off(m) for m in members]
            policy = str(group.get("/P", "/AnyOn"))
            if policy == "/AllOn":
                return not all(shown)
            if policy == "/AnyOff":
                return all(shown)
            if policy == "/AllOff":
                return any(shown)
            return not any(shown)
        return self._off(group)

    def _off(self, group: object) -> bool:
        return isinstance(group, Dictionary) and group.is_indirect and group.objgen in self.hidden


def hidden_groups(pdf: pikepdf.Pdf) -> frozenset[tuple[int, int]]:
    """The optional-content groups the default view hides."""
    props = pdf.Root.get("/OCProperties")
    if not isinstance(props, Dictionary):
        return frozenset()
    view = props.get("/D")
    if not isinstance(view, Dictionary):
        return frozenset()
    every = [g for g in _array(props.get("/OCGs")) if g.is_indirect]
    on = {g.objgen for g in _array(view.get("/ON")) if g.is_indirect}
    off = {g.objgen for g in _array(view.get("/OFF")) if g.is_indirect}
    if view.get("/BaseState") == Name.OFF:
        return frozenset(g.objgen for g in every if g.objgen not in on)
    return frozenset(off)


# -- small helpers --------------------------------------------------------------------------


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


def _content_streams(contents: object) -> list[pikepdf.Stream]:
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
    return group.get(str(name))


def inherited(page: pikepdf.Object, key: str) -> pikepdf.Object | None:
    """A page attribute, from the page or the nearest node above it that has it."""
    node: object = page
    seen: set[tuple[int, int]] = set()
    while isinstance(node, Dictionary):
        if node.is_indirect:
            if node.objgen in seen:
                return None
            seen.add(node.objgen)
        value = node.get(key)
        if value is not None:
            return value
        node = node.get("/Parent")
    return None
