"""What the leak check (``redact.leaks``) reads past as the file's own syntax, never as text.

A value of three letters stands inside the words a PDF and its XMP are made of: "Ada" in
``/Metadata``, "Ren" in ``/Parent``, "Rod" in ``/Producer``, "Tess" in the Producer string
Pressroom writes. Held for those, every letter to an Ada would be. Passed over here, and only
these, each compared whole and exactly (a fixed word carries nothing of any document, so
nothing is hidden in it; a word one character off, or a word with more around it, is searched
as every other):

- a PDF name, key or value, that is one of ``PDF_NAMES`` (ISO 32000's keys and name values,
  the standard Latin glyph names, Pressroom's own resource names);
- in an XMP stream (``/Type /Metadata /Subtype /XML``) that parses as XML: an element or
  attribute name whose prefix and local name are both standard (``XMP_PREFIXES``,
  ``XMP_NAMES``), a namespace declaration of a standard prefix to a standard URI
  (``XMP_NAMESPACES``), the standard ``xpacket`` instructions, a few attribute values that are
  RDF's syntax. Every text, comment, other instruction, attribute value and unknown name or
  URI is a piece of its own to search (``xmp_pieces``); an XMP that does not parse (or declares
  a document type, or is not UTF-8) is not read here at all: its bytes are searched whole;
- the Producer and Creator entries (``/Producer``, ``pdf:Producer``, ``/Creator``,
  ``xmp:CreatorTool``) whose text is exactly what Pressroom wrote (``ours``).
"""

from __future__ import annotations

from xml.parsers import expat

import pikepdf

from pressroom.engines.pdfstr import text_of

# what ``pipeline.writing.describe`` writes as /Creator and xmp:CreatorTool
OUR_CREATOR = "Pressroom"

