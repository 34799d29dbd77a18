"""The desk's page pictures have a memory budget (issue 42 item 7, security review N4): a
picture and every bitmap made for it stay within ``MAX_PICTURE_PX``, a picture that would pass
it comes back narrower with the page's aspect (so the sheet's boxes still land on it), an image
file is decoded small where the format allows, and no more than ``MAX_DRAWING`` pictures are
drawn at once in a process. Memory itself is measured by bench/desk_picture_memory.py."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pikepdf
import pytest
from pikepdf import Array, Dictionary, Name
from PIL import Image

from pressroom.corrections import SheetPage
from pressroom.engines import pdfium
from pressroom.engines.straighten import level
from pressroom.errors import Overloaded, PixelLimit
from pressroom.models import SourceKind
from pressroom.pipeline import pictures as render
from pressroom.pipeline.ocr import rotate_cw
from pressroom.pixels import PixelBudget

TALL_PT = (480, 3000)  # N4's page
MARK_PT = (100.0, 2200.0, 140.0, 2240.0)  # a dark square, x0 y0 x1 y1 in points, y down


def _tall_pdf(path: Path) -> Path:
    """One 480 x 3000 pt page, blank but for the dark square at ``MARK_PT``."""
    x0, y0, x1, y1 = MARK_PT
    pdf = pikepdf.Pdf.new()
    page = pikepdf.Page(
        Dictionary(
            Type=Name.Page,
            MediaBox=Array([0, 0, *TALL_PT]),
            Contents=pdf.make_stream(
                f"0 g {x0} {TALL_PT[1] - y1} {x1 - x0} {y1 - y0} re f".encode()
            ),
        )
    )
    pdf.pages.append(page)
    pdf.save(path)
    return path


@pytest.fixture
def tall(tmp_path: Path) -> Path:
    return _tall_pdf(tmp_path / "tall.pdf")


@pytest.fixture
def bitmaps(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, tuple[int, int]]]]:
    """The size of every bitmap a picture makes after any decode: PDFium's render, each
    scaling, reduction and copy, the turn and the levelling."""
    made: list[tuple[str, tuple[int, int]]] = []

    def spy(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            image = real(*args, **kwargs)
            made.append((name, image.size))
            return image

        return wrapped

    monkeypatch.setattr(pdfium, "render_colour", spy("render", pdfium.render_colour))
    monkeypatch.setattr(render, "rotate_cw", spy("turn", rotate_cw))
    monkeypatch.setattr(render, "level", spy("level", level))
    for method in ("resize", "reduce", "convert", "copy", "crop"):
        monkeypatch.setattr(Image.Image, method, spy(method, getattr(Image.Image, method)))
    yield made


def _open(png: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    return image


def _mark(image: Image.Image) -> tuple[float, float, float, float]:
    """The dark square's extent in the picture, pixels."""
    ys, xs = np.nonzero(np.asarray(image.convert("L")) < 128)
    assert len(xs), "no mark on the picture"
    return float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1)


def _fits_the_budget(image: Image.Image, page_pt: tuple[float, float], asked: int) -> None:
    """Within the area budget, within a pixel of as wide as it allows (not merely small; a
    render PDFium rounds up may take that pixel), the page's height for the width it has."""
    w, h = image.size
    assert w * h <= render.MAX_PICTURE_PX
    assert w < asked
    assert (w + 2) * round((w + 2) * page_pt[1] / page_pt[0]) > render.MAX_PICTURE_PX
    assert h == round(w * page_pt[1] / page_pt[0])


def _lines_up(image: Image.Image, mark_pt: tuple[float, ...], page_w_pt: float) -> None:
    """The sheet's mapping, x * picture width / page width in points, puts the square where
    the picture shows it."""
    k = image.width / page_w_pt
    assert _mark(image) == pytest.approx(tuple(v * k for v in mark_pt), abs=2.0)


