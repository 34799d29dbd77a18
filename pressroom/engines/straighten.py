"""Level a skewed scan: its pixels turned once, then encoded the way the source was.

Readers group a text layer's glyphs into lines by baseline; a scan whose lines climb makes them
interleave neighbouring lines (poppler, Ghostscript) or split words (PDFBox). Levelling the
pixels puts the text on horizontal baselines over the ink, as OCRmyPDF and Paperless-ngx do.
"""

from __future__ import annotations

import io
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import cv2
import numpy as np
import pikepdf
from pikepdf import Dictionary, Name
from PIL import Image, TiffImagePlugin

# Skews below this are left alone: 0.3° moves a 7-inch line by 11 px at 300 dpi, a quarter of
# a line of 10 pt print, and the text layer is laid level on each line's mean baseline anyway.
STRAIGHTEN_MIN = 0.3

# One worker process per core: OpenCV's own threads would only compete with the other workers.
cv2.setNumThreads(1)


def level(image: Image.Image, skew: float) -> Image.Image:
    """``image`` turned clockwise by ``skew`` degrees about its centre, same size, white corners.

    Bilinear, as Leptonica's area-map rotation that OCRmyPDF's deskew uses; OpenCV does it in
    ~50 ms for a 300 dpi letter page where Pillow takes ~140 ms (bilinear) or ~280 ms (bicubic).
    A bilevel image is turned in grey and thresholded again, so its edges stay smooth.
    """
    if not skew:
        return image
    mode = image.mode
    work = image.convert("L") if mode == "1" else image
    if work.mode not in ("L", "RGB"):
        work = work.convert("RGB")
    a = np.asarray(work)
    h, w = a.shape[:2]
    # OpenCV's angle is counter-clockwise in y-down pixels; a scan's text climbs by ``skew``
    # counter-clockwise, so turning by -skew levels it.
    m = cv2.getRotationMatrix2D((w / 2.0 - 0.5, h / 2.0 - 0.5), -skew, 1.0)
    white = 255 if a.ndim == 2 else (255, 255, 255)
    out = cv2.warpAffine(
        a, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=white
    )
    turned = Image.fromarray(out, mode=work.mode)
    if mode == "1":
        return turned.point(lambda v: 255 if v >= 128 else 0).convert("1", dither=None)
    return turned


@dataclass(frozen=True, slots=True)
class Encoding:
    """How a scan's pixels were stored, so a levelled copy is stored the same way."""

    kind: Literal["jpeg", "bilevel", "lossless"]
    qtables: dict[int, list[int]] | None = None  # the source's own JPEG quantisation tables
    subsampling: int = -1  # Pillow's code for the source's chroma subsampling
    quality: int = 90  # where the tables themselves cannot be had (JPEG inside a TIFF)

    @classmethod
    def of_jpeg(cls, data: bytes) -> Encoding:
        """The encoding of JPEG bytes: the same tables give the same quality, and no more."""
        from PIL import JpegImagePlugin

        try:
            with Image.open(io.BytesIO(data)) as jpeg:
                tables = {k: list(v) for k, v in getattr(jpeg, "quantization", {}).items()}
                sampling = JpegImagePlugin.get_sampling(jpeg) if jpeg.mode == "RGB" else -1
        except (OSError, ValueError, SyntaxError):
            return cls("lossless")
        return cls("jpeg", tables or None, sampling)


# The IJG standard luminance table (zigzag order), against which a table's quality is judged.
_STD_LUMA = (
    16, 11, 12, 14, 12, 10, 16, 14, 13, 14, 18, 17, 16, 19, 24, 40, 26, 24, 22, 22, 24, 49, 35,
    37, 29, 40, 58, 51, 61, 60, 57, 51, 56, 55, 64, 72, 92, 78, 64, 68, 87, 69, 55, 56, 80, 109,
    81, 87, 95, 98, 103, 104, 103, 62, 77, 113, 121, 112, 100, 120, 92, 101, 103, 99,
)  # fmt: skip


def table_quality(values: Sequence[int]) -> int:
    """About the IJG quality a 64-value luminance table was scaled to (in any order: the sums
    are compared, not each value)."""
    scale = 100.0 * sum(values) / sum(_STD_LUMA)
    quality = (200 - scale) / 2 if scale <= 100 else 5000 / scale
    return max(1, min(100, round(quality)))