# ISO 32000's keys and name values (a name of fewer than three letters or digits cannot hold a
# value the check searches for, so few are listed), the standard Latin glyph names of
# /Differences, the standard 14 fonts, and the names Pressroom's own output uses
PDF_NAMES: frozenset[str] = frozenset(
    """
    Root Info Size Prev Encrypt XRefStm XRef ObjStm Extends First Index Length Filter
    DecodeParms FFilter FDecodeParms Catalog Pages Page Kids Count Parent Type Subtype Version
    Extensions BaseVersion ExtensionLevel PageLabels Names Dests ViewerPreferences PageLayout
    PageMode Outlines Threads OpenAction URI AcroForm Metadata StructTreeRoot MarkInfo Marked
    UserProperties Suspects Lang SpiderInfo OutputIntents PieceInfo OCProperties Perms Legal
    Requirements Collection NeedsRendering DSS DPartRoot Last Next Title Dest
    MediaBox CropBox BleedBox TrimBox ArtBox BoxColorInfo Contents Resources Rotate Group Thumb
    Dur Trans Annots StructParents StructParent SeparationInfo Tabs TemplateInstantiated
    PresSteps UserUnit LastModified ExtGState ColorSpace Pattern Shading XObject Font ProcSet
    Properties PDF Text ImageB ImageC ImageI Nums Limits
    ASCIIHexDecode ASCII85Decode LZWDecode FlateDecode RunLengthDecode CCITTFaxDecode
    JBIG2Decode DCTDecode JPXDecode Crypt AHx LZW CCF DCT Predictor Colors BitsPerComponent
    Columns EarlyChange EndOfLine EncodedByteAlign Rows EndOfBlock BlackIs1
    DamagedRowsBeforeError JBIG2Globals ColorTransform
    Type0 Type1 MMType1 Type3 TrueType CIDFontType0 CIDFontType2 CIDFontType0C Type1C OpenType
    BaseFont FirstChar LastChar Widths FontDescriptor Encoding ToUnicode DescendantFonts
    CIDSystemInfo Registry Ordering Supplement DW2 CIDToGIDMap Identity Identity-H Identity-V
    FontName FontFamily FontStretch FontWeight Flags FontBBox FontMatrix ItalicAngle Ascent
    Descent Leading CapHeight XHeight StemV StemH AvgWidth MaxWidth MissingWidth FontFile
    FontFile2 FontFile3 CharSet Style Panose CIDSet CharProcs Differences BaseEncoding
    StandardEncoding MacRomanEncoding WinAnsiEncoding MacExpertEncoding PDFDocEncoding
    Length1 Length2 Length3 CMapName CMapType UseCMap WMode UltraCondensed ExtraCondensed
    Condensed SemiCondensed Normal SemiExpanded Expanded ExtraExpanded UltraExpanded
    Times-Roman Times-Bold Times-Italic Times-BoldItalic Helvetica Helvetica-Bold
    Helvetica-Oblique Helvetica-BoldOblique Courier Courier-Bold Courier-Oblique
    Courier-BoldOblique Symbol ZapfDingbats
    UniGB-UCS2-H UniGB-UCS2-V UniGB-UTF16-H UniGB-UTF16-V UniCNS-UCS2-H UniCNS-UCS2-V
    UniCNS-UTF16-H UniCNS-UTF16-V UniJIS-UCS2-H UniJIS-UCS2-V UniJIS-UTF16-H UniJIS-UTF16-V
    UniKS-UCS2-H UniKS-UCS2-V UniKS-UTF16-H UniKS-UTF16-V
    DeviceGray DeviceRGB DeviceCMYK CalGray CalRGB Lab ICCBased Indexed Separation DeviceN
    NChannel Alternate Range WhitePoint BlackPoint Gamma Matrix Colorants Process Components
    MixingHints Solidities PrintingOrder DotGain All None RGB CMYK Cyan Magenta Yellow Black
    Image Form Width Height ImageMask Mask SMask SMaskInData Decode Interpolate Alternates
    Intent Name OPI Measure PtData BBox FormType Ref Transparency Matte AbsoluteColorimetric
    RelativeColorimetric Saturation Perceptual BPC
    OPM UCR UCR2 TR2 Multiply Screen Overlay Darken Lighten ColorDodge ColorBurn HardLight
    SoftLight Difference Exclusion Hue Color Luminosity Compatible Alpha Default AIS
    Halftone HalftoneType Frequency Angle SpotFunction TransferFunction
    ShadingType Coords Domain Extend Function Functions FunctionType Bounds Encode
    BitsPerSample Order PatternType PaintType TilingType XStep YStep Background AntiAlias
    BitsPerCoordinate BitsPerFlag VerticesPerRow
    Annot Rect Border Link FreeText Line Square Circle Polygon PolyLine Highlight Underline
    Squiggly StrikeOut Stamp Caret Ink Popup FileAttachment Sound Movie Widget PrinterMark
    TrapNet Watermark Redact Projection RichMedia IRT Subj ExData Open State StateModel
    QuadPoints InkList Vertices Comment Key Note Help NewParagraph Paragraph Insert Approved
    Experimental NotApproved AsIs Expired NotForPublicRelease Confidential Final Sold
    Departmental ForComment TopSecret Draft ForPublicRelease OverlayText RepeatText
    GoTo GoToR GoToE Launch Thread Hide Named SubmitForm ResetForm ImportData JavaScript
    SetOCGState Rendition GoTo3DView NewWindow NextPage PrevPage FirstPage LastPage IsMap Base
    XYZ Fit FitH FitV FitR FitB FitBH FitBV
    Fields NeedAppearances SigFlags XFA Btn Sig Opt MaxLen Off Yes ZaDb Helv Lock
    ByteRange Cert Reference Changes Location Reason ContactInfo Prop_Build Prop_AuthTime
    Prop_AuthType DocMDP TransformMethod TransformParams UR3 FieldMDP DocTimeStamp SubFilter
    Adobe.PPKLite adbe.pkcs7.detached adbe.pkcs7.sha1 adbe.x509.rsa_sha1 ETSI.CAdES.detached
    ETSI.RFC3161 Standard EncryptMetadata StmF StrF EFF StdCF CFM AESV2 AESV3 AuthEvent
    DocOpen EFOpen Recipients
    StructElem ParentTree ParentTreeNextKey RoleMap ClassMap IDTree MCR MCID OBJR Obj Stm
    StmOwn Alt ActualText Layout List PrintField Table Placement WritingMode
    Document DocumentFragment Part Art Sect Div BlockQuote Caption TOC TOCI NonStruct Private
    Lbl LBody THead TBody TFoot Span Quote BibEntry Code Ruby Warichu Figure Formula Artifact
    Pagination Header Footer Aside FENote Sub Strong Top Bottom Left Right
    OCGs OCG OCMD Configs OFF BaseState View Design Usage Locked RBGroups ListMode AllPages
    VisiblePages Event Category CreatorInfo Language Export Zoom Print PrintState ViewState
    User PageElement Policy AllOn AnyOn AnyOff AllOff Unchanged
    Author Subject Keywords Creator Producer CreationDate ModDate Trapped True False Unknown
    XML OutputIntent GTS_PDFA1 GTS_PDFX ISO_PDFE1 OutputCondition OutputConditionIdentifier
    RegistryName DestOutputProfile DestOutputProfileRef
    HideToolbar HideMenubar HideWindowUI FitWindow CenterWindow DisplayDocTitle
    NonFullScreenPageMode Direction L2R R2L ViewArea ViewClip PrintArea PrintClip
    PrintScaling AppDefault Duplex Simplex DuplexFlipShortEdge DuplexFlipLongEdge
    PickTrayByPDFSize PrintPageRange NumCopies SinglePage OneColumn TwoColumnLeft
    TwoColumnRight TwoPageLeft TwoPageRight UseNone UseOutlines UseThumbs FullScreen UseOC
    UseAttachments EmbeddedFiles EmbeddedFile Filespec Desc Params CheckSum Mac
    AFRelationship Source Data Alternative Unspecified Split Blinds Box Wipe Dissolve Glitter
    Push Cover Uncover Fade Fly Bead
    Gly Hv Logo Src GlyphLessFont PressroomStructTree PressroomFontsLeft
    Aacute Acircumflex Adieresis Agrave Aring Atilde Ccedilla Delta Eacute Ecircumflex
    Edieresis Egrave Eth Euro Iacute Icircumflex Idieresis Igrave Lslash Ntilde Oacute
    Ocircumflex Odieresis Ograve Omega Oslash Otilde Scaron Thorn Uacute Ucircumflex
    Udieresis Ugrave Yacute Ydieresis Zcaron aacute acircumflex acute adieresis agrave
    ampersand approxequal aring asciicircum asciitilde asterisk atilde backslash bar
    braceleft braceright bracketleft bracketright breve brokenbar bullet caron ccedilla
    cedilla cent circumflex colon comma copyright currency dagger daggerdbl degree dieresis
    divide dollar dotaccent dotlessi eacute ecircumflex edieresis egrave eight ellipsis
    emdash endash equal eth exclam exclamdown five florin four fraction germandbls grave
    greater greaterequal guillemotleft guillemotright guilsinglleft guilsinglright
    hungarumlaut hyphen iacute icircumflex idieresis igrave infinity integral less lessequal
    logicalnot lozenge lslash macron minus multiply nbspace nine notequal ntilde numbersign
    oacute ocircumflex odieresis ogonek ograve one onehalf onequarter onesuperior
    ordfeminine ordmasculine oslash otilde paragraph parenleft parenright partialdiff percent
    period periodcentered perthousand plus plusminus product question questiondown quotedbl
    quotedblbase quotedblleft quotedblright quoteleft quoteright quotesinglbase quotesingle
    radical registered ring scaron section semicolon seven six slash space sterling
    summation thorn three threequarters threesuperior tilde trademark two twosuperior uacute
    ucircumflex udieresis ugrave underscore yacute ydieresis yen zcaron zero
    """.split()
)