def _all_within(made: list[tuple[str, tuple[int, int]]]) -> None:
    assert made, "no bitmap was seen"
    too_big = [(name, size) for name, size in made if size[0] * size[1] > render.MAX_PICTURE_PX]
    assert not too_big


def test_a_tall_pdf_page_at_the_widest_comes_back_within_the_budget(
    tall: Path, bitmaps: list[tuple[str, tuple[int, int]]]
) -> None:
    sheet = SheetPage(*TALL_PT, level=0.5)  # levelled too: every step of the way is counted
    image = _open(render.source_page_png(tall, SourceKind.PDF, 0, sheet, 3999))
    _fits_the_budget(image, TALL_PT, 3999)
    _all_within(bitmaps)
    assert {"render", "turn", "level"} <= {name for name, _ in bitmaps}
    plain = _open(render.source_page_png(tall, SourceKind.PDF, 0, None, 3999))
    _fits_the_budget(plain, TALL_PT, 3999)
    _lines_up(plain, MARK_PT, TALL_PT[0])
    output = _open(render.output_page_png(tall, 0, 3999))
    _fits_the_budget(output, TALL_PT, 3999)
    _lines_up(output, MARK_PT, TALL_PT[0])
    _all_within(bitmaps)


def test_a_page_within_the_budget_keeps_the_width_asked(tall: Path) -> None:
    # read turned: the upright page is 3000 x 480 pt, 3999 x 640 px is 2.6 MP
    sheet = SheetPage(TALL_PT[1], TALL_PT[0], rotation=90)
    assert _open(render.source_page_png(tall, SourceKind.PDF, 0, sheet, 3999)).size == (3999, 640)
    assert _open(render.source_page_png(tall, SourceKind.PDF, 0, None, 1000)).size == (1000, 6250)


def test_an_output_page_is_fitted_by_the_render_the_frame_is_cut_from(
    tall: Path, bitmaps: list[tuple[str, tuple[int, int]]]
) -> None:
    """The frame (here the page's lower half) is cut from a render of the whole output page,
    twice its area: the render is what must fit."""
    half = SheetPage(480, 1500, placement=(1.0, 0.0, 1500.0))
    image = _open(render.output_page_png(tall, 0, 3999, half))
    (rendered,) = [size for name, size in bitmaps if name == "render"]
    assert rendered[0] * rendered[1] <= render.MAX_PICTURE_PX
    assert rendered[0] * rendered[1] > 0.99 * render.MAX_PICTURE_PX
    assert image.size == (rendered[0], round(rendered[0] * 1500 / 480))
    x0, y0, x1, y1 = MARK_PT
    _lines_up(image, (x0, y0 - 1500, x1, y1 - 1500), 480)
    _all_within(bitmaps)


# an image 2400 x 15000 px (N4's page at 360 dpi, 36 MP) with the square at (600, 11000) px
IMAGE_PX = (2400, 15000)
MARK_PX = (600.0, 11000.0, 700.0, 11100.0)


def _big_image(path: Path, fmt: str) -> Path:
    image = Image.new("L", IMAGE_PX, 255)
    x0, y0, x1, y1 = (round(v) for v in MARK_PX)
    image.paste(0, (x0, y0, x1, y1))
    if fmt == "JPEG":
        image.save(path, "JPEG", quality=75)
    elif fmt == "PNG":
        image.save(path, "PNG", compress_level=1)
    else:  # a bilevel scan, as a fax or a document feeder stores it
        image.convert("1").save(path, "TIFF", compression="group4")
    return path


