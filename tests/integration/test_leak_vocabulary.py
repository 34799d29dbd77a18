"""A value that stands inside the PDF's own vocabulary is no leak; a value anywhere a source
could put it still is.

"Ada" is in ``/Metadata`` and ``xmp:MetadataDate``, "Tess" in the Producer Pressroom writes
("...; tesseract-5.5.4; ..."), "Rod" and "Duc" in ``/Producer`` and ``pdf:Producer``, "Ren" in
``/Parent``: every letter to one of them was held REDACTION_LEAK for nothing. The leak check
now passes over exactly those words (``redact.syntax``): a standard PDF name, a parsed XMP's
standard names and wrapper, and Pressroom's own Producer and Creator where they are exactly
what it wrote. A custom key, a font name, an XMP title or element, XMP that does not parse,
a Producer one character off: each still holds."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pikepdf
import pytest
from pikepdf import Dictionary, Name, String

from pressroom import ENGINE_VERSION, __version__
from pressroom.pipeline.structure import Carriers
from pressroom.pipeline.writing import describe
from pressroom.redact.leaks import Leak, find_leaks
from pressroom.synth import text_pdf
from tests.helpers import output_text

pytestmark = pytest.mark.integration

NAMES = ("Ada", "Tess", "Rod", "Duc", "Ren")
# what ``pipeline.assembly.output_builder`` writes for a redaction on the plain template
PRODUCER = (
    f"Pressroom {__version__} ({ENGINE_VERSION}; tesseract-5.5.4; plain@1+1311843e0fb4; redacted)"
)


def test_letters_to_ada_tess_rod_duc_and_ren_are_delivered_without_their_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pressroom.cli import main

    monkeypatch.setenv("PRESSROOM_DATA_DIR", str(tmp_path / "data"))
    sources = [
        text_pdf(
            [
                [
                    f"Dear {n},",
                    "Thank you for the letter about the garden.",
                    f"We met {n} Whitfield at the fair last week.",
                    "Kind regards, the committee",
                ]
            ],
            tmp_path / f"dear_{n}.pdf",
        )
        for n in NAMES
    ]
    out = tmp_path / "out"
    redact = ["--redact", "name,address,account-number"]
    code = main(["process", *map(str, sources), "-o", str(out), "-j", "1", "-q", *redact])
    assert code == 0
    assert not (out / "review").exists()
    for n in NAMES:
        text = output_text(out / f"dear_{n}.pdf")
        assert "Thank you for the letter" in text  # the letter is there...
        assert not any(name.lower() in text.lower() for name in NAMES), text  # ...its name not
        with pikepdf.open(out / f"dear_{n}.pdf") as pdf:
            # the words that held them are all there still
            assert str(pdf.docinfo.Producer).startswith("Pressroom ")
            assert "tesseract" in str(pdf.docinfo.Producer)
            assert "/Metadata" in pdf.Root and "/Parent" in pdf.pages[0].obj


# --- the check itself, on files made here ---


def _letter(path: Path, change: Callable[[pikepdf.Pdf], None] | None = None) -> Path:
    """A page described as Pressroom describes its output (``pipeline.writing.describe``:
    the info dictionary and XMP, our Producer and Creator), then ``change``d."""
    pdf = pikepdf.new()
    pdf.add_blank_page(page_size=(200, 200))
    describe(
        pdf,
        Carriers(),
        title="Document",
        created=datetime(2026, 12, 7, 17, 45, 38, tzinfo=UTC),
        producer=PRODUCER,
        pdfa=False,
        intents=None,
    )
    if change is not None:
        change(pdf)
    pdf.save(path, fix_metadata_version=False)  # the XMP as made here, not pikepdf's again
    return path


def _held(leaks: list[Leak], where: str) -> bool:
    return any(leak.parser == "pikepdf-walk" and leak.where == where for leak in leaks)


def _xmp(pdf: pikepdf.Pdf, xml: bytes) -> None:
    meta = pdf.make_stream(xml)
    meta.Type, meta.Subtype = Name.Metadata, Name.XML
    pdf.Root.Metadata = meta


XMP_HEAD = (
    b'<?xpacket begin="\xef\xbb\xbf" id="W5M0MpCehiHzreSzNTczkc9d"?>'
    b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF '
    b'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description rdf:about="" '
    b'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/">'
)
XMP_TAIL = b'</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>'


def _with_xmp(body: bytes) -> Callable[[pikepdf.Pdf], None]:
    return lambda pdf: _xmp(pdf, XMP_HEAD + body + XMP_TAIL)


def test_pressrooms_own_description_holds_none_of_the_names(tmp_path: Path) -> None:
    path = _letter(tmp_path / "ours.pdf")
    assert find_leaks(path, NAMES, PRODUCER) == []
    # an XMP of standard names alone, as another writer lays it out
    path = _letter(tmp_path / "xmp.pdf", _with_xmp(
        b"<xmp:MetadataDate>2026-12-07T17:45:38Z</xmp:MetadataDate>"
        b'<dc:title><rdf:Alt><rdf:li xml:lang="x-default">Document</rdf:li></rdf:Alt></dc:title>'
    ))  # fmt: skip
    assert find_leaks(path, NAMES, PRODUCER) == []


def test_our_producer_passes_only_where_the_check_knows_it(tmp_path: Path) -> None:
    path = _letter(tmp_path / "ours.pdf")
    # not told what this output's Producer is: "tesseract" in it holds, as before
    leaks = find_leaks(path, ["Tess"])
    assert _held(leaks, "object") and _held(leaks, "stream")


def test_a_producer_one_character_off_ours_holds(tmp_path: Path) -> None:
    off = PRODUCER.replace("redacted)", "redacted.)")

    def change(pdf: pikepdf.Pdf) -> None:
        pdf.docinfo.Producer = off

    leaks = find_leaks(_letter(tmp_path / "info.pdf", change), ["Tess"], PRODUCER)
    assert _held(leaks, "object")
    assert not _held(leaks, "stream")  # the XMP's is still ours
    body = b"<pdf:Producer xmlns:pdf='http://ns.adobe.com/pdf/1.3/'>" + off.encode()
    path = _letter(tmp_path / "xmp.pdf", _with_xmp(body + b"</pdf:Producer>"))
    assert _held(find_leaks(path, ["Tess"], PRODUCER), "stream")


def test_a_creator_other_than_ours_holds(tmp_path: Path) -> None:
    def change(pdf: pikepdf.Pdf) -> None:
        pdf.docinfo.Creator = "Pressroom Ada"

    assert _held(find_leaks(_letter(tmp_path / "c.pdf", change), ["Ada"], PRODUCER), "object")


@pytest.mark.parametrize(
    "key",
    [Name("/Ada#20Lovelace"), Name("/AdaLovelace"), Name("/Jane#20Ada")],
    ids=["escaped", "plain", "inside"],
)
def test_a_custom_info_key_holds(tmp_path: Path, key: Name) -> None:
    def change(pdf: pikepdf.Pdf) -> None:
        pdf.docinfo[key] = String("x")

    assert _held(find_leaks(_letter(tmp_path / "k.pdf", change), ["Ada"], PRODUCER), "object")


@pytest.mark.parametrize("key", ["/Nickname", "/Author", "/Title", "/Producer"])
def test_a_custom_or_standard_info_entry_whose_value_is_the_name_holds(
    tmp_path: Path, key: str
) -> None:
    def change(pdf: pikepdf.Pdf) -> None:
        pdf.docinfo[Name(key)] = String("Ada")

    assert _held(find_leaks(_letter(tmp_path / "v.pdf", change), ["Ada"], PRODUCER), "object")


def test_a_font_name_holds(tmp_path: Path) -> None:
    def change(pdf: pikepdf.Pdf) -> None:
        font = Dictionary(Type=Name.Font, Subtype=Name.TrueType, BaseFont=Name("/ABCDEF+Ada"))
        pdf.pages[0].obj.Resources = Dictionary(Font=Dictionary(F1=pdf.make_indirect(font)))

    assert _held(find_leaks(_letter(tmp_path / "f.pdf", change), ["Ada"], PRODUCER), "object")


def test_a_standard_name_is_syntax_but_the_same_word_as_text_holds(tmp_path: Path) -> None:
    path = _letter(tmp_path / "name.pdf")
    # "Meta" inside the name /Metadata (and xmp:MetadataDate) is the file's syntax; a value
    # that is the whole name is searched (review R5: a person called Ruby, below)...
    assert find_leaks(path, ["Meta"], PRODUCER) == []
    assert _held(find_leaks(path, ["Metadata"], PRODUCER), "object")

    def change(pdf: pikepdf.Pdf) -> None:
        pdf.docinfo.Title = "Metadata"

    # ...the word in a text string is text
    leaks = find_leaks(_letter(tmp_path / "text.pdf", change), ["Metadata"], PRODUCER)
    assert _held(leaks, "object")

    # and a name one character off the vocabulary is read as any other name
    def other(pdf: pikepdf.Pdf) -> None:
        pdf.Root[Name("/Metadatas")] = Name("/Parents")

    leaks = find_leaks(_letter(tmp_path / "off.pdf", other), ["Meta", "Ren"], PRODUCER)
    assert _held(leaks, "object")


@pytest.mark.parametrize(
    "body",
    [
        b'<dc:title><rdf:Alt><rdf:li xml:lang="x-default">Letter to Ada</rdf:li></rdf:Alt>'
        b"</dc:title>",
        b"<x:Ada>1</x:Ada>",
        b"<Ad:a xmlns:Ad='http://purl.org/dc/elements/1.1/'>1</Ad:a>",
        b"<dc:title xmlns:dc='http://example.com/Ada/'>1</dc:title>",
        b"<dc:title rdf:about='Ada'>1</dc:title>",
        b"<dc:title>&#65;da</dc:title>",
        b"<dc:title>Ad<!-- -->a</dc:title>",
        b"<dc:title>Ad<![CDATA[a]]></dc:title>",
        b"<dc:title>Ad<rdf:li>1</rdf:li>a</dc:title>",
        b"<!-- Ada -->",
        b"<?ada x?>",
        b"<?xpacket begin='' id='Ada'?>",
    ],
    ids=[
        "title", "element", "prefix-across-colon", "namespace-uri", "attribute",
        "character-reference", "split-by-comment", "split-by-cdata", "split-by-child",
        "comment", "instruction", "xpacket-other-id",
    ],
)  # fmt: skip
def test_a_value_in_xmp_holds(tmp_path: Path, body: bytes) -> None:
    path = _letter(tmp_path / "x.pdf", _with_xmp(body))
    assert _held(find_leaks(path, ["Ada"], PRODUCER), "stream")


@pytest.mark.parametrize(
    "xml",
    [
        XMP_HEAD + b"<dc:title>Ada</dc:title>",  # not closed
        XMP_HEAD + b"<dc:title>Ada</dc:titel>" + XMP_TAIL,
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "Ada">]><x>1</x>',
        b"<!DOCTYPE Ada><x>1</x>",  # no entity, but a document type: not read here
        b'<?xml version="1.0" encoding="ISO-8859-1"?><x>Ada</x>',
        b"<x>Ada \xff</x>",  # not UTF-8
        XMP_HEAD + XMP_TAIL + b"Ada",  # after the root
    ],
    ids=["unclosed", "mismatched", "entity", "doctype", "other-encoding", "not-utf8", "trailing"],
)
def test_xmp_that_does_not_parse_is_searched_whole(tmp_path: Path, xml: bytes) -> None:
    path = _letter(tmp_path / "x.pdf", lambda pdf: _xmp(pdf, xml))
    assert _held(find_leaks(path, ["Ada"], PRODUCER), "stream")


@pytest.mark.parametrize("labels", [{}, {"/Subtype": Name.XML}, {"/Type": Name.Metadata}])
def test_a_stream_not_labelled_xmp_is_searched_whole(
    tmp_path: Path, labels: dict[str, Name]
) -> None:
    # XMP's standard names, in a stream that is not /Type /Metadata /Subtype /XML: its bytes
    # are searched as every other stream's ("Ada" stands in "MetadataDate")
    xml = XMP_HEAD + b"<xmp:MetadataDate>2026-12-07</xmp:MetadataDate>" + XMP_TAIL

    def change(pdf: pikepdf.Pdf) -> None:
        stream = pdf.make_stream(xml)
        for key, value in labels.items():
            stream[key] = value
        pdf.Root[Name("/Extra")] = stream

    assert _held(find_leaks(_letter(tmp_path / "s.pdf", change), ["Ada"], PRODUCER), "stream")


# --- review R5: what the passing-over must not hide ---


@pytest.mark.parametrize(
    ("body", "value"),
    [
        (
            b"<dc:title xmlns:dc='http://purl.org/dc/elements/1.1/'>Ann<!--Lee--></dc:title>",
            "Ann Lee",
        ),
        (
            b"<dc:format xmlns:dc='http://purl.org/dc/elements/1.1/' x='Ann'/><!--Lee-->",
            "Ann Lee",
        ),
        (
            b"<pdf:Keywords xmlns:pdf='http://ns.adobe.com/pdf/1.3/'>12345<!--678-->"
            b"</pdf:Keywords>",
            "12345678",
        ),
    ],
    ids=["text-comment", "attribute-comment", "digits-comment"],
)
def test_a_value_split_across_xmp_pieces_holds(tmp_path: Path, body: bytes, value: str) -> None:
    """Side by side in the packet, pieces spell what they spell joined (as its bytes did)."""
    path = _letter(tmp_path / "x.pdf", _with_xmp(body))
    assert _held(find_leaks(path, [value], PRODUCER), "stream")


@pytest.mark.parametrize("word", ["Ruby", "Art", "Black", "Page", "Strong"])
def test_a_standard_name_that_is_itself_the_value_holds(tmp_path: Path, word: str) -> None:
    """ "Ada" inside ``/Metadata`` is syntax; a person called Ruby whose name stands whole as a
    name carried from a source (a resource, a colour, a custom key) is not passed over."""

    def change(pdf: pikepdf.Pdf) -> None:
        pdf.docinfo[Name("/" + word)] = String("x")
        pdf.Root.Colour = Name("/" + word)

    assert _held(find_leaks(_letter(tmp_path / "n.pdf", change), [word], PRODUCER), "object")
    # and a longer value is not found inside it: syntax still
    longer = f"{word}ston Whitfield"
    assert not _held(find_leaks(_letter(tmp_path / "m.pdf"), [longer], PRODUCER), "object")


def test_the_template_an_operator_named_is_searched_in_our_producer(tmp_path: Path) -> None:
    """Our Producer passes over as ours, but the template's name in it is the operator's: a
    template named after a person holds that person's letters, as before."""
    named = PRODUCER.replace("plain@1", "smith-letters@1")

    def change(pdf: pikepdf.Pdf) -> None:
        pdf.docinfo.Producer = named

    path = _letter(tmp_path / "t.pdf", change)
    assert _held(find_leaks(path, ["Smith"], named, ["smith-letters@1+1311843e0fb4"]), "object")
    assert not find_leaks(path, ["Smith"], named, ["plain@1+1311843e0fb4"])