def jpeg_quality(tables: bytes) -> int | None:
    """The IJG quality a JPEG stream's (or a TIFF's JPEGTables') luminance table was made
    with, as libjpeg's cjpeg scales it; None when there is no 8-bit table 0."""
    i = 0
    while True:
        i = tables.find(b"\xff\xdb", i)
        if i < 0 or i + 4 > len(tables):
            return None
        length = int.from_bytes(tables[i + 2 : i + 4], "big")
        j, end = i + 4, i + 2 + length
        while j < end and j + 65 <= len(tables):
            precision, table = tables[j] >> 4, tables[j] & 15
            if precision == 0 and table == 0:
                values = tables[j + 1 : j + 65]
                scale = 100.0 * sum(v / s for v, s in zip(values, _STD_LUMA, strict=True)) / 64
                quality = (200 - scale) / 2 if scale <= 100 else 5000 / scale
                return max(1, min(100, round(quality)))
            j += 1 + (128 if precision else 64)
        i = end


def image_stream(pdf: pikepdf.Pdf, image: Image.Image, encoding: Encoding) -> pikepdf.Stream:
    """A levelled page image as a PDF image XObject, encoded like its source."""
    if encoding.kind == "bilevel":
        bilevel = (
            image
            if image.mode == "1"
            else image.convert("L")
            .point(lambda v: 255 if v >= 128 else 0)
            .convert("1", dither=None)
        )
        stream = pdf.make_stream(_group4(bilevel))
        stream.Filter = Name.CCITTFaxDecode
        stream.DecodeParms = Dictionary(
            K=-1, Columns=bilevel.width, Rows=bilevel.height, BlackIs1=True
        )
        return _finish(stream, bilevel, Name.DeviceGray, 1)
    picture = image if image.mode in ("L", "RGB") else image.convert("RGB")
    space = Name.DeviceGray if picture.mode == "L" else Name.DeviceRGB
    if encoding.kind == "jpeg":
        buf = io.BytesIO()
        options: dict[str, object] = {"optimize": False}
        if encoding.qtables:
            options["qtables"] = encoding.qtables
            if picture.mode == "RGB" and encoding.subsampling >= 0:
                options["subsampling"] = encoding.subsampling
        else:
            options["quality"] = encoding.quality
        picture.save(buf, format="JPEG", **options)
        stream = pdf.make_stream(buf.getvalue())
        stream.Filter = Name.DCTDecode
        return _finish(stream, picture, space, 8)
    # lossless, at zlib's fastest level: on a noisy grey scan PNG's row predictors at level 6
    # save 10-15 % more bytes for 5-8 times the time (measured: 786 ms against 93 ms a page)
    stream = pdf.make_stream(zlib.compress(picture.tobytes(), 1))
    stream.Filter = Name.FlateDecode
    return _finish(stream, picture, space, 8)


def _group4(image: Image.Image) -> bytes:
    """CCITT group 4 data of a bilevel image (libtiff writes it; one strip is the whole page)."""
    buf = io.BytesIO()
    # a fresh image of the same pixels: a TIFF frame's own tags (and info) would be written
    # with it, and a damaged one fails libtiff ("Error setting from dictionary")
    bare = Image.frombytes("1", image.size, image.tobytes())
    bare.save(buf, format="TIFF", compression="group4", tiffinfo={278: image.height})
    with Image.open(io.BytesIO(buf.getvalue())) as tiff:
        assert isinstance(tiff, TiffImagePlugin.TiffImageFile)
        offsets = tiff.tag_v2[273]
        counts = tiff.tag_v2[279]
    data = buf.getvalue()
    return b"".join(data[o : o + n] for o, n in zip(offsets, counts, strict=True))


def _finish(stream: pikepdf.Stream, image: Image.Image, space: Name, bpc: int) -> pikepdf.Stream:
    stream.Type = Name.XObject
    stream.Subtype = Name.Image
    stream.Width, stream.Height = image.size
    stream.ColorSpace = space
    stream.BitsPerComponent = bpc
    return stream