@pytest.mark.parametrize(
    ("fmt", "kind"),
    [("JPEG", SourceKind.JPEG), ("PNG", SourceKind.PNG), ("TIFF", SourceKind.TIFF)],
)
def test_a_big_image_source_comes_back_within_the_budget(
    tmp_path: Path, fmt: str, kind: SourceKind, bitmaps: list[tuple[str, tuple[int, int]]]
) -> None:
    path = _big_image(tmp_path / f"big.{fmt.lower()}", fmt)
    bitmaps.clear()  # what making the file took
    image = _open(render.source_page_png(path, kind, 0, None, 3999))
    _fits_the_budget(image, IMAGE_PX, 3999)
    _lines_up(image, MARK_PX, IMAGE_PX[0])
    # the decode (36 MP here) is the largest bitmap; the scaled frame and its turns are within
    # the budget; only a bilevel frame is converted (to grey) once at its own size
    decoded = IMAGE_PX[0] * IMAGE_PX[1]
    assert max(w * h for _, (w, h) in bitmaps) <= decoded
    _all_within([(name, size) for name, size in bitmaps if name in ("resize", "turn", "copy")])
    big = [(name, size) for name, size in bitmaps if size[0] * size[1] > render.MAX_PICTURE_PX]
    assert big == ([("convert", IMAGE_PX)] if fmt == "TIFF" else [])
    # a small picture: JPEG decodes at a quarter each way, the others reduce by four at once
    bitmaps.clear()
    small = _open(render.source_page_png(path, kind, 0, None, 500))
    assert small.size == (500, 3125)
    _lines_up(small, MARK_PX, IMAGE_PX[0])
    if fmt != "JPEG":
        assert ("reduce", (600, 3750)) in bitmaps
    assert max(w * h for name, (w, h) in bitmaps if name != "convert") <= 600 * 3750


def test_a_frame_decoded_larger_than_a_picture_is_decoded_alone_and_handed_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decode past ``MAX_PICTURE_PX`` holds the one big-decode lock, and the memory is
    trimmed back to the system before the lock is let go (so the next decode does not stack
    on what this one kept); a frame no larger than a picture takes no lock."""
    import platform

    if platform.libc_ver()[0] == "glibc":  # the trim is real where the images ship
        assert render._MALLOC_TRIM is not None
    events: list[str] = []

    class Lock:
        def __enter__(self) -> None:
            events.append("lock")

        def __exit__(self, *exc: object) -> None:
            events.append("unlock")

    def trim(pad: int) -> int:
        events.append("trim")
        return 1

    monkeypatch.setattr(render, "_BIG_DECODE", Lock())
    monkeypatch.setattr(render, "_MALLOC_TRIM", trim)
    big = _big_image(tmp_path / "big.png", "PNG")
    render.source_page_png(big, SourceKind.PNG, 0, None, 3999)
    assert events == ["lock", "trim", "unlock", "trim"]  # the decode, then the picture
    events.clear()
    small = tmp_path / "small.png"
    Image.new("L", (1000, 6250), 255).save(small)
    render.source_page_png(small, SourceKind.PNG, 0, None, 3999)
    assert events == ["trim"]


def test_a_jpeg_is_decoded_at_a_fraction_of_its_size_for_a_small_picture(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _big_image(tmp_path / "big.jpg", "JPEG")
    decoded: list[tuple[int, int]] = []

    class Budget(PixelBudget):
        def take(self, width: int, height: int, what: str) -> None:
            decoded.append((width, height))
            super().take(width, height, what)

    monkeypatch.setattr(render, "PixelBudget", Budget)
    image = _open(render.source_page_png(path, SourceKind.JPEG, 0, None, 300))
    assert image.size == (300, 1875)
    assert decoded == [(300, 1875)]  # JPEG's own 1/8 scale covers the picture exactly
    _lines_up(image, MARK_PX, IMAGE_PX[0])


def test_the_fitted_width_is_the_widest_within_the_budget() -> None:
    for aspect in (0.01, 1.0, 1.294, 6.25, 4800.0):

        def area(w: int, aspect: float = aspect) -> int:
            return w * max(1, round(w * aspect))

        for asked in (16, 1000, 3999, 4000):
            fitted = render._fit(asked, area)
            assert 1 <= fitted <= asked and area(fitted) <= render.MAX_PICTURE_PX
            assert fitted == asked or area(fitted + 1) > render.MAX_PICTURE_PX
    with pytest.raises(PixelLimit):  # a page too long to draw even one pixel wide
        render._fit(16, lambda w: render.MAX_PICTURE_PX + w)


def test_the_process_draws_two_pictures_at_a_time() -> None:
    assert render.MAX_DRAWING == 2
    taken = [render._DRAWING.acquire(blocking=False) for _ in range(3)]
    try:
        assert taken == [True, True, False]
    finally:
        for got in taken:
            if got:
                render._DRAWING.release()


class _Watched:
    """The desk's own semaphore, counting the callers that found it full and wait."""

    def __init__(self, real: threading.BoundedSemaphore, changed: threading.Condition) -> None:
        self.real, self.changed = real, changed
        self.waiting = 0

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if self.real.acquire(blocking=False):
            return True
        with self.changed:
            self.waiting += 1
            self.changed.notify_all()
        try:
            return self.real.acquire(blocking, timeout)
        finally:
            with self.changed:
                self.waiting -= 1

    def release(self) -> None:
        self.real.release()


