"""PDF/A-2b: what an output needs to be archived (``--output-type pdfa``), and a structural
check of the clauses we can check without veraPDF (not reachable here).

Written: XMP metadata that says ``pdfaid:part=2``, ``pdfaid:conformance=B`` and matches the
document information dictionary; one output intent ``/GTS_PDFA1`` (PDF/A-2b allows exactly one
profile), whose destination profile is

- the source's own CMYK profile where the source carried a CMYK output intent (a PDF/X file's
  ``/GTS_PDFX`` intent, say) and the document shows CMYK colour: the colour stays as the source
  calibrated it. The RGB the output adds (band colours, a logo) is then calibrated by a
  ``/DefaultRGB`` sRGB space in every resource dictionary (PDF/A-2 6.2.4.3), so nothing is
  left as device RGB under a CMYK intent;
- otherwise an embedded sRGB ICC profile (LittleCMS's built-in sRGB, "no copyright, use
  freely", with a fixed creation date so the same job writes the same bytes).

Also a blending colour space on every transparency group. Everything else PDF/A asks of us the
output already is: every font embedded (``engines.fonts``), no encryption, scripts, actions
other than links (URI, GoTo), attachments, forms, annotations other than printable links, or
external content (``engines.prune`` and the output builder leave them out).

``pdfa_problems`` reads a saved output back and names every clause it breaks; the output check
holds a PDF/A job whose output breaks one (``OUTPUT_CHECK_FAILED``).
"""

from __future__ import annotations

import hashlib
import struct
from functools import cache
from pathlib import Path

import pikepdf
from pikepdf import Array, Dictionary, Name

from pressroom.engines.fonts import embedded
from pressroom.engines.pdfstr import text_of

OUTPUT_TYPES = ("pdf", "pdfa")
SRGB = "sRGB IEC61966-2.1"
_ICC_DATE = (2026, 1, 1, 0, 0, 0)  # a fixed creation date: outputs are deterministic


@cache
def srgb_profile() -> bytes:
    """An sRGB ICC profile (LittleCMS's built-in one), dated once and for all."""
    from PIL import ImageCms

    data = bytearray(ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes())
    data[24:36] = struct.pack(">6H", *_ICC_DATE)
    # the profile ID is the MD5 of the profile with its flags, intent and ID zeroed
    probe = bytearray(data)
    probe[44:48] = probe[64:68] = b"\0" * 4
    probe[84:100] = b"\0" * 16
    data[84:100] = hashlib.md5(bytes(probe), usedforsecurity=False).digest()
    return bytes(data)


def make_pdfa(pdf: pikepdf.Pdf, source_intents: object = None) -> None:
    """The output intent and blending colour spaces PDF/A-2b asks for, in ``pdf`` before it
    is saved (its XMP is written by the caller, with ``pdfaid`` set: see ``pdfa_metadata``).

    ``source_intents``: the source's ``/OutputIntents`` array (of ``pdf`` or of another
    document), or None. Its CMYK profile becomes the output's intent when the output shows
    CMYK colour (``cmyk_intent_profile``); sRGB otherwise."""
    cmyk = cmyk_intent_profile(source_intents) if shows_cmyk(pdf) else None
    profile: pikepdf.Object
    if cmyk is not None:
        profile, label = cmyk
        if not profile.is_owned_by(pdf):  # another document's object
            profile = pdf.copy_foreign(profile)
        _default_rgb(pdf)
    else:
        profile = pdf.make_stream(srgb_profile())
        profile.N = 3
        label = SRGB
    pdf.Root.OutputIntents = Array(
        [
            Dictionary(
                Type=Name.OutputIntent,
                S=Name.GTS_PDFA1,
                OutputConditionIdentifier=pikepdf.String(label),
                Info=pikepdf.String(label),
                RegistryName=pikepdf.String("http://www.color.org"),
                DestOutputProfile=profile,
            )
        ]
    )
    for obj in pdf.objects:
        group = obj.get("/Group") if isinstance(obj, Dictionary | pikepdf.Stream) else None
        if isinstance(group, Dictionary) and group.get("/S") == Name.Transparency:
            group.CS = group.get("/CS", Name.DeviceRGB)


