"""An inline image's binary data is skipped by its length, not up to the first ``EI`` in it:
pixels that happen to spell `` EI `` must not end the image early and have the rest of its data
read as operators (a ``BI`` in it then reads as an unsized inline image and the page is refused,
or a real image after it goes uncounted). Unfiltered data has an exact length (width x colour
components x bits per row, whole bytes); filtered data ends at an ``EI`` after which the stream
could go on (white space, then an operator)."""

from __future__ import annotations

from pathlib import Path

import pikepdf
import pytest
from pikepdf import Dictionary, Name

from pressroom.pipeline.content import ContentMeter, PageCost
from pressroom.settings import Limits

# binary data that spells the end of an image, then another image without a size
TRAP = b"\x00 EI Q BI /W 9 ID \x00"


def _page(path: Path, content: bytes) -> PageCost:
    pdf = pikepdf.Pdf.new()
    pdf.pages.append(
        pikepdf.Page(
            Dictionary(Type=Name.Page, MediaBox=[0, 0, 612, 792], Contents=pdf.make_stream(content))
        )
    )
    pdf.save(path)
    with pikepdf.open(path) as saved:
        return ContentMeter(Limits()).page(saved.pages[0], 1)


def _sized(data: bytes, length: int) -> bytes:
    return (data * (length // len(data) + 1))[:length]


@pytest.mark.parametrize(
    ("head", "length"),
    [
        (b"/W 8 /H 3 /BPC 8 /CS /G", 24),  # grey: one byte a pixel
        (b"/Width 4 /Height 3 /BitsPerComponent 8 /ColorSpace /DeviceRGB", 36),
        (b"/W 5 /H 2 /BPC 8 /CS /CMYK", 40),
        (b"/W 20 /H 2 /BPC 1 /CS /G", 6),  # rows are whole bytes: 20 bits take 3
        (b"/W 20 /H 2 /IM true", 6),  # an image mask: one bit a pixel
        (b"/W 8 /H 3 /BPC 8 /CS [/I /RGB 1 <000000FFFFFF>]", 24),  # indexed: one component
    ],
)
def test_unfiltered_data_is_skipped_by_its_length(tmp_path: Path, head: bytes, length: int) -> None:
    image = b"BI " + head + b" ID " + _sized(TRAP, length) + b"\nEI"
    w, h = (int(v) for v in head.split()[1:4:2])
    cost = _page(tmp_path / "p.pdf", b"q " + image + b" Q")
    assert cost.largest_image == w * h
    # and an image after it is found and counted, its data skipped the same way
    after = b"BI /W 30 /H 30 /BPC 8 /CS /G ID " + _sized(TRAP, 900) + b" EI"
    cost = _page(tmp_path / "q.pdf", b"q " + image + b" Q q " + after + b" Q")
    assert (cost.largest_image, cost.image_pixels) == (900, 900 + w * h)


def test_filtered_data_ends_at_an_ei_a_stream_could_go_on_after(tmp_path: Path) -> None:
    # the length of Flate data cannot be told from the dictionary: an EI inside it that binary
    # follows is not the end; the one that Q follows is
    data = b"x\x9c\x01 EI \x02\x03 BI /W 1 ID \xff EI \x00\x00"
    image = b"BI /W 6 /H 6 /BPC 8 /CS /G /F /Fl ID " + data + b" EI"
    cost = _page(tmp_path / "f.pdf", b"q " + image + b" Q q " + image.replace(b"6", b"7") + b" Q")
    assert (cost.largest_image, cost.image_pixels) == (49, 36 + 49)


def test_a_colour_space_from_the_resources_falls_back_to_the_ei_rule(tmp_path: Path) -> None:
    # /CS0 names a space in the page's resources: no length from the dictionary alone
    image = b"BI /W 4 /H 4 /BPC 8 /CS /CS0 ID " + b"\x01\x02 EI \x03" + bytes(12) + b" EI"
    cost = _page(tmp_path / "c.pdf", b"q " + image + b" Q")
    assert cost.largest_image == 16


def test_data_shorter_than_its_dictionary_says_still_ends_at_its_ei(tmp_path: Path) -> None:
    # a writer's mistake readers tolerate: the image still ends, what follows is still read
    short = b"BI /W 5 /H 5 /BPC 8 /CS /G ID " + bytes(16) + b" EI"
    cost = _page(
        tmp_path / "s.pdf",
        b"q " + short + b" Q q BI /W 3 /H 3 /BPC 8 /CS /G ID " + bytes(9) + b" EI Q",
    )
    assert (cost.largest_image, cost.image_pixels) == (25, 34)


@pytest.mark.parametrize(
    ("head", "what"),
    [
        (b"/W 12000 /H 1 /CS /G /BPC 8 /W 10", "width"),  # PDFium takes the last, we the first
        (b"/Width 10 /H 1 /CS /G /BPC 8 /W 12000", "width"),  # one key, its two spellings
        (b"/W 10 /H 1 /H 12000 /CS /G /BPC 8", "height"),
        (b"/W 10 /H 1 /CS /G /BPC 8 /BitsPerComponent 1", "bits per component"),
        (b"/W 10 /H 1 /CS /G /BPC 8 /F /Fl /Filter /AHx", "filter"),
    ],
)
def test_an_inline_image_that_names_a_sizing_key_twice_is_refused(
    tmp_path: Path, head: bytes, what: str
) -> None:
    """A renderer takes one of the two values, the meter would size by the other: a 1 KB file
    once drew 144 Mpx past the meter this way (the review's R1 finding 2)."""
    from pressroom.errors import ContentLimit

    content = b"q BI " + head + b" ID " + b"\x00" * 10 + b" EI Q"
    with pytest.raises(ContentLimit, match=f"names its {what} twice"):
        _page(tmp_path / "p.pdf", content)


def test_keys_inside_decode_parameters_are_not_counted_as_the_images(tmp_path: Path) -> None:
    head = b"/W 4 /H 2 /BPC 8 /CS /G /F /Fl /DP << /Predictor 15 /BitsPerComponent 8 /Columns 4 >>"
    cost = _page(tmp_path / "p.pdf", b"q BI " + head + b" ID \x78\x9c EI Q")
    assert cost.largest_image == 8
