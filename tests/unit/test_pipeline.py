"""The whole pipeline with a fake OCR engine: what a user would see in the output PDF."""

from __future__ import annotations

import io
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pikepdf
import pypdfium2
import pytest
from PIL import Image

from pressroom.errors import (
    BadMime,
    Corrupt,
    Encrypted,
    PageLimit,
    PermanentError,
    PixelLimit,
    TooLarge,
    UnreadableScan,
)
from pressroom.pipeline.core import JobOptions
from pressroom.pipeline.geometry import band_scale
from pressroom.pipeline.plain import process_document
from pressroom.settings import Limits
from pressroom.synth import distort, image_pdf, save_jpeg, save_png, save_tiff, text_pdf
from pressroom.templates import resolve_template
from pressroom.testing import FakeOcrEngine
from tests.helpers import delivered, hostile_pdf, output_text, small_scan

LINES = ("Waiver signed by the participant", "Payout approved 2026")


def run(
    src: Path,
    tmp: Path,
    template: str = "plain",
    engine: FakeOcrEngine | None = None,
    limits: Limits | None = None,
    title: str | None = None,
):
    out = tmp / "out.pdf"
    options = JobOptions(
        template=resolve_template(template), title=title, limits=limits or Limits()
    )
    result = process_document(src, out, options, engine or FakeOcrEngine(lines=LINES))
    return out, result


def render(path: Path, index: int, scale: float = 1.0) -> np.ndarray:
    doc = pypdfium2.PdfDocument(str(path))
    try:
        return np.asarray(doc[index].render(scale=scale, grayscale=True).to_pil().convert("L"))
    finally:
        doc.close()


def test_png_scan_gets_a_text_layer_and_keeps_its_size(tmp_path: Path) -> None:
    scan = small_scan(dpi=200)
    src = save_png(scan.image, tmp_path / "scan.png", 200)
    out, result = run(src, tmp_path)
    assert result.pages == 1 and result.ocr_pages == 1
    with pikepdf.open(out) as pdf:
        box = [float(v) for v in pdf.pages[0].mediabox]
    assert box[2] == pytest.approx(scan.image.width * 72 / 200, abs=0.01)
    assert box[3] == pytest.approx(scan.image.height * 72 / 200, abs=0.01)
    text = output_text(out)
    assert "Waiver signed by the participant" in text
    assert "Payout approved 2026" in text


def test_png_pixels_are_embedded_unchanged(tmp_path: Path) -> None:
    scan = small_scan(dpi=200)
    src = save_png(scan.image, tmp_path / "scan.png", 200)
    out, _ = run(src, tmp_path)
    with pikepdf.open(out) as pdf:
        images = [
            pikepdf.PdfImage(obj)
            for obj in pdf.objects
            if isinstance(obj, pikepdf.Stream) and obj.get("/Subtype") == "/Image"
        ]
        assert len(images) == 1
        assert np.array_equal(
            np.asarray(images[0].as_pil_image().convert("L")), np.asarray(scan.image)
        )


def test_jpeg_bytes_are_embedded_as_they_were(tmp_path: Path) -> None:
    src = save_jpeg(small_scan(dpi=150).image, tmp_path / "photo.jpg", 150)
    out, _ = run(src, tmp_path)
    original = src.read_bytes()
    with pikepdf.open(out) as pdf:
        dct = [
            o
            for o in pdf.objects
            if isinstance(o, pikepdf.Stream) and o.get("/Filter") == "/DCTDecode"
        ]
        assert len(dct) == 1
        assert dct[0].read_raw_bytes() == original


def test_pdf_scan_page_content_is_referenced_not_recompressed(tmp_path: Path) -> None:
    src = image_pdf([small_scan(dpi=150).image], tmp_path / "scan.pdf", 150)
    with pikepdf.open(src) as pdf:
        (source_image,) = [
            o.read_raw_bytes()
            for o in pdf.objects
            if isinstance(o, pikepdf.Stream) and o.get("/Subtype") == "/Image"
        ]
    out, _ = run(src, tmp_path)
    with pikepdf.open(out) as pdf:
        raws = [
            o.read_raw_bytes()
            for o in pdf.objects
            if isinstance(o, pikepdf.Stream) and o.get("/Subtype") == "/Image"
        ]
    assert raws == [source_image]


def test_multi_page_tiff_becomes_one_pdf(tmp_path: Path) -> None:
    pages = [small_scan(seed=i, dpi=150).image for i in range(3)]
    src = save_tiff(pages, tmp_path / "fax.tif", 150)
    out, result = run(src, tmp_path)
    assert result.pages == 3
    with pikepdf.open(out) as pdf:
        assert len(pdf.pages) == 3