def cmyk_intent_profile(intents: object) -> tuple[pikepdf.Stream, str] | None:
    """The first CMYK ICC profile (``/N 4``, colour space ``CMYK``) among an ``/OutputIntents``
    array's destination profiles, with the intent's condition identifier; None where there is
    none (a profile that is no ICC profile is no calibration to keep)."""
    for intent in intents if isinstance(intents, Array) else []:
        if not isinstance(intent, Dictionary):
            continue
        profile = intent.get("/DestOutputProfile")
        if not isinstance(profile, pikepdf.Stream) or profile.get("/N") != 4:
            continue
        try:
            head = profile.read_bytes()[:40]
        except pikepdf.PdfError:
            continue
        if head[36:40] != b"acsp" or head[16:20] != b"CMYK":
            continue
        condition = intent.get("/OutputConditionIdentifier")
        return profile, text_of(condition) if condition is not None else "CMYK"
    return None


def shows_cmyk(pdf: pikepdf.Pdf) -> bool:
    """Whether anything in ``pdf`` is drawn in CMYK: a DeviceCMYK colour space (an image's, a
    shading's, a resource dictionary's, ICC-based with 4 components) or CMYK operators."""
    for obj in pdf.objects:
        if not isinstance(obj, Dictionary | pikepdf.Stream):
            continue
        if _cmyk(obj.get("/ColorSpace"), 0) or _icc_cmyk(obj.get("/ColorSpace"), 0):
            return True
        if isinstance(obj, pikepdf.Stream) and _is_content(obj) and _cmyk_operators(obj):
            return True
    return any(_cmyk_operators_of(page.obj.get("/Contents")) for page in pdf.pages)


def _icc_cmyk(space: object, depth: int) -> bool:
    if depth > 8:
        return False
    if isinstance(space, Array):
        if len(space) == 2 and space[0] == Name.ICCBased and isinstance(space[1], pikepdf.Stream):
            return space[1].get("/N") == 4
        return any(_icc_cmyk(item, depth + 1) for item in space)
    if isinstance(space, Dictionary) and "/N" not in space:
        return any(_icc_cmyk(item, depth + 1) for item in space.values())
    return False


def _default_rgb(pdf: pikepdf.Pdf) -> None:
    """A ``/DefaultRGB`` sRGB space in the resources of every page, form and tiling pattern,
    where it has none: device RGB then means sRGB, as PDF/A asks under a CMYK intent."""
    profile = pdf.make_stream(srgb_profile())
    profile.N = 3
    space = Array([Name.ICCBased, profile])
    holders: list[pikepdf.Object] = [page.obj for page in pdf.pages]
    holders += [obj for obj in pdf.objects if isinstance(obj, pikepdf.Stream) and _is_content(obj)]
    for holder in holders:
        resources = holder.get("/Resources")
        if not isinstance(resources, Dictionary):
            resources = Dictionary()
            holder.Resources = resources
        spaces = resources.get("/ColorSpace")
        if not isinstance(spaces, Dictionary):
            spaces = Dictionary()
            resources.ColorSpace = spaces
        if "/DefaultRGB" not in spaces:
            spaces.DefaultRGB = space


def pdfa_metadata(meta: pikepdf.models.PdfMetadata) -> None:
    meta["pdfaid:part"] = "2"
    meta["pdfaid:conformance"] = "B"


# keys that make a PDF act or reach outside itself: never in an archive
_ACTING = ("/JS", "/JavaScript", "/AA", "/OpenAction", "/Launch", "/EmbeddedFiles", "/URI")


def pdfa_problems(path: Path) -> list[str]:
    """Every PDF/A-2b clause this saved output breaks, of those checked here (docs/cli.md
    lists them); empty when it keeps them all."""
    problems: list[str] = []
    with path.open("rb") as f:
        head = f.read(16)
    if not head.startswith(b"%PDF-1.") or head[7:8] not in b"4567":
        problems.append("6.1.2: the header is not %PDF-1.4 to 1.7")
    with pikepdf.open(path) as pdf:
        if pdf.is_encrypted:
            problems.append("6.1.3: encrypted")
        if "/ID" not in pdf.trailer:
            problems.append("6.1.3: no file identifier in the trailer")
        problems += _metadata_problems(pdf)
        problems += _intent_problems(pdf)
        problems += _object_problems(pdf)
    return problems


