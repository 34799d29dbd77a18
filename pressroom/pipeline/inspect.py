"""Inspect a source before any heavy work: type, size, pages, pixels, encryption, existing text."""

from __future__ import annotations

import hashlib
import mmap
import re
from pathlib import Path

import pikepdf
from pikepdf import Name

from pressroom.engines import images, pdfium
from pressroom.errors import ContentLimit, Corrupt, Encrypted, PageLimit, PixelLimit, TooLarge
from pressroom.models import DocumentInfo, PageInfo, SourceKind
from pressroom.pipeline.content import ContentMeter
from pressroom.pipeline.resolution import fitting_dpi
from pressroom.pipeline.sniff import sniff_file
from pressroom.pipeline.stop import between_pages
from pressroom.pixels import bitmap_pixels
from pressroom.settings import Limits

# what pikepdf raises for a file it cannot make sense of: qpdf's own errors (a page tree it
# cannot flatten is a QpdfRuntimeError, not a PdfError; an annotation's flags past 32 bits an
# OverflowError or a plain RuntimeError), and Python's where a value of the wrong kind stands
# in a dictionary or an array, a key is missing, or objects nest past the interpreter's stack
PDF_ERRORS = (
    pikepdf.PikepdfError,
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
    IndexError,
    ArithmeticError,
    RuntimeError,  # qpdf's "Integer conversion underflow"; a RecursionError
)

# A page carries real text when PDFium extracts at least this many letters and digits from it,
# or any at all when no image covers the page (a born-digital page with little on it).
REAL_TEXT_CHARS = 20


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def render_dpi(native: float | None, limits: Limits) -> float:
    """The source image's own resolution where there is one, within the configured bounds."""
    if native is None:
        return 300.0
    return float(min(max(round(native), limits.min_dpi), limits.max_dpi))


def inspect_source(
    path: Path,
    limits: Limits,
    *,
    every_page_dpi: float | None = None,
    kind: SourceKind | None = None,
    hashed: Path | None = None,
) -> DocumentInfo:
    """Facts of a source, refusing what would cost too much before anything costly is done.

    ``every_page_dpi``: every page will be rendered at this resolution (redaction), not only
    those without text; their bitmaps are checked against the pixel limits too. A PDF page too
    large for the limit at it is checked at the lower resolution it will be read at
    (``resolution.fitting_dpi``), and refused only where even that is over. ``kind``: the
    source's kind where the caller sniffed it already; ``hashed``: the file whose sha256 the
    facts carry (``path`` by default; the source as it came, for a prepared copy of it).
    """
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise TooLarge(f"{size:,} bytes; the limit is {limits.max_bytes:,}")
    kind = kind or sniff_file(path)
    if kind is SourceKind.PDF:
        pages = _inspect_pdf(path, limits, every_page_dpi)
    else:
        pages = _inspect_image(path, limits, every_page_dpi)
    if not pages:
        raise Corrupt("the document has no pages")
    return DocumentInfo(
        kind=kind, pages=tuple(pages), size_bytes=size, sha256=file_sha256(hashed or path)
    )


def recognition_size(frame: images.FrameFacts, limits: Limits) -> tuple[int, int]:
    """The size an image frame is resampled to for recognition: square pixels at its finer
    resolution, within the configured bounds (a 50-dpi scan is upscaled 3x each way)."""
    dpi = float(min(max(max(frame.dpi), limits.min_dpi), limits.max_dpi))
    w, h = frame.size_pt
    return round(w * dpi / 72.0), round(h * dpi / 72.0)