# XMP's element and attribute local names (RDF, the x: wrapper, Dublin Core, XMP basic, PDF,
# media management and its types, rights, paged text, PDF/A and PDF/UA identification and
# extension schemas, Photoshop's)
XMP_NAMES: frozenset[str] = frozenset(
    """
    xmpmeta xapmeta xmptk RDF Description about li Alt Seq Bag lang parseType resource value
    nodeID ID datatype type
    title creator description subject format rights publisher contributor date identifier
    language relation source coverage
    CreatorTool CreateDate ModifyDate MetadataDate Label Rating Nickname Identifier BaseURL
    Thumbnails Advisory Format Title Keywords Author Subject Creator CreationDate ModDate
    Producer PDFVersion Trapped
    DocumentID InstanceID OriginalDocumentID VersionID RenditionClass RenditionParams History
    DerivedFrom ManagedFrom Manager ManageTo ManageUI ManagerVariant Ingredients Pantry
    Versions LastURL RenditionOf SaveID
    action instanceID when softwareAgent changed parameters documentID originalDocumentID
    renditionClass renditionParams versionID manager managerVariant manageTo manageUI filePath
    fromPart toPart lastModifyDate maskMarkers alternatePaths partMapping comments event
    modifier modifyDate version
    part conformance amd corr rev GTS_PDFXVersion GTS_PDFXConformance
    schemas schema namespaceURI prefix property valueType name category field
    Certificate Marked Owner UsageTerms WebStatement
    NPages MaxPageSize Fonts Colorants PlateNames HasVisibleTransparency HasVisibleOverprint
    unit fontName fontFamily fontFace fontType versionString composite fontFileName
    childFontFiles swatchName mode tint
    ColorMode ICCProfile DateCreated AuthorsPosition CaptionWriter Headline City Country State
    Credit Source Instructions TransmissionReference Urgency Category SupplementalCategories
    DocumentAncestors LegacyIPTCDigest Scheme
    """.split()
)