def _metadata_problems(pdf: pikepdf.Pdf) -> list[str]:
    out = []
    stream = pdf.Root.get("/Metadata")
    if not isinstance(stream, pikepdf.Stream):
        return ["6.6.2.1: no XMP metadata"]
    if "/Filter" in stream:
        out.append("6.6.2.1: the metadata stream is filtered")
    meta = pdf.open_metadata()
    if meta.get("pdfaid:part") != "2" or meta.get("pdfaid:conformance") != "B":
        out.append("6.6.4: pdfaid:part is not 2 or pdfaid:conformance is not B")
    info = pdf.docinfo
    pairs = (("/Title", "dc:title"), ("/Producer", "pdf:Producer"), ("/Creator", "xmp:CreatorTool"))
    for key, prop in pairs:
        if key in info and str(info[key]) != str(meta.get(prop, "")):
            out.append(f"6.6.3: {key[1:]} differs from its XMP {prop}")
    return out


def _intent_problems(pdf: pikepdf.Pdf) -> list[str]:
    return _intent(pdf)[1]


def _intent(pdf: pikepdf.Pdf) -> tuple[str, list[str]]:
    """The output intent's colour space ("RGB " or "CMYK"), and what is wrong with it."""
    intents = pdf.Root.get("/OutputIntents")
    found = [
        i
        for i in (intents if isinstance(intents, Array) else [])
        if isinstance(i, Dictionary) and i.get("/S") == Name.GTS_PDFA1
    ]
    if len(found) != 1:
        return "", ["6.2.3: not exactly one /GTS_PDFA1 output intent"]
    profile = found[0].get("/DestOutputProfile")
    if not isinstance(profile, pikepdf.Stream) or profile.get("/N") not in (3, 4):
        return "", ["6.2.3: the output intent has no RGB (N 3) or CMYK (N 4) ICC profile embedded"]
    data = profile.read_bytes()
    space = data[16:20].decode("latin-1")
    wanted = "RGB " if profile.get("/N") == 3 else "CMYK"
    if data[36:40] != b"acsp" or space != wanted:
        return "", ["6.2.3: the output intent's profile is not an ICC profile of its /N"]
    return space, []


def _object_problems(pdf: pikepdf.Pdf) -> list[str]:
    out: set[str] = set()
    kind, _ = _intent(pdf)
    for key in _ACTING:
        if key in pdf.Root:
            out.add(f"6.5/6.6: the catalog has {key[1:]}")
    names = pdf.Root.get("/Names")
    if isinstance(names, Dictionary) and ("/JavaScript" in names or "/EmbeddedFiles" in names):
        out.add("6.6.1/6.8: named scripts or embedded files")
    if "/AcroForm" in pdf.Root:
        out.add("6.4.1: an interactive form")
    for page in pdf.pages:
        out.update(_annotation_problems(page.obj.get("/Annots")))
        if "/AA" in page.obj:
            out.add("6.5.2: a page's additional actions")
    for obj in pdf.objects:
        if not isinstance(obj, Dictionary | pikepdf.Stream):
            continue
        what = obj.get("/Type")
        sub = obj.get("/Subtype")
        if isinstance(obj, pikepdf.Stream) and ("/F" in obj or "/FFilter" in obj):
            out.add("6.1.7: a stream whose data is in an external file")
        if sub == Name.Form and "/Ref" in obj:
            out.add("6.2.9: a reference XObject")
        if sub == Name.PS or (sub == Name.Form and obj.get("/Subtype2") == Name.PS):
            out.add("6.2.9: a PostScript XObject")
        if (what == Name.Action or "/S" in obj) and _forbidden_action(obj):
            out.add("6.5.1: an action")
        if "/JS" in obj or "/AA" in obj:
            out.add("6.5: a script or additional action")
        group = obj.get("/Group")
        if (
            isinstance(group, Dictionary)
            and group.get("/S") == Name.Transparency
            and "/CS" not in group
        ):
            out.add("6.2.10: a transparency group without a blending colour space")
        font = what == Name.Font or (what is None and sub in _FONT_SUBTYPES and "/BaseFont" in obj)
        if font and not embedded(obj):
            # named by its object number: a font's name is the file's to choose (N5)
            out.add(f"6.2.11.4: a font is not embedded ({_which(obj)})")
        if font and sub == Name.TrueType and not _pdfa_truetype_encoding(obj):
            out.add("6.2.11.6: a non-symbolic TrueType font's encoding is not WinAnsi/MacRoman")
    # with no usable intent (a problem of its own) colour is judged as under an RGB one
    out.update(_colour_problems(pdf, kind or "RGB "))
    return sorted(out)


