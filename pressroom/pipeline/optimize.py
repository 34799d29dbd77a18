"""``--optimize``: smaller outputs, losslessly. Level 1 recompresses every Flate stream at
zlib's best level (9) when the output is written (a predicted one with its predictor and
without, the smaller kept), and keeps a stream as it came wherever neither is smaller, so no
stream grows (a source's PNG-predicted palette image once grew written again without its
predictor); level 2 also stores each 8-bit grey or RGB image kept in Flate with the PNG
"up" predictor (each row as its difference from the row above: a scan's rows are alike),
where that is smaller. Pixels, text and layout are the same
bytes for bytes once decoded; only the time to write grows (bench/size_bench.py measures both).
Palette quantisation (pngquant) is not done: it is lossy, and not installed here."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pikepdf
from pikepdf import Array, Dictionary, Name

LEVELS = (0, 1, 2)

# filters meant for any data (not an image codec): undone and replaced by Flate at its best
GENERAL = frozenset({Name.FlateDecode, Name.LZWDecode, Name.ASCII85Decode, Name.ASCIIHexDecode})


def _filters(obj: pikepdf.Stream) -> list[Name] | None:
    """A stream's filters in order ([] for none), or None where they are not plain names."""
    found = obj.get("/Filter")
    if found is None:
        return []
    if isinstance(found, Name):
        return [found]
    if isinstance(found, Array):
        names = [f for f in found if isinstance(f, Name)]
        return names if len(names) == len(found) else None
    return None


def recompress(pdf: pikepdf.Pdf) -> int:
    """Flate streams (and those in other general-purpose filters) compressed again at level 9,
    each only where that is smaller than the stream as it is, so none grows. A Flate stream
    with a predictor (``/DecodeParms``) is tried both ways, its predicted rows recompressed
    and its decoded data without the predictor: the smaller is kept, or the stream as it came
    when neither is smaller. Returns how many streams were rewritten. Saved after this with
    ``stream_decode_level=none``: qpdf's own recompression would drop every predictor, even
    where that makes an image larger (a source's PNG-predicted palette image grew)."""
    done = 0
    for obj in pdf.objects:
        if not isinstance(obj, pikepdf.Stream):
            continue
        filters = _filters(obj)
        if not filters or not set(filters) <= GENERAL:
            continue  # none (qpdf compresses it at the best level) or an image codec: as it is
        raw = obj.read_raw_bytes()
        parms = obj.get("/DecodeParms")
        if isinstance(parms, Array) and len(parms) == 1:
            parms = parms[0]  # one filter's parameters, in an array of one
        predictor = parms if isinstance(parms, Dictionary) else None
        try:
            decoded = zlib.compress(obj.read_bytes(), 9)
            predicted = (
                zlib.compress(zlib.decompress(raw), 9)
                if predictor is not None and filters == [Name.FlateDecode]
                else None
            )
        except (zlib.error, pikepdf.PdfError):
            continue  # a stream that does not decode is left exactly as it came
        if predicted is not None and len(predicted) < min(len(decoded), len(raw)):
            obj.write(predicted, filter=Name.FlateDecode, decode_parms=predictor)
        elif len(decoded) < len(raw):
            obj.write(decoded, filter=Name.FlateDecode)
        else:
            continue
        done += 1
    return done


@contextmanager
def best_flate(level: int) -> Iterator[None]:
    """qpdf's Flate level for the length of a save (a setting of the whole process)."""
    if level < 1:
        yield
        return
    pikepdf.settings.set_flate_compression_level(9)
    try:
        yield
    finally:
        pikepdf.settings.set_flate_compression_level(-1)


def predict_images(pdf: pikepdf.Pdf) -> int:
    """Flate images of 8-bit grey or RGB stored with the PNG up predictor where that is
    smaller; returns how many were."""
    done = 0
    for obj in pdf.objects:
        if not isinstance(obj, pikepdf.Stream) or obj.get("/Subtype") != Name.Image:
            continue
        if obj.get("/Filter") != Name.FlateDecode or "/DecodeParms" in obj:
            continue
        space = obj.get("/ColorSpace")
        colours = (
            {Name.DeviceGray: 1, Name.DeviceRGB: 3}.get(space) if isinstance(space, Name) else None
        )
        if colours is None or obj.get("/BitsPerComponent") != 8 or "/SMask" in obj:
            continue
        width, height = int(obj.get("/Width", 0)), int(obj.get("/Height", 0))
        raw = obj.read_bytes()
        if width <= 0 or height <= 0 or len(raw) != width * height * colours:
            continue
        rows = np.frombuffer(raw, dtype=np.uint8).reshape(height, width * colours)
        up = np.empty((height, width * colours + 1), dtype=np.uint8)
        up[:, 0] = 2  # PNG filter type 2: up
        up[0, 1:] = rows[0]
        up[1:, 1:] = rows[1:] - rows[:-1]  # uint8 arithmetic wraps: modulo 256, as PNG's
        packed = zlib.compress(up.tobytes(), 9)
        if len(packed) >= len(obj.read_raw_bytes()):
            continue
        obj.write(
            packed,
            filter=Name.FlateDecode,
            decode_parms=Dictionary(
                Predictor=12, Colors=colours, BitsPerComponent=8, Columns=width
            ),
        )
        done += 1
    return done