def test_turned_scan_is_shown_upright(tmp_path: Path) -> None:
    from pressroom.testing import draw_marker

    page = draw_marker(small_scan(dpi=100).image)
    src = save_png(distort(page, rotate=90), tmp_path / "sideways.png", 100)
    engine = FakeOcrEngine(lines=LINES, require_marker=True, orientation=(270, 9.0))
    out, result = run(src, tmp_path, engine=engine)
    assert result.rotations == (270,)
    with pikepdf.open(out) as pdf:
        box = [float(v) for v in pdf.pages[0].mediabox]
    # upright again: the page is as wide as the original, not the sideways scan
    assert box[2] == pytest.approx(page.width * 72 / 100, abs=0.01)
    shown = render(out, 0, scale=100 / 72)
    assert shown.shape == pytest.approx((page.height, page.width), abs=1)
    # the marker is back in the top-left corner
    assert shown[: page.height // 10, : page.width // 10].mean() < 60


def test_sample_brand_adds_cover_and_bands_inside_the_page_at_its_own_size(
    tmp_path: Path,
) -> None:
    src = image_pdf([small_scan(dpi=150).image], tmp_path / "scan.pdf", 150)
    out, result = run(src, tmp_path, template="sample", title="Quarterly payout forms")
    template = resolve_template("sample")
    assert result.output_pages == 2
    with pikepdf.open(out) as pdf:
        src_pdf = pikepdf.open(src)
        sw, sh = (float(v) for v in src_pdf.pages[0].mediabox[2:])
        src_pdf.close()
        w, h = (float(v) for v in pdf.pages[1].mediabox[2:])
        assert pdf.docinfo.Title == "Quarterly payout forms"
    # the page prints at its size: the bands fit inside it, never enlarging it
    assert (w, h) == pytest.approx((sw, sh), abs=0.01)
    cover = output_text(out, 0)
    assert "Harbour Lane Services" in cover and "Quarterly payout forms" in cover
    assert "1 page" in cover and "1 pages" not in cover
    page = output_text(out, 1)
    assert "Page 1 of 1" in page and "Harbour Lane Services" in page
    # the content region renders as the source page did, scaled into the room between the
    # bands (which are scaled to the page: band_scale) and centred
    k = band_scale(sw, sh)
    top, bottom = template.header.height * k, template.footer.height * k
    scale = (sh - top - bottom) / sh
    src_px = render(src, 0, scale=1.0)
    out_px = render(out, 1, scale=1.0 / scale)
    x0, y0 = round(sw * (1 - scale) / 2 / scale), round(top / scale)
    h_px, w_px = src_px.shape[0] - 4, src_px.shape[1] - 4
    # (the outermost pixels blend with the band edge; the offset is a fraction of a pixel)
    diffs = [
        np.abs(
            out_px[y0 + 2 + dy : y0 + 2 + dy + h_px, x0 + 2 + dx : x0 + 2 + dx + w_px].astype(int)
            - src_px[2:-2, 2:-2].astype(int)
        ).mean()
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
    ]
    # resampled a second time, sharp text differs a little at its edges; a pixel off, much more
    assert diffs[4] == min(diffs) and diffs[4] < 6.0
    assert out_px[: max(1, round(top / scale) - 2)].mean() < 200  # the header band is drawn


def test_born_digital_page_is_kept_and_not_ocrd(tmp_path: Path) -> None:
    src = text_pdf([["A born digital letter with plenty of real text on it."]], tmp_path / "l.pdf")
    engine = FakeOcrEngine(lines=LINES)
    out, result = run(src, tmp_path, engine=engine)
    assert result.kept_pages == 1 and result.ocr_pages == 0
    assert engine.calls == []
    assert "born digital letter" in output_text(out)


def test_rotated_born_digital_page_keeps_its_displayed_orientation(tmp_path: Path) -> None:
    src = text_pdf(
        [["A page with /Rotate 90 and enough words to count as text."]],
        tmp_path / "r.pdf",
        rotate=90,
    )
    out, _ = run(src, tmp_path)
    with pikepdf.open(out) as pdf:
        w, h = (float(v) for v in pdf.pages[0].mediabox[2:])
        assert pdf.pages[0].obj.get("/Rotate", 0) == 0
    assert (w, h) == pytest.approx((792, 612))
    assert "enough words" in output_text(out)


def test_nothing_but_pressroom_metadata_and_content_survives(tmp_path: Path) -> None:
    # (issue 43: a plain job keeps the source's title and author, and outlines with items;
    # scripts, attachments, notes and empty outlines still go)
    src = hostile_pdf(tmp_path / "hostile.pdf", secret="Jane Q Example")
    out, _ = run(src, tmp_path)
    with pikepdf.open(out) as pdf:
        for key in ("/OpenAction", "/Names", "/Outlines", "/AcroForm", "/AA"):
            assert key not in pdf.Root
        assert "/Annots" not in pdf.pages[0].obj
        assert str(pdf.docinfo.Title) == "Jane Q Example"  # the source's own
        assert str(pdf.docinfo.Producer).startswith("Pressroom")
        blobs = [bytes(o.read_bytes()) for o in pdf.objects if isinstance(o, pikepdf.Stream)]
    everything = out.read_bytes() + b"".join(blobs)
    assert b"secret.txt" not in everything
    assert b"EmbeddedFile" not in everything
    assert b"app.alert" not in everything


# --- refusals: each with its stable code, and nothing written -------------------------------


def _bomb_png(path: Path, side: int = 30000) -> Path:
    """A tiny file that claims a huge 1-bit image (the pixels would take gigabytes decoded)."""
    import zlib

    row = b"\x00" + b"\x00" * (side // 8)
    compressor = zlib.compressobj(9)
    data = b"".join(compressor.compress(row) for _ in range(side)) + compressor.flush()

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0))
    path.write_bytes(png + chunk(b"IDAT", data) + chunk(b"IEND", b""))
    return path


