"""pipeline.structure's values: they survive the JSON a page range's part carries them in,
a redaction's filter drops what holds a value (fail closed), and targets follow a page
turned upright and scaled under bands."""

from __future__ import annotations

import pikepdf
from pikepdf import Name

from pressroom.pipeline.geometry import PageLayout
from pressroom.pipeline.structure import (
    Carriers,
    Frame,
    Label,
    Link,
    Outline,
    Placed,
    Target,
    placement,
    write_carriers,
)

CARRIERS = Carriers(
    title="Annual report",
    author="Jane Roe",
    lang="en-GB",
    display_title=True,
    outlines=(
        Outline("One", Target(0, "/XYZ", (72.0, 700.0, None)), open=True,
                children=(Outline("One.one", name="n1", target=Target(1, "/FitH", (650.0,))),)),
        Outline("Roe's notes", uri="https://example.org/roe"),
    ),
    dests=(("n1", Target(1, "/FitH", (650.0,))),),
    links=(Link(0, (70.0, 595.0, 210.0, 614.0), (), None, None, "https://example.org/roe", 10),),
    labels=(Label(0, "/r"), Label(1, "/D", "A-", 3)),
    frames=(Frame((0.0, 0.0, 612.0, 792.0)), Frame((0.0, 0.0, 612.0, 792.0), 90)),
    tagged=True,
    show_outlines=True,
)  # fmt: skip


def test_the_values_survive_their_json() -> None:
    assert Carriers.from_json(CARRIERS.to_json()) == CARRIERS


def test_a_redaction_filter_drops_what_holds_a_value_and_says_what() -> None:
    kept = CARRIERS.only(lambda text: "roe" not in text.casefold())
    assert kept.author is None and kept.title == "Annual report"
    assert [o.title for o in kept.outlines] == ["One"]
    assert kept.links == ()
    assert set(kept.dropped) == {"author", "outlines", "links"}
    assert kept.labels == CARRIERS.labels


def test_a_quarter_turned_page_under_bands_maps_its_targets() -> None:
    # page 2 has /Rotate 90: shown 792 wide, 612 high; scaled by a half under a 40 pt footer
    layout = PageLayout(792.0, 612.0, (198.0, 40.0, 594.0, 346.0), 0.5, (40.0, 0.0))
    m = placement(CARRIERS.frames[1], layout, 0)
    a, b, c, d, e, f = m
    # the source's point (0, 0) (its bottom left) is shown at the top left of the content
    assert (e, f) == (198.0, 346.0)
    assert (a, b, c, d) == (0.0, -0.5, 0.5, 0.0)
    pdf = pikepdf.Pdf.new()
    for size in ((612, 792), (792, 612)):
        pdf.add_blank_page(page_size=size)
    placed = [
        Placed(0, 0, PageLayout(612.0, 792.0, (0.0, 0.0, 612.0, 792.0)), 0),
        Placed(1, 1, layout, 0),
    ]
    write_carriers(pdf, CARRIERS, placed, cover=None)
    dest = pikepdf.NameTree(pdf.Root.Names.Dests)["n1"]
    # a horizontal line of the source is a vertical one on the turned page: FitV at its x
    assert dest[1] == Name.FitV and float(dest[2]) == 198.0 + 650.0 * 0.5
    assert [p.label for p in pdf.pages] == ["i", "A-3"]
    assert str(pdf.Root.Lang) == "en-GB"
    assert pdf.Root.PageMode == Name.UseOutlines
    assert pdf.Root.ViewerPreferences.DisplayDocTitle is True
    (link,) = pdf.pages[0].obj.Annots
    assert [float(v) for v in link.Rect] == [70.0, 595.0, 210.0, 614.0]


def test_the_title_comes_from_the_xmp_where_the_info_has_none_and_bad_xmp_is_no_bar() -> None:
    from pressroom.pipeline.structure import read_carriers

    pdf = pikepdf.Pdf.new()
    pdf.add_blank_page()
    with pdf.open_metadata(set_pikepdf_as_editor=False, update_docinfo=False) as meta:
        meta["dc:title"] = "From the XMP"
    assert "/Title" not in pdf.docinfo
    assert read_carriers(pdf).title == "From the XMP"
    pdf.Root.Metadata = pdf.make_stream(b"<x:xmpmeta this is not XML")
    pdf.docinfo.Title = "From the info"
    assert read_carriers(pdf).title == "From the info"