# actions PDF/A-2 allows (6.5.1): links within the file, to another file or a web address
_ALLOWED_ACTIONS = (Name.GoTo, Name.GoToR, Name.URI, Name.Thread)
_NAMED_ALLOWED = (Name.NextPage, Name.PrevPage, Name.FirstPage, Name.LastPage)
# annotation flags PDF/A-2 forbids (6.3.2): invisible, hidden, no view, toggle no view
_HIDING_FLAGS = 1 | 2 | 32 | 256
_PRINT_FLAG = 4


def _forbidden_action(obj: pikepdf.Object) -> bool:
    which = obj.get("/S")
    if which in _ALLOWED_ACTIONS:
        return False
    if which == Name.Named:
        return obj.get("/N") not in _NAMED_ALLOWED
    # an action dictionary names its type; anything else with an /S (a structure element's
    # type, a transparency group's, a page label's style) is no action
    return obj.get("/Type") == Name.Action or which in (
        Name.JavaScript,
        Name.Launch,
        Name.Sound,
        Name.Movie,
        Name.ResetForm,
        Name.ImportData,
        Name.Hide,
        Name.SetOCGState,
        Name.Rendition,
        Name.Trans,
        Name.GoTo3DView,
        Name.SubmitForm,
    )


def _annotation_problems(annots: object) -> set[str]:
    """PDF/A-2b 6.3 for a page's annotations: links only here (every other kind the output
    never keeps), printed, never hidden."""
    out: set[str] = set()
    for annot in annots if isinstance(annots, Array) else ([annots] if annots is not None else []):
        if not isinstance(annot, Dictionary) or annot.get("/Subtype") != Name.Link:
            out.add("6.3: an annotation other than a link")
            continue
        flags = annot.get("/F", 0)
        flags = flags if isinstance(flags, int) else 0
        if not flags & _PRINT_FLAG or flags & _HIDING_FLAGS:
            out.add("6.3.2: a link not flagged to print, or flagged hidden")
        if "/AA" in annot:
            out.add("6.5: a script or additional action")
        # the link's action and those chained after it, direct objects included (the walk over
        # the file's objects sees indirect ones only)
        action, seen = annot.get("/A"), 0
        while isinstance(action, Dictionary) and seen < 16:
            if _forbidden_action(action):
                out.add("6.5.1: an action")
            if "/JS" in action or "/AA" in action:
                out.add("6.5: a script or additional action")
            action, seen = action.get("/Next"), seen + 1
            if isinstance(action, Array):  # a list of next actions: each is looked at
                out.update(
                    _annotation_problems(
                        Array([Dictionary(Subtype=Name.Link, F=4, A=a) for a in action])
                    )
                )
                break
    return out


def _colour_problems(pdf: pikepdf.Pdf, intent: str) -> set[str]:
    """PDF/A-2 6.2.4.3: device colour of another model than the output intent's only where the
    resources that draw it define its default (``/DefaultCMYK`` under an RGB intent,
    ``/DefaultRGB`` under a CMYK one); looked at in each page's, form's and tiling pattern's
    own resources, with what its content and its images and shadings use."""
    out: set[str] = set()
    other, model = ("CMYK", "/DefaultCMYK") if intent == "RGB " else ("RGB", "/DefaultRGB")
    device = Name.DeviceCMYK if other == "CMYK" else Name.DeviceRGB
    holders: list[tuple[pikepdf.Object, object]] = [
        (page.obj, page.obj.get("/Contents")) for page in pdf.pages
    ]
    holders += [
        (obj, obj) for obj in pdf.objects if isinstance(obj, pikepdf.Stream) and _is_content(obj)
    ]
    for holder, contents in holders:
        resources = holder.get("/Resources")
        resources = resources if isinstance(resources, Dictionary) else Dictionary()
        spaces = resources.get("/ColorSpace")
        if isinstance(spaces, Dictionary) and model in spaces:
            continue  # device colour of the other model is calibrated here
        used = _uses_device(resources, device)
        if used:
            out.add(f"6.2.4.3: Device{other} colour under {_article(intent)} output intent")
        streams = contents if isinstance(contents, Array) else [contents]
        if any(isinstance(st, pikepdf.Stream) and _device_operators(st, device) for st in streams):
            out.add(
                f"6.2.4.3: Device{other} colour set in a content stream "
                + ("(k, K or cs)" if other == "CMYK" else "(rg, RG or cs)")
            )
    return out


