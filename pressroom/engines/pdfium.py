"""PDFium through pypdfium2: page geometry, rendering and text with character boxes."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from pressroom.errors import Corrupt, Encrypted

if TYPE_CHECKING:
    from PIL import Image

    from pressroom.pixels import PixelBudget


@dataclass(frozen=True, slots=True)
class PdfPageFacts:
    width_pt: float  # as displayed (after /Rotate), crop box
    height_pt: float
    rotate: int
    text_chars: int  # letters and digits PDFium can extract
    image_px: tuple[int, int] | None  # pixel size of the image covering most of the page
    image_dpi: float | None
    largest_image_pixels: int
    plain_scan: bool = False  # nothing on the page but one upright image covering all of it


# PDFium is not thread-safe: two threads in it at once crash the process (seen: the desk's
# thumbnails, rendered by the service's thread pool side by side). Every document is opened,
# used and closed under this lock, so within a process one thread at a time is inside PDFium;
# workers are processes of their own and do not wait on each other. Reentrant: a document
# opened while another is open in the same thread is fine.
LOCK = threading.RLock()


@contextmanager
def open_pdf(path: Path) -> Iterator[Any]:
    with LOCK:
        doc = _load(path)
        try:
            yield doc
        finally:
            doc.close()


class RecyclingDocument:
    """A PDFium document reopened every ``every`` pages.

    PDFium keeps what it parsed for as long as the document is open (~0.85 MB a scanned page,
    measured), so a long document read page by page would grow without bound.
    """

    def __init__(self, path: Path, every: int = 32) -> None:
        self.path = path
        self.every = every
        self._doc: Any = None
        self._used = 0

    def __enter__(self) -> RecyclingDocument:
        LOCK.acquire()  # held until __exit__: see LOCK
        return self

    def __exit__(self, *_exc: object) -> None:
        try:
            self.close()
        finally:
            LOCK.release()

    def close(self) -> None:
        if self._doc is not None:
            self._doc.close()
            self._doc = None

    def __len__(self) -> int:
        return len(self.doc)

    @property
    def doc(self) -> Any:
        if self._doc is None or self._used >= self.every:
            self.close()
            self._doc = _load(self.path)
            self._used = 0
        return self._doc

    def __getitem__(self, index: int) -> Any:
        with failing_as(f"page {index + 1} cannot be loaded"):
            page = self.doc[index]
        self._used += 1
        return page


@contextmanager
def failing_as(what: str) -> Iterator[None]:
    """PDFium's failure on a page (it would not load, render or give its text) refused
    ``CORRUPT`` with ``what``, where it is raised."""
    try:
        yield
    except pdfium.PdfiumError:
        raise Corrupt(what) from None


def _load(path: Path) -> Any:
    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise Encrypted("the PDF needs a password to open") from None
        raise Corrupt("PDFium cannot read this PDF") from None


def page_facts(doc: Any, index: int) -> PdfPageFacts:
    try:
        page = doc[index]
    except pdfium.PdfiumError:
        raise Corrupt(f"page {index + 1} cannot be loaded") from None
    try:
        return _facts(page)
    except pdfium.PdfiumError:
        raise Corrupt(f"page {index + 1} cannot be read") from None
    finally:
        page.close()


def _facts(page: Any) -> PdfPageFacts:
    """What inspection needs of one loaded page."""
    width, height = page.get_size()
    rotate = int(page.get_rotation()) % 360
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
    finally:
        textpage.close()
    chars = sum(1 for c in text if c.isalnum())
    best: tuple[float, tuple[int, int], float] | None = None
    largest = 0
    page_area = max(width * height, 1.0)
    for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=4):
        try:
            px = obj.get_px_size()
            left, bottom, right, top = obj.get_bounds()
        except pdfium.PdfiumError:
            continue
        largest = max(largest, int(px[0]) * int(px[1]))
        area = max(right - left, 0) * max(top - bottom, 0)
        if area / page_area < 0.5 or right <= left:
            continue
        # The longer side is the more precise measure, whatever the image's own rotation.
        span_pt = max(right - left, top - bottom)
        dpi = max(px) / (span_pt / 72.0)
        if best is None or area > best[0]:
            best = (area, (int(px[0]), int(px[1])), dpi)
    plain = _is_plain_scan(page)
    return PdfPageFacts(
        width_pt=float(width),
        height_pt=float(height),
        rotate=rotate,
        text_chars=chars,
        image_px=best[1] if best else None,
        image_dpi=best[2] if best else None,
        largest_image_pixels=largest,
        plain_scan=plain,
    )


def _is_plain_scan(page: Any) -> bool:
    """One image, drawn upright (no flip, no turn) over exactly the visible page, and nothing else.

    Such a page's pixels are the image's own: decoding the image gives what rendering would,
    five times faster.
    """
    objects = list(page.get_objects(max_depth=0))
    if len(objects) != 1 or objects[0].type != pdfium_c.FPDF_PAGEOBJ_IMAGE:
        return False
    a, b, c, d, e, f = objects[0].get_matrix().get()
    if b or c or a <= 0 or d <= 0:
        return False
    left, bottom, right, top = page.get_bbox()
    return all(abs(x - y) < 1.0 for x, y in ((e, left), (f, bottom), (e + a, right), (f + d, top)))


def bitmap_size(page: Any, scale: float) -> tuple[int, int]:
    """The size of the bitmap ``page.render(scale=scale)`` allocates, known before it does."""
    width, height = page.get_size()
    return math.ceil(width * scale), math.ceil(height * scale)


def render_gray(doc: Any, index: int, dpi: float, budget: PixelBudget | None = None) -> Image.Image:
    """Render one page as displayed (its /Rotate applied) to an 8-bit grey image, counted
    against ``budget`` first (a fresh one with the default limits when none is given)."""
    if budget is None:
        from pressroom.pixels import PixelBudget
        from pressroom.settings import Limits

        budget = PixelBudget(Limits())
    page = doc[index]
    try:
        budget.take(*bitmap_size(page, dpi / 72.0), f"rendering page {index + 1}")
        bitmap = page.render(scale=dpi / 72.0, grayscale=True)
        image: Image.Image = bitmap.to_pil()
        return image if image.mode == "L" else image.convert("L")
    except pdfium.PdfiumError:
        raise Corrupt(f"page {index + 1} cannot be rendered") from None
    finally:
        page.close()


def render_region(page: Any, scale: float, region: tuple[int, int, int, int]) -> Image.Image | None:
    """The pixels ``region`` (left, top, right, bottom, past the last) of ``page`` rendered at
    ``scale`` in grey, rendered alone, at the cost of their area: PDFium shifts its matrix by
    whole pixels, so a picture drawn at its size or smaller, text and vectors come out as in
    the whole rendering (not a tiling pattern, or a picture scaled up with interpolation, at
    the region's edges). None where the region is not inside the rendering, or PDFium's crop
    does not land on it (the caller then renders the whole page)."""
    width, height = bitmap_size(page, scale)
    left, top, right, bottom = region
    if not (0 <= left < right <= width and 0 <= top < bottom <= height):
        return None
    # PDFium cuts ceil(points x scale) pixels off each edge: a hair under the pixel count, so
    # no rounding moves the region
    crop = tuple(max(0.0, (v - 1e-6) / scale) for v in (left, height - bottom, width - right, top))
    with failing_as("a page cannot be rendered"):
        bitmap = page.render(scale=scale, crop=crop, grayscale=True)
    try:
        image: Image.Image = bitmap.to_pil()
        image = image if image.mode == "L" else image.convert("L")
        return image.copy() if image.size == (right - left, bottom - top) else None
    finally:
        bitmap.close()


def render_luma(page: Any, scale: float) -> Image.Image:
    """The page rendered in colour and made grey exactly as Pillow makes RGB grey
    (L = (19595 R + 38470 G + 7471 B + 32768) >> 16), a band of rows at a time.

    Only the colour bitmap (3 bytes a pixel) and the grey image are ever held: a colour Pillow
    image (4 bytes a pixel) and its copies are never made.
    """
    return render_luma_seen(page, scale)[0]


def render_luma_seen(page: Any, scale: float) -> tuple[Image.Image, bool]:
    """``render_luma``'s grey image, and whether any pixel of the colour rendering shows
    colour (two of its channels more than two grey levels apart): where none does, the grey
    image is the page's pixels whole (``redact.burn.grey_or_colour`` makes the same one).

    A band of rows with no colour is made grey by OpenCV, whose weights give exactly Pillow's
    grey of every pixel that close to grey (all 6,350 such colours checked; they differ by one
    on some coloured ones, which Pillow's sum makes). A colour rendering made grey so costs
    about half of PDFium's own grey rendering (0.04-0.1 s against 0.12-0.2 s a 300-dpi
    Letter page, measured), and is Pillow's grey, which PDFium's is not everywhere."""
    import cv2
    import numpy as np
    from PIL import Image

    with failing_as("a page cannot be rendered"):
        bitmap = page.render(scale=scale)
    try:
        width, height, channels = bitmap.width, bitmap.height, bitmap.n_channels
        if channels == 1:
            grey: Image.Image = bitmap.to_pil().copy()
            return grey, False
        rows = np.frombuffer(bitmap.buffer, dtype=np.uint8).reshape(height, bitmap.stride)
        red, blue = (0, 2) if bitmap.rev_byteorder else (2, 0)  # PDFium writes BGR(x)
        if bitmap.rev_byteorder:
            code = cv2.COLOR_RGB2GRAY if channels == 3 else cv2.COLOR_RGBA2GRAY
        else:
            code = cv2.COLOR_BGR2GRAY if channels == 3 else cv2.COLOR_BGRA2GRAY
        out = np.empty((height, width), dtype=np.uint8)
        coloured = False
        for top in range(0, height, 256):
            band = rows[top : top + 256, : width * channels].reshape(-1, width, channels)
            planes = cv2.split(band)
            if not (
                cv2.absdiff(planes[0], planes[1]).max() > 2
                or cv2.absdiff(planes[1], planes[2]).max() > 2
            ):
                out[top : top + 256] = cv2.cvtColor(band, code)
                continue
            coloured = True
            luma = band[..., red].astype(np.uint32) * 19595
            luma += band[..., 1].astype(np.uint32) * 38470
            luma += band[..., blue].astype(np.uint32) * 7471
            luma += 0x8000
            luma >>= 16
            out[top : top + 256] = luma
        return Image.fromarray(out, mode="L"), coloured
    finally:
        bitmap.close()


def render_colour(page: Any, scale: float) -> Image.Image:
    """The page rendered as an RGB image; PDFium's bitmap is freed as soon as it is copied."""
    with failing_as("a page cannot be rendered"):
        bitmap = page.render(scale=scale)
    try:
        image: Image.Image = bitmap.to_pil()
        return image if image.mode == "RGB" else image.convert("RGB")
    finally:
        bitmap.close()


def page_text(doc: Any, index: int, rect: tuple[float, float, float, float] | None = None) -> str:
    """The text PDFium extracts from a page, optionally only inside ``rect`` (l, b, r, t in pt)."""
    page = doc[index]
    try:
        with failing_as(f"page {index + 1}'s text cannot be read"):
            textpage = page.get_textpage()
        try:
            if rect is None:
                return str(textpage.get_text_range())
            left, bottom, right, top = rect
            return str(textpage.get_text_bounded(left=left, bottom=bottom, right=right, top=top))
        finally:
            textpage.close()
    finally:
        page.close()


def text_boxes(doc: Any, index: int, dpi: float) -> tuple[str, list[tuple[int, int, int, int]]]:
    """A page's text as PDFium extracts it, and where it lies on the page rendered at ``dpi``
    as displayed (its /Rotate applied): boxes (left, top, right, bottom) in that bitmap's
    pixels, mapped by the very matrix rendering uses."""
    import ctypes

    page = doc[index]
    try:
        scale = dpi / 72.0
        width, height = bitmap_size(page, scale)
        textpage = page.get_textpage()
        try:
            text = str(textpage.get_text_range())
            boxes = []
            x, y = ctypes.c_int(), ctypes.c_int()
            for i in range(textpage.count_rects()):
                left, bottom, right, top = textpage.get_rect(i)
                corners = []
                for px, py in ((left, bottom), (right, top)):
                    pdfium_c.FPDF_PageToDevice(
                        page.raw, 0, 0, width, height, 0, px, py, ctypes.byref(x), ctypes.byref(y)
                    )
                    corners.append((x.value, y.value))
                (x0, y0), (x1, y1) = corners
                boxes.append((min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)))
        finally:
            textpage.close()
    except pdfium.PdfiumError:
        raise Corrupt(f"page {index + 1} cannot be read") from None
    finally:
        page.close()
    return text, boxes


def find_text(doc: Any, index: int, needle: str) -> list[tuple[float, float, float, float]]:
    """Boxes (l, b, r, t in pt) of each occurrence of ``needle`` on a page, as a viewer finds it."""
    page = doc[index]
    try:
        with failing_as(f"page {index + 1}'s text cannot be read"):
            textpage = page.get_textpage()
        try:
            searcher = textpage.search(needle, match_case=False, match_whole_word=False)
            boxes: list[tuple[float, float, float, float]] = []
            while True:
                found = searcher.get_next()
                if found is None:
                    break
                start, count = found
                xs0, ys0, xs1, ys1 = [], [], [], []
                for i in range(start, start + count):
                    left, bottom, right, top = textpage.get_charbox(i)
                    xs0.append(left)
                    xs1.append(right)
                    ys0.append(bottom)
                    ys1.append(top)
                boxes.append((min(xs0), min(ys0), max(xs1), max(ys1)))
            return boxes
        finally:
            textpage.close()
    finally:
        page.close()
