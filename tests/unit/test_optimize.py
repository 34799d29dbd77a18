"""``--optimize`` never makes a stream larger: a source's palette image stored with the PNG
predictor (as img2pdf and most PNG-to-PDF tools store it) keeps its predictor and its bytes
where recompressing without it would grow (the review's ``palette.pdf`` grew under
``--optimize 1``), while a stream that recompresses smaller still shrinks."""

from __future__ import annotations

import io
import random
import zlib
from pathlib import Path

import pikepdf
from PIL import Image, ImageDraw

from pressroom.pipeline.optimize import recompress


def palette_png_pdf(path: Path) -> Path:
    """One page of a four-colour palette image, its PNG's own IDAT data in the PDF with
    ``/Predictor 15``, as a PNG is embedded without decoding it."""
    image = Image.new("RGB", (900, 600), "white")
    draw = ImageDraw.Draw(image)
    for y in range(40, 560, 24):
        draw.line([(60, y), (60 + (y * 7) % 760, y)], fill=(20, 20, 20), width=3)
    draw.rectangle([600, 60, 840, 200], fill=(200, 30, 30))
    draw.ellipse([80, 380, 300, 560], fill=(30, 60, 200))
    palette = image.quantize(colors=4)
    buf = io.BytesIO()
    palette.save(buf, format="PNG", optimize=True)
    data, pos, idat = buf.getvalue(), 8, b""
    while pos < len(data):
        size = int.from_bytes(data[pos : pos + 4], "big")
        if data[pos + 4 : pos + 8] == b"IDAT":
            idat += data[pos + 8 : pos + 8 + size]
        pos += 12 + size
    colours = bytes((palette.getpalette() or [])[: 3 * 4])
    pdf = pikepdf.Pdf.new()
    stream = pdf.make_stream(
        idat,
        Type=pikepdf.Name.XObject,
        Subtype=pikepdf.Name.Image,
        Width=palette.width,
        Height=palette.height,
        ColorSpace=pikepdf.Array(
            [pikepdf.Name.Indexed, pikepdf.Name.DeviceRGB, 3, pikepdf.String(colours)]
        ),
        BitsPerComponent=8,
        Filter=pikepdf.Name.FlateDecode,
        DecodeParms=pikepdf.Dictionary(
            Predictor=15, Colors=1, BitsPerComponent=8, Columns=palette.width
        ),
    )
    pdf.pages.append(
        pikepdf.Page(
            pikepdf.Dictionary(
                Type=pikepdf.Name.Page,
                MediaBox=pikepdf.Array([0, 0, 216, 144]),
                Resources=pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=stream)),
                Contents=pdf.make_stream(b"q 216 0 0 144 0 0 cm /Im0 Do Q"),
            )
        )
    )
    pdf.save(path, stream_decode_level=pikepdf.StreamDecodeLevel.none)
    return path


def image_of(pdf: pikepdf.Pdf) -> pikepdf.Stream:
    (image,) = pdf.pages[0].get_images().values()
    return image


def test_a_predicted_palette_image_is_never_made_larger(tmp_path: Path) -> None:
    with pikepdf.open(palette_png_pdf(tmp_path / "palette.pdf")) as pdf:
        before = image_of(pdf)
        raw, pixels = before.read_raw_bytes(), before.read_bytes()
        # the case itself: the pixels recompressed without the predictor are larger
        assert len(zlib.compress(pixels, 9)) > len(raw)
        recompress(pdf)
        after = image_of(pdf)
        assert len(after.read_raw_bytes()) <= len(raw)
        assert after.read_bytes() == pixels
        assert after.DecodeParms.Predictor == 15


def test_a_stream_that_recompresses_smaller_still_shrinks(tmp_path: Path) -> None:
    pick = random.Random(7)
    words = [b"payout", b"section", b"organiser", b"confirms", b"prize", b"paid", b"rating"]
    text = b" ".join(pick.choice(words) for _ in range(20000))
    pdf = pikepdf.Pdf.new()
    weak = pdf.make_stream(zlib.compress(text, 1), Filter=pikepdf.Name.FlateDecode)
    pdf.Root.Weak = weak
    hex_encoded = pdf.make_stream(text.hex().encode(), Filter=pikepdf.Name.ASCIIHexDecode)
    pdf.Root.Hex = hex_encoded
    assert recompress(pdf) == 2
    for stream in (weak, hex_encoded):
        assert stream.Filter == pikepdf.Name.FlateDecode
        assert stream.read_bytes() == text
    assert len(weak.read_raw_bytes()) < len(zlib.compress(text, 1))


def test_a_stream_that_does_not_decode_is_left_as_it_came() -> None:
    pdf = pikepdf.Pdf.new()
    broken = pdf.make_stream(b"not flate at all", Filter=pikepdf.Name.FlateDecode)
    pdf.Root.Broken = broken
    assert recompress(pdf) == 0
    assert broken.read_raw_bytes() == b"not flate at all"
