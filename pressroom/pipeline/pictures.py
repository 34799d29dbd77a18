"""Page pictures for the reviewer's desk (its backends call them): a source page turned and
levelled as the redaction read it (so the review sheet's boxes lie on it) and a page of the
held output, as PNGs of a given width.

Both desks (the service's and the offline folder's) draw in the web server's own process, so
a picture has a memory budget (security review N4: a 480 x 3000 pt
page at 3,999 px wide was a 100 MP bitmap and took the API from 189 MB to 1.38 GB, three at
once to 2.55 GB, past the shipped 1.5 and 2 GiB limits):

- **Area.** A picture, and every bitmap made for it (the PDF render, an image frame scaled,
  the page turned and levelled, the output page cut to the sheet's frame), is at most
  ``MAX_PICTURE_PX`` (16 MP: a 4K screen's worth twice over). A picture that would be larger
  at the width asked for comes back narrower, the page's aspect kept: its height still follows
  the upright page for the width it has, so a box at x pt is at x * (its width) / width_pt px.
  The desk sizes pictures with CSS and never reads the width back from the request.
- **Image files** (PNG, JPEG, TIFF frames) are the exception: PNG and TIFF can only be decoded
  at their own size, which the per-bitmap limit (``PixelBudget``, 100 MP by default) bounds as
  it bounded the upload. A JPEG is decoded already scaled down by 1/2, 1/4 or 1/8 where that
  still covers the picture (``Image.draft``); any frame is then reduced by a whole factor (a
  box average, down to at least the picture's size) before it is converted, scaled and turned.
  A bilevel, palette or 16-bit frame is converted once at its decoded size first (Pillow cannot
  reduce those modes). Nothing made from a decode is larger than the decode, and the scaled
  frame, the picture, is within ``MAX_PICTURE_PX`` as above. A frame decoded larger than
  ``MAX_PICTURE_PX`` is decoded one at a time in the process (``_BIG_DECODE``).
- **Concurrency.** At most ``MAX_DRAWING`` (2) pictures are drawn at a time in a process, on
  the desk's own ``MAX_DRAWING`` drawing threads (so that at most two malloc arenas ever hold
  a picture's memory); other requests wait their turn on their thread-pool thread (Starlette's,
  for both desks), at most ``WAIT_S`` seconds, then are refused ``OVERLOADED`` (429 with
  Retry-After) rather than held without end.

So the pictures of PDF pages (every held output, and PDF sources) take at most about
``MAX_DRAWING`` x (a 16 MP render, its copies and its PNG) of the process's memory: about
250 MiB above the process's own with four or sixteen maximal pictures asked at once, where four
took the process to 2.8 GiB before this budget. An image file's page takes its decode more:
at the pixel limit, an RGB PNG about 600 MiB, a JPEG or bilevel TIFF about 200 MiB, whether
one or four are asked at once (bench/desk_picture_memory.py --images).
"""

from __future__ import annotations

import ctypes
import io
import math
import threading
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, TypeVar

from PIL import Image

from pressroom.corrections import SheetPage
from pressroom.engines import images, pdfium
from pressroom.engines.straighten import level
from pressroom.errors import BadRequest, Corrupt, Overloaded, PixelLimit
from pressroom.models import SourceKind
from pressroom.pipeline.ocr import rotate_cw
from pressroom.pixels import PixelBudget
from pressroom.settings import Limits

MIN_WIDTH, MAX_WIDTH = 16, 4000
MAX_PICTURE_PX = 16_000_000  # a picture and its bitmaps (an image file's decode aside: above)
MAX_DRAWING = 2  # pictures drawn at once per process
WAIT_S = 30.0  # how long a request waits for its turn to draw before it is refused
_N = TypeVar("_N", int, float)
_DRAWING = threading.BoundedSemaphore(MAX_DRAWING)
# The drawing itself runs on these threads, not on the caller's: glibc gives each thread that
# allocates its own malloc arena and keeps what a freed picture took in it, so pictures drawn
# on the web server's many pool threads (40 in Starlette), two at a time, still left the
# process holding one picture's worth per thread (measured: 16 at once, 137 MiB -> 1 GiB,
# 829 MiB after). Two threads keep it to two, and each trims what it kept (``_trimmed``).
_DRAWERS = ThreadPoolExecutor(max_workers=MAX_DRAWING, thread_name_prefix="desk-picture")


