"""A page rebuilt from its pixels costs one rendering, at the resolution it is stored at, and
its checks decide as they did (issue 46: the burn stage of a born-digital page)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
import pikepdf
import pytest
from pikepdf import Dictionary, Name, PdfImage
from PIL import Image, ImageFilter

from pressroom.models import Box
from pressroom.pipeline.inspect import inspect_source
from pressroom.pixels import PixelBudget
from pressroom.redact import build, burn
from pressroom.redact.scan import PageScan
from pressroom.redact.source import RedactionSource
from pressroom.settings import Limits

NAME_BOX = Box(290.0, 300.0, 1300.0, 420.0)  # over the name, in 300 dpi pixels
BLANK_BOX = Box(1500.0, 2800.0, 2000.0, 3000.0)  # over nothing
BAR_BOX = Box(290.0, 700.0, 1160.0, 800.0)  # over the black bar


def drawn_pdf(path: Path, *, colour: bool = False) -> Path:
    """A born-digital letter page: a name in type, a black bar, and (``colour``) a red square."""
    pdf = pikepdf.new()
    page = pdf.add_blank_page(page_size=(612, 792))
    font = pdf.make_indirect(
        Dictionary(Type=Name.Font, Subtype=Name.Type1, BaseFont=Name.Helvetica)
    )
    page.obj.Resources = Dictionary(Font=Dictionary(F1=font))
    content = b"BT /F1 24 Tf 72 700 Td (Margaret Thornbury) Tj ET 0 g 72 600 200 20 re f"
    if colour:
        content += b" 1 0 0 rg 300 300 100 100 re f"
    page.obj.Contents = pdf.make_stream(content)
    pdf.save(path)
    return path


class CountingPage:
    """A PDFium page that notes the scale of each rendering made of it."""

    def __init__(self, page: Any, scales: list[float]) -> None:
        self.page, self.scales = page, scales

    def render(self, **options: Any) -> Any:
        self.scales.append(options["scale"])
        return self.page.render(**options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.page, name)


class CountingDocument:
    def __init__(self, doc: Any) -> None:
        self.doc, self.scales = doc, []

    def __getitem__(self, index: int) -> CountingPage:
        return CountingPage(self.doc[index], self.scales)


@pytest.fixture
def resizes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The sizes of every image resampled while the test runs."""
    sizes: list[tuple[int, int]] = []
    resize = Image.Image.resize

    def counted(self: Image.Image, size: Any, *args: Any, **kwargs: Any) -> Image.Image:
        sizes.append(tuple(size))
        return resize(self, size, *args, **kwargs)

    monkeypatch.setattr(Image.Image, "resize", counted)
    return sizes


def rebuilt(
    path: Path, boxes: list[Box], unseen: Sequence[Box] = ()
) -> Iterator[tuple[Image.Image, list[Box], Any, CountingDocument, PixelBudget, Any]]:
    """The first page of ``path`` rebuilt with ``boxes`` (and ``unseen``) burned, once: what
    is stored, the boxes burned, its text, the renderings made, the pixels taken and the
    placement (yielded while the source is still open)."""
    with ExitStack() as stack:
        info = inspect_source(path, Limits())
        src = RedactionSource(stack, path, info)
        counting = CountingDocument(src.doc)
        src.doc = counting
        scan = PageScan(info.pages[0], 0, src.dpi(0), (2550, 3300), [], [])
        budget = PixelBudget(Limits())
        out = pikepdf.new()
        placed, text, burned, _margins = build._rebuilt_page(
            out, src, scan, None, list(boxes), list(unseen), budget
        )
        yield PdfImage(placed.xobject).as_pil_image(), burned, text, counting, budget, placed


def solid(image: Image.Image, box: Box, k: float) -> bool:
    """Whether ``box`` (300 dpi pixels) is black in ``image`` (``k`` times as coarse)."""
    x0, y0, x1, y1 = burn.scaled(box, k)
    a = np.asarray(image.convert("L"))[y0 : y1 + 1, x0 : x1 + 1]
    return bool(a.size) and int(a.max()) == 0


def test_a_drawn_page_is_rendered_once_at_the_resolution_it_is_stored_at(
    tmp_path: Path, resizes: list[tuple[int, int]]
) -> None:
    src = drawn_pdf(tmp_path / "typed.pdf")
    for image, burned, text, counting, budget, placed in rebuilt(src, [NAME_BOX]):
        assert counting.scales == [pytest.approx(build.TEXT_DPI / 72.0)]  # once, at 200 dpi
        assert budget.spent == 1700 * 2200  # not a 300 dpi page's 2550 x 3300
        assert resizes == []  # nothing resampled: the rendering is what is stored
        assert image.size == (1700, 2200) and image.mode == "1"  # black print: bilevel
        assert solid(image, NAME_BOX, 200 / 300)
        assert burned == [NAME_BOX]
        # words and boxes stay measured in the page's reading resolution
        assert text.width_px == 2550 and abs(text.height_px - 3300) <= 1 and text.dpi == 300.0
        assert (placed.width, placed.height) == (612.0, 792.0)