XMP_PREFIXES: frozenset[str] = frozenset(
    """
    x rdf dc xmp xap pdf xmpMM xapMM stEvt stRef stVer stDim stFnt stJob xmpG xmpGImg xmpTPg
    xmpRights xapRights xmpidq xmpBJ xmpDM xmpNote pdfaid pdfuaid pdfx pdfxid pdfaExtension
    pdfaSchema pdfaProperty pdfaType pdfaField photoshop tiff exif aux crs Iptc4xmpCore
    Iptc4xmpExt prism prism2 prism3 crossmark jav ali xml xmlns
    """.split()
)

XMP_NAMESPACES: frozenset[str] = frozenset(
    """
    adobe:ns:meta/ http://www.w3.org/1999/02/22-rdf-syntax-ns#
    http://purl.org/dc/elements/1.1/ http://ns.adobe.com/xap/1.0/ http://ns.adobe.com/pdf/1.3/
    http://ns.adobe.com/xap/1.0/mm/ http://ns.adobe.com/xap/1.0/sType/ResourceEvent#
    http://ns.adobe.com/xap/1.0/sType/ResourceRef# http://ns.adobe.com/xap/1.0/sType/Version#
    http://ns.adobe.com/xap/1.0/sType/Dimensions# http://ns.adobe.com/xap/1.0/sType/Font#
    http://ns.adobe.com/xap/1.0/sType/Job# http://ns.adobe.com/xap/1.0/g/
    http://ns.adobe.com/xap/1.0/g/img/ http://ns.adobe.com/xap/1.0/t/pg/
    http://ns.adobe.com/xap/1.0/rights/ http://ns.adobe.com/xmp/Identifier/qual/1.0/
    http://ns.adobe.com/xap/1.0/bj/ http://ns.adobe.com/xmp/1.0/DynamicMedia/
    http://ns.adobe.com/xmp/note/ http://www.aiim.org/pdfa/ns/id/
    http://www.aiim.org/pdfua/ns/id/ http://www.aiim.org/pdfa/ns/extension/
    http://www.aiim.org/pdfa/ns/schema# http://www.aiim.org/pdfa/ns/property#
    http://www.aiim.org/pdfa/ns/type# http://www.aiim.org/pdfa/ns/field#
    http://ns.adobe.com/pdfx/1.3/ http://www.npes.org/pdfx/ns/id/
    http://ns.adobe.com/photoshop/1.0/ http://ns.adobe.com/tiff/1.0/
    http://ns.adobe.com/exif/1.0/ http://ns.adobe.com/exif/1.0/aux/
    http://ns.adobe.com/camera-raw-settings/1.0/ http://iptc.org/std/Iptc4xmpCore/1.0/xmlns/
    http://iptc.org/std/Iptc4xmpExt/2008-02-29/ http://prismstandard.org/namespaces/basic/1.0/
    http://prismstandard.org/namespaces/basic/2.0/
    http://prismstandard.org/namespaces/basic/3.0/ http://crossref.org/crossmark/1.0/
    http://www.niso.org/schemas/jav/1.0/ http://www.niso.org/schemas/ali/1.0/
    http://www.w3.org/XML/1998/namespace
    """.split()
)

# attribute values that are RDF's (and the XMP toolkit's) syntax, by the attribute's local
# name: "x-default" is the default of a language alternative; pikepdf signs its XMP "pikepdf"
_SYNTAX_VALUES: frozenset[tuple[str, str]] = frozenset(
    {
        ("about", ""),
        ("lang", "x-default"),
        ("parseType", "Resource"),
        ("parseType", "Literal"),
        ("parseType", "Collection"),
        ("xmptk", "pikepdf"),
    }
)

# the xpacket wrapper's processing instructions, exactly as XMP writes them (its id is fixed)
_XPACKET_ID = "W5M0MpCehiHzreSzNTczkc9d"
_XPACKETS: frozenset[str] = frozenset(
    {
        *(f"begin={q}{b}{q} id={q}{_XPACKET_ID}{q}" for q in "\"'" for b in ("\ufeff", "")),
        *(f"end={q}{e}{q}" for q in "\"'" for e in "wr"),
    }
)


def syntax_name(name: str) -> bool:
    """Whether a PDF name (as the text it spells, with its slash) is one of ``PDF_NAMES``."""
    return name.startswith("/") and name[1:] in PDF_NAMES