def _inspect_image(path: Path, limits: Limits, every_page_dpi: float | None) -> list[PageInfo]:
    out = []
    spent = 0
    for i, frame in enumerate(images.inspect_image(path, limits)):
        w, h = frame.size_pt
        own = frame.width_px * frame.height_px  # decoded as it is
        made = [own]
        if every_page_dpi is None:  # recognition reads a resampled copy; a fax is made square
            made += [_area(recognition_size(frame, limits)), _area(_square_size(frame))]
            what = "would be resampled for recognition to"
        else:  # the page is read as it is, and the output rendered again at this resolution
            made.append(bitmap_pixels(w, h, every_page_dpi))
            what = "would render to"
        for pixels in made[1:]:
            _check_bitmap(pixels, i, what, limits)
        # what a pass makes of this page: the frame, and each copy at another size
        spent = _check_document(spent + own + sum(p for p in made[1:] if p != own), limits)
        out.append(PageInfo(i, w, h, 0, frame.dpi[0], has_text=False, text_chars=0))
    return out


def _area(size: tuple[int, int]) -> int:
    return size[0] * size[1]


def _square_size(frame: images.FrameFacts) -> tuple[int, int]:
    """A frame whose pixels are not square (a fax's 204x98 dpi) is resampled at its finer
    resolution to keep as the page's own pixels."""
    dpi = max(frame.dpi)
    w, h = frame.size_pt
    return round(w * dpi / 72.0), round(h * dpi / 72.0)


def _check_bitmap(pixels: int, index: int, what: str, limits: Limits) -> None:
    if pixels > limits.max_pixels:
        raise PixelLimit(
            f"page {index + 1} {what} {pixels:,} pixels; the limit is {limits.max_pixels:,}"
        )


def _check_document(spent: int, limits: Limits) -> int:
    if spent > limits.max_document_pixels:
        raise PixelLimit(
            f"the document's pages would make more than {limits.max_document_pixels:,} "
            "pixels of bitmaps"
        )
    return spent


def page_tree_count(pdf: pikepdf.Pdf, limits: Limits) -> int:
    """The pages the page tree really holds, checked against what each of its nodes claims.

    Read from the tree itself, before anything trusts a ``/Count``: PDFium finds a page by
    the counts, qpdf by walking the kids, and the two must agree on which page is which. A
    tree that claims more (or fewer) pages than it holds is corrupt, not long.
    """
    root = pdf.Root.get("/Pages")
    if not isinstance(root, pikepdf.Dictionary):
        raise Corrupt("the PDF has no page tree")
    seen: set[tuple[int, int]] = set()
    leaves = 0

    def walk(node: pikepdf.Dictionary, depth: int) -> int:
        nonlocal leaves
        if depth > 64:
            raise Corrupt("the PDF's page tree is nested too deep")
        key = node.objgen
        if key != (0, 0):
            if key in seen:
                raise Corrupt("the PDF's page tree holds a node twice")
            seen.add(key)
        kids = node.get("/Kids")
        if node.get("/Type") == Name.Pages and not isinstance(kids, pikepdf.Array):
            raise Corrupt("the PDF's page tree has a node without kids")
        if node.get("/Type") == Name.Page or not isinstance(kids, pikepdf.Array):
            leaves += 1
            if leaves > limits.max_pages:
                raise PageLimit(
                    f"more than {limits.max_pages} pages; the limit is {limits.max_pages}"
                )
            return 1
        held = 0
        for kid in kids:
            if not isinstance(kid, pikepdf.Dictionary):
                raise Corrupt("the PDF's page tree has a kid that is not a page")
            held += walk(kid, depth + 1)
        claimed = node.get("/Count")
        if isinstance(claimed, bool):  # true is 1 to Python, and no count to qpdf
            claimed = None
        if not isinstance(claimed, int) or claimed != held:
            raise Corrupt(
                f"the PDF's page tree claims {claimed} pages where it holds {held}"
                if isinstance(claimed, int)
                else "the PDF's page tree has no page count"
            )
        return held

    return walk(root, 0)


# A trailer's or cross-reference stream's /Size: how many object numbers the file claims.
_SIZE = re.compile(rb"/Size[\x00\t\n\f\r ]*(\d{1,20})(?![0-9.])")
_XREF_CONTEXT = (b"/Root", b"/XRef", b"trailer")
# qpdf sizes its cross-reference table by /Size before anything can look at a page (about 10
# bytes an entry, measured: /Size 150,000,000 took a worker to 1.47 GB from a 1 MB file). An
# object takes at least 8 bytes of the file even inside an object stream, so more object
# numbers than that can only be a lie.
MIN_OBJECT_BYTES = 8
MIN_SIZE_ALLOWED = 1_000_000