def _article(intent: str) -> str:
    return "an RGB" if intent == "RGB " else "a CMYK"


def _uses_device(resources: Dictionary, device: Name) -> bool:
    """Whether a resource dictionary's colour spaces, images or shadings rest on ``device``
    (a space other than the ``Default…`` ones)."""
    spaces = resources.get("/ColorSpace")
    if isinstance(spaces, Dictionary):
        for key, space in spaces.items():
            if not key.startswith("/Default") and _rests_on(space, device, 0):
                return True
    for category in ("/XObject", "/Shading", "/Pattern"):
        found = resources.get(category)
        if not isinstance(found, Dictionary):
            continue
        for item in found.values():
            if not isinstance(item, Dictionary | pikepdf.Stream):
                continue
            if item.get("/Subtype") == Name.Form or item.get("/PatternType") == 1:
                continue  # drawn with its own resources: looked at on its own
            target = item.get("/Shading", item) if category == "/Pattern" else item
            if isinstance(target, Dictionary | pikepdf.Stream) and _rests_on(
                target.get("/ColorSpace"), device, 0
            ):
                return True
    return False


def _rests_on(space: object, device: Name, depth: int) -> bool:
    if depth > 8:
        return False
    if space == device:
        return True
    if isinstance(space, Array):
        if len(space) and space[0] == Name.ICCBased:
            return False  # calibrated
        return any(_rests_on(item, device, depth + 1) for item in space)
    return False


def _device_operators(stream: pikepdf.Stream, device: Name) -> bool:
    ops = ("k", "K") if device == Name.DeviceCMYK else ("rg", "RG")
    try:
        instructions = pikepdf.parse_content_stream(stream)
    except pikepdf.PdfError:
        return True  # what cannot be read cannot be vouched for
    for instruction in instructions:
        if isinstance(instruction, pikepdf.ContentStreamInlineImage):
            continue
        op = text_of(instruction.operator)
        if op in ops:
            return True
        if op in ("cs", "CS") and instruction.operands and instruction.operands[0] == device:
            return True
    return False


def _which(obj: pikepdf.Object) -> str:
    """An object as a reason names it: by its number, never by a name read from it."""
    number, generation = obj.objgen
    return f"object {number} {generation}" if number else "a direct object"


def _cmyk(space: object, depth: int) -> bool:
    """Whether a colour space (a name, an array such as Indexed or DeviceN, or a resource
    dictionary of them) is or rests on DeviceCMYK."""
    if depth > 8:
        return False
    if space == Name.DeviceCMYK:
        return True
    if isinstance(space, Array):
        return any(_cmyk(item, depth + 1) for item in space)
    if isinstance(space, Dictionary) and "/N" not in space:  # a resource dictionary
        return any(_cmyk(item, depth + 1) for item in space.values())
    return False


def _is_content(stream: pikepdf.Stream) -> bool:
    return stream.get("/Subtype") == Name.Form or stream.get("/PatternType") == 1


def _cmyk_operators_of(contents: object) -> bool:
    streams = contents if isinstance(contents, Array) else [contents]
    return any(isinstance(s, pikepdf.Stream) and _cmyk_operators(s) for s in streams)


def _cmyk_operators(stream: pikepdf.Stream) -> bool:
    return _device_operators(stream, Name.DeviceCMYK)


def _pdfa_truetype_encoding(font: pikepdf.Object) -> bool:
    """A non-symbolic TrueType font's encoding as PDF/A-2 asks: MacRoman or WinAnsi, by name
    or as the base of a dictionary (a symbolic one has none)."""
    descriptor = font.get("/FontDescriptor")
    flags = descriptor.get("/Flags", 0) if isinstance(descriptor, Dictionary) else 0
    flags = flags if isinstance(flags, int) else 0  # a flag word that is no integer: none set
    if flags & 4:
        return True
    encoding = font.get("/Encoding")
    allowed = (Name.WinAnsiEncoding, Name.MacRomanEncoding)
    if isinstance(encoding, Dictionary):
        return encoding.get("/BaseEncoding") in allowed
    return encoding in allowed


_FONT_SUBTYPES = {
    Name.Type1,
    Name.MMType1,
    Name.TrueType,
    Name.Type3,
    Name.Type0,
    Name.CIDFontType0,
    Name.CIDFontType2,
}
