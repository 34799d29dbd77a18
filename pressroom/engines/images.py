"""Raster inputs through Pillow: limits checked from headers, frames decoded one at a time."""

from __future__ import annotations

import struct
import warnings
import zlib
from collections.abc import Generator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pikepdf
from pikepdf import Array, Dictionary, Name
from PIL import Image, ImageSequence, UnidentifiedImageError

from pressroom.engines import streams
from pressroom.engines.straighten import Encoding, image_stream, jpeg_quality
from pressroom.errors import Corrupt, PageLimit, PixelLimit
from pressroom.models import SourceKind
from pressroom.settings import Limits

# Pillow's bomb guard fires at a size of its own; Pressroom checks its configured limit instead.
Image.MAX_IMAGE_PIXELS = None

DEFAULT_DPI = 300.0
# what Pillow raises for a damaged file: a format's own errors are OSError or SyntaxError (a
# PNG's broken chunk), a header that lacks a size a TypeError ("Missing dimensions"), a short
# read EOFError or struct.error, a damaged deflate stream zlib.error
IMAGE_ERRORS = (
    UnidentifiedImageError,
    OSError,
    SyntaxError,
    ValueError,
    TypeError,
    EOFError,
    struct.error,
    zlib.error,
)


@dataclass(frozen=True, slots=True)
class FrameFacts:
    width_px: int
    height_px: int
    dpi: tuple[float, float]

    @property
    def size_pt(self) -> tuple[float, float]:
        return self.width_px * 72.0 / self.dpi[0], self.height_px * 72.0 / self.dpi[1]


def _dpi(info: Mapping[Any, Any]) -> tuple[float, float]:
    raw = info.get("dpi")
    if isinstance(raw, tuple) and len(raw) == 2:
        try:
            x, y = float(raw[0]), float(raw[1])
        except (TypeError, ValueError):
            return DEFAULT_DPI, DEFAULT_DPI
        # Cameras write 72 and editors 1; neither is a scan resolution worth trusting.
        if 50 <= x <= 2400 and 50 <= y <= 2400 and not (x == 72 and y == 72):
            return x, y
    return DEFAULT_DPI, DEFAULT_DPI


@contextmanager
def open_image(path: Path) -> Iterator[Image.Image]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            image = Image.open(path)
    except IMAGE_ERRORS:
        raise Corrupt("the image cannot be read") from None
    try:
        yield image
    finally:
        image.close()


def inspect_image(path: Path, limits: Limits) -> list[FrameFacts]:
    """Facts of every frame from the headers alone; nothing is decoded here."""
    frames: list[FrameFacts] = []
    with open_image(path) as image:
        try:
            with warnings.catch_warnings():  # counting reads every frame's header
                warnings.simplefilter("ignore")
                count = getattr(image, "n_frames", 1)
        except IMAGE_ERRORS:
            raise Corrupt("the image's frame list cannot be read") from None
        if count > limits.max_pages:
            raise PageLimit(f"{count} pages; the limit is {limits.max_pages}")
        try:
            for i in range(count):
                if i:
                    with warnings.catch_warnings():  # a damaged tag: read as Pillow reads it
                        warnings.simplefilter("ignore")
                        image.seek(i)
                w, h = image.size
                if w <= 0 or h <= 0:
                    raise Corrupt("an image frame has no pixels")
                if w * h > limits.max_pixels:
                    raise PixelLimit(
                        f"page {i + 1} has {w * h:,} pixels; the limit is {limits.max_pixels:,}"
                    )
                frames.append(FrameFacts(w, h, _dpi(image.info)))
        except IMAGE_ERRORS:
            raise Corrupt("the image's frame list cannot be read") from None
    return frames


def iter_frames(path: Path) -> Generator[Image.Image, None, None]:
    """Decoded frames, one at a time: only the current page is ever held in memory."""
    with open_image(path) as image:
        frames = ImageSequence.Iterator(image)
        while True:
            try:
                # Pillow warns of a damaged tag or EXIF block and reads on: so do we
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    frame = next(frames, None)
                    if frame is None:
                        return
                    frame.load()
            except IMAGE_ERRORS:
                raise Corrupt("the image data is damaged or truncated") from None
            yield frame