def check_object_count(path: Path) -> None:
    """Refuse a PDF whose cross-reference sections claim more objects than it can hold."""
    size = path.stat().st_size
    allowed = max(MIN_SIZE_ALLOWED, size // MIN_OBJECT_BYTES)
    if size == 0:
        return
    with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        for m in _SIZE.finditer(data):
            if int(m.group(1)) <= allowed:
                continue
            window = data[max(0, m.start() - 4096) : m.end() + 4096]
            if any(word in window for word in _XREF_CONTEXT):
                raise Corrupt(
                    f"the PDF claims {int(m.group(1)):,} objects in {size:,} bytes; "
                    "its cross-reference table cannot be right"
                )


def _inspect_pdf(path: Path, limits: Limits, every_page_dpi: float | None) -> list[PageInfo]:
    check_object_count(path)
    try:
        # qpdf would walk (and copy repeated kids of) the page tree as it opens; it must be
        # checked first
        # one that opens here has no user password: an owner password (permissions) alone
        # does not stop reading, and the pipeline reads its decrypted copy (pipeline.flatten)
        with pikepdf.open(path, inherit_page_attributes=False) as pdf:
            count = page_tree_count(pdf, limits)
            if len(pdf.pages) != count:
                raise Corrupt("the PDF's page tree is inconsistent")
            # Measured here, before PDFium loads a page: loading parses it all.
            meter = ContentMeter(limits)
            costs = []
            operators = 0
            for i, page in enumerate(pdf.pages):
                costs.append(meter.page(page, i + 1))
                operators += costs[-1].operators
                if operators > limits.max_document_operators:
                    raise ContentLimit(
                        f"the document's pages hold more than "
                        f"{limits.max_document_operators:,} drawing operators in all"
                    )
    except pikepdf.PasswordError:
        raise Encrypted("the PDF needs a password to open; remove the password first") from None
    except PDF_ERRORS:
        raise Corrupt("the PDF cannot be parsed") from None
    for i, cost in enumerate(costs):
        if cost.image_pixels > limits.max_pixels:
            what = "an image" if cost.image_pixels == cost.largest_image else "images"
            raise PixelLimit(
                f"page {i + 1} draws {what} of {cost.image_pixels:,} pixels; "
                f"the limit is {limits.max_pixels:,}"
            )
    out = []
    spent = 0
    with pdfium.RecyclingDocument(path) as doc:
        if len(doc) != count:
            raise Corrupt("the PDF's page tree is inconsistent")
        for i in range(count):
            between_pages()
            facts = pdfium.page_facts(doc, i)
            if facts.width_pt <= 0 or facts.height_pt <= 0:
                raise Corrupt(f"page {i + 1} has no area")
            has_text = facts.text_chars >= REAL_TEXT_CHARS or (
                facts.text_chars > 0 and facts.image_px is None
            )
            dpi = every_page_dpi
            if dpi is not None:
                # a page too large at that resolution is read at a lower one within the limit
                dpi = fitting_dpi(facts.width_pt, facts.height_pt, dpi, limits.max_pixels)
            elif not has_text:
                dpi = render_dpi(facts.image_dpi, limits)
            if dpi is not None:
                pixels = bitmap_pixels(facts.width_pt, facts.height_pt, dpi)
                _check_bitmap(pixels, i, "would render to", limits)
                spent = _check_document(spent + pixels, limits)
            out.append(
                PageInfo(
                    i,
                    facts.width_pt,
                    facts.height_pt,
                    facts.rotate,
                    facts.image_dpi,
                    has_text=has_text,
                    text_chars=facts.text_chars,
                    plain_scan=facts.plain_scan,
                )
            )
    return out
