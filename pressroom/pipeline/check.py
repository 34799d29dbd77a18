"""Check an output before anyone sees it: it parses twice, has its pages, its text reads back."""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

import pikepdf

from pressroom.engines import pdfium
from pressroom.errors import OutputCheckFailed, TextReadBack
from pressroom.models import PageText
from pressroom.pipeline.geometry import PageLayout
from pressroom.pipeline.stop import between_pages

# What the source must not smuggle into an output: actions, scripts, attachments, forms.
# Outlines, named destinations and links are kept (pipeline.structure), each only as a
# destination or a URI: ``_carried`` holds them to that.
FORBIDDEN_ROOT_KEYS = ("/OpenAction", "/AA", "/AcroForm", "/Threads")
# a link's or an outline item's action: only these
_ACTIONS = ("/URI", "/GoTo")


def _goes_only(node: pikepdf.Object, what: str) -> None:
    """An outline item or a link goes to a destination or a URI, nothing else (a script, a
    launch, a submit, a chain of further actions)."""
    if "/AA" in node:
        raise OutputCheckFailed(f"output carries {what} with actions")
    action = node.get("/A")
    if action is None:
        return
    if not isinstance(action, pikepdf.Dictionary) or "/Next" in action:
        raise OutputCheckFailed(f"output carries {what} with an action")
    if str(action.get("/S")) not in _ACTIONS:
        raise OutputCheckFailed(f"output carries {what} with an action other than a link")


def _carried(pdf: pikepdf.Pdf) -> None:
    """Names hold named destinations only; outline items and annotations go to a place or a
    URI; the only annotations are links."""
    names = pdf.Root.get("/Names")
    if names is not None and (
        not isinstance(names, pikepdf.Dictionary) or set(names.keys()) - {"/Dests"}
    ):
        raise OutputCheckFailed("output carries Names beyond named destinations")
    outlines = pdf.Root.get("/Outlines")
    if outlines is not None:
        if not isinstance(outlines, pikepdf.Dictionary):
            raise OutputCheckFailed("output's outline is not a dictionary")
        _outline_only(outlines, 0)
    for pdf_page in pdf.pages:
        for annot in pdf_page.obj.get("/Annots", pikepdf.Array()):
            if not isinstance(annot, pikepdf.Dictionary) or annot.get("/Subtype") != "/Link":
                raise OutputCheckFailed("output carries annotations other than links")
            _goes_only(annot, "a link")


def _outline_only(node: pikepdf.Object, depth: int) -> None:
    if depth > 64:
        raise OutputCheckFailed("output's outline nests too deep")
    _goes_only(node, "an outline item")
    child = node.get("/First")
    seen = 0
    while isinstance(child, pikepdf.Dictionary):
        _outline_only(child, depth + 1)
        child = child.get("/Next")
        seen += 1
        if seen > 100_000:
            raise OutputCheckFailed("output's outline does not end")


@dataclass(frozen=True, slots=True)
class CheckedPage:
    """One content page as the check must find it: the words themselves are not kept (a long
    document would hold every page's word boxes until the end), only their squashed text."""

    output_index: int
    layout: PageLayout
    method: str
    expected: str  # squash() of what OCR read; empty for pages not OCR'd
    real_chars: int
    rotation: int
    skew: float

    @classmethod
    def of(cls, output_index: int, layout: PageLayout, text: PageText) -> CheckedPage:
        expected = squash(text.text + text.shown) if text.method == "ocr" else ""
        return cls(
            output_index, layout, text.method, expected, text.real_chars, text.rotation, text.skew
        )


def squash(text: str) -> str:
    """Text compared by content only: compatibility-normalised, no whitespace."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def _same_characters(a: str, b: str) -> float:
    common = sum((Counter(a) & Counter(b)).values())
    return common / max(len(a), len(b), 1)


def check_output(path: Path, expected_pages: int, pages: Sequence[CheckedPage]) -> None:
    try:
        with pikepdf.open(path) as pdf:
            if len(pdf.pages) != expected_pages:
                raise OutputCheckFailed(
                    f"output has {len(pdf.pages)} pages; expected {expected_pages}"
                )
            for key in FORBIDDEN_ROOT_KEYS:
                if key in pdf.Root:
                    raise OutputCheckFailed(f"output carries {key[1:]}")
            _carried(pdf)
    except pikepdf.PdfError:
        raise OutputCheckFailed("output does not parse with pikepdf") from None
    with pdfium.RecyclingDocument(path) as doc:
        if len(doc) != expected_pages:
            raise OutputCheckFailed("PDFium sees a different page count")
        for page in pages:
            between_pages()
            if page.method != "ocr" or not page.expected:
                continue
            found = squash(pdfium.page_text(doc, page.output_index, page.layout.text_box))
            wanted = page.expected
            if found == wanted:
                continue
            ratio = SequenceMatcher(None, found, wanted, autojunk=False).ratio()
            if ratio < 0.98:
                # Extractors order lines by position; on a strongly skewed scan their order
                # differs from the reading order we wrote. The characters must still all be there.
                ratio = _same_characters(found, wanted)
            if ratio < 0.98:
                raise TextReadBack(
                    f"page {page.output_index + 1}: the text layer extracts back to "
                    f"{ratio:.0%} of what OCR read"
                )
