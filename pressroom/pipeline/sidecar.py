"""The sidecar text: an output's text layer as plain text (``--sidecar``), one page after
another with a form feed between them, read back from the checked output itself — so it is
exactly what a reader of the PDF finds (for a redaction, only what remains), in the order the
text layer lays it, without the brand bands or the cover. A plain job's sticky notes, which no
page shows, follow their page's text, each on a line of its own after "Note: "; a redaction's
are left out (they are not redacted)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pressroom.corrections import ReviewSheet
from pressroom.engines import pdfium
from pressroom.pipeline.geometry import PageLayout

FORM_FEED = "\f"


def sidecar_text(
    output: Path,
    layouts: Sequence[PageLayout],
    offset: int,
    notes: Sequence[tuple[int, str]] = (),
) -> str:
    """The content pages' text of ``output`` (``offset``: output pages before the first),
    each page's within its content box, pages joined by form feeds."""
    pages = []
    with pdfium.RecyclingDocument(output) as doc:
        for n, layout in enumerate(layouts):
            text = pdfium.page_text(doc, n + offset, layout.text_box).replace("\r\n", "\n")
            extra = [f"Note: {' '.join(t.split())}" for page, t in notes if page == n + 1]
            pages.append("\n".join([text.rstrip("\n"), *extra]) if extra else text)
    return FORM_FEED.join(pages)


def sheet_layouts(sheet: ReviewSheet) -> list[PageLayout]:
    """Where each content page of a held redaction lies on its output page, from the review
    sheet (a held copy's sidecar is made when it is approved)."""
    layouts = []
    for page in sheet.pages:
        scale, left, top = page.placement
        w, h = page.width_pt, page.height_pt
        content = (left, h - top - h * scale, left + w * scale, h - top)
        layouts.append(PageLayout(w, h, content, scale, page.bands))
    return layouts


def held_sidecar(output: Path, sheet: ReviewSheet) -> str:
    """The sidecar text of a held (redacted) output, its pages placed as its sheet says."""
    import pikepdf

    layouts = sheet_layouts(sheet)
    with pikepdf.open(output) as pdf:
        offset = len(pdf.pages) - len(layouts)
    return sidecar_text(output, layouts, offset)


def sidecar_path(output: Path) -> Path:
    """Where a scratch output's sidecar is written: beside it, in the job's private space."""
    return output.with_name(f"{output.stem}.txt")