def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None where the C library has none (musl, macOS)."""
    try:
        return getattr(ctypes.CDLL("libc.so.6"), "malloc_trim", None)
    except OSError:
        return None


_MALLOC_TRIM = _malloc_trim()
# A frame decoded larger than a picture is decoded one at a time: an RGB frame at the pixel
# limit is 400 MB (Pillow keeps RGB in four bytes a pixel); two at once took 1.26 GiB.
_BIG_DECODE = threading.Lock()
# modes Pillow's reduce() averages correctly (not bilevel, palette or 16-bit grey)
_REDUCIBLE = ("L", "RGB", "RGBA", "LA", "CMYK", "I", "F")


def source_page_png(
    path: Path, kind: SourceKind, index: int, page: SheetPage | None, width_px: int
) -> bytes:
    """Page ``index`` (from 0) of the source, upright and levelled as ``page`` says the
    redaction read it, ``width_px`` wide or, where that would pass ``MAX_PICTURE_PX``, as wide
    as fits; its height follows the page's upright size in points for the width it has (so a
    box at x, y pt is at x * width / width_pt px). Without a sheet page: as it stands. Drawn
    when one of the ``MAX_DRAWING`` turns is free (waiting up to ``WAIT_S``, else
    ``Overloaded``)."""
    width = _width(width_px)
    with _turn():
        return _DRAWERS.submit(_trimmed, _draw_source, path, kind, index, page, width).result()


def output_page_png(path: Path, index: int, width_px: int, frame: SheetPage | None = None) -> bytes:
    """Page ``index`` (from 0) of a PDF (the held output) as it displays, ``width_px`` wide.
    With ``frame``: only the part where that sheet page was laid (its placement: scale and
    offset on the output page, bands left out), ``width_px`` wide and as high as the sheet
    page is for that width — the same frame as ``source_page_png``'s picture of it. Narrower
    than asked, the aspect kept, where the picture or the render it is cut from would pass
    ``MAX_PICTURE_PX``; drawn in turn, as ``source_page_png``."""
    width = _width(width_px)
    with _turn():
        return _DRAWERS.submit(_trimmed, _draw_output, path, index, width, frame).result()


def _trimmed(draw: Callable[..., bytes], *args: Any) -> bytes:
    """``draw(*args)``, then what the picture took handed back to the system: glibc keeps freed
    memory in the drawing thread's arena (Pillow's 16 MB blocks are under its mmap threshold),
    so each drawing thread kept its largest picture's worth: four 96 MP PNG pages asked at
    once took 1.15 GiB at the peak and kept 0.6 GiB after; trimmed here and after each big
    decode, 0.66 GiB and 0.07 GiB (the process alone)."""
    try:
        return draw(*args)
    finally:
        _trim()


def _trim() -> None:
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


@contextmanager
def _turn() -> Iterator[None]:
    """One of the ``MAX_DRAWING`` places to draw, held for the block."""
    if not _DRAWING.acquire(timeout=WAIT_S):
        raise Overloaded("the desk is drawing other pictures; try again shortly", retry_after=5)
    try:
        yield
    finally:
        _DRAWING.release()


def _draw_source(
    path: Path, kind: SourceKind, index: int, page: SheetPage | None, width: int
) -> bytes:
    rotation = page.rotation % 360 if page is not None else 0
    turned = rotation in (90, 270)
    if kind is SourceKind.PDF:
        with pdfium.open_pdf(path) as doc:
            pdf_page = _page(doc, index)
            try:
                shown_w, shown_h = (float(v) for v in pdf_page.get_size())
                upright_pt = _turn_size((shown_w, shown_h), turned)

                def render_size(w: int) -> tuple[int, int]:
                    scale = _turn_size(_upright(w, page, upright_pt), turned)[0] / shown_w
                    return pdfium.bitmap_size(pdf_page, scale)

                width = _fit(
                    width,
                    lambda w: max(_area(_upright(w, page, upright_pt)), _area(render_size(w))),
                )
                before = _turn_size(_upright(width, page, upright_pt), turned)
                _count(render_size(width), f"page {index + 1}")
                image = pdfium.render_colour(pdf_page, before[0] / shown_w)
            finally:
                pdf_page.close()
        image = _scaled(image, before, f"page {index + 1}")  # PDFium rounds up
    else:
        image = _frame(path, index, width, page, turned)
    image = rotate_cw(image, rotation)  # the same pixels, turned
    if page is not None and page.level:
        image = level(image, page.level)  # the same size
    return _png(image)


def _draw_output(path: Path, index: int, width: int, frame: SheetPage | None) -> bytes:
    with pdfium.open_pdf(path) as doc:
        pdf_page = _page(doc, index)
        try:
            shown_w, shown_h = (float(v) for v in pdf_page.get_size())
            shown_pt = (shown_w, shown_h)
            if frame is None:
                wide_pt = shown_w  # output points the picture's width covers
            else:
                factor = frame.placement[0]
                if not (factor > 0 and frame.width_pt > 0 and math.isfinite(factor)):
                    raise Corrupt("the page has no placement")
                wide_pt = factor * frame.width_pt
            # the whole output page is rendered at the picture's scale, the frame cut from it
            width = _fit(
                width,
                lambda w: max(
                    _area(_upright(w, frame, shown_pt)),
                    _area(pdfium.bitmap_size(pdf_page, w / wide_pt)),
                ),
            )
            scale = width / wide_pt  # pixels per output point
            _count(pdfium.bitmap_size(pdf_page, scale), f"page {index + 1}")
            image = pdfium.render_colour(pdf_page, scale)
        finally:
            pdf_page.close()
    if frame is not None:
        _factor, left, top = frame.placement
        size = _upright(width, frame, shown_pt)
        x0, y0 = round(left * scale), round(top * scale)
        # the part of the output page the sheet page covers; past the output's edge is paper
        cut = Image.new("RGB", size, "white")
        cut.paste(image.convert("RGB").crop((x0, y0, x0 + size[0], y0 + size[1])), (0, 0))
        image = cut
    return _png(image)


def _width(width_px: int) -> int:
    if not MIN_WIDTH <= width_px <= MAX_WIDTH:
        raise BadRequest(f"a page picture is {MIN_WIDTH} to {MAX_WIDTH} pixels wide")
    return width_px


def _fit(width: int, area: Callable[[int], int]) -> int:
    """The widest picture, up to ``width``, for which ``area`` (the pixels of the largest
    bitmap it takes, growing with the width) stays within ``MAX_PICTURE_PX``."""
    pixels = area(width)
    if pixels <= MAX_PICTURE_PX:
        return width
    # the area grows as the width squared: start there, then step past any rounding
    fitted = min(width, max(1, math.floor(width * math.sqrt(MAX_PICTURE_PX / pixels))))
    while fitted < width and area(fitted + 1) <= MAX_PICTURE_PX:
        fitted += 1
    while area(fitted) > MAX_PICTURE_PX:
        if fitted == 1:
            raise PixelLimit("the page is too long for its width to be drawn")
        fitted -= 1
    return fitted


def _turn_size(size: tuple[_N, _N], turned: bool) -> tuple[_N, _N]:
    """A size before a quarter turn, from the size after it (and back)."""
    return (size[1], size[0]) if turned else size


def _area(size: tuple[int, int]) -> int:
    return size[0] * size[1]


def _count(size: tuple[int, int], what: str) -> None:
    """A bitmap made for the picture: past ``MAX_PICTURE_PX`` is a fault of the fitting, and
    refused rather than drawn."""
    if _area(size) > MAX_PICTURE_PX:
        raise PixelLimit(
            f"{what} would make a bitmap of {_area(size):,} pixels; a desk picture's limit is "
            f"{MAX_PICTURE_PX:,}"
        )


def _upright(width: int, page: SheetPage | None, shown: tuple[float, float]) -> tuple[int, int]:
    """The picture's size: ``width`` wide, as high as the upright page is for that width."""
    w_pt, h_pt = (page.width_pt, page.height_pt) if page is not None else shown
    if not (w_pt > 0 and h_pt > 0 and math.isfinite(w_pt / h_pt)):
        raise Corrupt("the page has no size")
    return width, max(1, round(width * h_pt / w_pt))