def test_a_page_in_colour_is_found_in_colour_from_the_same_one_rendering(
    tmp_path: Path, resizes: list[tuple[int, int]]
) -> None:
    src = drawn_pdf(tmp_path / "colour.pdf", colour=True)
    for image, _burned, _text, counting, budget, _placed in rebuilt(src, [NAME_BOX]):
        assert len(counting.scales) == 1 and budget.spent == 1700 * 2200 and resizes == []
        assert image.mode == "RGB"
        red = np.asarray(image)[1228, 972]  # inside the red square, 200 dpi
        assert red[0] > 200 and red[1] < 60 and red[2] < 60
        assert solid(image, NAME_BOX, 200 / 300)


def test_unseen_text_gets_a_box_only_where_the_stored_pixels_show_ink(tmp_path: Path) -> None:
    src = drawn_pdf(tmp_path / "typed.pdf")
    for image, burned, _text, _counting, _budget, _placed in rebuilt(src, [], [BLANK_BOX, BAR_BOX]):
        assert burned == [BAR_BOX]
        assert solid(image, BAR_BOX, 200 / 300)
        x0, y0, x1, y1 = burn.scaled(BLANK_BOX, 200 / 300)
        assert int(np.asarray(image.convert("L"))[y0:y1, x0:x1].min()) == 255  # no box drawn


# -- the pixel tests, against the implementations they replaced -----------------------------


def old_black_and_white(image: Image.Image) -> bool:
    """``build._black_and_white`` as it was (Pillow's point and MinFilter): the reference."""
    if image.mode == "1":
        return True
    if image.mode != "L":
        return False
    grey = image.point(lambda v: 255 if 16 <= v <= 240 else 0)
    inner = grey.filter(ImageFilter.MinFilter(3)).histogram()[255]
    return inner <= burn.GREY_AREA_SHARE * image.width * image.height


def varied_pages() -> Iterator[Image.Image]:
    rng = np.random.default_rng(46)
    levels = np.array([0, 15, 16, 17, 128, 239, 240, 241, 255], dtype=np.uint8)
    for _ in range(300):  # small, so a few grey pixels cross the share either way
        h, w = (int(v) for v in rng.integers(1, 80, 2))
        a = np.full((h, w), 255, dtype=np.uint8)
        for _ in range(int(rng.integers(0, 4))):
            y, x = int(rng.integers(0, h)), int(rng.integers(0, w))
            a[y : y + int(rng.integers(1, 5)), x : x + int(rng.integers(1, 5))] = rng.choice(levels)
        yield Image.fromarray(a, "L")
    for _ in range(100):  # noise of every level
        h, w = (int(v) for v in rng.integers(1, 40, 2))
        yield Image.fromarray(rng.choice(levels, size=(h, w)), "L")
    # black print with grey edges, and the same with a grey caption touching the page's edge
    page = np.full((600, 500), 255, dtype=np.uint8)
    page[100:110, 50:450] = 0
    page[99, 50:450] = page[110, 50:450] = 128
    yield Image.fromarray(page, "L")
    page[580:600, 0:30] = 150
    yield Image.fromarray(page, "L")
    yield Image.new("1", (20, 20))
    yield Image.new("RGB", (20, 20), (128, 128, 128))


def test_black_and_white_decides_as_the_pillow_filter_did() -> None:
    decisions = [(burn.black_and_white(p), old_black_and_white(p)) for p in varied_pages()]
    assert all(new == old for new, old in decisions)
    assert {new for new, _old in decisions} == {True, False}  # both answers were tested


class Bitmap:
    """PDFium's bitmap of ``pixels`` (RGB): BGR rows padded to a four-byte stride."""

    def __init__(self, pixels: np.ndarray[Any, Any]) -> None:
        self.height, self.width, self.n_channels = pixels.shape
        self.stride = (self.width * 3 + 3) // 4 * 4
        rows = np.zeros((self.height, self.stride), dtype=np.uint8)
        rows[:, : self.width * 3] = pixels[..., ::-1].reshape(self.height, -1)
        self.buffer = rows.tobytes()
        self.rev_byteorder = False
        self.pixels = pixels

    def to_pil(self) -> Image.Image:
        return Image.fromarray(self.pixels, "RGB")


def test_a_grey_rendering_is_made_grey_exactly_as_pillow_makes_it() -> None:
    rng = np.random.default_rng(7)
    base = rng.integers(0, 256, size=(600, 333), dtype=np.int16)
    jitter = rng.integers(-2, 3, size=(600, 333, 3), dtype=np.int16)
    jitter[..., 1] = 0  # red and blue each within two levels of green
    pixels = np.clip(base[..., None] + jitter, 0, 255).astype(np.uint8)
    grey = burn.grey_or_colour(Bitmap(pixels))
    assert grey.mode == "L"
    expected = Image.fromarray(pixels, "RGB").convert("L")
    assert np.array_equal(np.asarray(grey), np.asarray(expected))
    pixels[599, 332] = (128, 131, 128)  # one pixel of colour, in the last band
    assert burn.grey_or_colour(Bitmap(pixels)).mode == "RGB"
    assert not burn.grey(Image.fromarray(pixels, "RGB"))
    pixels[599, 332] = (128, 130, 128)
    assert burn.grey(Image.fromarray(pixels, "RGB"))
