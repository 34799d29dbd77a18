"""Inspect a source before any heavy work: type, size, pages, pixels, encryption, existing text."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pikepdf

from pressroom.engines import images, pdfium
from pressroom.errors import Corrupt, Encrypted, PageLimit, PixelLimit, TooLarge
from pressroom.models import DocumentInfo, PageInfo, SourceKind
from pressroom.pipeline.sniff import sniff_file
from pressroom.settings import Limits

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


def inspect_source(path: Path, limits: Limits) -> DocumentInfo:
    size = path.stat().st_size
    if size > limits.max_bytes:
        raise TooLarge(f"{size:,} bytes; the limit is {limits.max_bytes:,}")
    kind = sniff_file(path)
    pages = _inspect_pdf(path, limits) if kind is SourceKind.PDF else _inspect_image(path, limits)
    if not pages:
        raise Corrupt("the document has no pages")
    return DocumentInfo(kind=kind, pages=tuple(pages), size_bytes=size, sha256=file_sha256(path))


def _inspect_image(path: Path, limits: Limits) -> list[PageInfo]:
    out = []
    for i, frame in enumerate(images.inspect_image(path, limits)):
        w, h = frame.size_pt
        out.append(PageInfo(i, w, h, 0, frame.dpi[0], has_text=False, text_chars=0))
    return out


def _inspect_pdf(path: Path, limits: Limits) -> list[PageInfo]:
    try:
        with pikepdf.open(path) as pdf:
            if pdf.is_encrypted:
                raise Encrypted("the PDF is encrypted; remove the password first")
            count = len(pdf.pages)
    except pikepdf.PasswordError:
        raise Encrypted("the PDF is encrypted; remove the password first") from None
    except pikepdf.PdfError:
        raise Corrupt("the PDF cannot be parsed") from None
    if count > limits.max_pages:
        raise PageLimit(f"{count} pages; the limit is {limits.max_pages}")
    out = []
    with pdfium.RecyclingDocument(path) as doc:
        if len(doc) != count:
            raise Corrupt("the PDF's page tree is inconsistent")
        for i in range(count):
            facts = pdfium.page_facts(doc, i)
            if facts.largest_image_pixels > limits.max_pixels:
                raise PixelLimit(
                    f"page {i + 1} holds an image of {facts.largest_image_pixels:,} pixels; "
                    f"the limit is {limits.max_pixels:,}"
                )
            if facts.width_pt <= 0 or facts.height_pt <= 0:
                raise Corrupt(f"page {i + 1} has no area")
            has_text = facts.text_chars >= REAL_TEXT_CHARS or (
                facts.text_chars > 0 and facts.image_px is None
            )
            if not has_text:
                dpi = render_dpi(facts.image_dpi, limits)
                pixels = (facts.width_pt * dpi / 72.0) * (facts.height_pt * dpi / 72.0)
                if pixels > limits.max_pixels:
                    raise PixelLimit(
                        f"page {i + 1} would render to {pixels:,.0f} pixels; "
                        f"the limit is {limits.max_pixels:,}"
                    )
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