def test_many_requests_at_once_never_draw_more_than_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Six pictures asked at once (source and output, as a job page's thumbnails are): two
    draw, the other four wait at the semaphore; once the two go on, all six are drawn, on the
    desk's two drawing threads."""
    changed = threading.Condition()
    go = threading.Event()
    state = {"drawing": 0, "most": 0, "drawn": 0}
    drawers: set[str] = set()
    watched = _Watched(render._DRAWING, changed)
    monkeypatch.setattr(render, "_DRAWING", watched)

    def drawing(*args: Any) -> bytes:
        with changed:
            drawers.add(threading.current_thread().name)
            state["drawing"] += 1
            state["most"] = max(state["most"], state["drawing"])
            changed.notify_all()
        assert go.wait(timeout=60)
        with changed:
            state["drawing"] -= 1
            state["drawn"] += 1
        return b"\x89PNG"

    monkeypatch.setattr(render, "_draw_source", drawing)
    monkeypatch.setattr(render, "_draw_output", drawing)
    answers: list[bytes | BaseException] = []

    def ask(n: int) -> None:
        try:
            if n % 2:
                answers.append(render.output_page_png(tmp_path / "held.pdf", 0, 3999))
            else:
                answers.append(
                    render.source_page_png(tmp_path / "a.pdf", SourceKind.PDF, 0, None, 3999)
                )
        except BaseException as exc:  # reported below, not lost in the thread
            answers.append(exc)

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    try:
        with changed:
            settled = changed.wait_for(
                lambda: state["drawing"] == 2 and watched.waiting == 4, timeout=60
            )
        assert settled, (state, watched.waiting)
        assert state["most"] == 2
    finally:
        go.set()
        for thread in threads:
            thread.join(timeout=60)
    assert answers == [b"\x89PNG"] * 6
    assert state["most"] == 2 and state["drawn"] == 6 and watched.waiting == 0
    # drawn on the desk's own two threads, not the askers' (each thread's malloc arena keeps
    # what a picture took: two threads hold at most two pictures' worth)
    assert len(drawers) <= render.MAX_DRAWING
    assert all(name.startswith("desk-picture") for name in drawers), drawers


def test_a_request_that_cannot_get_a_turn_is_refused_not_held(
    tall: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(render, "WAIT_S", 0.0)
    taken = [render._DRAWING.acquire(blocking=False) for _ in range(render.MAX_DRAWING)]
    assert all(taken)
    try:
        with pytest.raises(Overloaded) as refused:
            render.source_page_png(tall, SourceKind.PDF, 0, None, 640)
        assert refused.value.code == "OVERLOADED" and refused.value.http_status == 429
        with pytest.raises(Overloaded):
            render.output_page_png(tall, 0, 640)
    finally:
        for _ in taken:
            render._DRAWING.release()
    assert _open(render.output_page_png(tall, 0, 640)).size == (640, 4000)  # free again