def _encrypted(path: Path) -> Path:
    src = text_pdf([["secret"]], path.with_suffix(".plain.pdf"))
    with pikepdf.open(src) as pdf:
        pdf.save(path, encryption=pikepdf.Encryption(user="u", owner="o"))
    return path


def _many_pages(path: Path) -> Path:
    return text_pdf([["page"]] * 5, path)


def _truncated_pdf(path: Path) -> Path:
    full = image_pdf([small_scan(dpi=100).image], path.with_suffix(".full.pdf"), 100, jpeg=False)
    path.write_bytes(full.read_bytes()[:300])
    return path


def _truncated_png(path: Path) -> Path:
    buf = io.BytesIO()
    small_scan(dpi=100).image.save(buf, format="PNG")
    path.write_bytes(buf.getvalue()[: len(buf.getvalue()) // 3])
    return path


CASES = [
    ("BAD_MIME", BadMime, lambda p: (p.write_bytes(b"<html>not a pdf</html>"), p)[1], None),
    ("BAD_MIME", BadMime, lambda p: (p.write_bytes(b""), p)[1], None),
    (
        "TOO_LARGE",
        TooLarge,
        lambda p: save_png(small_scan(dpi=100).image, p, 100),
        Limits(max_bytes=1000),
    ),
    ("PAGE_LIMIT", PageLimit, _many_pages, Limits(max_pages=3)),
    ("PIXEL_LIMIT", PixelLimit, _bomb_png, None),
    ("ENCRYPTED", Encrypted, _encrypted, None),
    ("CORRUPT", Corrupt, _truncated_pdf, None),
    ("CORRUPT", Corrupt, _truncated_png, None),
]


@pytest.mark.parametrize(
    ("code", "cls", "make", "limits"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_refusals_carry_stable_codes_and_write_nothing(
    tmp_path: Path, code: str, cls: type[PermanentError], make, limits: Limits | None
) -> None:
    src = make(tmp_path / "input.pdf")  # the name always says .pdf: content decides
    out = tmp_path / "out.pdf"
    with pytest.raises(cls) as info:
        delivered(
            process_document(
                src,
                out,
                JobOptions(template=resolve_template(None), limits=limits or Limits()),
                FakeOcrEngine(),
            )
        )
    assert info.value.code == code
    assert isinstance(info.value, PermanentError) and info.value.exit_code == 2
    assert not out.exists()


def test_blank_scan_is_unreadable(tmp_path: Path) -> None:
    src = save_png(Image.new("L", (600, 800), 255), tmp_path / "blank.png", 100)
    out = tmp_path / "out.pdf"
    with pytest.raises(UnreadableScan):
        delivered(
            process_document(
                src, out, JobOptions(template=resolve_template(None)), FakeOcrEngine(lines=())
            )
        )
    assert not out.exists()


def test_plain_scan_page_is_read_from_its_own_pixels(tmp_path: Path) -> None:
    """A scanner's page (one image, nothing else) reaches OCR as the image's exact pixels."""
    seen: list[Image.Image] = []

    class Spy(FakeOcrEngine):
        def recognize(self, image: Image.Image, *, dpi: float, **kwargs: Any):  # type: ignore[override]
            seen.append(image.copy())
            return super().recognize(image, dpi=dpi, **kwargs)

    scan = small_scan(dpi=200)
    src = image_pdf([scan.image], tmp_path / "scan.pdf", 200, jpeg=False)
    run(src, tmp_path, engine=Spy(lines=LINES))
    assert seen and np.array_equal(np.asarray(seen[0]), np.asarray(scan.image))


def _with_extra_content(src: Path, dest: Path, extra: bytes) -> Path:
    with pikepdf.open(src) as pdf:
        page = pdf.pages[0]
        page.contents_add(pdf.make_stream(extra), prepend=False)
        pdf.save(dest)
    return dest


def test_only_a_lone_upright_page_covering_image_counts_as_a_plain_scan(tmp_path: Path) -> None:
    from pressroom.engines import pdfium

    scan = image_pdf([small_scan(dpi=100).image], tmp_path / "scan.pdf", 100)
    _with_extra_content(scan, tmp_path / "stamped.pdf", b"0 0 1 rg 10 10 50 50 re f")
    with pikepdf.open(scan) as pdf:  # the same image drawn upside down
        pdf.pages[0].Contents = pdf.make_stream(b"q -612 0 0 -187.2 612 187.2 cm /Im0 Do Q")
        pdf.save(tmp_path / "flipped.pdf")
    expected = {"scan.pdf": True, "stamped.pdf": False, "flipped.pdf": False}
    for name, plain in expected.items():
        with pdfium.open_pdf(tmp_path / name) as doc:
            assert pdfium.page_facts(doc, 0).plain_scan is plain, name


def test_long_image_documents_are_written_in_parts_and_joined_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pressroom.pipeline.plain as plain

    monkeypatch.setattr(plain, "PART_PAGES", 2)
    pages = [small_scan(seed=i, dpi=60, lines=2).image for i in range(5)]
    src = save_tiff(pages, tmp_path / "long.tif", 60)
    out, result = run(src, tmp_path, template="sample")
    assert result.output_pages == 6
    assert "Harbour Lane Services" in output_text(out, 0)  # the cover comes first
    for n in range(1, 6):
        assert f"Page {n} of 5" in output_text(out, n)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.tif", "out.pdf"]


@pytest.mark.parametrize("mode", ["I;16", "P", "LA", "CMYK-JPEG"])
def test_odd_image_modes_are_levelled_as_a_viewer_shows_them(tmp_path: Path, mode: str) -> None:
    scan = distort(small_scan(dpi=150, lines=5).image, skew=2.0)
    if mode == "I;16":
        image = Image.fromarray(np.asarray(scan).astype(np.uint16) * 257)  # 16-bit grey
        src = tmp_path / "scan.png"
        image.save(src, dpi=(150, 150))
    elif mode == "CMYK-JPEG":
        src = tmp_path / "scan.jpg"
        scan.convert("CMYK").save(src, format="JPEG", dpi=(150, 150))
    else:
        src = tmp_path / "scan.png"
        (scan.convert("P") if mode == "P" else scan.convert("LA")).save(src, dpi=(150, 150))
    out, result = run(src, tmp_path)
    assert result.levelled_pages == 1
    with Image.open(src) as raw:
        shown = np.asarray(raw.convert("RGB").convert("L") if mode != "I;16" else scan)
    levelled = render(out, 0, scale=150 / 72)
    # the same ink, turned: as much dark as the source shows (a clipped 16-bit grey lost it)
    assert abs((levelled < 128).mean() - (shown < 128).mean()) < 0.25 * (shown < 128).mean()
    with pikepdf.open(out) as pdf:
        (raw_image,) = pdf.pages[0].get_images().values()
        if mode in ("P", "LA", "I;16"):
            assert raw_image.ColorSpace == pikepdf.Name.DeviceGray  # grey stays grey


def test_a_margin_with_light_ink_is_not_blank() -> None:
    """Bands go over a margin only where it shows nothing: pale print or a hairline counts."""
    from PIL import ImageDraw

    from pressroom.pipeline.core import blank_margins

    for fill, blank in ((None, True), (170, False), (215, False)):
        page = Image.new("L", (1275, 1650), 242)  # 150 dpi letter, off-white paper
        if fill is not None:
            ImageDraw.Draw(page).rectangle((200, 1610, 600, 1620), fill=fill)  # bottom margin
        assert blank_margins(page, 0, 150.0)(40.0, 24.0) is blank, fill