def _png_passthrough(pdf: pikepdf.Pdf, data: bytes) -> pikepdf.Stream | None:
    """The PNG's own compressed pixels as a PDF image, when PDF can read them unchanged."""
    pos = 8
    ihdr: tuple[int, ...] | None = None
    palette = b""
    idat: list[bytes] = []
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = body
        elif kind == b"tRNS":
            return None  # transparency needs a soft mask: decode instead
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    if ihdr is None or not idat:
        return None
    width, height, depth, colour, _compression, _filter, interlace = ihdr
    if interlace or colour not in (0, 2, 3):
        return None
    if colour == 0:
        space: pikepdf.Object | Name = Name.DeviceGray
        channels = 1
    elif colour == 2:
        space = Name.DeviceRGB
        channels = 3
    else:
        if not palette or len(palette) % 3:
            return None
        space = Array(
            [Name.Indexed, Name.DeviceRGB, len(palette) // 3 - 1, pikepdf.String(palette)]
        )
        channels = 1
    stream = pdf.make_stream(b"".join(idat))
    stream.Type = Name.XObject
    stream.Subtype = Name.Image
    stream.Width = width
    stream.Height = height
    stream.ColorSpace = space
    stream.BitsPerComponent = depth
    stream.Filter = Name.FlateDecode
    stream.DecodeParms = Dictionary(
        Predictor=15, Colors=channels, BitsPerComponent=depth, Columns=width
    )
    return stream


def image_xobject(
    pdf: pikepdf.Pdf, kind: SourceKind, path: Path, frame: Image.Image, single: bool
) -> pikepdf.Stream:
    """The page image for the output, its pixels unchanged (original bytes where PDF allows)."""
    if single and kind is SourceKind.JPEG and frame.mode in ("L", "RGB"):
        stream = pdf.make_stream(path.read_bytes())
        stream.Filter = Name.DCTDecode
        space: Name = Name.DeviceGray if frame.mode == "L" else Name.DeviceRGB
        return _finish(stream, frame.width, frame.height, space, 8)
    if single and kind is SourceKind.PNG:
        passed = _png_passthrough(pdf, path.read_bytes())
        if passed is not None:
            return passed
    image = flatten(frame)
    if image.mode == "1":  # group 4, as fax and document scanners store it: lossless, small
        return image_stream(pdf, image, Encoding("bilevel"))
    space_for = {
        "1": Name.DeviceGray,
        "L": Name.DeviceGray,
        "RGB": Name.DeviceRGB,
        "CMYK": Name.DeviceCMYK,
    }
    # level 1: a scan's noise gains little from harder work (~5 % smaller for 3-5x the time)
    stream = pdf.make_stream(zlib.compress(image.tobytes(), 1))
    stream.Filter = Name.FlateDecode
    return _finish(
        stream, image.width, image.height, space_for[image.mode], 1 if image.mode == "1" else 8
    )


def flatten(frame: Image.Image) -> Image.Image:
    """A frame in a mode PDF stores as it is (1, L, RGB or CMYK); transparency onto white."""
    image = frame
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        flat = Image.new("RGB", rgba.size, (255, 255, 255))
        flat.paste(rgba, mask=rgba.getchannel("A"))
        image = flat
    elif image.mode == "P":
        image = image.convert("RGB")
    elif image.mode in ("I;16", "I;16B", "I;16L", "I"):
        image = image.point(lambda v: v / 256).convert("L")
    elif image.mode not in ("1", "L", "RGB", "CMYK"):
        image = image.convert("RGB")
    return image


def _finish(stream: pikepdf.Stream, w: int, h: int, space: Name, bpc: int) -> pikepdf.Stream:
    stream.Type = Name.XObject
    stream.Subtype = Name.Image
    stream.Width = w
    stream.Height = h
    stream.ColorSpace = space
    stream.BitsPerComponent = bpc
    return stream


def decode_scan_image(page: pikepdf.Page, max_pixels: int) -> tuple[Image.Image, Encoding] | None:
    """The pixels of a plain scan page's one image (mode 1, L or RGB) and how they are stored,
    or None when PDFium must render.

    Only images whose pixels are exactly what a viewer shows: no masks, no /Decode, grey or RGB;
    and only when decoding allocates no more than its size says: qpdf inflates a whole stream
    and Pillow decodes a JPEG at its own size, where PDFium reads an image row by row.
    """
    try:
        xobjects = page.resources.get("/XObject")
        if not isinstance(xobjects, pikepdf.Dictionary):
            return None
        found = [x for x in xobjects.values() if x.get("/Subtype") == "/Image"]
        if len(found) != 1 or len(xobjects) != 1:
            return None
        raw = found[0]
        if not isinstance(raw, pikepdf.Stream) or any(
            k in raw for k in ("/SMask", "/Mask", "/Decode", "/ImageMask")
        ):
            return None
        parms = raw.get("/DecodeParms")
        if isinstance(parms, pikepdf.Dictionary) and "/ColorTransform" in parms:
            return None  # a JPEG whose colour transform the PDF overrides: PDFium renders it
        pdf_image = pikepdf.PdfImage(raw)
        if pdf_image.bits_per_component not in (1, 8) or pdf_image.colorspace not in (
            "/DeviceGray",
            "/DeviceRGB",
        ):
            return None
        w, h = pdf_image.width, pdf_image.height
        if w * h > max_pixels or streams.image_pixels(raw) != w * h:
            return None
        channels = 3 if pdf_image.colorspace == "/DeviceRGB" else 1
        row = (w * channels * pdf_image.bits_per_component + 7) // 8
        if not streams.fits(raw, (row + 1) * h + 4096):  # +1: a PNG predictor's tag byte
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            image = pdf_image.as_pil_image()
        image.load()
        if image.mode not in ("1", "L", "RGB"):
            image = image.convert("RGB")
        filters = [str(f) for f in pdf_image.filters]
        if pdf_image.bits_per_component == 1:
            encoding = Encoding("bilevel")
        elif filters == ["/DCTDecode"]:
            encoding = Encoding.of_jpeg(raw.read_raw_bytes())
        else:
            encoding = Encoding("lossless")
        return image, encoding
    except Exception:  # any doubt at all: PDFium renders the page instead
        return None


def scan_encoding(page: pikepdf.Page) -> Encoding | None:
    """How a PDF page's one page-sized scan image is stored, without decoding it: None when
    the page is more than one image, or its image has masks or a /Decode."""
    try:
        xobjects = page.resources.get("/XObject")
        if not isinstance(xobjects, pikepdf.Dictionary) or len(xobjects) != 1:
            return None
        (raw,) = xobjects.values()
        if not isinstance(raw, pikepdf.Stream) or raw.get("/Subtype") != "/Image":
            return None
        if any(k in raw for k in ("/SMask", "/Mask", "/Decode", "/ImageMask")):
            return None
        filters = raw.get("/Filter")
        names = [str(f) for f in filters] if isinstance(filters, pikepdf.Array) else [str(filters)]
        if raw.get("/BitsPerComponent") == 1:
            return Encoding("bilevel")
        if names == ["/DCTDecode"]:
            return Encoding.of_jpeg(raw.read_raw_bytes())
        return Encoding("lossless")
    except Exception:  # any doubt: stored losslessly
        return None


def frame_encoding(kind: SourceKind, frame: Image.Image) -> Encoding:
    """How an image file's frame is stored: a levelled copy is stored the same way."""
    if frame.mode == "1":
        return Encoding("bilevel")
    tables = getattr(frame, "quantization", None)
    if kind is SourceKind.JPEG and tables:
        sampling = -1
        if frame.mode == "RGB":
            from PIL import JpegImagePlugin

            sampling = JpegImagePlugin.get_sampling(frame)
        return Encoding("jpeg", {k: list(v) for k, v in tables.items()}, sampling)
    if kind is SourceKind.TIFF and frame.info.get("compression") == "jpeg":
        # a JPEG TIFF: the same quality, judged from its own tables
        raw = getattr(frame, "tag_v2", {}).get(347)
        quality = jpeg_quality(bytes(raw)) if isinstance(raw, bytes | bytearray) else None
        return Encoding("jpeg", quality=quality or 90)
    return Encoding("lossless")


def logo_xobject(pdf: pikepdf.Pdf, data: bytes) -> tuple[pikepdf.Stream, float]:
    """A template logo (any Pillow format) as an image with a soft mask; returns it and w/h."""
    import io

    with Image.open(io.BytesIO(data)) as raw:
        rgba = raw.convert("RGBA")
    rgb = pdf.make_stream(zlib.compress(rgba.convert("RGB").tobytes(), 9))
    rgb.Filter = Name.FlateDecode
    alpha = pdf.make_stream(zlib.compress(rgba.getchannel("A").tobytes(), 9))
    alpha.Filter = Name.FlateDecode
    _finish(alpha, rgba.width, rgba.height, Name.DeviceGray, 8)
    _finish(rgb, rgba.width, rgba.height, Name.DeviceRGB, 8)
    rgb.SMask = alpha
    return rgb, rgba.width / rgba.height