def ours(key: str, text: str, producer: str | None) -> bool:
    """Whether an entry (``/Producer``, ``pdf:Producer``; ``/Creator``, ``xmp:CreatorTool``:
    by its local name) holds exactly the text Pressroom wrote there. ``producer``: this
    output's Producer (``pipeline.assembly.output_builder``), None where it is not known."""
    local = key.lstrip("/").rpartition(":")[2]
    if local == "Producer":
        return producer is not None and text == producer
    return local in ("Creator", "CreatorTool") and text == OUR_CREATOR


def own_entry(key: object, value: object, producer: str | None) -> bool:
    """A document-information entry whose string is exactly Pressroom's own (``ours``)."""
    if not isinstance(value, pikepdf.String) or getattr(value, "is_indirect", False):
        return False
    return text_of(key) in ("/Producer", "/Creator") and ours(
        text_of(key), text_of(value), producer
    )


def xmp_stream(stream: pikepdf.Stream) -> bool:
    return stream.get("/Type") == "/Metadata" and stream.get("/Subtype") == "/XML"


class _Refused(Exception):
    """Something the XMP reading does not take: its bytes are searched whole instead."""


def xmp_pieces(data: bytes, producer: str | None = None) -> list[str] | None:
    """The pieces of an XMP packet to search, each on its own and all of them joined in the
    order they stand: every element's text (its own
    character data, joined across comments, instructions and children), every comment,
    every instruction but the standard xpacket ones, every attribute value but RDF's syntax
    and Pressroom's own Producer and Creator, every element, attribute or prefix name and
    namespace URI not standard (a name with an unknown part is searched whole, prefix and
    all). None where ``data`` is not UTF-8, declares another encoding or a document type
    (entities), or does not parse: the caller searches its bytes then."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    parser = expat.ParserCreate(encoding="UTF-8")  # names as written: no namespace processing
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    pieces: list[str] = []
    texts: list[list[str]] = [[]]  # each open element's own text (the first: outside the root)
    # everything searched, in the order it stands (an element's text where it is written),
    # searched joined too: text beside a comment, or a value beside an attribute, spells what
    # it spells side by side, as the packet's bytes would (review R5)
    order: list[str] = []
    marks: list[int] = []  # where each open element's text starts in ``order``

    def refuse(*_: object) -> int:
        raise _Refused

    def declared(version: str, encoding: str | None, standalone: int) -> None:
        if encoding is not None and encoding.lower().replace("_", "-") not in ("utf-8", "utf8"):
            raise _Refused

    def start(name: str, attrs: dict[str, str]) -> None:
        before = len(pieces)
        _name(name, pieces)
        for key, value in attrs.items():
            _name(key, pieces)
            if key == "xmlns" or key.startswith("xmlns:"):
                known = value in XMP_NAMESPACES  # a namespace declared
            else:
                known = (key.rpartition(":")[2], value) in _SYNTAX_VALUES
            if not known and not ours(key, value, producer):
                pieces.append(value)
        order.extend(pieces[before:])
        texts.append([])
        marks.append(len(order))

    def text(data: str) -> None:
        texts[-1].append(data)
        order.append(data)

    def end(name: str) -> None:
        joined = "".join(texts.pop())
        mark = marks.pop()
        if ours(name, joined, producer):
            del order[mark:]  # its own text only: Pressroom's Producer has no children
        else:
            pieces.append(joined)

    def comment(data: str) -> None:
        pieces.append(data)
        order.append(data)

    def instruction(target: str, data: str) -> None:
        if target != "xpacket" or data not in _XPACKETS:
            pieces.extend((target, data))
            order.extend((target, data))

    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    parser.SkippedEntityHandler = refuse
    parser.XmlDeclHandler = declared
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = text
    parser.CommentHandler = comment
    parser.ProcessingInstructionHandler = instruction
    try:
        parser.Parse(data, True)
    except (expat.ExpatError, _Refused, ValueError):
        return None
    pieces.append("".join(texts[0]))  # what stands outside the root (whitespace)
    pieces.append("".join(order))
    return [p for p in pieces if p]


def _name(qualified: str, pieces: list[str]) -> None:
    """An element's or attribute's name, searched whole unless its prefix and local name are
    both standard (``xmlns:dc`` is the prefix ``dc`` declared)."""
    prefix, _, local = qualified.rpartition(":")
    if qualified == "xmlns" or (prefix == "xmlns" and local in XMP_PREFIXES):
        return
    if (not prefix or prefix in XMP_PREFIXES) and local in XMP_NAMES:
        return
    pieces.append(qualified)
