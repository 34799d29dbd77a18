"""What the leak check reads past as syntax (``redact.syntax``): exact words only."""

from __future__ import annotations

from datetime import UTC, datetime

import pikepdf

from pressroom.pipeline.structure import Carriers
from pressroom.pipeline.writing import describe
from pressroom.redact.syntax import PDF_NAMES, syntax_name, xmp_pieces

PRODUCER = "Pressroom 0.1.0 (engine-3; tesseract-5.5.4; plain@1+1311843e0fb4; redacted)"


def _our_xmp(producer: str = PRODUCER) -> bytes:
    pdf = pikepdf.new()
    created = datetime(2026, 12, 7, 17, 45, 38, tzinfo=UTC)
    kept = Carriers(author="Jane Whitfield", subject="About Ada", keywords="garden, fair")
    describe(pdf, kept, title="Document", created=created, producer=producer, pdfa=True,
             intents=None)  # fmt: skip
    return bytes(pdf.Root.Metadata.read_bytes())


def test_of_pressrooms_own_xmp_only_the_text_it_carries_is_searched() -> None:
    pieces = xmp_pieces(_our_xmp(), PRODUCER)
    assert pieces is not None
    stamp = "2026-12-07T17:45:38Z"
    # the title, the source's author, subject and keywords, the dates, PDF/A's part and
    # conformance: every one a piece of its own, and all of them joined in the order they
    # stand (the last piece); no name, no wrapper, not our Producer
    *each, joined = pieces
    alone = [
        "Document",
        "Jane Whitfield",
        "About Ada",
        "garden, fair",
        stamp,
        stamp,
        stamp,
        "2",
        "B",
    ]
    assert sorted(p.strip() for p in each if p.strip()) == sorted(alone)
    assert "".join(joined.split()) == "".join("".join(p.split()) for p in each if p.strip())
    assert "Pressroom" not in joined and "tesseract" not in joined and "Metadata" not in joined


def test_a_producer_not_ours_is_a_piece() -> None:
    pieces = xmp_pieces(_our_xmp(), PRODUCER + " ")
    assert pieces is not None and PRODUCER in pieces
    pieces = xmp_pieces(_our_xmp(), None)
    assert pieces is not None and PRODUCER in pieces


def test_a_document_type_is_refused_before_any_entity_is_expanded() -> None:
    laughs = b'<!DOCTYPE x [<!ENTITY a "lol">' + b"".join(
        b'<!ENTITY %c "%s">' % (ord("b") + i, b"&%c;" % (ord("a") + i) * 10) for i in range(9)
    )
    assert xmp_pieces(laughs + b"]><x>&j;</x>") is None
    # refused at the document type itself, with no entity to expand: nothing is ever expanded
    assert xmp_pieces(b"<!DOCTYPE x><x>Ada</x>") is None


def test_the_vocabulary_is_names_compared_whole() -> None:
    assert all(n and "/" not in n and " " not in n for n in PDF_NAMES)
    assert syntax_name("/Metadata") and syntax_name("/Parent") and syntax_name("/Producer")
    for other in ("/Metadatas", "/metadata", "/ABCDEF+Helvetica", "Metadata", "/Ada", "/"):
        assert not syntax_name(other), other
