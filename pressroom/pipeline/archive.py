"""PDF/A-2b: what an output needs to be archived (``--output-type pdfa``), and a structural
check of the clauses we can check without veraPDF (not reachable here).

Written: XMP metadata that says ``pdfaid:part=2``, ``pdfaid:conformance=B`` and matches the
document information dictionary; an output intent ``/GTS_PDFA1`` whose destination profile is
an embedded sRGB ICC profile (LittleCMS's built-in sRGB, "no copyright, use freely", with a fixed
creation date so the same job writes the same bytes); a blending colour space on every
transparency group. Everything else PDF/A asks of us the output already is: every font
embedded (``engines.fonts``), no encryption, scripts, actions, attachments, forms, annotations
or external content (``engines.prune`` and the output builder leave them out).

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


def make_pdfa(pdf: pikepdf.Pdf) -> None:
    """The output intent and blending colour spaces PDF/A-2b asks for, in ``pdf`` before it
    is saved (its XMP is written by the caller, with ``pdfaid`` set: see ``pdfa_metadata``)."""
    profile = pdf.make_stream(srgb_profile())
    profile.N = 3
    pdf.Root.OutputIntents = Array(
        [
            Dictionary(
                Type=Name.OutputIntent,
                S=Name.GTS_PDFA1,
                OutputConditionIdentifier=pikepdf.String(SRGB),
                Info=pikepdf.String(SRGB),
                RegistryName=pikepdf.String("http://www.color.org"),
                DestOutputProfile=profile,
            )
        ]
    )
    for obj in pdf.objects:
        group = obj.get("/Group") if isinstance(obj, Dictionary | pikepdf.Stream) else None
        if isinstance(group, Dictionary) and group.get("/S") == Name.Transparency:
            group.CS = group.get("/CS", Name.DeviceRGB)


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
    intents = pdf.Root.get("/OutputIntents")
    found = [
        i
        for i in (intents if isinstance(intents, Array) else [])
        if isinstance(i, Dictionary) and i.get("/S") == Name.GTS_PDFA1
    ]
    if len(found) != 1:
        return ["6.2.3: not exactly one /GTS_PDFA1 output intent"]
    profile = found[0].get("/DestOutputProfile")
    if not isinstance(profile, pikepdf.Stream) or profile.get("/N") != 3:
        return ["6.2.3: the output intent has no RGB (N 3) ICC profile embedded"]
    data = profile.read_bytes()
    if data[36:40] != b"acsp" or data[16:20] != b"RGB ":
        return ["6.2.3: the output intent's profile is not an RGB ICC profile"]
    return []


def _object_problems(pdf: pikepdf.Pdf) -> list[str]:
    out: set[str] = set()
    for key in _ACTING:
        if key in pdf.Root:
            out.add(f"6.5/6.6: the catalog has {key[1:]}")
    names = pdf.Root.get("/Names")
    if isinstance(names, Dictionary) and ("/JavaScript" in names or "/EmbeddedFiles" in names):
        out.add("6.6.1/6.8: named scripts or embedded files")
    if "/AcroForm" in pdf.Root:
        out.add("6.4.1: an interactive form")
    for page in pdf.pages:
        if "/Annots" in page.obj:
            out.add("6.3: annotations")
        if "/AA" in page.obj:
            out.add("6.5.2: a page's additional actions")
    for obj in pdf.objects:
        if not isinstance(obj, Dictionary | pikepdf.Stream):
            continue
        kind = obj.get("/Type")
        sub = obj.get("/Subtype")
        if isinstance(obj, pikepdf.Stream) and ("/F" in obj or "/FFilter" in obj):
            out.add("6.1.7: a stream whose data is in an external file")
        if sub == Name.Form and "/Ref" in obj:
            out.add("6.2.9: a reference XObject")
        if sub == Name.PS or (sub == Name.Form and obj.get("/Subtype2") == Name.PS):
            out.add("6.2.9: a PostScript XObject")
        if kind == Name.Action or (
            "/S" in obj
            and obj.get("/S")
            in (
                Name.JavaScript,
                Name.Launch,
                Name.Sound,
                Name.Movie,
                Name.ResetForm,
                Name.ImportData,
            )
        ):
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
        font = kind == Name.Font or (kind is None and sub in _FONT_SUBTYPES and "/BaseFont" in obj)
        if font and not embedded(obj):
            # named by its object number: a font's name is the file's to choose (N5)
            out.add(f"6.2.11.4: a font is not embedded ({_which(obj)})")
        if font and sub == Name.TrueType and not _pdfa_truetype_encoding(obj):
            out.add("6.2.11.6: a non-symbolic TrueType font's encoding is not WinAnsi/MacRoman")
        # a colour space anywhere: an image's, a shading's, a resource dictionary's
        if _cmyk(obj.get("/ColorSpace"), 0):
            out.add("6.2.4.3: DeviceCMYK colour under an RGB output intent")
        if isinstance(obj, pikepdf.Stream) and _is_content(obj) and _cmyk_operators(obj):
            out.add("6.2.4.3: DeviceCMYK colour set in a content stream (k, K or cs)")
    for page in pdf.pages:
        if _cmyk_operators_of(page.obj.get("/Contents")):
            out.add("6.2.4.3: DeviceCMYK colour set in a content stream (k, K or cs)")
    return sorted(out)


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
    try:
        instructions = pikepdf.parse_content_stream(stream)
    except pikepdf.PdfError:
        return True  # what cannot be read cannot be vouched for
    for instruction in instructions:
        if isinstance(instruction, pikepdf.ContentStreamInlineImage):
            continue
        op = text_of(instruction.operator)
        if op in ("k", "K"):
            return True
        if (
            op in ("cs", "CS")
            and instruction.operands
            and instruction.operands[0] == Name.DeviceCMYK
        ):
            return True
    return False


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