def _page(doc: Any, index: int) -> Any:
    if not 0 <= index < len(doc):
        raise BadRequest(f"no page {index + 1} in this document")
    return doc[index]


def _frame(
    path: Path,
    index: int,
    width: int,
    page: SheetPage | None,
    turned: bool,
) -> Image.Image:
    """Frame ``index`` of an image file, flattened as the redaction flattened it, in L or RGB,
    scaled to the picture's size before it is turned (``width`` fitted to ``MAX_PICTURE_PX``).
    Reduced early: JPEG's own scaling where it covers the picture, then a whole-factor box
    average down to at least the picture's size, before any conversion copies it."""
    if index < 0:
        raise BadRequest(f"no page {index + 1} in this image")
    # the lock is let go after the file, and with it the decode, is closed
    with ExitStack() as stack, images.open_image(path) as image:
        try:
            with warnings.catch_warnings():  # a damaged tag: read on, as the redaction did
                warnings.simplefilter("ignore")
                try:
                    image.seek(index)
                except EOFError:
                    raise BadRequest(f"no page {index + 1} in this image") from None
                upright_px = _turn_size(image.size, turned)
                width = _fit(width, lambda w: _area(_upright(w, page, upright_px)))
                before = _turn_size(_upright(width, page, upright_px), turned)
                image.draft(None, before)  # JPEG: decode at 1/2, 1/4 or 1/8 where that covers
                PixelBudget(Limits()).take(*image.size, f"page {index + 1}")
                if _area(image.size) > MAX_PICTURE_PX:
                    stack.enter_context(_BIG_DECODE)
                    stack.callback(_trim)  # the decode handed back before the next may start
                image.load()
                frame: Image.Image = image
                if frame.mode not in _REDUCIBLE:  # bilevel, palette, 16-bit: to L or RGB first
                    frame = _plain(frame)
                factor = min(frame.width // before[0], frame.height // before[1])
                if factor >= 2:  # a box average down to at least the picture's size
                    frame = frame.reduce(factor)
                frame = _plain(frame)
                if frame is image and frame.size == before:
                    frame = frame.copy()  # the decode itself, kept past the file's closing
                return _scaled(frame, before, f"page {index + 1}")
        except images.IMAGE_ERRORS:
            raise Corrupt("the image data is damaged or truncated") from None


def _scaled(image: Image.Image, size: tuple[int, int], what: str) -> Image.Image:
    """``image`` at ``size`` (a new bitmap, counted) unless it is that size already."""
    if image.size == size:
        return image
    _count(size, f"{what} scaled")
    return image.resize(size, Image.Resampling.LANCZOS)


def _plain(frame: Image.Image) -> Image.Image:
    """``frame`` flattened as the redaction flattens it, in L or RGB."""
    flat = images.flatten(frame)
    if flat.mode not in ("L", "RGB"):
        flat = flat.convert("L" if flat.mode == "1" else "RGB")
    return flat


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, "PNG", compress_level=6)
    return out.getvalue()
